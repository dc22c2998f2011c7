"""Whether the `forward` a compile site compiles ever runs compiled.

`torch.compile(m)` returns a wrapper (an `OptimizedModule`) that compiles calls of the
wrapper itself: `w(x)` runs `m.forward` compiled. Every other attribute is looked up on
the original module, so `w.encode(x)` runs the eager `encode`, and the submodules that
`encode` calls run eagerly too (measured on torch 2.13 by
`scripts/measure/compile_other_method.py`: `m(x)` 1 graph, `m.generate(x)` 0). Code
the region index reaches from a compiled `forward` therefore runs compiled only when
some holder of the wrapper calls it.

`forward_may_run_compiled` follows the wrapper from each compile site of a region to
its uses, across files of the project: names and `self` attributes it is bound to,
the `return` of a function that makes it (to the callers of that function), arguments
of project classes and functions (to their parameters), and the elements of a literal
that a loop iterates. A call of a holder (`w(x)`, `w.forward(x)`) means the forward
runs compiled; a method call (`w.encode(x)`), an attribute (`w.encoder`), `del w` or
a built-in such as `print(w)` do not. Where the value goes somewhere this cannot
follow, the forward may run compiled. A holder annotated with another class
(`var: VAR = compile_model(var)`) holds another model than the one asked about.
"""
from __future__ import annotations

import ast
from typing import Iterator, Optional

from ...analysis.modules.classes import methods, self_attr, self_name
from ...analysis.semantic.facts import ModuleFacts, RegionsFact
from ...analysis.project.context import path_for_module
from ...analysis.project.calls import calls_named
from ...analysis.reach.regions import RegionInfo

CALLED, UNKNOWN, NOT_CALLED = "called", "unknown", None
# built-ins that never call what they are given
NEUTRAL = frozenset({
    "builtins.print", "builtins.len", "builtins.isinstance", "builtins.hasattr", "builtins.getattr",
    "builtins.setattr", "builtins.id", "builtins.type", "builtins.repr", "builtins.str", "builtins.vars",
})
# annotations that say nothing about which model: torch's own base classes, typing
FOREIGN = ("torch.", "typing.", "builtins.", "collections.")
MAX_DEPTH = 8


def forward_may_run_compiled(facts: ModuleFacts, region: RegionInfo, dotted: str) -> bool:
    """False when every compile site of `region` (the region of def `dotted`) is a
    compile call whose wrapper, followed to all its uses, is never called. (A trace or
    export reaching the region recompiles nothing: not asked.)"""
    entry = _entry_class(facts, region, dotted)
    compiles = [site for site in region.sites if site.kind == "compiled"]
    for site in compiles:
        if site.origin != "static" or site.api == "Module.compile":
            return True
        other = facts.project.facts_for_path(facts, site.path)
        call = next((c for c in other.nodes(ast.Call) if c.lineno == site.row and c.col_offset == site.col), None) if other else None
        if call is None or _Flow(facts, entry).value(call, other, 0) is not NOT_CALLED:
            return True
    return not compiles


def _entry_class(facts: ModuleFacts, region: RegionInfo, dotted: str) -> Optional[str]:
    """The name of the class whose `forward` the region starts at (following `via`)."""
    regions = facts.get(RegionsFact).everything()
    for _ in range(MAX_DEPTH):
        if region.via is None:
            break
        caller = next((d for d, r in regions.items() if (d == region.via or d.endswith("." + region.via))
                       and any(s in region.sites for s in r.sites)), None)
        if caller is None:
            return None
        dotted, region = caller, regions[caller]
    parts = dotted.split(".")
    return parts[-2] if len(parts) > 1 and parts[-1] in ("forward", "__call__") else None


def _combine(verdicts: Iterator[Optional[str]]) -> Optional[str]:
    """CALLED if any use calls, UNKNOWN if any is unknown or there is no use at all (a
    holder nobody reads here may be read by code out of view), else NOT_CALLED."""
    out, seen = NOT_CALLED, False
    for verdict in verdicts:
        seen = True
        if verdict is CALLED:
            return CALLED
        out = out or verdict
    return out if seen else UNKNOWN


class _Flow:
    def __init__(self, facts: ModuleFacts, entry: Optional[str]):
        self.facts = facts
        self.entry = entry
        self.seen: set = set()

    def value(self, expr: ast.AST, f: ModuleFacts, depth: int) -> Optional[str]:
        """Where the value of `expr` goes from here."""
        if depth > MAX_DEPTH or (id(expr) in self.seen):
            return UNKNOWN if depth > MAX_DEPTH else NOT_CALLED
        self.seen.add(id(expr))
        parent = f.parent(expr)
        if isinstance(parent, (ast.IfExp, ast.BoolOp, ast.NamedExpr)) and expr is not getattr(parent, "test", None):
            return self.value(parent, f, depth)
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is expr:
            if isinstance(parent, ast.AnnAssign) and self._other_class(parent.annotation, f):
                return NOT_CALLED  # holds another model than the entry class
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            return _combine(self.bound(t, f, parent, depth) for t in targets)
        if isinstance(parent, ast.Tuple) and isinstance(f.parent(parent), ast.Assign) and f.parent(parent).value is parent:
            index = parent.elts.index(expr)
            return _combine(
                self.bound(t.elts[index], f, f.parent(parent), depth) if isinstance(t, ast.Tuple) and len(t.elts) == len(parent.elts) else UNKNOWN
                for t in f.parent(parent).targets
            )
        if isinstance(parent, ast.Tuple) and isinstance(f.parent(parent), (ast.Tuple, ast.List)):
            return self.iterated(parent, parent.elts.index(expr), f, depth)
        if isinstance(parent, ast.Return):
            return self.callers(f.enclosing_function(parent), f, depth)
        if isinstance(parent, ast.keyword) and isinstance(f.parent(parent), ast.Call):
            return self.passed(f.parent(parent), parent.arg, f, depth)
        if isinstance(parent, ast.Call) and expr in parent.args:
            return self.passed(parent, parent.args.index(expr), f, depth)
        return NOT_CALLED if isinstance(parent, (ast.Delete, ast.Expr)) else UNKNOWN

    def use(self, node: ast.AST, f: ModuleFacts, depth: int) -> Optional[str]:
        """One read of a holder (`w` or `self.w`)."""
        parent = f.parent(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            return CALLED
        if isinstance(parent, ast.Attribute) and parent.value is node:
            grand = f.parent(parent)
            called = isinstance(grand, ast.Call) and grand.func is parent
            return CALLED if called and parent.attr in ("forward", "__call__") else NOT_CALLED
        return self.value(node, f, depth + 1)

    def bound(self, target: ast.AST, f: ModuleFacts, stmt: ast.AST, depth: int) -> Optional[str]:
        """The uses of a name or `self` attribute the value is bound to."""
        if isinstance(target, ast.Name):
            scope = f.enclosing_function(stmt) or f.tree
            return _combine(
                self.use(n, f, depth) for n in ast.walk(scope)
                if isinstance(n, ast.Name) and n.id == target.id and isinstance(n.ctx, ast.Load)
                and (n.lineno, n.col_offset) >= (stmt.end_lineno, stmt.end_col_offset)
            )
        method = f.enclosing_function(stmt)
        attr = self_attr(target, self_name(method)) if method is not None else None
        cls = f.parent(method) if method is not None else None
        if attr is None or not isinstance(cls, ast.ClassDef):
            return UNKNOWN
        return _combine(
            self.use(n, f, depth)
            for m in methods(cls).values() for n in ast.walk(m)
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and self_attr(n, self_name(m)) == attr
        )

    def iterated(self, element: ast.Tuple, index: int, f: ModuleFacts, depth: int) -> Optional[str]:
        """`for k, m in (("a", w), ...)`: the loop variable that takes the value."""
        display = f.parent(element)
        loop = f.parent(display)
        if not isinstance(loop, (ast.For, ast.comprehension)) or loop.iter is not display:
            return UNKNOWN
        if not (isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == len(element.elts)):
            return UNKNOWN
        name = loop.target.elts[index]
        body = loop if isinstance(loop, ast.For) else f.parent(loop)
        if not isinstance(name, ast.Name):
            return UNKNOWN
        return _combine(
            self.use(n, f, depth) for n in ast.walk(body)
            if isinstance(n, ast.Name) and n.id == name.id and isinstance(n.ctx, ast.Load)
        )

    def passed(self, call: ast.Call, position, f: ModuleFacts, depth: int) -> Optional[str]:
        """The value passed to a call: into the parameter of a project def or lambda."""
        if f.resolve(call.func) in NEUTRAL:
            return NOT_CALLED
        found = self._callee(call, f)
        if found is None:
            return UNKNOWN
        func, g = found
        params = [a.arg for a in func.args.posonlyargs + func.args.args]
        if isinstance(position, int):
            offset = 1 if _is_method(func, g) else 0  # `self` of `__init__`
            name = params[position + offset] if position + offset < len(params) else None
        else:
            name = position if position in params + [a.arg for a in func.args.kwonlyargs] else None
        if name is None:
            return UNKNOWN
        body = func.body if isinstance(func, ast.Lambda) else func
        return _combine(
            self.use(n, g, depth) for n in ast.walk(body)
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        )

    def _callee(self, call: ast.Call, f: ModuleFacts):
        """(def or lambda, its file's facts) that `call` runs: a class's `__init__`, a
        function, or a lambda bound to a local name."""
        if isinstance(call.func, ast.Name):
            scope = f.enclosing_function(call) or f.tree
            for node in ast.walk(scope):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda) and any(
                    isinstance(t, ast.Name) and t.id == call.func.id for t in node.targets
                ):
                    return node.value, f
        dotted = f.resolve(call.func)
        if not dotted:
            return None
        module, _, name = dotted.rpartition(".")
        g = f if module == f.names.module else None
        if g is None and module:
            path = path_for_module(f, module)
            g = self.facts.project.facts_for_path(self.facts, path) if path else None
        if g is None:
            return None
        for node in g.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return node, g
            if isinstance(node, ast.ClassDef) and node.name == name:
                init = methods(node).get("__init__")
                return (init, g) if init is not None else None
        return None

    def callers(self, func: Optional[ast.AST], f: ModuleFacts, depth: int) -> Optional[str]:
        """The value a def returns: where its callers put it."""
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return UNKNOWN
        verdicts = []
        for g, call in calls_named(self.facts, func.name):
            if call.args and self._other_class_value(call.args[0], g):
                continue  # compiles another model
            verdicts.append(self.value(call, g, depth + 1))
        return _combine(iter(verdicts)) if verdicts else UNKNOWN

    def _other_class(self, annotation: ast.AST, f: ModuleFacts) -> bool:
        """An annotation or a constructor naming a project class other than the entry's."""
        dotted = f.resolve(annotation) or ""
        name = dotted.rsplit(".", 1)[-1]
        return bool(self.entry) and name[:1].isupper() and name != self.entry and not dotted.startswith(FOREIGN)

    def _other_class_value(self, arg: ast.AST, f: ModuleFacts) -> bool:
        """`compile_model(Other(...))`: a model of another class."""
        return isinstance(arg, ast.Call) and self._other_class(arg.func, f)


def _is_method(func: ast.AST, f: ModuleFacts) -> bool:
    return isinstance(f.parent(func), ast.ClassDef)
