"""Shared facts about torch.compile calls used by several CL5xx rules."""
from __future__ import annotations

import ast
from typing import Optional

from ..reach.regions import compiles_nothing
from ..semantic.facts import ModuleFacts
from ..torch_api import COMPILE



def is_compile_call(facts: ModuleFacts, node: ast.AST) -> bool:
    """A `torch.compile(...)` call that compiles: not one passing the literal
    `disable=True`, which returns its argument itself (regions.compiles_nothing): no
    wrapper, no lazy compile errors, nothing to discard (Music-Source-Separation's
    `torch.compile(x, disable=True)` in a `try`, bench/fresh_reads batch 16)."""
    return isinstance(node, ast.Call) and facts.resolve(node.func) == COMPILE \
        and not compiles_nothing((k.arg, k.value) for k in node.keywords)


def source_text(facts: ModuleFacts, node: ast.AST) -> str:
    return facts.text(node)


def target_text(facts: ModuleFacts, expr: Optional[ast.AST]) -> Optional[str]:
    """The text of a Name or attribute chain (`model`, `self.unet`), else None."""
    node = expr
    while isinstance(node, ast.Attribute):
        node = node.value
    if isinstance(node, ast.Name) and expr is not None:
        return facts.text(expr)
    return None
