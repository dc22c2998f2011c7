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


def score(argv, sites: str, verdicts, apps_help: str, description: str) -> int:
    """Both scores of a folder of materialized apps against hand-read labels: `sites` (a
    sites.toml) through bench/region_resolution.py, then every finding looked up in
    `verdicts()` (keyed as judge_apps asks). bench/fresh_reads/score.py shares it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("apps", help=apps_help)
    parser.add_argument("--code", default=ROOT, help="checkout whose compile_lint runs (default: this one)")
    parser.add_argument("--json", help="write the findings with their verdicts here")
    parser.add_argument("--misses", action="store_true", help="list the sites not resolved correctly")
    args = parser.parse_args(argv)
    code = os.path.abspath(args.code)
    cmd = [sys.executable, os.path.join(ROOT, "bench", "region_resolution.py"), args.apps, "--sites", sites,
           "--code", code] + (["--misses"] if args.misses else [])
    print("sites:", " ".join(cmd[1:]), flush=True)
    if subprocess.run(cmd).returncode != 0:
        return 2
    rows = judge_apps(os.path.abspath(args.apps), code, verdicts())
    print()
    unjudged = print_table(rows)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    return 1 if unjudged else 0


def main(argv=None) -> int:
    return score(argv, SITES, load_verdicts, "folder with one sub-folder per app of bench/testset/apps.toml",
                 __doc__.split("\n\n")[0])


if __name__ == "__main__":
    sys.exit(main())
