"""A cold `check` run in this process, for the bench scripts that patch the engine's
functions before it starts (forked workers inherit the patches).

    from in_process import run_check      # (a bench script's own folder is on sys.path)

compile_lint is imported from this checkout (the repository the script lives in), so the
script of another checkout measures that checkout."""
from __future__ import annotations

import contextlib
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "judged", "lint.toml")


def run_check(folder: str, jobs: int = 2) -> None:
    """`compile-lint check --no-cache -j JOBS --config bench/judged/lint.toml FOLDER`,
    its report thrown away."""
    from compile_lint import cli

    with contextlib.redirect_stdout(io.StringIO()):
        try:
            cli.cli(["check", "--no-cache", "-j", str(jobs), "--config", CONFIG, folder], prog_name="compile-lint")
        except SystemExit:
            pass
