"""Fix edits computed from the text, without libcst, for rewrites simple enough that the
result is known to be the codemod's own.

Importing libcst costs ~0.6 s (most of a cold `check --output-format json` of a small
project) and the deprecated-AMP fix (CL507) is most of the fixes real code gets (31 of
41 on the development apps). A libcst codemod leaves every token it does not touch as it
was; where a rewrite only replaces a dotted name and inserts text before arguments, the
new code of the unit is the old code with those insertions. Each rewrite here builds
exactly that text, for the shapes where the placement of what libcst writes is fixed
(no comments, parentheses or line continuations where it inserts), and declines
(None) anything else: FileEdits then runs the codemod. The unit cut from the file and
the edit made from the new text are FileEdits' own (`_cut`, `_diff`), so an accepted
rewrite gives the same edits as the codemod; tests/test_text_fixes.py compares the two on
every rule case and on generated variants.
"""
from __future__ import annotations

import ast
import re
from typing import Callable, Optional

from .fix_edits import split_lines

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_BLANK = re.compile(r"[ \t\r\n]*\Z")
_COMMA = re.compile(r"[ \t\r\n]*,[ \t\r\n]*\Z")
_BEFORE_PAREN = re.compile(r"[ \t]*\(")


class Placed:
    """Text insertions and replacements at file positions (1-based row, 0-based
    character column), applied to the unit's dedented text."""

    def __init__(self, edits, unit, text: str, removed: list[int]):
        self.lines = edits.lines
        self.unit = unit
        self.text = text
        self.removed = removed
        self.changes: list[tuple[int, int, str]] = []  # (start offset, end offset, new text) in `text`
        starts, at = [], 0
        for line in split_lines(text):
            starts.append(at)
            at += len(line)
        self._starts = starts

    def char_col(self, row: int, byte_col: int) -> int:
        line = self.lines[row - 1]
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8", errors="surrogateescape")[:byte_col].decode("utf-8", errors="surrogateescape"))

    def offset(self, row: int, col: int) -> Optional[int]:
        """The offset in the unit's text of a file position, None outside it."""
        index = row - self.unit.first
        if not 0 <= index < len(self._starts) or col < self.removed[index]:
            return None
        return self._starts[index] + col - self.removed[index]

    def between(self, a: tuple[int, int], b: tuple[int, int]) -> Optional[str]:
        """The file's text from position a to position b (None if b is before a)."""
        if b < a:
            return None
        if a[0] == b[0]:
            return self.lines[a[0] - 1][a[1]:b[1]]
        return self.lines[a[0] - 1][a[1]:] + "".join(self.lines[a[0]:b[0] - 1]) + self.lines[b[0] - 1][:b[1]]

    def replace(self, start: tuple[int, int], end: tuple[int, int], new: str) -> bool:
        s, e = self.offset(*start), self.offset(*end)
        if s is None or e is None or e < s:
            return False
        self.changes.append((s, e, new))
        return True

    def result(self) -> str:
        text = self.text
        # the last added first: insertions at one place come out in the order they were made
        for n in sorted(range(len(self.changes)), key=lambda n: (self.changes[n][0], self.changes[n][1], n), reverse=True):
            s, e, new = self.changes[n]
            text = text[:s] + new + text[e:]
        return text


def start_of(p: Placed, node: ast.AST) -> tuple[int, int]:
    return node.lineno, p.char_col(node.lineno, node.col_offset)


def end_of(p: Placed, node: ast.AST) -> tuple[int, int]:
    return node.end_lineno, p.char_col(node.end_lineno, node.end_col_offset)


def _call_with_func_at(stmt: ast.stmt, row: int, byte_col: int) -> Optional[ast.Call]:
    """The call whose callee (a name or a dotted name, not another call) starts there."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            func = node.func
            if func.lineno == row and func.col_offset == byte_col:
                return node
    return None


def modern_amp(p: Placed, stmt: ast.stmt, finding) -> Optional[str]:
    """codemods/modern_amp.py's call form: `torch.cuda.amp.autocast(a, k=v)` ->
    `torch.amp.autocast("cuda", enabled=a, k=v)`; decorators and fixes that add or
    remove imports are left to the codemod."""
    data = finding.fix.data
    if data.get("form") != "call" or data.get("add_import") or data.get("unimport"):
        return None
    row, column = finding.start.row, finding.start.column - 1
    line = p.lines[row - 1]
    byte_col = column if line.isascii() else len(line[:column].encode("utf-8", errors="surrogateescape"))
    call = _call_with_func_at(stmt, row, byte_col)
    if call is None:
        return None
    func = call.func
    f_start, f_end = start_of(p, func), end_of(p, func)
    if f_start[0] != f_end[0] or not _DOTTED.match(p.between(f_start, f_end) or ""):
        return None  # a callee in parentheses, or spelled over lines or with spaces
    paren = _BEFORE_PAREN.match(line, f_end[1])
    if paren is None:
        return None
    after_paren = (row, paren.end())
    args = sorted([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset))
    names = data.get("positional")
    if not p.replace(f_start, f_end, f"{data['torch']}.{data['new']}"):
        return None
    device = f'"{data["device"]}"'
    if not args:
        if p.between(after_paren, end_of(p, call)) != ")":
            return None  # `f( )`, a comment or a newline inside: libcst keeps them around the new argument
        return p.result() if p.replace(after_paren, after_paren, device) else None
    first = start_of(p, args[0])
    gap = p.between(after_paren, first)
    if gap is None or not _BLANK.match(gap) or first < after_paren:
        return None  # a parenthesized first argument, a comment, a generator's shared parentheses
    if not p.replace(first, first, device + ", "):
        return None
    if names:
        if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > len(names):
            return None
        previous = None
        for index, arg in enumerate(call.args):
            at = start_of(p, arg)
            if previous is not None:
                gap = p.between(end_of(p, previous), at)
                if gap is None or not _COMMA.match(gap):
                    return None  # parentheses around an argument: libcst names the whole of it
            if not p.replace(at, at, f"{names[index]}="):
                return None
            previous = arg
    return p.result()


# codemod spec -> (its unit kind, the rewrite)
REWRITES: dict[str, tuple[str, Callable]] = {
    "codemods.modern_amp:ModernAmp": ("statement", modern_amp),
}
