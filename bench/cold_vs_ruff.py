#!/usr/bin/env python3
"""Cold `check` against Ruff, pair by pair in the same minutes (issue 9's target:
corpus M cold `--no-cache -j 2` <= 2x Ruff `--select ALL --no-cache`).

    python bench/cold_vs_ruff.py [DIR] [--rounds N] [--ruff PATH]

DIR defaults to corpus M (bench/.work/corpus/M/src). Each round runs Ruff 0.17.5 (from
bench/.work/ruff-venv, which `bench/run_bench.py --ruff-only` installs) and then
`python -m compile_lint check --no-cache -j 2 .` of this checkout, and prints both wall
times and their ratio; the last line gives the medians and the median of the per-round
ratios. Both tools use the machine's 2 cores; the machine's speed drifts over minutes,
which is why only pairs run back to back are compared.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def timed(cmd: list[str], cwd: str, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", nargs="?", default=os.path.join(HERE, ".work", "corpus", "M", "src"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ruff", default=os.path.join(HERE, ".work", "ruff-venv", "bin", "ruff"))
    args = ap.parse_args()
    if not os.path.exists(args.ruff):
        sys.exit(f"no Ruff at {args.ruff}: run `python bench/run_bench.py --ruff-only --runs 1` once, or pass --ruff")
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's run has its .pyc files
    env.pop("COMPILE_LINT_STATS", None)
    ruff = [args.ruff, "check", "--select", "ALL", "--no-cache", "--no-respect-gitignore", "--isolated", "--exit-zero", "--quiet", "."]
    ours = [sys.executable, "-m", "compile_lint", "check", "--no-cache", "-j", "2", "."]
    timed(ours[:3] + ["--version"], args.folder, env)  # byte-compile compile_lint once, outside the rounds
    pairs = []
    for r in range(args.rounds):
        r_s = timed(ruff, args.folder, env)
        c_s = timed(ours, args.folder, env)
        pairs.append((r_s, c_s))
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"round {r + 1}: ruff {r_s:.2f} s, compile-lint {c_s:.2f} s, ratio {c_s / r_s:.2f} (load {load:.1f})", flush=True)
    ruff_med = statistics.median(p[0] for p in pairs)
    ours_med = statistics.median(p[1] for p in pairs)
    ratio = statistics.median(p[1] / p[0] for p in pairs)
    print(f"median: ruff {ruff_med:.2f} s, compile-lint {ours_med:.2f} s, ratio {ratio:.2f}x (target <= 2x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
