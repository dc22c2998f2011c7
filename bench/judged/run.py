#!/usr/bin/env python3
"""The judged real-code report: lint real code, match every finding against a verdict
read by hand, print precision per rule and overall, list what is not judged yet.

    python bench/judged/run.py                      # corpus L + the apps set, this checkout
    python bench/judged/run.py --code /tmp/main     # the same with another checkout's compile_lint
    python bench/judged/run.py --json out.json      # also write every finding with its verdict

Sets (each linted as its own run, default options plus `respect-gitignore = false`):
- L: the pinned PyPI corpus, one folder per package, at $CORPUS_L (default /work/corpus/src;
  scripts/fetch_corpus.sh-style unpack, pinned by SHA256SUMS);
- apps: public applications that compile or trace their own models, one folder per
  repository (`<owner>__<name>`), at $APPS (default /work/apps).

Verdicts live in bench/judged/verdicts.jsonl, one JSON object a line:
  {"set": "L"|"apps", "repo": "<package or owner__name>", "path": "<path in it>",
   "code": "CL201", "line": "<the reported source line, stripped>",
   "verdict": "true"|"latent"|"false", "why": "<one line>"}
The source line's text is the key (not its number), so verdicts survive edits elsewhere.
"true": the hazard happens in the code as written; "latent": the construct is the hazard
but nothing in the repository triggers it today; "false": not a hazard.
Precision counts true and latent as right. Exit status: 0 when every finding is judged,
1 when some are not (they are listed), 2 on errors.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VERDICTS = os.path.join(HERE, "verdicts.jsonl")
CONFIG = os.path.join(HERE, "lint.toml")


def sets() -> list[tuple[str, str, str]]:
    """(set, repo, folder) for each project to lint."""
    out = []
    corpus = os.environ.get("CORPUS_L", "/work/corpus/src")
    apps = os.environ.get("APPS", "/work/apps")
    for name, base in (("L", corpus), ("apps", apps)):
        if not os.path.isdir(base):
            print(f"warning: set {name} missing at {base}", file=sys.stderr)
            continue
        for repo in sorted(os.listdir(base)):
            folder = os.path.join(base, repo)
            if os.path.isdir(folder):
                out.append((name, repo, folder))
    return out


def lint(folder: str, code_root: str) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=code_root)
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "compile_lint", "check", folder, "--config", CONFIG, "--no-cache",
             "--output-format", "json", "--exit-zero", "--output-file", out],
            env=env, cwd=code_root, capture_output=True, text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"compile-lint failed on {folder}: {proc.stderr.strip()[-500:]}")
        with open(out, encoding="utf-8") as fh:
            return json.load(fh)
    finally:
        os.unlink(out)


def source_line(path: str, row: int) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for i, line in enumerate(fh, 1):
                if i == row:
                    return line.strip()
    except OSError:
        pass
    return ""


def read_verdicts(paths: list, fields: tuple) -> dict[tuple, dict]:
    """The verdicts of the .jsonl files at `paths` (missing ones skipped), keyed by `fields`."""
    table = {}
    for name in paths:
        if os.path.exists(name):
            with open(name, encoding="utf-8") as fh:
                for line in fh:
                    if line.strip():
                        v = json.loads(line)
                        table[tuple(v[f] for f in fields)] = v
                        # the same line text judged apart: at two rows (a copy of a def), or
                        # two findings of one rule on one line (by column)
                        if "row" in v:
                            table[tuple(v[f] for f in fields) + ("row", v["row"])] = v
                        if "column" in v:
                            table[tuple(v[f] for f in fields) + (v["column"],)] = v
    return table


def load_verdicts() -> dict[tuple, dict]:
    return read_verdicts([VERDICTS], ("set", "repo", "path", "code", "line"))


def judge_apps(apps_dir: str, code_root: str, verdicts: dict) -> list[dict]:
    """Lint every app folder of `apps_dir` (one per `owner__name`); each finding with the
    verdict `verdicts` holds for (app, path, code, source line text): for those and its
    column where a verdict gives one (two findings of a rule on one line), else its row
    (the same text judged apart at two rows), else the text alone; None if none."""
    rows = []
    for repo in sorted(os.listdir(apps_dir)):
        folder = os.path.join(apps_dir, repo)
        if not os.path.isdir(folder) or repo.startswith("."):
            continue
        for f in lint(folder, code_root):
            path = os.path.relpath(f["filename"], folder)
            row = f["location"]["row"]
            text = source_line(f["filename"], row)
            key = (repo, path, f["code"], text)
            v = verdicts.get(key + (f["location"]["column"],)) or verdicts.get(key + ("row", row)) or verdicts.get(key)
            rows.append({"repo": repo, "path": path, "row": row, "code": f["code"], "line": text,
                         "message": f["message"], "verdict": v["verdict"] if v else None})
    return rows


def print_table(rows: list[dict]) -> list[dict]:
    """Findings, true, latent, false and unjudged per rule and in all, the share right
    (true or latent, of those judged); then the unjudged findings, which it returns."""
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
    unjudged = [r for r in rows if r["verdict"] is None]
    for r in unjudged:
        where = f"{r['set']} " if "set" in r else ""
        print(f"UNJUDGED {where}{r['repo']} {r['path']}:{r['row']} {r['code']} | {r['line'][:100]} | {r['message'][:140]}")
    return unjudged


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", default=ROOT, help="checkout whose compile_lint runs (default: this one)")
    parser.add_argument("--json", help="write every finding with its verdict here")
    parser.add_argument("--rescore", help="score the findings saved by an earlier --json run, without linting")
    args = parser.parse_args(argv)
    verdicts = load_verdicts()
    rows = []
    if args.rescore:
        with open(args.rescore, encoding="utf-8") as fh:
            for r in json.load(fh):
                v = verdicts.get((r["set"], r["repo"], r["path"], r["code"], r["line"]))
                r["verdict"], r["why"] = (v["verdict"], v["why"]) if v else (None, None)
                rows.append(r)
    for set_name, repo, folder in ([] if args.rescore else sets()):
        for f in lint(folder, os.path.abspath(args.code)):
            path = os.path.relpath(f["filename"], folder)
            row = f["location"]["row"]
            key = (set_name, repo, path, f["code"], source_line(f["filename"], row))
            v = verdicts.get(key)
            rows.append({"set": set_name, "repo": repo, "path": path, "row": row, "code": f["code"],
                         "line": key[-1], "message": f["message"], "verdict": v["verdict"] if v else None,
                         "why": v["why"] if v else None})
    unjudged = print_table(rows)
    by_set = collections.Counter(r["set"] for r in rows)
    print("findings per set: " + ", ".join(f"{k} {v}" for k, v in sorted(by_set.items())))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    return 1 if unjudged else 0


if __name__ == "__main__":
    sys.exit(main())
