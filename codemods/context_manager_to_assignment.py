"""CL502: `with torch.compile(m) as f:` -> `f = torch.compile(m)`; a function-wide
`with torch.compiler.disable():` -> a decorator."""
from __future__ import annotations

import libcst as cst

from .base import FindingCodemod, parse_expr


class ContextManagerToAssignment(FindingCodemod):
    RULE = "CL502"
    DESCRIPTION = "Replace torch.compile / torch.compiler.disable used as context managers."
    UNIT = "block"  # the `with` is spliced into its block, or its function decorated

    def _with_target(self, stmt):
        if isinstance(stmt, cst.With) and len(stmt.items) == 1 and isinstance(stmt.body, cst.IndentedBlock):
            return self.target_data(stmt.items[0].item)
        return None

    def _flatten(self, original, block):
        new_body = []
        changed = False
        if len(original.body) != len(block.body):
            return block
        for orig, stmt in zip(original.body, block.body):
            data = self._with_target(orig)
            if data is None or data.get("kind") != "assign":
                new_body.append(stmt)
                continue
            changed = True
            call = stmt.items[0].item
            assign = cst.SimpleStatementLine(
                [cst.Assign([cst.AssignTarget(parse_expr(data["target"]))], call)],
                leading_lines=stmt.leading_lines,
                trailing_whitespace=stmt.body.header,
            )
            new_body.append(assign)
            new_body.extend(stmt.body.body)
        return block.with_changes(body=new_body) if changed else block

    def leave_IndentedBlock(self, original, updated):
        return self._flatten(original, updated)

    def leave_Module(self, original, updated):
        return self._flatten(original, updated)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        body = updated.body
        if not isinstance(body, cst.IndentedBlock):
            return updated
        for index, stmt in enumerate(original.body.body):
            data = self._with_target(stmt)
            if data is None or data.get("kind") != "decorate":
                continue
            with_stmt = body.body[index]
            expr = with_stmt.items[0].item
            if isinstance(expr, cst.Call) and not expr.args:
                expr = expr.func  # `@torch.compiler.disable`, the usual spelling
            decorator = cst.Decorator(expr)
            inner = list(with_stmt.body.body)
            if inner:
                inner[0] = inner[0].with_changes(leading_lines=[*with_stmt.leading_lines, *inner[0].leading_lines])
            new_body = list(body.body[:index]) + inner + list(body.body[index + 1 :])
            return updated.with_changes(
                decorators=[*updated.decorators, decorator],
                body=body.with_changes(body=new_body),
            )
        return updated
