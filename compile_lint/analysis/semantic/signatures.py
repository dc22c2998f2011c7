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


def first_parameter(args: ast.arguments) -> Optional[str]:
    """The name of the first positional parameter (a method's `self` or `cls`), if any."""
    positional = args.posonlyargs + args.args
    return positional[0].arg if positional else None
