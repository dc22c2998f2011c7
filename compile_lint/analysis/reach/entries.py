"""The defs a compile site enters directly, and the parameters they are handed.

A region reaches many defs (`forward` and everything it calls); only the entry, the def
the compiled callable *is* (`@torch.compile def f`, `torch.compile(step)`, a compiled
module's `forward`/`__call__`), receives its inputs from eager code. What CUDA graphs
care about (inputs mutated in place, input sizes) is about the entry's parameters.
"""
from __future__ import annotations

import ast

from ..semantic.facts import ModuleFacts
from .regions import RegionInfo


def is_entry(facts: ModuleFacts, func: ast.AST, region: RegionInfo) -> bool:
    """Whether `func` is the def a site of `region` compiles (not one it calls)."""
    if func is None or isinstance(func, ast.Lambda):
        return False
    if region.via is None:
        return True
    qual = facts.qualname_of(func)
    dotted = f"{facts.names.module}.{qual}" if facts.names.module else qual
    for site in region.sites:
        target = site.target.dotted if site.target else None
        if target == dotted or (target and dotted in (target + ".forward", target + ".__call__")):
            return True
    return False


def input_params(func: ast.AST) -> list[str]:
    """The parameters a caller passes (not `self` / `cls`)."""
    args = func.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    return [n for n in names if n not in ("self", "cls")]
