#!/usr/bin/env python3
"""Score a compile-lint checkout's findings on development set 2 (bench/dev2/).

    python bench/dev2/score.py /work/dev2                     # this checkout
    python bench/dev2/score.py /work/dev2 --code /tmp/base --json out.json

Every app folder of DEV2 (one per `owner__name`, apps_a.toml + apps_b.toml) is linted as
bench/testset/score.py does (bench/judged/run.py's lint(): default selection,
bench/judged/lint.toml), each finding looked up in verdicts_a.jsonl + verdicts_b.jsonl by
(app, path, code, source line text). The verdicts that no finding matches any more are
listed too ("GONE"), so a change that loses a true or latent finding shows it.
Exit status: 0 when every finding is judged, 1 when some are not.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "judged"))
from run import judge_apps, print_table, read_verdicts  # noqa: E402  (the same linting as the judged report)

VERDICT_FILES = [os.path.join(HERE, "verdicts_a.jsonl"), os.path.join(HERE, "verdicts_b.jsonl")]


def load_verdicts() -> dict:
    return read_verdicts(VERDICT_FILES, ("repo", "path", "code", "line"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dev2", help="folder with one sub-folder per app of apps_a.toml/apps_b.toml")
    parser.add_argument("--code", default=ROOT, help="checkout whose compile_lint runs (default: this one)")
    parser.add_argument("--json", help="write the findings with their verdicts here")
    args = parser.parse_args(argv)
    verdicts = load_verdicts()
    rows = judge_apps(args.dev2, os.path.abspath(args.code), verdicts)
    print_table(rows)
    found = {(r["repo"], r["path"], r["code"], r["line"]) for r in rows}
    for key, v in sorted(verdicts.items()):
        if key not in found:
            print(f"GONE {v['verdict']:6} {v['repo']} {v['path']}:{v['row']} {v['code']} | {v['line'][:90]}")
    unjudged = [r for r in rows if r["verdict"] is None]
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    return 1 if unjudged else 0


if __name__ == "__main__":
    sys.exit(main())
