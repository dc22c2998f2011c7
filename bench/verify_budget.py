"""verify as a CI gate: a default run of a project finishes within its budget, and says
what an unbudgeted run says about the targets it ran.

    python bench/verify_budget.py [--app bench/verify_app] [--out DIR] [--budget-only]

Runs `compile-lint verify APP --device cpu` with the default options (its 600 s
budget) on a cold Inductor cache (a fresh TORCHINDUCTOR_CACHE_DIR, as a new CI runner
has), then again with `--budget 0` on another cold cache, and prints: each run's wall
time and load average, each target's status in both runs, how it was built, and whether
the statuses agree on the targets the budgeted run verified (every status but not-run:
those whose compiled checks the budget all left out). The JSON reports stay in
DIR (default: a temporary folder, printed). bench/results.md (issue 23, "verify budget")
holds the figures.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(app: str, out: str, name: str, extra: list) -> dict:
    cache = os.path.join(out, f"{name}-inductor-cache")
    os.makedirs(cache, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=ROOT, TORCHINDUCTOR_CACHE_DIR=cache)
    for var in ("TORCHINDUCTOR_COMPILE_THREADS", "COMPILE_LINT_VERIFY_NO_FORK", "OMP_NUM_THREADS"):
        env.pop(var, None)  # the defaults, as a user has them
    report = os.path.join(out, f"{name}.json")
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "compile_lint", "verify", "--device", "cpu", app, "--report", "json",
                             "--output-file", report, "--repro-dir", os.path.join(out, f"{name}-repros"), *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    lines, first_line_s = [], None
    for line in proc.stderr:  # the plan is the first line: how long a user waits for a word
        if first_line_s is None:
            first_line_s = time.monotonic() - started
        lines.append(line)
    returncode = proc.wait()
    wall = time.monotonic() - started
    with open(os.path.join(out, f"{name}.stderr"), "w") as fh:
        fh.write("".join(lines))
    if not os.path.exists(report):
        sys.exit(f"{name}: no report (exit {returncode}):\n{''.join(lines)[-3000:]}")
    with open(report) as fh:
        data = json.load(fh)
    return {"data": data, "wall": wall, "exit": returncode, "load": (load_before, os.getloadavg()[0]),
            "first_line_s": first_line_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--app", default=os.path.join(ROOT, "bench", "verify_app"))
    parser.add_argument("--out")
    parser.add_argument("--budget-only", action="store_true", help="skip the unbudgeted run")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="verify-budget-")
    os.makedirs(out, exist_ok=True)
    runs = {"default": run(args.app, out, "default", [])}
    if not args.budget_only:
        runs["unbudgeted"] = run(args.app, out, "unbudgeted", ["--budget", "0"])
    print(f"reports in {out}")
    for name, result in runs.items():
        data = result["data"]
        print(f"{name}: wall {result['wall']:.0f} s (report {data['wall_s']:.0f} s), first line after "
              f"{result['first_line_s']:.1f} s, exit {result['exit']}, "
              f"load {result['load'][0]:.1f} -> {result['load'][1]:.1f}, summary {data['summary']}")
    budgeted = {t["target"]: t for t in runs["default"]["data"]["targets"]}
    full = {t["target"]: t for t in runs["unbudgeted"]["data"]["targets"]} if "unbudgeted" in runs else {}
    differ = []
    print(f"{'target':45} {'default':10} {'--budget 0':10} confirmed  left out (budget)")
    for ref, target in sorted(budgeted.items()):
        left = [c.get("message", c["name"]).replace("not run (budget): ", "").split(" (")[0]
                for c in target["checks"] if c["verdict"] == "budget"]
        other = full.get(ref, {}).get("status", "-")
        # the targets it ran: a status of its own (not-run: the budget left out every
        # compiled check); their statuses must be the unbudgeted run's
        if full and target["status"] != "not-run" and other != target["status"]:
            differ.append(ref)
        print(f"{ref[-45:]:45} {target['status']:10} {other:10} {','.join(target['confirmed']) or '-':10} "
              f"{'; '.join(left) or '-'}")
    print("built:")
    for ref, target in sorted(budgeted.items()):
        print(f"  {ref.rsplit('/', 1)[-1]}: {target.get('built')}")
    if full:
        ran = [ref for ref, t in budgeted.items() if t["status"] != "not-run"]
        print(f"statuses agree with --budget 0 on the {len(ran)} target(s) the default run verified" if not differ
              else f"STATUSES DIFFER: {', '.join(differ)}")


if __name__ == "__main__":
    main()
