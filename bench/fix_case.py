#!/usr/bin/env python3
"""Build the one-big-file `fix` case: ~4,500 lines of real library code (4,436: whole top-level statements) from corpus M
(bench/.work/corpus/M/src) with three safe fixes of three different codemods appended.

    python bench/fix_case.py OUT.py [--lines 4500]

The code is concatenated from whole modules of diffusers (sorted paths, so every run
builds the same file), `from __future__` lines dropped (one goes on top). Appended:
a discarded `torch.compile(model)` (CL503), a `torch.cuda.amp.autocast()` (CL507) and
a traced `int(x.shape[2])` (CL101), each with a safe fix. The generated file is not
committed; this generator is.

Timing, as in bench/results.md:

    python bench/fix_case.py /tmp/fixcase/big.py
    cd /tmp/fixcase && git init -q 2>/dev/null; cp big.py big.orig
    /usr/bin/time -f '%e s %M KB' compile-lint fix --no-cache big.py; cp big.orig big.py
"""
from __future__ import annotations

import argparse
import ast
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, ".work", "corpus", "M", "src", "diffusers-0.42.1", "diffusers", "models")

TAIL = '''

# -- three hazards with safe fixes (bench/fix_case.py) --
class _BenchUp(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.interpolate(x, size=(int(x.shape[2]) * 2, 64))


_bench_model = _BenchUp()
torch.compile(_bench_model)
_bench_traced = torch.jit.trace(_BenchUp(), torch.rand(1, 3, 8, 8))


def _bench_step(batch):
    with torch.cuda.amp.autocast():
        return _bench_model(batch)
'''


def build(lines: int) -> str:
    out = ["from __future__ import annotations\n", "import torch\n"]
    count = 2
    for folder, dirs, files in sorted(os.walk(CORPUS)):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".py") or name == "__init__.py":
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                text = fh.read()
            body = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("from __future__"))
            try:
                ast.parse(body)
            except SyntaxError:
                continue
            body = body if body.endswith("\n") else body + "\n"
            room = lines - TAIL.count("\n") - count - 2
            full = body.count("\n") >= room
            if full:  # the module's top-level statements that fit
                keep = [s.lineno for s in ast.parse(body).body if s.end_lineno <= room]
                ends = [s.end_lineno for s in ast.parse(body).body if s.end_lineno <= room]
                body = "".join(body.splitlines(keepends=True)[:max(ends)]) if keep else ""
            out.append(f"\n# ---- {os.path.relpath(os.path.join(folder, name), CORPUS)} ----\n")
            out.append(body)
            count += body.count("\n") + 2
            if full:
                out.append(TAIL)
                return "".join(out)
    raise SystemExit(f"corpus M not found or too small under {CORPUS} (see bench/run_bench.py)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--lines", type=int, default=4513)
    args = parser.parse_args(argv)
    text = build(args.lines)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"{args.out}: {text.count(chr(10))} lines", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
