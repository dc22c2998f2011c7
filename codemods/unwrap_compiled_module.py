"""CL511: `m.state_dict()` -> `getattr(m, "_orig_mod", m).state_dict()` (and the same for
`load_state_dict`) where `m` may hold a `torch.compile` wrapper: the original module's
keys, whether or not `m` was compiled on this run."""
from __future__ import annotations

import libcst as cst

from .base import FindingCodemod, parse_expr


class UnwrapCompiledModule(FindingCodemod):
    RULE = "CL511"
    DESCRIPTION = "Read and load the state of the module a torch.compile wrapper holds."

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        data = self.target_data(original)
        func = updated.func
        if data is None or not isinstance(func, cst.Attribute) or func.attr.value != data.get("method"):
            return updated
        receiver = cst.Module([]).code_for_node(func.value)
        unwrapped = parse_expr(f'getattr({receiver}, "_orig_mod", {receiver})')
        return updated.with_changes(func=func.with_changes(value=unwrapped))


class UnwrapCompiledHook(UnwrapCompiledModule):
    """CL513: register a backward hook on the module a torch.compile wrapper holds."""

    RULE = "CL513"
    DESCRIPTION = "Register backward hooks on the module a torch.compile wrapper holds."
