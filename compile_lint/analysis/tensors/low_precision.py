"""The low-precision computation behind a value, and the inputs to convert.

Compiled code computes a fused fp16/bf16 expression in fp32 and rounds once; eager
rounds after every op. A value *computed* in low precision (arithmetic, elementwise
ops, reductions) therefore has different bits compiled and eager; an input of the
compiled function, or the output of a conv/matmul-like op, has the same bits in both
(it is materialized). CL302 asks:

- `low_computation`: the low-precision computation behind an operand, following local
  names in the same function and `.float()`/`.to(...)` applied after it (too late);
- `is_computation`: arithmetic, an elementwise op or a reduction;
- `inputs_to_convert`: the materialized low-precision inputs of that computation, to
  convert with `.float()` (empty when one input is itself a computation that cannot
  be converted without changing eager);
- `region_rounding`: how a region's compiled code rounds low-precision intermediates:
  like eager (a non-Inductor backend), like eager except `pow` (Inductor with
  `emulate_precision_casts = True`), or fused (Inductor's default). CL301 and CL302 ask
  it once per region.
"""
from __future__ import annotations

import ast
from typing import Optional

from .precision import CONVERT_METHODS, LOW
from ..semantic.signatures import parameter_names
from ..reach.queries import (
    ELEMENTWISE,
    call_name,
    is_number,
    region_sets_config,
    runs_inductor,
)

CONVERSIONS = frozenset({"half", "bfloat16", "to", "type"})
EAGER, EMULATED, FUSED = "eager", "emulated", "fused"


def region_rounding(facts, region) -> str:
    """EAGER, EMULATED or FUSED: how compiled code of `region` rounds fp16/bf16
    intermediates (the rounding eager does after every op, or not)."""
    if not runs_inductor(facts, region):
        return EAGER
    return EMULATED if region_sets_config(facts, region, "emulate_precision_casts", True) else FUSED


def low_computation(facts, precision, operand) -> Optional[tuple[ast.AST, bool]]:
    """(the low-precision computation, converted-after) behind a compared operand."""
    after = False
    expr = operand
    for _ in range(4):
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in ("float", "double", "to") and precision.dtype(expr) not in LOW:
            expr, after = expr.func.value, True
            continue
        if isinstance(expr, ast.Name):
            found = precision.binding(expr)
            if found is None or not isinstance(found[0], ast.AST) or facts.enclosing_function(found[1]) is not facts.enclosing_function(operand):
                return None
            expr = found[0]
            continue
        break
    if precision.dtype(expr) not in LOW or not is_computation(facts, expr):
        return None
    return expr, after


def is_computation(facts, expr) -> bool:
    if isinstance(expr, ast.BinOp):
        return not is_number(expr)
    if isinstance(expr, ast.UnaryOp):
        return isinstance(expr.op, ast.USub)
    if isinstance(expr, ast.Call):
        name = call_name(facts, expr)
        return name in ELEMENTWISE or name in ("sum", "mean", "amax", "amin", "norm")
    return False


def inputs_to_convert(facts, precision, expr, region) -> list:
    """Low-precision inputs of the computation to convert, or [] when a safe fix is not known."""
    leaves: list = []
    ok = [True]
    entry = region.via is None
    func = facts.enclosing_function(expr)

    def visit(node):
        if isinstance(node, (ast.Constant,)) or is_number(node):
            return
        if is_computation(facts, node):
            if isinstance(node, ast.BinOp):
                visit(node.left)
                visit(node.right)
            elif isinstance(node, ast.UnaryOp):
                visit(node.operand)
            else:
                dotted = facts.resolve(node.func) or ""
                if isinstance(node.func, ast.Attribute) and not dotted.startswith("torch."):
                    visit(node.func.value)
                    for arg in node.args:
                        if precision.dtype(arg) in LOW:
                            visit(arg)
                else:
                    for arg in node.args:
                        visit(arg)
            return
        dtype = precision.dtype(node)
        if dtype not in LOW:
            return
        if not _materialized(facts, precision, node, func, entry):
            ok[0] = False
            return
        leaves.append(node)

    visit(expr)
    return leaves if ok[0] else []


def _materialized(facts, precision, node, func, entry) -> bool:
    """A value with the same bits compiled and eager: an input of the compiled
    function (or a view of one), or the output of a conv/matmul-like op."""
    base = node
    while isinstance(base, (ast.Subscript, ast.Attribute)) and not (isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "self"):
        base = base.value
    if isinstance(base, ast.Name):
        found = precision.binding(base)
        if found is None:
            params = parameter_names(func.args) if func is not None and not isinstance(func, ast.Lambda) else set()
            return entry and base.id in params
        value = found[0]
        if value is base or not isinstance(value, ast.AST):
            return False
        return _materialized(facts, precision, value, func, entry) if not is_computation(facts, value) else False
    if isinstance(base, ast.Call):
        f = base.func
        if isinstance(f, ast.Attribute) and f.attr in CONVERSIONS | set(CONVERT_METHODS):
            return False
        return not is_computation(facts, base)
    return False
