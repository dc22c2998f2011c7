"""A small Python API over the pipeline, for `verify` and for codemods run by libcst."""
from __future__ import annotations

import os
from typing import Optional

from .config import Settings, load_config_for
from .discovery import find_files
from .engine import Linter, Selection
from .model import Finding


def lint_paths(paths: list[str], selection: Selection = Selection(), settings: Optional[Settings] = None) -> list[Finding]:
    """Findings for the Python files under `paths`, as `compile-lint check` finds them."""
    settings_for = (lambda _p: settings) if settings is not None else load_config_for
    discovery = find_files(list(paths), settings_for)
    results = Linter(settings_for, selection).lint(discovery.files)
    return [f for r in results for f in r.findings]


def fix_targets(data: bytes, filename: str, code: str) -> list[tuple[int, int, dict]]:
    """Where rule `code` offers a fix (safe or unsafe) in `data`: for codemods run by
    libcst's runner, which asks for them explicitly."""
    path = filename if filename and os.path.exists(filename) else "codemod_input.py"
    linter = Linter(load_config_for, Selection(select=(code,)))
    results = linter.lint([], stdin=(path, data))
    return [
        (f.start.row, f.start.column, f.fix.data)
        for r in results
        for f in r.findings
        if f.code == code and f.fix is not None
    ]
