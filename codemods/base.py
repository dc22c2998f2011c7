"""The base of every compile-lint codemod: find the rule's targets, rewrite them."""
from __future__ import annotations

from typing import Any, ClassVar, Iterable, Optional

import libcst as cst
from libcst.codemod import Codemod, CodemodContext, VisitorBasedCodemodCommand
from libcst.metadata import PositionProvider

Target = tuple[int, int, dict]  # (1-based row, 1-based column, the finding's fix data)
_PLAIN: dict[type, bool] = {}  # codemod classes without matcher decorators (FindingCodemod.__init__)


class FindingCodemod(VisitorBasedCodemodCommand):
    """Rewrites the nodes that start where its rule's findings start.

    `compile-lint fix` runs a codemod on the smallest part of the file that holds what it
    changes (compile_lint/fix_edits.py): `UNIT` says which part that is, `touched_points`
    where the changes are. Both default to the statement around the finding."""

    RULE: ClassVar[str]
    DESCRIPTION: ClassVar[str] = ""
    METADATA_DEPENDENCIES = (PositionProvider,)
    # "statement": the innermost statement around each touched point; "block": the
    # statement around that one (a codemod that removes or splices statements of a block);
    # "module": the whole file (a codemod that changes a place found by name)
    UNIT: ClassVar[str] = "statement"

    def __init__(self, context: CodemodContext, targets: Optional[Iterable[Target]] = None) -> None:
        cls = type(self)
        if _PLAIN.get(cls):
            # libcst's matcher machinery scans every attribute of the instance (dir() and
            # getattr, twice) for matcher decorators: 60% of one fix's cost on a small
            # statement. A class that has none is known after its first instance.
            Codemod.__init__(self, context)
            self._extra_visit_funcs, self._extra_leave_funcs = {}, {}
            self._matchers = {}
        else:
            super().__init__(context)
            _PLAIN[cls] = not (self._extra_visit_funcs or self._extra_leave_funcs or self._matchers)
        self._given = None if targets is None else list(targets)
        self.targets: dict[tuple[int, int], dict] = {}
        # (line, 0-based column) of every place this run may change, set by compile-lint's
        # fixer: subtrees holding none of them are not visited (their nodes stay as they are)
        self.visit_points: Optional[list[tuple[int, int]]] = None

    @classmethod
    def touched_points(cls, row: int, column: int, data: dict) -> Iterable[tuple[int, int]]:
        """(1-based row, 1-based column) of the places a finding's fix changes: its own
        start, and for codemods that change other places, those (from its fix data)."""
        return [(row, column)]

    def on_visit(self, node: cst.CSTNode) -> bool:
        points = self.visit_points
        # (a def's or class's position starts at `def`/`class`: its decorators lie before)
        if points is not None and not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            try:
                rng = self.get_metadata(PositionProvider, node)
            except KeyError:
                rng = None
            if rng is not None:
                start, end = (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)
                if not any(start <= p <= end for p in points):
                    return False  # nothing to change below: its leave_* still runs
        return super().on_visit(node)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        targets = self._given
        if targets is None:
            # Run by libcst's own runner: ask the rule where it fires in this file.
            from compile_lint.api import fix_targets

            targets = fix_targets(tree.bytes, self.context.filename or "<codemod>", self.RULE)
        self.targets = {(row, col): data for row, col, data in targets}
        if not self.targets:
            return tree
        return tree.visit(self)

    def target_data(self, node: cst.CSTNode) -> Optional[dict[str, Any]]:
        """The fix data of the finding that starts at `node`, if one does."""
        try:
            pos = self.get_metadata(PositionProvider, node).start
        except KeyError:
            return None
        return self.targets.get((pos.line, pos.column + 1))


def parse_expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def remove_statements(block, is_target):
    """`block` (a Module or IndentedBlock) without the statements `is_target` picks.

    Comment lines above a removed statement are kept: moved onto the next statement,
    or into the block's footer; a block left empty gets `pass`.
    """
    out = []
    carried: list = []
    for stmt in block.body:
        if is_target(stmt):
            carried.extend(stmt.leading_lines)
            continue
        if carried:
            stmt = stmt.with_changes(leading_lines=[*carried, *stmt.leading_lines])
            carried = []
        out.append(stmt)
    if len(out) == len(block.body):
        return block
    if not out and isinstance(block, cst.IndentedBlock):
        out.append(cst.SimpleStatementLine([cst.Pass()], leading_lines=carried))
        carried = []
    return block.with_changes(body=out, footer=[*carried, *block.footer])
