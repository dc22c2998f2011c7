#!/usr/bin/env python3
"""CPU seconds per stage of a cold `check`, in one process (so a busy machine changes
the seconds little: they are process CPU time, not wall time).

    python bench/stage_cpu.py DIR [--rules-every N]

Stages, as the engine runs them (compile_lint/engine.py, lint_file.py):
- pass 1 over every .py file under DIR: parse (ast), walk (parent links), names,
  summarize (the region summary), then the single-file index and every rule;
  with --rules-every N only every N-th file gets the index and rules (their CPU
  is scaled back up by N in the table, marked "est.").
- index: ProjectIndex(all summaries).regions(), the serial step between the passes.
Garbage collection runs as in a pool worker (off, collected by hand as
lint_file.HandCollector says) and is its own row.
Pass 2 re-runs parse, walk, names and the rules on the files whose region facts
changed; its cost per file is the pass-1 cost without `summarize`.

The code measured is the compile_lint importable from PYTHONPATH (the first line of the
output names it), so the same script times two checkouts of today's module layout
(bench/results.md has the numbers before and after); a checkout from before the
layout moved (dd75348) needs the script of its own time.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections import defaultdict

# the checkout's own code only where PYTHONPATH names none: the point is to time another checkout's
sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--rules-every", type=int, default=1, help="index + rules on every N-th file only")
    args = ap.parse_args(argv)

    from compile_lint.analysis.semantic.names import NameTable, module_name_for
    from compile_lint.analysis.project.context import Sources
    from compile_lint.analysis.reach.regions import ProjectIndex, summarize
    from compile_lint.analysis.semantic.walk import walk_with_parents
    from compile_lint.config import Settings
    from compile_lint.lint_file import HandCollector, ParsedFile, project_for, run_rules
    from compile_lint.rules import all_rules
    from compile_lint.source import ParseFailure, source_for

    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.folder) for f in fs if f.endswith(".py"))
    settings = Settings(root=args.folder)
    codes = sorted(all_rules())
    sources = Sources(snapshot=True)  # as a pool worker reads them (lint_file.init_worker): one state of the files
    cpu = time.process_time
    spent: dict[str, float] = defaultdict(float)
    collector = HandCollector()
    summaries = []
    # as a pool worker does (lint_file.init_worker/lint_one): GC off, collected by hand
    gc.disable()
    for i, path in enumerate(files):
        if collector.due():
            t = cpu()
            collector.collect()
            spent["pass 1: garbage collection"] += cpu() - t
        with open(path, "rb") as fh:
            source = source_for(path, fh.read())
        t = cpu()
        try:
            tree = source.parse()
        except ParseFailure:
            continue
        spent["pass 1: parse (ast)"] += cpu() - t
        t = cpu()
        nodes, parents = walk_with_parents(tree)
        spent["pass 1: walk"] += cpu() - t
        t = cpu()
        module, is_package = module_name_for(path)
        names = NameTable.build(tree, module, is_package, nodes)
        spent["pass 1: names"] += cpu() - t
        t = cpu()
        summary = summarize(tree, names, path, settings.compile_wrappers, settings.trace_wrappers)
        spent["pass 1: summarize"] += cpu() - t
        summaries.append(summary)
        if i % args.rules_every:
            continue
        t = cpu()
        regions = ProjectIndex([summary]).regions()
        spent["pass 1: single-file index"] += (cpu() - t) * args.rules_every
        t = cpu()
        run_rules(ParsedFile(source, tree, names, summary, nodes=nodes, parents=parents), project_for(settings, regions, None, sources), codes)
        spent["pass 1: rules"] += (cpu() - t) * args.rules_every
    t = cpu()
    index = ProjectIndex(summaries)
    regions = index.regions()
    spent["index (serial)"] += cpu() - t
    total = sum(spent.values())
    est = " (est.)" if args.rules_every > 1 else ""
    import compile_lint
    print(f"code: {os.path.dirname(os.path.dirname(os.path.abspath(compile_lint.__file__)))}")
    print(f"{len(files)} files; {len(regions)} defs in regions; CPU seconds in one process\n")
    print("| stage | CPU s | % |\n|---|---:|---:|")
    for name, secs in spent.items():
        mark = est if name.endswith(("index", "rules")) and name.startswith("pass 1") else ""
        print(f"| {name}{mark} | {secs:.1f} | {100 * secs / total:.0f} |")
    print(f"| total | {total:.1f} | 100 |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
