"""When Dynamo guards on the value of a Python attribute it reads.

Dynamo treats an `nn.Module`'s Python attributes as constants of the graph and guards
on the values its code depends on: every new value fails the guard and compiles a new
graph. It depends on a value when the value steers control flow (`if`, `while`, the
iterable of a `for` or a comprehension, a conditional expression, `match`), and, for
an `int` of a module, wherever it is read: module ints are static unless
`allow_unspec_int_on_nn_module = True` is set (measured on torch 2.13: `x * self.k`
with k set to 1..10 and a counter `self.count += 1` in `forward` both compiled 8
graphs; with the setting, 2).
"""
from __future__ import annotations

import ast
from typing import Optional

from ...analysis.semantic.facts import ModuleFacts

UNSPEC_KEYS = frozenset(
    {"torch.compiler.config.allow_unspec_int_on_nn_module", "torch._dynamo.config.allow_unspec_int_on_nn_module"}
)


def control_use(facts: ModuleFacts, node: ast.AST, stop: ast.AST) -> Optional[str]:
    """The control-flow construct whose condition or iterable holds `node` (below `stop`)."""
    child = node
    for anc in facts.ancestors(node):
        if anc is stop:
            return None
        if isinstance(anc, ast.If) and child is anc.test:
            return "an `if`"
        if isinstance(anc, ast.While) and child is anc.test:
            return "a `while` loop"
        if isinstance(anc, ast.IfExp) and child is anc.test:
            return "a conditional expression"
        if isinstance(anc, (ast.For, ast.AsyncFor)) and child is anc.iter:
            return "a `for` loop"
        if isinstance(anc, ast.comprehension) and (child is anc.iter or child in anc.ifs):
            return "a comprehension"
        if isinstance(anc, ast.Match) and child is anc.subject:
            return "a `match`"
        child = anc
    return None


def guarded_use(facts: ModuleFacts, node: ast.AST, method: ast.AST, kind: str, unspec: bool = False) -> Optional[tuple[str, str]]:
    """How compiled code uses an attribute so that Dynamo guards on its value, and the
    kind of use ("loop", "branch", "value"), or None when it does not guard."""
    use = control_use(facts, node, method)
    if use is not None:
        return f"steers {use}", ("loop" if "loop" in use or "comprehension" in use else "branch")
    if kind == "int" and not unspec:
        parent = facts.parent(node)
        incremented = isinstance(parent, ast.AugAssign) and parent.target is node
        return ("is incremented" if incremented else "is read"), "value"
    return None


def unspec_ints(facts: ModuleFacts) -> bool:
    """This file sets `allow_unspec_int_on_nn_module = True`."""
    if b"allow_unspec_int_on_nn_module" not in facts.source.data:
        return False
    for node in facts.nodes(ast.Assign):
        if isinstance(node.value, ast.Constant) and node.value.value is True:
            if any(facts.resolve(t) in UNSPEC_KEYS for t in node.targets):
                return True
    return False
