"""The text edits a finding's fix makes, from libcst parses of the statements it touches.

A codemod rewrites a few nodes, yet parsing a whole file with libcst and resolving
positions for all of it costs ~1.6 s for 4,500 lines (ast: 0.05 s). So a fix runs on
the smallest *unit* that holds what it changes: the innermost statement around the
finding (`FindingCodemod.UNIT`: "statement", "block" for the statement around that,
or "module"), its lines cut out of the file, dedented by the indentation of its first
line and parsed as a module of its own. The codemod sees positions in the file's terms
(`_FilePositions`), so the positions in a finding's fix data (`wrap` ranges, `mode_at`)
work unchanged, and it visits only the nodes on the way to what it rewrites
(`FindingCodemod.visit_points`). What differs between the unit's code before and after
becomes one `Edit`, mapped back to the file's rows and columns (the unit's indentation
put back on every line of the new text that is not empty).

A unit that does not parse on its own (a statement sharing its first line with the
end of the one before) falls back to the unit around it, up to the whole file. Imports
a codemod asks for (AddImportsVisitor) are added by running libcst's visitor on the
*head* of the file: the top-level statements up to and including the first that is not
an import, which is all that visitor reads or changes; a fix whose unit overlaps the
head runs on the head with it. A codemod that removes imports (RemoveImportsVisitor
needs scope analysis of the whole file) runs on the whole file.

Each unit is parsed (and its positions resolved) once per file version, however many
findings it holds: the edits of every finding of a file cost about one parse of the
statements they are in.
"""
from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Iterator, Optional

from .model import Edit, Finding, Position

_NEWLINE = re.compile(r"\r\n|\r|\n")
_INDENT = re.compile(r"[ \t]*")
_BOM = b"\xef\xbb\xbf"


class FixError(Exception):
    """A fix that cannot be computed (its code does not parse with libcst, a codemod failed)."""


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split where Python's tokenizer splits (\\n, \\r\\n, \\r)."""
    out, start = [], 0
    for match in _NEWLINE.finditer(text):
        out.append(text[start:match.end()])
        start = match.end()
    if start < len(text):
        out.append(text[start:])
    return out


@dataclass
class Text:
    """A file's bytes as text: BOM and encoding remembered, so `encode` gives back the
    same bytes for the same text."""

    bom: bool
    encoding: str
    text: str

    @classmethod
    def of(cls, data: bytes) -> "Text":
        bom = data.startswith(_BOM)
        body = data[3:] if bom else data
        try:
            encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        except SyntaxError:
            encoding = "utf-8"
        if encoding in ("utf-8-sig", "utf-8"):
            return cls(bom, "utf-8", body.decode("utf-8", errors="surrogateescape"))
        try:
            return cls(bom, encoding, body.decode(encoding))
        except (UnicodeDecodeError, LookupError) as exc:
            raise FixError(f"cannot decode the file as {encoding}: {exc}") from None

    def encode(self, text: str) -> bytes:
        errors = "surrogateescape" if self.encoding == "utf-8" else "strict"
        return (_BOM if self.bom else b"") + text.encode(self.encoding, errors=errors)


@dataclass
class _Unit:
    first: int  # first line (1-based) of the unit in the file
    last: int  # last line, inclusive
    top: tuple[int, int]  # the range of top-level statements it lies in (indices)
    module: bool = False  # the whole file


@dataclass
class _Segment:
    """A unit parsed: its dedented text, the libcst module, positions in file terms."""

    unit: _Unit
    prefix: str
    text: str  # dedented
    removed: list[int]  # per line of the unit: characters of indentation taken off
    module: object  # libcst Module
    wrapper: object
    positions: Mapping
    tail: str = ""  # what libcst's code of the unchanged unit lacks (a CR-only file's last \r)


@dataclass
class FileEdits:
    """The edits of one file version's fixes. `tree` is the file's `ast` tree when the
    caller has it (the linter does); rows and columns are those of findings."""

    path: str
    data: bytes
    tree: Optional[ast.Module] = None
    _text: Optional[Text] = field(default=None, repr=False)
    _lines: Optional[list[str]] = field(default=None, repr=False)
    _starts: Optional[list[int]] = field(default=None, repr=False)
    _segments: dict = field(default_factory=dict, repr=False)
    _top: Optional[list[tuple[int, int]]] = field(default=None, repr=False)  # line range of each top-level unit
    _top_of_stmt: Optional[list[int]] = field(default=None, repr=False)  # tree.body index -> unit index
    _config: Optional[object] = field(default=None, repr=False)
    # fixes text_fixes.py can compute without libcst are computed so (tests turn it off
    # to compare with the codemods)
    text_fixes: bool = True

    # -- the file -----------------------------------------------------------------------
    @property
    def decoded(self) -> Text:
        if self._text is None:
            self._text = Text.of(self.data)
        return self._text

    @property
    def text(self) -> str:
        return self.decoded.text

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(self.text) or [""]
            starts, at = [], 0
            for line in self._lines:
                starts.append(at)
                at += len(line)
            self._starts = starts
        return self._lines

    def offset(self, pos: Position) -> int:
        """The offset in `text` of a 1-based row and column (characters)."""
        lines = self.lines
        if pos.row > len(lines):
            return len(self.text)
        return self._starts[pos.row - 1] + pos.column - 1

    def _ast(self) -> ast.Module:
        if self.tree is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    self.tree = ast.parse(self.data, filename=self.path)
                except (SyntaxError, ValueError) as exc:
                    raise FixError(f"the file does not parse: {exc}") from None
        return self.tree

    # -- the edits of one finding ------------------------------------------------------------
    def edits(self, finding: Finding) -> list[Edit]:
        """The edits `finding`'s fix makes to this file version ([] when its codemod changes
        nothing). FixError when it cannot be computed."""
        fix = finding.fix
        if self.text_fixes:
            rewrite = _rewrite_for(fix.codemod)
            if rewrite is not None:
                found = self._text_edits(rewrite, finding)
                if found is not None:
                    return found
        from .codemods_home import codemod_class

        cls = codemod_class(fix.codemod)
        target = (finding.start.row, finding.start.column, fix.data)
        points = list(_touched_points(cls, finding, fix.data))
        try:
            return self._edits(cls, [target], points)
        except FixError:
            raise
        except RecursionError:
            raise
        except Exception as exc:  # a codemod's bug: this fix is not offered
            raise FixError(f"internal error in {fix.codemod}: {type(exc).__name__}: {exc}") from None

    def _text_edits(self, rewrite, finding: Finding) -> Optional[list[Edit]]:
        """The edits of a fix that text_fixes.py computes without libcst, on the unit the
        codemod would run on; None when the rewrite declines (then the codemod runs)."""
        from .text_fixes import Placed

        kind, build = rewrite
        point = (finding.start.row, finding.start.column)
        units = self._units_for([point], kind)
        if len(units) != 1:
            return None
        for unit in units[0]:
            cut = self._cut(unit)
            if cut is not None:
                break
        else:
            return None
        prefix, text, removed = cut
        if text.count("\r") != text.count("\r\n"):
            return None  # a CR-only line: libcst's code of it differs (the `tail` of _Segment)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None  # not a module on its own: the codemod's way finds the unit around it
        stmt = self._innermost(point)
        if stmt is None:
            return None
        new_text = build(Placed(self, unit, text, removed), stmt, finding)
        if new_text is None:
            return None
        return self._diff(_Segment(unit, prefix, text, removed, None, None, None), new_text)

    def _innermost(self, point: tuple[int, int]) -> Optional[ast.stmt]:
        """The innermost statement of the file around a 1-based row and column."""
        row, column = point
        body, found = self._ast().body, None
        at = (row, self._byte_column(row, column))
        while body:
            stmt = _containing(body, at)
            if stmt is None:
                break
            found = stmt
            body = [s for block in _blocks(stmt) for s in block]
        return found

    def _edits(self, cls, targets: list, points: list[tuple[int, int]]) -> list[Edit]:
        from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

        unit_kind = getattr(cls, "UNIT", "statement")
        units = self._units_for(points, unit_kind)
        edits: list[Edit] = []
        for candidates in units:
            result = self._run_first_that_parses(cls, candidates, targets, points)
            if result is None:
                continue
            segment, new_module, context = result
            if context.scratch.get(RemoveImportsVisitor.CONTEXT_KEY):
                return self._whole_module(cls, targets)
            if context.scratch.get(AddImportsVisitor.CONTEXT_KEY):
                head = self._head()
                if segment.unit.module or segment.unit.top[0] <= head[1]:
                    # the unit overlaps the head: run on the head and the unit as one
                    joined = self._top_unit(0, max(head[1], segment.unit.top[1]))
                    segment = self._segment(joined)
                    new_module, context = self._run(cls, segment, targets, points)
                    new_module = AddImportsVisitor(context).transform_module(new_module)
                else:
                    head_segment = self._segment(self._top_unit(0, head[1]))
                    added = AddImportsVisitor(context).transform_module(head_segment.module)
                    edits.extend(self._diff(head_segment, _code(added)))
            edits.extend(self._diff(segment, _code(new_module)))
        return sorted(edits, key=lambda e: (e.location.row, e.location.column))

    def _run_first_that_parses(self, cls, candidates: list[_Unit], targets, points):
        for unit in candidates:
            segment = self._segment(unit)
            if segment is None:
                continue  # not a module on its own: the unit around it
            new_module, context = self._run(cls, segment, targets, points)
            return segment, new_module, context
        raise FixError("libcst cannot parse the code around the fix")

    def _run(self, cls, segment: _Segment, targets, points):
        from libcst.codemod import CodemodContext
        from libcst.metadata import PositionProvider

        context = CodemodContext(filename=self.path, wrapper=segment.wrapper)
        codemod = cls(context, targets)
        codemod.visit_points = [(row, column - 1) for row, column in points]  # libcst's columns are 0-based
        codemod.metadata = {PositionProvider: segment.positions}
        return codemod.transform_module_impl(segment.module), context

    def _whole_module(self, cls, targets) -> list[Edit]:
        """The old way, for codemods that need the whole file (scope analysis)."""
        from .fixer import apply_codemod

        findings = [_TargetFinding(row, column, data, cls) for row, column, data in targets]
        new = apply_codemod(self.path, self.data, None, findings, codemod=cls)
        if new == self.data:
            return []
        old_text, new_text = self.text, Text.of(new).text
        start, end_old, end_new = changed_span(old_text, new_text)
        return [Edit(new_text[start:end_new], self._position(start), self._position(end_old))]

    def _position(self, offset: int) -> Position:
        """The 1-based row and column of an offset in `text` (at the end: past the last line)."""
        self.lines
        if offset >= len(self.text) and self.text and self.lines[-1].endswith(("\n", "\r")):
            return Position(len(self.lines) + 1, 1)
        row = bisect.bisect_right(self._starts, offset)
        return Position(row, offset - self._starts[row - 1] + 1)

    # -- units ------------------------------------------------------------------------------
    def _top_units(self) -> list[tuple[int, int]]:
        """Line ranges of the top-level statements, those sharing a line merged."""
        if self._top is None:
            tree = self._ast()
            units: list[list[int]] = []
            index: list[int] = []
            for stmt in tree.body:
                first, last = _first_line(stmt), stmt.end_lineno or stmt.lineno
                if units and first <= units[-1][1]:
                    units[-1][1] = max(units[-1][1], last)
                else:
                    units.append([first, last])
                index.append(len(units) - 1)
            self._top = [tuple(u) for u in units]
            self._top_of_stmt = index
        return self._top

    def _top_unit(self, i: int, j: int) -> _Unit:
        top = self._top_units()
        if not top:
            return self._module_unit()
        return _Unit(top[i][0], top[j][1], (i, j))

    def _module_unit(self) -> _Unit:
        return _Unit(1, len(self.lines), (0, max(0, len(self._top_units()) - 1)), module=True)

    def _head(self) -> tuple[int, int]:
        """(0, k): the top-level units up to and including the first that is not an
        import (after a docstring): all AddImportsVisitor reads and changes."""
        tree = self._ast()
        top = self._top_units()
        body = tree.body
        k = 0
        for n, stmt in enumerate(body):
            if n == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                continue
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                continue
            k = self._top_of_stmt[n]
            break
        else:
            k = len(top) - 1
        # a unit holding an import and other code on one line is no import line for libcst
        return 0, max(0, k)

    def _units_for(self, points: list[tuple[int, int]], kind: str) -> list[list[_Unit]]:
        """For each touched place, the units to try in order (innermost first); places in
        the same unit counted once."""
        if kind == "module":
            return [[self._module_unit()]]
        out: list[list[_Unit]] = []
        seen: set[tuple[int, int]] = set()
        for row, column in sorted(points):
            chain = self._chain(row, column)
            if kind == "block" and len(chain) > 1:
                chain = chain[:-1]
            candidates = []
            for first, last, top in reversed(chain):
                candidates.append(_Unit(first, last, top))
            if chain:
                top_index = chain[0][2]
                candidates.append(self._top_unit(*top_index))
            candidates.append(self._module_unit())
            key = (candidates[0].first, candidates[0].last)
            # a place inside a unit already chosen is done by that unit
            if key in seen or any(u[0].first <= candidates[0].first and candidates[0].last <= u[0].last for u in out):
                continue
            seen.add(key)
            out = [u for u in out if not (candidates[0].first <= u[0].first and u[0].last <= candidates[0].last)]
            out.append(candidates)
        return out

    def _chain(self, row: int, column: int) -> list[tuple[int, int, tuple[int, int]]]:
        """(first line, last line, top-level unit range) of the statements around a place,
        outermost first."""
        tree = self._ast()
        top = self._top_units()
        chain = []
        body = tree.body
        depth = 0
        point = (row, self._byte_column(row, column))
        while body:
            stmt = _containing(body, point)
            if stmt is None:
                break
            if depth == 0:
                unit = self._top_of_stmt[tree.body.index(stmt)]
                top_range = (unit, unit)
                first, last = top[unit]
            else:
                first, last = _first_line(stmt), stmt.end_lineno or stmt.lineno
            chain.append((first, last, top_range))
            body = [s for block in _blocks(stmt) for s in block]
            depth += 1
        return chain

    def _byte_column(self, row: int, column: int) -> int:
        """ast's 0-based UTF-8 byte column of a 1-based character column."""
        lines = self.lines
        if not 1 <= row <= len(lines) or lines[row - 1].isascii():
            return column - 1
        return len(lines[row - 1][:column - 1].encode("utf-8", errors="surrogateescape"))

    # -- parsing a unit ---------------------------------------------------------------------
    def _segment(self, unit: _Unit) -> Optional[_Segment]:
        key = (unit.first, unit.last)
        if key in self._segments:
            return self._segments[key]
        segment = self._parse_segment(unit)
        self._segments[key] = segment
        return segment

    def _cut(self, unit: _Unit) -> Optional[tuple[str, str, list[int]]]:
        """(prefix, text, removed): the unit's lines dedented by the indentation of its
        first line; None when a line is indented less (in a string, a continuation)."""
        lines = self.lines[unit.first - 1:unit.last]
        prefix = "" if unit.module else _INDENT.match(lines[0]).group(0) if lines else ""
        removed, body = [], []
        for line in lines:
            if line.startswith(prefix) and line.rstrip("\r\n"):
                body.append(line[len(prefix):])
                removed.append(len(prefix))
            elif not line.rstrip("\r\n"):
                body.append(line)
                removed.append(0)
            else:
                return None  # a line less indented (in a string, a continuation): not on its own
        return prefix, "".join(body), removed

    def _parse_segment(self, unit: _Unit) -> Optional[_Segment]:
        import libcst as cst
        from libcst.metadata import MetadataWrapper, PositionProvider

        cut = self._cut(unit)
        if cut is None:
            return None
        prefix, text, removed = cut
        try:
            module = cst.parse_module(text, config=self._parser_config())
        except (cst.ParserSyntaxError, RecursionError):
            return None
        except Exception:  # libcst raising something else on odd input
            return None
        code = module.code
        tail = ""
        if code != text:
            if not text.startswith(code):
                return None  # libcst would not give this code back as it is
            tail = text[len(code):]  # (libcst drops the last \r of a CR-only file)
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        positions = _FilePositions(wrapper.resolve(PositionProvider), unit.first - 1, removed)
        return _Segment(unit, prefix, text, removed, module, wrapper, positions, tail)

    def _parser_config(self):
        """The file's indentation and newline, so a unit without an indented block of
        its own (or with a first line ending otherwise) writes new code as the file does."""
        if self._config is None:
            import libcst as cst

            newline = "\n"
            match = _NEWLINE.search(self.text)
            if match:
                newline = match.group(0)
            indent = "    "
            for stmt in self._ast().body:  # as libcst infers it: the first indented block
                inner = next(iter(_blocks(stmt)), None)
                if inner and inner[0].lineno > stmt.lineno and inner[0].lineno <= len(self.lines):
                    found = _INDENT.match(self.lines[inner[0].lineno - 1]).group(0)
                    if found:
                        indent = found
                        break
            self._config = cst.PartialParserConfig(default_indent=indent, default_newline=newline)
        return self._config

    # -- mapping an edit back ------------------------------------------------------------------
    def _diff(self, segment: _Segment, new_code: str) -> list[Edit]:
        """The edit turning the unit's lines into `new_code` (the unit's code after the
        codemod), in file rows and columns: the changed lines of the dedented code, the
        indentation put back on them, then only what differs from the file's lines."""
        new_text = new_code + segment.tail
        old_text = segment.text
        if new_text == old_text:
            return []
        start, end_old, end_new = changed_span(old_text, new_text)
        starts = _line_starts(old_text)
        first_row, col = _row_col(starts, start)
        start -= col  # whole lines: from the start of the first changed line ...
        if end_old < len(old_text):  # ... to the end of the line holding the end (the common suffix moves along)
            last_row = _row_col(starts, end_old)[0]
            grow = (starts[last_row + 1] if last_row + 1 < len(starts) else len(old_text)) - end_old
            end_old, end_new = end_old + grow, end_new + grow
            last_row += 1  # (exclusive)
        else:  # to the end of the unit
            last_row = len(starts) - 1 if starts[-1] == len(old_text) else len(starts)
        new_lines = _reindent(new_text[start:end_new], segment.prefix)
        first = segment.unit.first + first_row  # file row of the first changed line
        old_lines = "".join(self.lines[first - 1:segment.unit.first + last_row - 1])
        a, b_old, b_new = changed_span(old_lines, new_lines)
        base = self._starts[first - 1] if first - 1 < len(self._starts) else len(self.text)
        return [Edit(new_lines[a:b_new], self._position(base + a), self._position(base + b_old))]


def _rewrite_for(codemod: str):
    from .text_fixes import REWRITES

    return REWRITES.get(codemod)


def _code(module) -> str:
    """A unit's code after a codemod; a unit left with nothing in it is no line at all
    (libcst writes an empty module as one newline)."""
    if not module.body and not module.header and not module.footer:
        return ""
    return module.code


def changed_span(old: str, new: str) -> tuple[int, int, int]:
    """(start, end in old, end in new) of the one span where `new` differs from `old`:
    the common prefix and suffix are left out, so an edit touches only what changed."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return start, end_old, end_new


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for match in _NEWLINE.finditer(text):
        starts.append(match.end())
    return starts


def _row_col(starts: list[int], offset: int) -> tuple[int, int]:
    row = bisect.bisect_right(starts, offset) - 1
    return row, offset - starts[row]


def _reindent(lines: str, prefix: str) -> str:
    """Whole lines of the dedented unit with `prefix` put back on each that is not empty."""
    if not prefix:
        return lines
    return "".join(prefix + line if line.rstrip("\r\n") else line for line in split_lines(lines))


class _FilePositions(Mapping):
    """libcst positions of a unit's nodes, as positions in the file (rows offset by the
    unit's first line, columns by the indentation taken off)."""

    def __init__(self, inner: Mapping, row_offset: int, removed: list[int]):
        self.inner, self.row_offset, self.removed = inner, row_offset, removed

    def __getitem__(self, node):
        from libcst.metadata import CodePosition, CodeRange

        rng = self.inner[node]
        return CodeRange(self._at(rng.start, CodePosition), self._at(rng.end, CodePosition))

    def _at(self, pos, CodePosition):
        index = pos.line - 1
        shift = self.removed[index] if 0 <= index < len(self.removed) else 0
        return CodePosition(pos.line + self.row_offset, pos.column + shift)

    def __iter__(self) -> Iterator:
        return iter(self.inner)

    def __len__(self) -> int:
        return len(self.inner)


def _touched_points(cls, finding: Finding, data: dict) -> Iterator[tuple[int, int]]:
    touched = getattr(cls, "touched_points", None)
    if touched is None:
        yield finding.start.row, finding.start.column
        return
    yield from touched(finding.start.row, finding.start.column, data)


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None)
    if decorators:
        return min(stmt.lineno, *(d.lineno for d in decorators))
    return stmt.lineno


def _blocks(stmt: ast.stmt):
    """The statement lists nested in a statement."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(stmt, "handlers", ()) or ():
        yield handler.body
    for case in getattr(stmt, "cases", ()) or ():
        yield case.body


def _containing(body: list[ast.stmt], point: tuple[int, int]) -> Optional[ast.stmt]:
    """The statement of `body` whose extent holds `point` (row, 0-based byte column)."""
    for stmt in body:
        start = (_first_line(stmt), 0 if getattr(stmt, "decorator_list", None) else stmt.col_offset)
        end = (stmt.end_lineno or stmt.lineno, stmt.end_col_offset if stmt.end_col_offset is not None else 1 << 30)
        if start <= point <= end:
            return stmt
        if start > point:
            return None
    return None


@dataclass
class _TargetFinding:
    """What fixer.apply_codemod reads of a finding, for the whole-file way."""

    row: int
    column: int
    data: dict
    cls: object

    @property
    def start(self):
        return Position(self.row, self.column)

    @property
    def fix(self):
        return self
