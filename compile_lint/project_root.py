"""The project a linted path belongs to.

A partial run (pre-commit's changed files, an editor's buffer, stdin) still needs
the whole project: regions set up in other files, `compile-lint-regions.json`.
The root is the folder of the config file in use, else the nearest folder above the
path holding `pyproject.toml`, `setup.cfg` or `.git`, else None (no project known).
"""
from __future__ import annotations

import os
from typing import Optional

from .config import Settings

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", ".git")


def find_project_root(path: str, settings: Optional[Settings] = None) -> Optional[str]:
    """The project root of `path` (a file or folder), as an absolute path, or None."""
    if settings is not None and settings.source:
        return os.path.dirname(os.path.abspath(settings.source))
    folder = os.path.abspath(path)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in ROOT_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
