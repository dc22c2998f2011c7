"""Plain data passed between the pipeline's steps (picklable, no behaviour)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

SAFE = "safe"
UNSAFE = "unsafe"
DOC_URL = "https://github.com/compile-lint/compile-lint/blob/main/docs/rules/{code}.md"  # a rule's page


@dataclass(frozen=True)
class Position:
    """1-based row and 1-based column in characters, as editors show them."""

    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace the text between two positions (end exclusive) with `content`."""

    content: str
    location: Position
    end_location: Position


@dataclass
class Fix:
    applicability: str  # SAFE or UNSAFE
    message: str
    codemod: str  # "module:Class" of the libcst codemod that performs it
    data: dict[str, Any] = field(default_factory=dict)  # facts the codemod needs
    edits: Optional[list[Edit]] = None  # filled in only when an output format needs them


@dataclass(frozen=True)
class Related:
    """Another place that explains a finding, such as the call that compiles or traces
    the code it is in. `column` is None when only the line is known."""

    path: str
    row: int
    column: Optional[int]
    message: str


@dataclass(frozen=True)
class BreakInfo:
    """The graph break a finding predicts, as Dynamo names it: the official ID and the
    registry's texts for one torch release (analysis/graph_breaks/ids.py)."""

    gb_id: str  # "GB0036"
    gb_type: str  # the break's first message line, "Dynamic shape operator"
    explanation: str
    hints: tuple  # of str
    url: str  # the page Dynamo links under the break
    torch: str  # the release whose registry the texts come from
    in_loop: Optional[str] = None  # the function whose for/while loop holds it: that frame runs eagerly (GB7000)
    recorded: Optional[str] = None  # what a recorded run saw: "confirmed GB0124", "compiled", "not reached"


@dataclass
class Finding:
    code: str
    message: str  # one line, what is wrong; the why is on the rule's page
    path: str
    start: Position
    end: Position
    fix: Optional[Fix] = None
    scope: Optional[str] = None  # top-level def/class holding the finding
    region_kind: Optional[str] = None  # "compiled" | "traced" | "cudagraph"
    related: list[Related] = field(default_factory=list)
    graph_break: Optional[BreakInfo] = None  # a graph-break finding's official ID and texts

    @property
    def row(self) -> int:
        return self.start.row

    @property
    def column(self) -> int:
        return self.start.column

    def sort_key(self):
        return (self.path, self.start.row, self.start.column, self.code)
