"""Jupyter notebooks (.ipynb, nbformat 4) as one Python module.

The code cells are joined, in order, into one module, so a name defined in cell 2 is
known in cell 5 and a region set up in one cell reaches code in a later one (the
kernel runs them in one namespace). Between two cells sits a boundary comment line;
findings keep the module's rows inside the pipeline and are mapped to (cell, row in
cell) only when reported (`in_cells`).

IPython syntax is masked, never parsed and never rewritten: line magics (`%time`),
shell escapes (`!pip ...`, `x = !ls`), help (`obj?`, `?obj`) become a `pass` line
with a numbered marker; a cell magic (`%%bash`, `%%writefile`) masks its whole cell,
except the cell magics whose body is Python (`%%time`, `%%timeit`, `%%capture`, ...),
where only the magic line is masked. Fixing restores every masked line from its
marker and rewrites only the cells whose code changed: the `source` value of those
cells is replaced in the notebook's text, so outputs, execution counts, metadata,
the JSON's indentation, key order, escapes and the trailing newline stay byte for
byte.

Cells are numbered from 1 over all cells (markdown too), as Jupyter front ends and
Ruff count them.
"""
from __future__ import annotations

import bisect
import json
import os
import re
from dataclasses import dataclass, field, fields, replace
from typing import Optional

from .fix_edits import split_lines
from .model import Edit, Finding, Position, Related

NOTEBOOK_SUFFIX = ".ipynb"
BOUNDARY = "#%% compile-lint cell boundary"
_MARKER = "pass  # compile-lint masked line "
_MARKER_LINE = re.compile(r"^[ \t]*pass  # compile-lint masked line (\d+)[ \t]*$")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_WS = re.compile(r"[ \t\n\r]*")
# cell magics whose body is Python that IPython runs in the kernel
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "python", "python3", "pypy"})
_ASSIGN_MAGIC = re.compile(r"^[ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*[!%]")


class NotebookError(OSError):
    """The file is not a notebook compile-lint can read (not JSON, not nbformat 4).

    An OSError so that every place that reports an unreadable file (exit 2, the file
    left alone) reports it the same way."""


def is_notebook(path: str) -> bool:
    return path.endswith(NOTEBOOK_SUFFIX)


@dataclass
class CodeCell:
    index: int  # 0-based position among all cells
    text: str  # the cell's source as Jupyter holds it
    as_list: bool  # source stored as a list of lines (else one string)
    span: tuple[int, int]  # where the source value sits in the notebook's text
    first_row: int = 0  # module row of the cell's first line (1-based)
    rows: int = 0  # lines the cell takes in the module

    @property
    def number(self) -> int:
        return self.index + 1


@dataclass
class Notebook:
    path: str
    text: str  # the notebook's JSON text (without a BOM)
    bom: bool
    cells: list[CodeCell]
    code: str = ""  # the module: code cells, magics masked, boundaries between
    masked: dict[int, str] = field(default_factory=dict)  # marker number -> original line
    # cells that do not parse, masked whole so that the others are linted: per cell, the
    # error as (message, row in the module, column)
    syntax_errors: list[tuple[str, int, int]] = field(default_factory=list)
    tree: Optional[object] = field(default=None, repr=False)  # the module's ast, from the parse that checked it
    _starts: list[int] = field(default_factory=list, repr=False)

    @property
    def newline(self) -> str:
        """The line ending of the notebook's JSON text (what a rewritten source list uses)."""
        match = _NEWLINE.search(self.text)
        return match.group(0) if match else "\n"

    # -- rows ---------------------------------------------------------------------
    def locate(self, row: int) -> tuple[int, int]:
        """(cell number, row in the cell) of a module row; rows past a cell's end (the
        boundary line) stay with the cell before."""
        if not self.cells:
            return 1, row
        i = max(0, bisect.bisect_right(self._starts, row) - 1)
        cell = self.cells[i]
        return cell.number, max(1, row - cell.first_row + 1)

    def module_row(self, cell_number: int, row: int) -> Optional[int]:
        for cell in self.cells:
            if cell.number == cell_number:
                return cell.first_row + row - 1
        return None

    def cell_line(self, row: int) -> str:
        """The original text of a module row (a masked line shows as written)."""
        cell_number, in_cell = self.locate(row)
        for cell in self.cells:
            if cell.number == cell_number:
                lines = split_lines(cell.text)
                if 1 <= in_cell <= len(lines):
                    return lines[in_cell - 1].rstrip("\r\n")
        return ""

    def file_row(self, row: int) -> int:
        """The line of the notebook file holding a module row's text (for formats that
        point into the file itself: SARIF, GitHub annotations). With the usual one
        string per line layout that is the line of that string; else the line where
        the cell's source starts."""
        cell_number, in_cell = self.locate(row)
        cell = next((c for c in self.cells if c.number == cell_number), None)
        if cell is None:
            return 1
        start, end = cell.span
        first = self.text.count("\n", 0, start) + 1
        value = self.text[start:end]
        if cell.as_list and "\n" in value:
            # one element a line: element k sits k lines below the opening bracket
            return min(first + in_cell, first + value.count("\n"))
        return first

    # -- writing back ---------------------------------------------------------------
    def with_code(self, code: str) -> bytes:
        """The notebook's bytes with the cells' code replaced by `code` (the module
        after a fix). Only cells whose code changed are rewritten."""
        pieces = []
        for cell, new in zip(self.cells, self.cell_texts(code)):
            if new != cell.text:
                pieces.append((cell.span, self._source_json(cell, new)))
        text = self.text
        for (start, end), value in sorted(pieces, reverse=True):
            text = text[:start] + value + text[end:]
        return (b"\xef\xbb\xbf" if self.bom else b"") + text.encode("utf-8")

    def cell_texts(self, code: str) -> list[str]:
        """Each code cell's text in `code` (the module, after a fix): masked lines
        restored, the newline the module added after a cell's last line dropped."""
        parts = _split_module(code)
        if len(parts) != len(self.cells):
            raise NotebookError("a fix moved code across cell boundaries; the notebook was left as it was")
        out = []
        for cell, part in zip(self.cells, parts):
            new = self._unmask(part)
            if not cell.text.endswith(("\n", "\r")) and new.endswith("\n"):
                new = new[:-1]
            out.append(new)
        return out

    def _unmask(self, part: str) -> str:
        out = []
        for line in split_lines(part):
            match = _MARKER_LINE.match(line.rstrip("\r\n"))
            if match is None:
                out.append(line)
                continue
            number = int(match.group(1))
            if number not in self.masked:
                raise NotebookError("a fix changed a masked IPython line; the notebook was left as it was")
            ending = line[len(line.rstrip("\r\n")):]
            out.append(self.masked[number] + ending)
        return "".join(out)

    def _source_json(self, cell: CodeCell, new: str) -> str:
        ascii_only = self.text.isascii() and "\\u" in self.text
        if not cell.as_list:
            return json.dumps(new, ensure_ascii=ascii_only)
        old = self.text[cell.span[0]:cell.span[1]]
        lines = split_lines(new)
        if not lines:
            return "[]"
        inner, closing = _list_layout(self.text, cell.span, old)
        if inner is None:  # the source list was on one line: keep it on one line
            return "[" + ", ".join(json.dumps(line, ensure_ascii=ascii_only) for line in lines) + "]"
        nl = self.newline  # a CRLF notebook keeps CRLF in the cells it rewrites
        body = ("," + nl).join(inner + json.dumps(line, ensure_ascii=ascii_only) for line in lines)
        return "[" + nl + body + nl + closing + "]"


def _list_layout(text: str, span: tuple[int, int], old: str) -> tuple[Optional[str], str]:
    """(indent of the elements, indent of the closing bracket) of a source list, or
    (None, "") when it sits on one line."""
    line_start = text.rfind("\n", 0, span[0]) + 1
    key_indent = re.match(r"[ \t]*", text[line_start:span[0]]).group(0)
    if "\n" in old:
        match = re.match(r"\[\r?\n([ \t]*)", old)
        closing = re.search(r"\n([ \t]*)\]$", old)
        if match and closing:
            return match.group(1), closing.group(1)
        return None, ""
    if old.strip() != "[]":
        return None, ""
    # an empty list: one indent step below the key, the step the file uses
    second = text.split("\n", 2)[1].rstrip("\r") if text.count("\n") >= 1 else ""
    step = re.match(r"[ \t]*", second).group(0) or " "
    return key_indent + step, key_indent


def _split_module(code: str) -> list[str]:
    parts, current = [], []
    for line in split_lines(code):
        if line.rstrip("\r\n") == BOUNDARY:
            parts.append("".join(current))
            current = []
        else:
            current.append(line)
    parts.append("".join(current))
    return parts


# -- reading ------------------------------------------------------------------------
def read_notebook(path: str, raw: bytes) -> Notebook:
    """Parse a notebook's bytes; NotebookError says clearly what is wrong."""
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        text = raw[3 if bom else 0:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"not a Jupyter notebook: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not a Jupyter notebook: invalid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise NotebookError("not a Jupyter notebook: JSON nested too deeply") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        raise NotebookError("not a Jupyter notebook: no 'cells' list at the top level")
    nbformat = doc.get("nbformat")
    if nbformat != 4:
        raise NotebookError(f"nbformat {nbformat!r} is not supported (only nbformat 4); convert it with `jupyter nbconvert --to notebook`")
    spans = _source_spans(text)
    if len(spans) != len(doc["cells"]):
        raise NotebookError("not a Jupyter notebook: cannot locate the cells' sources")
    cells = []
    python = _is_python(doc.get("metadata"))
    for index, cell in enumerate(doc["cells"]):
        if not isinstance(cell, dict):
            raise NotebookError(f"not a Jupyter notebook: cell {index + 1} is not an object")
        if cell.get("cell_type") != "code" or not python:
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            text_of, as_list = "".join(source), True
        elif isinstance(source, str):
            text_of, as_list = source, False
        else:
            raise NotebookError(f"not a Jupyter notebook: cell {index + 1} has a source that is not text")
        if spans[index] is None:
            raise NotebookError(f"not a Jupyter notebook: cell {index + 1} has no source")
        cells.append(CodeCell(index, text_of, as_list, spans[index]))
    notebook = Notebook(path, text, bom, cells)
    _assemble(notebook)
    return notebook


def from_cells(path: str, cells: list[tuple[int, str]]) -> Notebook:
    """A notebook held by an editor: (position among all cells, text) of each code cell."""
    notebook = Notebook(path, "", False, [CodeCell(index, text, True, (0, 0)) for index, text in cells])
    _assemble(notebook)
    return notebook


def _is_python(metadata) -> bool:
    """False for notebooks of other kernels (R, Julia): nothing in them is Python."""
    if not isinstance(metadata, dict):
        return True
    for key, name in (("language_info", "name"), ("kernelspec", "language")):
        table = metadata.get(key)
        if isinstance(table, dict) and isinstance(table.get(name), str):
            return table[name].lower() in ("python", "python3", "ipython", "ipython3")
    return True


def _assemble(nb: Notebook) -> None:
    """Join the code cells into the module. A cell that does not parse (and only such a
    cell) is masked whole, its error kept in `syntax_errors`: one broken cell must not
    hide the findings of all the others (nor stop the fixes of the others)."""
    broken: dict[int, tuple[str, int, int]] = {}  # cell index in nb.cells -> (message, row in cell, column)
    while True:
        _join(nb, broken)
        error = _syntax_error(nb.code)
        if error is None or error[0] == "ok":
            nb.tree = error[1] if error else None
            break
        message, row, column = error
        cell = _cell_at(nb, row)
        if cell is None or cell in broken:
            nb.tree = None  # not one cell's error: the module is reported as it is
            break
        broken[cell] = (message, row - nb.cells[cell].first_row + 1, column)
        nb.masked.clear()
    nb.syntax_errors = [(message, nb.cells[i].first_row + row - 1, column) for i, (message, row, column) in sorted(broken.items())]


def _join(nb: Notebook, broken: dict) -> None:
    out: list[str] = []
    row = 1
    for i, cell in enumerate(nb.cells):
        if i:
            out.append(BOUNDARY + "\n")
            row += 1
        if i in broken:
            masked = "".join(_marker(line, nb.masked, keep_indent=False) for line in split_lines(cell.text))
        else:
            masked = mask_cell(cell.text, nb.masked)
        if not masked.endswith(("\n", "\r")):
            masked += "\n"
        cell.first_row = row
        cell.rows = len(split_lines(masked))
        row += cell.rows
        out.append(masked)
    nb.code = "".join(out)
    nb._starts = [c.first_row for c in nb.cells]


def _syntax_error(code: str):
    """None when nothing is to be checked; ("ok", tree) when `code` parses; else
    (message, row, column) of its error."""
    import ast
    import warnings

    from .source import syntax_error_message

    if not code:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", ast.parse(code, type_comments=False)
    except SyntaxError as exc:
        row = exc.lineno or 1
        return syntax_error_message(code, row, exc.msg), row, max(exc.offset or 1, 1)
    except (ValueError, MemoryError, RecursionError):
        return None


def _cell_at(nb: Notebook, row: int) -> Optional[int]:
    """The index (in nb.cells) of the cell holding a module row; a boundary line counts
    for the cell after it (an error there is that cell's: an indented first line)."""
    for i, cell in enumerate(nb.cells):
        if cell.first_row - (1 if i else 0) <= row < cell.first_row + cell.rows:
            return i
    return None


def _source_spans(text: str) -> list[Optional[tuple[int, int]]]:
    """(start, end) in `text` of each cell's `source` value, in cell order; None for a
    cell without one. A small walk over the JSON: only the path cells[*].source is
    followed, every other value is skipped by the stdlib decoder."""
    decoder = json.JSONDecoder()
    spans: list[Optional[tuple[int, int]]] = []

    def ws(i: int) -> int:
        return _WS.match(text, i).end()

    def members(i: int):
        """Yield (key, value start) of the object at text[i] == '{'; the caller must
        move past the value and send back its end."""
        i = ws(i + 1)
        if text[i] == "}":
            return i + 1
        while True:
            key, i = decoder.raw_decode(text, i)
            i = ws(i)
            i = ws(i + 1)  # the colon
            i = yield key, i
            i = ws(i)
            if text[i] == "}":
                return i + 1
            i = ws(i + 1)  # the comma

    def walk_object(i: int, on_member) -> int:
        gen = members(i)
        try:
            key, start = next(gen)
            while True:
                end = on_member(key, start)
                key, start = gen.send(end)
        except StopIteration as stop:
            return stop.value

    def skip(start: int) -> int:
        return decoder.raw_decode(text, start)[1]

    def cell_member(found: list):
        def on(key, start):
            end = skip(start)
            if key == "source":
                found[0] = (start, end)
            return end

        return on

    def top_member(key, start):
        if key != "cells" or text[start] != "[":
            return skip(start)
        i = ws(start + 1)
        if text[i] == "]":
            return i + 1
        while True:
            if text[i] == "{":
                found = [None]
                i = walk_object(i, cell_member(found))
                spans.append(found[0])
            else:
                i = skip(i)
                spans.append(None)
            i = ws(i)
            if text[i] == "]":
                return i + 1
            i = ws(i + 1)

    walk_object(ws(0), top_member)
    return spans


# -- masking IPython syntax ---------------------------------------------------------
def mask_cell(text: str, masked: dict[int, str]) -> str:
    """The cell's code with IPython-only lines replaced by numbered `pass` markers;
    the originals go into `masked`."""
    lines = split_lines(text)
    if not lines:
        return text
    first = lines[0].lstrip()
    if first.startswith("%%"):
        name = first[2:].split(None, 1)[0] if first[2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:
            return "".join(_marker(line, masked, keep_indent=False) for line in lines)
        return _marker(lines[0], masked, keep_indent=False) + _mask_lines(lines[1:], masked)
    return _mask_lines(lines, masked)


def _marker(line: str, masked: dict[int, str], keep_indent: bool) -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body):] or "\n"
    number = len(masked) + 1
    masked[number] = body
    indent = re.match(r"[ \t]*", body).group(0) if keep_indent else ""
    return f"{indent}{_MARKER}{number}{ending}"


def _mask_lines(lines: list[str], masked: dict[int, str]) -> str:
    out = []
    scanner = _LineState()
    continuing_magic = False
    for line in lines:
        body = line.rstrip("\r\n")
        if continuing_magic:
            out.append(_marker(line, masked, keep_indent=True))
            continuing_magic = body.endswith("\\")
            continue
        if scanner.at_statement_start() and _is_ipython_line(body, scanner):
            out.append(_marker(line, masked, keep_indent=True))
            continuing_magic = body.endswith("\\")
            continue
        out.append(line)
        scanner.feed(body)
    return "".join(out)


def _is_ipython_line(body: str, scanner: "_LineState") -> bool:
    stripped = body.strip()
    if not stripped or stripped.startswith("#"):
        return False
    if stripped[0] in "%!?":
        return True
    if _ASSIGN_MAGIC.match(body):
        return True
    code = scanner.code_part(body).rstrip()
    return code.endswith("?")


class _LineState:
    """Enough of Python's lexer to tell whether a line starts a new statement: open
    brackets, open triple-quoted strings and backslash continuations carry over."""

    def __init__(self):
        self.depth = 0
        self.quote: Optional[str] = None  # an open triple quote
        self.backslash = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.backslash

    def code_part(self, line: str) -> str:
        """The line up to its comment (the line is known to start a statement)."""
        state = _LineState()
        end = state._scan(line)
        return line[:end]

    def feed(self, line: str) -> None:
        self._scan(line)

    def _scan(self, line: str) -> int:
        """Advance over one line; return where its comment starts (or its length)."""
        i, n = 0, len(line)
        self.backslash = False
        while i < n:
            if self.quote is not None:
                j = line.find(self.quote, i)
                while j != -1 and _escaped(line, j):
                    j = line.find(self.quote, j + 1)
                if j == -1:
                    return n
                i = j + 3
                self.quote = None
                continue
            ch = line[i]
            if ch == "#":
                return i
            if ch in "\"'":
                if line.startswith(ch * 3, i):
                    self.quote = ch * 3
                    i += 3
                    continue
                j = i + 1
                while j < n and line[j] != ch:
                    j += 2 if line[j] == "\\" else 1
                i = j + 1
                continue
            if ch in "([{":
                self.depth += 1
            elif ch in ")]}":
                self.depth = max(0, self.depth - 1)
            elif ch == "\\" and i == n - 1:
                self.backslash = True
            i += 1
        return n


def _escaped(line: str, j: int) -> bool:
    k, count = j - 1, 0
    while k >= 0 and line[k] == "\\":
        count += 1
        k -= 1
    return count % 2 == 1


# -- reading notebooks for the pipeline and the reports -----------------------------
_KNOWN: dict[str, tuple[tuple, Notebook]] = {}


def remember(path: str, raw: bytes) -> Notebook:
    """Parse a notebook that is not (or not yet) on disk, such as stdin or an editor's
    buffer, and keep it for `load` to hand out."""
    nb = read_notebook(path, raw)
    nb.tree = None  # (kept for reports: no tree needed)
    _KNOWN[os.path.abspath(path)] = (("given",), nb)
    return nb


def load(path: str) -> Optional[Notebook]:
    """The notebook at `path` (parsed once per file state), or None when unreadable."""
    key = os.path.abspath(path)
    known = _KNOWN.get(key)
    if known is not None and known[0] == ("given",):
        return known[1]
    try:
        st = os.stat(path)
    except OSError:
        return None
    state = (st.st_mtime_ns, st.st_size)
    if known is not None and known[0] == state:
        return known[1]
    try:
        with open(path, "rb") as fh:
            nb = read_notebook(path, fh.read())
    except OSError:
        return None
    nb.tree = None
    _KNOWN[key] = (state, nb)
    return nb


def code_bytes(path: str, raw: bytes) -> bytes:
    """What the pipeline parses for a file's bytes: the module of a notebook's code
    cells, or the bytes themselves for any other file."""
    if not is_notebook(path):
        return raw
    return read_notebook(path, raw).code.encode("utf-8", errors="surrogatepass")


def source_of(nb: Notebook):
    """The SourceFile the pipeline lints for a notebook: its module, the errors of the
    cells masked for not parsing, and the tree of the parse that checked it."""
    from .source import ParseFailure, SourceFile

    tree, nb.tree = nb.tree, None  # handed over once, not kept with the notebook
    errors = tuple(ParseFailure(message, row, column) for message, row, column in nb.syntax_errors)
    return SourceFile(nb.path, nb.code.encode("utf-8", errors="surrogatepass"), syntax_errors=errors, tree=tree)


# -- findings in cells --------------------------------------------------------------
def in_cells(findings):
    """Findings of notebooks with rows relative to their cell (CellFinding); others
    unchanged. Done once, just before reporting."""
    out = []
    for f in findings:
        nb = load(f.path) if is_notebook(f.path) else None
        out.append(CellFinding.of(f, nb) if nb is not None else f)
    return out


@dataclass(frozen=True)
class CellRelated(Related):
    """A related place in the same notebook: `row` is relative to cell `cell`."""

    cell: int = 1
    file_row: int = 1

    @classmethod
    def of(cls, r: Related, nb: Notebook) -> "CellRelated":
        cell, row = nb.locate(r.row)
        return cls(r.path, row, r.column, r.message, cell=cell, file_row=nb.file_row(r.row))


@dataclass
class CellFinding(Finding):
    """A finding in a notebook: `start`/`end` (and fix edits) are relative to cell
    `cell`; `module_start` keeps the position in the cells' module, `file_row` the line
    of the .ipynb file (for formats that point into the file: SARIF, GitHub)."""

    cell: int = 1
    module_start: Optional[Position] = None
    file_row: int = 1

    @classmethod
    def of(cls, f: Finding, nb: Notebook) -> "CellFinding":
        values = {fl.name: getattr(f, fl.name) for fl in fields(f) if fl.init}
        cell, row = nb.locate(f.start.row)
        end_cell, end_row = nb.locate(f.end.row)
        end_col = f.end.column
        if end_cell != cell:  # ends in a later cell: stop at the start
            end_row, end_col = row, f.start.column
        values["start"] = Position(row, f.start.column)
        values["end"] = Position(end_row, end_col)
        if f.fix is not None and f.fix.edits:
            edits = []
            for e in f.fix.edits:
                _, r1 = nb.locate(e.location.row)
                _, r2 = nb.locate(e.end_location.row)
                edits.append(Edit(e.content, Position(r1, e.location.column), Position(r2, e.end_location.column)))
            values["fix"] = replace(f.fix, edits=edits)
        same = os.path.abspath(f.path)
        values["related"] = [
            CellRelated.of(r, nb) if os.path.abspath(r.path) == same else r for r in (f.related or [])
        ]
        return cls(**values, cell=cell, module_start=f.start, file_row=nb.file_row(f.start.row))

    def sort_key(self):
        start = self.module_start or self.start
        return (self.path, start.row, start.column, self.code)

