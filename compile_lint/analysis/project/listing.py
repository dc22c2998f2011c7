"""The Python files of a project folder, and the dependency a search of them leaves.

Stdlib only (and compile_lint.cache's racy rule): the cache checks a listing on a warm
run (cache_validity.LISTING) without importing the analysis. A result that searched the
project's files (who calls this def?) depends on which files there are, not only on the
ones it found: a caller added in another folder must re-check it (tests/
test_cache_imports.py). The dependency holds the digest of the file list and each
walked folder's mtime: a folder's mtime moves when an entry is added, removed or
renamed in it, so a warm run stats the folders (a few hundred for diffusers) and walks
again only when one moved; walking corpus M's four projects on every warm run cost
0.13 s of CPU.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Optional

MAX_FILES = 3000
SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "venv", "build", "dist"})
LISTING = "listing:"


@dataclass(frozen=True)
class Listing:
    """The `.py` files under a folder (walk order, at most MAX_FILES) and the folders
    walked, each with its mtime in ns (None: changed too recently to be trusted)."""

    files: list[str]
    folders: tuple[tuple[str, Optional[int]], ...]

    def dependency(self) -> str:
        """What cache_validity keeps for the folder: `listing:<digest>:<folders json>`
        (one string shared by every result that searched this project: the manifest
        stores equal parts once)."""
        return f"{LISTING}{files_digest(self.files)}:{json.dumps(self.folders, separators=(',', ':'))}"


def list_project(folder: str) -> Listing:
    from ...cache import RACY_NS, now_ns

    read_at = now_ns()
    files: list[str] = []
    folders: list[tuple[str, Optional[int]]] = []
    for here, dirs, names in os.walk(folder):
        try:
            st = os.stat(here)
        except OSError:
            mtime = None
        else:
            mtime = st.st_mtime_ns if st.st_mtime_ns < read_at - RACY_NS else None
        folders.append((os.path.relpath(here, folder), mtime))
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        files += [os.path.join(here, name) for name in sorted(names) if name.endswith(".py")]
        if len(files) >= MAX_FILES:
            break
    return Listing(files[:MAX_FILES], tuple(folders))


def files_digest(files: list[str]) -> str:
    return hashlib.blake2b("\n".join(files).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def listing_holds(folder: str, dep: str) -> bool:
    """Whether the Python files under `folder` are still those of the dependency `dep`:
    every folder walked has its recorded mtime, or a new walk finds the same list."""
    digest, _, folders = dep[len(LISTING):].partition(":")
    try:
        recorded = json.loads(folders)
    except ValueError:
        return False
    for rel, mtime in recorded:
        try:
            if mtime is None or os.stat(os.path.join(folder, rel)).st_mtime_ns != mtime:
                break
        except OSError:
            break
    else:
        return True
    return files_digest(list_project(folder).files) == digest
