#!/usr/bin/env python3
"""CPU seconds of pass 1 of a cold `check`, as one pool worker spends them, in one process.

    python bench/pass1_cpu.py DIR [--every N] [--repeat R]

Every .py file under DIR (every N-th with --every) goes through `lint_file.lint_one`,
the job a pass-1 worker runs per file (read, hash, parse, walk, names, summarize,
the single-file index, every rule, the pickled summary and the cache dependencies),
with the worker's garbage collection (off: lint_file.GC_EVERY). Process CPU time, so
a busy machine changes the seconds little; `--repeat R` measures the pass R times in
one process (the spread says how far to trust a difference; the later rounds find
other files already parsed in the worker's Sources, as a worker late in a pass does).

The code measured is the compile_lint importable from PYTHONPATH: run it with two
checkouts to compare them (bench/results.md).
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

# the checkout's own code only where PYTHONPATH names none: the point is to time another checkout's
sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--every", type=int, default=1, help="only every N-th file")
    ap.add_argument("--repeat", type=int, default=1, help="measure the whole pass this many times")
    args = ap.parse_args(argv)

    from compile_lint.config import Settings
    from compile_lint.lint_file import JobContext, Task, init_worker, lint_one
    from compile_lint.rules import all_rules

    folder = os.path.abspath(args.folder)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".py"))[:: args.every]
    codes = tuple(sorted(all_rules()))
    settings = Settings(root=folder)
    cpu = time.process_time
    totals = []
    for _ in range(args.repeat):
        init_worker(JobContext([settings], None, None), in_pool=True)  # GC off, as a pool worker
        findings = errors = 0
        started = cpu()
        for path in files:
            done = lint_one(Task(path, 0, codes))
            findings += len(done.findings or ())
            errors += done.error is not None
        totals.append(cpu() - started)
        gc.enable()
        gc.collect()
    print(f"{len(files)} files, {findings} findings, {errors} errors")
    print("pass 1 CPU s (lint_one per file, one process): " + ", ".join(f"{t:.2f}" for t in totals))
    return 0


if __name__ == "__main__":
    sys.exit(main())
