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
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "judged"))
from run import lint, source_line  # noqa: E402  (bench/judged/run.py: the same linting as the judged report)

SITES = os.path.join(HERE, "sites.toml")
VERDICTS = os.path.join(HERE, "verdicts.jsonl")
RIGHT = ("true", "latent")


def load_verdicts() -> dict:
    table = {}
    with open(VERDICTS, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                v = json.loads(line)
                table[(v["repo"], v["path"], v["code"], v["line"])] = v
    return table


def score_findings(testset: str, code: str) -> tuple[list[dict], int]:
    verdicts = load_verdicts()
    rows = []
    for repo in sorted(os.listdir(testset)):
        folder = os.path.join(testset, repo)
        if not os.path.isdir(folder) or repo.startswith("."):
            continue
        for f in lint(folder, code):
            path = os.path.relpath(f["filename"], folder)
            row = f["location"]["row"]
            text = source_line(f["filename"], row)
            v = verdicts.get((repo, path, f["code"], text))
            rows.append({"repo": repo, "path": path, "row": row, "code": f["code"], "line": text,
                         "message": f["message"], "verdict": v["verdict"] if v else None})
    per_rule = collections.defaultdict(collections.Counter)
    for r in rows:
        per_rule[r["code"]][r["verdict"] or "unjudged"] += 1
    print(f"\n{'rule':6} {'findings':>8} {'true':>5} {'latent':>6} {'false':>5} {'unjudged':>8} {'right':>6}")
    total: collections.Counter = collections.Counter()
    for code_ in sorted(per_rule) + ["all"]:
        c = total if code_ == "all" else per_rule[code_]
        if code_ != "all":
            total.update(c)
        judged = c["true"] + c["latent"] + c["false"]
        right = f"{(c['true'] + c['latent']) / judged:.0%}" if judged else "-"
        print(f"{code_:6} {sum(c.values()):8} {c['true']:5} {c['latent']:6} {c['false']:5} {c['unjudged']:8} {right:>6}")
    unjudged = [r for r in rows if r["verdict"] is None]
    for r in unjudged:
        print(f"UNJUDGED {r['repo']} {r['path']}:{r['row']} {r['code']} | {r['line'][:100]} | {r['message'][:140]}")
    return rows, len(unjudged)


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
