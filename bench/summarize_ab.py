#!/usr/bin/env python3
"""CPU of the per-file region summary, two checkouts compared in one process.

    python bench/summarize_ab.py BEFORE AFTER [DIR] [--step N] [--rounds R]

Both checkouts' `compile_lint` are imported side by side (the first is renamed away
in sys.modules before the second is imported), the files under DIR (default: corpus
M) are parsed once per checkout, and `summarize` runs over all of them, alternating
BEFORE and AFTER for R rounds; the minimum CPU (process time) per checkout is
printed. Alternating in one process keeps a shared, busy machine from favouring
either side.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time


def load(checkout: str):
    for name in [m for m in sys.modules if m == "compile_lint" or m.startswith("compile_lint.")]:
        del sys.modules[name]
    sys.path.insert(0, checkout)
    try:
        from compile_lint.analysis.semantic.names import NameTable, module_name_for
        from compile_lint.analysis.reach.regions import ProjectIndex, summarize
        from compile_lint.analysis.semantic.walk import walk_with_parents
        from compile_lint.config import Settings
        from compile_lint.source import ParseFailure, source_for
    finally:
        sys.path.remove(checkout)
    modules = {name: mod for name, mod in sys.modules.items() if name == "compile_lint" or name.startswith("compile_lint.")}
    return dict(modules=modules, NameTable=NameTable, module_name_for=module_name_for, summarize=summarize, ProjectIndex=ProjectIndex,
                walk_with_parents=walk_with_parents, Settings=Settings, ParseFailure=ParseFailure, source_for=source_for)


def prepare(api: dict, files: list, folder: str) -> list:
    settings = api["Settings"](root=folder)
    items = []
    for path in files:
        with open(path, "rb") as fh:
            source = api["source_for"](path, fh.read())
        try:
            tree = source.parse()
        except api["ParseFailure"]:
            continue
        nodes, _parents = api["walk_with_parents"](tree)
        module, is_package = api["module_name_for"](path)
        items.append((tree, module, is_package, nodes, path))
    return items, settings


def run(api: dict, items: list, settings) -> tuple[float, float, list]:
    build, summarize = api["NameTable"].build, api["summarize"]
    tables = [build(tree, module, is_package, nodes) for tree, module, is_package, nodes, _path in items]
    t = time.process_time()
    summaries = [summarize(item[0], names, item[4], settings.compile_wrappers, settings.trace_wrappers) for item, names in zip(items, tables)]
    spent = time.process_time() - t
    return spent, summaries


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("folder", nargs="?", default="bench/.work/corpus/M/src")
    ap.add_argument("--step", type=int, default=1, help="every N-th file only")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.folder) for f in fs if f.endswith(".py"))[:: args.step]
    sides = []
    for checkout in (args.before, args.after):
        api = load(os.path.abspath(checkout))
        items, settings = prepare(api, files, args.folder)
        sides.append((checkout, api, items, settings))
    gc.disable()  # as a pool worker: collected by hand between rounds
    best = {checkout: float("inf") for checkout, *_ in sides}
    for _round in range(args.rounds):
        for checkout, api, items, settings in sides:
            gc.collect()
            spent, _summaries = run(api, items, settings)
            best[checkout] = min(best[checkout], spent)
    before, after = best[args.before], best[args.after]
    print(f"{len(files)} files, {args.rounds} rounds, min CPU s of summarize: {args.before} {before:.2f}, {args.after} {after:.2f} ({100 * (after - before) / before:+.0f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
