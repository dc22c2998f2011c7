"""What a def's signature says, read from its `ast.arguments`."""
from __future__ import annotations

import ast


def parameter_defaults(args: ast.arguments) -> dict[str, ast.expr]:
    """Each parameter that has a default (positional or keyword-only), by name."""
    positional = args.posonlyargs + args.args
    defaults = {a.arg: d for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults)}
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return defaults
