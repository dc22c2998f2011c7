#!/usr/bin/env python3
"""transformers 5.23 whole (every model folder, `models/auto` included), cold, on 2
workers: issue 19's scale target (under 60 s).

    python bench/transformers_cold.py [--rounds N] [--workers 2] [--source DIR]

The source is the transformers 5.23.0 wheel's package, unpacked once into
bench/.work/transformers-5.23.0 (`pip download --no-deps transformers==5.23.0`, a pure
Python wheel: no torch is pulled), with a pyproject.toml as a checkout has and a compile-lint.toml
(`respect-gitignore = false`: bench/.work is gitignored). Each round runs `python -m compile_lint check
--no-cache -j N` of this checkout on it, with COMPILE_LINT_STATS, and prints the wall
time, the CPU of the whole run (parent and workers), the pass-1 and index times, the
rules that took most CPU, the load average before the round and the findings count.
The machine is shared: read the wall times with the load next to them.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, ".work")
RELEASE = "5.23.0"


def source_folder() -> str:
    """bench/.work/transformers-5.23.0, unpacked from the wheel when missing."""
    folder = os.path.join(WORK, f"transformers-{RELEASE}")
    if os.path.isdir(os.path.join(folder, "transformers")):
        return folder
    os.makedirs(WORK, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        env = dict(os.environ, PIP_CONSTRAINT="/dev/null")
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "-d", tmp, f"transformers=={RELEASE}"], check=True, env=env)
        wheel = next(os.path.join(tmp, n) for n in os.listdir(tmp) if n.endswith(".whl"))
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(folder + ".part", [n for n in zf.namelist() if n.startswith("transformers/")])
    # a checkout's marker, so that the project is this folder, not the repository around
    # bench/.work (whose pyproject.toml would otherwise be the nearest marker)
    with open(os.path.join(folder + ".part", "pyproject.toml"), "w", encoding="utf-8") as fh:
        fh.write(f'[project]\nname = "transformers"\nversion = "{RELEASE}"\n')
    with open(os.path.join(folder + ".part", "compile-lint.toml"), "w", encoding="utf-8") as fh:
        fh.write("# written by bench/transformers_cold.py: the source sits in a gitignored folder\n"
                 "respect-gitignore = false\n")
    os.replace(folder + ".part", folder)
    return folder


def one_round(folder: str, workers: int) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as fh:
        stats_path = fh.name
    env = dict(os.environ, COMPILE_LINT_STATS=stats_path, PYTHONPATH=ROOT)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "compile_lint", "check", "--no-cache", "-j", str(workers),
                           "--output-format", "json", "--exit-zero", "."],
                          cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(stats_path, encoding="utf-8") as fh:
        stats = json.loads(fh.read().splitlines()[-1])
    os.unlink(stats_path)
    try:
        findings = len(json.loads(done.stdout or b"[]"))
    except json.JSONDecodeError:
        findings = None
    rules = sorted(stats.get("pass1_rule_cpu_s", {}).items(), key=lambda kv: -kv[1])[:4]
    return {
        "load": load, "wall_s": wall, "findings": findings, "files": stats.get("files"),
        "cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "pass1_s": stats.get("pass1_s"), "index_s": stats.get("index_s"), "top_rules": rules,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--source", help="a transformers source folder (default: the 5.23.0 wheel, unpacked)")
    args = ap.parse_args()
    folder = args.source or source_folder()
    for n in range(args.rounds):
        r = one_round(folder, args.workers)
        top = ", ".join(f"{code} {s:.1f}" for code, s in r["top_rules"])
        print(f"round {n + 1}: {r['files']} files, {r['findings']} findings, wall {r['wall_s']:.1f} s, "
              f"CPU {r['cpu_s']:.1f} s (pass 1 {r['pass1_s']} s, index {r['index_s']} s), "
              f"load before {r['load']:.2f}; most CPU in pass 1: {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
