"""CL504: `m.compile(**kw)` -> `m = torch.compile(m, **kw)`."""
from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from .base import FindingCodemod, parse_expr


class ModuleCompileToTorchCompile(FindingCodemod):
    RULE = "CL504"
    DESCRIPTION = "Replace .compile() on built-in nn modules with torch.compile(module)."

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        data = self.target_data(original.value)
        if data is None or not isinstance(updated.value, cst.Call):
            return updated
        if data.get("add_import"):
            AddImportsVisitor.add_needed_import(self.context, "torch")
        call = updated.value
        args = [cst.Arg(parse_expr(data["target"]))]
        if call.args:
            args[0] = args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            args.extend(call.args)
        new_call = cst.Call(func=parse_expr(f"{data['torch']}.compile"), args=args)
        return cst.Assign([cst.AssignTarget(parse_expr(data["target"]))], new_call, semicolon=updated.semicolon)
