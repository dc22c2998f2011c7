"""Code that never runs while Dynamo traces: the eager side of compile tests.

Libraries keep their data-dependent fast paths and checks out of `torch.compile` with a
test of whether Dynamo is tracing: `if not torch.compiler.is_compiling(): ...`, a
project wrapper of it (`kornia.core.utils.is_compiling`), a name bound to it
(`compiling = torch.compiler.is_compiling()`), one operand of `and`/`or`
(`if x.device.type == "cpu" and not is_compiling():`), or an early exit
(`if torch.jit.is_tracing() or is_compiling(): return False`, then the eager-only code).
`torch.jit.is_tracing()` / `is_scripting()` are False under torch.compile (measured:
hazards.md), so their `else` is what Dynamo compiles.

`compiling_value(test)` says what a test is while Dynamo traces: True, False, or None
(unknown). `eager_only(node)` is true when no path Dynamo traces reaches `node`.
"""
from __future__ import annotations

import ast
from typing import Optional

from .facts import FUNCTION_NODES, ModuleFacts
from .feature_tests import feature_test
from .torch_api import JIT_ONLY_FUNCS

EXITS = (ast.Return, ast.Raise)
# what a `hasattr` feature test may ask about that exists wherever Dynamo traces
DYNAMO_FEATURES = frozenset({"torch._dynamo", "torch.compiler", "torch.compile", "torch.compiler.is_compiling",
                             "torch._dynamo.is_compiling", "torch.compiler.is_dynamo_compiling"})


def compiling_value(facts: ModuleFacts, test: ast.AST, depth: int = 0) -> Optional[bool]:
    """The value of `test` whenever Dynamo traces it (None: it depends on other things)."""
    from .region_queries import is_compiling_test

    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = compiling_value(facts, test.operand, depth)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [compiling_value(facts, v, depth) for v in test.values]
        if isinstance(test.op, ast.Or):
            return True if True in values else (False if all(v is False for v in values) else None)
        return False if False in values else (True if all(v is True for v in values) else None)
    if isinstance(test, ast.Call):
        if is_compiling_test(facts, test):
            return True
        feature = feature_test(facts, test)
        if feature is not None and feature[2] in DYNAMO_FEATURES:
            return True  # `hasattr(torch, "_dynamo")`: true wherever Dynamo traces
        if facts.resolve(test.func) in JIT_ONLY_FUNCS:
            return False
        return None
    if isinstance(test, ast.Name) and depth < 2:
        bound = single_binding(facts, test)
        return compiling_value(facts, bound, depth + 1) if bound is not None else None
    return None


def single_binding(facts: ModuleFacts, name: ast.Name) -> Optional[ast.expr]:
    """The value of the one assignment of `name` in its function (or the module when the
    function does not bind it), when there is exactly one."""
    func = facts.enclosing_function(name)
    scopes = [func] if func is not None else []
    scopes.append(facts.tree)
    for scope in scopes:
        values = []
        body = scope.body if isinstance(scope.body, list) else [scope.body]
        for stmt in _statements(body, descend=scope is not facts.tree):
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name.id for t in stmt.targets):
                values.append(stmt.value)
            elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For)) and isinstance(getattr(stmt, "target", None), ast.Name) \
                    and stmt.target.id == name.id:
                values.append(None)
        if values:
            return values[0] if len(values) == 1 else None
        if scope is func and isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = func.args
            if any(a.arg == name.id for a in args.posonlyargs + args.args + args.kwonlyargs):
                return None  # a parameter: the caller decides
    return None


def _statements(body, descend: bool):
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if descend:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list):
                    yield from _statements(inner, descend)
            for handler in getattr(stmt, "handlers", ()) or ():
                yield from _statements(handler.body, descend)


def _always_exits(body: list) -> bool:
    return bool(body) and isinstance(body[-1], EXITS)


def eager_only(facts: ModuleFacts, node: ast.AST) -> bool:
    """No path Dynamo traces reaches `node`: it sits in the branch of an `if` (or a
    conditional expression, or an operand of `and`/`or`) that a compile test closes
    while Dynamo traces, or after an `if` that returns or raises whenever Dynamo traces."""
    child = node
    for anc in facts.ancestors(node):
        if isinstance(anc, (ast.If, ast.IfExp)) and child is not anc.test:
            value = compiling_value(facts, anc.test)
            in_body = child in anc.body if isinstance(anc, ast.If) else child is anc.body
            if value is not None and value != in_body:
                return True
        if isinstance(anc, ast.BoolOp):
            # `a and b`: b runs only when a is true; `a or b`: only when a is false
            index = next((i for i, v in enumerate(anc.values) if v is child), 0)
            for earlier in anc.values[:index]:
                value = compiling_value(facts, earlier)
                if value is not None and value != isinstance(anc.op, ast.And):
                    return True
        if isinstance(child, ast.stmt):
            block = _block_of(anc, child)
            if block is not None:
                for earlier in block[: block.index(child)]:
                    if isinstance(earlier, ast.If) and compiling_value(facts, earlier.test) is True \
                            and _always_exits(earlier.body):
                        return True
                    if isinstance(earlier, ast.If) and compiling_value(facts, earlier.test) is False \
                            and earlier.orelse and _always_exits(earlier.orelse):
                        return True
        if isinstance(anc, FUNCTION_NODES):
            return False
        child = anc
    return False


def _block_of(parent: ast.AST, stmt: ast.stmt) -> Optional[list]:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(s is stmt for s in block):
            return block
    for handler in getattr(parent, "handlers", ()) or ():
        if any(s is stmt for s in handler.body):
            return handler.body
    return None
