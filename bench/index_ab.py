#!/usr/bin/env python3
"""CPU of the region index, two checkouts compared in one process.

    python bench/index_ab.py BEFORE AFTER [DIR] [--rounds R]

The files under DIR (default: corpus M) are summarized once (by AFTER; check with
bench/summary_digests.py that both checkouts make the same summaries) and pickled.
Then, alternating BEFORE and AFTER for R rounds, each checkout unpickles them with
its own classes (as the parent of a parallel run does), builds the serial index
`ProjectIndex(all summaries).regions()` and the single-file index of every file
(as pass 1 does); the minimum CPU (process time) of each step is printed, with the
pickle's size and dump time.
"""
from __future__ import annotations

import argparse
import gc
import os
import pickle
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize_ab import load, prepare  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("folder", nargs="?", default="bench/.work/corpus/M/src")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.folder) for f in fs if f.endswith(".py"))
    apis = {}
    for checkout in (args.before, args.after):
        apis[checkout] = load(os.path.abspath(checkout))
    api = apis[args.after]
    items, settings = prepare(api, files, args.folder)
    summaries = []
    for tree, module, is_package, nodes, path in items:
        names = api["NameTable"].build(tree, module, is_package, nodes)
        summaries.append(api["summarize"](tree, names, path, settings.compile_wrappers, settings.trace_wrappers))
    del items
    gc.disable()
    t = time.process_time()
    data = pickle.dumps(summaries, protocol=pickle.HIGHEST_PROTOCOL)
    dumps = time.process_time() - t
    best: dict = {}
    for _round in range(args.rounds):
        for checkout in (args.before, args.after):
            # classes are found through sys.modules: point them at this checkout's
            sys.modules.update(apis[checkout]["modules"])
            gc.collect()
            t = time.process_time()
            loaded = pickle.loads(data)
            loads = time.process_time() - t
            index_cls = apis[checkout]["ProjectIndex"]
            t = time.process_time()
            regions = index_cls(loaded).regions()
            serial = time.process_time() - t
            t = time.process_time()
            for summary in loaded:
                index_cls([summary]).regions()
            single = time.process_time() - t
            row = best.setdefault(checkout, {})
            for key, value in (("loads", loads), ("serial index", serial), ("single-file indexes", single)):
                row[key] = min(row.get(key, float("inf")), value)
            row["defs"] = len(regions)
            del loaded, regions
    print(f"{len(summaries)} summaries, pickle {len(data) / 1e6:.1f} MB (dumps {dumps:.2f} s); min CPU s over {args.rounds} rounds")
    for checkout, row in best.items():
        print(f"{checkout}: " + ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
