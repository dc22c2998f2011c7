"""Whether an expression builds an `nn.Module`, asked of the value model.

`classes.module_construction` reads a call at face value: `Block(c)` or `nn.Conv2d(...)`
builds a module, a lowercase call does not. A factory of the file
(`def make_block(c): return nn.Sequential(...)`, `build_layers(n)` returning a list of
blocks) builds modules too; the value model (analysis/reach/values.py) knows what such a
function returns, through its branches, other factories and containers. The value
model is built for this file alone (`FileValuesFact`, once per file and only when a
factory call is asked about): the region index's project-wide model is not available
to rules.
"""
from __future__ import annotations

import ast
from typing import Optional

from ...analysis.modules.classes import is_module_class, is_torch_module_name, local_class, module_construction
from ...analysis.semantic.facts import Fact, ModuleFacts
from ...analysis.reach.regions import ProjectIndex, summarize
from ...analysis.reach.values import CALL, G, UNKNOWN, Value


class FileValues:
    """The value model of one file, built on first use."""

    def __init__(self, facts: ModuleFacts):
        self.facts = facts
        self._index: Optional[ProjectIndex] = None
        self._returned: dict[str, frozenset] = {}

    def returned(self, dotted: str) -> frozenset:
        """What a call of the file's function `dotted` returns (its arguments unknown)."""
        found = self._returned.get(dotted)
        if found is None:
            if self._index is None:
                # the engine's summary of this file when it made one (pass 1)
                summary = self.facts.summary or summarize(self.facts.tree, self.facts.names, self.facts.path)
                self._index = ProjectIndex([summary])
            index = self._index
            found = self._returned[dotted] = index.resolver.values((CALL, (G, dotted), (), ()), index.summaries[0])
        return found


class FileValuesFact(Fact):
    name = "file values"

    @classmethod
    def compute(cls, facts: ModuleFacts) -> FileValues:
        return FileValues(facts)


def _is_module_value(facts: ModuleFacts, value: Value) -> Optional[bool]:
    if value.kind == "seq":
        return None
    if value.kind != "inst" or not value.dotted:
        return False
    if is_torch_module_name(value.dotted):
        return True
    local = local_class(facts, value.dotted)
    return is_module_class(facts, local) if local is not None else None


def _factory_values(facts: ModuleFacts, expr: ast.AST) -> frozenset:
    """What a call of a function defined at the top of this file returns (empty for
    any other expression)."""
    if not isinstance(expr, ast.Call):
        return frozenset()
    dotted = facts.resolve(expr.func)
    module = facts.names.module
    if not dotted or not module or dotted.rpartition(".")[0] != module:
        return frozenset()
    if not any(isinstance(n, ast.FunctionDef) and f"{module}.{n.name}" == dotted for n in facts.tree.body):
        return frozenset()
    # (a branch the file alone cannot see says nothing about the ones it can)
    return frozenset(v for v in facts.get(FileValuesFact).returned(dotted) if v.kind != UNKNOWN)


def builds_module(facts: ModuleFacts, expr: ast.AST) -> Optional[bool]:
    """`module_construction`, and for a call of a function of this file, whether what it
    returns is a module: True, None (unknown) or False."""
    verdict = module_construction(facts, expr)
    if verdict is not False:
        return verdict
    values = _factory_values(facts, expr)
    return True if values and {_is_module_value(facts, v) for v in values} == {True} else verdict


def builds_module_container(facts: ModuleFacts, expr: ast.AST) -> bool:
    """`expr` calls a factory of this file that returns a Python container (list,
    tuple, dict) whose every element is a module (`build_blocks(n)` returning
    `[Block(c) for _ in range(n)]`)."""
    values = _factory_values(facts, expr)
    if not values or any(v.kind != "seq" or not v.elems for v in values):
        return False
    return all(elems and all(_is_module_value(facts, e) for e in elems) for v in values for elems in v.elems)
