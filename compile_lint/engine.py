"""The lint pipeline over a set of files.

  read + parse (ast) -> summarize (per file) -> ProjectIndex.regions (whole run)
  -> rules (per file, with the regions) -> suppression -> findings

Per-file steps are pure functions of (bytes, settings), so they can run in worker
processes and be cached; only the region index looks across files.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from .analysis.facts import ModuleFacts
from .analysis.names import NameTable, module_name_for
from .analysis.walk import walk
from .analysis.regions import ModuleSummary, ProjectIndex, RegionInfo, summarize
from .config import Settings
from .model import Finding, Position
from .rules import all_rules, select_codes
from .source import ParseFailure, SourceFile
from .suppression import filter_suppressed

SYNTAX_ERROR = "CL000"
# Keep parsed trees between the two passes only while the run is small; larger
# runs parse twice (ast.parse is cheap, trees of a big corpus are not).
KEEP_TREES_BYTES = 16 * 1024 * 1024


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
    return SourceFile(path, data)


def parse_file(source: SourceFile, settings: Settings) -> ParsedFile:
    try:
        tree = source.parse()
    except ParseFailure as failure:
        return ParsedFile(source, None, None, None, failure)
    module, is_package = module_name_for(source.path)
    nodes = walk(tree)
    names = NameTable.build(tree, module, is_package, nodes)
    summary = summarize(tree, names, source.path, settings.compile_wrappers, settings.trace_wrappers)
    return ParsedFile(source, tree, names, summary, nodes=nodes)


def syntax_finding(parsed: ParsedFile) -> Finding:
    failure = parsed.failure
    pos = Position(failure.row, failure.column)
    return Finding(SYNTAX_ERROR, failure.message, parsed.source.path, pos, pos)


def run_rules(
    parsed: ParsedFile,
    regions: dict[str, RegionInfo],
    codes: Iterable[str],
    settings: Settings,
    target_torch: Optional[str] = None,
) -> list[Finding]:
    if parsed.failure is not None:
        return [syntax_finding(parsed)] if SYNTAX_ERROR in codes else []
    facts = ModuleFacts(parsed.source, parsed.tree, parsed.names, regions, settings, parsed.nodes)
    facts.target_torch = target_torch or settings.target_torch_version
    data = parsed.source.data
    findings: list[Finding] = []
    rules = all_rules()
    for code in sorted(codes):
        rule = rules[code]
        if rule.requires and not any(token in data for token in rule.requires):
            continue
        findings.extend(rule.check(facts))
    findings = filter_suppressed(findings, parsed.source)
    findings.sort(key=Finding.sort_key)
    return findings


def _total_size(paths: list[str]) -> int:
    total = 0
    for path in paths:
        try:
            total += os.path.getsize(path)
        except OSError:
            pass
    return total


class Linter:
    """Lints a set of files as one project."""

    def __init__(self, settings_for: Callable[[str], Settings], selection: Selection = Selection()):
        self.settings_for = settings_for
        self.selection = selection
        self.regions: dict[str, RegionInfo] = {}

    def lint(self, paths: list[str], stdin: Optional[tuple[str, bytes]] = None) -> list[FileResult]:
        results: dict[str, FileResult] = {}
        parsed: dict[str, ParsedFile] = {}
        inputs = [(p, None) for p in paths] + ([stdin] if stdin else [])
        keep = _total_size(paths) <= KEEP_TREES_BYTES
        for path, data in inputs:
            try:
                source = read_source(path, data)
            except OSError as exc:
                results[path] = FileResult(path, error=f"cannot read: {exc.strerror or exc}")
                continue
            item = parse_file(source, self.settings_for(path))
            if not keep:  # hold only the summary until the second pass
                item = ParsedFile(source, None, None, item.summary, item.failure)
            parsed[path] = item
        index = ProjectIndex(p.summary for p in parsed.values() if p.summary is not None)
        self.regions = index.regions()
        for path, item in parsed.items():
            if item.tree is None and item.failure is None:
                item = parse_file(item.source, self.settings_for(path))
            results[path] = FileResult(path, self.lint_parsed(item, self.regions))
        return [results[p] for p, _ in inputs if p in results]

    def lint_parsed(self, item: ParsedFile, regions: dict[str, RegionInfo]) -> list[Finding]:
        settings = self.settings_for(item.source.path)
        codes = enabled_codes(settings, self.selection, item.source.path)
        return run_rules(item, regions, codes, settings, self.selection.target_torch)

    def relint(self, path: str, data: bytes, regions: dict[str, RegionInfo]) -> tuple[ParsedFile, list[Finding]]:
        """Lint new contents of one file against an existing region index (fix loop)."""
        item = parse_file(SourceFile(path, data), self.settings_for(path))
        return item, self.lint_parsed(item, regions)
