#!/usr/bin/env python3
"""Fixes and fix-carrying reports at linter speed (issue 22): before/after, same run.

    python bench/fix_speed.py --before "/tmp/bv/bin/python -m compile_lint" \\
                              --after ".venv/bin/python -m compile_lint" [--rounds 3]

Cases (built under bench/.work/fix_speed/, outside any git work tree so nothing is
gitignored; the code is corpus M and two development apps, never committed):
- `big`: bench/fix_case.py's file (~4,500 lines) from corpus M with three safe fixes;
  `fix --no-cache -j 2 big.py` on a fresh copy each round;
- `M`: corpus M (2,101 files), `fix --no-cache -j 2 .` on a fresh copy;
- `app25k`: /work/apps FoundationVision__LlamaGen + WongKinYiu__yolov7 side by side
  (25.6k lines, 16 fixable findings in 7 files): `check -j 2 .` as text and as
  `--output-format json`, cold (cache removed) then warm.
Each command runs alternately for "before" and "after" within a round; the table has the
median wall seconds and the median CPU seconds (user+sys of the process and its workers).
"""
from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join("/var/tmp", "compile-lint-fix-speed")  # outside any git work tree
CORPUS_M = os.path.join(HERE, ".work", "corpus", "M", "src")
APPS = ("FoundationVision__LlamaGen", "WongKinYiu__yolov7")


def timed(cmd: list[str], cwd: str) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} in {cwd}: exit {proc.returncode}\n{proc.stderr.decode()[-2000:]}")
    return wall, cpu, proc.returncode


def fresh(src: str, dst: str) -> str:
    shutil.rmtree(dst, ignore_errors=True)
    if os.path.isdir(src):
        shutil.copytree(src, dst, symlinks=True)
    else:
        os.makedirs(dst)
        shutil.copy(src, dst)
    return dst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="the command line of the old compile-lint")
    ap.add_argument("--after", required=True, help="the command line of the new one")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--apps", default="/work/apps")
    ap.add_argument("--skip", default="", help="cases to leave out, comma-separated (big, M, app25k)")
    args = ap.parse_args()
    skip = set(args.skip.split(","))
    sides = {"before": shlex.split(args.before), "after": shlex.split(args.after)}
    os.makedirs(WORK, exist_ok=True)
    big_src = os.path.join(WORK, "src", "big.py")
    subprocess.run([sys.executable, os.path.join(HERE, "fix_case.py"), big_src], check=True)
    with open(big_src, encoding="utf-8") as fh:
        big_lines = fh.read().count("\n")
    app_src = os.path.join(WORK, "src", "app25k")
    if not os.path.isdir(app_src):
        os.makedirs(app_src)
        for app in APPS:
            shutil.copytree(os.path.join(args.apps, app), os.path.join(app_src, app), symlinks=True,
                            ignore=shutil.ignore_patterns(".git", ".compile_lint_cache"))
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}

    def record(case: str, side: str, value) -> None:
        samples.setdefault((case, side), []).append(value[:2])

    for n in range(args.rounds):
        for side, cmd in sides.items():
            if "big" not in skip:
                folder = fresh(big_src, os.path.join(WORK, side, "big"))
                record(f"fix, {big_lines:,}-line file, 3 fixes", side, timed(cmd + ["fix", "--no-cache", "-j", "2", "big.py"], folder))
            if "M" not in skip and n == 0:
                folder = fresh(CORPUS_M, os.path.join(WORK, side, "M"))
                record("fix, corpus M (2,101 files)", side, timed(cmd + ["fix", "--no-cache", "-j", "2", "."], folder))
            if "app25k" not in skip:
                folder = os.path.join(WORK, side, "app25k")
                if n == 0:
                    fresh(app_src, folder)
                for fmt in ("text", "json"):
                    shutil.rmtree(os.path.join(folder, ".compile_lint_cache"), ignore_errors=True)
                    for state in ("cold", "warm"):
                        record(f"check app25k {fmt} {state}", side, timed(cmd + ["check", "-j", "2", ".", "--output-format", fmt], folder))
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.rounds} rounds")
    print()
    print("| case | before wall s | after wall s | before CPU s | after CPU s |")
    print("|---|---:|---:|---:|---:|")
    cases = list(dict.fromkeys(case for case, _ in samples))
    for case in cases:
        b, a = samples[(case, "before")], samples[(case, "after")]
        med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
        print(f"| {case} | {med(b, 0):.2f} | {med(a, 0):.2f} | {med(b, 1):.2f} | {med(a, 1):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
