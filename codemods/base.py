"""The base of every compile-lint codemod: find the rule's targets, rewrite them."""
from __future__ import annotations

from typing import Any, ClassVar, Iterable, Optional

import libcst as cst
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand
from libcst.metadata import PositionProvider

Target = tuple[int, int, dict]  # (1-based row, 1-based column, the finding's fix data)


class FindingCodemod(VisitorBasedCodemodCommand):
    """Rewrites the nodes that start where its rule's findings start."""

    RULE: ClassVar[str]
    DESCRIPTION: ClassVar[str] = ""
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, context: CodemodContext, targets: Optional[Iterable[Target]] = None) -> None:
        super().__init__(context)
        self._given = None if targets is None else list(targets)
        self.targets: dict[tuple[int, int], dict] = {}

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
