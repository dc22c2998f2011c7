"""Fast tree walks. `ast.walk`/`ast.iter_child_nodes` spend most of their time in
`iter_fields` and on `ctx` nodes (Load/Store); these walks look only at the fields of
each node type that can hold nodes, computed once per type."""
from __future__ import annotations

import ast
from typing import Iterator

_SKIP = frozenset({"ctx", "type_comment", "type_ignores"})
_FIELDS: dict[type, tuple[str, ...]] = {}
SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _fields(cls: type) -> tuple[str, ...]:
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = tuple(f for f in cls._fields if f not in _SKIP)
    return fields


def children(node: ast.AST) -> Iterator[ast.AST]:
    for name in _fields(node.__class__):
        value = getattr(node, name, None)
        if value.__class__ is list:
            for item in value:
                if isinstance(item, ast.AST):
                    yield item
        elif isinstance(value, ast.AST):
            yield value


def walk(node: ast.AST, link_parents: bool = False) -> list[ast.AST]:
    """Every node under `node` (itself included), as a list, in breadth-first order.
    With `link_parents`, each child gets the `_cl_parent` link ModuleFacts.parent reads:
    only the engine does that, on a whole module."""
    if not link_parents:
        return _walk_plain(node)
    out = [node]
    append = out.append
    fields_of = _fields
    i = 0
    while i < len(out):
        current = out[i]
        i += 1
        for name in fields_of(current.__class__):
            value = getattr(current, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        item._cl_parent = current
                        append(item)
            elif isinstance(value, ast.AST):
                value._cl_parent = current
                append(value)
    return out


def _walk_plain(node: ast.AST) -> list[ast.AST]:
    out = [node]
    append = out.append
    fields_of = _fields
    i = 0
    while i < len(out):
        current = out[i]
        i += 1
        for name in fields_of(current.__class__):
            value = getattr(current, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        append(item)
            elif isinstance(value, ast.AST):
                append(value)
    return out


def walk_scope(body: list) -> list[ast.AST]:
    """Every node of one scope: descends into nothing nested (defs, classes, lambdas)
    but yields them, and yields their decorators and defaults, which run here."""
    out: list[ast.AST] = []
    stack = list(reversed(body))
    fields_of = _fields
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, SCOPE_NODES):
            if not isinstance(node, ast.Lambda):
                stack.extend(reversed(node.decorator_list))
            continue
        kids = []
        for name in fields_of(node.__class__):
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        kids.append(item)
            elif isinstance(value, ast.AST):
                kids.append(value)
        kids.reverse()
        stack.extend(kids)
    return out
