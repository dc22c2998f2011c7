"""Which other files each pass's workers parse, and how many of them more than one
worker parses.

    python bench/pass_reads.py DIR [--jobs J]

Runs `compile-lint check --no-cache -j J --config bench/judged/lint.toml DIR` (default
J=2) in this process and records, in each worker, every file its Sources parsed for the
rules (another file than the one linted: a module it imports, the callers of a method),
with the CPU seconds of each parse. A worker's Sources keeps what it parsed for the
pass (lint_file.init_worker), so a file read by two workers is parsed twice.

The code measured is this checkout's (in_process.py).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict

from in_process import run_check  # (this folder, on sys.path as the script's)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)

    from compile_lint import lint_file
    from compile_lint.analysis.project.context import Sources

    log_dir = tempfile.mkdtemp(prefix="pass_reads.")
    entry = Sources._entry

    def logged_entry(self, path):
        key = self._stat(path)
        parses = key is not None and key not in self._parsed
        started = time.process_time()
        found = entry(self, path)
        if parses:
            context = lint_file._WORKER.get("context")
            name = "pass2" if context is not None and context.regions is not None else "pass1"
            with open(os.path.join(log_dir, f"{name}.{os.getpid()}"), "a", encoding="utf-8") as fh:
                fh.write(f"{time.process_time() - started:.5f}\t{path}\n")
        return found

    Sources._entry = logged_entry  # (forked workers inherit it)
    run_check(args.folder, args.jobs)
    by_pass: dict = defaultdict(list)  # pass -> [(worker, seconds, path)]
    for log in sorted(os.listdir(log_dir)):
        name, worker = log.split(".")
        with open(os.path.join(log_dir, log), encoding="utf-8") as fh:
            for line in fh:
                seconds, path = line.rstrip("\n").split("\t")
                by_pass[name].append((worker, float(seconds), path))
        os.remove(os.path.join(log_dir, log))
    os.rmdir(log_dir)
    print("| pass | workers | parses | CPU s | files | files parsed by more than one worker |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in sorted(by_pass):
        rows = by_pass[name]
        workers_of = defaultdict(set)
        for worker, _s, path in rows:
            workers_of[path].add(worker)
        shared = sum(1 for w in workers_of.values() if len(w) > 1)
        print(f"| {name} | {len({w for w, _s, _p in rows})} | {len(rows)} | {sum(s for _w, s, _p in rows):.2f} | "
              f"{len(workers_of)} | {shared} |")
    folders = Counter(os.path.dirname(os.path.relpath(p, args.folder)) for _w, _s, p in by_pass.get("pass2", ()))
    if folders:
        print("\npass 2's parses by folder:", ", ".join(f"{f} {n}" for f, n in folders.most_common(5)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
