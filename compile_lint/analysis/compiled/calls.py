"""Shared facts about torch.compile calls used by several CL5xx rules."""
from __future__ import annotations

import ast
from typing import Optional

from ..semantic.facts import ModuleFacts
from ..torch_api import COMPILE



def is_compile_call(facts: ModuleFacts, node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and facts.resolve(node.func) == COMPILE


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
