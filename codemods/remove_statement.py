"""CL506: remove the statement a finding points at (comments above it are kept)."""
from __future__ import annotations

import libcst as cst

from .base import FindingCodemod, remove_statements


class RemoveStatement(FindingCodemod):
    RULE = "CL506"
    DESCRIPTION = "Remove statements that set torch._dynamo.config.suppress_errors."
    UNIT = "block"  # an emptied block gets `pass`

    def _is_target(self, stmt) -> bool:
        return (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and self.target_data(stmt.body[0]) is not None
        )

    def leave_SimpleStatementLine(self, original, updated):
        """`a = 1; <target>` on one line: drop only the target."""
        if len(original.body) > 1 and all(o is u for o, u in zip(original.body, updated.body)):
            kept = [u for o, u in zip(original.body, updated.body) if self.target_data(o) is None]
            if kept and len(kept) != len(updated.body):
                kept[-1] = kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
                return updated.with_changes(body=kept)
        return updated

    def leave_IndentedBlock(self, original, updated):
        return self._remove(original, updated)

    def leave_Module(self, original, updated):
        return self._remove(original, updated)

    def _remove(self, original, updated):
        if len(original.body) != len(updated.body):
            return updated
        picked = {id(u) for o, u in zip(original.body, updated.body) if self._is_target(o)}
        if not picked:
            return updated
        return remove_statements(updated, lambda stmt: id(stmt) in picked)
