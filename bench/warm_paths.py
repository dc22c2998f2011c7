#!/usr/bin/env python3
"""The warm paths of issue 9 on a corpus folder: a re-run with nothing changed, and one
file of the project with a warm cache (what pre-commit runs), each a fresh process as
a user runs it (bytecode on; the tool's cache as the previous run left it).

    python bench/warm_paths.py bench/.work/corpus/M/src --file kornia-0.9.0/kornia/color/hsv.py

It first runs `check .` until the cache is warm (a cold first run takes minutes), then
times `--runs` runs of each case: wall seconds, and CPU seconds (user + sys of the
process and its children). Also: one file after that file was edited (pre-commit's
real case: the file is re-linted, the rest of the project comes from the cache), and
`check .` after one file was edited. The edited file is restored at the end. Prints a
Markdown table and the load average before and after.

The runs write the tool's cache into the corpus folder and edit one of its files. With
`--copy-to DIR` they run in DIR/<corpus folder name> instead, a copy of the corpus made
on the first use (without its cache) and reused after, so a shared corpus is left alone:

    python bench/warm_paths.py bench/.work/corpus/M/src --file kornia-0.9.0/kornia/color/hsv.py --copy-to /var/tmp/warmM

Put the copy where nothing else writes: a folder (or any folder above it) changed less
than 2 s before a run is not trusted for module names (cache_validity.FolderStates), so
under a busy folder such as /tmp itself every warm run re-derives them and rewrites the
cache's manifest (seen with corpus M in /tmp/warmM: 2,101 module names derived again and
a 0.1 s write on every warm run).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def timed(cmd: list[str], cwd: str) -> tuple[float, float, int]:
    env = dict(os.environ, PYTHONPATH=ROOT)
    for name in ("PYTHONDONTWRITEBYTECODE", "COMPILE_LINT_NO_CACHE"):
        env.pop(name, None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--file", required=True, help="the one file, relative to the corpus folder")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--copy-to", help="run on a copy of the corpus in this folder (made once, without its cache)")
    args = ap.parse_args()
    if args.copy_to:
        copy = os.path.join(args.copy_to, os.path.basename(os.path.normpath(args.corpus)))
        if not os.path.isdir(copy):
            shutil.copytree(args.corpus, copy, symlinks=True, ignore=shutil.ignore_patterns(".compile_lint_cache"))
        args.corpus = copy
    cli = [sys.executable, "-m", "compile_lint", "check"]
    target = os.path.join(args.corpus, args.file)
    load0 = os.getloadavg()
    for _ in range(2):  # cold (if the cache is empty), then a run that settles it
        timed(cli + ["."], args.corpus)
    with open(target, "rb") as fh:
        original = fh.read()
    rows = []

    def case(label: str, cmd: list[str], edit: bool = False) -> None:
        walls, cpus = [], []
        for n in range(args.runs):
            if edit:
                with open(target, "wb") as fh:
                    fh.write(original + f"\n# edited {n} {time.time()}\n".encode())
            wall, cpu, _ = timed(cmd, args.corpus)
            walls.append(wall)
            cpus.append(cpu)
        rows.append((label, " ".join(cmd[4:]), statistics.median(walls), min(walls), statistics.median(cpus), min(cpus)))

    try:
        case("warm, nothing changed", cli + ["."])
        case("one file, warm cache", cli + [args.file])
        case("one file, just edited", cli + [args.file], edit=True)
        case("whole project, one file just edited", cli + ["."], edit=True)
    finally:
        with open(target, "wb") as fh:
            fh.write(original)
        timed(cli + ["."], args.corpus)
    load1 = os.getloadavg()
    print(f"corpus {args.corpus}; {args.runs} runs per case; load average before {load0[0]:.2f}, "
          f"after {load1[0]:.2f} (1 min), {os.cpu_count()} cores")
    print()
    print("| case | command | wall median s | wall min s | CPU median s | CPU min s |")
    print("|---|---|---:|---:|---:|---:|")
    for label, cmd, wall, wall_min, cpu, cpu_min in rows:
        print(f"| {label} | `python -m compile_lint check {cmd}` | {wall:.3f} | {wall_min:.3f} | {cpu:.3f} | {cpu_min:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
