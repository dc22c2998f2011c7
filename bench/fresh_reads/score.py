#!/usr/bin/env python3
"""Score a compile-lint checkout on the repositories read in bench/fresh_reads/.

    APPS_TOML=bench/fresh_reads/apps.toml bench/apps/materialize.sh DEST [SNAPSHOTS]
    python bench/fresh_reads/score.py DEST                  # this checkout
    python bench/fresh_reads/score.py DEST --code CHECKOUT  # another one

Two scores, as bench/testset/score.py gives them: the sites of sites.toml (what each
compile, trace, script or export site resolves to, bench/region_resolution.py), and every
finding of `compile-lint check APP` (default selection) looked up in verdicts.jsonl by
(repository, path, code, source line text). A finding nobody judged is listed: judge it
by reading the code, and add it with the linter commit that first reported it.
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
from run import judge_apps, print_table  # noqa: E402  (bench/judged/run.py: the same linting as the judged report)

SITES = os.path.join(HERE, "sites.toml")
VERDICTS = os.path.join(HERE, "verdicts.jsonl")


def load_verdicts() -> dict:
    """Verdicts keyed as judge_apps asks: the app folder (`owner__name`), path, code, line."""
    table = {}
    with open(VERDICTS, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                v = json.loads(line)
                table[(v["repo"].replace("/", "__", 1), v["path"], v["code"], v["line"])] = v
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("apps", help="folder with one sub-folder per app of bench/fresh_reads/apps.toml")
    parser.add_argument("--code", default=ROOT, help="checkout whose compile_lint runs (default: this one)")
    parser.add_argument("--json", help="write the findings with their verdicts here")
    parser.add_argument("--misses", action="store_true", help="list the sites not resolved correctly")
    args = parser.parse_args(argv)
    code = os.path.abspath(args.code)
    cmd = [sys.executable, os.path.join(ROOT, "bench", "region_resolution.py"), args.apps, "--sites", SITES, "--code", code] + (["--misses"] if args.misses else [])
    print("sites:", " ".join(cmd[1:]), flush=True)
    if subprocess.run(cmd).returncode != 0:
        return 2
    rows = judge_apps(os.path.abspath(args.apps), code, load_verdicts())
    print()
    unjudged = print_table(rows)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    return 1 if unjudged else 0


if __name__ == "__main__":
    sys.exit(main())
