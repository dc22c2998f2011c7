"""The lint pipeline over a set of files, owned here; the executor (parallel.py) only
runs jobs.

  plan       settings, enabled rules and cache keys per file
  cache      what the results cache still knows (cache_validity.py says what holds)
  pass 1     every file the cache could not answer: read, hash, parse, summarize and
             run every rule against the regions this file alone implies
             (lint_file.lint_one, in worker processes); files of the project outside
             the run (`context`) are only summarized
  index      ProjectIndex(all summaries).regions(): the cross-file region index
  pass 2     re-lint only the files whose results were computed from region facts (or
             other files) that the whole-run index answers differently
  write back new results to the cache; report (cli.py) or fix (fixer.py)

In a typical project few files hold or reach a region, so almost every file is parsed
once. With `context` (a partial run: pre-commit's changed files, an editor's buffer),
the region index covers the whole project while only the given files are reported.

A warm run whose files are all answered by the cache imports none of the linting
machinery (lint_file.py, the rules, the analysis): the imports are most of its time.
The machinery is imported where a file is linted, parsed or summarized.
"""
from __future__ import annotations

import gc
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Optional

from . import cache as cache_mod
from .cache_validity import RegionDigests, still_holds
from .config import Settings
from .parallel import default_jobs, run_jobs

if TYPE_CHECKING:
    from .analysis.reach.regions import RegionInfo
    from .lint_file import Done, ParsedFile, Task
    from .model import Finding

__all__ = ["FileResult", "Linter", "Selection", "enabled_codes", "parse_file", "read_source", "run_rules"]
_FROM_LINT_FILE = ("parse_file", "read_source", "run_rules")


def __getattr__(name: str):
    """parse_file, read_source and run_rules, from lint_file.py when first asked for."""
    if name in _FROM_LINT_FILE:
        from . import lint_file

        value = globals()[name] = getattr(lint_file, name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    error: Optional[str] = None  # the file could not be read
    error_kind: Optional[str] = None  # "io" (not readable), "format" (not a notebook), "internal"
    digest: Optional[str] = None  # of the bytes the findings are of (fix checks it is still those)


def enabled_codes(settings: Settings, cli: "Selection", path: str) -> frozenset[str]:
    from .rules import select_codes

    select = cli.select if cli.select is not None else settings.select
    codes = select_codes(select, tuple(settings.extend_select) + tuple(cli.extend_select), tuple(settings.ignore) + tuple(cli.ignore))
    return frozenset(codes - settings.ignored_for(path))


@dataclass(frozen=True)
class Selection:
    """Rule selection given on the command line (overrides the config's `select`)."""

    select: Optional[tuple[str, ...]] = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    target_torch: Optional[str] = None


class Linter:
    """Lints a set of files as one project."""

    def __init__(
        self,
        settings_for: Callable[[str], Settings],
        selection: Selection = Selection(),
        *,
        jobs: int = 1,
        cache=None,
    ):
        self.settings_for = settings_for
        self.selection = selection
        self._regions: Optional[dict[str, RegionInfo]] = {}
        self._regions_loader: Optional[Callable[[], dict]] = None
        self.jobs = jobs  # worker processes; 0 for one per core
        self.cache = cache  # a compile_lint.cache.ResultsCache, or None
        self.stats: dict = {}  # what the last lint() did (files parsed, cached, ...)
        self._sources = None  # other files read while re-linting in this process (fix loop)
        self.warnings: list[str] = []  # for the user, once per run (stale recorded regions)
        self.discovery: dict = {}  # what finding the files did, for the stats (cli.py)
        # the folders' states as the walk that found the files saw them (cli.py), taken
        # before anything was derived from them; None: this run looks at the folders itself
        self.folder_states = None
        # compute the edits of each finding's fix (a report that shows them, `fix`), here
        # after the passes, for the results that do not have them yet; they are cached with
        # the findings. Here, not in the workers: libcst's import (~0.5 s, most of the cost
        # for a few files) is paid once, and only when some finding has a fix.
        self.edits = False
        self.defer_stats = False  # the caller writes COMPILE_LINT_STATS (with what it did after)

    @property
    def sources(self):
        """The other files read while re-linting in this process (analysis.project.context.Sources)."""
        if self._sources is None:
            from .analysis.project.context import Sources

            self._sources = Sources()
        return self._sources

    @property
    def regions(self) -> dict[str, RegionInfo]:
        """The last run's region index (loaded on first use when that run needed none)."""
        if self._regions_loader is not None:
            self._regions, self._regions_loader = self._regions_loader(), None
        return self._regions

    @regions.setter
    def regions(self, value: dict[str, RegionInfo]) -> None:
        self._regions, self._regions_loader = value, None

    def lint(self, paths: list[str], stdin: Optional[tuple[str, bytes]] = None, context: Iterable[str] = ()) -> list[FileResult]:
        """Findings for `paths` (and stdin), with the region index built over them and
        the project files `context` (summarized only, never reported)."""
        return _Run(self, paths, stdin, context).run()

    def _codes(self, path: str) -> frozenset[str]:
        return enabled_codes(self.settings_for(path), self.selection, path)

    def lint_parsed(self, item: ParsedFile, regions: dict[str, RegionInfo]) -> list[Finding]:
        """Every enabled rule on one parsed file against a region index."""
        from .lint_file import project_for, run_rules

        settings = self.settings_for(item.source.path)
        project = project_for(settings, regions, self.selection.target_torch, self.sources)
        return run_rules(item, project, self._codes(item.source.path))

    def relint(self, path: str, data: bytes, regions: dict[str, RegionInfo]) -> tuple[ParsedFile, list[Finding]]:
        """Lint new contents of one file against an existing region index (fix loop)."""
        from .lint_file import parse_file
        from .source import SourceFile

        item = parse_file(SourceFile(path, data), self.settings_for(path))  # `data` is code (a notebook's too)
        return item, self.lint_parsed(item, regions)


class Cached:
    """A file's result as the cache's manifest holds it: the parts of a lint_file.Done
    that the passes and the write-back read. Its summary is loaded only when the region
    index must be rebuilt (`lazy`), and it never was made by this run (`trusted`)."""

    __slots__ = ("path", "digest", "signature", "summary", "findings", "used", "deps", "error", "changed", "trusted",
                 "lazy", "lazy_summary_digest")

    def __init__(self, path: str, digest: str, signature: Optional[tuple], findings: Optional[list], used: dict,
                 deps: tuple, summary_digest: Optional[str]):
        self.path, self.digest, self.signature = path, digest, signature
        self.summary: Optional[bytes] = None
        self.findings, self.used, self.deps = findings, used, deps
        self.error: Optional[str] = None
        self.changed = False
        self.trusted = False
        self.lazy, self.lazy_summary_digest = True, summary_digest

    def summary_digest(self) -> Optional[str]:
        if self.lazy:
            return self.lazy_summary_digest
        return cache_mod.digest(self.summary) if self.summary is not None else None


def _absolute(path: str) -> str:
    """os.path.abspath(path), without its work for a path that is absolute and normal
    already (every path a folder walk finds)."""
    if (os.sep == "/" and path[:1] == "/" and "//" not in path and "/./" not in path and "/../" not in path
            and not path.endswith(("/", "/.", "/.."))):
        return path
    return os.path.abspath(path)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class _Run:
    """One lint() call: the plan and the state between its stages."""

    def __init__(self, linter: Linter, paths: list[str], stdin: Optional[tuple[str, bytes]], context: Iterable[str]):
        self.linter = linter
        self.stdin = stdin
        self.inputs = [(p, None) for p in paths] + ([stdin] if stdin else [])
        reported = {p for p, _ in self.inputs}
        self.context = [p for p in dict.fromkeys(context) if p not in reported]
        self.jobs = linter.jobs if linter.jobs else default_jobs()
        self.store = linter.cache
        self.debug = bool(os.environ.get("COMPILE_LINT_DEBUG"))
        self.stats = linter.stats = {
            "files": len(self.inputs), "context": len(self.context), "pass1": 0, "pass2": 0, "cached": 0, "hashed": 0,
            "modules_derived": 0,
            **linter.discovery,
        }
        self.results: dict[str, FileResult] = {}
        self.done_of: dict[str, Done] = {}
        self.digest_of: dict[str, str] = {}
        self.stale: set[str] = set()  # cached summaries whose findings must be recomputed
        self.fresh: set[str] = set()  # results computed in this run
        self.table: list[Settings] = []
        self.plan: dict[str, dict] = {}
        self.manifest: dict = {}  # the cache's records, as read
        self.records: dict[str, dict] = {}  # path -> its record, where the cache answered
        self.dirty: set[str] = set()  # records still good that this run learned more about
        self.where: dict[str, Optional[str]] = {}  # path -> FolderStates.chain of its folder
        self.run_key: Optional[str] = None  # the region index's key
        self.index_clean = False  # the index is one a run may record (no stale declarations to warn about)
        # path -> (Done, its ModuleSummary) for a summary this run made, unpickled as the
        # worker's answer arrives: pass 1's workers are still busy then, where unpickling
        # them all after the pass was serial time (about 1 s on corpus M)
        self.decoded: dict = {}
        self.freezing = False  # run(): whether this run may gc.freeze() what it keeps

    # -- plan ------------------------------------------------------------------------
    def make_plan(self) -> None:
        """Settings, rule codes and the cache keys that depend on them, per file."""
        index_of: dict[int, int] = {}
        codes_memo: dict = {}
        by_folder: dict[str, Settings] = {}
        selection = self.linter.selection
        for path, data in self.inputs + [(p, None) for p in self.context]:
            if data is None:  # a file: its settings are its folder's (config.py), found once per folder
                folder = os.path.dirname(path)
                settings = by_folder.get(folder)
                if settings is None:
                    settings = by_folder[folder] = self.linter.settings_for(path)
            else:
                settings = self.linter.settings_for(path)
            sid = index_of.get(id(settings))
            if sid is None:
                sid = index_of[id(settings)] = len(self.table)
                self.table.append(settings)
            ignored = frozenset(settings.ignored_for(path)) if settings.per_file_ignores else frozenset()
            ck = (sid, ignored)
            if ck not in codes_memo:
                codes = self.enabled_codes(settings, path)
                codes_memo[ck] = (codes, cache_mod.key(cache_mod.tool_fingerprint(), repr(settings), codes, selection.target_torch))
            codes, settings_key = codes_memo[ck]
            self.plan[path] = {"sid": sid, "codes": codes, "skey": settings_key, "data": data, "abs": _absolute(path)}

    def enabled_codes(self, settings: Settings, path: str) -> tuple[str, ...]:
        """enabled_codes(), sorted; remembered by the cache for this build of the tool,
        so a warm run need not load every rule to learn their codes."""
        store = self.store
        if store is None or settings.per_file_ignores:
            return tuple(sorted(enabled_codes(settings, self.linter.selection, path)))
        selection = self.linter.selection
        select = selection.select if selection.select is not None else settings.select
        asked = cache_mod.key(tuple(select), tuple(settings.extend_select) + tuple(selection.extend_select),
                              tuple(settings.ignore) + tuple(selection.ignore))
        known = store.load_codes()
        if asked not in known:
            known[asked] = tuple(sorted(enabled_codes(settings, selection, path)))
            store.store_codes(known)
        return known[asked]

    def summary_key(self, path: str, dig: Optional[str], module: tuple) -> str:
        settings = self.table[self.plan[path]["sid"]]
        return cache_mod.key(dig, module[0], module[1], settings.compile_wrappers, settings.trace_wrappers)

    def module_of(self, path: str) -> tuple:
        """(module name, is package) of `path`: the record's while no folder from the
        file's up to / has changed since it was derived (FolderStates), else derived."""
        record = self.records.get(path) or self.manifest.get(self.plan[path]["abs"])
        where = self.where.get(path)
        if record is not None and where is not None and record.get("where") == where and isinstance(record.get("module"), tuple):
            return record["module"]
        from .analysis.semantic.names import module_name_for

        self.stats["modules_derived"] += 1
        return module_name_for(path)

    def task(self, path: str, data=None, **kw) -> Task:
        from .lint_file import Task

        return Task(path, self.plan[path]["sid"], self.plan[path]["codes"], data, **kw)

    def job_context(self, regions: Optional[dict]):
        from .lint_file import JobContext

        return JobContext(self.table, self.linter.selection.target_torch, regions, self.debug,
                          timed=bool(os.environ.get("COMPILE_LINT_STATS")))

    def run_tasks(self, tasks: list[Task], regions: Optional[dict], name: str):
        timings = self.stats.setdefault(f"{name}_rule_cpu_s", {})
        if not tasks:
            return
        from .lint_file import init_worker, lint_one

        for done in run_jobs(lint_one, tasks, self.jobs, init_worker, (self.job_context(regions),), self.stats, name):
            for code, seconds in (done.rule_s or {}).items():
                timings[code] = round(timings.get(code, 0.0) + seconds, 3)
            yield done

    # -- cache -----------------------------------------------------------------------
    def load_cached(self) -> None:
        """Take every file whose record still holds from the cache's manifest (one read):
        its digest, summary digest and findings; the summaries themselves are loaded only
        if the region index must be rebuilt (build_index)."""
        store, stats = self.store, self.stats
        if store is None:
            return
        from .cache_validity import FolderStates

        folders = self.linter.folder_states or FolderStates()
        self.manifest = store.load_manifest()
        reported = {p for p, _ in self.inputs}
        # (locals: this loop runs once per file of the project, 2,101 times on corpus M)
        plan, manifest, where_of, table = self.plan, self.manifest, self.where, self.table
        chain, dirname, stat, stat_signature = folders.chain, os.path.dirname, os.stat, cache_mod.stat_signature
        for path, data in self.inputs + [(p, None) for p in self.context]:
            if data is not None:
                continue  # stdin is never cached
            item = plan[path]
            absolute = item["abs"]
            # before anything is derived from the folders: a change after this is seen next run
            where = where_of[path] = chain(dirname(absolute))
            record = manifest.get(absolute)
            if not isinstance(record, dict) or not isinstance(record.get("digest"), str):
                continue
            try:
                st = stat(path)
            except OSError:
                continue
            if record.get("signature") is not None and stat_signature(st) == record["signature"]:
                dig = record["digest"]
            else:
                read_at = cache_mod.now_ns()
                dig = cache_mod.file_digest(path)
                stats["hashed"] += 1
                if dig != record["digest"]:
                    continue
                signature = cache_mod.trusted_signature(st, read_at)
                if signature is not None:  # touched, not changed
                    record = dict(record, signature=signature)
                    self.dirty.add(path)
            module = record.get("module")
            if where is None or record.get("where") != where or not isinstance(module, tuple):
                module = self.module_of(path)  # (the record's, as above, or derived)
            settings = table[item["sid"]]
            if record.get("summary_key") != cache_mod.key(dig, module[0], module[1], settings.compile_wrappers, settings.trace_wrappers):
                continue  # (the key summary_key() makes)
            if record.get("where") != where or record.get("module") != module:
                record = dict(record, where=where, module=module)
                self.dirty.add(path)
            self.records[path] = record
            self.digest_of[path] = dig
            findings = record.get("findings")
            # used and deps are only read (a re-lint makes a new result): no copies
            used, deps = record.get("used") or {}, record.get("deps") or ()
            self.done_of[path] = Cached(path, dig, record.get("signature"), list(findings) if findings is not None else None,
                                        used if type(used) is dict else dict(used), deps if type(deps) is tuple else tuple(deps),
                                        record.get("summary_digest"))
            if path in reported and (findings is None or record.get("settings_key") != item["skey"]):
                self.stale.add(path)  # summary still good; findings need pass 2

    # -- pass 1 ----------------------------------------------------------------------
    def pass1(self) -> None:
        first = [self.task(path, data) for path, data in self.inputs if path not in self.done_of]
        first.sort(key=lambda t: -_size(t.path) if t.data is None else 0)  # big files first: better balance
        first += [self.task(path, summary_only=True) for path in self.context if path not in self.done_of]
        for done in self.run_tasks(first, None, "pass1"):
            self.stats["pass1"] += 1
            self.accept_first(done)

    def accept_first(self, done: Done) -> None:
        if done.error:
            if done.path in self.plan and done.path not in self.context:
                self.results[done.path] = FileResult(done.path, error=done.error, error_kind=done.error_kind)
            self.done_of.pop(done.path, None)
            return
        self.done_of[done.path] = done
        self.digest_of[done.path] = done.digest
        self.fresh.add(done.path)
        if done.trusted and not done.lazy and done.summary is not None:
            from .lint_file import summary_of

            self.decoded[done.path] = (done, summary_of(done))
            if self.freezing:
                # kept until the index is built, and acyclic: out of the hand
                # collections' sweeps (lint_file.HandCollector) of a serial run
                gc.freeze()

    # -- index -----------------------------------------------------------------------
    def build_index(self) -> Optional[dict]:
        """The region index over every file of the run; None when no result of this run
        needs it (then `Linter.regions` builds it on first use)."""
        t1 = time.perf_counter()
        store, done_of = self.store, self.done_of
        # in one order whatever the run (a whole project, or one file of it with the rest
        # as context), so that both build, and cache, the same index
        plan = self.plan
        order = sorted((p for p in plan if p in done_of), key=lambda p: plan[p]["abs"])
        declared = _declarations(self.table, self.plan)
        if store is not None:
            # the index is a pure function of the run's summaries and of the declared/
            # recorded regions: cache it too, keyed on what the summaries say, not on the
            # bytes: an edit that leaves a file's summary alone (most edits inside a body)
            # keeps the index
            self.run_key = cache_mod.key([(plan[p]["abs"], done_of[p].summary_digest()) for p in order], declared.key())
            if self.checked_against_this_index():
                self.index_clean = True  # records name only indexes that were clean
                self.linter._regions_loader = lambda: self.index(order, declared)
                self.stats["index_s"] = round(time.perf_counter() - t1, 3)
                return None
        regions = self.index(order, declared)
        self.stats["index_s"] = round(time.perf_counter() - t1, 3)
        return regions

    def checked_against_this_index(self) -> bool:
        """Whether every reported file's record was last checked against this run's
        index, so that only the files its rules read need checking (pass 2)."""
        for path, data in self.inputs:
            record = self.records.get(path)
            if data is not None or path in self.fresh or path in self.stale:
                return False
            if path in self.done_of and (record is None or record.get("index") != self.run_key):
                return False
        return True

    def index(self, order: list[str], declared) -> dict:
        """The index: from the cache, else built from the summaries."""
        from .analysis.reach.regions import ProjectIndex
        from .lint_file import init_worker, lint_one, summary_of

        store, stats, done_of = self.store, self.stats, self.done_of
        run_key = self.run_key
        regions = None
        if store is not None:
            regions = store.load_regions(run_key)
            stats["index_cached"] = regions is not None
            self.index_clean = regions is not None
        if regions is None:
            for p in order:
                done = done_of[p]
                if done.lazy:  # its summary is needed now: from its cache entry
                    found = store.load_summary(p, self.records[p]["summary_key"])
                    blob = found[0] if found is not None else b"not loaded"
                    if found is not None and (cache_mod.digest(blob) if blob is not None else None) != done.lazy_summary_digest:
                        blob = b"not loaded"
                    done.summary, done.lazy = blob, False
            known = self.decoded
            decoded = {p: known[p][1] if p in known and known[p][0] is done_of[p] else summary_of(done_of[p]) for p in order}
            known.clear()  # each index gets summaries of its own (it may extend them)
            broken = [p for p, obj in decoded.items() if obj is False]
            if broken:  # a cached summary that does not load: read those files afresh
                redo = [self.task(p, summary_only=p in self.context) for p in broken]
                for done in run_jobs(lint_one, redo, 1, init_worker, (self.job_context(None),), stats, "redo"):
                    stats["pass1"] += 1
                    self.records.pop(done.path, None)
                    self.accept_first(done)
                    if not done.error:
                        decoded[done.path] = summary_of(done)
                order = [p for p in order if p in done_of]
            index = ProjectIndex((decoded[p] for p in order if decoded[p]), declared.regions, declared.configured)
            regions = index.regions()
            problems = index.resolved_declared
            if problems.unknown:
                from .config import ConfigError

                bad = problems.unknown[0]
                raise ConfigError(f"{bad.where}: {bad.kind!r}: {bad.target!r} names no class or function of this project")
            for entry in problems.stale:
                path, _, qual = entry.target.partition(":")
                message = (f"{_shown(entry.where)}: `{_shown(path)}:{qual}` was recorded but is no longer defined there "
                           "(stale entry: re-run `compile-lint record`)")
                if message not in self.linter.warnings:
                    self.linter.warnings.append(message)
            self.index_clean = not problems.stale  # stale entries: warn again next run
            if run_key is not None and self.index_clean:
                store.store_regions(run_key, regions)
        return regions

    # -- pass 2 ----------------------------------------------------------------------
    def pass2(self, regions: Optional[dict]) -> None:
        digests = RegionDigests(regions) if regions is not None else None  # None: see build_index
        run_key = self.run_key
        outside: dict[str, Optional[str]] = {}

        def current_digest(path: str) -> Optional[str]:
            if path in self.digest_of:
                return self.digest_of[path]
            if path not in outside:
                outside[path] = cache_mod.file_digest(path)
            return outside[path]

        second = []
        checked: dict = {}  # dependency -> whether it holds, for all files of this pass
        for path, data in self.inputs:
            done = self.done_of.get(path)
            if done is None:
                continue
            # a record last checked against this very index: only the files it read can differ
            same_index = run_key is not None and path in self.records and self.records[path].get("index") == run_key
            if digests is None and not same_index:  # (build_index said no file needs the index)
                regions = self.linter.regions
                digests = RegionDigests(regions)
            if path not in self.stale and still_holds(done.used, done.deps, None if same_index else digests, current_digest, checked):
                if path in self.records:
                    self.stats["cached"] += 1
                    if not same_index:
                        self.dirty.add(path)  # record the index it holds under
                continue
            task = self.task(path, data, expect=done.digest)
            if path not in self.stale and done.findings is not None and still_holds({}, done.deps, None, current_digest, checked):
                # only the index differs: the rules that cannot read it keep their findings
                from .rules import region_reading_codes

                kept = tuple(c for c in task.codes if c not in region_reading_codes())
                task.codes, task.kept = tuple(c for c in task.codes if c not in kept), kept
            second.append(task)
        kept_of = {task.path: task.kept for task in second}
        for done in self.run_tasks(second, regions, "pass2"):
            self.stats["pass2"] += 1
            if done.error:
                self.results[done.path] = FileResult(done.path, error=done.error, error_kind=done.error_kind)
                self.done_of.pop(done.path, None)
                continue
            old = self.done_of[done.path]
            # the index was built from these
            done.summary, done.trusted, done.lazy, done.lazy_summary_digest = old.summary, old.trusted, old.lazy, old.lazy_summary_digest
            if kept_of.get(done.path) and not done.changed:  # the rest holds from before
                from .model import Finding

                kept = set(kept_of[done.path])
                done.findings = sorted([f for f in old.findings if f.code in kept] + done.findings, key=Finding.sort_key)
                done.deps = tuple(sorted(set(old.deps) | set(done.deps), key=lambda dep: (dep[0], dep[1] or "")))
            self.done_of[done.path] = done
            if done.changed:  # edited during the run: report, but do not cache
                self.fresh.discard(done.path)
                self.records.pop(done.path, None)
                self.dirty.discard(done.path)
            else:
                self.fresh.add(done.path)

    # -- fix edits ----------------------------------------------------------------------
    def fill_cached_edits(self) -> None:
        """The edits of the fixes of results that have none yet (linted by this run, or
        cached by a run that did not ask for edits): computed once, then cached with the
        findings (write_back)."""
        started, cpu = time.perf_counter(), time.process_time()
        filled = 0
        for path, data in self.inputs:
            done = self.done_of.get(path)
            if done is None or not done.findings or not any(f.fix is not None and f.fix.edits is None for f in done.findings):
                continue
            from .fixer import fill_edits
            from .source import source_for

            try:
                if data is None:
                    with open(path, "rb") as fh:
                        data = fh.read()
                if cache_mod.digest(data) != done.digest:
                    continue  # edited since: `fix` lints it again; a report shows no edits
                source = source_for(path, data)
            except (OSError, ValueError):
                continue
            fill_edits(path, source.data, done.findings, source.parse() if source.tree is not None else None)
            filled += 1
            if path in self.records:
                self.dirty.add(path)  # its record, now with the edits
        self.stats["edits_filled"] = filled
        self.stats["edits_fill_s"] = round(time.perf_counter() - started, 3)
        self.stats["edits_cpu_s"] = round(self.stats.get("edits_cpu_s", 0.0) + time.process_time() - cpu, 3)

    # -- write back ------------------------------------------------------------------
    def write_back(self) -> None:
        """New summaries to their files; new and updated records to the manifest."""
        store = self.store
        if store is None:
            return
        reported = {p for p, _ in self.inputs}
        changed = {}
        for path, data in self.inputs + [(p, None) for p in self.context]:
            done = self.done_of.get(path)
            if data is not None or done is None or done.digest is None:
                continue
            if path not in self.fresh and path not in self.dirty:
                continue
            module = self.module_of(path)
            summary_key = self.summary_key(path, done.digest, module)
            if done.trusted and not done.lazy:  # made by this run
                store.store_summary(path, summary_key, done.summary)
            old = self.records.get(path) or {}
            checked = path in reported and done.findings is not None and self.run_key is not None and self.index_clean
            changed[self.plan[path]["abs"]] = {
                "digest": done.digest,
                "signature": done.signature,
                "module": module,
                "where": self.where.get(path),
                "summary_key": summary_key,
                "summary_digest": done.summary_digest(),
                # an input's findings are this run's (stale ones were recomputed); a
                # context file's are as its record had them
                "settings_key": self.plan[path]["skey"] if path in reported else old.get("settings_key"),
                "findings": done.findings,  # None: a context file, only summarized
                "used": done.used,
                "deps": done.deps,
                "index": self.run_key if checked else old.get("index"),
            }
        if changed:
            store.store_manifest(changed, self.manifest)
        self.stats["written"] = store.written

    def run(self) -> list[FileResult]:
        # No cyclic GC while the run's summaries, index and results are alive: each
        # automatic sweep walks all of them (9 s of a cold corpus M run) and finds next
        # to nothing, since the analysis leaves no cycles behind (walk_with_parents,
        # Project.release). The workers pause it too (lint_file.init_worker).
        gc_was_on = gc.isenabled()
        gc.disable()
        # nothing frozen by the caller (the language server freezes its summaries):
        # this run may freeze its own, and thaws them when it ends
        self.freezing = gc.get_freeze_count() == 0
        try:
            return self._run()
        finally:
            if self.freezing:
                gc.unfreeze()
            if gc_was_on:
                gc.enable()

    def _run(self) -> list[FileResult]:
        t0 = time.perf_counter()
        self.make_plan()
        self.load_cached()
        t1, c1 = time.perf_counter(), _cpu()
        self.pass1()
        self.stats["pass1_s"], self.stats["pass1_cpu_s"] = round(time.perf_counter() - t1, 3), round(_cpu() - c1, 3)
        c1 = _cpu()
        regions = self.build_index()
        self.stats["index_cpu_s"] = round(_cpu() - c1, 3)
        if regions is not None:
            self.linter.regions = regions
        t2, c2 = time.perf_counter(), _cpu()
        self.pass2(regions)
        self.stats["pass2_s"], self.stats["pass2_cpu_s"] = round(time.perf_counter() - t2, 3), round(_cpu() - c2, 3)
        if self.linter.edits:
            self.fill_cached_edits()
        self.write_back()
        for path, _ in self.inputs:
            done = self.done_of.get(path)
            if path not in self.results and done is not None:
                self.results[path] = FileResult(path, done.findings or [], digest=done.digest)
        self.stats["wall_s"] = round(time.perf_counter() - t0, 3)
        if not self.linter.defer_stats:
            write_stats(self.stats)
        return [self.results[p] for p, _ in self.inputs if p in self.results]


def _cpu() -> float:
    """CPU seconds of this process and of its finished workers (a pass's pool is shut
    down, its workers reaped, when the pass ends): for COMPILE_LINT_STATS."""
    try:
        import resource
    except ImportError:  # not on Windows
        return time.process_time()
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _shown(path: str) -> str:
    rel = os.path.relpath(path)
    return (path if rel.startswith("..") else rel).replace(os.sep, "/")


def _declarations(table: list, plan: dict):
    """Config-declared and recorded regions for the settings in use (a malformed
    recording is a configuration error)."""
    from .analysis.reach.declared import DeclarationError, declarations_for
    from .config import ConfigError

    first_path: dict[int, str] = {}
    for path, item in plan.items():
        first_path.setdefault(item["sid"], path)
    try:
        return declarations_for(((table[sid], path) for sid, path in sorted(first_path.items())), plan)
    except DeclarationError as exc:
        raise ConfigError(str(exc)) from None


def write_stats(stats: dict) -> None:
    """With COMPILE_LINT_STATS=FILE, append one JSON line about this run (benchmarks)."""
    target = os.environ.get("COMPILE_LINT_STATS")
    if not target:
        return
    import json
    import resource

    stats = dict(stats)
    stats["parent_maxrss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    stats["worker_maxrss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
    try:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(stats) + "\n")
    except OSError:
        pass
