"""Linting one editor buffer (a file or a notebook) and turning findings into LSP.

Positions: findings use 1-based rows and 1-based columns in characters; LSP uses
0-based lines and columns in the client's code units (UTF-16 unless negotiated), so
every conversion goes through the workspace's position codec with the line's text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ..engine import Selection, enabled_codes
from ..lint_file import parse_file, project_for, run_rules
from ..model import Finding, Position
from ..fix_edits import split_lines
from ..notebook import Notebook, source_of
from ..rules import all_rules
from ..model import DOC_URL
from ..source import SourceFile
from ..suppression import noqa_line  # noqa: F401 (server.py, actions.py)

SOURCE = "compile-lint"
SYNTAX_ERROR = "CL000"


@dataclass
class Place:
    """Where a module row lives in the editor: a document and its text's lines."""

    uri: str
    lines: list[str]
    row_offset: int  # module row of the document's first line, minus 1


@dataclass
class Linted:
    """The latest lint of one buffer."""

    uri: str  # the text document, or the notebook document
    path: str
    code: bytes  # what was parsed: the text, or a notebook's module of code cells
    version: Optional[int]
    notebook: Optional[Notebook] = None
    cell_uris: list[str] = field(default_factory=list)  # per code cell, in order
    findings: list[Finding] = field(default_factory=list)
    used: dict = field(default_factory=dict)  # region facts the rules read -> digest
    _places: Optional[tuple] = field(default=None, repr=False)  # (code they split, places)
    # diagnostics of the last publish, by what they are made of: a keystroke leaves most
    # findings as they were, and their diagnostics are reused
    _diagnostics: dict = field(default_factory=dict, repr=False)
    # what the last lint leaves for an incremental relint of the next text (incremental.py)
    snapshot: Optional[object] = field(default=None, repr=False)
    how: dict = field(default_factory=dict, repr=False)  # the last lint: incremental or not, statements relinted

    def places(self) -> list[Place]:
        """The documents and their lines, split once per text (not once per finding)."""
        if self._places is not None and self._places[0] is self.code:
            return self._places[1]
        if self.notebook is None:
            places = [Place(self.uri, _lines(self.code.decode("utf-8", errors="replace")), 0)]
        else:
            places = [
                Place(uri, _lines(cell.text), cell.first_row - 1)
                for uri, cell in zip(self.cell_uris, self.notebook.cells)
            ]
        self._places = (self.code, places)
        return places

    def place_of(self, row: int) -> Optional[Place]:
        places = self.places()
        if self.notebook is None:
            return places[0]
        cell_number, _ = self.notebook.locate(row)
        for place, cell in zip(places, self.notebook.cells):
            if cell.number == cell_number:
                return place
        return None


def _lines(text: str) -> list[str]:
    return [line.rstrip("\r\n") for line in split_lines(text)] or [""]


def lint(context, linted: Linted) -> bool:
    """Lint `linted.code` against the project's index; fills findings and `used`.
    Returns True when this buffer changed the project's index."""
    from ..cache_validity import TrackedRegionView

    settings = context.settings_for(linted.path)
    if linted.notebook is None:
        return _lint_text(context, linted, settings)
    source = source_of(linted.notebook) if linted.notebook is not None else SourceFile(linted.path, linted.code)
    item = parse_file(source, settings)
    regions, changed = context.regions_with(linted.path, item.summary)
    tracked = TrackedRegionView(regions)
    codes = enabled_codes(settings, Selection(), linted.path)
    linted.findings = run_rules(item, project_for(settings, tracked, None, context.sources), codes)
    digests = context.digests(regions)
    linted.used = {token: digests(token) for token in tracked.used()}
    return changed


def _lint_text(context, linted: Linted, settings) -> bool:
    """A file's buffer: relinted incrementally after an edit inside one top-level def or
    class when that is the same as linting it whole (incremental.py), else linted whole."""
    from .. import incremental
    from ..cache_validity import TrackedRegionView

    codes = enabled_codes(settings, Selection(), linted.path)
    seen: dict = {}

    def make_project(parsed):
        regions, changed = context.regions_with(linted.path, parsed.summary)
        seen.update(regions=regions, changed=changed, tracked=TrackedRegionView(regions))
        return project_for(settings, seen["tracked"], None, context.sources), regions

    result = None
    old = linted.snapshot
    if old is not None:
        result = incremental.relint(old, linted.code, settings, codes, context.regions, make_project)
    used = dict(linted.used) if result is not None else {}
    if result is None:
        seen.clear()
        result = incremental.full(linted.path, linted.code, settings, codes, make_project)
    linted.findings = result.findings
    linted.snapshot = result.snapshot
    linted.how = {"incremental": result.incremental, "relinted": result.relinted}
    if not result.incremental:
        linted.how["full_because"] = old.declined if old is not None else "no earlier lint that parsed"
    digests = context.digests(seen["regions"])
    used.update({token: digests(token) for token in seen["tracked"].used()})
    linted.used = used
    return seen["changed"]


def still_holds(linted: Linted, digests) -> bool:
    """Whether the region facts a lint read are the same in a new index."""
    return all(digests(token) == digest for token, digest in linted.used.items())


class Relinter:
    """What fixer.fix_source needs from a linter, for one buffer."""

    def __init__(self, context, regions):
        self.context = context
        self.regions = regions

    def relint(self, path: str, data: bytes, regions):
        settings = self.context.settings_for(path)
        item = parse_file(SourceFile(path, data), settings)
        project = project_for(settings, regions, None, self.context.sources)
        return item, run_rules(item, project, enabled_codes(settings, Selection(), path))


# -- findings -> LSP (the protocol's JSON) ----------------------------------------------
ERROR, WARNING = 1, 2  # DiagnosticSeverity


def lsp_position(codec, place: Place, row: int, column: int) -> dict:
    line = row - 1 - place.row_offset
    if line >= len(place.lines):
        return {"line": len(place.lines), "character": 0}
    return codec.position_to_client_units(place.lines, max(line, 0), max(column - 1, 0))


def lsp_range(codec, place: Place, start: Position, end: Position) -> dict:
    first = lsp_position(codec, place, start.row, start.column)
    last = lsp_position(codec, place, end.row, end.column)
    if (last["line"], last["character"]) < (first["line"], first["character"]):
        last = first
    return {"start": first, "end": last}


def related_information(codec, linted: "Linted", f: Finding) -> Optional[list[dict]]:
    """Where the code is compiled or traced, in this buffer (a cell of it) or another file."""
    import os
    from pathlib import Path

    out = []
    for rel in f.related or ():
        column = rel.column or 1
        if os.path.abspath(rel.path) == linted.path:
            place = linted.place_of(rel.row)
            if place is None:
                continue
            pos = lsp_position(codec, place, rel.row, column)
            uri = place.uri
        else:
            pos = {"line": max(rel.row - 1, 0), "character": max(column - 1, 0)}
            uri = Path(os.path.abspath(rel.path)).as_uri()
        out.append({"location": {"uri": uri, "range": {"start": pos, "end": pos}}, "message": rel.message})
    return out or None


def diagnostic(codec, place: Place, f: Finding, linted: Optional["Linted"] = None) -> dict:
    end = f.end
    if place.row_offset and end.row - place.row_offset > len(place.lines):
        end = f.start  # ends past the cell: mark its start
    data = {"row": f.start.row, "column": f.start.column, "code": f.code}
    if f.fix is not None:
        data["fix"] = f.fix.applicability
    out = {
        "range": lsp_range(codec, place, f.start, end),
        "message": f.message,
        "severity": ERROR if f.code == SYNTAX_ERROR else WARNING,
        "code": f.code,
        "codeDescription": {"href": DOC_URL.format(code=f.code)},
        "source": SOURCE,
        "data": data,
    }
    related = related_information(codec, linted, f) if linted is not None else None
    if related is not None:
        out["relatedInformation"] = related
    return out


def diagnostics_by_uri(codec, linted: Linted) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {place.uri: [] for place in linted.places()}
    known, made = linted._diagnostics, {}
    for f in linted.findings:
        place = linted.place_of(f.start.row)
        if place is None:
            continue
        key = _diagnostic_key(f, place) if linted.notebook is None else id(f)  # (cells: related places in other cells)
        found = known.get(key) if linted.notebook is None else None
        if found is None:
            found = diagnostic(codec, place, f, linted)
        made[key] = found
        out.setdefault(place.uri, []).append(found)
    linted._diagnostics = made
    return out


def _diagnostic_key(f: Finding, place: Place) -> tuple:
    """All a diagnostic is made of: the finding, and the text of the lines its positions
    are converted in (columns become the client's code units)."""
    def line(row: int) -> Optional[str]:
        index = row - 1 - place.row_offset
        return place.lines[index] if 0 <= index < len(place.lines) else None

    fix = (f.fix.applicability,) if f.fix is not None else None
    return (f.code, f.message, f.start, f.end, fix, tuple(f.related or ()), place.uri, place.row_offset,
            line(f.start.row), line(f.end.row), tuple((r.row, line(r.row)) for r in f.related or ()))


def hover_text(code: str) -> Optional[str]:
    rule = all_rules().get(code)
    if rule is None:
        return None
    return (
        f"**{rule.code}** `{rule.name}`: {rule.summary}\n\n"
        f"Fix: {rule.fix_safety}. [Rule page]({DOC_URL.format(code=rule.code)})"
    )


_CODE = re.compile(r"\bCL\d{3}\b")


def code_at(line: str, character: int) -> Optional[str]:
    for match in _CODE.finditer(line):
        if match.start() <= character <= match.end():
            return match.group(0)
    return None
