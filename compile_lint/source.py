"""Reading a file and parsing it with the standard library's `ast`.

Detection runs on `ast` (about 8x faster to parse than libcst, see
shared/perf-notes.md); only files that get rewritten are parsed by libcst.
`ast.parse` is given the raw bytes so it honours a BOM and a coding cookie.
"""
from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
import warnings
from dataclasses import dataclass, field
from typing import Optional

from .model import Position


class ParseFailure(Exception):
    """The file is not Python this interpreter can parse (reported as CL000)."""

    def __init__(self, message: str, row: int = 1, column: int = 1):
        super().__init__(message)
        self.message = message
        self.row = row
        self.column = column


@dataclass
class SourceFile:
    path: str
    data: bytes
    # a notebook's cells that do not parse (masked in `data`): reported as CL000 each
    syntax_errors: tuple = ()
    tree: Optional[ast.Module] = field(default=None, repr=False)  # already parsed (a notebook's check)
    _lines: Optional[list[bytes]] = field(default=None, repr=False)
    _text_lines: Optional[dict[int, str]] = field(default=None, repr=False)
    _encoding: Optional[str] = field(default=None, repr=False)

    @property
    def encoding(self) -> str:
        if self._encoding is None:
            try:
                self._encoding = tokenize.detect_encoding(io.BytesIO(self.data).readline)[0]
            except SyntaxError:
                self._encoding = "utf-8"
        return self._encoding

    @property
    def byte_lines(self) -> list[bytes]:
        if self._lines is None:
            data = self.data[3:] if self.data.startswith(b"\xef\xbb\xbf") else self.data
            self._lines = data.splitlines(keepends=True) or [b""]
        return self._lines

    def text_line(self, row: int) -> str:
        """The text of 1-based line `row`, without its line ending."""
        if self._text_lines is None:
            self._text_lines = {}  # row -> text, decoded when asked (a report shows a few lines)
        found = self._text_lines.get(row)
        if found is None:
            lines = self.byte_lines
            if not 1 <= row <= len(lines):
                return ""
            enc = self.encoding
            if enc == "utf-8-sig":
                enc = "utf-8"
            found = self._text_lines[row] = lines[row - 1].decode(enc, errors="replace").rstrip("\r\n")
        return found

    def position(self, lineno: int, byte_col: int) -> Position:
        """Convert ast's (1-based line, 0-based UTF-8 byte offset) to a Position."""
        if 1 <= lineno <= len(self.byte_lines):
            line = self.byte_lines[lineno - 1]
            if line.isascii():
                return Position(lineno, byte_col + 1)
            return Position(lineno, len(line[:byte_col].decode("utf-8", errors="replace")) + 1)
        return Position(lineno, byte_col + 1)

    def node_range(self, node: ast.AST) -> tuple[Position, Position]:
        start = self.position(node.lineno, node.col_offset)
        end_line = getattr(node, "end_lineno", None) or node.lineno
        end_col = getattr(node, "end_col_offset", None)
        end = self.position(end_line, end_col if end_col is not None else node.col_offset)
        return start, end

    def parse(self) -> ast.Module:
        if self.tree is not None:
            tree, self.tree = self.tree, None
            return tree
        try:
            with warnings.catch_warnings():
                # invalid escape sequences etc. are the user's business, not ours
                warnings.simplefilter("ignore")
                return ast.parse(self.data, filename=self.path, type_comments=False)
        except SyntaxError as exc:
            row = exc.lineno or 1
            col = exc.offset or 1
            raise ParseFailure(syntax_error_message(self.data, row, exc.msg), row, max(col, 1)) from None
        except (ValueError, UnicodeDecodeError, MemoryError, RecursionError) as exc:
            raise ParseFailure(f"cannot parse: {exc}") from None


# PEP 695's statements, as the line a 3.11 parser stops on begins: `type Alias = ...`,
# `type Alias[T] = ...`, `def f[T](...)`, `async def f[T](...)`, `class C[T]:`
_PEP_695_LINE = re.compile(rb"\s*(?:type\s+[A-Za-z_]\w*\s*[\[=]|(?:async\s+)?def\s+[A-Za-z_]\w*\s*\[|class\s+[A-Za-z_]\w*\s*\[)")


def syntax_error_message(data, row: int, msg: Optional[str]) -> str:
    """CL000's message for a SyntaxError at line `row` of `data` (bytes or str, a file or a
    notebook's cells): "SyntaxError: ...", or, for syntax valid on a newer Python, what
    happened first: the code is valid, this Python cannot read it (a reader took
    "SyntaxError" for a defect of the code: neosr, which declares Python ^3.12,
    bench/fresh_reads batch 13)."""
    msg = msg or "invalid syntax"
    newer = _newer_syntax(data, row, msg)
    if newer is None:
        return f"SyntaxError: {msg}"
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return (f"not linted: valid from Python {newer} on; compile-lint runs on {here}, whose parser says \"{msg}\" "
            f"(run compile-lint on Python {newer}+)")


def _newer_syntax(data, row: int, msg: str) -> Optional[str]:
    """The Python release from which the line this Python's parser stopped on is valid,
    or None: PEP 701 (3.12) lets an f-string reuse its quotes and hold backslashes inside
    `{}`, PEP 695 (3.12) adds `type X = ...` and `def f[T](...)`/`class C[T]:`, PEP 758
    (3.14) allows `except A, B:` without parentheses (and without `as`: TheAnimeScripter,
    bench/dev22). compile-lint reads files with the parser of the Python it runs on."""
    if sys.version_info < (3, 12) and (msg.startswith("f-string") or _pep_695(data, row)):
        return "3.12"
    if sys.version_info < (3, 14) and msg == "multiple exception types must be parenthesized" \
            and not re.search(rb"\bas\s+[A-Za-z_]\w*\s*:", _line(data, row)) and _rest_parses(data):
        return "3.14"
    return None


# an `except` clause naming several types without parentheses, on one line: PEP 758's form
_BARE_EXCEPT_TUPLE = re.compile(rb"^([ \t]*except[ \t]+)(?!\()([^:#\n]*,[^:#\n]*?)([ \t]*:)", re.M)


def _rest_parses(data) -> bool:
    """Whether the file parses here once its `except A, B:` clauses are parenthesized: a
    Python 2 file (`except IOError, e:` beside `print 'done'`) is valid on no Python 3,
    so the first error is no sign of 3.14 (DB's ic15 evaluation script, bench/fresh_reads
    batch 18). A remaining error that is itself newer syntax still counts as valid."""
    text = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    fixed = _BARE_EXCEPT_TUPLE.sub(rb"\1(\2)\3", text)
    try:
        ast.parse(fixed)
    except SyntaxError as err:
        if err.msg == "multiple exception types must be parenthesized":
            return True  # a clause the rewrite does not read (over several lines): as before
        return _newer_syntax(fixed, err.lineno or 0, err.msg or "") is not None
    except (ValueError, MemoryError, RecursionError):
        return False
    return True


def _line(data, row: int) -> bytes:
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    lines = data.splitlines()
    return lines[row - 1] if 0 < row <= len(lines) else b""


def _pep_695(data, row: int) -> bool:
    """Whether line `row` of `data` (bytes or str) starts a PEP 695 statement."""
    return _PEP_695_LINE.match(_line(data, row)) is not None


def source_for(path: str, data: bytes) -> SourceFile:
    """The SourceFile for a file's bytes as read from disk: for a notebook, the module
    of its code cells (compile_lint.notebook; NotebookError when it is not one)."""
    if path.endswith(".ipynb"):
        from .notebook import read_notebook, source_of

        return source_of(read_notebook(path, data))
    return SourceFile(path, data)
