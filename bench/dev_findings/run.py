#!/usr/bin/env python3
"""Precision of `compile-lint check` (default options, as a user runs it) on the
development apps, estimated from a stratified sample judged by hand.

The development sets (bench/dev*/apps.toml) were picked for their compile sites, not for
the linter's findings; most of their findings were never read. Reading all of them is
more than one session can do, so each rule's findings are sampled (all of them where a
rule has few) and precision is estimated per rule, then weighted by each rule's count.

    python bench/dev_findings/run.py lint OUT [--sets dev34,dev35] [--apps-root /work/y] [--code CHECKOUT]
        # one `check --output-format json` per app, OUT/<set>__<app>.json
    python bench/dev_findings/run.py sample OUT [--per-rule 12] [--seed 0]
        # the findings to judge, one JSON line each (stable for the same OUT, cap and seed)
    python bench/dev_findings/run.py score OUT
        # per rule: findings, judged, true / latent / false, estimated precision; exit 1
        # when a sampled finding has no verdict

Apps come from materialized sets (`APPS_TOML=bench/<set>/apps.toml bench/apps/materialize.sh
ROOT/<set> ...`). Verdicts live in verdicts.jsonl here, keyed like bench/judged's by
(set, app, path, code, the reported source line's text): "true" (the hazard happens as
written), "latent" (the construct is the hazard, nothing in the repository triggers it
today), "false" (not a hazard). Precision counts true and latent as right.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

def _judged_run():
    """bench/judged/run.py (its verdicts share our key: the reported source line's text)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("judged_run", os.path.join(ROOT, "bench", "judged", "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


source_line = _judged_run().source_line
VERDICTS = os.path.join(HERE, "verdicts.jsonl")


def lint(out: str, sets: list[str], apps_root: str, code: str) -> int:
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=code)
    failed = 0
    for set_name in sets:
        base = os.path.join(apps_root, set_name)
        for app in sorted(os.listdir(base)):
            folder = os.path.join(base, app)
            if not os.path.isdir(folder):
                continue
            target = os.path.join(out, f"{set_name}__{app}.json")
            proc = subprocess.run(
                [sys.executable, "-m", "compile_lint", "check", folder, "--no-cache", "--output-format", "json",
                 "--exit-zero", "--output-file", target],
                env=env, cwd=code, capture_output=True, text=True,
            )
            if proc.returncode != 0:
                failed += 1
                print(f"{set_name}/{app}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}", file=sys.stderr)
    return 1 if failed else 0


def findings(out: str) -> list[dict]:
    """Every finding of the runs in `out`, in a stable order."""
    rows = []
    for name in sorted(os.listdir(out)):
        if not name.endswith(".json"):
            continue
        set_name, app = name[:-len(".json")].split("__", 1)
        with open(os.path.join(out, name), encoding="utf-8") as fh:
            try:
                found = json.load(fh)
            except ValueError:
                print(f"warning: {name} is not JSON (an interrupted run?)", file=sys.stderr)
                continue
        for f in found:
            folder = f["filename"].split(f"/{set_name}/{app}/", 1)
            path = folder[1] if len(folder) == 2 else f["filename"]
            row = f["location"]["row"]
            rows.append({"set": set_name, "app": app, "path": path, "row": row, "code": f["code"],
                         "line": source_line(f["filename"], row), "message": f["message"]})
    rows.sort(key=lambda r: (r["code"], r["set"], r["app"], r["path"], r["row"]))
    return rows


def key(r: dict) -> tuple:
    return (r["set"], r["app"], r["path"], r["code"], r["line"])


def sample(rows: list[dict], per_rule: int, seed: int) -> list[dict]:
    by_rule = collections.defaultdict(list)
    for r in rows:
        by_rule[r["code"]].append(r)
    picked = []
    for code in sorted(by_rule):
        group = by_rule[code]
        picked += group if len(group) <= per_rule else random.Random(f"{seed}:{code}").sample(group, per_rule)
    return picked


def load_verdicts() -> dict[tuple, dict]:
    table = {}
    if os.path.exists(VERDICTS):
        with open(VERDICTS, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    v = json.loads(line)
                    table[key(v)] = v
    return table


def score(rows: list[dict], per_rule: int, seed: int) -> int:
    verdicts = load_verdicts()
    count = collections.Counter(r["code"] for r in rows)
    judged = collections.defaultdict(collections.Counter)
    missing = []
    for r in sample(rows, per_rule, seed):
        v = verdicts.get(key(r))
        if v is None:
            missing.append(r)
        else:
            judged[r["code"]][v["verdict"]] += 1
    print(f"{'rule':6} {'findings':>8} {'judged':>6} {'true':>5} {'latent':>6} {'false':>5} {'right':>6}")
    right_est = 0.0
    weight = 0
    for code in sorted(count):
        c = judged[code]
        n = c["true"] + c["latent"] + c["false"]
        share = (c["true"] + c["latent"]) / n if n else None
        if share is not None:
            right_est += share * count[code]
            weight += count[code]
        print(f"{code:6} {count[code]:8} {n:6} {c['true']:5} {c['latent']:6} {c['false']:5} "
              f"{'-' if share is None else f'{share:.0%}':>6}")
    total = sum(judged.values(), collections.Counter())
    n = total["true"] + total["latent"] + total["false"]
    print(f"all    {sum(count.values()):8} {n:6} {total['true']:5} {total['latent']:6} {total['false']:5}")
    if weight:
        print(f"estimated precision, each rule's sample share weighted by its count: {right_est / weight:.1%} "
              f"(over {weight} findings of the rules judged)")
    for r in missing:
        print(f"UNJUDGED {r['set']}/{r['app']} {r['path']}:{r['row']} {r['code']} | {r['line'][:100]}")
    return 1 if missing else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_lint = sub.add_parser("lint", help="lint every app of the sets into OUT")
    p_lint.add_argument("out")
    p_lint.add_argument("--sets", required=True, help="comma-separated set names, e.g. dev34,dev35")
    p_lint.add_argument("--apps-root", default="/work/y", help="folder holding one materialized folder per set")
    p_lint.add_argument("--code", default=ROOT, help="checkout whose compile_lint runs (default: this one)")
    for name in ("sample", "score"):
        p = sub.add_parser(name)
        p.add_argument("out")
        p.add_argument("--per-rule", type=int, default=12)
        p.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "lint":
        return lint(args.out, args.sets.split(","), args.apps_root, os.path.abspath(args.code))
    rows = findings(args.out)
    if args.command == "sample":
        for r in sample(rows, args.per_rule, args.seed):
            print(json.dumps(r))
        return 0
    return score(rows, args.per_rule, args.seed)


if __name__ == "__main__":
    sys.exit(main())
