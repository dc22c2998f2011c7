"""CL507: `torch.cuda.amp.autocast(...)` -> `torch.amp.autocast("cuda", ...)` and friends."""
from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from .base import FindingCodemod, parse_expr


class ModernAmp(FindingCodemod):
    RULE = "CL507"
    DESCRIPTION = "Move deprecated torch.cuda.amp / torch.cpu.amp calls to torch.amp."

    def _new_func(self, data):
        if data.get("add_import"):
            AddImportsVisitor.add_needed_import(self.context, "torch")
        if data.get("unimport"):
            RemoveImportsVisitor.remove_unused_import(self.context, *data["unimport"])
        return parse_expr(f"{data['torch']}.{data['new']}")

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if not isinstance(original.func, (cst.Name, cst.Attribute)):
            # `torch.cuda.amp.autocast()(f)`: the outer call's callee starts where the
            # finding does, but it is the inner call that is the deprecated one
            return updated
        data = self.target_data(original.func)
        if data is None:
            return updated
        device = cst.SimpleString(f'"{data["device"]}"')
        if data["form"] == "decorator":
            arg = cst.Arg(device, keyword=cst.Name("device_type"), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
            args = [arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))] + list(updated.args) if updated.args else [arg]
            return updated.with_changes(func=self._new_func(data), args=args)
        names = data.get("positional")
        args = []
        for index, arg in enumerate(updated.args):
            if names and arg.keyword is None and not arg.star:
                arg = arg.with_changes(
                    keyword=cst.Name(names[index]),
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
                )
            args.append(arg)
        first = cst.Arg(device)
        if args:
            first = first.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated.with_changes(func=self._new_func(data), args=[first, *args])

    def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator):
        data = self.target_data(original.decorator)
        if data is None or data["form"] != "decorator" or isinstance(original.decorator, cst.Call):
            return updated
        arg = cst.Arg(
            cst.SimpleString(f'"{data["device"]}"'),
            keyword=cst.Name("device_type"),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
        )
        return updated.with_changes(decorator=cst.Call(self._new_func(data), [arg]))
