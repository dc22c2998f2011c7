"""CL103: nearest resize with a fractional scale -> `recompute_scale_factor=True`."""
from __future__ import annotations

import libcst as cst

from .base import FindingCodemod


def _callee_name(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return ""


def append_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """`call` with `name=value` added last, keeping one-line and one-per-line layouts."""
    args = list(call.args)
    new = cst.Arg(value=value, keyword=cst.Name(name), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    if isinstance(last.comma, cst.Comma):
        # a trailing comma: the new argument takes it, the old last one takes the separator
        if len(args) > 1 and isinstance(args[-2].comma, cst.Comma):
            separator = args[-2].comma
        elif isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
            separator = cst.Comma(whitespace_after=call.whitespace_before_args)  # one argument per line
        else:
            separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        args[-1] = last.with_changes(comma=separator)
        new = new.with_changes(comma=last.comma)
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*args, new])


class RecomputeScaleFactor(FindingCodemod):
    RULE = "CL103"
    DESCRIPTION = "Pass recompute_scale_factor=True to nearest resizes with a fractional scale."

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        data = self.target_data(original)
        if not data or _callee_name(original.func) != data.get("callee"):
            return updated
        for i, arg in enumerate(updated.args):
            if arg.keyword is not None and arg.keyword.value == "recompute_scale_factor":
                args = list(updated.args)
                args[i] = arg.with_changes(value=cst.Name("True"))
                return updated.with_changes(args=args)
        return append_keyword(updated, "recompute_scale_factor", cst.Name("True"))
