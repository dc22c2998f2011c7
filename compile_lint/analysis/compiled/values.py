"""Names bound to compiled callables, and what a compile site says about its target.

`regions.py` answers "is this def compiled?"; the CL4xx rules also need the other
direction, at a call site: "is the thing called here a CUDA-graph-compiled callable,
and where was it compiled?" (`model = torch.compile(model, mode="reduce-overhead")`
then `model(x)`; `self.unet = torch.compile(...)` then `self.unet(x)` in another
method; `@torch.compile(mode=...)` on a def; `model.compile(mode=...)`; a project
wrapper that returns `torch.compile(fn, ...)`; a compiled value imported from another
file of the project). The CL3xx rules ask the reverse question about a region: what
did its compile site do to the target (`torch.compile(model.half())`, `.eval()`,
`options={"fallback_random": True}`, `backend="aot_eager"`) and where is it called.

What a *name* holds is the value model's answer (analysis/semantic/bindings.py over values.py
`FileBindings`): the bindings that reach the use, so a local or parameter of the
same name shadows a compiled global, and `a, b = torch.compile(f), g` binds `a`. A
name imported from another project file holds what that file's module scope binds it
to (the same bindings, read from the file's tree alone). Attribute chains
(`self.unet = torch.compile(...)`, `pipe.unet = ...`), decorated methods and
`m.compile(...)` statements, which the per-file bindings do not model, are kept in
`CompiledValues.bindings`.

Facts about other files come from the engine's project handle (`facts.project`,
analysis/project/context.py): only files that a region's Site or an import names are read.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterator, NamedTuple, Optional

from ..semantic.bindings import BindingsFact, bindings_under, module_bindings, module_statements
from ..semantic.facts import FUNCTION_NODES, Fact, ModuleFacts
from ..semantic.names import chain_text  # (importers read it here too)
from ..project.context import path_for_module
from ..reach.regions import COMPILE, RegionInfo, Site
from ..torch_api import COMPILE_FUNCS, CUDAGRAPH_MODES
from ..semantic.walk import walk

NOT_MODULE_COMPILE = ("re.", "builtins.", "torch.", "regex.")
# the spellings a CUDA-graph compile needs in its own file (CompileCall.cudagraphs)
CUDAGRAPH_TOKENS = tuple(sorted(mode.encode() for mode in CUDAGRAPH_MODES)) + (b"triton.cudagraphs",)


def literal(expr: Optional[ast.AST]):
    """The value of a literal expression, or `NOT_LITERAL`."""
    if expr is None:
        return NOT_LITERAL
    try:
        return ast.literal_eval(expr)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NOT_LITERAL


NOT_LITERAL = object()


def chain_root(expr: ast.AST) -> Optional[ast.Name]:
    """The Name at the bottom of an attribute/call/subscript chain (`pipe` in `pipe.vae.decode(z).sample`)."""
    while True:
        if isinstance(expr, ast.Attribute):
            expr = expr.value
        elif isinstance(expr, ast.Call):
            expr = expr.func
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        else:
            break
    return expr if isinstance(expr, ast.Name) else None


@dataclass
class CompileCall:
    """One `torch.compile`-like call (or decorator, or `m.compile(...)`) and its options."""

    node: ast.AST
    api: str
    path: str
    row: int
    module: str = ""
    target: Optional[ast.expr] = None
    mode: Optional[str] = None
    mode_node: Optional[ast.expr] = None  # the literal, when written on this call
    dynamic: Optional[bool] = None
    dynamic_node: Optional[ast.expr] = None
    options: dict = field(default_factory=dict)
    backend: Optional[str] = None

    @property
    def cudagraphs(self) -> bool:
        if self.options.get("triton.cudagraphs") is False:
            return False
        return self.mode in CUDAGRAPH_MODES or self.options.get("triton.cudagraphs") is True

    def site(self) -> Site:
        return Site(COMPILE, None, self.path, self.row, self.api, self.mode, self.dynamic, self.cudagraphs, self.module)

    def describe(self) -> str:
        text = self.site().describe()
        if self.options.get("triton.cudagraphs") is True and self.mode not in CUDAGRAPH_MODES:
            text = text.replace(" at ", " with options={'triton.cudagraphs': True} at ", 1)
        return text

    def region(self) -> RegionInfo:
        kinds = {COMPILE} | ({"cudagraph"} if self.cudagraphs else set())
        return RegionInfo(kinds=kinds, sites=[self.site()])


def _fill_options(cc: CompileCall, keywords) -> CompileCall:
    for name, value, here in keywords:
        lit = literal(value)
        if name == "mode" and isinstance(lit, str):
            cc.mode = lit
            cc.mode_node = value if here else None
        elif name == "dynamic" and lit in (True, False, None):
            cc.dynamic = lit
            cc.dynamic_node = value if here else None
        elif name == "options" and isinstance(lit, dict):
            cc.options = dict(lit)
        elif name == "backend" and isinstance(lit, str):
            cc.backend = lit
    return cc


def _wrapper_compile(names, func: ast.AST) -> Optional[tuple[int, ast.Call]]:
    """A def of this file whose `return` compiles one of its parameters: (index, call)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    params = [a.arg for a in func.args.posonlyargs + func.args.args]
    for node in walk(func):  # ast.walk's order, without its `ctx` nodes
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Call):
            call = node.value
            if names.resolve(call.func) in COMPILE_FUNCS and call.args and isinstance(call.args[0], ast.Name):
                if call.args[0].id in params:
                    return params.index(call.args[0].id), call
    return None


class CompileCalls:
    """Which calls, decorators and `m.compile(...)` statements of one file compile
    something, with their options. Needs only the file's tree and names, so another
    file's module-level compiled values are read without building its ModuleFacts."""

    def __init__(self, tree: ast.Module, names, path: str, settings, data: bytes = b"compile"):
        self.names = names
        self.path = path
        self.wrappers = tuple(getattr(settings, "compile_wrappers", ()) or ())
        # `torch.compile`, a wrapper def calling it and `m.compile()` all spell "compile"
        self.quiet = b"compile" not in data and not self.wrappers
        # the last names of the compile functions: `names.resolve(a.b)` ends in `.b`, so a
        # call of an attribute with another name never resolves to one of them
        self.ends = frozenset(dotted.rpartition(".")[2] for dotted in COMPILE_FUNCS | set(self.wrappers))
        self.defs: dict[str, ast.AST] = {}  # module-level def name -> node
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defs[stmt.name] = stmt
        self._wrapper_cache: dict[str, Optional[tuple]] = {}  # local def name -> its compile shape
        self._module_values: dict[str, Optional[CompileCall]] = {}  # module-level name -> what it holds
        self._module_table: Optional[dict] = None  # the value model's module-scope bindings
        self._in_place: dict[str, tuple] = {}  # name -> (position, `name.compile(...)` at module level)
        self.tree = tree

    def _keywords(self, call: ast.Call) -> list[tuple[str, ast.expr, bool]]:
        """(name, value, written-on-this-call) for a call's keywords, partial keywords first."""
        out = [(k, v, False) for k, v in self.names.partial_keywords(call.func)]
        out += [(k.arg, k.value, True) for k in call.keywords if k.arg]
        return out

    def compile_call(self, call: ast.AST) -> Optional[CompileCall]:
        """Options of `call` when it compiles something: torch.compile (through aliases
        and partials), a configured compile wrapper, or a wrapper def of this file."""
        if self.quiet or not isinstance(call, ast.Call):
            return None
        func = call.func
        if not (isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and func.attr in self.ends)):
            return None  # resolves to no compile function, and is no wrapper def of this file
        names = self.names
        dotted = names.resolve(call.func)
        if dotted in COMPILE_FUNCS or (dotted and dotted in self.wrappers):
            cc = CompileCall(call, dotted, self.path, call.lineno, names.module, call.args[0] if call.args else None)
            return _fill_options(cc, self._keywords(call))
        if isinstance(call.func, ast.Name) and call.func.id in self.defs:
            if call.func.id not in self._wrapper_cache:
                self._wrapper_cache[call.func.id] = _wrapper_compile(names, self.defs[call.func.id])
            shape = self._wrapper_cache[call.func.id]
            if shape is not None:
                index, inner = shape
                target = call.args[index] if len(call.args) > index else None
                cc = CompileCall(call, call.func.id, self.path, call.lineno, names.module, target)
                _fill_options(cc, [(k, v, False) for k, v, _ in self._keywords(inner)])
                return _fill_options(cc, [(k.arg, k.value, False) for k in call.keywords if k.arg in ("mode", "dynamic")])
        return None

    def decorator_compile(self, deco: ast.expr) -> Optional[CompileCall]:
        if self.quiet:
            return None
        call = deco if isinstance(deco, ast.Call) else None
        dotted = self.names.resolve(call.func if call else deco)
        if dotted not in COMPILE_FUNCS:
            return None
        cc = CompileCall(deco, dotted, self.path, deco.lineno, self.names.module, None)
        kws = [(k, v, False) for k, v in self.names.partial_keywords(call.func if call else deco)]
        if call:
            kws += [(k.arg, k.value, True) for k in call.keywords if k.arg]
        return _fill_options(cc, kws)

    def module_compile(self, call: ast.Call) -> Optional[CompileCall]:
        """`m.compile(mode=...)` on something that is not `torch`/`re`: compiles `m` in place."""
        if self.quiet or not (isinstance(call.func, ast.Attribute) and call.func.attr == "compile"):
            return None
        dotted = self.names.resolve(call.func)
        if dotted is not None and dotted.startswith(NOT_MODULE_COMPILE):
            return None
        if chain_text(call.func.value) is None:
            return None
        cc = CompileCall(call, "Module.compile", self.path, call.lineno, self.names.module, call.func.value)
        return _fill_options(cc, [(k.arg, k.value, True) for k in call.keywords if k.arg])

    def probe_arg(self, name: str) -> str:
        """What `binds_compiled` needs to ask this file about `name` again."""
        import json

        return json.dumps([name, self.names.module, self.names.is_package, list(self.wrappers)], separators=(",", ":"))

    def module_value(self, name: str) -> Optional[CompileCall]:
        """The compiled callable a module-level `name` of this file holds, read from the
        value model's module-scope bindings (bindings.module_bindings): the first of its
        bindings (an `if`/`try`/`for`/`match` branch included) that compiles something,
        or a `name.compile(...)` statement at module level, whichever comes first."""
        if self.quiet:
            return None
        if name not in self._module_values:
            self._module_values[name] = self._module_value(name)
        return self._module_values[name]

    def _module_value(self, name: str) -> Optional[CompileCall]:
        if self._module_table is None:
            self._module_table = module_bindings(self.tree)
            self._in_place = {}
            for stmt in module_statements(self.tree):  # `model.compile(...)`: compiled in place, not bound
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                    func = stmt.value.func
                    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id not in self._in_place:
                        cc = self.module_compile(stmt.value)
                        if cc is not None:
                            self._in_place[func.value.id] = ((stmt.lineno, stmt.col_offset), cc)
        found = self._in_place.get(name)
        for bound in self._module_table.get(name, ()):
            cc = None
            if bound.kind == "assign":
                cc = self.compile_call(bound.value)
            elif bound.kind == "def" and isinstance(bound.value, (ast.FunctionDef, ast.AsyncFunctionDef)):
                cc = next(filter(None, map(self.decorator_compile, bound.value.decorator_list)), None)
            if cc is not None:
                if found is None or (bound.row, bound.col) < found[0]:
                    found = ((bound.row, bound.col), cc)
                break
        return found[1] if found is not None else None


# how a binding reaches a use (CompiledValues._reach)
MODULE_LEVEL, ENCLOSING_DEF = 1, 2

class CompiledValues:
    """Everything in one file that binds or calls a compiled callable."""

    def __init__(self, facts: ModuleFacts):
        self.facts = facts
        self.compiles = CompileCalls(facts.tree, facts.names, facts.path, facts.settings, facts.source.data)
        self.defs = self.compiles.defs
        # every binding of a compiled callable: (text, def, class, row, compile call); a
        # name's are read through the value model (`_name_callee`), attribute chains here
        self.bindings: list[tuple[str, Optional[ast.AST], Optional[ast.ClassDef], int, CompileCall]] = []
        self.in_place: list[tuple] = []  # the bindings that are `name.compile(...)` statements
        self._calls: dict[int, Optional[CompileCall]] = {}  # id(call) -> its compile call
        self._file_bindings = None  # the value model's bindings of this file (bindings_under)
        self._decorators: dict[int, Optional[CompileCall]] = {}  # id(decorator) -> its compile call
        self._other_files: dict[str, Optional[CompileCalls]] = {}  # other module -> its compile calls
        self._may_call: dict[bool, bool] = {}  # cudagraphs only? -> may_call_compiled
        self._cudagraph_modules: dict[str, bool] = {}  # module -> _may_compile_with_cudagraphs
        self._collect()

    # -- compile calls --------------------------------------------------------
    def compile_call(self, call: ast.AST) -> Optional[CompileCall]:
        """Options of `call` when it compiles something (CompileCalls.compile_call); one
        CompileCall per call node, so callers can compare them by identity."""
        if not isinstance(call, ast.Call):
            return None
        key = id(call)
        if key not in self._calls:
            self._calls[key] = self.compiles.compile_call(call)
        return self._calls[key]

    def _decorator_compile(self, deco: ast.expr, func: ast.AST = None) -> Optional[CompileCall]:
        key = id(deco)
        if key not in self._decorators:
            self._decorators[key] = self.compiles.decorator_compile(deco)
        return self._decorators[key]

    def _module_compile(self, call: ast.Call) -> Optional[CompileCall]:
        return self.compiles.module_compile(call)

    # -- bindings ---------------------------------------------------------------
    def _scope(self, node: ast.AST) -> tuple[Optional[ast.AST], Optional[ast.ClassDef]]:
        func = cls = None
        for anc in self.facts.ancestors(node):
            if func is None and isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
                func = anc
            if isinstance(anc, ast.ClassDef):
                cls = anc
                break
        return func, cls

    def _bind(self, target: ast.AST, at: ast.AST, cc: CompileCall) -> None:
        text = chain_text(target)
        if text is None:
            return
        func, cls = self._scope(at)
        if text.startswith("self."):
            func = None  # visible in every method of the class
        self.bindings.append((text, func, cls, at.lineno, cc))

    def _collect(self) -> None:
        facts = self.facts
        if self.compiles.quiet:
            return
        for node in facts.nodes(ast.Assign, ast.AnnAssign):
            value = node.value
            if value is None:
                continue
            cc = self.compile_call(value)
            if cc is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                self._bind(target, node, cc)
        for node in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            for deco in node.decorator_list:
                cc = self._decorator_compile(deco, node)
                if cc is not None:
                    func, cls = self._scope(node)
                    parent = facts.parent(node)
                    text = f"self.{node.name}" if isinstance(parent, ast.ClassDef) else node.name
                    self.bindings.append((text, None if isinstance(parent, ast.ClassDef) else func, cls, node.lineno, cc))
        for node in facts.nodes(ast.Expr):
            if isinstance(node.value, ast.Call):
                cc = self._module_compile(node.value)
                if cc is not None:
                    self._bind(node.value.func.value, node, cc)
                    if isinstance(node.value.func.value, ast.Name):
                        self.in_place.append(self.bindings[-1])

    def compile_call_at(self, row: int) -> Optional[CompileCall]:
        """The compile call (or decorator) written on line `row`."""
        for binding in self.bindings:
            if binding[4].row == row:
                return binding[4]
        for call in self.facts.nodes(ast.Call):
            if call.lineno == row:
                cc = self.compile_call(call) or self._module_compile(call)
                if cc is not None:
                    return cc
        return None

    # -- lookup at a call site -------------------------------------------------------
    def callee(self, func: ast.AST, at: Optional[ast.AST] = None) -> Optional[CompileCall]:
        """The compile call behind the callable `func` called at `at` (default: func)."""
        at = at if at is not None else func
        cc = self.compile_call(func)
        if cc is not None:
            return cc
        if isinstance(func, ast.Name):
            return self._name_callee(func, at)
        text = chain_text(func)
        if text is None:
            return None
        use_func, use_cls = self._scope(at)
        enclosing = [a for a in self.facts.ancestors(at) if isinstance(a, FUNCTION_NODES)]
        best = None
        for b_text, b_func, b_cls, row, cc in self.bindings:
            if b_text != text:
                continue
            if b_text.startswith("self."):
                if b_cls is not None and b_cls is use_cls:
                    best = cc
                continue
            reach = self._reach(b_func, b_cls, row, enclosing, at)
            best = (best or cc) if reach == MODULE_LEVEL else cc if reach == ENCLOSING_DEF else best
        if best is not None:
            return best
        return self._imported(func)

    def _reach(self, b_func, b_cls, row: int, enclosing: list, at: ast.AST) -> int:
        """How a binding made in `b_func`/`b_cls` at `row` reaches a use at `at` inside the
        defs `enclosing`: MODULE_LEVEL (visible in defs, and below it at module level:
        the first such binding counts), ENCLOSING_DEF (above the use, or in a loop around
        it: the last counts), or 0."""
        if b_func is None and b_cls is None:
            return MODULE_LEVEL if enclosing or row <= at.lineno else 0
        if b_func is not None and b_func in enclosing and (row <= at.lineno or _in_loop_with(self.facts, at, b_func)):
            return ENCLOSING_DEF
        return 0

    def _name_callee(self, name: ast.Name, at: ast.AST) -> Optional[CompileCall]:
        """What a name holds, by the value model's reaching rule (bindings.py): the
        compile call of the binding that reaches it (`fast = torch.compile(f)`, a
        decorated def; a later binding in a loop around the use too), else a
        `name.compile(...)` statement that reaches it, else a compiled value of another
        file it was imported from."""
        if self._file_bindings is None:
            self._file_bindings = bindings_under(self.facts)
        bindings = self._file_bindings
        scope = bindings.binding_scope(name)
        if scope is None:  # bound nowhere in this file: a global of another file
            return self._in_place(name, at) or self._imported(name)
        reaching = bindings.reaching(name)
        if scope is bindings.scope_around(name) and scope is not self.facts.tree and _in_loop_with(self.facts, at, scope):
            # the next iteration sees bindings below the use (`out = model(x)` then `model = torch.compile(model)`)
            here = (name.lineno, name.col_offset)
            reaching = reaching + [b for b in bindings.table(scope).get(name.id, ()) if (b.row, b.col) > here]
        best = None
        for bound in reaching:
            if bound.kind == "assign":
                cc = self.compile_call(bound.value)
            elif bound.kind == "def" and isinstance(bound.value, FUNCTION_NODES[:2]):
                cc = next(filter(None, map(self._decorator_compile, bound.value.decorator_list)), None)
            else:
                cc = None
            best = cc or best
        return best or self._in_place(name, at)

    def _in_place(self, name: ast.Name, at: ast.AST) -> Optional[CompileCall]:
        """A `name.compile(...)` statement visible at `at` (in an enclosing def, or at
        module level above it or from any def)."""
        enclosing = None
        best = None
        for b_text, b_func, b_cls, row, cc in self.in_place:
            if b_text != name.id:
                continue
            if enclosing is None:
                enclosing = [a for a in self.facts.ancestors(at) if isinstance(a, FUNCTION_NODES)]
            reach = self._reach(b_func, b_cls, row, enclosing, at)
            best = (best or cc) if reach == MODULE_LEVEL else cc if reach == ENCLOSING_DEF else best
        return best

    def _imported(self, func: Optional[ast.AST], dotted: Optional[str] = None) -> Optional[CompileCall]:
        """A module-level compiled value of another project file (`from engine import
        decoder`): what the value model's module scope of that file binds the name to
        (CompileCalls.module_value). That file is parsed once per process (the project's
        Sources), only when it mentions `compile`. The cache records that probe; and the
        file's bytes when it does bind the name to a compiled callable, so an edit of
        that compile (its mode) re-lints this file; when it does not, the answer
        (`binds_compiled`, asked again only when the file changes), so a name that
        becomes compiled there re-lints this file too (tests/test_cache_imports.py).
        (Recording the bytes of every file read would tie most kornia files to nine
        others.)"""
        if func is not None:
            dotted = self.facts.resolve(func)
        if not dotted or dotted.startswith(("torch.", "builtins.")) or "." not in dotted:
            return None
        module, _, name = dotted.rpartition(".")
        if module == self.facts.names.module:
            return None
        calls = self._other_files.get(module, False)
        if calls is False:
            calls = self._other_files[module] = self._compile_calls_of(module)
        found = calls.module_value(name) if calls is not None else None
        if found is not None:
            self.facts.project.read.setdefault(calls.path, None)  # a cache dependency on its bytes
        elif calls is not None:  # it mentions compile, but not for `name`: depend on that answer
            self.facts.project.probes[(calls.path, "binds_compiled", calls.probe_arg(name))] = False
        return found

    def _compile_calls_of(self, module: str) -> Optional[CompileCalls]:
        facts = self.facts
        path = path_for_module(facts, module)
        if path is None or not facts.project.mentions(path, b"compile"):
            return None
        wrappers = tuple(getattr(facts.settings, "compile_wrappers", ()) or ())
        return facts.project.sources.derived(
            path, ("compile calls", wrappers, path),  # (calls.path is the spelling asked)
            lambda source, tree, names: CompileCalls(tree, names, path, facts.settings, source.data))

    def _maybe_compile_calls(self) -> Iterator[ast.Call]:
        """The calls of the file that `compile_call` may take for compile calls: a name
        (torch.compile imported, a partial, a wrapper def of the file) or an attribute
        named like one of the compile functions (`names.resolve` of `a.b` ends in `.b`);
        a call of anything else never resolves to one."""
        ends = self.compiles.ends
        for call in self.facts.nodes(ast.Call):
            func = call.func
            if isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and func.attr in ends):
                yield call

    def may_call_compiled(self, cudagraphs: bool = False) -> bool:
        """Whether any call in this file can reach a compiled callable (cheap pre-check)."""
        if cudagraphs not in self._may_call:
            self._may_call[cudagraphs] = self._may_call_compiled(cudagraphs)
        return self._may_call[cudagraphs]

    def _may_call_compiled(self, cudagraphs: bool) -> bool:
        if any((cc.cudagraphs or not cudagraphs) for *_, cc in self.bindings):
            return True
        if not self.compiles.quiet and any(self.compile_call(c) is not None for c in self._maybe_compile_calls()):
            return True
        imported = dict.fromkeys(alias.asname or alias.name for node in self.facts.nodes(ast.ImportFrom) for alias in node.names)
        if not imported:
            return False
        # an imported name reaches `callee` only as a call's callee or positional argument
        # (`decode(z)`, `run(decode, z)`): only those are looked up in their files
        called = set()
        for call in self.facts.nodes(ast.Call):
            for expr in (call.func, *call.args):
                if type(expr) is ast.Name and expr.id in imported:
                    called.add(expr.id)
        for name in (n for n in imported if n in called):  # in import order
            # (the module table's reading: a name it leaves out, imported two ways in
            # the file, is not looked up by this pre-check: reading those files cost a
            # quarter of pass 1's instructions on corpus M for no finding)
            dotted = self.facts.names.resolve_name(name)
            if cudagraphs and not self._may_compile_with_cudagraphs(dotted):
                continue
            cc = self._imported(None, dotted)
            if cc is not None and (cc.cudagraphs or not cudagraphs):
                return True
        return False

    def _may_compile_with_cudagraphs(self, dotted: Optional[str]) -> bool:
        """Whether the file of the module that the imported name `dotted` comes from may
        spell a CUDA-graph compile: a compile call's mode and options are literals of the
        file that holds it (`_fill_options`), so a file without any of CUDAGRAPH_TOKENS
        binds no name to a CUDA-graph compile and need not be parsed (CL401's pre-check
        parsed 93 such files on corpus M). True where the file is not known."""
        if not dotted or "." not in dotted or dotted.startswith(("torch.", "builtins.")):
            return True
        module = dotted.rpartition(".")[0]
        # (once per module: a file calls many names of one module, 12,724 asks on corpus M)
        found = self._cudagraph_modules.get(module)
        if found is None:
            path = path_for_module(self.facts, module)
            project = self.facts.project
            found = self._cudagraph_modules[module] = path is None or any(
                project.mentions(path, token) for token in CUDAGRAPH_TOKENS)
        return found


def _in_loop_with(facts: ModuleFacts, node: ast.AST, func: ast.AST) -> bool:
    for anc in facts.ancestors(node):
        if anc is func:
            return False
        if isinstance(anc, (ast.For, ast.While, ast.AsyncFor)):
            return True
    return False


class CompiledValuesFact(Fact):
    """Which names in a file hold compiled/traced callables (CompiledValues)."""

    name = "compiled values"
    needs = (BindingsFact,)

    @classmethod
    def compute(cls, facts: ModuleFacts) -> "CompiledValues":
        return CompiledValues(facts)


def compiled_values(facts: ModuleFacts) -> CompiledValues:
    return facts.get(CompiledValuesFact)


def facts_for_path(facts: ModuleFacts, path: str) -> Optional[ModuleFacts]:
    """ModuleFacts for another file of the project, through the engine's project handle."""
    return facts.project.facts_for_path(facts, path)


def site_call(facts: ModuleFacts, site: Site) -> Optional[tuple[ModuleFacts, CompileCall]]:
    """The compile call behind a region's Site, with the facts of its file."""
    other = facts_for_path(facts, site.path)
    if other is None:
        return None
    cc = compiled_values(other).compile_call_at(site.row)
    return (other, cc) if cc is not None else None


def calls_of_site(facts: ModuleFacts, site: Site) -> Iterator[tuple[ModuleFacts, ast.Call]]:
    """Calls, in the site's file, of the callable the site compiled."""
    found = site_call(facts, site)
    if found is None:
        return
    other, cc = found
    values = compiled_values(other)
    for call in other.nodes(ast.Call):
        if call.func is cc.node:
            yield other, call  # torch.compile(m)(x)
            continue
        callee = values.callee(call.func, call)
        if callee is cc:
            yield other, call


# -- what a compile site did to its target ----------------------------------------------
CONVERSIONS = {"half": "float16", "bfloat16": "bfloat16", "float": "float32", "double": "float64"}


def _assignments_of(facts: ModuleFacts, text: str, before: ast.AST) -> list[ast.AST]:
    """Statements binding or converting `text` (`model`, `self.unet`) that can reach
    `before` (not the statement holding `before`), in source order."""
    func = facts.enclosing_function(before)
    holder = facts.statement_of(before)
    scopes: list[ast.AST] = []
    if func is not None:
        scopes.append(func)
    if text.startswith("self."):
        cls = next((a for a in facts.ancestors(before) if isinstance(a, ast.ClassDef)), None)
        if cls is not None:
            scopes.append(cls)
    scopes.append(facts.tree)
    for scope in scopes:
        out = []
        for node in walk(scope):
            if node is holder:
                continue
            if isinstance(node, ast.Assign) and any(chain_text(t) == text for t in node.targets):
                out.append(node)
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                f = node.value.func
                if isinstance(f, ast.Attribute) and chain_text(f.value) == text and f.attr in MODULE_METHODS:
                    out.append(node)
        if out:
            earlier = [n for n in out if n.lineno <= before.lineno]
            return sorted(earlier or out, key=lambda n: (n.lineno, n.col_offset))
    return []


MODULE_METHODS = frozenset(set(CONVERSIONS) | {"to", "eval", "train", "cuda", "cpu", "requires_grad_"})


def method_chain(expr: ast.AST) -> list[ast.Call]:
    """The calls of a chain, outermost first: `Net().half().eval()` -> [eval, half, Net]."""
    out = []
    while isinstance(expr, ast.Call):
        out.append(expr)
        expr = expr.func.value if isinstance(expr.func, ast.Attribute) else None
    return out


def target_history(facts: ModuleFacts, target: Optional[ast.AST], at: ast.AST) -> list[ast.Call]:
    """Calls applied to a compile target, latest first: its own chain, then those of the
    statements that bound or converted it before the compile (`model = Net().half()`,
    `model.eval()`), back to the statement that created it."""
    if target is None:
        return []
    calls = method_chain(target)
    text = chain_text(target)
    if text is None:
        return calls
    for stmt in reversed(_assignments_of(facts, text, at)):
        calls.extend(method_chain(stmt.value))
        if isinstance(stmt, ast.Assign):
            root = chain_root(stmt.value)
            if not (root is not None and isinstance(stmt.value, ast.Call) and chain_text(stmt.value.func.value if isinstance(stmt.value.func, ast.Attribute) else stmt.value) == text):
                break  # a fresh binding: what came before does not apply
    return calls


def binds_compiled(data: bytes, arg: str) -> bool:
    """The probe `binds_compiled` (analysis/project/context.py PROBES): whether a file's module
    scope binds a name to a compiled callable (CompileCalls.module_value), the file
    read from `data` as `arg` (CompileCalls.probe_arg) says it was read when linting."""
    import json

    from ...source import ParseFailure, SourceFile
    from ..semantic.names import NameTable

    name, module, is_package, wrappers = json.loads(arg)
    try:
        tree = SourceFile("<probe>", data).parse()
    except ParseFailure:
        return False
    settings = _ProbeSettings(tuple(wrappers))
    return CompileCalls(tree, NameTable.build(tree, module, is_package), "<probe>", settings, data).module_value(name) is not None


class _ProbeSettings(NamedTuple):
    compile_wrappers: tuple
