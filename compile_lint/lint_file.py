"""The per-file steps of the pipeline, and the job a worker process runs for one file.

  read + hash -> parse (ast) -> summarize -> rules (within a Project) -> suppression

Every step here is a pure function of (bytes, settings, the region index, the other
files the rules read), so it can run in a worker process and be cached. `lint_one` is
what compile_lint/engine.py hands its executor (compile_lint/parallel.py) per file: it
sends back a small picklable `Done` (never the source or the tree).
"""
from __future__ import annotations

import ast
import gc
import os
import pickle
import time
from dataclasses import dataclass, field
from typing import Iterable, Optional

from . import cache as cache_mod
from . import deep_stack
from .analysis.semantic.facts import ModuleFacts, declared_facts
from .analysis.semantic.names import NameTable, imports_in_walk_order, module_name_for
from .analysis.project.context import Project, RegionView, Sources, TreeShape
from .analysis.reach.regions import ModuleSummary, ProjectIndex, summarize
from .analysis.semantic.walk import walk_by_type
from .cache_validity import RegionDigests, TrackedRegionView, probe_dep
from .config import Settings
from .model import Finding, Position
from .notebook import NotebookError
from .rules import all_rules
from .source import ParseFailure, SourceFile, source_for
from .suppression import filter_suppressed

SYNTAX_ERROR = "CL000"
# The cyclic GC is off while linting. A linted file leaves no reference cycles (parent
# links live in a dict, facts are released after the rules: walk_with_parents,
# Project.release), so its trees and facts are freed as soon as it is done; an
# automatic sweep would only walk the live heap (other files' parsed sources, the
# index) again and again. What cycles are left (small closures of the standard
# library) are collected by hand (HandCollector) once this many tracked objects have
# piled up, in the young generations: the old heap is long-lived and acyclic.
GC_EVERY = 500_000
# A collection that finds less than LOW_YIELD of the young objects unreachable scanned
# caches, not garbage (a pool worker on corpus M: 1,200-4,000 of 500,000 each time, the
# six collections 1.9 s of CPU): the next waits GC_GROWTH times longer, up to
# GC_EVERY_MAX; one that finds more than HIGH_YIELD goes back to GC_EVERY.
LOW_YIELD, HIGH_YIELD = 0.01, 0.10
GC_GROWTH = 4
GC_EVERY_MAX = 8_000_000
# Every FULL_GC_EVERY-th collection is a full one, should a cycle have aged.
FULL_GC_EVERY = 64


class HandCollector:
    """When a process that lints with the cyclic GC off collects by hand: between files,
    once the young generations hold `threshold` tracked objects (see GC_EVERY)."""

    def __init__(self) -> None:
        self.threshold = GC_EVERY
        self.collections = 0

    def due(self) -> bool:
        return gc.get_count()[0] > self.threshold

    def collect(self) -> int:
        """Collect now; the number of unreachable objects found."""
        young = gc.get_count()[0]
        self.collections += 1
        found = gc.collect(2 if self.collections % FULL_GC_EVERY == 0 else 1)
        if found < young * LOW_YIELD:
            self.threshold = min(self.threshold * GC_GROWTH, GC_EVERY_MAX)
        elif found > young * HIGH_YIELD:
            self.threshold = GC_EVERY
        return found


_collector = HandCollector()


@dataclass
class ParsedFile:
    source: SourceFile
    tree: Optional[ast.Module]
    names: Optional[NameTable]
    summary: Optional[ModuleSummary]
    failure: Optional[ParseFailure] = None
    nodes: Optional[list] = None  # every node of `tree` (walk_with_parents)
    parents: Optional[dict] = None  # node -> its parent node
    shape: Optional[TreeShape] = None  # nodes, parents and nodes by type, from the one walk
    context: Optional[object] = None  # regions.SummaryContext, when asked for (incremental.py)


def parse_file(source: SourceFile, settings: Settings, with_summary: bool = True, with_context: bool = False) -> ParsedFile:
    """Parse, walk and name one file; and summarize it for the region index unless
    `with_summary` is false (pass 2 re-lints against the index its summary already made).
    `with_context`: keep what an incremental relint needs of the summary's run."""
    try:
        tree = source.parse()
    except ParseFailure as failure:
        # the index still learns the module's name: a site that names its code says why
        # nothing of it is seen (ProjectIndex.unparsed_reason)
        stub = None
        if with_summary:
            module, _is_package = module_name_for(source.path)
            stub = ModuleSummary(source.path, module, unparsed=f"line {failure.row}: {failure.message.removeprefix('not linted: ')}")
        return ParsedFile(source, None, None, stub, failure)
    module, is_package = module_name_for(source.path)
    nodes, parents, by_type = walk_by_type(tree)
    shape = TreeShape(nodes, parents, by_type, {}, {}, {})
    names = NameTable.build(tree, module, is_package, imports=imports_in_walk_order(by_type, parents))
    if not with_summary:
        return ParsedFile(source, tree, names, None, nodes=nodes, parents=parents, shape=shape)
    context = None
    if with_context:
        from .analysis.reach.regions import summarize_with_context

        summary, context = summarize_with_context(tree, names, source.path, settings.compile_wrappers, settings.trace_wrappers,
                                                   parents)
    else:
        summary = summarize(tree, names, source.path, settings.compile_wrappers, settings.trace_wrappers, parents)
    if b"compile-lint:" in source.data:
        from .analysis.reach.declared import find_markers
        from .analysis.reach.regions import def_qualnames

        summary.declared = find_markers(source.data, tree, def_qualnames(tree), source.path)
    return ParsedFile(source, tree, names, summary, nodes=nodes, parents=parents, shape=shape, context=context)


def read_source(path: str, data: Optional[bytes] = None) -> SourceFile:
    """The source of `path` (a notebook's code cells for .ipynb), read unless `data`."""
    if data is None:
        with open(path, "rb") as fh:
            data = fh.read()
    return source_for(path, data)


def syntax_finding(parsed: ParsedFile) -> Finding:
    failure = parsed.failure
    pos = Position(failure.row, failure.column)
    return Finding(SYNTAX_ERROR, failure.message, parsed.source.path, pos, pos)


def cell_syntax_finding(source: SourceFile, failure) -> Finding:
    """CL000 for a notebook cell that does not parse (the others are linted)."""
    pos = Position(failure.row, failure.column)
    return Finding(SYNTAX_ERROR, failure.message, source.path, pos, pos)


def project_for(settings: Settings, regions, target_torch: Optional[str], sources: Optional[Sources] = None) -> Project:
    """The project handle one file is linted in: `regions` a RegionView (or a dict);
    `target_torch` the command line's version, else the settings'."""
    view = regions if isinstance(regions, RegionView) else RegionView(regions)
    return Project(view, settings, target_torch=target_torch or settings.target_torch_version, sources=sources)


def run_rules(parsed: ParsedFile, project: Project, codes: Iterable[str], timings: Optional[dict] = None,
              raw: Optional[dict] = None) -> list[Finding]:
    """The enabled rules' findings for one parsed file, seen within `project` (its
    region index and other files; `project.read` collects the files the rules read).
    With `timings`, each rule's CPU seconds are added to it by code; with `raw`, each
    rule's findings before suppression are put in it by code."""
    if parsed.failure is not None:
        return [syntax_finding(parsed)] if SYNTAX_ERROR in codes else []
    cell_errors = [cell_syntax_finding(parsed.source, e) for e in parsed.source.syntax_errors] if SYNTAX_ERROR in codes else []
    facts = ModuleFacts(parsed.source, parsed.tree, parsed.names, nodes=parsed.nodes, parents=parsed.parents, project=project,
                        summary=parsed.summary, shape=parsed.shape)
    data = parsed.source.data
    findings: list[Finding] = []
    rules = all_rules()
    present: dict = {}  # token -> whether the file holds it (rules share tokens: `compile`)
    try:
        for code in sorted(codes):
            rule = rules[code]
            if rule.requires:
                for token in rule.requires:
                    held = present.get(token)
                    if held is None:
                        held = present[token] = token in data
                    if held:
                        break
                else:
                    continue
            project.allowed = declared_facts(rule.needs)
            started = time.process_time() if timings is not None else 0.0
            # a fresh instance per file: rules may keep per-file state on `self`
            found = list(type(rule)().check(facts))
            findings.extend(found)
            if raw is not None:
                raw[code] = found
            if timings is not None:
                timings[code] = timings.get(code, 0.0) + time.process_time() - started
    finally:
        project.allowed = None
        facts.release()
    findings = filter_suppressed(findings + cell_errors, parsed.source)
    findings.sort(key=Finding.sort_key)
    return findings


# -- the job of one file, in a worker process ------------------------------------------
@dataclass
class Task:
    path: str
    settings: int  # index into the run's settings table
    codes: tuple[str, ...]
    data: Optional[bytes] = None  # only for stdin; workers read files themselves
    expect: Optional[str] = None  # pass 2: the digest pass 1 saw
    summary_only: bool = False  # a file of the project outside the run: its summary only
    # pass 2: the enabled rules whose pass-1 findings still hold (they do not read the
    # region index); run only if the file changed since (then `changed` says all ran)
    kept: tuple[str, ...] = ()


@dataclass
class Done:
    """A worker's answer for one file: picklable, small (no source, no tree)."""

    path: str
    digest: Optional[str] = None
    signature: Optional[tuple] = None  # stat signature, when safe to trust later
    summary: Optional[bytes] = None  # the pickled ModuleSummary (None: the file does not
    # parse); unpickled in the parent only when the region index must be rebuilt
    findings: Optional[list[Finding]] = field(default_factory=list)  # None: not linted (summary only)
    used: dict[tuple, str] = field(default_factory=dict)  # region fact -> its digest
    deps: tuple = ()  # ((path, digest), ...) of other files the rules read
    error: Optional[str] = None
    error_kind: Optional[str] = None  # "io", "format" (not a notebook), "internal" (engine.FileResult)
    changed: bool = False  # pass 2 read other bytes than pass 1
    rule_s: Optional[dict] = None  # CPU seconds per rule (JobContext.timed: for COMPILE_LINT_STATS)
    trusted: bool = True  # the summary was made by this run (False: read from the cache)
    # a project file taken from the cache's manifest: `summary` is loaded only when the
    # region index must be rebuilt; until then only its digest is known
    lazy_summary_digest: Optional[str] = None
    lazy: bool = False

    def summary_digest(self) -> Optional[str]:
        if self.lazy:
            return self.lazy_summary_digest
        return cache_mod.digest(self.summary) if self.summary is not None else None


@dataclass
class JobContext:
    """What every job of one pass shares (sent once to each worker)."""

    settings: list  # the run's settings table
    target_torch: Optional[str]
    regions: Optional[dict]  # pass 2: the run's index; None in pass 1
    debug: bool = False
    timed: bool = False  # time each rule (Done.rule_s)


_WORKER: dict = {}


def init_worker(context: JobContext, in_pool: bool = True) -> None:
    if in_pool:  # a pool process: lint only, so GC by hand (see GC_EVERY)
        gc.disable()
    _WORKER.clear()
    _WORKER.update(context=context, sources=Sources(snapshot=True))  # one pass reads one state of the files
    _WORKER["digests"] = RegionDigests(context.regions) if context.regions is not None else None


def known_digest(path: str) -> Optional[str]:
    """file_digest, once per file in this worker's pass (many files probe the same
    project files, 171,542 probes on corpus M): a pass takes the files not to change,
    as its Sources snapshot does, so the digest matches the state the probes read."""
    memo = _WORKER.setdefault("file_digests", {})
    if path not in memo:
        if len(memo) > 20000:
            memo.clear()
        memo[path] = file_digest(path)
    return memo[path]


file_digest = cache_mod.file_digest  # (engine and tests import it from here)


def lint_one(task: Task) -> Done:
    done = _lint(task)
    # Collected here, where the file's trees and facts are already unreachable: a
    # collection inside _lint would find them alive, promote them to the old
    # generation and leave them for the costly full sweeps.
    if _collector.due():
        _collector.collect()
    return done


def _lint(task: Task) -> Done:
    context: JobContext = _WORKER["context"]
    done = Done(task.path)
    try:
        # a deeply nested expression (a chain of 500 attributes) overflows the default
        # recursion limit: that file is linted again on a deep stack (deep_stack.py)
        deep_stack.call(_lint_into, task, done, context)
    except MemoryError:
        done.error, done.error_kind = "internal error: out of memory while linting this file", "internal"
    except NotebookError as exc:
        done.error, done.error_kind = str(exc), "format"
    except _Unreadable as exc:
        done.error, done.error_kind = f"cannot read: {exc.error.strerror or exc.error}", "io"
    except Exception as exc:  # (an OSError elsewhere, a data file of the tool, is no fault of the file)
        if context.debug:
            raise
        done.error = f"internal error while linting: {type(exc).__name__}: {exc} (set COMPILE_LINT_DEBUG=1 for a traceback, and please report it)"
        done.error_kind = "internal"
    return done


class _Unreadable(Exception):
    """The linted file itself could not be read (CL001), as opposed to any other OSError."""

    def __init__(self, error: OSError):
        super().__init__(str(error))
        self.error = error


def _lint_into(task: Task, done: Done, context: JobContext) -> None:
    settings = context.settings[task.settings]
    signature = None
    if task.data is None:
        read_at = cache_mod.now_ns()
        try:
            with open(task.path, "rb") as fh:
                st = os.fstat(fh.fileno())
                data = fh.read()
        except OSError as exc:
            raise _Unreadable(exc) from None
        signature = cache_mod.trusted_signature(st, read_at)
    else:
        data = task.data
    done.digest = cache_mod.digest(data)
    done.signature = signature
    if task.expect is not None and task.expect != done.digest:
        done.changed = True
    # pass 2 (the run's index is known) keeps the summary pass 1 made: the engine
    # puts it back, so it is not made again
    item = parse_file(source_for(task.path, data), settings, with_summary=context.regions is None)
    done.summary = summary_blob(item.summary)
    if task.summary_only:
        done.findings = None
        return
    if context.regions is not None:  # pass 2: the run's index
        regions = context.regions
    else:  # pass 1: what this file alone implies
        regions = single_file_regions(item.summary)
    tracked = TrackedRegionView(regions)
    project = project_for(settings, tracked, context.target_torch, _WORKER["sources"])
    codes = task.codes + task.kept if done.changed else task.codes
    done.rule_s = {} if context.timed else None
    done.findings = run_rules(item, project, codes, done.rule_s)
    digests = _WORKER["digests"] or RegionDigests(regions)
    done.used = {token: digests(token) for token in tracked.used()}
    deps = []
    for path, other in sorted(project.read.items()):
        if other is not None:
            deps.append((path, cache_mod.digest(other.source.data)))
        else:
            deps.append((path, file_digest(path)))
    for (path, kind, arg), answer in sorted(project.probes.items()):
        if path not in project.read:  # a file read for its meaning depends on all of it
            deps.append((path, probe_dep(kind, arg, answer, known_digest(path))))
    deps += sorted(project.listings.items())  # (folder, `listing:...`)
    done.deps = tuple(deps)
    project.release()


def single_file_regions(summary: Optional[ModuleSummary]) -> dict:
    """`ProjectIndex([summary]).regions()`: the regions one file implies alone (pass 1).

    Most files compile and trace nothing, and then their index is empty without being
    built: an index's regions start only from its sites (the summary's `sites`), from
    calls of a def that compiles or traces its parameter (a def with `wraps`: an index
    of one file finds only that file's defs) and from declared regions (the file's
    `# compile-lint:` markers; pass 1 declares nothing else)."""
    if summary is None:
        return {}
    if not summary.sites and not summary.declared and all(info.wraps is None for info in summary.defs.values()):
        return {}
    return ProjectIndex([summary]).regions()


def summary_blob(summary) -> Optional[bytes]:
    if summary is None:
        return None
    return pickle.dumps(summary, protocol=pickle.HIGHEST_PROTOCOL)


def summary_of(done: Done):
    """The file's ModuleSummary, None for a file that does not parse, False when a
    cached one does not load (only compile_lint's own data classes are allowed)."""
    if done.summary is None:
        return None
    if done.trusted:
        return pickle.loads(done.summary)
    try:
        return cache_mod.loads(done.summary)
    except Exception:
        return False
