"""Run the lint pipeline over many files: worker processes, the results cache, and the
cross-file region index between the two passes.

  pass 1 (workers)  read, hash, parse, summarize, and run every rule against the
                    regions this file alone implies; send back the summary and the
                    findings (never the source or the tree)
  parent            ProjectIndex(all summaries).regions()
  pass 2 (workers)  re-lint only the files whose findings were computed from region
                    facts that the whole-run index answers differently

A file's findings depend on its bytes, its settings, the region facts its rules looked
at (cache_validity.TrackedRegionView records them: its own module's regions, single defs looked up by
name, or all of them) and the bytes of other files they read. `used` keeps the digest
of each region fact a result was computed from, so the parent can tell, per file,
whether a result, fresh from pass 1 or from the cache, still holds. In a typical
project few files hold or reach a region, so almost every file is parsed once.
"""
from __future__ import annotations

import gc
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

from . import cache as cache_mod
from .analysis.project import Sources
from .cache_validity import RegionDigests, TrackedRegionView, still_holds
from .engine import FileResult, enabled_codes, parse_file, project_for, run_rules
from .model import Finding
from .source import SourceFile

# The cyclic GC is off while linting: ASTs with parent links and the facts caches make
# every collection walk big live trees (gen-2 sweeps cost ~35% of a cold run's CPU).
# Garbage cycles are collected by hand once this many tracked objects have piled up
# (~175 MB resident per worker on corpus M; default GC: ~80 MB but 1.5x the CPU).
GC_EVERY = 500_000
MIN_PARALLEL_FILES = 8  # fewer than this: lint in-process (a pool costs more than it saves)


@dataclass
class Task:
    path: str
    settings: int  # index into the run's settings table
    codes: tuple[str, ...]
    data: Optional[bytes] = None  # only for stdin; workers read files themselves
    expect: Optional[str] = None  # pass 2: the digest pass 1 saw


@dataclass
class Done:
    """A worker's answer for one file: picklable, small (no source, no tree)."""

    path: str
    digest: Optional[str] = None
    signature: Optional[tuple] = None  # stat signature, when safe to trust later
    summary: Optional[bytes] = None  # the pickled ModuleSummary (None: the file does not
    # parse); unpickled in the parent only when the region index must be rebuilt
    findings: list[Finding] = field(default_factory=list)
    used: dict[tuple, str] = field(default_factory=dict)  # region fact -> its digest
    deps: tuple = ()  # ((path, digest), ...) of other files the rules read
    error: Optional[str] = None
    changed: bool = False  # pass 2 read other bytes than pass 1
    trusted: bool = True  # the summary was made by this run (False: read from the cache)


# -- the worker side -----------------------------------------------------------------
_STATE: dict = {}


def _init(settings_table, selection, regions, debug, worker=True) -> None:
    if worker:  # a pool process: lint only, so GC by hand (see GC_EVERY)
        gc.disable()
    _STATE.update(settings=settings_table, selection=selection, regions=regions, debug=debug, sources=Sources())
    _STATE["digests"] = RegionDigests(regions) if regions is not None else None


def _file_digest(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as fh:
            return cache_mod.digest(fh.read())
    except OSError:
        return None


def work(task: Task) -> Done:
    settings = _STATE["settings"][task.settings]
    selection = _STATE["selection"]
    done = Done(task.path)
    try:
        signature = None
        if task.data is None:
            read_at = cache_mod.now_ns()
            with open(task.path, "rb") as fh:
                st = os.fstat(fh.fileno())
                data = fh.read()
            signature = cache_mod.trusted_signature(st, read_at)
        else:
            data = task.data
        done.digest = cache_mod.digest(data)
        done.signature = signature
        if task.expect is not None and task.expect != done.digest:
            done.changed = True
        item = parse_file(SourceFile(task.path, data), settings)
        done.summary = _blob(item.summary)
        if _STATE["regions"] is not None:  # pass 2: the run's index
            regions = _STATE["regions"]
        else:  # pass 1: what this file alone implies
            from .analysis.regions import ProjectIndex

            regions = ProjectIndex([item.summary]).regions() if item.summary is not None else {}
        tracked = TrackedRegionView(regions)
        project = project_for(settings, tracked, selection, _STATE["sources"])
        done.findings = run_rules(item, project, task.codes)
        digests = _STATE["digests"] or RegionDigests(regions)
        done.used = {token: digests(token) for token in tracked.used()}
        deps = []
        for path, other in sorted(project.read.items()):
            if other is not None and getattr(other, "source", None) is not None:
                deps.append((path, cache_mod.digest(other.source.data)))
            else:
                deps.append((path, _file_digest(path)))
        done.deps = tuple(deps)
    except MemoryError:
        done.error = "internal error: out of memory while linting this file"
    except OSError as exc:
        done.error = f"cannot read: {exc.strerror or exc}"
    except Exception as exc:
        if _STATE.get("debug"):
            raise
        done.error = f"internal error while linting: {type(exc).__name__}: {exc} (set COMPILE_LINT_DEBUG=1 for a traceback, and please report it)"
    if gc.get_count()[0] > GC_EVERY:
        gc.collect()
    return done


# -- the parent side -----------------------------------------------------------------
def _executor(jobs: int, initargs):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method), initializer=_init, initargs=initargs)


def _serial(tasks, initargs):
    _init(*initargs, worker=False)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for task in tasks:
            yield work(task)
    finally:
        _STATE.clear()
        if enabled:
            gc.enable()


def _map(tasks: list[Task], jobs: int, initargs, stats: dict, name: str):
    """Yield Done for every task, in worker processes when it pays."""
    if not tasks:
        return
    if jobs <= 1 or len(tasks) < MIN_PARALLEL_FILES:
        yield from _serial(tasks, initargs)
        return
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    stats[f"{name}_workers"] = jobs
    gc.freeze()  # forked workers: no copy-on-write of the parent's objects by the GC
    executor = _executor(jobs, initargs)
    pending = {}
    queue = list(reversed(tasks))
    task = None
    try:
        # keep a few tasks per worker in flight: balance without a future per file
        while queue or pending:
            while queue and len(pending) < jobs * 4:
                task = queue.pop()
                pending[executor.submit(work, task)] = task
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                task = pending.pop(future)
                done = future.result()
                task = None
                yield done
    except BrokenProcessPool:
        # a worker died (killed, out of memory): finish here, one file at a time
        stats[f"{name}_broken_pool"] = True
        rest = ([task] if task is not None else []) + list(pending.values()) + list(reversed(queue))
        pending.clear()
        yield from _serial(rest, initargs)
    finally:
        for future in pending:
            future.cancel()
        executor.shutdown(wait=True, cancel_futures=True)
        gc.unfreeze()


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def lint_files(linter, paths: list[str], stdin: Optional[tuple[str, bytes]] = None) -> list[FileResult]:
    from .analysis.names import module_name_for
    from .analysis.regions import ProjectIndex

    t0 = time.perf_counter()
    jobs = linter.jobs if linter.jobs else default_jobs()
    store = linter.cache
    debug = bool(os.environ.get("COMPILE_LINT_DEBUG"))
    stats = linter.stats = {"files": len(paths) + (1 if stdin else 0), "pass1": 0, "pass2": 0, "cached": 0, "hashed": 0}
    inputs = [(p, None) for p in paths] + ([stdin] if stdin else [])

    # settings, rule codes and the cache keys that depend on them, per file
    table: list = []
    index_of: dict[int, int] = {}
    codes_memo: dict = {}
    plan: dict[str, dict] = {}
    for path, data in inputs:
        settings = linter.settings_for(path)
        sid = index_of.get(id(settings))
        if sid is None:
            sid = index_of[id(settings)] = len(table)
            table.append(settings)
        ignored = frozenset(settings.ignored_for(path)) if settings.per_file_ignores else frozenset()
        ck = (sid, ignored)
        if ck not in codes_memo:
            codes = tuple(sorted(enabled_codes(settings, linter.selection, path)))
            codes_memo[ck] = (codes, cache_mod.key(cache_mod.tool_fingerprint(), repr(settings), codes, linter.selection.target_torch))
        codes, settings_key = codes_memo[ck]
        plan[path] = {"sid": sid, "codes": codes, "skey": settings_key, "data": data}

    def summary_key(path: str, dig: Optional[str]) -> str:
        module, is_package = module_name_for(path)
        settings = table[plan[path]["sid"]]
        return cache_mod.key(dig, module, is_package, settings.compile_wrappers, settings.trace_wrappers)

    # what the cache still knows
    results: dict[str, FileResult] = {}
    done_of: dict[str, Done] = {}
    entries: dict[str, dict] = {}
    digest_of: dict[str, str] = {}
    stale: set[str] = set()  # cached summaries whose findings must be recomputed
    fresh: set[str] = set()  # results computed in this run
    if store is not None:
        for path, data in inputs:
            if data is not None:
                continue  # stdin is never cached
            entry = store.load(path)
            if entry is None:
                continue
            try:
                st = os.stat(path)
            except OSError:
                continue
            if entry.get("signature") is not None and cache_mod.stat_signature(st) == entry["signature"]:
                dig = entry["digest"]
            else:
                read_at = cache_mod.now_ns()
                dig = _file_digest(path)
                stats["hashed"] += 1
                if dig is None:
                    continue
                signature = cache_mod.trusted_signature(st, read_at)
                if dig == entry["digest"] and signature is not None:  # touched, not changed
                    entry = dict(entry, signature=signature, dirty=True)
            if dig != entry["digest"]:
                continue
            if entry.get("summary_key") != summary_key(path, dig):
                continue
            digest_of[path] = dig
            entries[path] = entry
            done_of[path] = Done(path, dig, entry.get("signature"), entry.get("summary_blob"),
                                 list(entry.get("findings") or ()), dict(entry.get("used") or {}),
                                 tuple(entry.get("deps") or ()), trusted=False)
            if entry.get("settings_key") != plan[path]["skey"]:
                stale.add(path)  # summary still good; findings need pass 2

    # pass 1: every file the cache could not summarize
    first = [
        Task(path, plan[path]["sid"], plan[path]["codes"], data)
        for path, data in inputs
        if path not in done_of
    ]
    first.sort(key=lambda t: -_size(t.path) if t.data is None else 0)  # big files first: better balance
    for done in _map(first, jobs, (table, linter.selection, None, debug), stats, "pass1"):
        stats["pass1"] += 1
        if done.error:
            results[done.path] = FileResult(done.path, error=done.error)
            continue
        done_of[done.path] = done
        digest_of[done.path] = done.digest
        fresh.add(done.path)

    # the region index across the whole run
    t1 = time.perf_counter()
    order = [p for p, _ in inputs if p in done_of]
    run_key = None
    regions = None
    if store is not None and not stdin:
        # the index is a pure function of the run's summaries, in order: cache it too
        # keyed on what the summaries say, not on the bytes: an edit that leaves a
        # file's summary alone (most edits inside a body) keeps the index
        run_key = cache_mod.key([(p, cache_mod.digest(done_of[p].summary) if done_of[p].summary else None) for p in order])
        regions = store.load_regions(run_key)
        stats["index_cached"] = regions is not None
    if regions is None:
        decoded = {p: _summary(done_of[p]) for p in order}
        broken = [p for p, obj in decoded.items() if obj is False]
        if broken:  # a cached summary that does not load: lint those files afresh
            redo = [Task(p, plan[p]["sid"], plan[p]["codes"]) for p in broken]
            for done in _serial(redo, (table, linter.selection, None, debug)):
                stats["pass1"] += 1
                entries.pop(done.path, None)
                if done.error:
                    results[done.path] = FileResult(done.path, error=done.error)
                    done_of.pop(done.path, None)
                    continue
                done_of[done.path], digest_of[done.path] = done, done.digest
                decoded[done.path] = _summary(done)
                fresh.add(done.path)
            order = [p for p in order if p in done_of]
        regions = ProjectIndex(decoded[p] for p in order if decoded[p]).regions()
        if run_key is not None:
            store.store_regions(run_key, regions)
    linter.regions = regions
    stats["index_s"] = round(time.perf_counter() - t1, 3)
    digests = RegionDigests(linter.regions)

    # pass 2: results computed from region facts (or files) that are not the run's
    outside: dict[str, Optional[str]] = {}

    def current_digest(path: str) -> Optional[str]:
        if path in digest_of:
            return digest_of[path]
        if path not in outside:
            outside[path] = _file_digest(path)
        return outside[path]

    def holds(done: Done) -> bool:
        return still_holds(done.used, done.deps, digests, current_digest)

    second = []
    for path, data in inputs:
        done = done_of.get(path)
        if done is None:
            continue
        if path not in stale and holds(done):
            if path in entries:
                stats["cached"] += 1
            continue
        second.append(Task(path, plan[path]["sid"], plan[path]["codes"], data, expect=done.digest))
    if second:
        for done in _map(second, jobs, (table, linter.selection, linter.regions, debug), stats, "pass2"):
            stats["pass2"] += 1
            if done.error:
                results[done.path] = FileResult(done.path, error=done.error)
                done_of.pop(done.path, None)
                continue
            old = done_of[done.path]
            done.summary, done.trusted = old.summary, old.trusted  # the index was built from these
            done_of[done.path] = done
            if done.changed:  # edited during the run: report, but do not cache
                fresh.discard(done.path)
                entries.pop(done.path, None)
            else:
                fresh.add(done.path)

    # write back what is new
    if store is not None:
        for path, data in inputs:
            done = done_of.get(path)
            if data is not None or done is None:
                continue
            if path not in fresh and not (path in entries and entries[path].get("dirty")):
                continue
            store.store(path, {
                "digest": done.digest,
                "signature": done.signature,
                "summary_key": summary_key(path, done.digest),
                "summary_blob": done.summary,
                "settings_key": plan[path]["skey"],
                "findings": done.findings,
                "used": done.used,
                "deps": done.deps,
            })
        stats["written"] = store.written

    for path, done in done_of.items():
        if path not in results:
            results[path] = FileResult(path, done.findings)
    stats["wall_s"] = round(time.perf_counter() - t0, 3)
    _write_stats(stats)
    return [results[p] for p, _ in inputs if p in results]


def _blob(summary) -> Optional[bytes]:
    if summary is None:
        return None
    import pickle

    return pickle.dumps(summary, protocol=pickle.HIGHEST_PROTOCOL)


def _summary(done: Done):
    """The file's ModuleSummary, None for a file that does not parse, False when a
    cached one does not load (only compile_lint's own data classes are allowed)."""
    if done.summary is None:
        return None
    if done.trusted:
        import pickle

        return pickle.loads(done.summary)
    try:
        return cache_mod.loads(done.summary)
    except Exception:
        return False


def _write_stats(stats: dict) -> None:
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
