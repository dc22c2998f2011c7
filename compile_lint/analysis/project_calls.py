"""Calls of a def by its name anywhere in the project, for questions the region index
does not answer (who calls this setter, where does this factory's result go).

The project's files are found under the linted file's project root (the folder with a
project marker above its import root, else the import root) and filtered by a byte search for the name before any is
parsed; the files are read through `facts.project`, which records them for the cache.
"""
from __future__ import annotations

import ast
import os
from typing import Iterator

from .facts import Fact, ModuleFacts
from .names import import_root, marked_root

MAX_FILES = 3000
SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "venv", "build", "dist"})


class ProjectFilesFact(Fact):
    """The Python files of the project around the linted file, listed once per file."""

    name = "project files"

    @classmethod
    def compute(cls, facts: ModuleFacts) -> list[str]:
        return project_files(facts)


def project_files(facts: ModuleFacts) -> list[str]:
    """The Python files of the project around the linted file, at most MAX_FILES."""
    return facts.project.sources.listing(project_folder(facts.path), _python_files)


def _python_files(folder: str) -> list[str]:
    out: list[str] = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        out += [os.path.join(here, name) for name in sorted(files) if name.endswith(".py")]
        if len(out) >= MAX_FILES:
            break
    return out[:MAX_FILES]


def project_folder(path: str) -> str:
    """The nearest folder above the file's import root holding a project marker
    (`pyproject.toml`, `setup.cfg`, `setup.py`, `.git`, a config file), else the import
    root itself."""
    start, _prefix = import_root(path)
    return marked_root(start) or start


def calls_named(facts: ModuleFacts, name: str) -> Iterator[tuple[ModuleFacts, ast.Call]]:
    """(file's facts, call) for every `name(...)` and `x.name(...)` in the project."""
    # most files that name a method only define or mention it: parse only the ones that
    # may call it (timm: every model defines `reset_classifier`, few call it)
    for path in facts.project.files_that_may_call(facts.get(ProjectFilesFact), name):
        other = facts.project.facts_for_path(facts, path)
        for call in other.calls_by_name(name) if other is not None else ():
            yield other, call
