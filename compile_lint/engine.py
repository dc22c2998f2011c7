"""The lint pipeline over a set of files.

  read + parse (ast) -> summarize (per file) -> ProjectIndex.regions (whole run)
  -> rules (per file, with the regions) -> suppression -> findings

Per-file steps are pure functions of (bytes, settings), so they can run in worker
processes and be cached; only the region index looks across files.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from .analysis.facts import ModuleFacts
from .analysis.project import Project, RegionView, Sources
from .analysis.names import NameTable, module_name_for
from .analysis.walk import walk
from .analysis.regions import ModuleSummary, RegionInfo, summarize
from .config import Settings
from .model import Finding, Position
from .rules import all_rules, select_codes
from .source import ParseFailure, SourceFile
from .suppression import filter_suppressed

SYNTAX_ERROR = "CL000"


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    error: Optional[str] = None  # the file could not be read


@dataclass
class ParsedFile:
    source: SourceFile
    tree: Optional[ast.Module]
    names: Optional[NameTable]
    summary: Optional[ModuleSummary]
    failure: Optional[ParseFailure] = None
    nodes: Optional[list] = None  # every node of `tree`, parents linked


def enabled_codes(settings: Settings, cli: "Selection", path: str) -> frozenset[str]:
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


def parse_file(source: SourceFile, settings: Settings) -> ParsedFile:
    try:
        tree = source.parse()
    except ParseFailure as failure:
        return ParsedFile(source, None, None, None, failure)
    module, is_package = module_name_for(source.path)
    nodes = walk(tree, link_parents=True)
    names = NameTable.build(tree, module, is_package, nodes)
    summary = summarize(tree, names, source.path, settings.compile_wrappers, settings.trace_wrappers)
    return ParsedFile(source, tree, names, summary, nodes=nodes)


def syntax_finding(parsed: ParsedFile) -> Finding:
    failure = parsed.failure
    pos = Position(failure.row, failure.column)
    return Finding(SYNTAX_ERROR, failure.message, parsed.source.path, pos, pos)


def run_rules(
    parsed: ParsedFile,
    project: Project,
    codes: Iterable[str],
) -> list[Finding]:
    """The enabled rules' findings for one parsed file, seen within `project` (its
    region index and other files; `project.read` collects the files the rules read)."""
    if parsed.failure is not None:
        return [syntax_finding(parsed)] if SYNTAX_ERROR in codes else []
    facts = ModuleFacts(parsed.source, parsed.tree, parsed.names, nodes=parsed.nodes, project=project)
    data = parsed.source.data
    findings: list[Finding] = []
    rules = all_rules()
    try:
        for code in sorted(codes):
            rule = rules[code]
            if rule.requires and not any(token in data for token in rule.requires):
                continue
            project.allowed = frozenset(rule.needs)
            # a fresh instance per file: rules may keep per-file state on `self`
            findings.extend(type(rule)().check(facts))
    finally:
        project.allowed = None
    findings = filter_suppressed(findings, parsed.source)
    findings.sort(key=Finding.sort_key)
    return findings


def project_for(settings: Settings, regions, selection: "Selection", sources: Optional[Sources] = None) -> Project:
    """The project handle one file is linted in: `regions` a RegionView (or a dict)."""
    view = regions if isinstance(regions, RegionView) else RegionView(regions)
    return Project(view, settings, target_torch=selection.target_torch or settings.target_torch_version, sources=sources)


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
        self.regions: dict[str, RegionInfo] = {}
        self.jobs = jobs  # worker processes; 0 for one per core (compile_lint.parallel)
        self.cache = cache  # a compile_lint.cache.ResultsCache, or None
        self.stats: dict = {}  # what the last lint() did (files parsed, cached, ...)
        self.sources = Sources()  # other files read while re-linting in this process (fix loop)

    def lint(self, paths: list[str], stdin: Optional[tuple[str, bytes]] = None) -> list[FileResult]:
        """Both passes over every file, in worker processes and through the cache when
        the linter has them (compile_lint.parallel)."""
        from .parallel import lint_files

        return lint_files(self, paths, stdin)

    def _codes(self, path: str) -> frozenset[str]:
        return enabled_codes(self.settings_for(path), self.selection, path)

    def lint_parsed(self, item: ParsedFile, regions: dict[str, RegionInfo]) -> list[Finding]:
        """Every enabled rule on one parsed file against a region index."""
        settings = self.settings_for(item.source.path)
        project = project_for(settings, regions, self.selection, self.sources)
        return run_rules(item, project, self._codes(item.source.path))

    def relint(self, path: str, data: bytes, regions: dict[str, RegionInfo]) -> tuple[ParsedFile, list[Finding]]:
        """Lint new contents of one file against an existing region index (fix loop)."""
        item = parse_file(SourceFile(path, data), self.settings_for(path))
        return item, self.lint_parsed(item, regions)
