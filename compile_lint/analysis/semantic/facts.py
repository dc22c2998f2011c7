"""ModuleFacts: everything rules may ask about one parsed file, computed once.

Rules ask for facts (resolved names, calls to a dotted name, the region around a
node) instead of walking and resolving by themselves. Larger facts are declared
providers (`Fact` subclasses): a rule names the ones it needs in `Rule.needs`, and
`facts.get(SomeFact)` computes each once per file, on first use, so a rule that
returns early does not pay for it. Asking for a fact a running rule did not declare
is an error (`UndeclaredFact`), so the declarations stay true.

What lies beyond the file (the region index, other files) is reached through
`facts.project` (analysis/project/context.py), which records what was looked at.
"""
from __future__ import annotations

import ast
from functools import cached_property, lru_cache
from typing import Any, Callable, ClassVar, Iterator, Optional

from ...source import SourceFile
from .names import NameTable, import_prefixes
from ..project.context import Project, RegionView, TreeShape, kinds_of
from ..reach.regions import RegionInfo, def_qualnames_of_shape, lambda_qualname
from .model import SemanticModel

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class Fact:
    """A declared fact provider: `compute(facts)` builds the fact for one file. `needs`
    names the facts its computation (or the object it returns) may ask for; a rule
    declaring this fact may ask for those too (declared_facts)."""

    name: ClassVar[str] = ""
    needs: ClassVar[tuple] = ()

    @classmethod
    def compute(cls, facts: "ModuleFacts") -> Any:
        raise NotImplementedError


@lru_cache(maxsize=None)
def declared_facts(needs: tuple) -> frozenset:
    """The facts a rule declaring `needs` may ask for: those and, transitively, what
    they declare."""
    found: set = set()
    todo = list(needs)
    while todo:
        fact = todo.pop()
        if fact not in found:
            found.add(fact)
            todo.extend(fact.needs)
    return frozenset(found)


class RegionsFact(Fact):
    """The project's region index (which defs run compiled, traced, exported, in CUDA
    graphs). Rules that need it run after the whole project was summarized."""

    name = "regions"

    @classmethod
    def compute(cls, facts: "ModuleFacts") -> RegionView:
        return facts.project.regions


class UndeclaredFact(RuntimeError):
    """A rule asked for a fact it does not list in `needs`."""


class ModuleFacts:
    def __init__(
        self,
        source: SourceFile,
        tree: ast.Module,
        names: NameTable,
        regions: Optional[dict[str, RegionInfo]] = None,
        settings=None,
        nodes=None,
        parents=None,
        *,
        shape: Optional[TreeShape] = None,
        summary=None,
        project: Optional[Project] = None,
    ):
        """`project` is the engine's handle on everything beyond the file; without one
        (tests, scripts), a project with `regions` and `settings` is made."""
        self.source = source
        self.path = source.path
        self.tree = tree
        self.names = names
        if project is None:
            project = Project(RegionView(regions), settings)
        self.project = project
        self.settings = project.settings  # compile_lint.config.Settings, for rules with options
        self._computed: dict[type, Any] = {}
        self.summary = summary  # the file's regions.ModuleSummary when the engine made one
        if shape is None:  # the engine hands nodes and parents (lint_file.parse_file)
            shape = TreeShape.of(tree, nodes, parents)
        # read only but for the calls memo: Sources shares one shape between the facts of
        # a file in the projects of every file that reads it
        self._shape = shape
        self._parents: dict[ast.AST, ast.AST] = shape.parents
        self._by_type: dict[type, list[ast.AST]] = shape.by_type
        self._local_kinds: Optional[set[str]] = None  # has_region: the kinds of this module's regions
        self._function_regions: dict[int, Optional[RegionInfo]] = {}  # id(def or lambda) -> region_of
        self._enclosing: dict[ast.AST, Optional[ast.AST]] = {}  # node -> enclosing_function(node)
        # an incremental relint (compile_lint/incremental.py) runs a statement-local rule
        # on some of the file's top-level statements: their nodes by type (`primary`)
        self.focus: Optional[dict[type, list[ast.AST]]] = None

    # -- declared facts ------------------------------------------------------------
    def get(self, fact: type[Fact], make: Optional[Callable[["ModuleFacts"], Any]] = None) -> Any:
        """The fact `fact` for this file, computed once (by `make` instead of
        `fact.compute` when given and this is the first ask)."""
        allowed = self.project.allowed
        if allowed is not None and fact not in allowed:
            raise UndeclaredFact(f"{fact.__name__} asked for but not declared in the rule's `needs`")
        found = self._computed.get(fact)
        if found is None and fact not in self._computed:
            found = self._computed[fact] = (make or fact.compute)(self)
        return found

    def release(self) -> None:
        """Forget the computed facts. Many hold these facts (a reference cycle the
        cyclic GC would have to find); the engine drops them once the file is linted."""
        self._computed.clear()
        self._enclosing.clear()

    @property
    def _regions(self) -> RegionView:
        return self.get(RegionsFact)

    # -- structure -------------------------------------------------------------
    def nodes(self, *types: type) -> Iterator[ast.AST]:
        for t in types:
            yield from self._by_type.get(t, ())

    def primary(self, *types: type) -> Iterator[ast.AST]:
        """The nodes a statement-local rule (`Rule.local`) reports from: nodes(*types),
        or, in an incremental relint, those of the top-level statements being relinted.
        Everything else a rule asks (`nodes`, parents, names, other statements found by
        name) is the whole file's, as in a full lint."""
        by_type = self._by_type if self.focus is None else self.focus
        for t in types:
            yield from by_type.get(t, ())

    def calls_by_name(self, name: str) -> list[ast.Call]:
        """Every `name(...)` and `x.name(...)` call in the file."""
        calls = self._shape.calls
        if not calls:
            for call in self._by_type.get(ast.Call, ()):
                func = call.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                if called is not None:
                    calls.setdefault(called, []).append(call)
            calls[None] = []  # filled: a file without calls is not scanned again
        return calls.get(name, [])

    def reads_named(self, name: str) -> list[ast.AST]:
        """Every `name` and `x.name` node of the file (loads, stores and deletes), in the
        order of `nodes(ast.Name, ast.Attribute)`: one pass per file for the questions
        that look for one name in many files (who reads `attention`, who stores `.fast`)."""
        named = self._shape.named
        if not named:
            for node in self._by_type.get(ast.Name, ()):
                named.setdefault(node.id, []).append(node)
            for node in self._by_type.get(ast.Attribute, ()):
                named.setdefault(node.attr, []).append(node)
            named[None] = []  # filled: a file without names is not scanned again
        return named.get(name, [])

    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        """The node holding `node` in this file's tree (None for the module, or for a
        node of another tree)."""
        return self._parents.get(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        node = self.parent(node)
        while node is not None:
            yield node
            node = self.parent(node)

    def enclosing_function(self, node: ast.AST):
        """The innermost def or lambda around `node` (not `node` itself), or None.

        Rules ask it of most nodes of a file (region_nodes, region_of), so each answer is
        kept for the nodes on the way up: a node that is no function has the same answer
        as its parent's."""
        known = self._enclosing
        if node in known:
            return known[node]
        parents = self._parents
        climbed = [node]
        found = None
        current = parents.get(node)
        while current is not None:
            if isinstance(current, FUNCTION_NODES):
                found = current
                break
            if current in known:
                found = known[current]
                break
            climbed.append(current)
            current = parents.get(current)
        for seen in climbed:
            known[seen] = found
        return found

    def statement_of(self, node: ast.AST) -> ast.stmt:
        while not isinstance(node, ast.stmt):
            node = self.parent(node)
        return node

    # -- names -----------------------------------------------------------------
    @cached_property
    def semantic(self) -> SemanticModel:
        """The file's semantic model: scopes and what a name holds where it is used."""
        return SemanticModel(self.tree, self.names, self._parents.get, self._by_type)

    def resolve(self, expr: ast.AST) -> Optional[str]:
        """The dotted name `expr` stands for where it is, through imports, aliases and
        scopes (a parameter shadowing a module-level import is not that import)."""
        return self.semantic.resolve(expr)

    def calls_to(self, *dotted: str) -> Iterator[ast.Call]:
        wanted = set(dotted)
        for call in self.nodes(ast.Call):
            if self.resolve(call.func) in wanted:
                yield call

    def torch_alias(self) -> Optional[str]:
        """A name bound to the `torch` module here, if any."""
        return self.names.alias_for("torch")

    # -- regions -----------------------------------------------------------------
    @property
    def _qualnames(self) -> dict[int, str]:
        qualnames = self._shape.qualnames
        if not qualnames:
            qualnames.update(def_qualnames_of_shape(self._by_type, self._parents))
            qualnames[None] = None  # filled: a file without defs is not walked again
        return qualnames

    def _def_names(self) -> tuple[str, ...]:
        """The names the dotted names of this file's defs start with after the module's
        (sorted): its top-level defs' and classes', and its lambdas' (each is named on its
        own, nested or not: lambda_qualname)."""
        names = {q.partition(".")[0] for q in self._qualnames.values() if q}
        names.update(lambda_qualname(node) for node in self._by_type.get(ast.Lambda, ()))
        return tuple(sorted(names))

    def qualname_of(self, func: ast.AST) -> Optional[str]:
        if isinstance(func, ast.Lambda):
            return lambda_qualname(func)
        return self._qualnames.get(id(func))

    def _dotted(self, qualname: str) -> str:
        return f"{self.names.module}.{qualname}" if self.names.module else qualname

    def dotted_of(self, func: ast.AST) -> Optional[str]:
        """A def's or class's dotted name, as the region index names it (`pkg.mod.Class.forward`)."""
        qualname = self.qualname_of(func)
        return self._dotted(qualname) if qualname is not None else None

    def region_of(self, node: ast.AST) -> Optional[RegionInfo]:
        """The region the innermost function around `node` belongs to, if any."""
        regions = self._regions  # (declared by the asking rule)
        func = node if isinstance(node, FUNCTION_NODES) else self.enclosing_function(node)
        return self._function_region(regions, func) if func is not None else None

    def _function_region(self, regions: RegionView, func: ast.AST) -> Optional[RegionInfo]:
        """region_of for a function node, once per function: rules ask it of every node
        of the file (CL508's compiled_nodes: 77k questions in corpus M's pass 2)."""
        key = id(func)
        if key in self._function_regions:
            return self._function_regions[key]
        qualname = self.qualname_of(func)
        region = regions.get(self._dotted(qualname)) if qualname is not None else None
        if region is None and (qualname is None or isinstance(func, ast.Lambda)):
            # a lambda (or a def without a qualname) runs where the function around it runs;
            # a def that is not a region: no further out
            outer = self.enclosing_function(func)
            region = self._function_region(regions, outer) if outer is not None else None
        self._function_regions[key] = region
        return region

    def region_of_def(self, dotted: str) -> Optional[RegionInfo]:
        """The region of a def by its dotted name as this file's imports write it
        (`pkg.mod.Class.forward`), any file: a script in `tools/` importing `pkg.mod`
        means the module named `tools.pkg.mod` first (names.import_prefixes)."""
        for prefix in import_prefixes(self.path):
            region = self._regions.get(prefix + dotted)
            if region is not None:
                return region
        return None

    def has_region(self, kind: Optional[str] = None) -> bool:
        """Cheap: could any code in this file be in a region (of `kind`)? Rules that
        only look inside regions return early when not."""
        self.get(RegionsFact)  # declared
        if self._local_kinds is None:
            module, regions = self.names.module, self.project.regions
            if self.names.is_package and module:
                # a package's `__init__.py`: its own defs, not its submodules' (those
                # would make every edit of a region under `pkg` re-lint `pkg/__init__.py`)
                found = regions.of_defs(module, self._def_names())
            else:
                found = regions.under(module)
            self._local_kinds = kinds_of(found)
        return bool(self._local_kinds) if kind is None else kind in self._local_kinds

    def in_region(self, node: ast.AST, kind: str) -> Optional[RegionInfo]:
        region = self.region_of(node)
        return region if region is not None and kind in region.kinds else None

    def scope_of(self, node: ast.AST) -> Optional[str]:
        """Name of the top-level def or class holding `node` (verify's target)."""
        top = None
        for anc in self.ancestors(node):
            if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                top = anc
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and top is None:
            top = node
        return top.name if top is not None else None

    # -- text ------------------------------------------------------------------
    def text(self, node: ast.AST) -> str:
        """ast.get_source_segment, from lines split once: get_source_segment splits the
        whole source on every call (a 1,000-line file with 100 findings: 3 s)."""
        end_row, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        if end_row is None or end_col is None:
            return ""
        line = self.source.text_line  # decoded when first asked (a finding's text needs a few lines)
        row, col = node.lineno - 1, node.col_offset
        if end_row > len(self.source.byte_lines):
            return ""
        if row == end_row - 1:
            return line(row + 1).encode()[col:end_col].decode()
        first = line(row + 1).encode()[col:].decode()
        last = line(end_row).encode()[:end_col].decode()
        return "\n".join([first, *(line(r) for r in range(row + 2, end_row)), last])
