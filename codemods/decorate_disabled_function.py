"""CL505: `disable(f)(x)` inside a compiled region -> `@disable def f` + `f(x)`."""
from __future__ import annotations

import libcst as cst

from .base import FindingCodemod, parse_expr


class DecorateDisabledFunction(FindingCodemod):
    RULE = "CL505"
    DESCRIPTION = "Decorate functions with torch.compiler.disable at module scope instead of wrapping inline."
    UNIT = "module"  # the decorated def is found by name

    def visit_Module(self, node: cst.Module) -> None:
        self.to_decorate: dict[str, str] = {}

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        data = self.target_data(original)
        if data is None:
            return updated
        if data.get("decorate"):
            self.to_decorate[data["function"]] = data["decorator"]
        return updated.with_changes(func=cst.Name(data["function"]), args=updated.args)

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        if not self.to_decorate:
            return updated
        body = []
        for stmt in updated.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value in self.to_decorate:
                decorator = cst.Decorator(parse_expr(self.to_decorate.pop(stmt.name.value)))
                # the decorator takes the def's leading comments and blank lines
                stmt = stmt.with_changes(
                    decorators=[decorator.with_changes(leading_lines=stmt.leading_lines), *stmt.decorators],
                    leading_lines=[],
                ) if not stmt.decorators else stmt.with_changes(decorators=[*stmt.decorators, decorator])
            body.append(stmt)
        return updated.with_changes(body=body)
