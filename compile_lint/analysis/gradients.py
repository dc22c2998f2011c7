"""Which expressions can carry a gradient.

A gradient flows only through differentiable float tensors. Comparisons, boolean and
bitwise ops, counts (`(x > t).sum()`), integer casts (`.long()`), `.detach()`,
`argmax`, sizes and Python numbers (parameters annotated `int` / `float` / `bool`) carry none, and neither does arithmetic on them
only. Code lexically under `torch.no_grad()` / `torch.inference_mode()` records none.
"""
from __future__ import annotations

import ast
from typing import Optional

# methods whose result never requires grad
NO_GRAD_METHODS = frozenset({
    "detach", "long", "int", "short", "byte", "bool", "char", "argmax", "argmin", "argsort",
    "count_nonzero", "numel", "nonzero", "size", "dim", "item", "tolist", "eq", "ne", "gt", "ge",
    "lt", "le", "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not",
    "logical_xor", "sign", "floor", "ceil", "round", "trunc", "all", "any",
})
# methods whose result carries a gradient only if their receiver does
PASS_METHODS = frozenset({
    "sum", "mean", "float", "double", "half", "bfloat16", "to", "clone", "contiguous", "view",
    "reshape", "flatten", "squeeze", "unsqueeze", "expand", "permute", "transpose", "cpu", "cuda",
    "type_as", "max", "min", "amax", "amin", "abs", "clamp", "clamp_min", "clamp_max", "cumsum",
    "prod", "nansum", "float_", "t",
})
NO_GRAD_FUNCS = NO_GRAD_METHODS | frozenset({
    "arange", "zeros", "ones", "full", "empty", "tensor", "as_tensor", "scalar_tensor", "zeros_like", "ones_like",
    "full_like", "empty_like", "linspace", "eye", "randint", "bucketize", "searchsorted", "numel",
    "where_nonzero",
})
PASS_FUNCS = PASS_METHODS
NO_GRAD_CONTEXTS = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"})
PY_NUMBER_ANNOTATIONS = frozenset({"int", "float", "bool"})
PY_NUMBERS = frozenset({"builtins.len", "builtins.int", "builtins.float", "builtins.round", "builtins.sum", "builtins.max", "builtins.min", "builtins.abs"})


def _requires_grad_kw(call: ast.Call) -> bool:
    return any(kw.arg == "requires_grad" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False) for kw in call.keywords)


class GradientFacts:
    """Asks, per function, whether an expression can carry a gradient."""

    def __init__(self, facts):
        self.facts = facts
        self._assigns: dict[int, dict[str, list[ast.AST]]] = {}

    def _locals(self, func) -> dict[str, list[ast.AST]]:
        key = id(func)
        table = self._assigns.get(key)
        if table is None:
            table = {}
            for node in ast.walk(func):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            table.setdefault(target.id, []).append(node.value)
                        elif isinstance(target, (ast.Tuple, ast.List)):
                            for elt in target.elts:
                                if isinstance(elt, ast.Name):
                                    table.setdefault(elt.id, []).append(None)  # unknown part
                elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                    table.setdefault(node.target.id, []).append(node.value)
                elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                    for name in ast.walk(node.target):
                        if isinstance(name, ast.Name):
                            table.setdefault(name.id, []).append(None)
            self._assigns[key] = table
        return table

    def op_carries_no_gradient(self, op: ast.AST, arg: ast.AST) -> bool:
        """No input of the op can carry a gradient (for a division: neither side)."""
        if isinstance(op, ast.BinOp) and isinstance(op.op, (ast.Div, ast.FloorDiv)):
            return self.no_grad(op.left) and self.no_grad(op.right)
        if isinstance(op, ast.Call):
            method = isinstance(op.func, ast.Attribute) and not (self.facts.resolve(op.func) or "").startswith("torch.")
            return all(self.no_grad(i) for i in ([op.func.value] if method else []) + list(op.args))
        return self.no_grad(arg)

    def no_grad(self, expr: ast.AST, _seen: Optional[set] = None) -> bool:
        """True when `expr` cannot carry a gradient (False when it may, or is unknown)."""
        seen = _seen if _seen is not None else set()
        facts = self.facts
        if isinstance(expr, ast.Constant):
            return True
        if isinstance(expr, (ast.Compare, ast.BoolOp)):
            return True
        if isinstance(expr, ast.UnaryOp):
            return isinstance(expr.op, (ast.Not, ast.Invert)) or self.no_grad(expr.operand, seen)
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)):
                return True
            return self.no_grad(expr.left, seen) and self.no_grad(expr.right, seen)
        if isinstance(expr, ast.Subscript):
            return self.no_grad(expr.value, seen)
        if isinstance(expr, ast.Attribute):
            if expr.attr in ("shape", "ndim", "dtype", "device"):
                return True
            return False
        if isinstance(expr, ast.IfExp):
            return self.no_grad(expr.body, seen) and self.no_grad(expr.orelse, seen)
        if isinstance(expr, ast.Call):
            dotted = facts.resolve(expr.func) or ""
            if dotted in PY_NUMBERS:
                return True
            if isinstance(expr.func, ast.Attribute) and not dotted.startswith("torch."):
                name = expr.func.attr
                if name in NO_GRAD_METHODS:
                    return True
                if name in PASS_METHODS:
                    return self.no_grad(expr.func.value, seen)
                return False
            if dotted.startswith("torch."):
                name = dotted.rsplit(".", 1)[-1]
                if name in NO_GRAD_FUNCS and not _requires_grad_kw(expr):
                    return True
                if name in PASS_FUNCS and expr.args:
                    return self.no_grad(expr.args[0], seen)
                if name == "where" and len(expr.args) == 3:
                    return self.no_grad(expr.args[1], seen) and self.no_grad(expr.args[2], seen)
            return False
        if isinstance(expr, ast.Name):
            func = facts.enclosing_function(expr)
            if func is None or isinstance(func, ast.Lambda):
                return False
            if (id(func), expr.id) in seen:
                return True  # `xs = f(xs)`: the name's other values decide
            values = self._locals(func).get(expr.id)
            if not values:
                param = _parameter(func, expr.id)
                return param is not None and _python_number_annotation(param.annotation)
            if not values or any(v is None for v in values):
                return False
            seen.add((id(func), expr.id))
            return all(self.no_grad(v, seen) for v in values)
        return False


def _parameter(func, name: str) -> Optional[ast.arg]:
    args = func.args
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if arg is not None and arg.arg == name:
            return arg
    return None


def _python_number_annotation(annotation: Optional[ast.AST]) -> bool:
    """`int`, `float`, `bool` (or a string of one): a Python number never carries a gradient."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value in PY_NUMBER_ANNOTATIONS
    return isinstance(annotation, ast.Name) and annotation.id in PY_NUMBER_ANNOTATIONS


def under_no_grad(facts, node: ast.AST) -> bool:
    """`node` runs under `with torch.no_grad():` / `torch.inference_mode()`, or in a def
    decorated with them, in the same function."""
    for anc in facts.ancestors(node):
        if isinstance(anc, (ast.With, ast.AsyncWith)):
            for item in anc.items:
                ctx = item.context_expr
                target = ctx.func if isinstance(ctx, ast.Call) else ctx
                if facts.resolve(target) in NO_GRAD_CONTEXTS:
                    return True
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in anc.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if facts.resolve(target) in NO_GRAD_CONTEXTS:
                    return True
            return False
    return False
