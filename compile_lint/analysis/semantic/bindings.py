"""The value model's bindings of one file as a declared fact.

`FileBindings` (the semantic model's, analysis/semantic/model.py) gives every scope's bindings with positions and
the reaching rule the value model uses; analyses that need the bound *expressions*
(dtypes in precision.py, gradients in gradients.py) ask this fact instead of keeping
their own tables. Rules that use those analyses declare `BindingsFact` in `needs`.
"""
from __future__ import annotations

import ast
from typing import Iterator

from .facts import Fact, ModuleFacts
from .model import Bound, FileBindings


class BindingsFact(Fact):
    """Scopes and bindings with positions for one file (FileBindings)."""

    name = "bindings"

    @classmethod
    def compute(cls, facts: ModuleFacts) -> FileBindings:
        return facts.semantic.bindings


def bindings_for(facts: ModuleFacts) -> FileBindings:
    return facts.get(BindingsFact)


def bindings_under(facts: ModuleFacts) -> FileBindings:
    """The bindings for a fact built on them (CompiledValues, which declares
    BindingsFact in its `needs`): the file's BindingsFact when the running rule may ask
    for it, else (outside a declared fact) the semantic model's, the same object."""
    allowed = facts.project.allowed
    if allowed is None or BindingsFact in allowed:
        return facts.get(BindingsFact)
    return facts.semantic.bindings  # (the same object: the model builds it once)


def module_bindings(tree: ast.Module) -> dict[str, list[Bound]]:
    """The module scope's bindings of a file read only for them (another file of the
    project: no ModuleFacts, no parent links; the module scope needs none)."""
    return FileBindings(tree, _no_parents).table(tree)


def _no_parents(node: ast.AST) -> None:
    return None


def module_statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """The statements that run at module level, in source order: the module's body and
    the blocks of its `if`/`try`/`for`/`while`/`with`/`match`, not class or def bodies."""
    stack = list(reversed(tree.body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        inner: list = []
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            for item in getattr(stmt, block, None) or ():
                inner.extend(item.body if isinstance(item, (ast.ExceptHandler, ast.match_case)) else [item])
        stack.extend(reversed(inner))


MAX_ALIASES = 4  # `g = f`, `fast = torch.compile(g)`: how many steps a name is followed


def holds_def(facts: ModuleFacts, name: ast.Name, func: ast.AST, compile_target=None) -> bool:
    """Whether `name`, where it is used, can hold the def `func` of this file by the
    value model's reaching rule: a binding that is the def itself (not one a local
    variable or parameter of the same name shadows), an alias (`g = f`), or a compiled
    wrapper of it (`fast = torch.compile(f)`; `compile_target(call)` gives the target
    expression of a compile call, or None)."""
    bindings = bindings_for(facts)
    stack, seen = [(name, 0)], set()
    while stack:
        use, depth = stack.pop()
        for bound in bindings.reaching(use):
            if bound.kind == "def":
                if bound.value is func:
                    return True
                continue
            if bound.kind != "assign" or depth >= MAX_ALIASES or id(bound.value) in seen:
                continue
            seen.add(id(bound.value))
            value = bound.value
            if isinstance(value, ast.Call) and compile_target is not None:
                value = compile_target(value)
            if isinstance(value, ast.Name):
                stack.append((value, depth + 1))
    return False
