"""Counted work of one serial check: figures that do not move with the machine's load.

    python bench/work_counts.py FOLDER [--code CHECKOUT] [--calls]

Runs `compile-lint check --no-cache -j 1 --config bench/judged/lint.toml FOLDER` in this
process with CHECKOUT's compile_lint (default: this one; give another commit's unpacked
tree, e.g. `git archive dd75348 | tar -x -C /tmp/dd`) and prints how many tensor guesses
CL508's analysis built (`TensorGuess`, analysis/tensors/kinds.py) and, with `--calls`, how
many Python function calls the whole check made (cProfile's count; it slows the run about
twofold). On a 2-core VM the wall and CPU times of one code vary by 15% or more between runs
(bench/results.md), so a change of a few percent is read from these counts.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--code", default=os.path.dirname(HERE), help="checkout whose compile_lint runs")
    parser.add_argument("--calls", action="store_true", help="also count Python function calls (cProfile)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.code))
    config = os.path.join(HERE, "judged", "lint.toml")
    os.chdir(args.folder)

    try:
        from compile_lint.analysis.tensors import kinds
    except ImportError:  # dd75348's layout: one module
        from compile_lint.analysis import tensors as kinds
    from compile_lint.cli import main as cli_main

    guesses = 0
    built = kinds.TensorGuess.__init__

    def counted(self, *a, **k):
        nonlocal guesses
        guesses += 1
        built(self, *a, **k)

    kinds.TensorGuess.__init__ = counted
    sys.argv = ["compile-lint", "check", "--no-cache", "-j", "1", "--config", config, "--output-format", "json",
                "-o", os.devnull, "."]
    profile = None
    if args.calls:
        import cProfile

        profile = cProfile.Profile()
        profile.enable()
    cpu = time.process_time()
    try:
        cli_main()
    except SystemExit:
        pass
    cpu = time.process_time() - cpu
    line = f"tensor guesses {guesses}"
    if profile is not None:
        import pstats

        profile.disable()
        line += f", function calls {pstats.Stats(profile).total_calls:,}"
    print(f"{line}, CPU {cpu:.1f} s (code: {os.path.abspath(args.code)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
