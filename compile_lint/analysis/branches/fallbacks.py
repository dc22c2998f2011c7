"""Code that only runs as a fallback for another torch release.

Projects that support several torch releases try the new spelling and fall back to
the old one in an `except` handler (`try: torch.amp.GradScaler("cuda") except
(AttributeError, TypeError): torch.cuda.amp.GradScaler()`), or guard a new spelling
with `try: ... except AttributeError`. Rules about version-dependent spellings ask
here before they report or rewrite such code.
"""
from __future__ import annotations

import ast
from typing import Iterator, Optional

# Exceptions a missing or changed torch API raises; a bare `except:` and
# `except Exception` catch them too.
COMPAT_ERRORS = frozenset({"AttributeError", "TypeError", "ImportError", "ModuleNotFoundError", "NameError"})
_BROAD = frozenset({"Exception", "BaseException"})


def _handler_names(handler: ast.ExceptHandler) -> set[str]:
    kind = handler.type
    if kind is None:
        return set(_BROAD)
    parts = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    names = set()
    for part in parts:
        if isinstance(part, ast.Name):
            names.add(part.id)
        elif isinstance(part, ast.Attribute):
            names.add(part.attr)
    return names


def catches_compat_error(handler: ast.ExceptHandler) -> bool:
    names = _handler_names(handler)
    return bool(names & (COMPAT_ERRORS | _BROAD))


def _tries_around(facts, node: ast.AST) -> Iterator[tuple[ast.Try, str, Optional[ast.ExceptHandler]]]:
    """(try, where node sits: "body" | "handler" | "other", the handler) for each
    `try` around `node`, innermost first, stopping at the enclosing def."""
    child = node
    for anc in facts.ancestors(node):
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return
        if isinstance(anc, ast.ExceptHandler):
            parent = facts.parent(anc)
            if isinstance(parent, ast.Try):
                yield parent, "handler", anc
        elif isinstance(anc, ast.Try) and child in anc.body:
            yield anc, "body", None
        child = anc


def in_compat_fallback(facts, node: ast.AST) -> bool:
    """`node` sits in an `except` handler that catches a compat error (a fallback
    that runs only where the code in the `try` failed, e.g. on an older torch)."""
    return any(where == "handler" and catches_compat_error(h) for _, where, h in _tries_around(facts, node))


def guarded_by_compat_handler(facts, node: ast.AST) -> bool:
    """`node` sits in a `try` body whose handlers catch a compat error (the code
    already handles the release where this spelling is missing)."""
    for tried, where, _ in _tries_around(facts, node):
        if where == "body" and any(catches_compat_error(h) for h in tried.handlers):
            return True
    return False
