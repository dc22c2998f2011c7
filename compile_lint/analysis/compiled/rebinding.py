"""Can later code tell that a name was rebound to its compiled wrapper?

The fixes of CL503, CL504 and CL502 write `m = torch.compile(m)`: from that statement on,
`m` is the wrapper (an OptimizedModule, or a compiled function), not the object it held.
Calling it is what the fix is for; other uses see the difference. Measured on torch
2.13 CPU (scripts/measure/rebinding_fix_observers.py), for a module and for a function:

- `torch.jit.trace`, `torch.fx.symbolic_trace` (and for a module `torch.jit.script`) of
  the wrapper raise ("... torch.jit.trace a dynamo-optimized function"); `torch.onnx.export`
  traces the same way;
- `pickle`/`torch.save` of a compiled function raise; of a module they save the wrapper;
- `m is original`, `type(m)`, `isinstance(m, Net)`, `copy.deepcopy(m)` differ;
- `m.state_dict()`, `named_parameters()` and friends gain an `_orig_mod.` prefix on
  every key, and `m.load_state_dict(...)` of the original's keys fails;
- `torch.export.export(m, ...)`, `m.eval()`, `m.to(...)`, `m.parameters()` and calls
  behave the same.

`later_observer` finds such a use of the name after the fixed statement (in the same
function, or anywhere in the module for a module-level name, since a function defined
anywhere may run later; for `self.x`, anywhere in the class), so the rule can offer the
fix as unsafe, saying why. Uses through another function the name is passed to are not
followed.
"""
from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..semantic.facts import ModuleFacts
from ..torch_api import TRACERS

# calls that see the identity or type of their argument: what each does with the wrapper
_TRACE = "cannot trace the compiled wrapper: it raises"
OBSERVING_CALLS = {
    **{name: _TRACE for name in TRACERS},
    "torch.jit.script": "cannot script the compiled wrapper: it raises",
    "torch.onnx.export": _TRACE,
    "torch.onnx._export": _TRACE,
    "torch.onnx.utils.export": _TRACE,
    "pickle.dump": "pickles the wrapper, and a compiled function does not pickle",
    "pickle.dumps": "pickles the wrapper, and a compiled function does not pickle",
    "torch.save": "saves the wrapper, and a compiled function does not pickle",
    "copy.deepcopy": "copies the wrapper, not the original",
    "copy.copy": "copies the wrapper, not the original",
    "builtins.id": "sees another object",
    "builtins.type": "sees the wrapper's type",
    "builtins.isinstance": "sees the wrapper's type",
}
# attributes whose results change: checkpoint keys gain `_orig_mod.`
OBSERVING_ATTRS = {
    "state_dict": "gets keys prefixed `_orig_mod.`",
    "load_state_dict": "expects keys prefixed `_orig_mod.`: the original's fail",
    "named_parameters": "gets names prefixed `_orig_mod.`",
    "named_buffers": "gets names prefixed `_orig_mod.`",
    "named_modules": "gets names prefixed `_orig_mod.`",
    "named_children": "gets the wrapper's one child",
    "__class__": "sees the wrapper's type",
}


def later_observer(facts: ModuleFacts, stmt: ast.stmt, target: str) -> Optional[str]:
    """How a later use of `target` (a name, or `self.x`-like text) would see it rebound
    by a fix of `stmt`, e.g. "line 7 passes `up` to `torch.jit.trace`, which cannot
    trace the compiled wrapper: it raises"; None when no use can tell."""
    for use in _later_uses(facts, stmt, target):
        reason = _observes(facts, use, target)
        if reason is not None:
            return f"line {use.lineno} {reason}"
    return None


def _later_uses(facts: ModuleFacts, stmt: ast.stmt, target: str) -> Iterator[ast.expr]:
    end = stmt.end_lineno or stmt.lineno
    is_name = "." not in target
    if is_name:
        function = facts.enclosing_function(stmt)
        if function is None:  # module level: later lines, and any function (it may run later)
            for node in facts.nodes(ast.Name):
                if node.id == target and isinstance(node.ctx, ast.Load) and (
                        node.lineno > end or facts.enclosing_function(node) is not None):
                    yield node
            return
        loops = [a for a in facts.ancestors(stmt) if isinstance(a, (ast.For, ast.AsyncFor, ast.While))
                 and _within(a, function)]
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and node.id == target and isinstance(node.ctx, ast.Load):
                if node.lineno > end or any(_within(node, loop) for loop in loops):
                    yield node
        return
    owner = next((a for a in facts.ancestors(stmt) if isinstance(a, ast.ClassDef)), None)
    nodes = ast.walk(owner) if owner is not None else facts.nodes(ast.Attribute)
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.lineno != stmt.lineno \
                and facts.text(node) == target and (owner is not None or node.lineno > end):
            yield node


def _within(node: ast.AST, outer: ast.AST) -> bool:
    start = (getattr(outer, "lineno", 0), getattr(outer, "col_offset", 0))
    stop = (getattr(outer, "end_lineno", 0) or 0, getattr(outer, "end_col_offset", 0) or 0)
    return start <= (node.lineno, node.col_offset) and (node.end_lineno or node.lineno, node.end_col_offset or 0) <= stop


def _observes(facts: ModuleFacts, use: ast.expr, target: str) -> Optional[str]:
    parent = facts.parent(use)
    if isinstance(parent, ast.keyword):
        parent = facts.parent(parent)
    if isinstance(parent, ast.Call) and parent.func is not use:
        dotted = facts.resolve(parent.func)
        why = OBSERVING_CALLS.get(dotted or "")
        if why is not None:
            return f"passes `{target}` to `{facts.text(parent.func)}`, which {why}"
        return None
    if isinstance(parent, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops):
        return f"compares `{target}` by identity (`is`): it is another object"
    if isinstance(parent, ast.Attribute) and parent.value is use:
        why = OBSERVING_ATTRS.get(parent.attr)
        if why is not None:
            return f"calls `{target}.{parent.attr}`, which {why}"
    return None
