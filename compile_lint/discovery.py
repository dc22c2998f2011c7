"""Find the files to lint: walk the given paths, skip excluded and gitignored ones.

Matching follows Ruff: `exclude` patterns are gitignore-style globs relative to the
config's folder (a bare name matches at any depth); a folder walk lints the files
`include` (default `*.py`, `*.pyi`, `*.ipynb`) plus `extend-include` match; a file named explicitly on the
command line is linted even when excluded, unless `--force-exclude` is given.
.gitignore files (and .git/info/exclude) are honoured inside git work trees, with
pathspec doing the matching.

With a `FolderMemo` (the results cache's `tree`), a folder whose entry list, settings
and ignore files are as they were on the last walk is not listed or matched again: what
the walk kept there is reused. A folder's mtime moves when an entry is added, removed
or renamed in it; a file edited in place leaves it alone, but is still listed (the
engine notices the edit). Folders holding symbolic links are always listed afresh (a
link's target can change without its folder changing).
"""
from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterator, Optional

from .config import DEFAULT_INCLUDE, Settings

PY_SUFFIXES = (".py", ".pyi", ".ipynb")  # what the default `include` matches


@dataclass
class Discovery:
    files: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message)


@lru_cache(maxsize=None)
def _exclude_spec(patterns: tuple[str, ...]):
    import pathspec  # here: a walk of unchanged folders (FolderMemo) matches nothing

    return pathspec.GitIgnoreSpec.from_lines(patterns)


@lru_cache(maxsize=None)
def _git_root(folder: str) -> Optional[str]:
    if os.path.exists(os.path.join(folder, ".git")):
        return folder
    parent = os.path.dirname(folder)
    return None if parent == folder else _git_root(parent)


@lru_cache(maxsize=None)
def _gitignore_spec(folder: str):
    import pathspec

    lines: list[str] = []
    for name in (".gitignore", os.path.join(".git", "info", "exclude")):
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as fh:
                lines.extend(fh.read().splitlines())
        except OSError:
            continue
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def _gitignored(path: str, is_dir: bool) -> bool:
    """True when a .gitignore between the work tree's root and `path` ignores it."""
    folder = os.path.dirname(path)
    root = _git_root(folder)
    if root is None:
        return False
    probe = folder
    while True:
        spec = _gitignore_spec(probe)
        if spec is not None:
            rel = os.path.relpath(path, probe).replace(os.sep, "/") + ("/" if is_dir else "")
            if spec.match_file(rel):
                return True
        if probe == root:
            return False
        probe = os.path.dirname(probe)


@lru_cache(maxsize=None)
def _include_spec(patterns: tuple[str, ...]):
    """None for the default patterns (a suffix test is enough and much faster)."""
    if patterns == DEFAULT_INCLUDE:
        return None
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def is_included(path: str, name: str, settings: Settings) -> bool:
    """Whether a folder walk lints the file: `include` + `extend-include` (gitignore-
    style globs relative to the config's folder; `*.py` matches at any depth)."""
    spec = _include_spec(settings.all_includes())
    if spec is None:
        return name.endswith(PY_SUFFIXES)
    rel = os.path.relpath(path, settings.root).replace(os.sep, "/")
    return spec.match_file(rel if not rel.startswith("../") else name)


def is_excluded(path: str, settings: Settings, is_dir: bool) -> bool:
    spec = _exclude_spec(settings.all_excludes())
    rel = os.path.relpath(path, settings.root).replace(os.sep, "/")
    if rel.startswith("../"):
        rel = os.path.basename(path)
    if spec.match_file(rel + ("/" if is_dir else "")) or spec.match_file(os.path.basename(path) + ("/" if is_dir else "")):
        return True
    return settings.respect_gitignore and _gitignored(path, is_dir)


class FolderMemo:
    """What earlier walks kept in each folder: {folder: (key, subfolders, files)}, the
    key being the folder's trusted signature, its settings and its ignore files'."""

    def __init__(self, known: dict):
        from .cache_validity import FolderStates

        self.known = known
        self.learned: dict[str, tuple] = {}
        self.plain: set[str] = set()  # folders taken as they were, so without symbolic links
        self.reused = 0  # folders taken as they were
        self.listed = 0  # folders listed and matched afresh
        self.folders = FolderStates()
        self._settings: dict[int, str] = {}
        self._ignores: dict[str, Optional[tuple]] = {}

    def key(self, folder: str, settings: Settings) -> Optional[tuple]:
        own = self.folders.own(folder)
        if own is None:
            return None
        shown = self._settings.get(id(settings))
        if shown is None:
            shown = self._settings[id(settings)] = repr(settings)
        ignores = self._ignore_files(folder) if settings.respect_gitignore else ()
        return None if ignores is None else (own, shown, ignores)

    def _ignore_files(self, folder: str) -> Optional[tuple]:
        """The work tree's root and the signatures of the ignore files from `folder` up
        to it (None when one of them was changed just now)."""
        if folder in self._ignores:
            return self._ignores[folder]
        root = _git_root(folder)
        if root is None:
            value: Optional[tuple] = ("no work tree",)
        else:
            own = tuple(self.folders.file(os.path.join(folder, name)) for name in (".gitignore", os.path.join(".git", "info", "exclude")))
            above = (root,) if folder == root else self._ignore_files(os.path.dirname(folder))
            value = None if None in own or above is None else own + above
        self._ignores[folder] = value
        return value

    def get(self, folder: str, key: tuple) -> Optional[tuple[list[str], list[str]]]:
        found = self.known.get(folder)
        if isinstance(found, tuple) and len(found) == 3 and found[0] == key:
            self.reused += 1
            self.plain.add(folder)
            return found[1], found[2]
        return None

    def put(self, folder: str, key: tuple, subfolders: list[str], files: list[str]) -> None:
        self.learned[folder] = (key, subfolders, files)

    def everything(self) -> dict:
        return {**self.known, **self.learned}


def find_files(
    paths: list[str],
    settings_for: Callable[[str], Settings],
    force_exclude: bool = False,
    memo: Optional[FolderMemo] = None,
) -> Discovery:
    found = Discovery()
    # real path -> where in found.files the file is listed, and whether by a link
    seen: dict[str, tuple[int, bool]] = {}

    # realpath() lstat()s every component: resolve each folder once instead, a folder
    # a walk entered through a plain (not linked) entry from its parent's real path
    folders: dict[str, str] = {}
    plain = memo.plain if memo is not None else set()

    def add(path: str) -> None:
        folder, name = os.path.split(path)
        if folder not in plain and os.path.islink(path):
            real = os.path.realpath(path)
        else:
            if folder not in folders:
                folders[folder] = os.path.realpath(folder)
            real = os.path.join(folders[folder], name)
        listed = seen.get(real)
        if listed is None:
            seen[real] = (len(found.files), path != real)
            found.files.append(path)
        elif listed[1] and path == real:
            # a file found both through a link and where it lies (miles-credit's
            # `applications/train.py -> ../credit/applications/train.py`): linted, and
            # named by its imports, where it lies, whichever the walk met first
            found.files[listed[0]] = path
            seen[real] = (listed[0], False)

    for given in paths:
        path = os.path.abspath(given)
        if not os.path.lexists(given):
            found.errors.append((given, "no such file or directory"))
            continue
        if os.path.isdir(path):
            if force_exclude and is_excluded(path, settings_for(path), True):
                continue
            for file in _walk(path, settings_for, found, memo, folders):
                add(file)
        elif os.path.isfile(path) or not os.path.exists(path):
            if not os.path.exists(path):
                found.errors.append((given, _link_problem(path)))
                continue
            if force_exclude and is_excluded(path, settings_for(path), False):
                continue
            add(path)  # named explicitly: linted whatever its suffix
        else:
            found.errors.append((given, "not a regular file"))
    return found


def _walk(top: str, settings_for, found: Discovery, memo: Optional[FolderMemo] = None,
          real: Optional[dict[str, str]] = None) -> Iterator[str]:
    """The files to lint under `top`; with `real`, the real path of each folder walked
    into it (folder -> realpath)."""
    if real is None:
        real = {}
    if top not in real:
        real[top] = os.path.realpath(top)
    stack = [top]
    visited: set[tuple[int, int]] = set()
    while stack:
        folder = stack.pop()
        settings = settings_for(folder)
        key = memo.key(folder, settings) if memo is not None else None  # before listing it
        try:
            inode = memo.folders.identity(folder) if key is not None else None  # stat'ed for the key
            if inode is None:
                st = os.stat(folder)
                inode = (st.st_dev, st.st_ino)
            if inode in visited:
                continue  # a symlink loop
            visited.add(inode)
            known = memo.get(folder, key) if key is not None else None
            entries = None if known is not None else sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            found.errors.append((folder, f"cannot read folder: {exc.strerror or exc}"))
            continue
        if known is not None:
            subfolders, files = known
            for name in files:
                yield os.path.join(folder, name)
            _enter(folder, subfolders, stack, real)
            continue
        subdirs: list[str] = []
        kept: list[str] = []
        reusable = key is not None
        if memo is not None:
            memo.listed += 1
        for entry in entries:
            try:
                if entry.is_symlink():
                    reusable = False
                if entry.is_dir(follow_symlinks=False):
                    if not is_excluded(entry.path, settings, True):
                        subdirs.append(entry.name)
                elif is_included(entry.path, entry.name, settings) and entry.is_file():
                    if not is_excluded(entry.path, settings, False):
                        kept.append(entry.name)
                        yield entry.path
            except OSError as exc:
                reusable = False
                if exc.errno == errno.ELOOP:
                    found.errors.append((entry.path, "symbolic link loop"))
                continue
        if reusable:
            memo.put(folder, key, subdirs, kept)
        _enter(folder, subdirs, stack, real)


def _enter(folder: str, subfolders: list[str], stack: list[str], real: dict[str, str]) -> None:
    """Walk the subfolders next, in order. Each was listed as a folder that is not a
    symbolic link (is_dir(follow_symlinks=False); a reused listing is one without
    links), so its real path is its parent's plus its name."""
    base = real.get(folder)
    for name in reversed(subfolders):
        path = os.path.join(folder, name)
        if base is not None:
            real[path] = os.path.join(base, name)
        stack.append(path)


def _link_problem(path: str) -> str:
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
    return "broken symbolic link"
