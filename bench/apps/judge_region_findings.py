#!/usr/bin/env python3
"""Precision of the region rules (CL1xx-CL4xx) on the real applications of apps.toml.

    python bench/apps/judge_region_findings.py APPS_DIR        # APPS_DIR from materialize.sh

Runs `compile-lint check APP --output-format json` (default options otherwise) on each app
folder, keeps the CL1xx-CL4xx findings and looks each one up in
judged_region_findings.toml by (app, path, code, source line text), so a judgment survives
line shifts. Prints per verdict counts, precision (true / judged) and
(true + latent) / judged, every finding nobody has judged yet, and judged findings that
are no longer reported. Exit 1 when a finding is unjudged: judge it and add it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REGION_CODES = ("CL1", "CL2", "CL3", "CL4")


def findings_of(python: str, apps_dir: str, app: str) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [python, "-m", "compile_lint", "check", app, "--output-format", "json"],
        cwd=apps_dir, capture_output=True, text=True, env=env,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"compile-lint check {app} exited {proc.returncode}: {proc.stderr[-2000:]}")
    out = []
    for finding in json.loads(proc.stdout or "[]"):
        if not finding["code"].startswith(REGION_CODES):
            continue
        filename = os.path.abspath(os.path.join(apps_dir, finding["filename"]))
        path = os.path.relpath(filename, os.path.join(os.path.abspath(apps_dir), app)).replace(os.sep, "/")
        row = finding["location"]["row"]
        with open(filename, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
        text = lines[row - 1].strip() if 0 < row <= len(lines) else ""
        out.append({"app": app, "path": path, "line": row, "code": finding["code"], "text": text,
                    "message": finding["message"]})
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("apps_dir")
    parser.add_argument("--judged", default=os.path.join(HERE, "judged_region_findings.toml"))
    parser.add_argument("--apps", default=os.path.join(HERE, "apps.toml"))
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)

    with open(args.apps, "rb") as fh:
        apps = [a["name"] for a in tomllib.load(fh)["app"]]
    with open(args.judged, "rb") as fh:
        judged = tomllib.load(fh).get("finding", [])
    by_key = {(j["app"], j["path"], j["code"], j["text"]): j for j in judged}

    found = [f for app in apps for f in findings_of(args.python, args.apps_dir, app)]
    verdicts: Counter = Counter()
    unjudged, used = [], set()
    for f in found:
        key = (f["app"], f["path"], f["code"], f["text"])
        j = by_key.get(key)
        if j is None:
            unjudged.append(f)
            continue
        used.add(key)
        verdicts[j["verdict"]] += 1
        print(f"{j['verdict']:6} {f['code']} {f['app']}/{f['path']}:{f['line']}  {j['why']}")
    n = sum(verdicts.values())
    print(f"\n{len(found)} region findings on {len(apps)} apps: "
          + ", ".join(f"{k} {verdicts[k]}" for k in ("true", "latent", "false")) + f", unjudged {len(unjudged)}")
    if n:
        print(f"precision true/judged: {verdicts['true']}/{n} = {100 * verdicts['true'] / n:.0f}%; "
              f"(true+latent)/judged: {verdicts['true'] + verdicts['latent']}/{n} = "
              f"{100 * (verdicts['true'] + verdicts['latent']) / n:.0f}%")
    gone = [j for k, j in by_key.items() if k not in used]
    if gone:
        print(f"\njudged, not reported by this run (fixed, or found only by another branch) ({len(gone)}):")
        for j in gone:
            print(f"  {j['verdict']:6} {j['code']} {j['app']}/{j['path']}:{j['line']}  {j['text']}")
    if unjudged:
        print(f"\nnot judged yet ({len(unjudged)}):")
        for f in unjudged:
            print(f"  {f['code']} {f['app']}/{f['path']}:{f['line']}  {f['text']}\n      {f['message'][:200]}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
