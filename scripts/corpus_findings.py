#!/usr/bin/env python3
"""Run compile-lint over a pinned real-world corpus and print findings per rule.

    python scripts/corpus_findings.py [--set L] [--corpus DIR] [--sample 40] [--seed 0]

Downloads the corpus with ../shared/corpus/fetch_corpus.sh (or $COMPILE_LINT_FETCH)
into bench/.work/corpus/<SET> unless --corpus points at an unpacked one. Prints the
count of findings per rule, the lint wall time, and a seeded random sample of
findings with their source lines, for a person to judge true or false positive.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import random
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FETCH = os.environ.get("COMPILE_LINT_FETCH", os.path.join(os.path.dirname(ROOT), "shared", "corpus", "fetch_corpus.sh"))


def corpus_dir(args) -> str:
    if args.corpus:
        return args.corpus
    out = os.path.join(ROOT, "bench", ".work", "corpus", args.set)
    src = os.path.join(out, "src")
    if not os.path.isdir(src):
        subprocess.run(["bash", FETCH, out, args.set], check=True)
    return src


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="L", choices=["S", "M", "M2", "L"])
    parser.add_argument("--corpus", help="an unpacked corpus folder (skips the download)")
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", default="2")
    parser.add_argument("--json", help="also write all findings here")
    args = parser.parse_args()
    src = corpus_dir(args)
    files = sum(len([f for f in fs if f.endswith(".py")]) for _, _, fs in os.walk(src))
    start = time.perf_counter()
    # The corpus lives under a gitignored folder of this repo: lint it as a project of its own.
    proc = subprocess.run(
        [sys.executable, "-m", "compile_lint", "check", ".", "--output-format", "json", "--no-cache",
         "--jobs", args.jobs, "--config", os.path.join(ROOT, "scripts", "corpus.toml")],
        cwd=src, capture_output=True, text=True,
    )
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        print(proc.stderr, file=sys.stderr)
        return 2
    findings = json.loads(proc.stdout)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(findings, fh, indent=1)
    counts = collections.Counter(f["code"] for f in findings)
    print(f"{files} .py files in {src}; lint wall time {wall:.1f} s with --jobs {args.jobs}")
    print(f"{len(findings)} findings")
    for code, n in sorted(counts.items()):
        print(f"  {code}  {n}")
    internal = [line for line in proc.stderr.splitlines() if "internal error" in line]
    print(f"internal errors: {len(internal)}")
    for line in internal[:10]:
        print("  " + line)
    rng = random.Random(args.seed)
    sample = rng.sample(findings, min(args.sample, len(findings)))
    print(f"\nsample of {len(sample)} (seed {args.seed}):")
    for f in sorted(sample, key=lambda f: (f["code"], f["filename"], f["location"]["row"])):
        rel = os.path.relpath(f["filename"], src)
        row = f["location"]["row"]
        try:
            with open(f["filename"], encoding="utf-8", errors="replace") as fh:
                line = fh.read().splitlines()[row - 1].strip()
        except (OSError, IndexError):
            line = "?"
        print(f"- {f['code']} {rel}:{row}: {line[:120]}\n    {f['message'][:220]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
