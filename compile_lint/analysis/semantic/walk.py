"""Fast tree walks. `ast.walk`/`ast.iter_child_nodes` spend most of their time in
`iter_fields` and on `ctx` nodes (Load/Store); these walks look only at the fields of
each node type that can hold nodes, computed once per type."""
from __future__ import annotations

import ast
from collections import defaultdict
from typing import Iterator

_SKIP = frozenset({"ctx", "type_comment", "type_ignores"})
_FIELDS: dict[type, tuple[str, ...]] = {}
SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)

# Fields the grammar (Python.asdl) types as identifiers, strings, ints or constants: they
# never hold a node, so the walks do not read them (a Name's `id`, a Constant's `value`:
# most nodes of a file are Names and Constants). Named by class, so a later Python's
# node type that reuses a field name for a node (3.12's `TypeAlias.name`) is walked.
_NOT_NODES = frozenset({
    ("Name", "id"), ("Attribute", "attr"), ("FunctionDef", "name"), ("AsyncFunctionDef", "name"),
    ("ClassDef", "name"), ("alias", "name"), ("alias", "asname"), ("ImportFrom", "module"),
    ("ImportFrom", "level"), ("keyword", "arg"), ("arg", "arg"), ("Constant", "value"), ("Constant", "kind"),
    ("FormattedValue", "conversion"), ("comprehension", "is_async"), ("AnnAssign", "simple"),
    ("ExceptHandler", "name"), ("MatchSingleton", "value"), ("MatchStar", "name"), ("MatchAs", "name"),
    ("MatchMapping", "rest"), ("MatchClass", "kwd_attrs"), ("Global", "names"), ("Nonlocal", "names"),
    ("TypeVar", "name"), ("ParamSpec", "name"), ("TypeVarTuple", "name"),
})
# List fields whose items are not all nodes: `{**d}` leaves None in Dict.keys, a keyword-only
# parameter without a default None in arguments.kw_defaults. Every other list the grammar
# has holds nodes only (its identifier lists are in _NOT_NODES).
_MIXED_LISTS = frozenset({("Dict", "keys"), ("arguments", "kw_defaults")})


class _Plans(dict):
    """type -> _plan(type), filled on first ask (`_PLANS[cls]`: a subscript, not a call,
    in the walks' inner loops)."""

    def __missing__(self, cls: type) -> tuple[tuple[str, bool], ...]:
        name = cls.__name__
        plan = self[cls] = tuple(
            (f, (name, f) in _MIXED_LISTS) for f in _fields(cls) if (name, f) not in _NOT_NODES
        )
        return plan


_PLANS = _Plans()


def _fields(cls: type) -> tuple[str, ...]:
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = tuple(f for f in cls._fields if f not in _SKIP)
    return fields


def _plan(cls: type) -> tuple[tuple[str, bool], ...]:
    """The fields of `cls` that may hold nodes, in field order, each with whether the
    items of a list there must be tested for being nodes."""
    return _PLANS[cls]


def children(node: ast.AST) -> Iterator[ast.AST]:
    for name, mixed in _plan(node.__class__):
        value = getattr(node, name, None)
        if value.__class__ is list:
            for item in value:
                if not mixed or isinstance(item, ast.AST):
                    yield item
        elif isinstance(value, ast.AST):
            yield value


def own_nodes(body: list) -> list[ast.AST]:
    """The nodes of a def's `body` (a list of statements, or one expression for a lambda),
    nested defs, classes and lambdas yielded but not entered; in the order of a stack walk
    (last statement first, each node's children pushed in field order), without `ctx`
    nodes. The order is the one the tensor guesses were written and measured with."""
    out: list[ast.AST] = []
    emit = out.append
    stack = list(body)
    pop = stack.pop
    push = stack.append
    extend = stack.extend
    plans = _PLANS
    AST = ast.AST
    while stack:
        node = pop()
        emit(node)
        cls = node.__class__
        if cls in _SCOPE_TYPES:
            continue
        for name, mixed in plans[cls]:
            value = getattr(node, name, None)
            if value.__class__ is list:
                if mixed:
                    for item in value:
                        if isinstance(item, AST):
                            push(item)
                elif value:
                    extend(value)
            elif isinstance(value, AST):
                push(value)
    return out


def walk(node: ast.AST) -> list[ast.AST]:
    """Every node under `node` (itself included), as a list, in breadth-first order."""
    return _walk_plain(node)


def walk_with_parents(node: ast.AST) -> tuple[list[ast.AST], dict[ast.AST, ast.AST]]:
    """walk(node), and each node's parent (`node` itself has none).

    The links are a dict, not an attribute on the child: a child pointing back at its
    parent makes every tree a reference cycle, which only the cyclic GC frees. With the
    dict a file's trees and facts go as soon as the file is linted (the collections
    had cost a quarter of a cold run's CPU, bench/results.md)."""
    nodes, parents, _by_type = walk_by_type(node)
    return nodes, parents


def walk_by_type(node: ast.AST) -> tuple[list[ast.AST], dict[ast.AST, ast.AST], dict[type, list[ast.AST]]]:
    """walk_with_parents(node), and its nodes by type (each list in walk order, as
    `TreeShape.of` sorts them): the one walk of a linted file."""
    out = [node]
    parents: dict[ast.AST, ast.AST] = {}
    by_type: defaultdict[type, list[ast.AST]] = defaultdict(list)
    append = out.append
    extend = out.extend
    plans = _PLANS
    AST = ast.AST
    for current in out:  # grows while it is read: breadth-first
        cls = current.__class__
        by_type[cls].append(current)
        for name, mixed in plans[cls]:
            value = getattr(current, name, None)
            if value.__class__ is list:
                if mixed:
                    for item in value:
                        if isinstance(item, AST):
                            parents[item] = current
                            append(item)
                elif value:
                    for item in value:
                        parents[item] = current
                    extend(value)
            elif isinstance(value, AST):
                parents[value] = current
                append(value)
    return out, parents, dict(by_type)


def _walk_plain(node: ast.AST) -> list[ast.AST]:
    out = [node]
    append = out.append
    extend = out.extend
    plans = _PLANS
    AST = ast.AST
    for current in out:  # grows while it is read: breadth-first
        cls = current.__class__
        for name, mixed in plans[cls]:
            value = getattr(current, name, None)
            if value.__class__ is list:
                if mixed:
                    for item in value:
                        if isinstance(item, AST):
                            append(item)
                elif value:
                    extend(value)
            elif isinstance(value, AST):
                append(value)
    return out


_REVERSED: dict[type, tuple[tuple[str, bool], ...]] = {}
_SCOPE_TYPES = frozenset(SCOPE_NODES)


def walk_scope(body: list) -> list[ast.AST]:
    """Every node of one scope: descends into nothing nested (defs, classes, lambdas)
    but yields them, and yields their decorators and defaults, which run here.
    Depth-first, in source order (children are pushed last field first)."""
    out: list[ast.AST] = []
    emit = out.append
    stack = body[::-1]
    pop = stack.pop
    push = stack.append
    extend = stack.extend
    reversed_fields = _REVERSED
    AST = ast.AST
    while stack:
        node = pop()
        emit(node)
        cls = node.__class__
        if cls in _SCOPE_TYPES:
            if cls is not ast.Lambda:
                stack.extend(node.decorator_list[::-1])
            continue
        plan = reversed_fields.get(cls)
        if plan is None:
            plan = reversed_fields[cls] = _plan(cls)[::-1]
        for name, mixed in plan:
            value = getattr(node, name, None)
            if value.__class__ is list:
                if mixed:
                    for item in reversed(value):
                        if isinstance(item, AST):
                            push(item)
                elif value:
                    extend(value[::-1])
            elif isinstance(value, AST):
                push(value)
    return out
