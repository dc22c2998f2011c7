"""What `compile-lint record` costs on a small training script (CPU).

Runs bench/record_train.py (a small conv net, compiled, trained for --steps steps):
  plain              python record_train.py                 (Inductor)
  recorded           compile-lint record -- python ...      (Inductor, recorder loaded)
  recorded --eager   compile-lint record --eager-backend -- python ...
  plain eager        python record_train.py --backend eager (the recorder's own cost
                                                             next to `recorded --eager`)
and reports, per case, the median wall time of the whole command and of one training
step after warm-up (the script measures that itself), over --repeat runs.

  python bench/record_overhead.py [--steps 200] [--repeat 2] [--append bench/results.md]
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCRIPT = os.path.join(HERE, "record_train.py")


def run(cmd: list[str], cwd: str) -> tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    step = float(re.search(r"step_ms ([\d.]+)", proc.stdout).group(1))
    return wall, step


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--append", help="append the table to this markdown file")
    args = parser.parse_args()
    py = sys.executable
    train = [py, SCRIPT, "--steps", str(args.steps)]
    record = [py, "-m", "compile_lint", "record", "--fresh"]
    cases = [
        ("plain (Inductor)", train),
        ("`record` (Inductor)", record + ["--"] + train),
        ("`record --eager-backend`", record + ["--eager-backend", "--"] + train),
        ("plain, backend=\"eager\"", train + ["--backend", "eager"]),
    ]
    rows = []
    with tempfile.TemporaryDirectory() as project:
        open(os.path.join(project, "pyproject.toml"), "w").write("[project]\nname = 'bench'\n")
        for name, cmd in cases:
            walls, steps = [], []
            for _ in range(args.repeat):
                wall, step = run(cmd, project)
                walls.append(wall)
                steps.append(step)
            rows.append((name, statistics.median(walls), statistics.median(steps)))
            print(f"{name}: wall {rows[-1][1]:.2f} s, step {rows[-1][2]:.3f} ms", flush=True)
    base_wall, base_step = rows[0][1], rows[0][2]
    eager_wall, eager_step = rows[3][1], rows[3][2]
    lines = [
        "",
        f"## compile-lint record: overhead on a small training script ({args.steps} steps, median of {args.repeat})",
        "",
        f"`python bench/record_overhead.py --steps {args.steps} --repeat {args.repeat}` (CPU, torch "
        f"{_torch_version()}, {os.cpu_count()} cores, shared machine).",
        "",
        "| case | wall s | vs plain | step ms (after warm-up) | vs plain |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, wall, step in rows:
        lines.append(f"| {name} | {wall:.2f} | {wall / base_wall:.2f}x | {step:.3f} | {step / base_step:.2f}x |")
    lines += [
        "",
        f"The recorder's own cost next to the same backend: `record --eager-backend` vs plain eager backend: "
        f"wall {rows[2][1] / eager_wall:.2f}x, step {rows[2][2] / eager_step:.2f}x.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.append:
        with open(args.append, "a", encoding="utf-8") as fh:
            fh.write(text)


def _torch_version() -> str:
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    return out.stdout.strip() or "?"


if __name__ == "__main__":
    main()
