"""CL512: a truth test of a value that may hold a compiled module -> a test against
None (`if m:` -> `if m is not None:`, `not m` -> `m is None`), which is what a truth
test of a module (always true) or None meant."""
from __future__ import annotations

import libcst as cst

from .base import FindingCodemod, parse_expr


class NoneTest(FindingCodemod):
    RULE = "CL512"
    DESCRIPTION = "Test a value that may hold a compiled module against None instead of its truth."

    def on_leave(self, original, updated):
        updated = super().on_leave(original, updated)
        if not isinstance(original, cst.BaseExpression):
            return updated
        data = self.target_data(original)
        if data is None or not isinstance(updated, cst.BaseExpression):
            return updated
        negated = data.get("negated", False)
        if negated != (isinstance(updated, cst.UnaryOperation) and isinstance(updated.operator, cst.Not)):
            return updated  # another node starting here (the operand of `not`, an outer call)
        if not negated and _code(updated) != data.get("text"):
            return updated
        inner = updated.expression if negated else updated
        text = f"{_code(inner)} is None" if negated else f"{_code(inner)} is not None"
        return parse_expr(text).with_changes(lpar=updated.lpar, rpar=updated.rpar)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node.with_changes(lpar=[], rpar=[]) if hasattr(node, "lpar") else node)
