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
from .analysis.names import NameTable, module_name_for
from .analysis.walk import walk
from .analysis.regions import ModuleSummary, RegionInfo, summarize
from .config import Settings
from .model import Finding, Position
from .rules import all_rules, select_codes
from .source import ParseFailure, SourceFile, source_for
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


def read_source(path: str, data: Optional[bytes] = None) -> SourceFile:
    if data is None:
        with open(path, "rb") as fh:
            data = fh.read()
    return source_for(path, data)


def parse_file(source: SourceFile, settings: Settings) -> ParsedFile:
    try:
        tree = source.parse()
    except ParseFailure as failure:
        return ParsedFile(source, None, None, None, failure)
    module, is_package = module_name_for(source.path)
    nodes = walk(tree, link_parents=True)
    names = NameTable.build(tree, module, is_package, nodes)
    summary = summarize(tree, names, source.path, settings.compile_wrappers, settings.trace_wrappers)
    if b"compile-lint:" in source.data:
        from .analysis.declared import find_markers
        from .analysis.regions import def_qualnames

        summary.declared = find_markers(source.data, tree, def_qualnames(tree), source.path)
    return ParsedFile(source, tree, names, summary, nodes=nodes)


def syntax_finding(parsed: ParsedFile) -> Finding:
    failure = parsed.failure
    pos = Position(failure.row, failure.column)
    return Finding(SYNTAX_ERROR, failure.message, parsed.source.path, pos, pos)


# Which rules run in which pass. Pass 1 runs on every file before the region index
# exists; pass 2 runs after it, and re-parses only the files that need it.
LOCAL = "local"  # rules that never ask about regions: pass 1
REGION = "region"  # rules that only look inside regions: pass 2, files holding a region
ANY = "any"  # rules that need the index but may fire anywhere: pass 2, every file


def rule_pass(rule) -> str:
    uses = getattr(rule, "uses_regions", None)
    return LOCAL if uses is False else REGION if uses is True else ANY


def run_rules(
    parsed: ParsedFile,
    regions: dict[str, RegionInfo],
    codes: Iterable[str],
    settings: Settings,
    target_torch: Optional[str] = None,
    passes: Iterable[str] = (LOCAL, REGION, ANY),
    others: Optional[dict] = None,
) -> list[Finding]:
    """The enabled rules' findings for one parsed file. With `others`, it is filled
    with the other files the rules read ({path: their ModuleFacts or None})."""
    if parsed.failure is not None:
        return [syntax_finding(parsed)] if SYNTAX_ERROR in codes and LOCAL in passes else []
    facts = ModuleFacts(parsed.source, parsed.tree, parsed.names, regions, settings, parsed.nodes)
    facts.target_torch = target_torch or settings.target_torch_version
    data = parsed.source.data
    findings: list[Finding] = []
    rules = all_rules()
    for code in sorted(codes):
        rule = rules[code]
        if rule_pass(rule) not in passes:
            continue
        if rule.requires and not any(token in data for token in rule.requires):
            continue
        findings.extend(rule.check(facts))
    if others is not None:
        others.update(facts.__dict__.get("_cl_other_facts", None) or {})
    findings = filter_suppressed(findings, parsed.source)
    findings.sort(key=Finding.sort_key)
    return findings


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
        self.warnings: list[str] = []  # for the user, once per run (stale recorded regions)

    def lint(self, paths: list[str], stdin: Optional[tuple[str, bytes]] = None) -> list[FileResult]:
        """Both passes over every file, in worker processes and through the cache when
        the linter has them (compile_lint.parallel)."""
        from .parallel import lint_files

        return lint_files(self, paths, stdin)

    def _codes(self, path: str) -> frozenset[str]:
        return enabled_codes(self.settings_for(path), self.selection, path)

    def _run(self, item: ParsedFile, regions, passes) -> list[Finding]:
        settings = self.settings_for(item.source.path)
        return run_rules(item, regions, self._codes(item.source.path), settings, self.selection.target_torch, passes)

    def lint_parsed(self, item: ParsedFile, regions: dict[str, RegionInfo]) -> list[Finding]:
        """Every enabled rule on one parsed file (both passes at once)."""
        return self._run(item, regions, (LOCAL, REGION, ANY))

    def relint(self, path: str, data: bytes, regions: dict[str, RegionInfo]) -> tuple[ParsedFile, list[Finding]]:
        """Lint new contents of one file against an existing region index (fix loop)."""
        item = parse_file(SourceFile(path, data), self.settings_for(path))
        return item, self.lint_parsed(item, regions)
