"""CL101: `int(x.shape[2])` -> `x.shape[2]` inside traced code."""
from __future__ import annotations

import libcst as cst

from .base import FindingCodemod


class DropShapeCast(FindingCodemod):
    RULE = "CL101"
    DESCRIPTION = "Drop int()/float() around a tensor size so that tracers keep it symbolic."

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        data = self.target_data(original)
        if not data or len(updated.args) != 1 or updated.args[0].star:
            return updated
        func = original.func
        spelled = func.value if isinstance(func, cst.Name) else None
        if spelled is None or spelled != data.get("cast"):
            return updated  # another call starting at the same place: `int(...).bit_length()`
        return updated.args[0].value
