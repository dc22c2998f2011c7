"""How the project builds what it compiles, and whether it trains it: read from the code.

The region index (compile_lint.analysis.reach.regions.ProjectIndex) says *what* a compile or
trace site runs, through factories, imports and wrappers. To run it as the project
does, verify also needs *how it is made*: the call that builds it, with its arguments.
This module follows the site's expression back to that call, in the files the index
holds (ast only, no torch):

- `torch.compile(RRDBNet(3, 3, nf=32))`: the class and its literal arguments;
- `torch.compile(build())` / `model = build(); torch.compile(model)`: a project function
  called for its result: verify calls it (with the site's literal arguments) and
  verifies what it returns; its own `return RRDBNet(...)` is shown in the report;
- `model = Net(width).to(device).eval()`: methods that return the module are skipped,
  names bound to literals (`width = 32`, a factory's parameter with its default or the
  value the call passes) are followed;
- `self.net = UNet(...)` in `__init__`, compiled in another method.

An argument that is not a literal (a config object, a loaded checkpoint) is not guessed:
the recipe says which one, and the target is built from its defaults or its config entry.

Training: the project trains a target when some file builds an optimizer over its
parameters (`torch.optim.Adam(model.parameters())`, Lightning's `configure_optimizers`
over `self.parameters()`), or calls it in a function that differentiates
(`loss.backward()`, `torch.autograd.grad`). Gradients are checked only there (or when
asked): inference-only code is not held to a backward it never runs.
"""
from __future__ import annotations

import ast
import operator
import os
from dataclasses import dataclass, field
from typing import Optional

from ..analysis.semantic.signatures import call_argument, parameter_defaults, parameter_names

NOT_LITERAL = object()
MAX_DEPTH = 8
# method calls that return the module they are called on
RETURNS_SELF = frozenset({"to", "eval", "train", "cuda", "cpu", "half", "float", "double", "bfloat16",
                          "requires_grad_", "to_empty", "share_memory", "apply"})
PASS_THROUGH = frozenset({"torch.compile", "torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                          "torch.nn.parallel.DistributedDataParallel", "copy.deepcopy", "torch.jit.script"})
OPTIMIZER_PREFIXES = ("torch.optim.", "bitsandbytes.optim.", "apex.optimizers.", "timm.optim.", "transformers.optimization.")
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}


@dataclass
class Recipe:
    """How an expression's value is made."""

    kind: str  # "class" (a constructor call) or "factory" (a project function called for its result)
    dotted: str  # the class or function, as the index names it
    path: str  # file of the call
    row: int
    args: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)
    unknown: list = field(default_factory=list)  # arguments that are not literals (by name or position)
    returns: Optional["Recipe"] = None  # a factory's own `return Cls(...)`, when it has one
    text: str = ""  # the call as written

    @property
    def literal(self) -> bool:
        return not self.unknown


class _File:
    """One parsed file with what following expressions needs: defs by qualname, and the
    innermost def around a row."""

    def __init__(self, parsed) -> None:
        from compile_lint.analysis.reach.regions import def_qualnames

        self.path = os.path.abspath(parsed.source.path)
        self.tree = parsed.tree
        self.names = parsed.names
        self.summary = parsed.summary
        self.lines = None
        qualnames = def_qualnames(self.tree)
        self.defs = {}
        for node in ast.walk(self.tree):
            name = qualnames.get(id(node))
            if name is not None:
                self.defs[name] = node

    def text(self, node: ast.AST, limit: int = 120) -> str:
        text = ast.unparse(node)
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def scope_at(self, row: int) -> Optional[str]:
        """The innermost function holding `row` (None: module level)."""
        best = None
        for name, node in self.defs.items():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= row <= (node.end_lineno or node.lineno):
                if best is None or node.lineno >= self.defs[best].lineno:
                    best = name
        return best


class Project:
    """The files of a run (their parse), their region index, and questions about them."""

    def __init__(self, parsed: dict, index) -> None:
        self.index = index
        self.files = {os.path.abspath(path): _File(item) for path, item in parsed.items()}
        self.by_summary = {id(f.summary): f for f in self.files.values()}
        self._trained: Optional[dict] = None

    # -- names ---------------------------------------------------------------------
    def file_of(self, summary) -> Optional[_File]:
        return self.by_summary.get(id(summary))

    def lookup(self, dotted: Optional[str]):
        """(file, DefInfo, dotted) of a project def, or None."""
        if not dotted:
            return None
        hit = self.index.lookup(dotted)
        if hit is None:
            return None
        summary, info = hit
        found = self.file_of(summary)
        return (found, info, summary.dotted(info.qualname)) if found is not None else None

    # -- following an expression to the call that makes it ---------------------------
    def recipe(self, file: _File, expr: ast.expr, row: int, depth: int = 0, env: Optional[dict] = None) -> Optional[Recipe]:
        if depth > MAX_DEPTH or expr is None:
            return None
        scope = file.scope_at(row)
        while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in RETURNS_SELF:
            expr = expr.func.value  # `Net().to(device).eval()`
        if isinstance(expr, ast.Call):
            dotted = file.names.resolve(expr.func) if isinstance(expr.func, (ast.Name, ast.Attribute)) else None
            if isinstance(expr.func, ast.Name) and scope and self._bound_in(file, scope, expr.func.id, row):
                dotted = None  # a local name (`cls = registry[name]; cls()`): not the global def
            if dotted in PASS_THROUGH:
                inner = expr.args[0] if expr.args else None
                return self.recipe(file, inner, row, depth + 1, env)
            found = self.lookup(dotted)
            if found is None:
                return None
            def_file, info, full = found
            if info.kind not in ("class", "function") or "." in info.qualname and info.kind == "function":
                return None
            args, kwargs, unknown = self._arguments(file, expr, row, env)
            recipe = Recipe("class" if info.kind == "class" else "factory", full, file.path, expr.lineno, args, kwargs,
                            unknown, text=file.text(expr))
            if recipe.kind == "factory" and not unknown:
                recipe.returns = self._factory_returns(def_file, info, args, kwargs, depth)
            return recipe
        if isinstance(expr, ast.Name):
            value, at = self._binding(file, scope, expr.id, row)
            if value is not None:
                return self.recipe(file, value, at, depth + 1, env)
            return None
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self" and scope:
            cls = scope.rsplit(".", 1)[0] if "." in scope else None
            node = file.defs.get(cls) if cls else None
            if isinstance(node, ast.ClassDef):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Assign) and any(
                            isinstance(t, ast.Attribute) and t.attr == expr.attr and isinstance(t.value, ast.Name)
                            and t.value.id == "self" for t in sub.targets):
                        return self.recipe(file, sub.value, sub.lineno, depth + 1)
        return None

    def _factory_returns(self, file: _File, info, args: list, kwargs: dict, depth: int) -> Optional[Recipe]:
        node = file.defs.get(info.qualname)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        env = _bind_parameters(node, args, kwargs, lambda e: self.literal(file, e, node.lineno))
        for sub in ast.walk(node):
            if isinstance(sub, ast.Return) and sub.value is not None:
                found = self.recipe(file, sub.value, sub.lineno, depth + 1, env)
                if found is not None:
                    return found
        return None

    def _arguments(self, file: _File, call: ast.Call, row: int, env: Optional[dict]) -> tuple[list, dict, list]:
        args, kwargs, unknown = [], {}, []
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                unknown.append(f"*{file.text(arg.value, 40)}")
                continue
            value = self.literal(file, arg, row, env)
            if value is NOT_LITERAL:
                unknown.append(file.text(arg, 40))
            args.append(value)
        for keyword in call.keywords:
            if keyword.arg is None:
                unknown.append(f"**{file.text(keyword.value, 40)}")
                continue
            value = self.literal(file, keyword.value, row, env)
            if value is NOT_LITERAL:
                unknown.append(f"{keyword.arg}={file.text(keyword.value, 40)}")
            kwargs[keyword.arg] = value
        return args, kwargs, unknown

    def literal(self, file: _File, expr: ast.expr, row: int, env: Optional[dict] = None, depth: int = 0):
        """The value of `expr` when it is a literal, or built of literals and names bound
        to them (`width = 32`, a parameter the call passes); else NOT_LITERAL."""
        if depth > MAX_DEPTH:
            return NOT_LITERAL
        if isinstance(expr, ast.Constant):
            return expr.value
        if isinstance(expr, (ast.List, ast.Tuple)):
            values = [self.literal(file, e, row, env, depth + 1) for e in expr.elts]
            if any(v is NOT_LITERAL for v in values):
                return NOT_LITERAL
            return values if isinstance(expr, ast.List) else tuple(values)
        if isinstance(expr, ast.Dict) and all(k is not None for k in expr.keys):
            keys = [self.literal(file, k, row, env, depth + 1) for k in expr.keys]
            values = [self.literal(file, v, row, env, depth + 1) for v in expr.values]
            if any(v is NOT_LITERAL for v in keys + values):
                return NOT_LITERAL
            return dict(zip(keys, values))
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
            value = self.literal(file, expr.operand, row, env, depth + 1)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return -value if isinstance(expr.op, ast.USub) else value
            return NOT_LITERAL
        if isinstance(expr, ast.BinOp) and type(expr.op) in _BINOPS:
            left = self.literal(file, expr.left, row, env, depth + 1)
            right = self.literal(file, expr.right, row, env, depth + 1)
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
                try:
                    return _BINOPS[type(expr.op)](left, right)
                except (ArithmeticError, ValueError):
                    return NOT_LITERAL
            return NOT_LITERAL
        if isinstance(expr, ast.Name):
            if env is not None and expr.id in env:
                return env[expr.id]
            value, at = self._binding(file, file.scope_at(row), expr.id, row)
            if value is not None:
                return self.literal(file, value, at, None, depth + 1)
        return NOT_LITERAL

    @staticmethod
    def _bound_in(file: _File, scope: str, name: str, row: int) -> bool:
        node = file.defs.get(scope)
        if node is None:
            return False
        params = parameter_names(node.args)
        return name in params or any(isinstance(t, ast.Name) and t.id == name
                                     for sub in _own_statements(node) if isinstance(sub, ast.Assign)
                                     for t in sub.targets)

    def _binding(self, file: _File, scope: Optional[str], name: str, row: int) -> tuple[Optional[ast.expr], int]:
        """The value last assigned to `name` before `row`: in the function around it,
        else at module level. `m = wrap(m)` keeps what `m` was before."""
        for owner in ([file.defs.get(scope)] if scope else []) + [file.tree]:
            if owner is None:
                continue
            best = None
            for sub in _own_statements(owner):
                if isinstance(sub, (ast.Assign, ast.AnnAssign)) and sub.lineno < row and sub.value is not None:
                    targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                    if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(sub.value)):
                            continue  # `m = torch.compile(m)`: what m held before
                        if best is None or sub.lineno > best.lineno:
                            best = sub
            if best is not None:
                return best.value, best.lineno
            if owner is not file.tree and isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params = [a.arg for a in owner.args.posonlyargs + owner.args.args + owner.args.kwonlyargs]
                if name in params:
                    return None, row  # a parameter: its callers decide
        return None, row

    # -- training ----------------------------------------------------------------------
    def trained(self) -> dict:
        """dotted def -> where the project trains it."""
        if self._trained is None:
            self._trained = {}
            for file in self.files.values():
                self._find_training(file)
        return self._trained

    def _mark(self, file: _File, expr: ast.expr, row: int, why: str) -> None:
        for dotted in self._made_of(file, expr, row):
            if dotted not in self._trained:
                self._trained[dotted] = f"{why} at {_display(file.path)}:{row}"

    def _made_of(self, file: _File, expr: ast.expr, row: int) -> list:
        """The classes (or function) an expression holds: `model`, `self`, `self.net`, `fast`."""
        scope = file.scope_at(row)
        if isinstance(expr, ast.Name) and expr.id == "self" and scope and "." in scope:
            found = self.lookup(file.summary.dotted(scope.rsplit(".", 1)[0]))
            return [found[2]] if found is not None and found[1].kind == "class" else []
        recipe = self.recipe(file, expr, row)
        if recipe is not None:
            if recipe.kind == "factory":
                made = recipe.returns.dotted if recipe.returns is not None else self._returned_class(recipe.dotted)
                return [made] if made else []
            return [recipe.dotted]
        if isinstance(expr, (ast.Name, ast.Attribute)):
            found = self.lookup(file.names.resolve(expr))
            if found is not None and found[1].kind == "function":
                return [found[2]]
        if isinstance(expr, ast.Name):
            return self._held_by_name(file, scope, expr.id, row)
        return []

    def _held_by_name(self, file: _File, scope: Optional[str], name: str, row: int) -> list:
        """The project classes a name holds by the value model (values.py Resolver), which
        follows what a function's callers pass for a parameter: `def fit(model, ...)`
        with `fit(build_upscaler(), ...)` elsewhere holds an RRDBNet."""
        summary = file.summary
        entries = summary.scopes.get(scope or "", {}).get(name) or []
        terms = [entry[2] for entry in entries if entry[0] <= row] or [entry[2] for entry in entries]
        classes = set()
        for term in terms:
            for value in self.index.resolver.values(term, summary):
                if value.kind == "inst" and value.dotted in self.index.defs and self.index.defs[value.dotted][1].kind == "class":
                    classes.add(value.dotted)
        return sorted(classes)

    def _returned_class(self, factory_dotted: str) -> Optional[str]:
        hit = self.index.lookup(factory_dotted)
        if hit is None:
            return None
        summary, info = hit
        values = self.index.resolver.returns_of(summary, info, {}, 0)
        classes = sorted(v.dotted for v in values if v.kind == "inst" and v.dotted in self.index.defs)
        return classes[0] if classes else None

    def _find_training(self, file: _File) -> None:
        differentiating = set()  # scopes that call .backward() / autograd.grad
        for node in ast.walk(file.tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            dotted = file.names.resolve(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
            if dotted and dotted.startswith(OPTIMIZER_PREFIXES) and "lr_scheduler" not in dotted:
                params = call_argument(node, 0, "params")
                for receiver in _parameter_owners(params):
                    self._mark(file, receiver, node.lineno, "an optimizer over its parameters")
            if isinstance(func, ast.Attribute) and func.attr == "backward" or dotted in ("torch.autograd.grad",
                                                                                          "torch.autograd.backward"):
                differentiating.add(file.scope_at(node.lineno))
        for scope in differentiating:
            owner = file.defs.get(scope) if scope else file.tree
            for node in (ast.walk(owner) if owner is not None else ()):
                if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Attribute) and node.func.attr in (
                        "backward", "step", "zero_grad", "parameters", "item", "detach")):
                    self._mark(file, node.func, node.lineno, "a backward through a call of it")

    # -- recipes for targets --------------------------------------------------------
    def site_recipe(self, site) -> Optional[Recipe]:
        """How the object a compile/trace site compiles is made."""
        file = self.files.get(os.path.abspath(site.path))
        if file is None:
            return None
        expr = _site_target_expression(file, site)
        return self.recipe(file, expr, site.row) if expr is not None else None

    def is_factory(self, dotted: str) -> Optional[str]:
        """A function the project calls for a module: it returns an instance of a
        project nn.Module class (by the value model). Returns that class's dotted name."""
        hit = self.index.lookup(dotted)
        if hit is None or hit[1].kind != "function":
            return None
        return self._returned_class(hit[0].dotted(hit[1].qualname))


def _own_statements(owner) -> list:
    """The statements of a def or module, not those of the defs nested in it."""
    out, stack = [], list(owner.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) or isinstance(child, ast.excepthandler):
                stack.append(child)
            elif isinstance(child, list):
                stack.extend(child)
    return out


def _bind_parameters(node, args: list, kwargs: dict, literal) -> dict:
    """A factory's parameters as its call binds them: passed values, else defaults."""
    positional = node.args.posonlyargs + node.args.args
    env: dict = {}
    defaults = parameter_defaults(node.args)
    for index, param in enumerate(positional + node.args.kwonlyargs):
        if index < len(args) and param in positional:
            env[param.arg] = args[index]
        elif param.arg in kwargs:
            env[param.arg] = kwargs[param.arg]
        elif param.arg in defaults:
            env[param.arg] = literal(defaults[param.arg])
    return {k: v for k, v in env.items() if v is not NOT_LITERAL}


def _parameter_owners(expr) -> list:
    """The `X` of every `X.parameters()` / `X.named_parameters()` in an optimizer's
    first argument (`list(...)`, `filter(...)`, `[{"params": ...}]` included)."""
    if expr is None:
        return []
    owners = []
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "parameters", "named_parameters"):
            owners.append(node.func.value)
    return owners


def _site_target_expression(file: _File, site) -> Optional[ast.expr]:
    """The expression a compile/trace site compiles (decorators: none, the def is it)."""
    for node in ast.walk(file.tree):
        if not isinstance(node, ast.Call) or node.lineno != site.row or node.col_offset != site.col:
            continue
        if site.api == "Module.compile" and isinstance(node.func, ast.Attribute):
            return node.func.value
        if node.args:
            return node.args[0]
        for keyword in node.keywords:
            if keyword.arg in ("model", "mod", "root", "func", "fn"):
                return keyword.value
    return None


def _display(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel
