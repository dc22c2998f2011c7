"""CL503: `torch.compile(x)` as a statement -> `x = torch.compile(x)`."""
from __future__ import annotations

import libcst as cst

from .base import FindingCodemod, parse_expr


class AssignCompileResult(FindingCodemod):
    RULE = "CL503"
    DESCRIPTION = "Assign the result of a discarded torch.compile(x) back to x."

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        data = self.target_data(original.value)
        if data is None or not data.get("target"):
            return updated
        return cst.Assign(
            targets=[cst.AssignTarget(parse_expr(data["target"]))],
            value=updated.value,
            semicolon=updated.semicolon,
        )
