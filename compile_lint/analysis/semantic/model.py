"""The semantic model of one file: scopes, what a name is bound to where it is used,
and what an expression stands for there.

Every rule and analysis asks it, through `ModuleFacts` (`facts.resolve`,
`facts.semantic`), instead of reading the module's import table (`NameTable`) alone:
that table knows the names the module binds, not the scopes below it, so a function
parameter `config` would "be" `torch._inductor.config` wherever the module imports it
under that name (84 false CL501 findings in one public app).

Scopes follow Python's rules (the language reference, "Resolution of names"):
- a function or lambda: its parameters and every name its body binds (assignment,
  augmented assignment, `for`/`with`/`except` targets, `import`, nested `def`/`class`,
  `:=`, `match` captures), unless the body declares it `global` or `nonlocal`;
- a class body: the names bound directly in it, seen by the statements of the body
  itself and not by its methods;
- a comprehension: its `for` targets, seen by its element and conditions (its first
  iterable is evaluated in the enclosing scope);
- the module: `NameTable`, built from the module's imports and definitions.
A name bound by an `import` in a function resolves to what that import names; a name
bound any other way in an enclosing function or class is that local value, which the
import table cannot name: `resolve` says None (unknown), never the module's meaning.

The value half of the model (what an expression can hold across files: classes,
instances, functions, compiled wrappers, unions with an explicit unknown) is
analysis/reach/values.py, which builds its terms with the same scopes.
"""
from __future__ import annotations

import ast
from typing import Callable, NamedTuple, Optional

from .names import NameTable, public_spelling
from .walk import children, walk
from ..reach.values import _target_names

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda) + _COMPREHENSIONS
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
LOCAL = None  # a name bound in a function or class by something other than an import


class ScopeNames:
    """The names one scope binds: name -> the dotted name an `import` there gives it,
    or LOCAL for any other binding (a parameter, an assignment, a loop target, ...),
    and for a name bound two different ways (`try: from x import f` / `except: def
    f`): which one holds is not known statically.
    `declared_global`: names the scope declares `global` (they are the module's)."""

    __slots__ = ("bound", "declared_global")

    def __init__(self):
        self.bound: _Bindings = _Bindings()
        self.declared_global: set[str] = set()


class _Bindings(dict):
    """name -> import target or LOCAL; a second, different binding makes it LOCAL."""

    def __setitem__(self, name: str, value: Optional[str]) -> None:
        if name in self and self[name] != value:
            value = LOCAL
        dict.__setitem__(self, name, value)


class SemanticModel:
    """Scopes and scope-aware name resolution for one parsed file.

    `parent_of(node)` gives a node's parent (the engine's links); a scope's names are
    collected on first use, so a file whose names never meet a shadowing question pays
    nothing."""

    def __init__(self, tree: ast.Module, names: NameTable, parent_of: Callable[[ast.AST], Optional[ast.AST]],
                 by_type: dict):
        """`by_type`: the file's nodes by type (the engine's walk). From it the model
        knows whether the file may hold `:=` (`walrus`: a scan of every expression for it
        is most of the cost of a scope's names), and reads once the names that something
        binds anywhere, so that a name nothing rebinds (`torch` in most files) is
        resolved without walking the scopes around it."""
        self.tree = tree
        self.names = names
        self.parent_of = parent_of
        self.walrus = ast.NamedExpr in by_type
        self._by_type = by_type
        self._rebound: Optional[frozenset] = None

        self._bindings: Optional["FileBindings"] = None
        self._scopes: dict[int, tuple[ast.AST, ScopeNames]] = {}
        self._attr_memo: dict[int, tuple[ast.AST, Optional[str]]] = {}
        self._name_memo: dict[int, tuple[ast.AST, Optional[str]]] = {}

    # -- resolution ----------------------------------------------------------------
    def resolve(self, expr: ast.AST) -> Optional[str]:
        """The dotted name `expr` stands for where it is (`T.compile` -> "torch.compile"
        after `import torch as T`), or None when unknown: a name some enclosing
        function or class binds locally is what that binding holds, not an import."""
        if isinstance(expr, ast.Name):
            return self.resolve_name_at(expr.id, expr)
        if isinstance(expr, ast.Attribute):
            hit = self._attr_memo.get(id(expr))
            if hit is not None and hit[0] is expr:  # the node is kept: its id is not reused
                return hit[1]
            base = self.resolve(expr.value)
            dotted = public_spelling(f"{base}.{expr.attr}") if base else None
            self._attr_memo[id(expr)] = (expr, dotted)
            return dotted
        return None

    def resolve_name_at(self, name: str, node: ast.AST) -> Optional[str]:
        """`resolve` of the name `name` used at `node`."""
        table_meaning = self.names.resolve_name(name)
        if table_meaning is None and name not in self.names.conflicted:
            return None  # a plain local, or unknown: no scope can make it a dotted name
        hit = self._name_memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        found, dotted = self.local_binding(name, node) if name in self.rebound else (False, None)
        if not found:
            # the module's own binding: an import there names its target (the table
            # drops a name that two scopes import differently); an alias or a def of
            # the module is what the table says
            dotted = table_meaning
            if name in self.names.conflicted:
                dotted = self._module_scope.bound.get(name) or table_meaning
        self._name_memo[id(node)] = (node, dotted)
        return dotted

    @property
    def rebound(self) -> frozenset:
        """A superset of the names some function, class, lambda or comprehension of the
        file binds (all names stored anywhere, parameters, defs, imports below the module
        level, handlers and patterns): local_binding finds nothing for any other name."""
        if self._rebound is None:
            by_type = self._by_type
            out = {n.id for n in by_type.get(ast.Name, ()) if n.ctx.__class__ is not ast.Load}
            out.update(a.arg for a in by_type.get(ast.arg, ()))
            for t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                out.update(n.name for n in by_type.get(t, ()))
            for t in (ast.Import, ast.ImportFrom):
                for n in by_type.get(t, ()):
                    if self._below_module(n):  # (the module's own imports are the table's)
                        out.update(a.asname or a.name.split(".", 1)[0] for a in n.names)
            for t in (ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
                out.update(n.name for n in by_type.get(t, ()) if n.name)
            out.update(n.rest for n in by_type.get(ast.MatchMapping, ()) if n.rest)
            self._rebound = frozenset(out)
        return self._rebound

    def _below_module(self, node: ast.AST) -> bool:
        parent = self.parent_of(node)
        while parent is not None:
            if parent.__class__ in _FUNCTION_TYPES or parent.__class__ is ast.ClassDef:
                return True
            parent = self.parent_of(parent)
        return False

    @property
    def _module_scope(self) -> ScopeNames:
        found = self.__dict__.get("_module_names")
        if found is None:
            found = self.__dict__["_module_names"] = _collect(self.tree, self.names, self.walrus)
        return found

    def is_shadowed(self, name: ast.Name) -> bool:
        """`name` is bound in a function, class or comprehension around it (so the
        module's import of that name is not what it holds there)."""
        found, dotted = self.local_binding(name.id, name)
        return found and dotted is None

    def local_binding(self, name: str, node: ast.AST) -> tuple[bool, Optional[str]]:
        """(True, what an import there names or None) for the innermost scope around
        `node` that binds `name` below the module; (False, None) when only the module
        (or nothing) binds it."""
        child, parent = node, self.parent_of(node)
        in_class_body = True  # a class scope is seen only by its own body's statements
        stmt = ast.stmt
        while parent is not None:
            cls = parent.__class__
            if cls in _COMPREHENSION_TYPES:
                # the first iterable runs in the enclosing scope
                if not (parent.generators and child is parent.generators[0].iter):
                    if name in _comprehension_targets(parent):
                        return True, LOCAL
                    in_class_body = False
            elif cls in _FUNCTION_TYPES or cls is ast.ClassDef:
                # decorators, defaults, annotations and bases run in the enclosing scope
                inside = child is parent.body if cls is ast.Lambda else isinstance(child, stmt)
                if inside and (in_class_body or cls is not ast.ClassDef):
                    scope = self._names_of(parent)
                    if name in scope.declared_global:
                        return False, None
                    if name in scope.bound:
                        return True, scope.bound[name]
                if inside or cls is ast.ClassDef:
                    in_class_body = False
            child, parent = parent, self.parent_of(parent)
        return False, None

    @property
    def bindings(self) -> "FileBindings":
        """Every binding of every scope, with positions and the reaching rule the value
        model uses (what a use of a name can hold here, as AST): built per scope on
        first use."""
        if self._bindings is None:
            self._bindings = FileBindings(self.tree, self.parent_of, self._by_type)
        return self._bindings

    # -- scopes ----------------------------------------------------------------------
    def _names_of(self, scope: ast.AST) -> ScopeNames:
        hit = self._scopes.get(id(scope))
        if hit is not None and hit[0] is scope:
            return hit[1]
        found = _collect(scope, self.names, self.walrus)
        self._scopes[id(scope)] = (scope, found)
        return found



def _comprehension_targets(comp: ast.AST) -> set:
    out: set = set()
    for gen in comp.generators:
        _target_names(gen.target, out)
    return out


_COMPREHENSION_TYPES = frozenset(_COMPREHENSIONS)
_FUNCTION_TYPES = frozenset(_FUNCTIONS)


def _collect(scope: ast.AST, names: NameTable, walrus: bool = True) -> ScopeNames:
    """The names a function, lambda or class body binds (not descending into nested
    scopes, whose own names stay theirs)."""
    found = ScopeNames()
    bound = found.bound
    if isinstance(scope, _FUNCTIONS):
        args = scope.args
        for arg in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg):
            if arg is not None:
                bound[arg.arg] = LOCAL
        if isinstance(scope, ast.Lambda):
            if walrus:
                _expression_bindings(scope.body, bound)
            return found
    declared: set = set()
    stack = list(reversed(scope.body))
    while stack:
        node = stack.pop()
        t = node.__class__
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            bound[node.name] = LOCAL
            for part in node.decorator_list if walrus else ():
                _expression_bindings(part, bound)
            continue
        if t is ast.Import or t is ast.ImportFrom:
            for name, dotted in names.import_bindings(node):
                bound[name] = dotted
            continue
        if t is ast.Global:
            found.declared_global.update(node.names)
            declared.update(node.names)
            continue
        if t is ast.Nonlocal:
            declared.update(node.names)
            continue
        targets: list = []
        if t is ast.Assign:
            targets = node.targets
        elif t in (ast.AnnAssign, ast.AugAssign):
            targets = [node.target] if node.__class__ is not ast.AnnAssign or node.value is not None or isinstance(node.target, ast.Name) else []
        elif t in (ast.For, ast.AsyncFor):
            targets = [node.target]
        elif t in (ast.With, ast.AsyncWith):
            targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
        elif t is ast.ExceptHandler:
            if node.name:
                bound[node.name] = LOCAL
        elif t.__name__ == "match_case":
            _pattern_names(node.pattern, bound)
        names_here: set = set()
        for target in targets:
            _target_names(target, names_here)
        for name in names_here:
            bound[name] = LOCAL
        # `:=` anywhere in the statement's expressions binds in this scope
        for field in t._fields:
            value = getattr(node, field, None)
            if field in _BLOCKS:
                stack.extend(reversed([v for v in value if isinstance(v, ast.AST)]))
            elif not walrus:
                if field == "pattern":
                    _pattern_names(value, bound)
            elif isinstance(value, ast.AST) and not isinstance(value, ast.expr_context):
                if isinstance(value, ast.expr):
                    _expression_bindings(value, bound)
                elif isinstance(value, ast.pattern):
                    _pattern_names(value, bound)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.expr):
                        _expression_bindings(item, bound)
                    elif isinstance(item, ast.withitem):
                        _expression_bindings(item.context_expr, bound)
    for name in declared:
        bound.pop(name, None)
    return found


def _expression_bindings(expr: ast.AST, bound: dict) -> None:
    """`x := ...` inside an expression binds `x` in the enclosing function (also from
    inside a comprehension); other nested scopes keep their names."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            bound[node.target.id] = LOCAL
        stack.extend(children(node))


def _pattern_names(pattern: ast.AST, bound: dict) -> None:
    for node in ast.walk(pattern):
        name = getattr(node, "name", None)
        if isinstance(name, str) and isinstance(node, (ast.MatchAs, ast.MatchStar)):
            bound[name] = LOCAL
        rest = getattr(node, "rest", None)
        if isinstance(rest, str):
            bound[rest] = LOCAL


# -- bindings with positions, as AST, for the analyses of one file ------------------
# Dtypes (precision.py) and gradients (gradients.py) ask what an expression of one file
# holds in terms torch cares about, so they need the bound *expressions*, not terms.
# They see the same scopes and the same reaching rule as `TermBuilder` and
# `Resolver._local`: a use sees the last unconditional binding before it in its scope
# and the conditional ones after that; a name bound in an enclosing def or the module
# sees all of that scope's bindings; a use above every binding (a loop, a closure) sees
# all of them.
PART = "part"  # a binding whose value is a part of `source`: `a, b = f()`, `for x in xs`, `with ... as x`


class Bound(NamedTuple):
    """One binding of a name.

    kind: "assign" (`value` is the bound expression; `x += v` binds `x + v`),
    "param" (`arg` is the parameter), "for" (an element of `source`), "unpack"
    (element `index` of `source`; None after a starred target), "with" (the
    value of `source.__enter__()`), "def" (a nested def or class)."""

    kind: str
    row: int
    col: int
    conditional: bool
    stmt: ast.AST
    value: Optional[ast.AST] = None
    source: Optional[ast.AST] = None
    index: Optional[int] = None
    arg: Optional[ast.arg] = None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


class FileBindings:
    """The bindings of every scope of one file (module, defs, lambdas), by name, in
    source order. `parent_of(node)` gives a node's parent (the engine links them)."""

    def __init__(self, tree: ast.Module, parent_of, by_type: Optional[dict] = None):
        """`by_type`: the file's nodes by type (the engine's walk), when parent links
        exist: an expression is then searched for `:=` and comprehension targets only
        along the paths that lead to one (that search of every expression was most of
        the cost of a table)."""
        self.tree = tree
        self.parent_of = parent_of
        self._tables: dict[int, dict[str, list[Bound]]] = {}
        self._toward_binders: Optional[set[int]] = None
        if by_type is not None:
            toward: set[int] = set()
            for kind in (ast.NamedExpr, ast.comprehension):
                for node in by_type.get(kind, ()):
                    while node is not None and id(node) not in toward:
                        toward.add(id(node))
                        node = parent_of(node)
            self._toward_binders = toward

    # -- scopes ------------------------------------------------------------------
    def scope_around(self, node: ast.AST):
        """The innermost def or lambda holding `node` (the module when none)."""
        parent = self.parent_of(node)
        while parent is not None:
            if isinstance(parent, _SCOPES):
                return parent
            parent = self.parent_of(parent)
        return self.tree

    def table(self, scope) -> dict[str, list[Bound]]:
        """{name: [Bound]} for one scope, sorted by position."""
        key = id(scope)
        found = self._tables.get(key)
        if found is None:
            found = self._tables[key] = self._collect(scope)
        return found

    def binding_scope(self, name: ast.Name):
        """The def/lambda/module whose bindings a use of `name` sees (Python's scoping;
        class bodies are skipped, as for methods)."""
        scope = self.scope_around(name)
        while scope is not self.tree:
            if name.id in self.table(scope):
                return scope
            scope = self.scope_around(scope)
        return self.tree if name.id in self.table(self.tree) else None

    # -- reaching --------------------------------------------------------------------
    def reaching(self, name: ast.Name) -> list[Bound]:
        """The bindings a use of `name` can see (empty: a global from elsewhere, a builtin)."""
        scope = self.binding_scope(name)
        if scope is None:
            return []
        entries = self.table(scope).get(name.id, [])
        if scope is not self.scope_around(name):
            return list(entries)
        at = (name.lineno, name.col_offset)
        before = [b for b in entries if (b.row, b.col) < at and not _holds(b.stmt, name)]
        chosen: list[Bound] = []
        for entry in reversed(before):
            chosen.append(entry)
            if not entry.conditional:
                break
        return chosen[::-1] if chosen else list(entries)

    # -- building --------------------------------------------------------------------
    def _collect(self, scope) -> dict[str, list[Bound]]:
        table: dict[str, list[Bound]] = {}

        def add(name: str, bound: Bound) -> None:
            table.setdefault(name, []).append(bound)

        if isinstance(scope, _SCOPES):
            args = scope.args
            for arg in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg):
                if arg is not None:
                    add(arg.arg, Bound("param", scope.lineno, scope.col_offset, False, scope, arg=arg))
            if isinstance(scope, ast.Lambda):
                self._expressions(scope.body, add, False)
                return table
        self._block(scope.body, add, False)
        for entries in table.values():
            entries.sort(key=lambda b: (b.row, b.col))
        return table

    def _block(self, body, add, conditional: bool) -> None:
        for stmt in body:
            self._statement(stmt, add, conditional)

    def _statement(self, stmt, add, conditional: bool) -> None:
        t = type(stmt)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            for deco in stmt.decorator_list:
                self._expressions(deco, add, conditional)
            add(stmt.name, Bound("def", stmt.lineno, stmt.col_offset, conditional, stmt, value=stmt))
            return
        if t is ast.Assign:
            self._expressions(stmt.value, add, conditional)
            for target in stmt.targets:
                self._target(target, stmt.value, stmt, add, conditional, None)
            return
        if t is ast.AnnAssign:
            if stmt.value is not None:
                self._expressions(stmt.value, add, conditional)
                self._target(stmt.target, stmt.value, stmt, add, conditional, None)
            return
        if t is ast.AugAssign:
            self._expressions(stmt.value, add, conditional)
            if isinstance(stmt.target, ast.Name):
                value = ast.BinOp(stmt.target, stmt.op, stmt.value)
                ast.copy_location(value, stmt)
                add(stmt.target.id, Bound("assign", stmt.lineno, stmt.col_offset, conditional, stmt, value=value))
            return
        if t in (ast.For, ast.AsyncFor):
            self._expressions(stmt.iter, add, conditional)
            self._loop_target(stmt.target, stmt.iter, stmt, add)
            self._block(stmt.body, add, True)
            self._block(stmt.orelse, add, True)
            return
        if t in (ast.With, ast.AsyncWith):
            for item in stmt.items:
                self._expressions(item.context_expr, add, conditional)
                if item.optional_vars is not None:
                    for name in _names_in(item.optional_vars):
                        add(name.id, Bound("with", name.lineno, name.col_offset, conditional, stmt, source=item.context_expr))
            self._block(stmt.body, add, conditional)
            return
        for field, value in ast.iter_fields(stmt):
            if field in _BLOCKS:
                for item in value:
                    if isinstance(item, ast.ExceptHandler):
                        if item.name:
                            add(item.name, Bound("with", item.lineno, item.col_offset, True, item))
                        self._block(item.body, add, True)
                    elif isinstance(item, ast.stmt):
                        self._statement(item, add, True)
                    elif hasattr(item, "body"):  # match cases
                        self._block(item.body, add, True)
            elif isinstance(value, ast.AST):
                self._expressions(value, add, conditional)

    def _target(self, target, value, stmt, add, conditional, index) -> None:
        if isinstance(target, ast.Name):
            if index is None:
                add(target.id, Bound("assign", stmt.lineno, stmt.col_offset, conditional, stmt, value=value))
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            literal = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
            starred = False
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    starred = True
                    elt = elt.value
                if isinstance(elt, ast.Name):
                    if literal is not None and not starred:
                        add(elt.id, Bound("assign", stmt.lineno, stmt.col_offset, conditional, stmt, value=literal[i]))
                    else:
                        at = None if starred else i
                        add(elt.id, Bound("unpack", stmt.lineno, stmt.col_offset, conditional, stmt, source=value, index=at))
                else:
                    for name in _names_in(elt):
                        add(name.id, Bound("unpack", stmt.lineno, stmt.col_offset, conditional, stmt, source=value))

    def _loop_target(self, target, iterable, at, add) -> None:
        if isinstance(target, ast.Name):
            add(target.id, Bound("for", at.lineno, at.col_offset, True, at, source=iterable))
            return
        for name in _names_in(target):
            add(name.id, Bound("unpack", at.lineno, at.col_offset, True, at, source=iterable))

    def _expressions(self, expr, add, conditional: bool) -> None:
        """Bindings made inside an expression: `:=` (in this scope), comprehension targets
        (in the comprehension's own scope: kept here, positioned at the comprehension)."""
        toward = self._toward_binders
        if toward is not None and id(expr) not in toward:
            return  # no `:=` or comprehension below
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, _SCOPES):
                continue
            if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                add(node.target.id, Bound("assign", node.lineno, node.col_offset, True, node, value=node.value))
            elif isinstance(node, ast.comprehension):
                self._loop_target(node.target, node.iter, node.target, add)
            if toward is None:
                stack.extend(children(node))
            else:  # (the same nodes in the same order, less the subtrees with no binder)
                stack.extend(c for c in children(node) if id(c) in toward)


def _names_in(target) -> list:
    return [n for n in walk(target) if isinstance(n, ast.Name)]


def _holds(stmt: ast.AST, inner: ast.AST) -> bool:
    """`inner` is part of `stmt` (`x = f(x)`: the use reads the earlier binding)."""
    if isinstance(stmt, (*_SCOPES, ast.ClassDef, ast.ExceptHandler)):
        return False
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        stmt = stmt.iter  # the body sees the loop variable; the iterable does not
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        return any(n is inner for item in stmt.items for n in walk(item.context_expr))
    return any(n is inner for n in walk(stmt))
