"""Resolve names to the dotted names they stand for, through imports and aliases.

One pass over the module builds a table of bindings (`import torch as T`,
`from torch import compile as tc`, `from .utils import f`, `tc = torch.compile`,
`fast = functools.partial(torch.compile, mode="max-autotune")`). This is the cheap
alternative to libcst's QualifiedNameProvider (61% of a generic libcst linter's time,
shared/perf-notes.md). It is flow-insensitive: a name rebound to something else
anywhere at module level is treated as unknown rather than guessed.
"""
from __future__ import annotations

import ast
import builtins
import json
import os
from dataclasses import dataclass, field
from typing import Optional

_BUILTINS = frozenset(dir(builtins))
PARTIAL = frozenset({"functools.partial"})


@dataclass(frozen=True)
class Partial:
    """`functools.partial(target, **keywords)` bound to a name."""

    target: str
    keywords: tuple[tuple[str, ast.expr], ...]


# a config file marks a project too: its folder is the root `find_project_root` gives
ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git", "compile-lint.toml", ".compile-lint.toml")


def holds_marker(folder: str) -> bool:
    """Whether `folder` holds a project marker (ROOT_MARKERS)."""
    return any(os.path.exists(os.path.join(folder, marker)) for marker in ROOT_MARKERS)


def _has_init(folder: str, cache: dict) -> bool:
    """Whether `folder` is a package its parent's importers can name: it holds an
    `__init__.py` and its name is an identifier. A clone named `algorithmic-efficiency`
    or `proj.v2` that holds an `__init__.py` cannot be imported by that name: its code
    imports its packages from inside it (`from algoperf import spec`).

    A top package that holds a project marker (`pyproject.toml`, `.git`, ...) is the
    project's root, not a package of the folder above: a ComfyUI node pack cloned as
    `seedvr2/` has an `__init__.py` for ComfyUI, but its scripts run from inside it and
    name its folders from there (`from src.utils import ...`), as they do when the clone's
    name is no identifier. Reading it as the package `seedvr2` named its modules from
    wherever the clone lay, and a folder below it without an `__init__.py` from the clone
    (bench/fresh_reads batch 15's SeedVR2: 11 findings in a folder named
    `ComfyUI-SeedVR2_VideoUpscaler`, 5 in one named `app`). A marked folder inside
    another package (a git submodule in `pkg/third_party/`) stays a package of it."""
    has_init = cache.get(folder)
    if has_init is None:
        has_init = (os.path.basename(folder).isidentifier()
                    and os.path.isfile(os.path.join(folder, "__init__.py")))
        if has_init and holds_marker(folder):
            parent = os.path.dirname(folder)
            has_init = parent != folder and _has_init(parent, cache)
        cache[folder] = has_init
    return has_init


def _marked_root(folder: str, cache: dict) -> Optional[str]:
    """The nearest folder at or above `folder` holding a project marker, or None."""
    key = ("root", folder)
    if key in cache:
        return cache[key]
    if holds_marker(folder):
        found: Optional[str] = folder
    else:
        parent = os.path.dirname(folder)
        found = None if parent == folder else _marked_root(parent, cache)
    cache[key] = found
    return found


def marked_root(folder: str, _cache: dict = {}) -> Optional[str]:
    """The nearest folder at or above `folder` holding a project marker, or None."""
    return _marked_root(folder, _cache)


def import_root(path: str, _cache: dict = {}) -> tuple[str, tuple[str, ...]]:
    """The folder `path` is imported from (above its top package, or its own folder for
    a script), and that folder's parts below the project root (none when the root is
    the folder itself; all of its path when no project root is known)."""
    folder = os.path.dirname(os.path.abspath(path))
    while _has_init(folder, _cache):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    root = _marked_root(folder, _cache)
    if root == folder:
        return folder, ()
    # With no project marker above, the folder's whole path is the prefix: two script
    # folders (`a/train.py`, `b/train.py`) must never become one module, and the name
    # must not depend on which files a run was given (the cache keys on it).
    rel = os.path.relpath(folder, root) if root is not None else os.path.splitdrive(folder)[1]
    return folder, tuple(part.replace(".", "_") for part in rel.split(os.sep) if part and part != ".")


_SPELLINGS_JSON = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "data",
                               "torch_spellings.json")


def _load_spellings() -> dict:
    with open(_SPELLINGS_JSON, encoding="utf-8") as fh:
        return json.load(fh)["spellings"]


# `torch.jit._script.script` -> `torch.jit.script`: public torch API spelled by the module
# that defines it (scripts/gen_torch_spellings.py reads them from the pinned torch)
TORCH_SPELLINGS: dict = _load_spellings()


def public_spelling(dotted: Optional[str]) -> Optional[str]:
    """The public name of a torch API that `dotted` spells through its defining module
    (`from torch.jit._script import script`: voicesmith's export, bench/fresh_reads batch
    11), else `dotted` itself."""
    return TORCH_SPELLINGS.get(dotted, dotted) if dotted is not None and dotted.startswith("torch.") else dotted


def _imported_from(base: str, alias: ast.alias) -> str:
    """The dotted name `from base import name` binds. `from utils.torch_utils import torch`
    (ultralytics' callbacks) is torch itself, re-exported: a module of the project named
    `torch` is imported under another name (`from xlib import torch as lib_torch`,
    `from .. import torch as torch4rec`: the other three of the four such imports in the
    development sets, bench/dev7, bench/dev11, bench/dev33)."""
    if alias.name == "torch" and alias.asname is None and base and base.split(".", 1)[0] != "torch":
        return "torch"
    return public_spelling(f"{base}.{alias.name}") if base else alias.name


def module_name_for(path: str, _cache: dict = {}) -> tuple[str, bool]:
    """Dotted module name of `path`, and whether it is a package.

    The name is the import name from the file's package folders, prefixed by the
    folder it is imported from relative to the project root (the nearest folder with
    `pyproject.toml`, `setup.cfg` or `.git`): `tools/train.py` and `scripts/train.py`
    are `tools.train` and `scripts.train`, never one module. The region index maps an
    import written in a file (`from model import Net`) back to these names through
    the file's import roots (ProjectIndex.candidates)."""
    path = os.path.abspath(path)
    folder, filename = os.path.split(path)
    # a notebook is never imported: keep its suffix so it cannot shadow a module
    stem = filename if filename.endswith(".ipynb") else filename.rsplit(".", 1)[0]
    parts = [] if stem == "__init__" else [stem]
    while _has_init(folder, _cache):
        folder, name = os.path.split(folder)
        if not name:
            break
        parts.insert(0, name)
    _root, prefix = import_root(path, _cache)
    return ".".join(list(prefix) + parts), stem == "__init__"


def import_prefixes(path: str) -> tuple[str, ...]:
    """Module-name prefixes an absolute import in `path` may be relative to, most
    specific first: ("tools.", "") for a script in `tools/`."""
    _root, prefix = import_root(path)
    return tuple(".".join(prefix[:k]) + "." for k in range(len(prefix), 0, -1)) + ("",)


def _module_level(body):
    """Statements that run at module level, through if/try/with blocks."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.While, ast.For, ast.With)):
            yield from _module_level(stmt.body)
            yield from _module_level(getattr(stmt, "orelse", []))
        elif isinstance(stmt, ast.Try):
            yield from _module_level(stmt.body)
            for handler in stmt.handlers:
                yield from _module_level(handler.body)
            yield from _module_level(stmt.orelse)
            yield from _module_level(stmt.finalbody)


def assigned_name(stmt) -> Optional[str]:
    """The name `name = ...` binds, for an assignment to one name."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def imports_in_walk_order(by_type: dict, parents: dict) -> list:
    """The `import` and `from ... import` statements of a tree in breadth-first walk
    order (walk_by_type), from its nodes by type. Breadth-first order is depth-first
    order stably sorted by depth, and statements (unlike expressions) come depth-first
    in source order, so (depth, line, column) sorts them as the walk meets them."""
    found = by_type.get(ast.Import, []) + by_type.get(ast.ImportFrom, [])
    if not (ast.Import in by_type and ast.ImportFrom in by_type):
        return found  # one kind: already in walk order

    def depth(node) -> int:
        n = 0
        while node in parents:
            node = parents[node]
            n += 1
        return n

    return sorted(found, key=lambda node: (depth(node), node.lineno, node.col_offset))


@dataclass
class NameTable:
    module: str = ""
    is_package: bool = False
    bindings: dict[str, str] = field(default_factory=dict)
    partials: dict[str, Partial] = field(default_factory=dict)
    local_names: set[str] = field(default_factory=set)  # bound by def/class/assign
    # modules the file imports with `from m import *`, in order (a name bound by none of
    # the above may come from one of them: the region index looks there)
    star_imports: tuple = ()
    # names bound two different ways in the file (two imports, an import and a def):
    # left out of `bindings`; the semantic model asks the scope that binds them
    conflicted: frozenset = frozenset()
    # conflicted names that the module's own imports (those not in a def or class) bind
    # one way: what the name holds where no def or class around it binds it
    # (animatediff imports `UNet3DConditionModel` at the top and another one inside
    # `create_pipeline_sdxl`: bench/dev28)
    module_level: dict[str, str] = field(default_factory=dict)

    # -- building -------------------------------------------------------------
    @classmethod
    def build(cls, tree: ast.Module, module: str = "", is_package: bool = False, nodes=None, imports=None) -> "NameTable":
        """`nodes`: every node of `tree` when the caller has already walked it;
        `imports`: only its `import` statements, in that walk's order (imports_in_walk_order)."""
        table = cls(module=module, is_package=is_package)
        conflicted: set[str] = set()
        if imports is None:
            imports = nodes if nodes is not None else ast.walk(tree)
        # An import statement of the module's own body (not in an `if`, `try` or def) binds
        # its names from there on: a later one of them rebinds a name an earlier one bound
        # (ControlAR imports `GPT_models` from `gpt`, then from `gpt_t2i`: bench/dev25).
        # The walk meets these first, in source order; any other second binding conflicts.
        unconditional = {id(stmt) for stmt in tree.body if isinstance(stmt, (ast.Import, ast.ImportFrom))}
        rebinding: set[str] = set()  # names whose binding so far is an unconditional import's
        # what the module's own imports (through if/try/with, not in a def or class) bind
        # each name to, to tell a conflict of scopes from one of the module itself
        module_imports = {id(stmt) for stmt in _module_level(tree.body) if isinstance(stmt, (ast.Import, ast.ImportFrom))}
        at_module: dict[str, set] = {}
        for node in imports:
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            body_level = id(node) in unconditional
            if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
                base = table.absolute_from(node)
                if base and base not in table.star_imports:
                    table.star_imports += (base,)
            for name, target in table.import_bindings(node):
                table._bind(name, target, conflicted, rebinding, body_level)
                if id(node) in module_imports:
                    at_module.setdefault(name, set()).add(target)
        for stmt in _module_level(tree.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                table.local_names.add(stmt.name)
        # Module-level aliases: `tc = torch.compile`, `fast = partial(torch.compile, ...)`,
        # and the alias a module-level `try` body makes where its handler makes a fallback
        # for an older library (`try: _disable = torch.compiler.disable` / `except:
        # _disable = torch._dynamo.disable`): the body's runs where the import works.
        # (Imports in a `try` stay either binding: test_reach's ControlAR case.)
        aliases = list(tree.body)
        for stmt in tree.body:
            if isinstance(stmt, ast.Try):
                fallback = {assigned_name(s) for handler in stmt.handlers for s in _module_level(handler.body)} - {None}
                aliases += [s for s in stmt.body if assigned_name(s) in fallback]
        for stmt in aliases:
            name = assigned_name(stmt)
            if name is not None:
                value = stmt.value
                target = table.resolve(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
                if target and "." in target:
                    table._bind(name, target, conflicted)
                    continue
                partial = table.partial_of(value)
                if partial is not None:
                    table.partials[name] = partial
                    continue
                table.local_names.add(name)
        dropped = conflicted | (table.local_names & set(table.bindings))
        for name in dropped:
            table.bindings.pop(name, None)
        table.conflicted = frozenset(dropped)
        table.module_level = {name: next(iter(at_module[name])) for name in conflicted - table.local_names
                              if len(at_module.get(name, ())) == 1}
        table._attr_memo = {}  # the table is complete: attribute chains may be remembered
        return table

    _attr_memo = None  # id(Attribute node) -> (node, dotted); a plain attribute, not a field

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_attr_memo", None)  # holds tree nodes: never pickled
        return state

    def _bind(self, name: str, target: str, conflicted: set[str], rebinding: Optional[set] = None,
              unconditional: bool = False) -> None:
        """Bind `name` to `target`; a second, different binding makes the name conflicted,
        unless both come from unconditional imports of the module's body (`rebinding`
        holds the names bound so far by those): the later one holds from there on."""
        old = self.bindings.get(name)
        if old is not None and old != target and not (unconditional and rebinding is not None and name in rebinding):
            conflicted.add(name)
        if rebinding is not None:
            if unconditional:
                rebinding.add(name)
            else:
                rebinding.discard(name)
        self.bindings[name] = target

    def import_bindings(self, node) -> list[tuple[str, str]]:
        """(name, dotted name) for each name an `import` statement of this file binds:
        `import a.b` binds `a`, `import a.b as c` binds `c` to `a.b`; `from m import *`
        binds nothing here (`star_imports`)."""
        if isinstance(node, ast.Import):
            return [(alias.asname, alias.name) if alias.asname else (alias.name.split(".", 1)[0],) * 2
                    for alias in node.names]
        base = self.absolute_from(node)
        return [(alias.asname or alias.name, _imported_from(base, alias))
                for alias in node.names if alias.name != "*"]

    def absolute_from(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        package = self.module if self.is_package else self.module.rpartition(".")[0]
        parts = package.split(".") if package else []
        if node.level > 1:
            parts = parts[: len(parts) - (node.level - 1)] if len(parts) >= node.level - 1 else []
        base = ".".join(parts)
        if node.module:
            base = f"{base}.{node.module}" if base else node.module
        return base

    # -- querying -------------------------------------------------------------
    def resolve(self, expr: ast.AST) -> Optional[str]:
        """The dotted name an expression stands for, or None when unknown.

        `T.compile` -> "torch.compile" after `import torch as T`; an unbound
        builtin name -> "builtins.NAME"; a partial alias -> its target.
        """
        if isinstance(expr, ast.Name):
            return self.resolve_name(expr.id)
        if isinstance(expr, ast.Attribute):
            memo = self._attr_memo
            if memo is not None:
                hit = memo.get(id(expr))
                if hit is not None and hit[0] is expr:  # the node is kept, so its id is not reused
                    return hit[1]
            base = self.resolve(expr.value)
            dotted = public_spelling(f"{base}.{expr.attr}") if base else None
            if memo is not None:
                memo[id(expr)] = (expr, dotted)
            return dotted
        return None

    def resolve_name(self, name: str) -> Optional[str]:
        """`resolve` of a bare name (no node needed)."""
        bound = self.bindings.get(name)
        if bound is not None:
            return bound
        partial = self.partials.get(name)
        if partial is not None:
            return partial.target
        if name in self.local_names:
            return f"{self.module}.{name}" if self.module else name
        module_level = self.module_level.get(name)
        if module_level is not None:  # (callers that know scopes ask theirs first)
            return module_level
        if name in _BUILTINS:
            return f"builtins.{name}"
        if name == "torch" and self.star_imports:
            # `from utils.common import *` where that module imports torch: the name
            # comes in with the star (YOLOv6's export tools), and it is torch
            return "torch"
        return None

    def partial_of(self, value: ast.AST) -> Optional[Partial]:
        """`functools.partial(f, ...)` of a function this table resolves: f and the keywords
        it binds; None for any other expression."""
        if isinstance(value, ast.Call) and self.resolve(value.func) in PARTIAL and value.args:
            inner = self.resolve(value.args[0])
            if inner:
                return Partial(inner, tuple((k.arg, k.value) for k in value.keywords if k.arg))
        return None

    def partial_keywords(self, expr: ast.AST) -> tuple[tuple[str, ast.expr], ...]:
        if isinstance(expr, ast.Name) and expr.id in self.partials:
            return self.partials[expr.id].keywords
        return ()

    def alias_for(self, dotted: str) -> Optional[str]:
        """A local spelling of `dotted` ("torch" -> "T" after `import torch as T`)."""
        for name, target in self.bindings.items():
            if target == dotted:
                return name
        parent, _, attr = dotted.rpartition(".")
        if parent:
            base = self.alias_for(parent)
            if base:
                return f"{base}.{attr}"
        return None


def chain_text(expr: Optional[ast.AST]) -> Optional[str]:
    """`model`, `self.unet`, `pipe.vae.decode` for a Name/attribute chain, else None."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))
