"""Calls that resize images, and the constant arguments they are given.

- `RESIZE`: the torch callables and modules that resize (`F.interpolate`,
  `nn.Upsample`, ...): evidence that a model works on images of a size (CL104);
- `NEAREST_SIGNATURES`: those that can resize by nearest neighbour, with the positions
  of their `scale_factor`, `mode` and `recompute_scale_factor` (CL103);
- `const_value`: an argument's value when the code gives it as a literal or a name
  bound once to one (`MISSING` for an argument not given).
"""
from __future__ import annotations

import ast

from ..semantic.walk import walk

RESIZE = frozenset(
    {
        "torch.nn.functional.interpolate", "torch.nn.functional.upsample", "torch.nn.functional.upsample_nearest",
        "torch.nn.functional.upsample_bilinear", "torch.nn.Upsample", "torch.nn.UpsamplingNearest2d",
        "torch.nn.UpsamplingBilinear2d", "torch.nn.modules.upsampling.Upsample",
    }
)
# callee -> (positions of scale_factor, mode, recompute_scale_factor; fixed mode or None)
NEAREST_SIGNATURES = {
    "torch.nn.functional.interpolate": (2, 3, 5, None),
    "torch.nn.functional.upsample": (2, 3, None, None),
    "torch.nn.functional.upsample_nearest": (2, None, None, "nearest"),
    "torch.nn.Upsample": (1, 2, 4, None),
    "torch.nn.modules.upsampling.Upsample": (1, 2, 4, None),
    "torch.nn.UpsamplingNearest2d": (1, None, None, "nearest"),
    "torch.nn.modules.upsampling.UpsamplingNearest2d": (1, None, None, "nearest"),
}
# the module classes among them (built in `__init__`, called in `forward`)
RESIZE_MODULES = frozenset(k for k in NEAREST_SIGNATURES if k.rsplit(".", 1)[-1][:1].isupper())
MISSING = object()


def const_value(facts, expr):
    """A literal, or a name bound once, in this function or at module level, to one."""
    try:
        return ast.literal_eval(expr)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if not isinstance(expr, ast.Name):
        return MISSING
    scopes = []
    func = facts.enclosing_function(expr)
    if func is not None and not isinstance(func, ast.Lambda):
        scopes.append(func.body)
    scopes.append(facts.tree.body)
    for body in scopes:
        values = []
        nodes = body if body is facts.tree.body else [n for stmt in body for n in walk(stmt)]
        for node in nodes:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == expr.id for t in node.targets):
                values.append(node.value)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name) and node.target.id == expr.id:
                values.append(node.value)
        if len(values) == 1 and values[0] is not None:
            try:
                return ast.literal_eval(values[0])
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return MISSING
        if values:
            return MISSING
    return MISSING
