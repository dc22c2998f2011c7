"""CL201: `self.blocks = [...]` -> `self.blocks = nn.ModuleList([...])` (adds state_dict keys)."""
from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from .base import FindingCodemod, parse_expr


class WrapModuleContainer(FindingCodemod):
    RULE = "CL201"
    DESCRIPTION = "Register submodules kept in a plain list or dict with nn.ModuleList / nn.ModuleDict."

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        new = self._wrap_original(original, updated)
        return updated if new is None else updated.with_changes(value=new)

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign):
        if original.value is None:
            return updated
        new = self._wrap_original(original, updated)
        return updated if new is None else updated.with_changes(value=new)

    def _wrap_original(self, original, updated):
        data = self.target_data(original)
        if not data:
            return None
        if data.get("add_import"):
            AddImportsVisitor.add_needed_import(self.context, "torch")
        func = parse_expr(data["wrapper"])
        value = updated.value
        if isinstance(value, (cst.List, cst.Dict)) and not value.elements:
            return cst.Call(func=func)
        return cst.Call(func=func, args=[cst.Arg(value=value)])
