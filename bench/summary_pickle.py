#!/usr/bin/env python3
"""What the region summaries of a folder cost as pickles: the CPU seconds of pickling every
file's summary (a pass-1 worker does it) and of unpickling them all (the parent does it
to build the index), the megabytes, and each field's share (pickled field by field, so
the shares add up to more than the whole: a pickle shares repeated objects).

    python bench/summary_pickle.py DIR

The code measured is the compile_lint importable from PYTHONPATH (this checkout's when
unset): run it with two checkouts to compare a change to the summary's shape.
"""
from __future__ import annotations

import gc
import os
import pickle
import sys
import time
from collections import Counter

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # after PYTHONPATH
from parsed_files import parsed_files  # noqa: E402  (this folder, on sys.path as the script's)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    from compile_lint.analysis.reach.regions import summarize
    from compile_lint.analysis.semantic.names import NameTable
    from compile_lint.analysis.semantic.walk import walk_with_parents
    from compile_lint.config import Settings

    folder = argv[0]
    settings = Settings(root=folder)
    paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".py"))
    summaries = []
    for path, _source, tree, module, is_package in parsed_files(paths):
        nodes, _parents = walk_with_parents(tree)
        names = NameTable.build(tree, module, is_package, nodes)
        summaries.append(summarize(tree, names, path, settings.compile_wrappers, settings.trace_wrappers))
    gc.disable()  # as in a pool worker
    started = time.process_time()
    blobs = [pickle.dumps(s, protocol=pickle.HIGHEST_PROTOCOL) for s in summaries]
    dumped = time.process_time()
    for blob in blobs:
        pickle.loads(blob)
    loaded = time.process_time()
    fields: Counter = Counter()
    for summary in summaries:
        for name, value in vars(summary).items():
            fields[name] += len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    print(f"{len(summaries)} summaries: {sum(map(len, blobs)) / 1e6:.1f} MB pickled; "
          f"CPU s: pickle {dumped - started:.2f}, unpickle {loaded - dumped:.2f}")
    print("\n| field | MB (alone) |\n|---|---:|")
    for name, size in fields.most_common():
        print(f"| {name} | {size / 1e6:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
