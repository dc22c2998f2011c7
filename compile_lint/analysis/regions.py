"""Compiled, traced and cudagraph regions (the "Words" of hazards.md).

Two steps, so the same code serves one file and a whole project:

1. `summarize(tree, names)` -> ModuleSummary, per file and picklable: the defs a file
   holds, what each def calls, the submodules each class builds, and every compile or
   trace site with its target and options. No other file is needed.
2. `ProjectIndex(summaries).regions()` follows sites to their targets across files
   (imports, re-exports, wrappers that return `torch.compile(fn)`) and then follows
   calls from region code into project code (bounded depth), recording how each
   region was reached.

Linting one file alone is an index of one summary: what is not visible is not assumed.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Optional

from .declared import Recording, describe_declared
from .names import NameTable
from .torch_api import COMPILERS, CUDAGRAPH_MODES, DISABLE_FUNCS, TRACE_FUNCS
from .walk import walk_scope

COMPILE = "compiled"
TRACED = "traced"
CUDAGRAPH = "cudagraph"

COMPILE_FUNCS = COMPILERS  # torch.compile and torch._dynamo.optimize (analysis/torch_api.py)
MAX_DEPTH = 12
# nn.Module methods that return the module itself: `Net().to(dev).eval()` is a Net
RETURNS_SELF = frozenset(
    {"to", "eval", "train", "cuda", "cpu", "half", "float", "double", "bfloat16", "requires_grad_", "to_empty", "share_memory"}
)


def _rewraps(value: ast.expr, name: str) -> bool:
    return isinstance(value, ast.Call) and any(isinstance(a, ast.Name) and a.id == name for a in value.args)


def _is_project(ref: "Ref") -> bool:
    return not ref.dotted.startswith(("torch.", "builtins.", "numpy.", "functools."))


@dataclass(frozen=True)
class Ref:
    """What an expression refers to: a dotted def name, or an instance of a class."""

    dotted: str
    instance: bool = False


@dataclass(frozen=True)
class Site:
    """One place that compiles or traces something."""

    kind: str  # COMPILE or TRACED
    target: Optional[Ref]
    path: str
    row: int
    api: str  # "torch.compile", "torch.jit.trace", "Module.compile", a wrapper's name
    mode: Optional[str] = None
    dynamic: Optional[bool] = None
    cudagraphs: bool = False
    module: str = ""
    origin: str = "static"  # "static" | "config" | "marker" | "recorded" (analysis/declared.py)
    recording: Optional["Recording"] = None  # what a recorded run saw at this site

    def describe(self) -> str:
        """e.g. "compiled by torch.compile with mode='reduce-overhead' at train.py:41"."""
        if self.origin != "static":
            return describe_declared(self)
        opts = []
        if self.mode:
            opts.append(f"mode={self.mode!r}")
        if self.dynamic is not None:
            opts.append(f"dynamic={self.dynamic}")
        verb = "compiled" if self.kind == COMPILE else "traced"
        how = f" with {', '.join(opts)}" if opts else ""
        api = "Module.compile()" if self.api == "Module.compile" else f"{self.api}()"
        return f"{verb} by {api}{how} at {_display(self.path)}:{self.row}"


def _display(path: str) -> str:
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    return path if rel.startswith("..") else rel


@dataclass
class DefInfo:
    qualname: str
    kind: str  # "function" | "class" | "lambda"
    row: int
    calls: list[Ref] = field(default_factory=list)
    bases: list[str] = field(default_factory=list)  # classes: resolved base names
    submodules: list[Ref] = field(default_factory=list)  # classes: instances built in methods
    attr_types: dict[str, Ref] = field(default_factory=dict)  # classes: self.x = Cls(...)
    disabled: bool = False  # decorated with torch.compiler.disable
    wraps: Optional[tuple[int, str, tuple]] = None  # returns compile/trace(param i): (i, api, opts)


@dataclass
class ModuleSummary:
    path: str
    module: str
    defs: dict[str, DefInfo] = field(default_factory=dict)
    sites: list[Site] = field(default_factory=list)
    # calls of project functions with a resolvable first argument: maybe wrappers
    wrapper_calls: list[tuple[str, Ref, int, tuple]] = field(default_factory=list)
    bindings: dict[str, str] = field(default_factory=dict)
    declared: list = field(default_factory=list)  # `# compile-lint: compiled` markers (analysis/declared.py)

    def dotted(self, qualname: str) -> str:
        return f"{self.module}.{qualname}" if self.module else qualname


@dataclass
class RegionInfo:
    kinds: set[str] = field(default_factory=set)
    sites: list[Site] = field(default_factory=list)
    via: Optional[str] = None  # the region code that calls this one, when reached by a call

    def describe(self) -> str:
        site = self.sites[0].describe() if self.sites else "compiled"
        return f"{site} (reached from {self.via})" if self.via else site


def def_qualnames(tree: ast.Module) -> dict[int, str]:
    """id(def node) -> qualname ("f", "C.m", "f.inner"), for every def and class."""
    out: dict[int, str] = {}

    def walk(body: Iterable[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{node.name}"
                out[id(node)] = name
                walk(node.body, name + ".")
            else:
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.stmt):
                        walk([child], prefix)
                    elif isinstance(child, ast.ExceptHandler):
                        walk(child.body, prefix)
                    elif hasattr(child, "body") and isinstance(getattr(child, "body"), list):
                        walk(child.body, prefix)  # match cases

    walk(tree.body, "")
    return out


def lambda_qualname(node: ast.Lambda) -> str:
    return f"<lambda@{node.lineno}:{node.col_offset}>"


def _literal(expr: Optional[ast.expr]):
    if expr is None:
        return None
    try:
        return ast.literal_eval(expr)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


_NOT_LITERAL = object()


def compile_options(keywords: Iterable[tuple[str, ast.expr]]) -> tuple:
    """(mode, dynamic, cudagraphs) from torch.compile keyword arguments."""
    mode = dynamic = None
    cudagraphs = False
    for name, value in keywords:
        lit = _literal(value)
        if name == "mode" and isinstance(lit, str):
            mode = lit
        elif name == "dynamic" and (lit is True or lit is False):
            dynamic = lit
        elif name == "options" and isinstance(lit, dict) and lit.get("triton.cudagraphs") is True:
            cudagraphs = True
    if mode in CUDAGRAPH_MODES:
        cudagraphs = True
    return mode, dynamic, cudagraphs


class _Summarizer:
    def __init__(self, tree: ast.Module, names: NameTable, path: str, extra_compile=(), extra_trace=()):
        self.tree = tree
        self.names = names
        self.path = path
        self.compile_funcs = COMPILE_FUNCS | frozenset(extra_compile)
        self.trace_funcs = TRACE_FUNCS | frozenset(extra_trace)
        self.summary = ModuleSummary(path=path, module=names.module, bindings=dict(names.bindings))
        self.qualnames = def_qualnames(tree)
        self._scopes: dict[int, list[ast.AST]] = {}

    def _scope(self, owner, body) -> list[ast.AST]:
        """The nodes of one scope, walked once and reused by every pass over it."""
        nodes = self._scopes.get(id(owner))
        if nodes is None:
            nodes = self._scopes[id(owner)] = walk_scope(body)
        return nodes

    # -- local typing: which class a name or self attribute holds -------------
    def _instance_ref(self, value: ast.expr) -> Optional[Ref]:
        """`Cls(...)`, also through `.to(...)`, `.eval()` and other methods returning self."""
        while (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr in RETURNS_SELF
            and isinstance(value.func.value, ast.Call)
        ):
            value = value.func.value
        if isinstance(value, ast.Call):
            dotted = self.names.resolve(value.func)
            if dotted and not dotted.startswith("builtins.") and dotted not in self.compile_funcs:
                return Ref(dotted, instance=True)
        return None

    def _scope_types(self, nodes: list[ast.AST]) -> dict[str, Ref]:
        types: dict[str, Ref] = {}
        for node in nodes:
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            ref = self._instance_ref(value)
            if ref is None:
                continue
            for target in targets:
                if isinstance(target, ast.Name):
                    if _rewraps(value, target.id):
                        continue  # `m = wrap(m)` keeps what `m` was
                    old = types.get(target.id)
                    # a project class beats a later torch/stdlib re-wrap of the same name
                    if old is None or _is_project(ref) or not _is_project(old):
                        types[target.id] = ref
        return types

    def ref_of(self, expr: ast.expr, local: dict[str, Ref], cls: Optional[DefInfo], cls_dotted: Optional[str]) -> Optional[Ref]:
        """What `expr` (a compile target or a callee) refers to."""
        if isinstance(expr, ast.Name):
            if expr.id in local:
                return local[expr.id]
            if expr.id == "self" and cls_dotted:
                return Ref(cls_dotted, instance=True)  # `torch.onnx.export(self, ...)` in a method
            dotted = self.names.resolve(expr)
            return Ref(dotted) if dotted else None
        if isinstance(expr, ast.Lambda):
            return Ref(self.summary.dotted(lambda_qualname(expr)))
        if isinstance(expr, ast.Call):
            return self._instance_ref(expr)
        if isinstance(expr, ast.Attribute):
            base = expr.value
            if isinstance(base, ast.Name) and base.id == "self" and cls is not None and cls_dotted:
                if expr.attr in cls.attr_types:
                    return cls.attr_types[expr.attr]
                return Ref(f"{cls_dotted}.{expr.attr}")
            inner = self.ref_of(base, local, cls, cls_dotted) if isinstance(base, (ast.Name, ast.Attribute)) else None
            if inner is not None and inner.instance:
                return Ref(f"{inner.dotted}.{expr.attr}")  # a method of an instance
            if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "self":
                if inner is not None and inner.instance:
                    return Ref(f"{inner.dotted}.{expr.attr}")
            dotted = self.names.resolve(expr)
            return Ref(dotted) if dotted else None
        return None

    # -- sites -----------------------------------------------------------------
    def _site_from_call(self, call: ast.Call, local, cls, cls_dotted) -> Optional[Site]:
        func = self.names.resolve(call.func)
        keywords = list(self.names.partial_keywords(call.func)) + [(k.arg, k.value) for k in call.keywords if k.arg]
        if func in self.compile_funcs:
            target = self.ref_of(call.args[0], local, cls, cls_dotted) if call.args else None
            mode, dynamic, cg = compile_options(keywords)
            return Site(COMPILE, target, self.path, call.lineno, func, mode, dynamic, cg, self.summary.module)
        if func in self.trace_funcs:
            target = self.ref_of(call.args[0], local, cls, cls_dotted) if call.args else None
            return Site(TRACED, target, self.path, call.lineno, func, module=self.summary.module)
        # `m.compile(...)` on something that is not a module-level function
        if isinstance(call.func, ast.Attribute) and call.func.attr == "compile":
            if func is None or func.startswith(f"{self.summary.module}.") or not func.startswith(("re.", "builtins.", "torch.", "regex.")):
                receiver = self.ref_of(call.func.value, local, cls, cls_dotted)
                if receiver is not None and receiver.instance:
                    mode, dynamic, cg = compile_options(keywords)
                    return Site(COMPILE, receiver, self.path, call.lineno, "Module.compile", mode, dynamic, cg, self.summary.module)
        return None

    def _decorator_site(self, deco: ast.expr, target: Ref) -> Optional[Site]:
        call = deco if isinstance(deco, ast.Call) else None
        func = self.names.resolve(call.func if call else deco)
        if func in self.compile_funcs:
            keywords = list(self.names.partial_keywords(call.func if call else deco))
            if call:
                keywords += [(k.arg, k.value) for k in call.keywords if k.arg]
            mode, dynamic, cg = compile_options(keywords)
            return Site(COMPILE, target, self.path, deco.lineno, func, mode, dynamic, cg, self.summary.module)
        if func in self.trace_funcs:
            return Site(TRACED, target, self.path, deco.lineno, func, module=self.summary.module)
        return None

    def _is_disable(self, deco: ast.expr) -> bool:
        func = self.names.resolve(deco.func if isinstance(deco, ast.Call) else deco)
        return func in DISABLE_FUNCS

    def run(self) -> ModuleSummary:
        nodes = self._scope(self.tree, self.tree.body)
        self._visit_body(nodes, self._scope_types(nodes), None, None, None)
        return self.summary

    def _visit_body(self, nodes, local, cls, cls_dotted, owner: Optional[DefInfo]) -> None:
        """Record sites, calls and defs in one scope (not descending into nested defs)."""
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._visit_function(node, local, cls, cls_dotted)
            elif isinstance(node, ast.ClassDef):
                self._visit_class(node)
            elif isinstance(node, ast.Call):
                site = self._site_from_call(node, local, cls, cls_dotted)
                if site is not None:
                    self.summary.sites.append(site)
                    if node.args and isinstance(node.args[0], ast.Lambda):
                        self._visit_lambda(node.args[0], local, cls, cls_dotted)
                    continue
                callee = self.ref_of(node.func, local, cls, cls_dotted)
                if callee is not None and owner is not None:
                    owner.calls.append(callee)
                if callee is not None and node.args and not callee.dotted.startswith(("torch.", "builtins.")):
                    target = self.ref_of(node.args[0], local, cls, cls_dotted)
                    if target is not None:
                        kws = tuple((k.arg, _literal(k.value)) for k in node.keywords if k.arg)
                        kws = tuple((k, v) for k, v in kws if v is not _NOT_LITERAL)
                        self.summary.wrapper_calls.append((callee.dotted, target, node.lineno, kws))

    def _visit_lambda(self, node: ast.Lambda, local, cls, cls_dotted) -> None:
        info = DefInfo(lambda_qualname(node), "lambda", node.lineno)
        self.summary.defs[info.qualname] = info
        self._visit_body(walk_scope([ast.Expr(node.body)]), local, cls, cls_dotted, info)

    def _visit_function(self, node, outer_local, cls, cls_dotted) -> None:
        qualname = self.qualnames[id(node)]
        info = DefInfo(qualname, "function", node.lineno)
        info.disabled = any(self._is_disable(d) for d in node.decorator_list)
        self.summary.defs[qualname] = info
        target = Ref(self.summary.dotted(qualname))
        for deco in node.decorator_list:
            site = self._decorator_site(deco, target)
            if site is not None:
                self.summary.sites.append(site)
        nodes = self._scope(node, node.body)
        local = dict(outer_local)
        local.update(self._scope_types(nodes))
        for inner in nodes:  # nested defs shadow module names
            if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and id(inner) in self.qualnames:
                local[inner.name] = Ref(self.summary.dotted(self.qualnames[id(inner)]))
        params = [a.arg for a in node.args.posonlyargs + node.args.args]
        if cls is not None and params and params[0] in ("self", "cls"):
            params = params[1:]
        self._visit_body(nodes, local, cls, cls_dotted, info)
        info.wraps = self._wrapper_shape(nodes, params)

    def _wrapper_shape(self, nodes, params):
        """A project function whose `return` compiles or traces one of its parameters."""
        for ret in nodes:
            if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Call):
                call = ret.value
                func = self.names.resolve(call.func)
                if func in self.compile_funcs or func in self.trace_funcs:
                    if call.args and isinstance(call.args[0], ast.Name) and call.args[0].id in params:
                        keywords = list(self.names.partial_keywords(call.func)) + [(k.arg, k.value) for k in call.keywords if k.arg]
                        return (params.index(call.args[0].id), func, compile_options(keywords))
        return None

    def _visit_class(self, node: ast.ClassDef) -> None:
        qualname = self.qualnames[id(node)]
        info = DefInfo(qualname, "class", node.lineno)
        info.bases = [b for b in (self.names.resolve(base) for base in node.bases) if b]
        self.summary.defs[qualname] = info
        cls_dotted = self.summary.dotted(qualname)
        # self.x = Cls(...) in any method: attribute types and submodules
        class_nodes = self._scope(node, node.body)
        method_nodes = [
            self._scope(m, m.body) for m in class_nodes if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        for sub in [n for nodes in [class_nodes, *method_nodes] for n in nodes]:
            if isinstance(sub, ast.Assign):
                for target in sub.targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                        ref = self._instance_ref(sub.value)
                        if ref:
                            info.attr_types[target.attr] = ref
            if isinstance(sub, ast.Call):
                ref = self._instance_ref(sub)
                if ref and not ref.dotted.startswith(("torch.", "builtins.")):
                    info.submodules.append(ref)
        for deco in node.decorator_list:
            site = self._decorator_site(deco, Ref(cls_dotted, instance=True))
            if site is not None:
                self.summary.sites.append(site)
        self._visit_body(class_nodes, {}, info, cls_dotted, None)


_walk_scope = walk_scope  # older name, still imported by some rules


def summarize(tree: ast.Module, names: NameTable, path: str, compile_wrappers=(), trace_wrappers=()) -> ModuleSummary:
    return _Summarizer(tree, names, path, compile_wrappers, trace_wrappers).run()


class ProjectIndex:
    """Regions across every summarized file of a run."""

    def __init__(self, summaries: Iterable[ModuleSummary], declared: Iterable = ()):
        self.summaries = list(summaries)
        self.declared = list(declared)  # config and recorded regions (analysis/declared.py)
        self.resolved_declared = None  # their entry sites, unknown names and stale entries
        self.modules: dict[str, ModuleSummary] = {}
        self.defs: dict[str, tuple[ModuleSummary, DefInfo]] = {}
        for summary in self.summaries:
            self.modules.setdefault(summary.module, summary)
            for qualname, info in summary.defs.items():
                self.defs[summary.dotted(qualname)] = (summary, info)

    def lookup(self, dotted: str, _depth: int = 0) -> Optional[tuple[ModuleSummary, DefInfo]]:
        """The def a dotted name refers to, following re-exports and base classes."""
        if _depth > 6:
            return None
        found = self.defs.get(dotted)
        if found is not None:
            return found
        # a re-export: `pkg/__init__.py` has `from .blocks import Block`
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            summary = self.modules.get(module)
            if summary is None:
                continue
            head = parts[cut]
            if head in summary.bindings:
                target = ".".join([summary.bindings[head]] + parts[cut + 1 :])
                if target != dotted:
                    return self.lookup(target, _depth + 1)
            # a method inherited from a base class
            owner = self.defs.get(".".join(parts[:-1]))
            if owner is not None and owner[1].kind == "class":
                for base in owner[1].bases:
                    found = self.lookup(f"{base}.{parts[-1]}", _depth + 1)
                    if found is not None:
                        return found
            break
        return None

    def _entry_defs(self, ref: Ref) -> list[tuple[str, ModuleSummary, DefInfo]]:
        """The code that runs when `ref` is compiled: a function, or a module's forward."""
        found = self.lookup(ref.dotted)
        if found is None:
            return []
        summary, info = found
        dotted = summary.dotted(info.qualname)
        if info.kind == "class":
            out = []
            for method in ("forward", "__call__"):
                method_found = self.lookup(f"{dotted}.{method}")
                if method_found is not None:
                    out.append((method_found[0].dotted(method_found[1].qualname),) + method_found)
            return out
        return [(dotted, summary, info)]

    def all_sites(self) -> list[Site]:
        sites = [s for summary in self.summaries for s in summary.sites]
        # calls of project wrappers that compile or trace their argument
        for summary in self.summaries:
            for callee, target, row, kws in summary.wrapper_calls:
                found = self.lookup(callee)
                if found is None or found[1].wraps is None:
                    continue
                index, api, (mode, dynamic, cg) = found[1].wraps
                if index != 0:
                    continue
                kind = COMPILE if api in COMPILE_FUNCS else TRACED
                kw = dict(kws)
                if isinstance(kw.get("mode"), str):
                    mode = kw["mode"]
                    cg = cg or mode in CUDAGRAPH_MODES
                sites.append(Site(kind, target, summary.path, row, found[1].qualname, mode, dynamic, cg, summary.module))
        return sites

    def regions(self) -> dict[str, RegionInfo]:
        """dotted def name -> RegionInfo, for every def in a compiled or traced region."""
        result: dict[str, RegionInfo] = {}
        for site in self.all_sites():
            if site.target is None:
                continue
            kinds = {site.kind} | ({CUDAGRAPH} if site.cudagraphs and site.kind == COMPILE else set())
            for dotted, summary, info in self._entry_defs(site.target):
                self._mark(result, dotted, summary, info, kinds, site, None, 0)
        # declared and recorded regions: entry sites like any other, plus the code a
        # recorded run saw Dynamo compile (functions inlined into its graphs)
        from .declared import resolve

        self.resolved_declared = resolve(self, self.declared)
        for site, compiled_code in self.resolved_declared.entries:
            kinds = {site.kind} | ({CUDAGRAPH} if site.cudagraphs and site.kind == COMPILE else set())
            entries = self._entry_defs(site.target)
            for dotted, summary, info in entries:
                self._mark(result, dotted, summary, info, kinds, site, None, 0)
            via = entries[0][2].qualname if entries else None
            for dotted in compiled_code:
                found = self.defs.get(dotted)
                if found is not None and dotted not in result:
                    self._mark(result, dotted, found[0], found[1], kinds, site, via, 1)
        return result

    def _mark(self, result, dotted, summary, info, kinds, site, via, depth) -> None:
        if info.disabled or depth > MAX_DEPTH:
            return
        region = result.get(dotted)
        if region is None:
            region = result[dotted] = RegionInfo(via=via)
        elif kinds <= region.kinds and site in region.sites:
            return
        new_kinds = kinds - region.kinds
        region.kinds |= kinds
        if site not in region.sites:
            region.sites.append(site)
        elif not new_kinds:
            return
        callees: list[Ref] = list(info.calls)
        owner_name = dotted.rsplit(".", 1)[0]
        owner = self.defs.get(owner_name)
        if owner is not None and owner[1].kind == "class" and info.qualname.endswith(".forward"):
            callees += owner[1].submodules
        short = info.qualname
        for callee in callees:
            for c_dotted, c_summary, c_info in self._callee_defs(callee):
                if c_dotted != dotted:
                    self._mark(result, c_dotted, c_summary, c_info, kinds, site, short, depth + 1)

    def _callee_defs(self, ref: Ref):
        found = self.lookup(ref.dotted)
        if found is None:
            return []
        summary, info = found
        if info.kind == "class":
            # calling an instance runs forward; calling the class only builds one
            return self._entry_defs(Ref(ref.dotted, True)) if ref.instance else []
        return [(summary.dotted(info.qualname), summary, info)]
