"""Which arithmetic is a blend, a gamma curve or a normalization.

Compiled (Inductor) code keeps fused intermediates in fp32 where eager rounds every
op's result to fp16/bf16, so multi-op pixel math in low precision gives different
pixels compiled and eager (CL301). `blend_kind` names the shape of such math in one
expression, by its meaning rather than one spelling:

- screen blend `1 - (1 - a) * (1 - b)`;
- alpha/mix blend `a * w + b * (1 - w)` (any order, `torch.ones_like` as the one);
- linear interpolation `a + (b - a) * t`, `torch.lerp`;
- gamma curve: a fractional power (`x ** (1/2.2)`, `.pow(gamma)`, `torch.pow`);
- normalization `(x - m) / s`, `x / x.sum()` (a reduction of the same value),
  `F.normalize`;
- conditional blend: a `torch.where` with at least two arithmetic ops in a branch
  (overlay, soft light).

`low_precision_part` finds the node of such an expression that runs in fp16/bf16.
"""
from __future__ import annotations

import ast
from typing import Optional

from ...analysis.tensors.precision import LOW
from ...analysis.reach.queries import ELEMENTWISE, call_name, is_number, number_value, same

REDUCTIONS = frozenset({"sum", "mean", "norm", "amax", "amin", "max", "min", "std", "var"})


def _is_one(facts, expr: ast.AST) -> bool:
    if isinstance(expr, ast.Constant) and not isinstance(expr.value, bool) and expr.value == 1:
        return True
    if isinstance(expr, ast.Call) and (facts.resolve(expr.func) or "") == "torch.ones_like":
        return True
    return False


def _factors(expr: ast.AST) -> list[ast.AST]:
    """The factors of a product `a * b * (1 - c)` (or one expression)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        return _factors(expr.left) + _factors(expr.right)
    return [expr]


def _terms(expr: ast.AST) -> list[ast.AST]:
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _terms(expr.left) + _terms(expr.right)
    return [expr]


def _complement(facts, expr: ast.AST) -> Optional[ast.AST]:
    """`w` when `expr` is `1 - w`."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Sub) and _is_one(facts, expr.left):
        return expr.right
    return None


def _arith_ops(facts, expr: ast.AST) -> int:
    """How many tensor arithmetic operations an expression performs."""
    count = 0
    for node in ast.walk(expr):
        if isinstance(node, ast.BinOp) and not is_number(node):
            count += 1
        elif isinstance(node, ast.Call) and call_name(facts, node) in ELEMENTWISE:
            count += 1
    return count


def _fractional(expr: ast.AST) -> bool:
    """An exponent that is not a whole number (`1/2.2`, `2.4`, `1/gamma`, `self.gamma`)."""
    value = number_value(expr)
    if value is not None:
        return value != int(value)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
        return True
    name = expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else ""
    return "gamma" in name.lower()


def blend_kind(facts, node: ast.AST) -> Optional[str]:
    """The kind of blend/gamma/normalize arithmetic `node` is, if any."""
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Sub) and _is_one(facts, node.left):
            if any(_complement(facts, f) is not None for f in _factors(node.right)) and len(_factors(node.right)) > 1:
                return "screen blend"
        if isinstance(node.op, ast.Add):
            terms = _terms(node)
            products = [_factors(t) for t in terms]
            weights = [w for fs in products for f in fs if (w := _complement(facts, f)) is not None]
            if weights and any(len(fs) > 1 for fs in products):
                return "alpha/mix blend"
            for i, term in enumerate(terms):
                for f in _factors(term):
                    if isinstance(f, ast.BinOp) and isinstance(f.op, ast.Sub) and len(_factors(term)) > 1:
                        if any(same(facts, other, f.right) for j, other in enumerate(terms) if j != i):
                            return "linear interpolation"
        if isinstance(node.op, ast.Pow) and _fractional(node.right):
            return "gamma curve"
        if isinstance(node.op, ast.Div) and not is_number(node.right):
            left = node.left
            if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Sub) and not is_number(left.right):
                return "normalization"
            if isinstance(node.right, ast.Call) and isinstance(node.right.func, ast.Attribute) and node.right.func.attr in REDUCTIONS:
                if same(facts, node.right.func.value, left):
                    return "normalization"
        return None
    if isinstance(node, ast.Call):
        name = call_name(facts, node)
        dotted = facts.resolve(node.func) or ""
        is_method = isinstance(node.func, ast.Attribute) and not dotted.startswith("torch.")
        if name == "lerp":
            return "linear interpolation (lerp)"
        if name in ("pow", "float_power"):
            exponent = node.args[0] if is_method and node.args else node.args[1] if len(node.args) > 1 else None
            for kw in node.keywords:
                if kw.arg == "exponent":
                    exponent = kw.value
            if exponent is not None and _fractional(exponent):
                return "gamma curve"
        if name == "normalize" and dotted == "torch.nn.functional.normalize":
            return "normalization"
        if name == "where":
            branches = node.args[1:3] if not is_method else [node.func.value] + node.args[1:2]
            if any(_arith_ops(facts, b) >= 2 for b in branches):
                return "conditional blend (overlay / soft light)"
    return None


def low_precision_part(facts, precision, node: ast.AST, kind: str) -> Optional[ast.AST]:
    """The node (the pattern or an intermediate of it) that runs in low precision."""
    if precision.dtype(node) in LOW:
        return node
    if kind == "gamma curve":
        return None  # pow itself runs in fp32 (autocast on CUDA): no skipped rounding
    for sub in ast.walk(node):
        if sub is node:
            continue
        if isinstance(sub, ast.BinOp) and not is_number(sub) and precision.dtype(sub) in LOW:
            return sub
        if isinstance(sub, ast.Call) and call_name(facts, sub) in ELEMENTWISE and precision.dtype(sub) in LOW:
            return sub
    return None
