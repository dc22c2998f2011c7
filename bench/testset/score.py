#!/usr/bin/env python3
"""Score a compile-lint checkout on the held-out test set (bench/testset/README.md).

    python bench/testset/score.py TESTSET_DIR                 # this checkout
    python bench/testset/score.py TESTSET_DIR --code /work/base --json out.json

TESTSET_DIR holds one folder per app of bench/testset/apps.toml
(`APPS_TOML=bench/testset/apps.toml bench/apps/materialize.sh TESTSET_DIR [SNAPSHOTS]`).
Two scores, both against judgments read by hand before any code change:
1. sites: bench/region_resolution.py with bench/testset/sites.toml (what each compile,
   trace, script or export site resolves to);
2. findings: every finding of `compile-lint check APP` (default selection, the options of
   bench/judged/lint.toml) looked up in bench/testset/verdicts.jsonl by (app, path, code,
   source line text). A finding nobody judged is listed: judge it by reading the code,
   never by the message, and add it (a finding is never judged by the code change that
   made it appear without reading it).
Exit status: 0 when every finding is judged, 1 when some are not, 2 on errors.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "judged"))
from run import judge_apps, print_table, read_verdicts  # noqa: E402  (bench/judged/run.py: the same linting as the judged report)

SITES = os.path.join(HERE, "sites.toml")
VERDICTS = os.path.join(HERE, "verdicts.jsonl")


def load_verdicts() -> dict:
    return read_verdicts([VERDICTS], ("repo", "path", "code", "line"))


def score_findings(testset: str, code: str) -> tuple[list[dict], int]:
    rows = judge_apps(testset, code, load_verdicts())
    print()
    return rows, len(print_table(rows))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("testset", help="folder with one sub-folder per app of bench/testset/apps.toml")
    parser.add_argument("--code", default=ROOT, help="checkout whose compile_lint runs (default: this one)")
    parser.add_argument("--json", help="write the findings with their verdicts here")
    parser.add_argument("--misses", action="store_true", help="list the sites not resolved correctly")
    args = parser.parse_args(argv)
    code = os.path.abspath(args.code)
    cmd = [sys.executable, os.path.join(ROOT, "bench", "region_resolution.py"), args.testset, "--sites", SITES,
           "--code", code] + (["--misses"] if args.misses else [])
    print("sites:", " ".join(cmd[1:]), flush=True)
    if subprocess.run(cmd).returncode != 0:
        return 2
    rows, unjudged = score_findings(os.path.abspath(args.testset), code)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    return 1 if unjudged else 0


if __name__ == "__main__":
    sys.exit(main())
