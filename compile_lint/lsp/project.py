"""The project around an editor's buffer: the region index over all its files.

A buffer's regions may be set up in other files (`torch.compile(Upscaler())` in
train.py makes Upscaler.forward in models.py compiled), so a buffer is linted against
the index of the whole project, with the buffer's own summary in place of the one on
disk. The index is built once per project (through the results cache, so a warm start
reads summaries instead of parsing), then rebuilt only when an edit changes a file's
summary (most edits inside a body do not).

This is the server's own copy of the "partial run" project context; when the engine
offers one, `ProjectContext.build` and `regions_with` are the two places to swap.
"""
from __future__ import annotations

import os
import threading
from typing import Optional

from ..analysis.project.context import Sources
from ..analysis.reach.regions import ModuleSummary, ProjectIndex, RegionInfo
from ..config import Settings, load_config_for


class ProjectContext:
    def __init__(self, root: Optional[str], settings_for=load_config_for, use_cache: bool = True, jobs: int = 1):
        self.root = root
        self.settings_for = settings_for
        self.use_cache = use_cache
        # worker processes for the build; the server builds in a thread, and forking a
        # process pool from a threaded process can deadlock its workers, so 1 (none)
        self.jobs = jobs
        self.files: list[str] = []
        self.disk: dict[str, Optional[ModuleSummary]] = {}  # path -> summary of the file on disk
        self.overlay: dict[str, Optional[ModuleSummary]] = {}  # open buffers' summaries
        self.regions: dict[str, RegionInfo] = {}
        self.ready = False
        self.stats: dict = {}
        self._lock = threading.Lock()
        self._digests = None
        self.declared: list = []  # config-declared and recorded regions (analysis/reach/declared.py)
        self.configured = None  # the classes the project's YAML names (analysis/reach/configured.py)
        self.problems: list[str] = []  # why declared regions could not be read
        # other files the rules read (parsed once, keyed by their stat), kept between
        # keystrokes: an edit re-reads nothing of the project
        self.sources = Sources()

    # -- building ---------------------------------------------------------------------
    def build(self) -> None:
        """Summaries of every file of the project and the index over them. Runs the
        full lint through the results cache: a warm cache reads the summaries back
        (and a cold one leaves the cache warm for `compile-lint check`)."""
        if self.root is None:
            self.ready = True
            return
        from ..discovery import find_files

        files = find_files([self.root], self.settings_for).files
        self.declared = self._declarations(files)
        disk: dict[str, Optional[ModuleSummary]] = {}
        regions = None
        if self.use_cache:
            disk, regions = self._from_cache(files)
        if regions is None:
            disk = {path: _summarize_file(path, self.settings_for(path)) for path in files}
        with self._lock:
            self.files = files
            self.disk = disk
            self.regions = self._index() if self.overlay or regions is None else regions
            self.ready = True

    def _declarations(self, files: list[str]) -> list:
        from ..analysis.reach.declared import DeclarationError, declarations_for

        try:
            found = declarations_for(((self.settings_for(p), p) for p in files or [self.root]), files)
            self.configured = found.configured
            return list(found.regions)
        except DeclarationError as exc:
            self.problems.append(str(exc))
            return []

    def refresh_declarations(self) -> bool:
        """The configuration or the recorded regions file changed. True when the index did."""
        with self._lock:
            if not self.ready or self.root is None:
                return False
            self.declared = self._declarations(self.files)
            old = self.regions
            self.regions = self._index()
            return self.regions != old

    def _from_cache(self, files: list[str]):
        from .. import cache as cache_mod
        from ..cache import ResultsCache, project_root
        from ..engine import Linter

        store = ResultsCache(project_root(self.settings_for(self.root).source, self.root))
        linter = Linter(self.settings_for, jobs=self.jobs, cache=store)
        linter.lint(files)
        self.stats = dict(linter.stats)
        records = store.load_manifest()
        disk: dict[str, Optional[ModuleSummary]] = {}
        for path in files:
            record = records.get(os.path.abspath(path))
            found = store.load_summary(path, record["summary_key"]) if isinstance(record, dict) else None
            try:
                if found is None:
                    raise ValueError("no cached summary")
                disk[path] = cache_mod.loads(found[0]) if found[0] is not None else None
            except Exception:
                disk[path] = _summarize_file(path, self.settings_for(path))
        return disk, linter.regions

    def _index(self) -> dict[str, RegionInfo]:
        summaries = []
        for path in self.files:
            summary = self.overlay[path] if path in self.overlay else self.disk.get(path)
            if summary is not None:
                summaries.append(summary)
        for path, summary in self.overlay.items():
            if path not in self.disk and summary is not None:  # a new file, not on disk yet
                summaries.append(summary)
        return ProjectIndex(summaries, self.declared, self.configured).regions()

    # -- keeping it current -------------------------------------------------------------
    def regions_with(self, path: str, summary: Optional[ModuleSummary]) -> tuple[dict[str, RegionInfo], bool]:
        """The index with `path` as the buffer has it; True when that changed the index
        (then open files that depend on it must be linted again)."""
        with self._lock:
            current = self.overlay[path] if path in self.overlay else self.disk.get(path, _ABSENT)
            self.overlay[path] = summary
            if not self.ready:
                own = ProjectIndex([summary]).regions() if summary is not None else {}
                return own, False
            if current is not _ABSENT and current == summary:
                return self.regions, False
            old = self.regions
            self.regions = self._index()
            return self.regions, self.regions != old

    def close(self, path: str) -> bool:
        """The buffer is closed: the file on disk counts again. True when the index changed."""
        with self._lock:
            if path not in self.overlay:
                return False
            del self.overlay[path]
            if not self.ready:
                return False
            self.disk[path] = _summarize_file(path, self.settings_for(path)) if os.path.exists(path) else None
            old = self.regions
            self.regions = self._index()
            return self.regions != old

    def file_changed(self, path: str) -> bool:
        """A file changed on disk (saved by another program, created, deleted)."""
        with self._lock:
            if not self.ready:
                return False
            if os.path.exists(path):
                if path not in self.disk:
                    self.files.append(path)
                self.disk[path] = _summarize_file(path, self.settings_for(path))
            else:
                self.disk.pop(path, None)
                if path in self.files:
                    self.files.remove(path)
            if path in self.overlay:
                return False  # the buffer wins while it is open
            old = self.regions
            self.regions = self._index()
            return self.regions != old

    def digests(self, regions: dict[str, RegionInfo]):
        """cache_validity.RegionDigests of `regions`, kept while the index stays the same."""
        from ..cache_validity import RegionDigests

        if self._digests is None or self._digests[0] is not regions:
            self._digests = (regions, RegionDigests(regions))
        return self._digests[1]

    def contains(self, path: str) -> bool:
        return self.root is not None and (path == self.root or path.startswith(self.root.rstrip(os.sep) + os.sep))


_ABSENT = object()


def _summarize_file(path: str, settings: Settings) -> Optional[ModuleSummary]:
    from ..engine import parse_file
    from ..source import source_for

    try:
        with open(path, "rb") as fh:
            data = fh.read()
        return parse_file(source_for(path, data), settings).summary
    except (OSError, ValueError):
        return None
