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
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "judged"))
from run import lint, source_line  # noqa: E402  (the same linting as the judged report)

VERDICT_FILES = [os.path.join(HERE, "verdicts_a.jsonl"), os.path.join(HERE, "verdicts_b.jsonl")]


def load_verdicts() -> dict:
    table = {}
    for name in VERDICT_FILES:
        with open(name, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    v = json.loads(line)
                    table[(v["repo"], v["path"], v["code"], v["line"])] = v
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dev2", help="folder with one sub-folder per app of apps_a.toml/apps_b.toml")
    parser.add_argument("--code", default=ROOT, help="checkout whose compile_lint runs (default: this one)")
    parser.add_argument("--json", help="write the findings with their verdicts here")
    args = parser.parse_args(argv)
    verdicts = load_verdicts()
    rows = []
    for repo in sorted(os.listdir(args.dev2)):
        folder = os.path.join(args.dev2, repo)
        if not os.path.isdir(folder) or repo.startswith("."):
            continue
        for f in lint(folder, os.path.abspath(args.code)):
            path = os.path.relpath(f["filename"], folder)
            row = f["location"]["row"]
            text = source_line(f["filename"], row)
            v = verdicts.get((repo, path, f["code"], text))
            rows.append({"repo": repo, "path": path, "row": row, "code": f["code"], "line": text,
                         "message": f["message"], "verdict": v["verdict"] if v else None})
    per_rule = collections.defaultdict(collections.Counter)
    for r in rows:
        per_rule[r["code"]][r["verdict"] or "unjudged"] += 1
    print(f"{'rule':6} {'findings':>8} {'true':>5} {'latent':>6} {'false':>5} {'unjudged':>8} {'right':>6}")
    total: collections.Counter = collections.Counter()
    for code in sorted(per_rule) + ["all"]:
        c = total if code == "all" else per_rule[code]
        if code != "all":
            total.update(c)
        judged = c["true"] + c["latent"] + c["false"]
        right = f"{(c['true'] + c['latent']) / judged:.1%}" if judged else "-"
        print(f"{code:6} {sum(c.values()):8} {c['true']:5} {c['latent']:6} {c['false']:5} {c['unjudged']:8} {right:>6}")
    found = {(r["repo"], r["path"], r["code"], r["line"]) for r in rows}
    for key, v in sorted(verdicts.items()):
        if key not in found:
            print(f"GONE {v['verdict']:6} {v['repo']} {v['path']}:{v['row']} {v['code']} | {v['line'][:90]}")
    unjudged = [r for r in rows if r["verdict"] is None]
    for r in unjudged:
        print(f"UNJUDGED {r['repo']} {r['path']}:{r['row']} {r['code']} | {r['line'][:100]} | {r['message'][:140]}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    return 1 if unjudged else 0


if __name__ == "__main__":
    sys.exit(main())
