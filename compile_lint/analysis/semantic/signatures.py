"""What a def's signature says, read from its `ast.arguments`."""
from __future__ import annotations

import ast
from typing import Optional


def parameter_defaults(args: ast.arguments) -> dict[str, ast.expr]:
    """Each parameter that has a default (positional or keyword-only), by name."""
    positional = args.posonlyargs + args.args
    defaults = {a.arg: d for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults)}
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return defaults


def call_argument(call: ast.Call, index: Optional[int], name: str, missing=None):
    """The expression `call` passes for the parameter `name`, which sits at position
    `index` (None: keyword-only): by keyword, else by position; `missing` when it passes
    none. A call passing both raises TypeError, so the order of the lookups is moot."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if index is not None and index < len(call.args):
        return call.args[index]
    return missing


def parameter_names(args: ast.arguments) -> set[str]:
    """The names a call can fill by position or keyword (`*args` and `**kwargs` aside)."""
    return {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}


def first_parameter(args: ast.arguments) -> Optional[str]:
    """The name of the first positional parameter (a method's `self` or `cls`), if any."""
    positional = args.posonlyargs + args.args
    return positional[0].arg if positional else None
