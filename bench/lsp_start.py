#!/usr/bin/env python3
"""Language server start-up and keystroke latency, for one server build or two side by side.

    python bench/lsp_start.py --python .venv/bin/python [--python /tmp/bv/bin/python] [--runs 5]

1. First diagnostics: spawn `python -m compile_lint server` in a small project, send
   initialize/initialized/didOpen of a 3-line file with a finding, and time until its
   publishDiagnostics arrives; also the server process's CPU seconds by then (from
   /proc/PID/stat: user+sys of all its threads), which does not depend on how loaded
   the machine is as wall time does.
2. Change to diagnostics on a 4,000-line file (bench/lsp_latency.py's generated stage
   classes, a trace of every third in train.py): body edits (a constant in a method), sent
   as whole-text changes with debounceMs 0, so the time is lint + publish with no debounce;
   wall from didChange to the matching publishDiagnostics (client side), and the
   server's own CPU for that lint (its compile-lint/timings).
The projects are generated under /var/tmp/compile-lint-lsp-start/ (outside any git tree).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
sys.path.insert(0, HERE)

from lsp_client import LspClient  # noqa: E402

WORK = "/var/tmp/compile-lint-lsp-start"
SMALL = "import torch\nmodel = Net()\ntorch.compile(model)\n"


def proc_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def projects() -> tuple[str, str]:
    import lsp_latency as L

    small = os.path.join(WORK, "small")
    os.makedirs(small, exist_ok=True)
    with open(os.path.join(small, "pyproject.toml"), "w") as fh:
        fh.write("[project]\nname = 's'\n")
    with open(os.path.join(small, "m.py"), "w") as fh:
        fh.write(SMALL)
    big = os.path.join(WORK, "big")
    os.makedirs(os.path.join(big, "pkg"), exist_ok=True)
    with open(os.path.join(big, "pyproject.toml"), "w") as fh:
        fh.write("[project]\nname = 'b'\n")
    open(os.path.join(big, "pkg", "__init__.py"), "w").close()
    parts, k = [L.BIG_HEAD], 0
    while sum(p.count("\n") for p in parts) < 4000:
        parts.append(L.BIG_CLASS.format(k=k))
        k += 1
    with open(os.path.join(big, "pkg", "big.py"), "w") as fh:
        fh.write("".join(parts))
    traces = "\n".join(f"traced{s} = torch.jit.trace(big.Stage{s}(), example)" for s in range(0, k, 3))
    with open(os.path.join(big, "pkg", "train.py"), "w") as fh:
        fh.write(L.TRAIN.replace("pkg00", "pkg").format(traces=traces))
    return small, big


def env_for(python: str) -> dict:
    env = dict(os.environ)
    env.pop("COMPILE_LINT_NO_CACHE", None)
    return env


def first_diagnostics(python: str, small: str, cold: bool) -> tuple[float, float]:
    """`small`: a project folder holding m.py (the file opened); `cold`: no results cache."""
    if cold:
        import shutil

        shutil.rmtree(os.path.join(small, ".compile_lint_cache"), ignore_errors=True)
    client = LspClient(small, env_for(python))
    try:
        started = client.started
        client.initialize(small, {})
        doc = client.open(os.path.join(small, "m.py"), SMALL)
        at, _ = client.diagnostics_for(doc, lambda d: bool(d))
        cpu = proc_cpu(client.proc.pid)
        return at - started, cpu
    finally:
        client.close()


def keystrokes(big: str, edits: int) -> tuple[list[float], list[float]]:
    client = LspClient(big, env_for(sys.executable))
    try:
        client.initialize(big, {"debounceMs": 0})
        path = os.path.join(big, "pkg", "big.py")
        with open(path) as fh:
            text = fh.read()
        doc = client.open(path, text)
        client.diagnostics_for(doc, lambda d: any(x["code"] == "CL101" for x in d), timeout=600)  # the index is in
        walls, version = [], 1
        for n in range(edits):
            version += 1
            sent = client.change(doc, text.replace("self.gain = 0.5", f"self.gain = 0.{n + 10}", 1), version)
            at, _ = client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == doc and p.get("version") == version, timeout=120)
            walls.append(at - sent)
        lints = [t for t in client.request("compile-lint/timings", None)["lints"] if t["version"] and t["version"] > 1]
        return walls, [t["cpu_s"] for t in lints]
    finally:
        client.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", action="append", required=True, help="an interpreter with compile-lint[server] (repeat to compare)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--project", help="open m.py (written there) in this project instead of a 1-file one, its cache cold")
    args = ap.parse_args()
    small, big = projects()
    if args.project:
        with open(os.path.join(args.project, "m.py"), "w") as fh:
            fh.write(SMALL)
        small = args.project
    starts: dict = {python: [] for python in args.python}
    for _ in range(args.runs):  # the servers take turns, so a change in the machine's load hits both
        for python in args.python:
            sys.executable = python  # LspClient spawns sys.executable -m compile_lint server
            starts[python].append(first_diagnostics(python, small, cold=bool(args.project)))
    rows = []
    for python in args.python:
        sys.executable = python
        walls, cpus = keystrokes(big, args.edits)
        rows.append((python, starts[python], walls, cpus))
    ms = lambda xs: f"{statistics.median(xs) * 1000:.0f}"  # noqa: E731
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.runs} starts, {args.edits} edits each")
    print()
    print("| server | first diagnostics wall ms (median) | server CPU by then ms | 4,000-line edit wall ms | its lint CPU ms |")
    print("|---|---:|---:|---:|---:|")
    for python, starts, walls, cpus in rows:
        print(f"| {python} | {ms([s[0] for s in starts])} | {ms([s[1] for s in starts])} | {ms(walls)} | {ms(cpus)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
