"""Code that never runs while Dynamo traces: the eager side of compile tests.

Libraries keep their data-dependent fast paths and checks out of `torch.compile` with a
test of whether Dynamo is tracing: `if not torch.compiler.is_compiling(): ...`, a
project wrapper of it (`kornia.core.utils.is_compiling`), a name bound to it
(`compiling = torch.compiler.is_compiling()`), one operand of `and`/`or`
(`if x.device.type == "cpu" and not is_compiling():`), or an early exit
(`if torch.jit.is_tracing() or is_compiling(): return False`, then the eager-only code).
`torch.jit.is_tracing()` / `is_scripting()` are False under torch.compile (measured:
hazards.md), so their `else` is what Dynamo compiles.

A guard may be computed in another function: kornia's distance transform stops its
cascade early with `if i + 1 in stop_checks and not bool(mask.any()):`, where
`stop_checks = _stop_check_rounds(...) if _can_stop_cascade(image) else ()` and
`_can_stop_cascade` returns False first thing when `is_compiling()`. So a call of a def
of the file (or an imported one) whose first return under Dynamo is a constant has that
value, and `x in NAME` is False when NAME is an empty tuple, list or set whenever Dynamo
traces (a name bound once to one, or to a conditional expression that picks one).

`compiling_value(test)` says what a test is while Dynamo traces: True, False, or None
(unknown). `eager_only(node)` is true when no path Dynamo traces reaches `node`.
"""
from __future__ import annotations

import ast
from typing import Optional

from ..semantic.facts import FUNCTION_NODES, ModuleFacts
from .feature_tests import feature_test
from ..semantic.signatures import parameter_names
from ..torch_api import JIT_ONLY_FUNCS

EXITS = (ast.Return, ast.Raise)
# what a `hasattr` feature test may ask about that exists wherever Dynamo traces
DYNAMO_FEATURES = frozenset({"torch._dynamo", "torch.compiler", "torch.compile", "torch.compiler.is_compiling",
                             "torch._dynamo.is_compiling", "torch.compiler.is_dynamo_compiling"})


def compiling_value(facts: ModuleFacts, test: ast.AST, depth: int = 0) -> Optional[bool]:
    """The value of `test` whenever Dynamo traces it (None: it depends on other things)."""
    from ..reach.queries import is_compiling_test

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
        dotted = facts.resolve(test.func)
        if dotted in JIT_ONLY_FUNCS:
            return False
        if dotted == "builtins.isinstance" and len(test.args) == 2 and _names_tensor(facts, test.args[1]) \
                and shape_entry(facts, test.args[0]):
            return False  # a shape entry is an int or a SymInt under Dynamo, a tensor only to jit.trace
        return returns_when_compiling(facts, test, depth) if depth < 5 else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.In, ast.NotIn)) \
            and depth < 5 and empty_when_compiling(facts, test.comparators[0], depth + 1):
        return isinstance(test.ops[0], ast.NotIn)
    if isinstance(test, ast.Name) and depth < 2:
        bound = single_binding(facts, test)
        return compiling_value(facts, bound, depth + 1) if bound is not None else None
    return None


def _names_tensor(facts: ModuleFacts, classes: ast.AST) -> bool:
    """`torch.Tensor`, or a tuple of nothing else."""
    items = classes.elts if isinstance(classes, ast.Tuple) else [classes]
    return bool(items) and all(facts.resolve(c) == "torch.Tensor" for c in items)


def shape_entry(facts: ModuleFacts, name: ast.AST) -> bool:
    """`name` holds an entry of a tensor's shape wherever it is read: every binding of it in
    its def is `s = x.shape[i]` / `x.size(i)`, an unpacking of `x.shape` / `x.size()`
    (`b, c, h, w = x.shape`, `h, w = x.shape[-2:]`), or a loop target over one, through
    `enumerate`, `zip` and `reversed` (StyleGAN's `for idx, (size, ref_size) in
    enumerate(zip(tensor.shape, ref_shape))`). Under Dynamo such an entry is an int or a
    SymInt, never a tensor (scripts/measure/shape_element_isinstance.py: 0 graph breaks
    from a `torch.equal` under `isinstance(size, torch.Tensor)`, static or dynamic
    shapes); under `torch.jit.trace` it is a tensor. A parameter, a global or any other
    binding of the name: not known."""
    if not isinstance(name, ast.Name):
        return False
    func = facts.enclosing_function(name)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    args = func.args
    if name.id in parameter_names(args) or any(a is not None and a.arg == name.id for a in (args.vararg, args.kwarg)):
        return False
    bound = 0
    for node in ast.walk(func):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name.id in node.names:
            return False
        if not (isinstance(node, ast.Name) and node.id == name.id and not isinstance(node.ctx, ast.Load)):
            continue
        if facts.enclosing_function(node) is not func or not _binds_shape_entry(facts, node):
            return False  # (a nested def's own name is another variable: not read either way)
        bound += 1
    return bound > 0


def _binds_shape_entry(facts: ModuleFacts, target: ast.Name) -> bool:
    """The store `target` takes an entry of a tensor's shape: walk up the unpacking to the
    statement, keeping the path of tuple positions, then down the value."""
    path: list[int] = []
    node, parent = target, facts.parent(target)
    while isinstance(parent, (ast.Tuple, ast.List)) and isinstance(parent.ctx, ast.Store):
        path.append(next(i for i, e in enumerate(parent.elts) if e is node))
        node, parent = parent, facts.parent(parent)
    path.reverse()
    if isinstance(parent, ast.Assign) and node in parent.targets:
        return _shape_value(facts, parent.value, path, element=False)
    if isinstance(parent, ast.For) and parent.target is node:
        return _shape_value(facts, parent.iter, path, element=True)
    return False  # (a comprehension's target is its own scope's: not followed)


def _shape_value(facts: ModuleFacts, value: ast.AST, path: list, element: bool) -> bool:
    """`value` (an element of it, with `element`), unpacked along `path`, is a shape entry."""
    if element:
        func = value.func if isinstance(value, ast.Call) else None
        called = facts.resolve(func) if func is not None else None
        if called == "builtins.enumerate" and len(value.args) == 1 and not value.keywords:
            return bool(path) and path[0] == 1 and _shape_value(facts, value.args[0], path[1:], element=True)
        if called == "builtins.zip" and value.args and not any(isinstance(a, ast.Starred) for a in value.args):
            return bool(path) and path[0] < len(value.args) and _shape_value(facts, value.args[path[0]], path[1:], element=True)
        if called == "builtins.reversed" and len(value.args) == 1:
            return _shape_value(facts, value.args[0], path, element=True)
        return not path and _whole_shape(value)
    if not path:  # `s = x.shape[i]`, `s = x.size(i)`
        if isinstance(value, ast.Subscript) and not isinstance(value.slice, ast.Slice):
            return _whole_shape(value.value)
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size" \
            and len(value.args) == 1 and not value.keywords
    return len(path) == 1 and _whole_shape(value)  # `b, c, h, w = x.shape`, `h, w = x.shape[-2:]`


def _whole_shape(value: ast.AST) -> bool:
    """`x.shape`, `x.size()`, or a slice of either."""
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
        value = value.value
    if isinstance(value, ast.Attribute) and value.attr == "shape":
        return True
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size" \
        and not value.args and not value.keywords


def empty_when_compiling(facts: ModuleFacts, expr: ast.AST, depth: int = 0) -> bool:
    """`expr` is an empty tuple, list or set whenever Dynamo traces: a literal, a name bound
    once to one, or `a if test else ()` with `test` False under Dynamo (True: `a`)."""
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        return not expr.elts
    if isinstance(expr, ast.IfExp):
        value = compiling_value(facts, expr.test, depth)
        if value is None:
            return False
        return empty_when_compiling(facts, expr.body if value else expr.orelse, depth + 1)
    if isinstance(expr, ast.Name) and depth < 5:
        bound = single_binding(facts, expr)
        return bound is not None and empty_when_compiling(facts, bound, depth + 1)
    return False


def returns_when_compiling(facts: ModuleFacts, call: ast.Call, depth: int = 0) -> Optional[bool]:
    """The truth of what a def of this file (or an imported module-level one) returns
    whenever Dynamo traces, when its body says so before anything else returns: each
    statement in order is skipped when it cannot return (or is an `if` Dynamo never
    enters), and the first `if` Dynamo always enters that returns a constant gives it
    (kornia's `_can_stop_cascade`: `if torch.jit.is_scripting(): return False`, then
    `if torch.jit.is_tracing() or is_compiling() or ...: return False`)."""
    from ..project.context import module_def

    dotted = facts.resolve(call.func)
    if not dotted or "." not in dotted or dotted.startswith(("torch.", "builtins.")):
        return None
    found = module_def(facts, dotted)
    if found is None:
        return None
    owner, func = found
    for stmt in func.body:
        returns = [n for n in ast.walk(stmt) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))]
        if not returns:
            continue
        if not isinstance(stmt, ast.If) or stmt.orelse:
            return None
        value = compiling_value(owner, stmt.test, depth + 1)
        if value is False:
            continue  # Dynamo never enters it
        if value is True and isinstance(stmt.body[-1], ast.Return) and isinstance(stmt.body[-1].value, ast.Constant) \
                and len(returns) == 1:
            return bool(stmt.body[-1].value.value)
        return None
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
    while Dynamo traces, or after an `if` that returns or raises whenever Dynamo traces;
    or in an `except` handler that always re-raises (`except RuntimeError as e:
    print(x.size()); raise e`): Dynamo traces a handler only when its `try` raises, and
    this one ends the call with the error, so no run that completes goes through it
    (`scripts/measure/graph_break_in_reraising_except.py`: no graph break; ai-toolkit's
    LoRA forward, whose seven `print` findings were judged false in bench/fresh_reads)."""
    child = node
    for anc in facts.ancestors(node):
        if isinstance(anc, ast.ExceptHandler) and any(s is child for s in anc.body) and _always_reraises(anc):
            return True
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


def _always_reraises(handler: ast.ExceptHandler) -> bool:
    """The handler's last statement is a `raise` and nothing in it leaves otherwise
    (`return`, `break`, `continue`; a nested def's own statements aside)."""
    if not handler.body or not isinstance(handler.body[-1], ast.Raise):
        return False
    todo = list(handler.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.Return, ast.Break, ast.Continue)):
            return False
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        # nested blocks, handlers and `match` cases (not expressions: no statement in them)
        todo.extend(child for child in ast.iter_child_nodes(stmt) if not isinstance(child, ast.expr))
    return True


def eager_only_method(facts: ModuleFacts, node: ast.AST) -> bool:
    """`node` is in a method every `self.<method>(...)` call of which in its class is
    eager_only: cog-flux's `quantize_input`, called only in the `else` of
    `if self.input_scale_initialized or is_compiling():` (bench/dev14, its CL202 finding
    judged false in bench/dev_findings)."""
    from ..modules.classes import self_calls

    func = facts.enclosing_function(node)
    calls = self_calls(facts, func) if func is not None else []
    return bool(calls) and all(eager_only(facts, call) for call, _ in calls)


def _block_of(parent: ast.AST, stmt: ast.stmt) -> Optional[list]:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(s is stmt for s in block):
            return block
    for handler in getattr(parent, "handlers", ()) or ():
        if any(s is stmt for s in handler.body):
            return handler.body
    return None
