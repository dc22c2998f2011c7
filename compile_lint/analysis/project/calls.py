"""Calls of a def by its name anywhere in the project, for questions the region index
does not answer (who calls this setter, where does this factory's result go).

The project's files are found under the linted file's project root (the folder with a
project marker above its import root, else the import root) and filtered by a byte search for the name before any is
parsed; the files are read through `facts.project`, which records them for the cache.
"""
from __future__ import annotations

import ast
import os
from typing import Iterator, Optional

from ..semantic.facts import Fact, ModuleFacts
from .listing import list_project
from ..semantic.names import import_root, marked_root


class ProjectFilesFact(Fact):
    """The Python files of the project around the linted file, listed once per file."""

    name = "project files"

    @classmethod
    def compute(cls, facts: ModuleFacts) -> list[str]:
        return project_files(facts)


def project_files(facts: ModuleFacts) -> list[str]:
    """The Python files of the project around the linted file, at most MAX_FILES; the
    list is a dependency of the file's result (Project.listings)."""
    folder = project_folder(facts.path)
    listing = facts.project.sources.listing(folder, list_project)
    facts.project.listed(folder, listing)
    return listing.files


def project_folder(path: str) -> str:
    """The nearest folder above the file's import root holding a project marker
    (`pyproject.toml`, `setup.cfg`, `setup.py`, `.git`, a config file), else the import
    root itself."""
    start, _prefix = import_root(path)
    return marked_root(start) or start


def calls_named(facts: ModuleFacts, name: str, mentioning: Optional[bytes] = None,
                max_files: Optional[int] = None) -> Iterator[tuple[ModuleFacts, ast.Call]]:
    """(file's facts, call) for every `name(...)` and `x.name(...)` in the project; with
    `mentioning`, only in the files whose bytes hold it (and in this file); with
    `max_files`, nothing when more files than that may call it."""
    # most files that name a method only define or mention it: parse only the ones that
    # may call it (timm: every model defines `reset_classifier`, few call it). The token
    # first: it is one question of every file for all names, where each name is a
    # question of its own (CL512 asks ~90 names of corpus M's 2,100 files)
    paths = facts.get(ProjectFilesFact)
    own = False  # this file, read whatever it mentions
    if mentioning is not None:
        # (one list per project listing and token, the same object for every name asked:
        # files_that_may_call answers it once per name, not once per linted file)
        mentioned, mentioned_set = facts.project.files_mentioning(paths, mentioning)
        own = facts.path not in mentioned_set and facts.path in paths
        paths = mentioned
    paths = facts.project.files_that_may_call(paths, name)
    if own and facts.project.may_call(facts.path, name):
        paths = [facts.path, *paths]
    if max_files is not None and len(paths) > max_files:
        return
    for path in paths:
        other = facts.project.facts_for_path(facts, path)
        for call in other.calls_by_name(name) if other is not None else ():
            yield other, call


def arguments_of(facts: ModuleFacts, func: ast.AST, param: str, mentioning: Optional[bytes] = None,
                 max_files: Optional[int] = None) -> Iterator[tuple[ModuleFacts, ast.expr]]:
    """(caller's facts, argument) for each call in the project of the module-level def
    `func` of this file that passes its parameter `param` (by position, without a `*`
    before it, or by keyword): a bare call in this file, or a call of the name imported
    from this file. Calls of other defs of the same name are left out. With
    `mentioning` and `max_files`, as calls_named."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or param is None:
        return
    params = [a.arg for a in func.args.posonlyargs + func.args.args]
    index = params.index(param) if param in params else None
    for other, call in calls_named(facts, func.name, mentioning, max_files):
        if not _calls_def_of(other, call, facts, func.name):
            continue
        positional = call.args[: index + 1] if index is not None else []
        arg = None
        if index is not None and len(positional) > index and not any(isinstance(a, ast.Starred) for a in positional):
            arg = call.args[index]
        arg = arg or next((k.value for k in call.keywords if k.arg == param), None)
        if arg is not None:
            yield other, arg


def _calls_def_of(other: ModuleFacts, call: ast.Call, facts: ModuleFacts, name: str) -> bool:
    """Whether `call` (in the file `other` reads) calls the module-level def `name` of
    the file `facts` reads."""
    from .context import path_for_module

    if other is facts:
        return isinstance(call.func, ast.Name) and call.func.id == name
    dotted = other.resolve(call.func)
    if not dotted or not dotted.endswith("." + name):
        return False
    path = path_for_module(other, dotted.rpartition(".")[0])
    return path is not None and os.path.abspath(path) == os.path.abspath(facts.path)
