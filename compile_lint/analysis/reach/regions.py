"""Compiled, traced and cudagraph regions.

Two steps, so the same code serves one file and a whole project:

1. `summarize(tree, names)` -> ModuleSummary, per file and picklable: the defs a file
   holds, what each def calls, the submodules each class builds, and every compile or
   trace site with its target and options. No other file is needed.
2. `ProjectIndex(summaries).regions()` follows sites to their targets across files
   (imports, re-exports, wrappers that return `torch.compile(fn)`) and then follows
   calls from region code into project code (bounded depth), recording how each
   region was reached.

What a site compiles is resolved through the value model (values.py): factories,
classmethods, attributes, containers, registries, annotated parameters and the calls
that pass a parameter. `ProjectIndex.resolved_sites()` says, per site, the defs it
runs or why none was found (`compile-lint regions` prints it).

Linting one file alone is an index of one summary: what is not visible is not assumed.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Iterator, Optional

from .declared import Recording, describe_declared
from .sys_paths import WORKING_DIR, added_folders
from ..semantic.names import NameTable, assigned_name, chain_text, import_prefixes
from ..torch_api import COMPILERS, CUDAGRAPH_MODES, DISABLE_FUNCS, EXPORTERS, SCRIPT_FUNCS, TRACE_FUNCS
from .configured import TARGET_KEYS, ConfiguredTargets
from .values import isinstance_narrowed_reads, unnarrowed, isinstance_tests, ATTR, PRIOR, CALL, DECORATED, SEQ, ITEM, EMPTY, KWARGS, LOCAL, LOOKED_UP, CALLED_RESULT, NONE_DEFAULT, RECORDED_ARGS, SUPER, SELF, UNION, KNOWN_ROOTS, TORCH_MODULE, G, NARROW, PARAM, UNKNOWN, Resolver, Scope, TermBuilder, Value, _target_names, describe_external, passed_term, patched_attr, own_super_attribute, FLAG, GUARDED, STAR, VARARGS, assigned_names
from ..semantic.signatures import call_argument, first_parameter, parameter_defaults
from ..semantic.walk import walk as _walk_plain
from ..semantic.walk import walk_scope

COMPILE = "compiled"
TRACED = "traced"
# a resolved site's reason starts with this when a member of its value is unseen
PARTIAL = "partial: "
SCRIPTED = "scripted"  # torch.jit.script: listed and followed, read by no tracing rule
CUDAGRAPH = "cudagraph"

COMPILE_FUNCS = COMPILERS  # torch.compile and torch._dynamo.optimize (analysis/torch_api.py)
# how the compiled/traced object is passed by keyword: torch.compile(model=...),
# onnx.export(model=...), export(mod=...), symbolic_trace(root=...), jit.trace(func=...)
TARGET_KEYWORDS = frozenset({"model", "mod", "root", "func", "fn"})
MAX_DEPTH = 12
# method names of tensors, lists, dicts, strings and loggers: never a project function
# whose parameters need their callers
COMMON_METHODS = frozenset(
    "append extend insert pop get items keys values update format join split replace startswith endswith strip "
    "view reshape permute transpose unsqueeze squeeze repeat expand chunk mean sum float half type size to cuda cpu "
    "add_argument info debug warning error print register_buffer register_parameter load_state_dict state_dict "
    "setdefault copy_ fill_ masked_fill index_select gather scatter clamp pow mul add sub div matmul flatten".split()
)
VALUE_ARGS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Starred, ast.Lambda, ast.IfExp, ast.List, ast.Tuple, ast.Dict)
_VALUE_ARG_TYPES = frozenset(VALUE_ARGS)
_CHOOSING_CONSTANTS = frozenset({str, bool})
NOT_PROJECT = ("torch.", "builtins.", "numpy.", "os.", "math.", "re.", "logging.", "json.", "random.", "time.", "sys.", "typing.")
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
    # a method called on `self` (`self.apply_transform(x)` in a base class's forward):
    # which def runs depends on the class of the instance, not on the class writing it
    on_self: bool = False
    # made by a call whose result is called at once (`get_norm_layer(kind)(dim=d)`): the
    # instance is what calling what the factory returns gives (a class it returns is built;
    # a function it returns runs there, and what that returns is held)
    applied: bool = False


@dataclass(frozen=True)
class StoredRef(Ref):
    """An instance a method stores on `self` (`self.w_block = init_net(...)`), with the
    attribute it is stored on: when it is what a pass-through helper of the project
    returns, what runs is what the attribute holds with that call's own arguments
    (`ProjectIndex._attr_entries`), not what the helper returns for every caller (joliGAN's
    `init_net(net)`, handed its generators, discriminators and classifiers:
    bench/fresh_reads batch 14)."""

    stored_on: str = ""  # "<class dotted>.<attr>"


@dataclass(frozen=True)
class Site:
    """One place that compiles or traces something."""

    kind: str  # COMPILE, TRACED or SCRIPTED
    target: Optional[Ref]
    path: str
    row: int
    api: str  # "torch.compile", "torch.jit.trace", "Module.compile", a wrapper's name
    mode: Optional[str] = None
    dynamic: Optional[bool] = None
    cudagraphs: bool = False
    module: str = ""
    col: int = 0
    fullgraph: Optional[bool] = None
    term: Optional[tuple] = field(default=None, compare=False, repr=False)  # values.py term of the target
    origin: str = "static"  # "static" | "config" | "marker" | "recorded" (analysis/reach/declared.py)
    recording: Optional["Recording"] = None  # what a recorded run saw at this site
    # an exporter called with no dynamic-shape argument (`static_export`): the export
    # accepts only the example's sizes, so a size it bakes is right for every input
    static_export: bool = False
    # a trace's example inputs, when it gives no keyword inputs (`_example_inputs`): an
    # int, the count of a tuple written out; else the term of the one expression passed
    # (the index asks what it holds: one tensor is one input, Resolver values)
    example: Optional[object] = field(default=None, compare=False, repr=False)
    # a compile whose result the code never calls (`_never_called`): what it compiles runs
    # eagerly, so it marks no region (the site still resolves, for `regions`)
    uncalled: bool = field(default=False, compare=False)

    def describe(self) -> str:
        """e.g. "compiled by torch.compile with mode='reduce-overhead' at train.py:41"."""
        if self.origin != "static":
            return describe_declared(self)
        opts = []
        if self.mode:
            opts.append(f"mode={self.mode!r}")
        if self.dynamic is not None:
            opts.append(f"dynamic={self.dynamic}")
        verb = {COMPILE: "compiled", SCRIPTED: "scripted"}.get(self.kind, "traced")
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
    submodules: list[Ref] = field(default_factory=list)  # classes: instances built in methods, not stored on self
    # classes: (attribute, instance) for what a method stores on `self.<attribute>`
    # (`self.blocks = nn.Sequential(*[Block(c) ...])`): run by forward only when the code
    # forward reaches reads that attribute
    attr_submodules: list = field(default_factory=list)
    self_reads: tuple = ()  # methods: the `self.<attr>` a method reads
    attr_types: dict[str, Ref] = field(default_factory=dict)  # classes: self.x = Cls(...)
    disabled: bool = False  # decorated with torch.compiler.disable
    wraps: Optional[tuple[int, str, tuple]] = None  # returns compile/trace(param i): (i, api, opts)
    wraps_param: Optional[str] = None  # the name of that parameter
    params: tuple = ()  # parameter names, positional first
    positional: int = -1  # how many of them are positional
    positional_defaults: int = 0  # how many positional parameters have a default (the last ones)
    varargs: bool = False  # it takes `*args`
    # a def that calls a parameter with its own `*args` (`def run(fn, *args): return
    # fn(*args)`): ((the parameter's index, positional arguments before `*args`), ...)
    calls_params: tuple = ()
    method_kind: Optional[str] = None  # "static" | "class" | "property" for decorated methods
    ret_ann: Optional[tuple] = None  # term of the return annotation
    defaults: dict = field(default_factory=dict)  # parameter index -> term of its default
    # parameter index -> (FLAG, value) of a boolean default: what a call that surely leaves
    # the parameter out passes it, for the branches of that call alone (Resolver._bind)
    flag_defaults: dict = field(default_factory=dict)
    # parameter index -> term of what pytest passes it (`@pytest.mark.parametrize`)
    parametrized: dict = field(default_factory=dict)
    decorators: tuple = ()  # terms of the decorators (registries)
    # decorators that may compile or trace the def (a project wrapper or a factory of
    # one, resolved by the index): ((term, row, col), ...); not torch's own, which are
    # sites of the summary, nor well-known decorators of other libraries
    applied: tuple = ()
    # pytest fixtures (`@pytest.fixture`): (the name a test requests it by, terms of what
    # it yields); what it returns is in the summary's `returns` as for any def
    fixture: Optional[tuple] = None
    # classes: the methods it defines whose bases' versions its own methods may run
    # (`super().m`, `Base.m(self)`): an override of any other replaces the base's stores
    defers: frozenset = frozenset()
    # a def that builds what a configuration entry names (analysis/reach/configured.py):
    # (the parameter's index, "config") when it calls something with the parameter's
    # `target`/`_target_` (`instantiate_from_config(config)`: an instance of the class),
    # (index, "name") when it imports the parameter's dotted name (`get_obj_from_str(s)`:
    # the class); None for any other def
    instantiates: Optional[tuple] = None
    # a def whose body (past a docstring) only raises NotImplementedError: a base class's
    # `forward` left to its subclasses (is_abstract)
    unimplemented: bool = False
    # decorated with a script function (`torch.jit.script`, `script_if_tracing`,
    # `script_method`: SCRIPT_FUNCS): a tracer that reaches it records a call of
    # TorchScript code, and traces nothing of it (_mark)
    scripted: bool = False
    # per entry of `calls`, its shape (`call_shape`): what a call passes closes the
    # callee's branches on its flags (ProjectIndex._callee_binding)
    call_shapes: list = field(default_factory=list)
    # ((index in `calls`, parameter index, truth), ...): the call runs only where that
    # boolean-default parameter of the def tests as `truth` (`if augment:` around it)
    call_guards: tuple = ()


@dataclass
class ModuleSummary:
    path: str
    module: str
    defs: dict[str, DefInfo] = field(default_factory=dict)
    sites: list[Site] = field(default_factory=list)
    # calls of project functions with a resolvable first argument: maybe wrappers
    wrapper_calls: list[tuple] = field(default_factory=list)  # (callee, Ref, row, kws, term, col)
    bindings: dict[str, str] = field(default_factory=dict)
    # the value model (values.py): scope -> name -> [(row, depth, term)], returns per def,
    # class dotted -> attribute -> [term], container stores [(location, term)]
    scopes: dict = field(default_factory=dict)
    returns: dict = field(default_factory=dict)
    attrs: dict = field(default_factory=dict)
    attr_methods: dict = field(default_factory=dict)  # as `attrs`: the method of each store (values.py)
    stores: list = field(default_factory=list)
    import_prefixes: tuple = ("",)
    star_imports: tuple = ()  # `from m import *` modules, in order (NameTable.star_imports)
    imports: tuple = ()  # the modules `import a.b` statements name, anywhere in the file (program_modules)
    calls: list = field(default_factory=list)  # (callee name, callee term, arg terms, kw terms)
    declared: list = field(default_factory=list)  # `# compile-lint: compiled` markers (analysis/reach/declared.py)
    sys_paths: tuple = ()  # folders the module puts on sys.path, relative to its own or to the working directory (sys_paths.py)
    options: dict = field(default_factory=dict)  # command-line options (values.TermBuilder._option)
    # checkpoint path -> [term of what is saved]: `torch.save(obj, "./weights/best.pt")` with
    # the path a string constant (ProjectIndex.saved_to)
    saved: dict = field(default_factory=dict)
    # qualnames of the methods that call their base's method of the same name through
    # `super()` (Resolver._runs: an instance of the class runs the base's method too)
    extends: list = field(default_factory=list)
    # a file that does not parse: where and why (CL000's message). Nothing else of it is
    # known; the index keeps it apart, to say why a name of it is not seen
    # (ProjectIndex.unparsed_reason)
    unparsed: Optional[str] = None

    def dotted(self, qualname: str) -> str:
        return f"{self.module}.{qualname}" if self.module else qualname

    def attr_stores(self, cls: str, name: str) -> list:
        """(term, method) of each store of attribute `name` in class `cls` of this module:
        the method's name, None for the class body."""
        return list(zip(self.attrs.get(cls, {}).get(name, ()), self.attr_methods.get(cls, {}).get(name, ())))


@dataclass
class RegionInfo:
    kinds: set[str] = field(default_factory=set)
    sites: list[Site] = field(default_factory=list)
    via: Optional[str] = None  # the region code that calls this one, when reached by a call

    def describe(self) -> str:
        site = self.sites[0].describe() if self.sites else "compiled"
        return f"{site} (reached from {self.via})" if self.via else site


OWN, OTHER = 1, 2  # call_shape: `*`/`**` of the calling def's own `*args`/`**kwargs`, or of anything else
_SHAPES: dict = {}  # (shapes are shared: most calls have one of a few)


_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_PLAIN_SHAPES = [(given, 0, 0, (), ()) for given in range(16)]  # the shape of most calls


def call_shape(call: ast.Call, own: tuple):
    """(positional arguments before a `*`, OWN/OTHER/0 for a trailing `*` (OTHER for any
    other), OWN/OTHER/0 for `**`, ((position, bool), ...) of literal True/False arguments, ((keyword,
    bool or None), ...)) of a call made in a def whose own `*args`/`**kwargs` names are `own`."""
    args = call.args
    given = len(args)
    if not call.keywords and given < 16:
        for a in args:
            if a.__class__ is ast.Starred or a.__class__ is ast.Constant and a.value.__class__ is bool:
                break
        else:
            return _PLAIN_SHAPES[given]
    star = 0
    if args and args[-1].__class__ is ast.Starred:
        value = args[-1].value
        star = OWN if value.__class__ is ast.Name and value.id == own[0] and own[0] is not None else OTHER
        given -= 1
    if any(a.__class__ is ast.Starred for a in args[:given]):
        star = OTHER
    literals = tuple((i, a.value) for i, a in enumerate(args[:given]) if a.__class__ is ast.Constant and a.value.__class__ is bool)
    double_star, named = 0, []
    for k in call.keywords:
        if k.arg is None:
            value = k.value
            mine = value.__class__ is ast.Name and value.id == own[1] and own[1] is not None
            double_star = OTHER if double_star or not mine else OWN
        else:
            value = k.value
            named.append((k.arg, value.value if value.__class__ is ast.Constant and value.value.__class__ is bool else None))
    key = (given, star, double_star, literals, tuple(named))
    return _SHAPES.setdefault(key, key)


# torch functions whose result is one tensor: a trace given one is given one input
TENSOR_MAKERS = frozenset(f"torch.{name}" for name in (
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "tensor", "as_tensor", "from_numpy", "arange",
    "linspace", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
    "cat", "stack", "Tensor", "FloatTensor",
))
# torch's tracers and exporters whose example inputs are the traced code's positional
# arguments: (keyword of the inputs, keywords that add keyword inputs, position of a
# positional keyword-inputs argument or None)
EXAMPLE_INPUTS = {
    "torch.jit.trace": ("example_inputs", ("example_kwarg_inputs",), None),
    "torch.onnx.export": ("args", ("kwargs",), None),
    "torch.onnx._export": ("args", ("kwargs",), None),
    "torch.onnx.utils.export": ("args", ("kwargs",), None),
    "torch.export.export": ("args", ("kwargs",), 2),
    "torch.export.export_for_training": ("args", ("kwargs",), 2),
}


def checkpoint_key(path: str) -> str:
    """A checkpoint path as the code spells it, normalized (`./weights/best.pt` and
    `weights/best.pt` name one file when run from one folder)."""
    return os.path.normpath(path)


def def_qualnames(tree: ast.Module) -> dict[int, str]:
    """id(def node) -> qualname ("f", "C.m", "f.inner"), for every def and class."""
    out: dict[int, str] = {}
    _name_defs(tree.body, "", out)
    return out


_DEF_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def def_qualnames_of_shape(by_type: dict, parents: dict) -> dict[int, str]:
    """def_qualnames from a walk the caller already has (nodes by type, each node's
    parent): each def's qualname is its nearest def's or class's, a dot, and its name."""
    out: dict[int, str] = {}
    for kind in _DEF_NODES:
        for node in by_type.get(kind, ()):
            if id(node) not in out:
                _qualname_up(node, parents, out)
    return out


def _qualname_up(node, parents: dict, out: dict[int, str]) -> str:
    owner = parents.get(node)
    while owner is not None and owner.__class__ not in _DEF_NODES:
        owner = parents.get(owner)
    if owner is None:
        name = out[id(node)] = node.name
        return name
    prefix = out.get(id(owner))
    if prefix is None:
        prefix = _qualname_up(owner, parents, out)
    name = out[id(node)] = f"{prefix}.{node.name}"
    return name


def _name_defs(body: Iterable[ast.stmt], prefix: str, out: dict[int, str]) -> None:
    # a module-level function, not a recursive closure: a closure calling itself is a
    # reference cycle, left for the cyclic GC on every call
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}{node.name}"
            out[id(node)] = name
            _name_defs(node.body, name + ".", out)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    _name_defs([child], prefix, out)
                elif isinstance(child, ast.ExceptHandler):
                    _name_defs(child.body, prefix, out)
                elif hasattr(child, "body") and isinstance(getattr(child, "body"), list):
                    _name_defs(child.body, prefix, out)  # match cases


def _from_parameter(term, summary: ModuleSummary) -> bool:
    """A stored value rooted in a parameter the method does not rebind (`block`,
    `block.inner`, `mixer(...)`), or a class named where it is built, on either side of a
    choice (`DropPath(p) if p > 0. else nn.Identity()`)."""
    if term is not None and term[0] == UNION:
        return all(_from_parameter(t, summary) for t in term[1])
    if term is not None and term[0] == GUARDED:  # a branch of a conditional on a parameter
        return _from_parameter(term[1], summary)
    if term is not None and term[0] == CALL and term[1] is not None and term[1][0] == G:
        return True
    while term is not None and term[0] in (ATTR, PRIOR, CALL, NARROW):
        term = term[1]
    if term is not None and term[0] == LOCAL and term[1]:
        bound = summary.scopes.get(term[1], {}).get(term[2], ())
        return bool(bound) and all(entry[2] is not None and entry[2][0] == PARAM for entry in bound)
    return term is not None and term[0] == PARAM


# nn.Module.compile called on the class with the module as its first argument
UNBOUND_MODULE_COMPILE = frozenset({"torch.nn.Module.compile", "torch.nn.modules.module.Module.compile"})


def lambda_qualname(node: ast.Lambda) -> str:
    return f"<lambda@{node.lineno}:{node.col_offset}>"


# the node types `ast.literal_eval` accepts at the top (any other raises ValueError)
_LITERAL_SHAPES = frozenset({ast.Tuple, ast.List, ast.Set, ast.Call, ast.Dict, ast.BinOp, ast.UnaryOp})


def _calls_params(calls: list, positional: list, varargs: str) -> tuple:
    """((index, leading), ...) for the calls of a positional parameter of the def that
    end with the def's own `*args` (`fn(*args, **kwargs)`, `fn(x, *args)`)."""
    out = []
    for call in calls:
        func, given = call.func, call.args
        if func.__class__ is ast.Name and func.id in positional and given and given[-1].__class__ is ast.Starred \
                and given[-1].value.__class__ is ast.Name and given[-1].value.id == varargs \
                and not any(a.__class__ is ast.Starred for a in given[:-1]):
            found = (positional.index(func.id), len(given) - 1)
            if found not in out:
                out.append(found)
    return tuple(out)


def _raises_not_implemented(body: list, names: NameTable) -> bool:
    """A def's body that, past a docstring, only raises NotImplementedError."""
    if body and body[0].__class__ is ast.Expr and body[0].value.__class__ is ast.Constant \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) != 1 or body[0].__class__ is not ast.Raise or body[0].exc is None:
        return False
    exc = body[0].exc
    if exc.__class__ is ast.Call:
        exc = exc.func
    return names.resolve(exc) == "builtins.NotImplementedError"


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _literal(expr: Optional[ast.expr]):
    if expr is None:
        return None
    cls = expr.__class__
    if cls is ast.Constant:
        return expr.value  # what literal_eval gives
    if cls not in _LITERAL_SHAPES:
        return _NOT_LITERAL  # a name, an attribute, a lambda...: not without raising
    try:
        return ast.literal_eval(expr)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


_NOT_LITERAL = object()


def _imported_names(summary, callee, called: str) -> set:
    """The names a callee term imports under another name (`import ... as`): the last
    part of the dotted name a global term, or a local bound only to imports, holds."""
    if callee is None:
        return set()
    callee = unnarrowed(callee)
    if callee[0] == G:
        terms = [callee]
    elif callee[0] == LOCAL:
        terms = [b[2] for b in summary.scopes.get(callee[1], {}).get(callee[2], ())]
    else:
        return set()
    out = set()
    for term in terms:
        if term is None or term[0] != G:
            return set()
        last = term[1].rpartition(".")[2]
        if last != called:
            out.add(last)
    return out


def compile_options(keywords: Iterable[tuple[str, ast.expr]], defaults: Optional[dict] = None) -> tuple:
    """(mode, dynamic, cudagraphs) from torch.compile keyword arguments. `defaults`:
    parameter name -> default expression, for `mode=mode` inside a wrapper."""
    mode = dynamic = None
    cudagraphs = False
    for name, value in keywords:
        if defaults and isinstance(value, ast.Name) and value.id in defaults:
            value = defaults[value.id]
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


def compiles_nothing(keywords: Iterable[tuple[str, ast.expr]]) -> bool:
    """`torch.compile(..., disable=True)`, the literal: torch returns the model or
    function itself, unwrapped (torch 2.13: `torch.compile(f, disable=True) is f`), so
    the call is no compile site (`@torch.compile(disable=True)` on ArcInstitute's
    `training_step`, bench/dev41: its callees were reported as compiled code). A
    parameter's default is not enough: a caller may pass False."""
    return any(name == "disable" and _literal(value) is True for name, value in keywords)


def static_export(api: str, call: ast.Call, keywords: Optional[Iterable[tuple[str, ast.expr]]] = None) -> bool:
    """`call` of the exporter `api` passes nothing that makes a size dynamic: no
    `dynamic_shapes` / `dynamic_axes` (or one that is None) among `keywords` (the call's
    own by default; with those a `partial` of the exporter binds), no `**kwargs`, and no
    positional argument past the output file (old `torch.onnx.export` took
    `dynamic_axes` positionally). An exporter made dynamic another way
    (`torch.onnx.dynamo_export`) is never static here."""
    how = EXPORTERS.get(api)
    if how is None or how[1] is None or len(call.args) > 3 or any(k.arg is None for k in call.keywords):
        return False
    if keywords is None:
        keywords = [(k.arg, k.value) for k in call.keywords]
    return not any(
        name in how[1] and not (value.__class__ is ast.Constant and value.value is None) for name, value in keywords
    )


def fullgraph_option(keywords: Iterable[tuple[str, ast.expr]]) -> Optional[bool]:
    for name, value in keywords:
        if name == "fullgraph":
            lit = _literal(value)
            if lit is True or lit is False:
                return lit
    return None


class ScopeNodes:
    """The nodes of one scope that the summary looks at, in `walk_scope` order
    (depth-first, source order; nested defs and their decorators, not their bodies)."""

    __slots__ = ("visit", "defs", "calls", "assigns", "returns", "bound", "attrs", "globals", "imports", "comprehensions")

    def __init__(self):
        self.attrs: list = []  # (name, attribute) of every `name.attribute` read or written
        self.visit: list = []  # defs and calls
        self.defs: list = []  # FunctionDef, AsyncFunctionDef, ClassDef
        self.calls: list = []
        self.assigns: list = []  # Assign and AnnAssign
        self.returns: list = []
        self.bound: set = set()  # values.assigned_names(owner.body)
        self.globals: frozenset = frozenset()  # names its `global` statements declare
        self.imports: list = []  # its import statements, in a def or class (the module's are the names table's)
        self.comprehensions: list = []  # its list/set/dict comprehensions and generator expressions


# what `_scan_scopes` does with a node, by its class
_CALL, _DEF, _LAMBDA, _ASSIGN, _RETURN, _BINDS, _DECLARES, _ATTR, _IMPORT, _COMPREHENSION = range(1, 11)
_KIND = {
    ast.Attribute: _ATTR,
    ast.Name: 0,  # no child nodes (`ctx` is never walked)
    ast.Constant: 0,
    ast.Call: _CALL,
    ast.FunctionDef: _DEF,
    ast.AsyncFunctionDef: _DEF,
    ast.ClassDef: _DEF,
    ast.Lambda: _LAMBDA,
    ast.Assign: _ASSIGN,
    ast.AnnAssign: _ASSIGN,
    ast.Return: _RETURN,
    ast.AugAssign: _BINDS,
    ast.For: _BINDS,
    ast.AsyncFor: _BINDS,
    ast.With: _BINDS,
    ast.AsyncWith: _BINDS,
    ast.Global: _DECLARES,
    ast.Nonlocal: _DECLARES,
    ast.Import: _IMPORT,
    ast.ImportFrom: _IMPORT,
    ast.ListComp: _COMPREHENSION,
    ast.SetComp: _COMPREHENSION,
    ast.DictComp: _COMPREHENSION,
    ast.GeneratorExp: _COMPREHENSION,
}
_LEAVES = frozenset({ast.Name, ast.Constant})
# the base of a class that no name stands for (`class Net(make_base())`): no lookup
# finds it, so the class has a base outside the project (leaves_project)
UNSEEN_BASE = "<a computed base>"
JIT_EXPORT = frozenset({("g", "torch.jit.export")})  # the decorator of a method scripting compiles too
# decorator terms that make a method abstract (`@abstractmethod`, `@abc.abstractmethod`)
ABSTRACT_DECORATORS = frozenset({("g", "abc.abstractmethod"), ("g", "abc.abstractproperty")})
_PARTIAL_TERM = (G, "functools.partial")
# fields `_scan_scopes` need not read: `ctx`, and those that never hold a node it looks
# for (names, numbers and flags; `names` of an import holds aliases, of `global` strings)
_SKIP_FIELDS = frozenset(
    {"ctx", "type_comment", "type_ignores", "id", "attr", "arg", "name", "asname", "module", "level", "kind",
     "conversion", "is_async", "simple", "tag", "rest", "kwd_attrs", "names"}
)
_REVERSED_FIELDS: dict = {}


def _scan_scopes(tree: ast.Module, scopes: dict, qualnames: dict, imported: Optional[set] = None,
                 testing: Optional[list] = None) -> None:
    """Fill `scopes` (id(owner) -> ScopeNodes, for the module and every def and class)
    and `qualnames` (id(def) -> qualname, as `def_qualnames`) in one walk, `imported`
    with the modules `import a.b` statements name (the names table keeps `a`), and
    `testing` with the scopes (their owners) that call `isinstance`. Each scope
    holds what `walk_scope(owner.body)` yields, sorted by kind, and the names its
    statements bind (`values.assigned_names`: every statement of a scope is walked)."""
    todo = [(tree, "")]
    reversed_fields = _REVERSED_FIELDS
    kinds = _KIND
    leaves = _LEAVES
    AST, Assign, With, AsyncWith = ast.AST, ast.Assign, ast.With, ast.AsyncWith
    while todo:
        owner, prefix = todo.pop()
        nodes = scopes[id(owner)] = ScopeNodes()
        visit, defs, calls, assigns, returns = nodes.visit, nodes.defs, nodes.calls, nodes.assigns, nodes.returns
        bound: set = set()
        declared: set = set()
        calls_isinstance = False
        stack = owner.body[::-1]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            cls = node.__class__
            kind = kinds.get(cls, -1)
            if kind == 0:
                continue
            if kind > 0:
                if kind == _CALL:
                    visit.append(node)
                    calls.append(node)
                    func = node.func
                    if func.__class__ is ast.Name and func.id == "isinstance":
                        calls_isinstance = True
                elif kind == _DEF:
                    visit.append(node)
                    defs.append(node)
                    bound.add(node.name)
                    # an f-string, as def_qualnames: a new string even when prefix is ""
                    # (the pickled summary shares no more objects than before)
                    name = qualnames[id(node)] = f"{prefix}{node.name}"
                    todo.append((node, name + "."))
                    stack.extend(node.decorator_list[::-1])
                    continue
                elif kind == _LAMBDA:
                    # a def of its own (`step = lambda x: model(x)`, then compiled): its body
                    # is walked when it is visited, not as part of this scope
                    visit.append(node)
                    continue
                elif kind == _ASSIGN:
                    assigns.append(node)
                    if cls is Assign:
                        for target in node.targets:
                            _target_names(target, bound)
                    else:
                        _target_names(node.target, bound)
                elif kind == _RETURN:
                    returns.append(node)
                elif kind == _COMPREHENSION:
                    nodes.comprehensions.append(node)
                elif kind == _BINDS:
                    if cls is With or cls is AsyncWith:
                        for item in node.items:
                            if item.optional_vars is not None:
                                _target_names(item.optional_vars, bound)
                    else:
                        _target_names(node.target, bound)
                elif kind == _ATTR:
                    value = node.value
                    if value.__class__ is ast.Name:
                        nodes.attrs.append((value.id, node.attr))
                    elif value.__class__ is ast.Call and value.func.__class__ is ast.Name and value.func.id == "super":
                        nodes.attrs.append((SUPER_CALL, node.attr))
                elif kind == _IMPORT:
                    # an import in a def binds a local (`from .detection import get_detector`
                    # in one branch, `from .detection_db import ...` in another); the
                    # module's own imports are the name table's
                    if owner is not tree:
                        nodes.imports.append(node)
                        for alias in node.names:
                            if alias.name != "*":
                                bound.add(alias.asname or alias.name.split(".", 1)[0])
                    if imported is not None and cls is ast.Import:
                        imported.update(alias.name for alias in node.names)
                    continue
                else:  # _DECLARES
                    declared.update(node.names)
                    if cls is ast.Global:
                        nodes.globals |= frozenset(node.names)
            names = reversed_fields.get(cls)
            if names is None:
                names = reversed_fields[cls] = tuple(f for f in cls._fields if f not in _SKIP_FIELDS)[::-1]
            for name in names:
                value = getattr(node, name, None)
                if value.__class__ is list:
                    for item in reversed(value):
                        # names and constants (most leaves) are never pushed
                        if item.__class__ not in leaves and isinstance(item, AST):
                            push(item)
                elif value.__class__ not in leaves and isinstance(value, AST):
                    push(value)
        nodes.bound = bound - declared if declared else bound
        if calls_isinstance and testing is not None:
            testing.append(owner)


class _Summarizer:
    def __init__(self, tree: ast.Module, names: NameTable, path: str, extra_compile=(), extra_trace=(),
                 parents: Optional[dict] = None):
        self.tree = tree
        self.names = names
        self.path = path
        self._importlib: Optional[bool] = None  # (_binds_importlib)
        self.compile_funcs = COMPILE_FUNCS | frozenset(extra_compile)
        self.trace_funcs = TRACE_FUNCS | frozenset(extra_trace)
        self.script_funcs = SCRIPT_FUNCS
        self.summary = ModuleSummary(path=path, module=names.module, bindings=dict(names.bindings),
                                     star_imports=names.star_imports)
        # every scope's nodes, sorted by what the passes below look for, and every
        # def's qualname: one walk of the tree
        self.qualnames: dict[int, str] = {}
        self._scopes: dict[int, ScopeNodes] = {}
        self._imported_names: set[str] = set()
        testing: list = []
        _scan_scopes(tree, self._scopes, self.qualnames, self._imported_names, testing)
        self.terms = TermBuilder(names, names.module)
        for owner in testing:
            isinstance_narrowed_reads(names, owner.body, self.terms.narrowed_reads)
        self._decorator_calls: set[int] = set()
        self._flag_params: dict[int, dict] = {}  # id(DefInfo) -> {flag parameter: index} (_link_call)
        # class dotted -> {attribute: the compile, trace or script function a method stores
        # on `self.<attribute>`} (`self.compile = torch.compile if flag else (lambda m: m)`)
        self._self_apis: dict[str, dict[str, str]] = {}
        # each node's parent: the linted file's walk when the engine hands it (node -> parent),
        # else made when a site first needs its guards (id(node) -> parent)
        self._parent_of: Optional[Callable[[ast.AST], Optional[ast.AST]]] = parents.get if parents is not None else None

    def _scope(self, owner) -> "ScopeNodes":
        """The nodes of one scope (walked once, by `_scan_scopes`)."""
        return self._scopes[id(owner)]

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

    def _only_part_kept(self, call: ast.Call) -> bool:
        """The instance a call builds is used only through one of its attributes: `Model(args,
        ckp).model` (EDSR's ONNX wrapper keeps the network the outer `Model` holds, not
        `Model`, whose forward never runs: bench/fresh_reads batch 46) or a method called on
        it at once (`Net().encode(x)`, a call of its own); a method returning the instance
        (`.to(device)`, `.eval()`) keeps it."""
        parent = self._parents()(call)
        return parent.__class__ is ast.Attribute and parent.value is call and parent.attr not in RETURNS_SELF

    def _imported_refs(self, nodes: "ScopeNodes") -> dict[str, Ref]:
        """{name: Ref of what it names} for the import statements of a def."""
        return {name: Ref(dotted) for stmt in nodes.imports for name, dotted in self.names.import_bindings(stmt)}

    def _scope_types(self, nodes: "ScopeNodes") -> dict[str, Ref]:
        types: dict[str, Ref] = {}
        for node in nodes.assigns:
            if node.__class__ is ast.Assign:
                targets, value = node.targets, node.value
            elif node.value is not None:  # AnnAssign
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
        """What `expr` (a callee) refers to, by the file alone (calls between defs)."""
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
                return Ref(f"{cls_dotted}.{expr.attr}", on_self=True)
            inner = self.ref_of(base, local, cls, cls_dotted) if isinstance(base, (ast.Name, ast.Attribute)) else None
            if inner is not None and inner.instance:
                return Ref(f"{inner.dotted}.{expr.attr}")  # a method of an instance
            dotted = self.names.resolve(expr)
            return Ref(dotted) if dotted else None
        return None

    # -- sites -----------------------------------------------------------------
    def _keywords(self, call: ast.Call):
        return list(self.names.partial_keywords(call.func)) + [(k.arg, k.value) for k in call.keywords if k.arg]

    def _site_from_call(self, call: ast.Call, local, cls, cls_dotted, scope: Scope) -> Optional[Site]:
        func = self.names.resolve(call.func)
        bound_keywords: tuple = ()  # those of a `partial(torch.compile, ...)` the name holds
        if call.func.__class__ is ast.Name and func not in self.compile_funcs and func not in self.trace_funcs \
                and func not in self.script_funcs:
            aliased = self._aliased_api(call.func.id, scope, call.lineno)
            if aliased is not None:
                func, bound_keywords = aliased
        if call.func.__class__ is ast.Attribute and func is None and cls_dotted and call.func.value.__class__ is ast.Name \
                and call.func.value.id == "self":
            # `self.compile(net)` where a method stored `torch.compile` on `self.compile`: the
            # attribute, not nn.Module.compile of `self` (SUPIR's ControlWrapper, bench/fresh_reads)
            func = self._self_apis.get(cls_dotted, {}).get(call.func.attr)
        if func in self.script_funcs:
            first = call_argument(call, 0, "obj")
            target = self.ref_of(first, local, cls, cls_dotted) if first is not None else None
            term = self._guarded(first, call, self.terms.term(first, scope, call.lineno), scope) if first is not None else None
            return Site(SCRIPTED, target, self.path, call.lineno, func, module=self.summary.module, col=call.col_offset, term=term)
        if func in self.compile_funcs or func in self.trace_funcs:
            keywords = [*bound_keywords, *self._keywords(call)]
            first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in TARGET_KEYWORDS), None)
            target = self.ref_of(first, local, cls, cls_dotted) if first is not None else None
            term = self._guarded(first, call, self.terms.term(first, scope, call.lineno), scope) if first is not None else None
            if func in self.compile_funcs:
                if compiles_nothing(keywords):
                    return None
                mode, dynamic, cg = compile_options(keywords, scope.defaults)
                return Site(COMPILE, target, self.path, call.lineno, func, mode, dynamic, cg, self.summary.module,
                            call.col_offset, fullgraph_option(keywords), term, uncalled=self._never_called(call))
            return Site(TRACED, target, self.path, call.lineno, func, module=self.summary.module, col=call.col_offset, term=term,
                        static_export=static_export(func, call, keywords),
                        example=self._example_inputs(func, call, keywords, scope))
        if func in UNBOUND_MODULE_COMPILE and call.args:
            # `torch.nn.Module.compile(self.model)`: the method called unbound, `self.model.compile()`
            receiver = self.ref_of(call.args[0], local, cls, cls_dotted)
            term = self._guarded(call.args[0], call, self.terms.term(call.args[0], scope, call.lineno), scope)
            keywords = self._keywords(call)
            if compiles_nothing(keywords):
                return None
            mode, dynamic, cg = compile_options(keywords, scope.defaults)
            return Site(COMPILE, receiver if receiver is not None and receiver.instance else None, self.path,
                        call.lineno, "Module.compile", mode, dynamic, cg, self.summary.module,
                        call.col_offset, fullgraph_option(keywords), term)
        # `m.compile(...)` on something that is not a module-level function
        if isinstance(call.func, ast.Attribute) and call.func.attr == "compile":
            if func is None or func.startswith(f"{self.summary.module}.") or not func.startswith(("re.", "builtins.", "torch.", "regex.")):
                receiver = self.ref_of(call.func.value, local, cls, cls_dotted)
                term = self.terms.term(call.func.value, scope, call.lineno)
                if (receiver is not None and receiver.instance) or (term is not None and term[0] != G):
                    term = self._guarded(call.func.value, call, term, scope)
                    keywords = self._keywords(call)
                    if compiles_nothing(keywords):
                        return None
                    mode, dynamic, cg = compile_options(keywords, scope.defaults)
                    return Site(COMPILE, receiver if receiver is not None and receiver.instance else None, self.path,
                                call.lineno, "Module.compile", mode, dynamic, cg, self.summary.module,
                                call.col_offset, fullgraph_option(keywords), term)
        return None

    def _never_called(self, call: ast.Call) -> bool:
        """The compiled module or function `call` makes is never called: bound to a local
        name of a def (`model = torch.compile(model)`) that the def only reads attributes
        of (`model.image_encoder(x)`, `model._orig_mod`: submodules and other methods run
        eagerly, CL510), or hands to a def of this file that does only that with it
        (medficientsam's `infer_2D(model, ...)`, bench/fresh_reads batch 51). Called,
        returned, stored, passed anywhere else, `.forward`, or a method returning the module
        whose result is kept (`m = model.eval()`): it may run."""
        parent_of = self._parents()
        stmt = parent_of(call)
        if not (stmt.__class__ is ast.Assign and stmt.value is call and len(stmt.targets) == 1
                and stmt.targets[0].__class__ is ast.Name):
            return False
        func = stmt
        while func is not None and func.__class__ not in _SCOPE_NODES:
            func = parent_of(func)
        if func is None or func.__class__ is ast.ClassDef or func.__class__ is ast.Lambda:
            return False  # (a module's name may be imported and called anywhere)
        return self._only_attributes_read(func, stmt.targets[0].id, 0, {id(n) for n in ast.walk(call)})

    def _only_attributes_read(self, func: ast.AST, name: str, depth: int, skipped=frozenset()) -> bool:
        """Every read of `name` in `func` (but the nodes `skipped`: the compile's own
        argument) is one of an attribute, or hands it to a def that does only that."""
        parent_of = self._parents()
        for node in ast.walk(func):
            if node.__class__ in (ast.Global, ast.Nonlocal) and name in node.names:
                return False  # (the module's name: read anywhere)
            if node.__class__ is not ast.Name or node.id != name or node.ctx.__class__ is not ast.Load or id(node) in skipped:
                continue
            parent = parent_of(node)
            if parent.__class__ is ast.Attribute and parent.value is node:
                if parent.attr in ("forward", "__call__", "__wrapped__"):
                    return False
                used = parent_of(parent)
                if parent.attr in RETURNS_SELF and used.__class__ is ast.Call and used.func is parent \
                        and parent_of(used).__class__ is not ast.Expr:
                    return False  # `m = model.eval()`: the compiled module again
                continue
            if parent.__class__ is ast.Call and parent.func.__class__ is ast.Name and parent.func.id in ("hasattr", "isinstance") \
                    and parent.args and parent.args[0] is node:
                continue
            if depth == 0 and parent.__class__ is ast.Call and node in parent.args and parent.func.__class__ is ast.Name \
                    and not any(a.__class__ is ast.Starred for a in parent.args):
                callee = self._module_def(parent.func.id)
                index = parent.args.index(node)
                if callee is not None and not callee.args.vararg:
                    positional = callee.args.posonlyargs + callee.args.args
                    if index < len(positional) and self._only_attributes_read(callee, positional[index].arg, 1):
                        continue
            return False
        return True

    def _module_def(self, name: str):
        """The one module-level def of this file bound to `name`, undecorated; else None."""
        found = [n for n in self.tree.body if n.__class__ in (ast.FunctionDef, ast.AsyncFunctionDef) and n.name == name]
        bound = [n for n in self.tree.body if n.__class__ is ast.Assign and name in assigned_names([n])]
        return found[0] if len(found) == 1 and not bound and not found[0].decorator_list else None

    def _example_inputs(self, func: str, call: ast.Call, keywords: list, scope: Scope):
        """Site.example of a trace or export call: how many positional inputs it gives the
        traced code (a tuple written out), or the term of the one expression it passes;
        None where it also gives keyword inputs (`example_kwarg_inputs`, `kwargs`, a dict
        closing an ONNX export's argument tuple), passes them through `*`/`**`, or is not
        one of torch's tracers whose inputs are positional."""
        spec = EXAMPLE_INPUTS.get(func)
        if spec is None or any(a.__class__ is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        names = dict(keywords)
        if any(names.get(k) is not None and not _is_none(names[k]) for k in spec[1]):
            return None  # keyword inputs
        if spec[2] is not None and len(call.args) > spec[2] and not _is_none(call.args[spec[2]]):
            return None  # torch.export.export(m, args, kwargs)
        example = call.args[1] if len(call.args) > 1 else names.get(spec[0])
        if example is None:
            return None
        if example.__class__ is ast.Tuple:
            if any(e.__class__ in (ast.Starred, ast.Dict) for e in example.elts):
                return None
            return len(example.elts)
        return self.terms.term(example, scope, call.lineno)

    def _api_held(self, value: ast.expr) -> Optional[str]:
        """The compile, trace or script function an assigned value may be: the value itself
        or an arm of a conditional (`torch.compile if flag else (lambda m: m)`)."""
        todo = [value]
        while todo:
            expr = todo.pop()
            if isinstance(expr, ast.IfExp):
                todo += [expr.body, expr.orelse]
            elif isinstance(expr, ast.BoolOp):
                todo += expr.values
            elif isinstance(expr, (ast.Name, ast.Attribute)):
                dotted = self.names.resolve(expr)
                if dotted in self.compile_funcs or dotted in self.trace_funcs or dotted in self.script_funcs:
                    return dotted
        return None

    def _aliased_api(self, name: str, scope: Scope, row: int) -> Optional[tuple[str, tuple]]:
        """The compile, trace or script function a name bound by an assignment in a def or
        the module may hold where it is called (`compile = torch.compile if flag else
        lambda m: m`, then `compile(model)`: sgm's IdentityWrapper), with the keywords a
        `partial` of it binds; else None."""
        term = self.terms.name_term(name, scope, row)
        if term is None or term[0] != LOCAL:
            return None
        for entry in self.terms.bindings.get(term[1], {}).get(name, ()):
            todo = [(entry[2], False)]
            while todo:
                held, in_partial = todo.pop()
                if held is None:
                    continue
                if held[0] == UNION:
                    todo.extend((h, in_partial) for h in held[1])
                elif held[0] == GUARDED:  # a branch of `torch.compile if use_compile else ...`
                    todo.append((held[1], in_partial))
                elif held[0] == G and (held[1] in self.compile_funcs or held[1] in self.trace_funcs
                                       or held[1] in self.script_funcs):
                    return held[1], self._partial_keywords(term[1], name, held[1]) if in_partial else ()
                elif held[0] == CALL and held[1] == _PARTIAL_TERM and held[2]:
                    # `compile_fn = partial(torch.compile, fullgraph=True)` on one branch of a
                    # module-level `if torch.cuda.is_available():` (CompVis' DiTs, bench/dev36)
                    todo.append((held[2][0], True))
        return None

    def _partial_keywords(self, scope_key: str, name: str, func: str) -> tuple:
        """The keywords of the `name = partial(func, ...)` assignments of one scope (the
        module for ""), when they all bind the same ones; else none (which one runs is
        not told)."""
        owner = id(self.tree) if not scope_key else next((k for k, q in self.qualnames.items() if q == scope_key), None)
        if owner not in self._scopes:
            return ()
        found = set()
        out: tuple = ()
        for stmt in self._scopes[owner].assigns:
            partial = self.names.partial_of(stmt.value) if assigned_name(stmt) == name else None
            if partial is not None and partial.target == func:
                out = partial.keywords
                found.add(tuple((k, ast.dump(v)) for k, v in out))
        return out if len(found) == 1 else ()

    # -- guards: what an isinstance test lets reach a compile ---------------------------
    def _guarded(self, target: ast.expr, call: ast.Call, term, scope: Scope):
        """`term` narrowed by the isinstance tests on the same name or attribute chain that
        hold where `call` runs: an `if`/conditional expression around it (either branch)
        and an earlier `if isinstance(...): return` in the blocks around it, up to its
        def. A test on something else, or one whose classes are not names, is ignored."""
        text = chain_text(target)
        if term is None or text is None:
            return term
        for test, holds in self._tests_around(call):
            for arg, classes, positive in isinstance_tests(self.names, test, holds):
                if chain_text(arg) != text:
                    continue
                class_terms = tuple(t for t in (self.terms.term(c, scope, call.lineno) for c in classes) if t is not None)
                if class_terms and len(class_terms) == len(classes):
                    term = (NARROW, term, class_terms, positive)
        return term

    def _parents(self) -> Callable[[ast.AST], Optional[ast.AST]]:
        """node -> its parent: the engine's, or one walk of the file made when first asked."""
        if self._parent_of is None:
            by_id = {id(child): parent for parent in ast.walk(self.tree) for child in ast.iter_child_nodes(parent)}
            self._parent_of = lambda child: by_id.get(id(child))
        return self._parent_of

    def _tests_around(self, node: ast.AST):
        """(test, holds) for the branches that lead to `node` within its def: the test of
        each `if`/`IfExp` it sits in (holds: in the body), and of each earlier sibling
        `if` whose body always leaves (return, raise, continue, break) and has no else
        (holds: False)."""
        parent_of = self._parents()
        child, parent = node, parent_of(node)
        while parent is not None and not isinstance(parent, (ast.Lambda, ast.ClassDef)):
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                body = parent.body if isinstance(parent, ast.If) else [parent.body]
                yield parent.test, any(child is b for b in body)
            for field in ("body", "orelse", "finalbody"):
                block = getattr(parent, field, None)
                if isinstance(block, list) and any(child is b for b in block):
                    for earlier in block[: next(i for i, b in enumerate(block) if b is child)]:
                        if (isinstance(earlier, ast.If) and not earlier.orelse and earlier.body
                                and isinstance(earlier.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))):
                            yield earlier.test, False
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                break  # the def's own body was the last block
            child, parent = parent, parent_of(parent)

    def _decorator_site(self, deco: ast.expr, target: Ref) -> Optional[Site]:
        call = deco if isinstance(deco, ast.Call) else None
        func = self.names.resolve(call.func if call else deco)
        term = (G, target.dotted)
        if func in self.compile_funcs:
            keywords = list(self.names.partial_keywords(call.func if call else deco))
            if call:
                keywords += [(k.arg, k.value) for k in call.keywords if k.arg]
            if compiles_nothing(keywords):
                return None
            mode, dynamic, cg = compile_options(keywords)
            return Site(COMPILE, target, self.path, deco.lineno, func, mode, dynamic, cg, self.summary.module,
                        deco.col_offset, fullgraph_option(keywords), term)
        if func in self.trace_funcs:
            return Site(TRACED, target, self.path, deco.lineno, func, module=self.summary.module, col=deco.col_offset, term=term)
        if func in self.script_funcs:
            return Site(SCRIPTED, target, self.path, deco.lineno, func, module=self.summary.module, col=deco.col_offset, term=term)
        return None

    def _applied(self, node, outer: Scope, dotted: str) -> tuple:
        """The decorators of `node` that may compile it through the project's own code
        (`@compile_if(cfg)`, `@compiled`), for the index to evaluate: each is also a call
        passing the def (so a wrapper's parameter receives it, `Resolver._passed`)."""
        out = []
        for deco in node.decorator_list:
            func = self.names.resolve(deco.func if isinstance(deco, ast.Call) else deco)
            if func in self.compile_funcs or func in self.trace_funcs or func in self.script_funcs:
                continue  # a site of the summary
            term = self.terms.term(deco, outer, None)
            if term is None or not _may_compile(term):
                continue
            out.append((term, deco.lineno, deco.col_offset))
            self.summary.calls.append((DECORATED, term, ((G, dotted),), ()))
        return tuple(out)

    def _is_disable(self, deco: ast.expr) -> bool:
        func = self.names.resolve(deco.func if isinstance(deco, ast.Call) else deco)
        return func in DISABLE_FUNCS

    def run(self) -> ModuleSummary:
        body = self.tree.body
        defs = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        nodes = self._scope(self.tree)
        # a name a def declares `global` and binds is a module-level name too
        declared_global = set().union(*(n.globals for n in self._scopes.values()))
        self.terms.module_bound = (nodes.bound | declared_global) - defs
        scope = Scope("", self.terms.module_bound)
        self.terms.module_scope = scope
        for name in sorted(declared_global - nodes.bound):
            # imported at module level, rebound by a def (`global step; step = torch.compile(step)`)
            dotted = self.names.resolve_name(name)
            if dotted:
                self.terms.bind(scope, name, 0, 0, (G, dotted))
        for inner in nodes.defs:
            if inner.name not in defs:  # a def in a module-level `try`/`if`: bound there, maybe
                self.terms.bind(scope, inner.name, inner.lineno, 1, (G, self.summary.dotted(self.qualnames[id(inner)])))
        self.terms.collect(body, scope)
        types = self._scope_types(nodes)
        self.context = SummaryContext(self.terms.module_bound, types)
        self._visit_body(nodes.visit, types, None, None, None, scope, nodes.comprehensions)
        summary = self.summary
        summary.scopes = self.terms.bindings
        summary.returns = self.terms.returns
        summary.attrs = self.terms.attrs
        summary.attr_methods = self.terms.attr_methods
        summary.stores = self.terms.stores
        summary.options = self.terms.options
        summary.import_prefixes = import_prefixes(self.path)
        summary.sys_paths = added_folders(self.tree, self.names)
        summary.imports = tuple(sorted(self._imported_names))
        return summary

    def _visit_body(self, nodes, local, cls, cls_dotted, owner: Optional[DefInfo], scope: Scope,
                    comprehensions=()) -> None:
        """Record sites, calls and defs in one scope (not descending into nested defs)."""
        comprehended = self._comprehended_calls(comprehensions, scope) if comprehensions else None
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._visit_function(node, local, cls, cls_dotted, scope)
            elif isinstance(node, ast.ClassDef):
                self._visit_class(node, scope)
            elif isinstance(node, ast.Lambda):
                if lambda_qualname(node) not in self.summary.defs:  # (an inline site's, visited with it)
                    self._visit_lambda(node, local, cls, cls_dotted, scope)
            elif isinstance(node, ast.Call):
                if id(node) in self._decorator_calls:
                    # `@torch.compile(...)`: the decorator site has its target; a factory's
                    # call (`@smart_compile(fullgraph=True)`) passes, or leaves out, its parameters
                    self._record_call(node, scope)
                    continue
                site = self._site_from_call(node, local, cls, cls_dotted, scope)
                if site is not None:
                    self.summary.sites.append(site)
                    if node.args and isinstance(node.args[0], ast.Lambda):
                        self._visit_lambda(node.args[0], local, cls, cls_dotted, scope)
                    continue
                callee = self.ref_of(node.func, local, cls, cls_dotted)
                if callee is not None and owner is not None:
                    owner.calls.append(callee)
                loops = comprehended.get(id(node)) if comprehended else None
                if loops:
                    with self.terms.within(loops):
                        self._record_call(node, scope)
                else:
                    self._record_call(node, scope)
                if callee is not None and owner is not None:
                    self._link_call(owner, node)
                if callee is not None and node.args and not callee.dotted.startswith(("torch.", "builtins.")):
                    target = self.ref_of(node.args[0], local, cls, cls_dotted)
                    term = self.terms.term(node.args[0], scope, node.lineno)
                    if target is not None or term is not None:
                        kws = tuple((k.arg, _literal(k.value)) for k in node.keywords if k.arg)
                        kws = tuple((k, v) for k, v in kws if v is not _NOT_LITERAL)
                        self.summary.wrapper_calls.append((callee.dotted, target, node.lineno, kws, term, node.col_offset))

    def _link_call(self, owner: DefInfo, node: ast.Call) -> None:
        """Keep, for the call just appended to `owner.calls`, its shape (`call_shape`) and
        the tests of the def's boolean-default parameters it runs under (`if augment:`,
        `if not fast:`), the parameter never rebound in the def."""
        position = len(owner.calls) - 1
        # (`owner.calls` grows only in _visit_body, each call followed by this: the two align)
        owner.call_shapes.append(call_shape(node, self.terms.star_params.get(owner.qualname, (None, None))))
        flags = self._flag_params.get(id(owner))
        if not flags:
            return
        # the `if`s and conditional expressions around the call, up to its def (an earlier
        # `if flag: return` is not read: it closes what follows only where the flag is True)
        parent_of = self._parents()
        child, parent = node, parent_of(node)
        while parent is not None:
            kind = parent.__class__
            if (kind is ast.If or kind is ast.IfExp) and child is not parent.test:
                test = parent.test
                negated = test.__class__ is ast.UnaryOp and test.op.__class__ is ast.Not
                name = test.operand if negated else test
                if name.__class__ is ast.Name and name.id in flags:
                    holds = child in parent.body if kind is ast.If else child is parent.body
                    owner.call_guards += ((position, flags[name.id], holds != negated),)
            elif kind in _SCOPE_NODES:
                break
            child, parent = parent, parent_of(parent)

    def _comprehended_calls(self, comprehensions, scope: Scope) -> Optional[dict]:
        """id(call) -> what the loop names of the comprehensions around it hold, for the
        calls inside a comprehension of this scope: `[parallelize(m, mesh) for m in
        model_parts]` passes an item of `model_parts` (torchtitan, bench/dev31), not
        whatever an `m` of the enclosing def holds."""
        out = None
        for node in comprehensions:
            if all(_over_range(gen.iter) for gen in node.generators):
                continue  # (`[Block(d) for i in range(depth)]`, most of model code's: its names hold ints)
            loops = self.terms.comprehension_loops(node, scope, node.lineno)
            if not loops:
                continue
            out = {} if out is None else out
            for inner in _walk_plain(node):
                if inner.__class__ is ast.Call:
                    # (an inner comprehension comes later: its names are nearer and win)
                    out[id(inner)] = {**out[id(inner)], **loops} if id(inner) in out else loops
        return out

    def _record_call(self, node: ast.Call, scope: Scope) -> None:
        """A call, so the index can tell what a parameter receives, or that a call leaves
        it to its default. Keywords are (name, term); `**kw` is (None, None): any name.
        A call of literals alone keeps only its shape (how many positional arguments, which
        keywords): no model or function is passed, but it may omit a parameter."""
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if func.__class__ is ast.Attribute and scope.key.endswith(f".{name}") and own_super_attribute(func, scope) \
                and scope.key not in self.summary.extends:
            self.summary.extends.append(scope.key)  # `super().setup(...)` in the override of `setup`
        if name is None and (node.args or node.keywords):
            if _is_lookup(func):
                name = LOOKED_UP
            elif isinstance(func, ast.Call) and isinstance(func.func, (ast.Name, ast.Attribute)):
                name = CALLED_RESULT  # `Exporter(args)(model=m)`: the instance's `__call__`
        if name is None or name in COMMON_METHODS:
            return
        if name.startswith("__"):  # dunder calls are kept only to pass `**kwargs` on
            if name == "__init__":
                self._record_super_init(node, scope)
            return
        dotted = self.names.resolve(func)
        if dotted is not None and dotted.startswith(NOT_PROJECT):
            if dotted == "torch.save":
                self._record_save(node, scope)
            return
        # a call passing only numbers is kept by its shape (what it leaves out); one passing
        # a string or a boolean, by its terms: they choose its callee's branches and keys
        # (nunif's `_bench("iw3.da3mono_disparity")` -> `create_model(name)`,
        # bench/fresh_reads batch 17)
        value_args = _VALUE_ARG_TYPES
        for arg in node.args:
            if arg.__class__ in value_args or (arg.__class__ is ast.Constant and arg.value.__class__ in _CHOOSING_CONSTANTS):
                break
        else:
            for keyword in node.keywords:
                value = keyword.value
                if value.__class__ in value_args or (value.__class__ is ast.Constant and value.value.__class__ in _CHOOSING_CONSTANTS):
                    break
            else:
                callee = self.terms.term(func, scope, node.lineno)
                if callee is not None:
                    kws = tuple([(k.arg, None) for k in node.keywords[:RECORDED_ARGS]])
                    self.summary.calls.append((name, callee, (None,) * min(len(node.args), RECORDED_ARGS), kws))
                return
        callee = self.terms.term(func, scope, node.lineno)
        if callee is None:
            return
        terms = self.terms
        row = node.lineno
        args = tuple([terms.term(a, scope, row) for a in node.args[:RECORDED_ARGS]])
        kws = tuple([(k.arg, terms.term(k.value, scope, row) if k.arg else terms.passed_on(k.value, scope))
                     for k in node.keywords[:RECORDED_ARGS]])
        self.summary.calls.append((name, callee, args, kws))

    def _record_save(self, node: ast.Call, scope: Scope) -> None:
        """`torch.save(obj, "./weights/best.pt")`: what a `torch.load` of that path holds."""
        obj = call_argument(node, 0, "obj")
        path = call_argument(node, 1, "f")
        if obj is None or not (isinstance(path, ast.Constant) and isinstance(path.value, str)):
            return
        term = self.terms.term(obj, scope, node.lineno)
        if term is not None:
            self.summary.saved.setdefault(checkpoint_key(path.value), []).append(term)

    def _record_super_init(self, node: ast.Call, scope: Scope) -> None:
        """`super().__init__(...)`, a call of the base's `__init__`: what a subclass passes
        its base (`super().__init__(model, config)`, the model the subclass's own callers
        gave it) reaches the base's parameters (upstageailab's OCRPLModule, bench/dev44).
        With the def's own `**` parameter passed on, it is kept for what goes on through
        `**kwargs` alone, with the names it gives itself (Resolver._passed: a name one
        subclass gives and another passes on is left unknown, not given to every instance
        of the base): the keywords are one ("kwargs", def, names, count)."""
        callee = self.terms.term(node.func, scope, node.lineno)
        if callee is None or callee[0] != SUPER:
            return
        passed_on = next((t for t in (self.terms.passed_on(k.value, scope) for k in node.keywords if k.arg is None)
                          if t is not None), None)
        if passed_on is not None:
            given = tuple(k.arg for k in node.keywords if k.arg)
            self.summary.calls.append(("__init__", callee, (), ((None, passed_on + (given, len(node.args))),)))
            return
        terms, row = self.terms, node.lineno
        args = tuple([terms.term(a, scope, row) for a in node.args[:RECORDED_ARGS]])
        kws = tuple([(k.arg, terms.term(k.value, scope, row) if k.arg else None) for k in node.keywords[:RECORDED_ARGS]])
        if any(a is not None for a in args) or any(t is not None for _k, t in kws):
            self.summary.calls.append(("__init__", callee, args, kws))

    def _visit_lambda(self, node: ast.Lambda, local, cls, cls_dotted, scope: Scope) -> None:
        info = DefInfo(lambda_qualname(node), "lambda", node.lineno)
        self.summary.defs[info.qualname] = info
        self._visit_body(walk_scope([ast.Expr(node.body)]), local, cls, cls_dotted, info, scope)

    def _decorated(self, node) -> None:
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call):
                self._decorator_calls.add(id(deco))

    def _visit_function(self, node, outer_local, cls, cls_dotted, outer: Scope) -> None:
        qualname = self.qualnames[id(node)]
        info = DefInfo(qualname, "function", node.lineno)
        info.disabled = any(self._is_disable(d) for d in node.decorator_list)
        info.unimplemented = cls is not None and _raises_not_implemented(node.body, self.names)
        self.summary.defs[qualname] = info
        self._decorated(node)
        target = Ref(self.summary.dotted(qualname))
        for deco in node.decorator_list:
            site = self._decorator_site(deco, target)
            if site is not None:
                self.summary.sites.append(site)
                info.scripted = info.scripted or site.kind == SCRIPTED
        args = node.args
        positional = args.posonlyargs + args.args
        params = [a.arg for a in positional + args.kwonlyargs]
        info.params = tuple(params)
        info.positional, info.positional_defaults, info.varargs = len(positional), len(args.defaults), args.vararg is not None
        if args.vararg is not None or args.kwarg is not None:
            self.terms.star_params[qualname] = (args.vararg.arg if args.vararg else None, args.kwarg.arg if args.kwarg else None)
        self_kind = None
        # a def nested in a method is no method: its first parameter is not `self`
        # (`def _maybe_compile(mod, name)` inside `__init__`); it still sees the
        # method's `self` as a free name, and `cls` for `self.x` references
        is_method = cls is not None and qualname == f"{cls.qualname}.{node.name}"
        if is_method:
            kinds = {self.names.resolve(d) for d in node.decorator_list}
            if "builtins.staticmethod" in kinds:
                info.method_kind = "static"
            elif "builtins.classmethod" in kinds:
                info.method_kind, self_kind = "class", "cls"
            else:
                if "builtins.property" in kinds or "functools.cached_property" in kinds:
                    info.method_kind = "property"
                self_kind = "self" if params else None
        defaults = parameter_defaults(args)
        parent = outer if outer.key == "" or cls is None else outer
        nodes = self._scope(node)
        if args.vararg is not None:
            info.calls_params = _calls_params(nodes.calls, params[: len(positional)], args.vararg.arg)
        scope = Scope(qualname, nodes.bound | set(params), tuple(params), self_kind, cls_dotted, parent, defaults,
                      nodes.globals)
        terms = self.terms
        info.decorators = tuple(t for t in (terms.term(d, outer, None) for d in node.decorator_list) if t is not None)
        info.applied = self._applied(node, outer, self.summary.dotted(qualname))
        info.ret_ann = terms.annotation_term(node.returns, outer)
        if node.decorator_list and params:
            info.parametrized = self._parametrized(node, params, outer)
        for i, a in enumerate(positional + args.kwonlyargs):
            if a.arg in defaults:
                # evaluated where the def is, when it is: what a call that omits it passes
                default = terms.term(defaults[a.arg], outer, node.lineno)
                if default is not None and default[0] == FLAG:
                    # (a boolean default is not a default for every call: a framework's call
                    # the index cannot see passes flags too, TAO's `load_from_checkpoint(...,
                    # export=True)` into `__init__(..., export=False)`, bench/dev48; it
                    # answers only for a call that surely leaves it out, Resolver._bind)
                    info.flag_defaults[i] = default
                elif default is not None:
                    info.defaults[i] = default
                elif _is_none(defaults[a.arg]):
                    info.defaults[i] = NONE_DEFAULT  # (`decoder=None`: left out, it holds no model)
            if i == 0 and self_kind:
                continue
            ann = terms.annotation_term(a.annotation, outer)
            terms.bind(scope, a.arg, node.lineno, 0, (PARAM, qualname, i, a.arg, ann))
        for inner in nodes.defs:  # nested defs are bound in this scope
            terms.bind(scope, inner.name, inner.lineno, 0, (G, self.summary.dotted(self.qualnames[id(inner)])))
        terms.collect(node.body, scope)
        if node.decorator_list:
            info.fixture = self._fixture(node, scope)
        local = dict(outer_local)
        # the def's own imports: what the name is here, whatever the module imports as it
        local.update(self._imported_refs(nodes))
        local.update(self._scope_types(nodes))
        for inner in nodes.defs:  # nested defs shadow module names
            local[inner.name] = Ref(self.summary.dotted(self.qualnames[id(inner)]))
        wrapped = [p for p in params[: len(positional)]]
        if is_method and wrapped and self_kind:
            wrapped = wrapped[1:]
        if info.flag_defaults:
            # the boolean-default parameters the body never rebinds: their tests guard calls
            self._flag_params[id(info)] = {params[i]: i for i in info.flag_defaults if params[i] not in nodes.bound}
        self._visit_body(nodes.visit, local, cls, cls_dotted, info, scope, nodes.comprehensions)
        if wrapped and nodes.calls:
            info.instantiates = self._instantiates(nodes, wrapped, params)
        self._wraps_param = None
        info.wraps = self._wrapper_shape(nodes, wrapped, defaults)
        info.wraps_param = self._wraps_param

    def _instantiates(self, nodes, candidates: list, params: list) -> Optional[tuple]:
        """DefInfo.instantiates: read from the calls of the def's own body, each argument
        of which is tested for a parameter's target entry (`get_obj_from_str(config["target"])`,
        `locate(cfg._target_)`, `config.get("target")`), and for a call of
        `importlib.import_module` (the def turns a dotted name into what it names)."""
        names = set(candidates)
        # (this runs for every def with parameters, over all its calls: only the node
        # types a target read can be are looked at, and import_module only where the
        # file binds something of importlib)
        imports, look_for_import = False, self._binds_importlib()
        for call in nodes.calls:
            # the target given to a call (`locate(cfg._target_)`), or split first
            # (`config["target"].rsplit(".", 1)`)
            func = call.func
            for arg in (*call.args, *(k.value for k in call.keywords), func.value if type(func) is ast.Attribute else None):
                if type(arg) in _TARGET_READ_TYPES:
                    param = _target_read(arg)
                    if param in names:
                        return params.index(param), "config"
            if look_for_import and not imports and self.names.resolve(func) == "importlib.import_module":
                imports = True
        for assign in nodes.assigns:  # `name = config["target"]`, looked up after
            param = _target_read(getattr(assign, "value", None))
            if param in names:
                return params.index(param), "config"
        return (params.index(candidates[0]), "name") if imports else None

    def _binds_importlib(self) -> bool:
        """Whether a name of the file may stand for something of `importlib` (what
        NameTable.resolve needs to answer `importlib.import_module`)."""
        found = self._importlib
        if found is None:
            names = self.names
            found = self._importlib = names.module.split(".", 1)[0] == "importlib" or any(
                t.split(".", 1)[0] == "importlib" for t in (*names.bindings.values(), *(p.target for p in names.partials.values())))
        return found

    def _fixture(self, node, scope: Scope) -> Optional[tuple]:
        """DefInfo.fixture of a def decorated `@pytest.fixture` or `@pytest.fixture(...)`
        (`name="..."` renames it); None for any other def."""
        for deco in node.decorator_list:
            call = deco if isinstance(deco, ast.Call) else None
            if self.names.resolve(call.func if call is not None else deco) != "pytest.fixture":
                continue
            name = node.name
            for kw in call.keywords if call is not None else ():
                if kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    name = kw.value.value
            # a yield fixture hands the test what it yields (the yield's value, once)
            yields = tuple(t for t in (self.terms.term(n.value, scope, n.lineno) for n in walk_scope(node.body)
                                       if isinstance(n, ast.Yield) and n.value is not None) if t is not None)
            return name, yields
        return None

    def _parametrized(self, node, params: list, outer: Scope) -> dict:
        """What `@pytest.mark.parametrize("model_cls, size", [(Net, 64), pytest.param(Other,
        32)])` passes each named parameter of a test: the union of its column, as terms."""
        columns: dict = {}
        for deco in node.decorator_list:
            if not (isinstance(deco, ast.Call) and len(deco.args) >= 2
                    and self.names.resolve(deco.func) == "pytest.mark.parametrize"):
                continue
            spec, rows = deco.args[0], deco.args[1]
            if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
                names = [n.strip() for n in spec.value.split(",") if n.strip()]
            elif isinstance(spec, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in spec.elts):
                names = [e.value for e in spec.elts]
            else:
                continue
            if not isinstance(rows, (ast.List, ast.Tuple)):
                continue
            for row in rows.elts:
                if isinstance(row, ast.Call) and self.names.resolve(row.func) == "pytest.param":
                    cells = row.args
                elif len(names) == 1:
                    cells = [row]
                elif isinstance(row, (ast.List, ast.Tuple)):
                    cells = row.elts
                else:
                    continue
                if len(names) == 1 and len(cells) != 1:
                    continue
                for name, cell in zip(names, cells):
                    if name in params and not isinstance(cell, ast.Starred):
                        term = self.terms.term(cell, outer, node.lineno)
                        if term is not None:
                            columns.setdefault(params.index(name), []).append(term)
        return {i: (UNION, tuple(terms)) for i, terms in columns.items()}

    def _self_reads(self, method) -> tuple:
        """The attributes a method reads on its first parameter (`self.head(x)`, `for blk
        in self.blocks`), nested defs included (they close over `self`) but for those
        decorated `torch.compiler.disable`, which run eagerly (doctr's forward reads
        `self.postprocessor` only in such a def: bench/dev12), from the scope scan's
        attribute lists (no walk of its own)."""
        params = method.args.posonlyargs + method.args.args
        if not params:
            return ()
        me = params[0].arg
        found = set()
        todo = [method]
        while todo:
            nodes = self._scopes[id(todo.pop())]
            found.update(attr for name, attr in nodes.attrs if name == me)
            called = None
            for call in nodes.calls:
                func = call.func
                if func.__class__ is ast.Name and func.id == "getattr" and call.args \
                        and call.args[0].__class__ is ast.Name and call.args[0].id == me:
                    name = call.args[1] if len(call.args) > 1 else None
                    if called is None:  # `getattr(self, name)(x, y)`: called with two positional arguments
                        called = {id(c.func): len(c.args) for c in nodes.calls if c.func.__class__ is ast.Call
                                  and not any(a.__class__ is ast.Starred for a in c.args) and all(k.arg for k in c.keywords)}
                    if name.__class__ is ast.Constant and isinstance(name.value, str):
                        found.add(name.value)  # `getattr(self, "head", None)`: that attribute
                    elif id(call) in called:
                        found.add(f"{ANY_ATTR}{called[id(call)]}")
                    else:
                        found.add(ANY_ATTR)  # `getattr(self, name)`: any attribute
            todo.extend(d for d in nodes.defs if d.__class__ is not ast.ClassDef
                        and not any(self._is_disable(deco) for deco in d.decorator_list))
        if found & _GENERIC_CHILDREN:
            found.add(ANY_ATTR)
        return tuple(sorted(found))

    def _wrapper_shape(self, nodes, params, defaults):
        """A project function whose `return` compiles or traces one of its parameters:
        `return torch.compile(fn)`, also in a branch (`torch.compile(fn) if flag else
        fn`) or through a local (`fn = torch.compile(fn, ...); return fn`)."""
        if not nodes.returns:
            return None
        assigned: Optional[dict] = None  # name -> assigned values, made when a return is a name
        funcs = self.compile_funcs | self.trace_funcs | self.script_funcs
        for ret in nodes.returns:
            todo, seen = [ret.value], 0
            while todo and seen < 16:
                value = todo.pop()
                seen += 1
                if isinstance(value, ast.IfExp):
                    todo += [value.body, value.orelse]
                elif isinstance(value, ast.BoolOp):
                    todo += value.values
                elif isinstance(value, ast.Name):
                    if assigned is None:
                        assigned = {}
                        for node in nodes.assigns:
                            if node.__class__ is ast.Assign and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                                assigned.setdefault(node.targets[0].id, []).append(node.value)
                    todo += assigned.get(value.id, [])
                elif isinstance(value, ast.Call):
                    func = self.names.resolve(value.func)
                    if func in funcs and value.args and isinstance(value.args[0], ast.Name) and value.args[0].id in params:
                        keywords = self._keywords(value)
                        if func in self.compile_funcs and compiles_nothing(keywords):
                            continue  # returns its parameter unwrapped: no wrapper, as its call is no site
                        self._wraps_param = value.args[0].id
                        return (params.index(value.args[0].id), func, compile_options(keywords, defaults))
        return None

    def _base_name(self, base: ast.expr) -> str:
        """The dotted name of a class's base as written: a subscripted generic base
        (`Architecture[SwinIR]`, spandrel) is its origin class, which is what its
        `__mro_entries__` puts in the MRO. A base no name stands for (`class
        Net(make_base())`) is UNSEEN_BASE, a class outside what the index sees, so that
        no question about the class takes its MRO for complete."""
        if base.__class__ is ast.Subscript:
            base = base.value
        return self.names.resolve(base) or UNSEEN_BASE

    def _visit_class(self, node: ast.ClassDef, outer: Scope) -> None:
        qualname = self.qualnames[id(node)]
        info = DefInfo(qualname, "class", node.lineno)
        info.bases = [self._base_name(base) for base in node.bases]
        self.summary.defs[qualname] = info
        self._decorated(node)
        cls_dotted = self.summary.dotted(qualname)
        info.decorators = tuple(t for t in (self.terms.term(d, outer, None) for d in node.decorator_list) if t is not None)
        info.applied = self._applied(node, outer, cls_dotted)
        # class attributes: `model_cls = Net` in the class body
        self.terms.collect(node.body, Scope(qualname, set(), parent=outer), cls_attrs=cls_dotted)
        # self.x = Cls(...) in any method: attribute types and submodules
        class_nodes = self._scope(node)
        methods = [m for m in class_nodes.defs if m.__class__ is not ast.ClassDef]
        scopes = [class_nodes] + [self._scope(m) for m in methods]
        # an attribute a method reads on anything but its own `self` (`super().m`,
        # `Base.m(self)`, `other.m`) may run a base's `m`: only the others are replaced
        own = {m.name for m in methods}
        info.defers = frozenset(attr for m, nodes in zip(methods, scopes[1:]) for name, attr in nodes.attrs
                                if attr in own and name != first_parameter(m.args))
        for nodes in scopes:
            for sub in nodes.assigns:
                if sub.__class__ is not ast.Assign:
                    continue
                for target in sub.targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                        ref = self._instance_ref(sub.value)
                        if ref:
                            info.attr_types[target.attr] = StoredRef(ref.dotted, ref.instance, ref.on_self,
                                                                     stored_on=f"{cls_dotted}.{target.attr}")
                        api = self._api_held(sub.value)
                        if api is not None:
                            self._self_apis.setdefault(cls_dotted, {})[target.attr] = api
        stored_on: dict[int, str] = {}  # id(call) -> the self attribute its result goes to
        for nodes in scopes:
            for sub in nodes.assigns:
                if sub.__class__ is ast.Assign and sub.value is not None:
                    attrs = [t.attr for t in sub.targets
                             if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"]
                    if attrs:
                        for inner in _walk_plain(sub.value):
                            if inner.__class__ is ast.Call:
                                stored_on[id(inner)] = attrs[0]
        # a call whose result is called right away (`get_norm_layer(kind)(dim=d)`): what the
        # class holds is that second call's result (SeedVR2's NaDiT, bench/fresh_reads batch
        # 15: the factory's inner `_norm_layer` was taken to run in forward)
        called_at_once = {id(sub.func) for nodes in scopes for sub in nodes.calls if sub.func.__class__ is ast.Call}
        for nodes in scopes:
            for sub in nodes.calls:
                ref = self._instance_ref(sub)
                if ref and not ref.dotted.startswith(("torch.", "builtins.")) and not self._only_part_kept(sub):
                    applied = id(sub) in called_at_once
                    attr = stored_on.get(id(sub))
                    if attr is None:
                        info.submodules.append(Ref(ref.dotted, ref.instance, ref.on_self, applied) if applied else ref)
                    else:
                        info.attr_submodules.append((attr, StoredRef(ref.dotted, ref.instance, ref.on_self, applied,
                                                                      stored_on=f"{cls_dotted}.{attr}")))
        methods = [m for m in class_nodes.defs if m.__class__ is not ast.ClassDef] if info.attr_submodules else []
        for deco in node.decorator_list:
            site = self._decorator_site(deco, Ref(cls_dotted, instance=True))
            if site is not None:
                self.summary.sites.append(site)
        self._visit_body(class_nodes.visit, {}, info, cls_dotted, None, outer, class_nodes.comprehensions)
        for method in methods:  # (their DefInfos exist now)
            found = self.summary.defs.get(self.qualnames[id(method)])
            if found is not None:
                found.self_reads = self._self_reads(method)


# decorators of these packages never compile their def (torch's own compile and trace
# decorators are summary sites): `@torch.no_grad()`, `@functools.wraps(f)`, `@pytest.mark...`
_PLAIN_DECORATOR_PACKAGES = (
    "builtins.", "functools.", "typing.", "abc.", "dataclasses.", "contextlib.", "pytest.", "unittest.",
    "click.", "typer.", "numba.", "jax.", "enum.", "atexit.", "staticmethod", "classmethod", "property",
)


def _may_compile(term) -> bool:
    """A decorator term that the index should evaluate: a project function, a factory
    call, a local decorator; not a torch or standard-library name."""
    head = term[1] if term[0] == "call" else term
    if head[0] == G:
        dotted = head[1]
        if dotted.startswith(_PLAIN_DECORATOR_PACKAGES):
            return False
        if dotted.startswith("torch.") and dotted not in COMPILE_FUNCS and dotted not in SCRIPT_FUNCS:
            return False
    return True


_MISSING = object()
_walk_scope = walk_scope  # older name, still imported by some rules


ANY_ATTR = "*"
# a method reading these walks every submodule (`for m in self.children()`)
_GENERIC_CHILDREN = frozenset({"children", "named_children", "modules", "named_modules", "_modules", "apply"})


def site_key(site: Site) -> tuple:
    """What tells sites apart (the target it resolved to aside)."""
    return (site.path, site.row, site.col, site.api, site.kind)


def _kind_of(api: str) -> str:
    """The region a compile/trace/script function makes."""
    if api in SCRIPT_FUNCS:
        return SCRIPTED
    return COMPILE if api in COMPILE_FUNCS else TRACED


def summarize(tree: ast.Module, names: NameTable, path: str, compile_wrappers=(), trace_wrappers=(),
              parents: Optional[dict] = None) -> ModuleSummary:
    """The region summary of one module. `parents`: each node's parent in `tree`, where the
    caller walked it already (lint_file.parse_file)."""
    return _Summarizer(tree, names, path, compile_wrappers, trace_wrappers, parents).run()


@dataclass
class SummaryContext:
    """What the summary of one top-level def or class reads of the rest of its module:
    the names bound at module level (not by defs) and the instance types of module-level
    names (`model = Net()`). Both come from the module's statements outside defs and
    classes, and from the names of its top-level defs and classes."""

    module_bound: set
    types: dict


def summarize_with_context(tree: ast.Module, names: NameTable, path: str, compile_wrappers=(), trace_wrappers=(),
                           parents: Optional[dict] = None):
    """summarize(), and the module context a later `statement_part` needs."""
    summarizer = _Summarizer(tree, names, path, compile_wrappers, trace_wrappers, parents)
    summary = summarizer.run()
    return summary, summarizer.context


def statement_part(stmt: ast.stmt, context: SummaryContext, names: NameTable, path: str, compile_wrappers=(),
                   trace_wrappers=()) -> tuple:
    """What one top-level def or class adds to its module's summary, as `summarize` adds
    it: the visit of the statement (and of the calls in its decorators, which run at
    module level) in the module's context. The summary is those visits in statement
    order after the module-level bindings; a visit writes only entries of its own defs,
    scopes and classes and reads only the module context, the names table and what it
    wrote itself (compile_lint/incremental.py relies on this: equal parts of a def before
    and after an edit mean an equal summary)."""
    summarizer = _Summarizer(ast.Module(body=[stmt], type_ignores=[]), names, path, compile_wrappers, trace_wrappers)
    summarizer.terms.module_bound = context.module_bound
    scope = Scope("", context.module_bound)
    summarizer._visit_body(summarizer._scope(summarizer.tree).visit, context.types, None, None, None, scope)
    summary, terms = summarizer.summary, summarizer.terms
    return (summary.defs, [(site, site.term) for site in summary.sites], summary.wrapper_calls, summary.calls,
            terms.bindings, terms.returns, terms.attrs, terms.attr_methods, terms.stores, summary.extends, summary.saved)


SUPER_CALL = "super()"  # ScopeNodes.attrs: `super().<attr>`


def _over_range(iterable: ast.expr) -> bool:
    """Whether a loop over `iterable` gives ints (`range(...)`): its names hold no model."""
    return iterable.__class__ is ast.Call and iterable.func.__class__ is ast.Name and iterable.func.id == "range"


def _is_lookup(func: ast.expr) -> bool:
    """A callee that a lookup gives: `REGISTRY.get(key)`, `MODELS[name]`, `registry.MODELS[name]`
    (not an item of `self`'s attributes, `self.blocks[i](x)`: a forward, never a constructor
    call that the index needs)."""
    if isinstance(func, ast.Call):
        return isinstance(func.func, ast.Attribute) and func.func.attr == "get" and bool(func.args)
    if isinstance(func, ast.Subscript):
        base = func.value
        while isinstance(base, ast.Attribute):
            base = base.value
        return isinstance(base, ast.Name) and base.id not in ("self", "cls")
    return False


def _runs_elements(value: Value, depth: int) -> bool:
    """Whether compiling `value` runs its elements: a module container does; a list or
    tuple compiled or traced itself runs nothing (`build_model(args)` returning
    `(backbone, None, None)` on one branch), though one inside a container is elements."""
    return value.elems is not None and (value.kind == "inst" or value.kind == "seq" and depth > 0)


class ProjectIndex:
    """Regions across every summarized file of a run.

    Declared and recorded regions (analysis/reach/declared.py) come in through `declared`."""

    def __init__(self, summaries: Iterable[ModuleSummary], declared: Iterable = (), configured=None):
        self.summaries = list(summaries)
        self._by_path: Optional[dict] = None  # path -> summary, made when a trace's inputs are asked
        # the files that do not parse, by module: only their names are known
        self.unparsed = {s.module: s for s in self.summaries if s.unparsed is not None}
        if self.unparsed:
            self.summaries = [s for s in self.summaries if s.unparsed is None]
        self.declared = list(declared)  # config and recorded regions (analysis/reach/declared.py)
        # the classes the project's YAML configurations name (analysis/reach/configured.py)
        self.configured = configured if configured is not None else ConfiguredTargets()
        self.resolved_declared = None  # their entry sites, unknown names and stale entries
        self.modules: dict[str, ModuleSummary] = {}
        self.defs: dict[str, tuple[ModuleSummary, DefInfo]] = {}
        for summary in self.summaries:
            self.modules.setdefault(summary.module, summary)
            for qualname, info in summary.defs.items():
                self.defs.setdefault(summary.dotted(qualname), (summary, info))
        # a module by its file: `from models.net import Net` is `models/net.py` next to
        # the importing file (or a folder above it, for `sys.path.append("..")` scripts)
        self.by_file: dict[str, ModuleSummary] = {}
        for summary in self.summaries:
            base = os.path.splitext(os.path.abspath(summary.path))[0]
            if base.endswith(os.sep + "__init__"):
                base = base[: -len(os.sep + "__init__")]
            self.by_file.setdefault(base, summary)
        self.resolver = Resolver(self)
        self._stores: Optional[dict] = None
        self._registered_classes: Optional[frozenset] = None  # registered_classes
        self._setter_defs: Optional[dict] = None  # _setters
        self._receiver_stores: Optional[tuple] = None  # _self_setter_stores
        self._functions_held: Optional[frozenset] = None  # functions_held
        self._calls: Optional[dict] = None
        self._saved: Optional[dict] = None
        self._passing: Optional[dict] = None  # calls_passing
        self._through: Optional[dict] = None  # calls_through_names
        self._inits: Optional[dict] = None  # `Class.__init__` dotted -> the classes it initializes
        self._stores_params: dict = {}  # class dotted -> stores_init_params()
        self._decorated: Optional[dict] = None  # def dotted -> decorator applications (decorated_by)
        # site_key(site) -> [(summary, DefInfo)] of the classes and functions it compiles
        self.site_targets: dict = {}
        self._resolved: Optional[list] = None
        self._candidates: dict = {}
        self._near_folders: dict = {}  # id(summary) -> (summary, its folder, the two above)
        self._suffixes: Optional[dict] = None
        self._roots: Optional[list] = None  # import_roots()
        # answers asked again and again while resolving (a pure function of the
        # summaries, so computed once per index)
        self._by_file_memo: dict = {}
        self._lookups: dict = {}
        self._looking: set = set()  # lookups under way (a re-export cycle)
        self._stars: dict = {}  # module -> what its star imports bring in (_star_exports)
        self._lookup_cuts = 0  # lookups cut short by the depth bound or a cycle
        self._globals: dict = {}
        self._mros: dict = {}
        self._mro_sets: dict = {}  # class dotted -> set(mro) (_mro_set)
        self._attr_terms: dict = {}
        self._registered_with: dict = {}  # decorators -> registered_with()
        self._packages: Optional[set] = None  # holds_module()
        self._marked_at: dict = {}
        self._factory_entries: dict = {}
        self._rebound_forwards: dict = {}  # class dotted -> _forward_rebound
        self._callees: dict = {}  # (Ref, id(summary)) -> the defs a call of it runs (_callee_defs)
        self._file_folders: Optional[set] = None
        self._folders_above: dict = {}  # folder -> _folders_up(folder)
        self._test_files: dict = {}
        self._fixtures: Optional[dict] = None  # fixture name -> [(summary, DefInfo)] (fixture_for)
        self._subclasses: Optional[dict] = None  # class dotted -> its project subclasses (classes_admitted)
        self._extends: Optional[set] = None  # methods that call their base's through super() (extends_base)
        self._imports: Optional[dict] = None  # module -> the project modules it imports (program_modules)
        self._imported: set = set()
        self._decorated_tables: dict = {}  # decorator terms -> _decorated_methods
        self._abstract_classes: dict = {}  # class -> is_abstract

    # -- names -----------------------------------------------------------------------
    def candidates(self, dotted: str, summary: Optional[ModuleSummary]) -> list[str]:
        """Module names an import written in `summary` may stand for: `from model
        import Net` in `tools/train.py` is `tools/model.py` first (the file next to it),
        then the names from its import roots, then files in the folders above."""
        if summary is None:
            return self._import_name_candidates(dotted)
        key = (dotted, id(summary))
        found = self._candidates.get(key)
        if found is not None:
            return found
        parts = dotted.split(".")
        folders = self._near_folders.get(id(summary))
        if folders is None or folders[0] is not summary:  # (the summary kept: its id is not reused)
            folder = os.path.dirname(os.path.abspath(summary.path))
            folders = self._near_folders[id(summary)] = (summary, folder, os.path.dirname(folder), os.path.dirname(os.path.dirname(folder)),
                                                         self._sys_path_folders(summary, folder))
        folders, added = folders[1:4], folders[4]
        by_path = [self._by_file(f, parts) for f in folders]
        out = [c for c in by_path[:1] if c]
        out += [c for c in (self._by_file(f, parts) for f in added) if c]
        out += [prefix + dotted for prefix in summary.import_prefixes]
        out += [c for c in by_path[1:] if c]
        # last, the folders further up, as the folder a script is run from: AWML's
        # `from projects.StreamPETR.deploy.containers import ...` in a package under its own
        # setup.py, `projects/` a namespace package of the repository root (bench/dev29)
        for above in self._folders_up(os.path.dirname(folders[2]))[:-1]:  # (not the file system's root)
            found_here = self._by_file(above, parts)
            if found_here:
                out.append(found_here)
                break
        # the project's packages under an import folder of their own (`src/pkg/...`, the
        # layout pip installs from): `import pkg` anywhere in the project is that package
        out += [root + dotted for root in self.import_roots() if root + parts[0] in self.modules]
        seen: set = set()
        found = self._candidates[key] = [c for c in out if not (c in seen or seen.add(c))]
        return found

    def _sys_path_folders(self, summary: ModuleSummary, folder: str) -> tuple:
        """The folders `summary`'s module puts on sys.path, and those of the project modules
        next to it that it imports (`import _init_paths`), as absolute paths."""
        out = self._added_folders(folder, summary.sys_paths)
        for dotted in summary.bindings.values():
            module = self._by_file(folder, dotted.split("."))
            imported = self.modules.get(module) if module else None
            if imported is not None and imported.sys_paths and imported is not summary:
                out += self._added_folders(os.path.dirname(os.path.abspath(imported.path)), imported.sys_paths)
        return tuple(dict.fromkeys(out))

    def _added_folders(self, folder: str, sys_paths: tuple) -> list[str]:
        """The absolute folders a module in `folder` adds to sys.path: relative to its own
        folder, or, for a path relative to the working directory (sys_paths.WORKING_DIR),
        the first folder from its own up that holds files of the run under that path."""
        out = []
        for rel in sys_paths:
            if not rel.startswith(WORKING_DIR):
                out.append(os.path.normpath(os.path.join(folder, rel)))
                continue
            rel, run_folders = rel[len(WORKING_DIR):], self._run_folders()
            for here in self._folders_up(folder):
                there = os.path.normpath(os.path.join(here, rel))
                if there in run_folders:
                    out.append(there)
                    break
        return out

    def _folders_up(self, folder: str) -> tuple:
        """`folder` and every folder above it, the file system's root last; made once per
        folder (every import of every file walks up from its folder)."""
        found = self._folders_above.get(folder)
        if found is None:
            parent = os.path.dirname(folder)
            found = (folder,) if parent == folder else (folder, *self._folders_up(parent))
            self._folders_above[folder] = found
        return found

    def holds_module(self, dotted: str) -> bool:
        """Whether `dotted` (as the index names modules) is a module of the project or a
        package above one, namespace packages without `__init__.py` included."""
        if self._packages is None:
            self._packages = set(self.modules)
            for module in self.modules:
                parts = module.split(".")
                self._packages.update(".".join(parts[:cut]) for cut in range(1, len(parts)))
        return dotted in self._packages

    def import_roots(self) -> list[str]:
        """The module-name prefixes of folders that hold the project's packages without
        being one (`src.` for `src/pkg/__init__.py`): where an installed project's
        top-level packages are imported from."""
        if self._roots is None:
            roots = set()
            for summary in self.summaries:
                prefix = summary.import_prefixes[0] if summary.import_prefixes else ""
                if prefix and summary.module.startswith(prefix) and "." in summary.module[len(prefix):]:
                    roots.add(prefix)
                # pip's `src/` layout with a stray `src/__init__.py` (s2m2, bench/fresh_reads
                # batch 20): `src` reads as a package, but the project imports `s2m2`, which
                # `pip install -e .` puts on the path from inside it
                if summary.module.startswith(prefix + "src.") and "." in summary.module[len(prefix) + 4:]:
                    roots.add(prefix + "src.")
            self._roots = sorted(roots)
        return self._roots

    def unparsed_reason(self, dotted: str, summary: Optional[ModuleSummary]) -> Optional[str]:
        """Why `dotted`, imported in `summary`, is not seen where it names code of a project
        file that does not parse (UltraZoom's `src/ultrazoom/model.py`, Python 3.12's `type`
        statement read by 3.11: its `MewZoom` was said to be another package's,
        bench/fresh_reads batch 15); None otherwise."""
        if not self.unparsed:
            return None
        for candidate in self.candidates(dotted, summary):
            module = candidate
            while module:
                owner = self.unparsed.get(module)
                if owner is not None:
                    return f"`{module}` is the project's, but its file does not parse ({owner.unparsed}): its code is not seen"
                module = module.rpartition(".")[0]
        return None

    def _import_name_candidates(self, dotted: str) -> list[str]:
        """`pkg.mod.Class` named in a config (no importing file): also the module whose
        name carries a folder prefix (`src.pkg.mod`)."""
        if self._suffixes is None:
            self._suffixes = {}
            for module in self.modules:
                parts = module.split(".")
                for cut in range(1, len(parts)):
                    self._suffixes.setdefault(".".join(parts[cut:]), module)
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            head = ".".join(parts[:cut])
            if head in self.modules:
                return [dotted]
            if head in self._suffixes:
                return [dotted, ".".join([self._suffixes[head]] + parts[cut:])]
        return [dotted]

    def _by_file(self, folder: str, parts: list[str]) -> Optional[str]:
        key = (folder, tuple(parts))
        try:
            return self._by_file_memo[key]
        except KeyError:
            found = self._by_file_memo[key] = self._by_file_uncached(folder, parts)
            return found

    def _run_folders(self) -> set:
        """Every folder above a summarized file."""
        if self._file_folders is None:
            self._file_folders = set()
            for base in self.by_file:
                while True:
                    parent = os.path.dirname(base)
                    if parent == base or parent in self._file_folders:
                        break
                    self._file_folders.add(parent)
                    base = parent
        return self._file_folders

    def _by_file_uncached(self, folder: str, parts: list[str]) -> Optional[str]:
        # (os.path.join of a folder and module parts, spelled out: 66k joins on corpus M)
        prefix = folder if folder.endswith(os.sep) else folder + os.sep
        first = prefix + parts[0]
        if first not in self.by_file and first not in self._run_folders():
            return None  # no file of the run lives there
        for cut in range(len(parts), 0, -1):
            owner = self.by_file.get(prefix + os.sep.join(parts[:cut]))
            if owner is not None:
                rest = parts[cut:]
                return ".".join(([owner.module] if owner.module else []) + rest)
        return None

    def lookup(self, dotted: str, _depth: int = 0, _summary: Optional[ModuleSummary] = None) -> Optional[tuple[ModuleSummary, DefInfo]]:
        """The def a dotted name refers to, following re-exports and base classes.

        Answers are remembered by (name, asking file) whatever the depth they were
        asked at, unless the depth bound or a cycle of re-exports cut them short (then
        a shallower question may find more): re-export chains through lazy-import
        packages (transformers' `__init__`s) were asked once per depth, exponentially."""
        key = (dotted, id(_summary))
        found = self._lookups.get(key, _MISSING)
        if found is not _MISSING:
            return found
        if _depth > 6 or key in self._looking:
            self._lookup_cuts += 1
            return None
        cuts = self._lookup_cuts
        self._looking.add(key)
        try:
            found = self._lookup_candidates(dotted, _depth, _summary)
        finally:
            self._looking.discard(key)
        if found is not None or self._lookup_cuts == cuts:
            self._lookups[key] = found
        return found

    def _lookup_candidates(self, dotted: str, _depth: int, _summary: Optional[ModuleSummary]):
        for candidate in self.candidates(dotted, _summary):
            found = self._lookup(candidate, _depth)
            if found is not None:
                return found
        return None

    def _lookup(self, dotted: str, _depth: int) -> Optional[tuple[ModuleSummary, DefInfo]]:
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
                    return self.lookup(target, _depth + 1, summary)
            # `from .models import *` in a package's __init__ (the last one defining it wins)
            if summary.star_imports:
                target = self._star_exports(summary).get(head)
                if target is not None and target != ".".join(parts[: cut + 1]):
                    return self.lookup(".".join([target] + parts[cut + 1 :]), _depth + 1, summary)
            # a method inherited from a base class: the first of the class's MRO that
            # defines it, then (bases outside the project) each base as written
            owner_dotted = ".".join(parts[:-1])
            owner = self.defs.get(owner_dotted)
            if owner is not None and owner[1].kind == "class":
                inherited = self._first_in_mro(owner_dotted, parts[-1])
                if inherited is not None:
                    return self.defs[inherited]
                for base in owner[1].bases:
                    found = self.lookup(f"{base}.{parts[-1]}", _depth + 1, owner[0])
                    if found is not None:
                        return found
            break
        return None

    def find_def(self, dotted: str, summary: Optional[ModuleSummary]):
        return self.lookup(dotted, 0, summary)

    def find_global(self, dotted: str, summary: Optional[ModuleSummary], _depth: int = 0):
        """(summary, name) of a module-level variable, through imports and re-exports."""
        if _depth == 0:
            key = (dotted, id(summary))
            try:
                return self._globals[key]
            except KeyError:
                found = self._globals[key] = self._find_global(dotted, summary, 0)
                return found
        return self._find_global(dotted, summary, _depth)

    def _find_global(self, dotted: str, summary: Optional[ModuleSummary], _depth: int):
        if _depth > 6:
            return None
        for candidate in self.candidates(dotted, summary):
            module, _, name = candidate.rpartition(".")
            owner = self.modules.get(module)
            if owner is None:
                continue
            if name in owner.scopes.get("", {}):
                return owner, name
            if name in owner.bindings and owner.bindings[name] != candidate:
                return self.find_global(owner.bindings[name], owner, _depth + 1)
            if owner.star_imports:
                target = self._star_exports(owner).get(name)
                if target is not None and target != candidate:
                    return self.find_global(target, owner, _depth + 1)
        return None

    def _star_exports(self, summary: ModuleSummary) -> dict:
        """name -> dotted for the names a module's `from m import *` lines bring in (the
        last one wins, as in Python), through the star imports of those modules too.
        Computed once per module: transformers' `models/__init__.py` star-imports 400
        model packages, asked for every name."""
        found = self._stars.get(summary.module)
        if found is not None:
            return found
        self._stars[summary.module] = {}  # a cycle of star imports sees what is known so far
        out: dict = {}
        for star in summary.star_imports:
            for candidate in self.candidates(star, summary):
                owner = self.modules.get(candidate)
                if owner is None:
                    continue
                out.update(self._star_exports(owner) if owner.star_imports else {})
                for name in owner.bindings:
                    if not name.startswith("_"):
                        out[name] = f"{owner.module}.{name}" if owner.module else name
                for qualname in owner.defs:
                    if "." not in qualname and not qualname.startswith(("_", "<")):
                        out[qualname] = owner.dotted(qualname)
                for name in owner.scopes.get("", {}):
                    if not name.startswith("_"):
                        out[name] = owner.dotted(name)
                break
        self._stars[summary.module] = out
        return out

    def mro(self, cls_dotted: str) -> list[str]:
        """The project classes of `cls_dotted`'s method resolution order, itself first."""
        found = self._mros.get(cls_dotted)
        if found is None:
            self._mros[cls_dotted] = [cls_dotted] if cls_dotted in self.defs else []  # (a cycle of bases)
            found = self._mros[cls_dotted] = self._mro(cls_dotted)
        return found

    def classes_admitted(self, classes: set) -> tuple:
        """The project classes an `isinstance(x, classes)` test admits: the project classes
        among `classes` and their project subclasses; () when any of `classes` is not a
        project class (then the test admits what the index cannot list)."""
        if not classes or any(c not in self.defs or self.defs[c][1].kind != "class" for c in classes):
            return ()
        if self._subclasses is None:
            self._subclasses = {}
            for dotted, (_summary, info) in self.defs.items():
                if info.kind == "class":
                    for base in self.mro(dotted)[1:]:
                        self._subclasses.setdefault(base, set()).add(dotted)
        found = set(classes)
        for c in classes:
            found |= self._subclasses.get(c, set())
        return tuple(sorted(found))

    def extends_base(self, method_dotted: str) -> bool:
        """Whether the project method `method_dotted` calls its base's method of the same
        name through `super()` (ModuleSummary.extends)."""
        if self._extends is None:
            self._extends = {summary.dotted(q) for summary in self.summaries for q in summary.extends}
        return method_dotted in self._extends

    def is_abstract(self, cls_dotted: str) -> bool:
        """Whether a project class has a method that is abstract (`@abstractmethod`) where
        its MRO finds it: declared so by the class or a base and not overridden; or runs a
        `forward` that only raises NotImplementedError (HDM's `te: BaseTextEncoder`, whose
        subclasses are what the configuration builds: bench/fresh_reads batch 17). Such a
        class is never instantiated, or never run: a value declared to be one is one of
        its subclasses."""
        found = self._abstract_classes.get(cls_dotted)
        if found is None:
            declared = self._decorated_methods(ABSTRACT_DECORATORS)
            found = any(self._first_in_mro(cls_dotted, name) == f"{c}.{name}"
                        for c in self.mro(cls_dotted) for name in declared.get(c, ()))
            if not found:
                forward = self._first_in_mro(cls_dotted, "forward")
                found = forward is not None and self.defs[forward][1].unimplemented
            self._abstract_classes[cls_dotted] = found
        return found

    def _decorated_methods(self, decorators: frozenset) -> dict:
        """{project class: [the names of its methods decorated by one of `decorators`
        (decorator terms)]}, in definition order; made once per set of decorators."""
        found = self._decorated_tables.get(decorators)
        if found is None:
            found = self._decorated_tables[decorators] = {}
            for dotted, (_summary, info) in self.defs.items():
                if info.kind == "function" and any(t in decorators for t in info.decorators):
                    owner, _, name = dotted.rpartition(".")
                    if owner in self.defs and self.defs[owner][1].kind == "class":
                        found.setdefault(owner, []).append(name)
        return found

    def _first_in_mro(self, cls_dotted: str, name: str) -> Optional[str]:
        """The dotted name of the def `cls_dotted.<name>` runs (the first class of its MRO
        that defines it)."""
        for c in self.mro(cls_dotted):
            if f"{c}.{name}" in self.defs:
                return f"{c}.{name}"
        return None

    def classes_built_by(self, init_dotted: str) -> frozenset:
        """The project classes whose instances `init_dotted` (a `Class.__init__`)
        initializes: its class and the subclasses that inherit it."""
        if self._inits is None:
            inits: dict = {}
            for dotted, (summary, info) in self.defs.items():
                if info.kind == "class":
                    found = self.lookup(f"{dotted}.__init__")
                    if found is not None:
                        inits.setdefault(found[0].dotted(found[1].qualname), set()).add(dotted)
            self._inits = {k: frozenset(v) for k, v in inits.items()}
        return self._inits.get(init_dotted, frozenset())

    def stores_init_params(self, cls_dotted: str) -> bool:
        """Whether the `__init__` a project class runs stores one of its parameters on
        `self` (`self.matcher = matcher`), so that instances differ by what built them."""
        found = self._stores_params.get(cls_dotted)
        if found is None:
            found = False
            init = self.lookup(f"{cls_dotted}.__init__")
            if init is not None and init[1].kind == "function":
                qualname = init[1].qualname
                reads = self.resolver._reads
                for c in self.mro(cls_dotted):
                    summary = self.defs[c][0]
                    for terms in summary.attrs.get(c, {}).values():
                        for term in terms:
                            keys = reads(term, summary)  # (None: not known, maybe)
                            if keys is None or any(type(k) is tuple and k[0] == qualname for k in keys):
                                found = True
                                break
                        if found:
                            break
                    if found:
                        break
            self._stores_params[cls_dotted] = found
        return found

    def _derives_module(self, cls_dotted: str) -> bool:
        """Whether a project class derives from torch's nn.Module itself (a mixin without
        it, read as `self` in its own methods, stands for a subclass the index does not pick)."""
        return any(base in TORCH_MODULE for c in self.mro(cls_dotted) for base in (self.defs[c][1].bases if c in self.defs else ()))

    def leaves_project(self, cls_dotted: str) -> bool:
        """Whether a project class has a base outside the project (other than object)."""
        return any(True for _base in self._bases_outside(cls_dotted))

    def _bases_outside(self, cls_dotted: str):
        """The bases (dotted names) of the classes of `cls_dotted`'s MRO that are outside
        the project, other than object."""
        for c in self.mro(cls_dotted):
            owner = self.defs.get(c)
            for base in owner[1].bases if owner is not None else ():
                if base not in KNOWN_ROOTS and self.lookup(base, 0, owner[0]) is None:
                    yield base

    def _mro(self, cls_dotted: str) -> list[str]:
        """Python's C3 linearization over the project's bases (a diamond `class
        Vit(BaseVit, ResNetWorkload)` finds `ResNetWorkload.loss_fn` before the shared
        base's abstract one); where the bases admit none, breadth-first order."""
        found = self.defs.get(cls_dotted)
        if found is None or found[1].kind != "class":
            return []
        bases = []
        for base in found[1].bases:
            base_found = self.lookup(base, 0, found[0])
            if base_found is not None and base_found[1].kind == "class":
                bases.append(base_found[0].dotted(base_found[1].qualname))
        merged = _c3_merge([list(self.mro(b)) for b in bases] + [list(bases)])
        if merged is not None:
            return ([cls_dotted] + merged)[:16]
        return self._breadth_first_mro(cls_dotted)

    def _breadth_first_mro(self, cls_dotted: str) -> list[str]:
        out: list[str] = []
        todo = [cls_dotted]
        while todo and len(out) < 16:
            current = todo.pop(0)
            if current in out:
                continue
            found = self.defs.get(current)
            if found is None or found[1].kind != "class":
                continue
            out.append(current)
            for base in found[1].bases:
                base_found = self.lookup(base, 0, found[0])
                if base_found is not None:
                    todo.append(base_found[0].dotted(base_found[1].qualname))
        return out

    def attr_terms(self, cls_dotted: str, name: str) -> list:
        key = (cls_dotted, name)
        found = self._attr_terms.get(key)
        if found is None:
            found = self._attr_terms[key] = self._attr_terms_of(cls_dotted, name)
        return found

    def _attr_terms_of(self, cls_dotted: str, name: str) -> list:
        """(summary, term) of every store of attribute `name` an instance of `cls_dotted`
        may run: in its class and its bases, but not in a base's method that a class
        before it in the MRO overrides without calling the base's (TheAnimeScripter's
        `OGDepthV3Cuda.handleModels` stores another model than the one it overrides)."""
        out = []
        mro = self.mro(cls_dotted)
        for i, c in enumerate(mro):
            summary = self.defs[c][0]
            for term, method in summary.attr_stores(c, name):
                if i and method is not None and self._overridden(mro[:i], method):
                    continue
                out.append((summary, term))
        return out

    def _overridden(self, before: list, method: str) -> bool:
        """Whether a class of `before` (an MRO's head) defines `method` and never runs the
        version of the classes after it."""
        return any(f"{c}.{method}" in self.defs and method not in self.defs[c][1].defers for c in before)

    def decorated_by(self, dotted: str) -> list:
        """(summary, "func" | "bound" | "class", term of the decorated def) for every
        decorator application whose decorator is the def `dotted` (`@compile_if(cfg)`
        applies the def that `compile_if` returns; `@Wrapper` builds a Wrapper of it)."""
        if self._decorated is None:
            self._decorated = {}
            resolver = self.resolver
            for summary, callee, args, _kws in self.calls_named(DECORATED):
                for value in resolver.values(callee, summary):
                    # (a class as a decorator passes the def to its `__init__`)
                    if value.kind in ("func", "bound", "class"):
                        self._decorated.setdefault(value.dotted, []).append((summary, value.kind, args[0]))
        return self._decorated.get(dotted, [])

    def registered_with(self, decorators: frozenset) -> dict:
        """{def name: [(summary, dotted)]} of the project's module-level defs decorated by
        one of `decorators`, dotted names of another package's registering decorators
        (timm's `@register_model`), bare or called."""
        found = self._registered_with.get(decorators)
        if found is None:
            found = self._registered_with[decorators] = {}
            for summary in self.summaries:
                for qualname, info in summary.defs.items():
                    if "." in qualname or not info.decorators:
                        continue
                    for deco in info.decorators:
                        func = deco[1] if deco[0] == "call" else deco
                        if func[0] == "g" and func[1] in decorators:
                            found.setdefault(qualname, []).append((summary, summary.dotted(qualname)))
                            break
        return found

    def program_modules(self, summary: ModuleSummary) -> Optional[frozenset]:
        """The project modules a program run as the script `summary` imports, directly or
        through the modules it imports (a package's `__init__` with them); None when some
        project module imports `summary` (then the program is another file, whose imports
        are not known here) or when one of them imports by name at run time
        (`importlib.import_module`, `__import__`)."""
        if self._imports is None:
            self._imports = {}
            for other in self.summaries:
                found = set()
                for dotted in list(other.bindings.values()) + list(other.star_imports) + list(other.imports):
                    for candidate in self.candidates(dotted, other):
                        module = candidate if candidate in self.modules else candidate.rpartition(".")[0]
                        if module in self.modules:
                            found.add(module)
                            break
                found.discard(other.module)
                self._imports[other.module] = found
            self._imported = {m for found in self._imports.values() for m in found}
        if summary.module in self._imported:
            return None
        seen, todo = {summary.module}, [summary.module]
        while todo:
            module = todo.pop()
            owner = self.modules.get(module)
            if owner is not None and any(call[0] in ("import_module", "__import__") for call in owner.calls):
                return None
            for imported in self._imports.get(module, ()):
                parts = imported.split(".")
                for k in range(1, len(parts) + 1):  # `import a.b` runs `a/__init__` first
                    step = ".".join(parts[:k])
                    if step in self.modules and step not in seen:
                        seen.add(step)
                        todo.append(step)
        return frozenset(seen)

    def fixture_for(self, summary: ModuleSummary, qualname: str, name: str) -> Optional[tuple]:
        """(summary, DefInfo) of the pytest fixture `name` that pytest gives a parameter of
        the test or fixture `qualname` of `summary`: the closest one, as pytest picks it
        (the test's class and the classes it derives from, its module, then the
        `conftest.py` of its folder and of each folder above); None when the project
        defines none there."""
        if self._fixtures is None:
            self._fixtures = {}
            for s in self.summaries:
                for info in s.defs.values():
                    if info.fixture is not None:
                        self._fixtures.setdefault(info.fixture[0], []).append((s, info))
        found = self._fixtures.get(name)
        if not found:
            return None
        owner = qualname.rpartition(".")[0]
        if owner:
            # a class fixture is an attribute: the test class's own, else the first of its
            # bases' (fms's `Qwen3DecoderFixtures` mixin gives `TestQwen3Decoder` its `model`)
            by_class = {s.dotted(info.qualname.rpartition(".")[0]): (s, info) for s, info in found if "." in info.qualname}
            for c in self.mro(summary.dotted(owner)) or [summary.dotted(owner)]:
                if c in by_class:
                    return by_class[c]
        for s, info in found:  # then module level
            if s is summary and "." not in info.qualname:
                return s, info
        folder = os.path.dirname(os.path.abspath(summary.path))
        best = None
        for s, info in found:
            if "." in info.qualname or os.path.basename(s.path) != "conftest.py":
                continue
            above = os.path.dirname(os.path.abspath(s.path))
            if (folder == above or folder.startswith(above.rstrip(os.sep) + os.sep)) and (best is None or len(above) > best[0]):
                best = (len(above), s, info)
        return best[1:] if best is not None else None

    def calls_passing(self, name: str) -> list:
        """(summary, callee term, arg terms, kw terms, position) of every call that passes,
        as a positional argument, a module-level name whose last part is `name`
        (`runner(build_results, data, predictor)`)."""
        if self._passing is None:
            passing: dict = {}
            for summary in self.summaries:
                for _c_name, callee, args, kws in summary.calls:
                    for position, arg in enumerate(args):
                        if arg is not None and arg[0] == G:
                            passing.setdefault(arg[1].rpartition(".")[2], []).append((summary, callee, args, kws, position))
            self._passing = passing
        return self._passing.get(name, [])

    def calls_through_names(self, keyword: str) -> list:
        """(summary, callee term, arg terms, kw terms) of every call through a local name
        or parameter that passes `keyword` by name (`model_class(image_encoder=
        enc)`, `model_class` a parameter its callers give a class). The keyword is the key:
        most calls through a local name are a module's forward (`block(x)`), and what the
        name holds is evaluated only for calls that name a parameter asked about."""
        if self._through is None:
            through: dict = {}
            for summary in self.summaries:
                for _c_name, callee, args, kws in summary.calls:
                    if unnarrowed(callee)[0] == LOCAL:
                        for kw, _term in kws:
                            if kw is not None:
                                through.setdefault(kw, []).append((summary, callee, args, kws))
            self._through = through
        return self._through.get(keyword, [])

    def calls_named(self, name: str) -> list:
        """(summary, callee term, arg terms, kw terms) of every call of something named `name`."""
        if self._calls is None:
            calls: dict = {}
            for summary in self.summaries:
                for c_name, callee, args, kws in summary.calls:
                    calls.setdefault(c_name, []).append((summary, callee, args, kws))
                    # a call through an import alias (`from train import Workspace as W`,
                    # then `W(cfg)`) is a call of `Workspace` too: asked by that name
                    for imported in _imported_names(summary, callee, c_name):
                        calls.setdefault(imported, []).append((summary, callee, args, kws))
            self._calls = calls
        return self._calls.get(name, [])

    def stored(self, location: tuple) -> list:
        return self._store_table().get(location, [])

    def saved_to(self, path: str) -> list:
        """(summary, term) of everything the project's code saves to checkpoint `path`
        (a string constant: ModuleSummary.saved)."""
        if self._saved is None:
            saved: dict = {}
            for summary in self.summaries:
                for key, terms in summary.saved.items():
                    saved.setdefault(key, []).extend((summary, term) for term in terms)
            self._saved = saved
        return self._saved.get(checkpoint_key(path), [])

    def _store_table(self) -> dict:
        """location -> [(summary, term or Value, key)] of every store (_collect_stores), made once."""
        if self._stores is None:
            self._stores = self._collect_stores()
        return self._stores

    def registered_classes(self) -> frozenset:
        """The project classes some container holds under a key (`@REGISTRY.register()`,
        `MODELS["unet"] = UNet`; not timm's `@register_notrace_module`, a set): the only
        classes a call of a looked-up callee (`REGISTRY.get(k)(opt)`, values.LOOKED_UP)
        may build."""
        if self._registered_classes is None:
            self._registered_classes = frozenset(
                held.dotted for entries in self._store_table().values() for _summary, held, key in entries
                if isinstance(held, Value) and held.kind == "class" and isinstance(key, str))
        return self._registered_classes

    def functions_held(self) -> frozenset:
        """The project functions a module-level dict display holds as a value
        (`models_parallelize_fns = {"llama2": parallelize_llama}`) where the project calls
        an item of a dict of that name (`models_parallelize_fns[name](model, mesh)`): those
        a call of a looked-up callee (values.LOOKED_UP) may call. (Every function some
        container holds, timm's 1,400 registered model functions among them, took corpus
        M's index from 1.7 to 8 s.)"""
        if self._functions_held is None:
            looked_up = set()
            for _summary, callee, _args, _kws in self.calls_named(LOOKED_UP):
                base = callee[1] if callee[0] == ITEM else None
                if base is not None and base[0] == G:
                    looked_up.add(base[1].rsplit(".", 1)[-1])
            held: set = set()
            for summary in self.summaries if looked_up else ():
                module_scope = summary.scopes.get("", {})
                for name in looked_up.intersection(module_scope):
                    for entry in module_scope[name]:
                        term = entry[2]
                        if term is None or term[0] != SEQ or len(term) < 4:  # a dict display with string keys
                            continue
                        for element in term[1]:
                            if element is None or element[0] != G:
                                continue
                            found = self.lookup(element[1], 0, summary)
                            if found is not None and found[1].kind == "function" and "." not in found[1].qualname:
                                held.add(found[0].dotted(found[1].qualname))
            self._functions_held = frozenset(held)
        return self._functions_held

    def _collect_stores(self) -> dict:
        """Container stores of every file, and defs registered by decorators:
        `@register` whose body stores its parameter (`REG[fn.__name__] = fn`), and
        `@REGISTRY.register(...)` on a module-level registry object."""
        stores: dict = {}
        # a registering decorator's own store (`MODELS[name] = cls` in `add(cls)`) is
        # each application's, with its key: not also a store of whatever `cls` may be
        used: set = set()
        for summary in self.summaries:
            for qualname, info in summary.defs.items():
                if not info.decorators:
                    continue
                dotted = summary.dotted(qualname)
                value = Value("class" if info.kind == "class" else "func", dotted)
                for deco in info.decorators:
                    for location, key, store in self._registrations(deco, summary, qualname.rsplit(".", 1)[-1], dotted):
                        stores.setdefault(location, []).append((summary, value, key))
                        if store is not None:
                            used.add(id(store))
            for c_name, callee, args, kws in summary.calls:
                if c_name.startswith("register"):
                    for location, key, value in self._registered_by_call(summary, c_name, callee, args, kws):
                        stores.setdefault(location, []).append((summary, value, key))
        for location, summary, value, key, store in self._setter_calls():
            stores.setdefault(location, []).append((summary, value, key))
            used.add(id(store))
        for location, summary, value, key, store in self._self_setter_stores()[0]:
            stores.setdefault(location, []).append((summary, value, key))
            if store is not None:
                used.add(id(store))
        for summary in self.summaries:
            for store in summary.stores:
                if id(store) not in used:
                    location, term, key = store
                    location = self._defined_location(location, summary)
                    if location is not None:
                        stores.setdefault(location, []).append((summary, term, key))
        return stores

    def _defined_location(self, location: tuple, summary) -> Optional[tuple]:
        """A store's container as the index keys it: an imported one (("I", name)) where it
        is defined (("G", dotted)), None when no module of the project defines it."""
        if location[0] != "I":
            return location
        glob = self.find_global(location[1], summary)
        return ("G", glob[0].dotted(glob[1])) if glob is not None else None

    def _registrations(self, deco, summary, name: str, decorated: str = "") -> list:
        """(location, key, the decorator's own store or None) of each container the
        decorator `deco` stores its def into; the key is the string constant it is
        registered under, None when unknown."""
        call = deco if deco[0] == "call" else None
        func = deco[1] if call else deco
        out = []
        if func[0] == G:
            found = self.find_def(func[1], summary)
            if found is not None and found[1].kind == "function":
                f_summary, f_info = found
                prefix = f_info.qualname
                for store in f_summary.stores:
                    location, term, key = store
                    if location[0] == "F":  # an attribute set on an object, not a container
                        continue
                    term = unnarrowed(term)
                    if term[0] == "local" and (term[1] == prefix or term[1].startswith(prefix + ".")):
                        owner = f_summary.defs.get(term[1])
                        if owner is not None and owner.params and owner.params[0] == term[2]:
                            out.append((location, self._registered_key(key, call, f_summary, f_info, name), store))
                if not out and decorated:
                    out = self._registered_through_setter(f_summary, f_info, decorated)
        if func[0] == G and out == [] and func[1].rpartition(".")[2].startswith("register"):
            # `@MODELS.register_module()` with MODELS imported from another module of the
            # project: the term is the chain `pkg.registry.MODELS.register_module`
            func = ("attr", (G, func[1].rpartition(".")[0]), func[1].rpartition(".")[2])
        if func[0] == "attr" and func[2].startswith("register"):
            base = func[1]
            # `@REGISTRY.register("unet")`, `@MODELS.register_module(name="x")`; mmcv's
            # `register_module()` with no name registers the class under its own name
            key = name
            if call is not None:
                given = passed_term(call[2], call[3], 0, ("name", "key"))
                key = given[1] if given is not None and given[0] == "const" else (None if given is not None else name)
            if base[0] == "local" and base[1] == "":
                out.append((("G", summary.dotted(base[2])), key, None))
            elif base[0] == G:
                glob = self.find_global(base[1], summary)
                if glob is not None:
                    out.append((("G", glob[0].dotted(glob[1])), key, None))
        return out

    def _setters(self) -> dict:
        """def dotted -> [(location, value (index, name), key (index, name), store)] of the project's
        functions that store one of their parameters into a container under another
        (nunif's `def _set(name, factory): _models[name] = factory`, which its
        `@register_model` decorator calls with `cls.name` and `cls`)."""
        if self._setter_defs is None:
            self._setter_defs = {}
            for summary in self.summaries:
                for store in summary.stores:
                    location, term, key = store
                    if location[0] not in ("G", "I") or key is None or isinstance(key, str):
                        continue
                    passed = self._own_params(summary, term, key)
                    location = self._defined_location(location, summary) if passed is not None else None
                    if location is not None:
                        self._setter_defs.setdefault(summary.dotted(passed[0]), []).append(
                            (location, passed[1], passed[2], store))
            # a def passing its own parameters on to a setter as its key and value is one
            # too (nunif's `def register_model_factory(name, func): _set(name, func)`)
            todo = list(self._setter_defs)
            for _round in range(3):
                found: dict = {}
                for dotted in todo:
                    for summary, callee, args, kws in self.calls_named(dotted.rpartition(".")[2]):
                        for location, value_param, key_param, store in self._setter_of(callee, summary):
                            value, key = passed_term(args, kws, *value_param), passed_term(args, kws, *key_param)
                            passed = self._own_params(summary, value, key)
                            if passed is not None and summary.dotted(passed[0]) not in self._setter_defs:
                                found.setdefault(summary.dotted(passed[0]), []).append((location, passed[1], passed[2], store))
                self._setter_defs.update(found)
                todo = list(found)
                if not todo:
                    break
        return self._setter_defs

    def receiver_stored_attrs(self) -> frozenset:
        """The attributes some project class's container holds per receiver (the
        containers `_self_setter_stores` fills, each subclass its own)."""
        return self._self_setter_stores()[1]

    def receiver_setters(self) -> frozenset:
        """The methods whose calls on `self` `_self_setter_stores` stores per receiver:
        their parameters' callers are the other calls only (values._passed_by_callers)."""
        return self._self_setter_stores()[2]

    def _self_setter_stores(self) -> tuple:
        """([(location, summary, value term, key, the method's store)], attributes, methods)
        of the calls on `self` of a method that stores its other parameters into a container
        attribute of `self` under one of them (yomitoku's `BaseModelCatalog.register(self,
        name, config, model)`: `self.catalog[name] = (config, model)`, which each catalog
        subclass's `__init__` calls as `self.register("dbnet", Config, DBNet)`): each such
        call fills the container of the class it is made in (location ("A", that class,
        attr)), not one container every subclass shares, so an instance of one subclass
        holds its own entries only. The method's own store stays for its other calls
        (`catalog.register(...)` on some instance: what they pass, in the container of the
        method's class, which every subclass reads too), dropped where there are none."""
        if self._receiver_stores is not None:
            return self._receiver_stores
        out: list = []
        attrs: set = set()
        methods: set = set()
        for summary in self.summaries:
            for store in summary.stores:
                found = self._method_setter(summary, store)
                if found is None:
                    continue
                method_dotted, attr, value, value_params, key_param = found
                short = method_dotted.rpartition(".")[2]
                made: list = []
                others = False
                for c_summary, callee, args, kws in self.calls_named(short):
                    if callee[0] == G:
                        if self._def_dotted(callee[1], c_summary) != method_dotted:
                            continue  # a def of the same name elsewhere (a module-level `register`)
                    if callee[0] != ATTR or callee[1][0] != SELF \
                            or self._def_dotted(f"{callee[1][1]}.{short}", None) != method_dotted:
                        others = True  # (whatever it calls: its arguments are asked as before)
                        continue
                    passed = {name: passed_term(args, kws, index - 1, (name,)) for name, index in value_params.items()}
                    key_term = passed_term(args, kws, key_param[0] - 1, (key_param[1],))
                    if key_term is None or any(t is None for t in passed.values()):
                        made = []  # a call leaving one out (a default): not per receiver at all
                        break
                    made.append((("A", callee[1][1], attr), c_summary, _substituted(value, passed),
                                 key_term[1] if key_term[0] == "const" else key_term))
                if made:
                    # the method's own store stays for the other calls, if any
                    out += [entry + (None if others else store,) for entry in made]
                    attrs.add(attr)
                    methods.add(method_dotted)
        self._receiver_stores = (out, frozenset(attrs), frozenset(methods))
        return self._receiver_stores

    def _def_dotted(self, dotted: str, summary) -> Optional[str]:
        """The dotted name of the def `find_def` finds for `dotted` (a method through the
        class's bases), None where it finds none."""
        found = self.find_def(dotted, summary)
        return found[0].dotted(found[1].qualname) if found is not None else None

    @staticmethod
    def _method_setter(summary, store) -> Optional[tuple]:
        """(method dotted, attribute, value term, {parameter: index}, key (index, name))
        when `store` is `self.<attr>[key] = value` in a method of a module-level class
        whose key is one of its parameters and whose value is another, or a tuple of
        them and constants, none rebound in the body."""
        location, value, key = store
        if location[0] != "A" or key is None or isinstance(key, str):
            return None
        key = unnarrowed(key)
        if key[0] != LOCAL or key[1].count(".") != 1:
            return None
        qualname = key[1]
        info = summary.defs.get(qualname)
        if info is None or info.kind != "function" or info.method_kind not in (None, "method") or len(info.params) < 2:
            return None
        elements = value[1] if value[0] == SEQ and len(value) == 3 else (value,)
        value_params: dict = {}
        for element in elements:
            element = unnarrowed(element) if element is not None else None
            if element is None:
                return None
            if element[0] == "const":
                continue
            if element[0] != LOCAL or element[1] != qualname or element[2] not in info.params[1:]:
                return None
            value_params[element[2]] = info.params.index(element[2])
        if not value_params or key[2] not in info.params[1:] or key[2] in value_params:
            return None
        scope = summary.scopes.get(qualname, {})
        if not all(entry[2][0] == PARAM for name in (*value_params, key[2]) for entry in scope.get(name) or ()):
            return None
        return summary.dotted(qualname), location[2], value, value_params, (info.params.index(key[2]), key[2])

    @staticmethod
    def _own_params(summary, value, key) -> Optional[tuple]:
        """(def qualname, value (index, names), key (index, names)) where `value` and `key`
        are two parameters, never rebound, of the module-level def they are read in (a
        parameter rebound in the body is not what the call passes)."""
        if value is None or key is None:
            return None
        value, key = unnarrowed(value), unnarrowed(key)
        if value[0] != "local" or key[0] != "local" or value[1] != key[1] or value[2] == key[2] or "." in value[1]:
            return None
        info = summary.defs.get(value[1])
        if info is None or info.kind != "function" or value[2] not in info.params or key[2] not in info.params:
            return None
        scope = summary.scopes.get(value[1], {})
        if not all(entry[2][0] == PARAM for name in (value[2], key[2]) for entry in scope.get(name) or ()):
            return None
        return value[1], (info.params.index(value[2]), (value[2],)), (info.params.index(key[2]), (key[2],))

    def _setter_of(self, callee, summary) -> list:
        """The setter entries (_setters) of the def a call's callee names, if it is one."""
        setters = self._setters()
        if not setters or callee[0] != G:
            return []
        found = self.find_def(callee[1], summary)
        return setters.get(found[0].dotted(found[1].qualname), []) if found is not None else []

    def _registered_through_setter(self, f_summary, f_info, decorated: str) -> list:
        """(location, key, store) of what a registering decorator stores through a setter
        it calls with its parameter (`_set(cls.name, cls)`, and `_set(alias, cls)` for each
        alias in `cls.name_alias`): each application's own entry, keyed by the class
        attribute the decorated class defines (or inherits), None where unknown."""
        out = []
        first = f_info.params[0] if f_info.params else None
        for _c_name, callee, args, kws in f_summary.calls if first else ():
            for location, value_param, key_param, store in self._setter_of(callee, f_summary):
                value = passed_term(args, kws, *value_param)
                value = unnarrowed(value) if value is not None else None
                if value is None or value[0] != "local" or value[1] != f_info.qualname or value[2] != first:
                    continue
                key = passed_term(args, kws, *key_param)
                for found in self._keys_of_decorated(key, f_summary, f_info, decorated):
                    out.append((location, found, store))
        return out

    def _keys_of_decorated(self, key, f_summary, f_info, decorated: str) -> list:
        """The keys a registering decorator's `key` term stands for when it is applied to
        `decorated`: a constant; `cls.attr`, the class attribute; a loop name over
        `cls.attr`, each element of it. [None] when unknown."""
        key = unnarrowed(key) if key is not None else None
        if key is None:
            return [None]
        if key[0] == "const":
            return [key[1]] if isinstance(key[1], str) else [None]
        first = f_info.params[0]

        def of_first(term) -> Optional[str]:
            term = unnarrowed(term)
            if term[0] == ATTR and term[1][0] == "local" and term[1][1] == f_info.qualname and term[1][2] == first:
                return term[2]
            return None

        attr = of_first(key)
        if attr is not None:
            held = self._class_constant(decorated, attr)
            return [held[1]] if held is not None and held[0] == "const" and isinstance(held[1], str) else [None]
        if key[0] == "local" and key[1] == f_info.qualname:
            bound = f_summary.scopes.get(key[1], {}).get(key[2]) or ()
            attrs = {of_first(entry[2][1]) if entry[2][0] == ITEM and entry[2][2] is None else None for entry in bound}
            if len(attrs) == 1 and None not in attrs:
                attr = attrs.pop()
                held = self._class_constant(decorated, attr)
                if held is not None and held[0] == SEQ:
                    # (an empty tuple registers nothing)
                    return [e[1] if e is not None and e[0] == "const" and isinstance(e[1], str) else None for e in held[1]]
                if held is None and not self._class_body_terms(decorated, attr)[1] and self._only_torch_outside(decorated):
                    # no class the decorated one derives from has it (nunif's
                    # `if hasattr(cls, "name_alias"): for alias in cls.name_alias:`): nothing
                    return []
        return [None]

    def _class_constant(self, cls_dotted: str, attr: str) -> Optional[tuple]:
        """The term a class body binds `attr` to, the nearest in the class's MRO; None
        when no class body of the project binds it, or binds it more than once."""
        terms = self._class_body_terms(cls_dotted, attr)[1]
        return terms[0] if len(terms) == 1 else None

    def _class_body_terms(self, cls_dotted: str, attr: str, defs_shadow: bool = False) -> tuple:
        """(the class, the terms its body binds `attr` to) for the nearest class in
        `cls_dotted`'s MRO whose body assigns `attr`; (None, []) when none does, or, with
        `defs_shadow`, when a class before it defines a def of that name."""
        for c in self.mro(cls_dotted):
            if defs_shadow and f"{c}.{attr}" in self.defs:
                return None, []
            body = [term for term, method in self.defs[c][0].attr_stores(c, attr) if method is None]
            if body:
                return c, body
        return None, []

    def _only_torch_outside(self, cls_dotted: str) -> bool:
        """Whether every base of the class's MRO outside the project is torch's (whose
        modules define no attribute a project names its registry keys by)."""
        return all(base.startswith("torch.") for base in self._bases_outside(cls_dotted))

    def _setter_calls(self) -> list:
        """(location, summary, value term, key, the setter's store) of each call of a
        setter (_setters) that no registering decorator's application stood for: the
        value and key it passes (a constant key, else its term)."""
        out = []
        for dotted in self._setters():
            for summary, callee, args, kws in self.calls_named(dotted.rpartition(".")[2]):
                for location, value_param, key_param, store in self._setter_of(callee, summary):
                    value = passed_term(args, kws, *value_param)
                    if value is None:
                        continue
                    bare = unnarrowed(value)
                    if bare[0] == "local":
                        owner = summary.defs.get(bare[1])
                        if owner is not None and owner.params and owner.params[0] == bare[2] and self.decorated_by(summary.dotted(bare[1])):
                            continue  # a registering decorator's call: each application's (_registered_through_setter)
                    key = passed_term(args, kws, *key_param)
                    passed = self._own_params(summary, value, key)
                    if passed is not None and summary.dotted(passed[0]) in self._setters():
                        continue  # a setter's own call of another: its callers' (made a setter above)
                    out.append((location, summary, value, key[1] if key is not None and key[0] == "const" else key, store))
        return out

    def _registered_by_call(self, summary, c_name: str, callee, args, kws) -> list:
        """(location, key, term) of a registration spelled as a call on a registry object:
        mmengine's `MODELS.register_module(name="x", module=Net)` (the class by keyword;
        with no name, under its own) and fvcore's `BACKBONES.register(Net)`."""
        term = next((t for k, t in kws if k == "module"), None)
        if term is None and c_name == "register" and len(args) == 1 and not kws:
            term = args[0]
        if term is None or term[0] != G:
            return []
        given = next((t for k, t in kws if k == "name"), None)
        key = given[1] if given is not None and given[0] == "const" else (
            None if given is not None else term[1].rpartition(".")[2])
        deco = ("call", callee, (), ())  # its location is the decorator form's
        return [(location, key, term) for location, _key, _store in self._registrations(deco, summary, "")]

    @staticmethod
    def _registered_key(key, call, f_summary, f_info, name: str):
        """The key of a store made inside a registering decorator: a constant; the
        decorator factory's parameter (`def register(name)`: the constant the
        application passes); `fn.__name__`-style keys, also through a local every binding
        of which is one (`model_name = fn.__name__`, timm's registry), are the def's own
        name."""
        key = unnarrowed(key)
        if key is None:
            return None
        if key[0] == "const":
            return key[1]
        if key[0] in ("local", "param") and call is not None:
            param = key[2] if key[0] == "local" else key[3]
            if param in f_info.params:
                i = f_info.params.index(param)
                arg = passed_term(call[2], call[3], i, (param,))
                return arg[1] if arg is not None and arg[0] == "const" else None
        if key[0] == "attr" and key[2] == "__name__":
            return name
        if key[0] == "local" and key[1] == f_info.qualname:
            bound = f_summary.scopes.get(key[1], {}).get(key[2]) or ()
            if bound and all(entry[2][0] == "attr" and entry[2][2] == "__name__" for entry in bound):
                return name
        return None

    # -- sites -------------------------------------------------------------------------
    def _stored_callee_defs(self, ref: Ref) -> list:
        """`self.mix(x)` where `mix` is no method and no class the file names: the forward
        of what the value model says the attribute holds (`self.mix = mixer()` with `mixer`
        a parameter of `__init__`, what its callers pass or its default; `self.block =
        block`). Asked only for attributes a method calls."""
        owner, attr = ref.dotted.rsplit(".", 1)
        found = self.defs.get(owner)
        if found is None or found[1].kind != "class":
            return []
        stored = self.attr_terms(owner, attr)
        if not stored or not all(_from_parameter(term, summary) for summary, term in stored):
            # only what `__init__` is given: asking every stored value (`ACT2FN[...]`,
            # `CLASSES[config.kind](config)`) took a transformers lint with 30 declared
            # models from 22 s past 15 min
            return []
        out = []
        for value in sorted(self.resolver.values((ATTR, (SELF, owner), attr), found[0]), key=repr):
            if value.kind == "inst" and value.dotted in self.defs:
                out += self._entry_defs(Ref(value.dotted, True))
        return out

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
                method_found = self._body_bound_method(dotted, method) or self.lookup(f"{dotted}.{method}")
                if method_found is not None:
                    out.append((method_found[0].dotted(method_found[1].qualname),) + method_found)
            own = {entry[0] for entry in out}
            return out + [e for e in self._forward_rebound(dotted, summary) if e[0] not in own]
        if ref.instance and info.kind == "function":
            # an instance made by a factory function: what the factory returns runs (in
            # one order whatever the process: the first entry names the region's `via`)
            key = (dotted, True, ref.applied)
            found = self._factory_entries.get(key)
            if found is None:
                values = self.resolver.returns_of(summary, info, {}, 0)
                if ref.applied:
                    values = self._called_values(values)
                found = self._factory_entries[key] = [e for v in sorted(values, key=repr) for e in self._value_entries(v, 0)]
            return found
        return [(dotted, summary, info)]

    def _body_bound_method(self, cls_dotted: str, method: str) -> Optional[tuple]:
        """(summary, DefInfo) of the project function a class body binds as `method`
        (`class SparseConv3d(nn.Conv3d): forward = sp_conv_forward`, SparK's sparse
        convolutions in nnssl: bench/fresh_reads batch 21), the nearest in the MRO before
        any class that defines the method; None otherwise."""
        c, body = self._class_body_terms(cls_dotted, method, defs_shadow=True)
        term = unnarrowed(body[-1]) if body else None
        if term is None or term[0] != G:
            return None
        found = self.lookup(term[1], 0, self.defs[c][0])
        return found if found is not None and found[1].kind == "function" and "." not in found[1].qualname else None

    def _called_values(self, values) -> set:
        """What calling each of `values` gives: a class builds an instance of itself (whose
        forward is what runs, as the class's own), a project function gives what it
        returns; anything else gives nothing known here."""
        out: set = set()
        for value in values:
            if value.kind in ("class", "inst"):
                out.add(value)
            elif value.kind == "func" and value.dotted in self.defs:
                summary, info = self.defs[value.dotted]
                out |= self.resolver.returns_of(summary, info, {}, 0)
        return out

    def _forward_rebound(self, cls_dotted: str, summary: ModuleSummary) -> list:
        """The class's own methods that a method of it or of a base sets as the instance's
        `forward` (`self.forward = self.forward_export`, `self.forward = variants[method]`):
        compiling, tracing or scripting an instance that ran that store runs the method
        instead (measured: scripts/measure/what_scripting_and_compiling_run.py). Which
        instances ran it is not told, so these come beside `forward`, which runs on the
        others. Other values set as `forward` (`torch.compile(self.forward)`, a closure
        from elsewhere) are not entries of the class."""
        found = self._rebound_forwards.get(cls_dotted)
        if found is None:
            found = self._rebound_forwards[cls_dotted] = []
            if self.attr_terms(cls_dotted, "forward"):
                with self.resolver.reasons_apart():
                    values = self.resolver.values((ATTR, (SELF, cls_dotted), "forward"), summary)
                mro = self._mro_set(cls_dotted)
                for value in sorted(values, key=repr):
                    if value.kind == "bound" and value.dotted in self.defs and value.dotted.rsplit(".", 1)[0] in mro:
                        found.append((value.dotted,) + self.defs[value.dotted])
        return found

    def _value_entries(self, value: Value, depth: int) -> list:
        """The defs that run when `value` is compiled or traced."""
        if depth > 4:
            return []
        forward = patched_attr(value, "forward")
        if forward is not None:  # `model.forward = infer`: compiling the model runs infer
            return [e for v in sorted(forward, key=repr) for e in self._value_entries(v, depth + 1)]
        kind = value.kind
        if kind in ("class", "inst") and value.dotted in self.defs:
            return self._entry_defs(Ref(value.dotted, True))
        if kind in ("func", "bound") and value.dotted in self.defs:
            summary, info = self.defs[value.dotted]
            return [(value.dotted, summary, info)]
        if _runs_elements(value, depth):
            out = []
            for elems in value.elems:
                for elem in sorted(elems, key=repr):
                    out += self._value_entries(elem, depth + 1)
            return out
        return []

    def jit_exported(self, cls_dotted: str) -> list:
        """The methods of a project class (its own or inherited) decorated
        `@torch.jit.export`: `torch.jit.script(module)` compiles them with `forward`
        (sherpa's silero-vad `Wrapper`, whose only method is an exported
        `audio_forward`, bench/dev17)."""
        exported = self._decorated_methods(JIT_EXPORT)
        if not exported:
            return []
        out, seen = [], set()
        for c in self.mro(cls_dotted):
            for name in exported.get(c, ()):
                if name not in seen:
                    seen.add(name)
                    if self._first_in_mro(cls_dotted, name) == f"{c}.{name}":
                        out.append((f"{c}.{name}",) + self.defs[f"{c}.{name}"])
        return out

    def _submodule_forwards(self, cls_dotted: str) -> list:
        """What scripting an instance of an nn.Module class that has no `forward` compiles:
        the `forward` of each project module its attributes hold, called or not
        (`scripts/measure/what_scripting_and_compiling_run.py`: TorchScript compiles every
        submodule's forward). open_clip-style `CLIP` classes with only `encode_image` /
        `encode_text` (AdaCLIP, bench/dev44), BlazeFaceDetector (NIR2CARI, bench/dev39).
        Attributes the index cannot see, or modules of other packages, add no project code."""
        out, seen = [], set()
        receiver = Value("inst", cls_dotted)
        for c in self.mro(cls_dotted):
            for name in sorted(self.defs[c][0].attrs.get(c, {})):
                if name in seen:
                    continue
                seen.add(name)
                for held in sorted(self.resolver.attribute(receiver, name), key=repr):
                    if held.kind == "inst" and held.dotted in self.defs and held.dotted != cls_dotted \
                            and self._derives_module(held.dotted) or _runs_elements(held, 1):
                        out += [e for e in self._value_entries(held, 1) if e not in out]
        return out

    def _script_class_methods(self, cls_dotted: str) -> list:
        """The methods of a project class that is no nn.Module, in MRO order: scripting the
        class (`@torch.jit.script class BoxTransform:`, a TorchScript class) compiles
        every one (detectron2-style box coders, bench/dev21)."""
        if self.defs[cls_dotted][1].kind != "class":
            return []
        out, seen = [], set()
        for c in self.mro(cls_dotted):
            prefix = f"{c}."
            for dotted, (summary, info) in self.defs.items():
                if dotted.startswith(prefix) and info.kind == "function" and "." not in dotted[len(prefix):]:
                    name = dotted[len(prefix):]
                    if name not in seen:
                        seen.add(name)
                        out.append((dotted, summary, info))
        return out

    def _opaque_elements(self, value: Value, depth: int) -> list:
        """The elements of a module container `value` runs (as `_value_entries` walks
        them) that no project code stands for."""
        if depth > 4 or not _runs_elements(value, depth) or patched_attr(value, "forward") is not None:
            return []
        if value.kind in ("class", "inst") and value.dotted in self.defs:
            return []
        out = []
        for elems in value.elems:
            for elem in sorted(elems, key=repr):
                if self._opaque(elem):
                    out.append(elem)
                else:
                    out += self._opaque_elements(elem, depth + 1)
        return out

    def _project_compile_method(self, value: Value) -> bool:
        """`obj.compile()` on a class of the project that defines its own `compile`."""
        if value.kind != "inst" or value.dotted not in self.defs:
            return False
        return any(f"{c}.compile" in self.defs for c in self.mro(value.dotted))

    def resolve_site(self, site: Site, summary: Optional[ModuleSummary]) -> tuple[list, Optional[str]]:
        """([(dotted, summary, DefInfo)] the site runs, None) or ([], why not)."""
        resolver = self.resolver
        resolver.why = []
        if site.term is not None and summary is not None:
            values = resolver.values(site.term, summary)
        elif site.target is not None:
            values = resolver.values((G, site.target.dotted), summary)
            if site.target.instance:
                values = frozenset(Value("inst", v.dotted) if v.kind == "class" else v for v in values)
        else:
            return [], "no target: nothing is passed to compile or trace"
        if site.api == "Module.compile" and any(self._project_compile_method(v) for v in values):
            return [], "`.compile()` is the project's own method, not nn.Module.compile"
        if site.api == "Module.compile" and values and all(v.kind == "ext" and v.dotted for v in values):
            # `torch_tensorrt.dynamo.compile(program, ...)` after a local `import torch_tensorrt`:
            # a function of another package's module, not a module instance's method
            named = min(v.dotted for v in values)
            return [], f"`{named}.compile()` is a function of another package, not nn.Module.compile"
        values = self._without_test_doubles(values, site)
        callable_values = frozenset(v for v in values if not self._cannot_be_called(v))
        if callable_values and len(callable_values) < len(values):
            values = callable_values
        entries, seen, unseen, named = [], set(), [], []
        for value in sorted(values, key=repr):
            found = self._value_entries(value, 0)
            if site.kind == SCRIPTED and value.kind in ("class", "inst") and value.dotted in self.defs:
                found = found + self.jit_exported(value.dotted)
                if not found and value.kind == "class" and not self._derives_module(value.dotted):
                    found = self._script_class_methods(value.dotted)
                elif not found and value.kind == "inst" and self._derives_module(value.dotted):
                    found = self._submodule_forwards(value.dotted)
            if not found and self._opaque(value):
                unseen.append(value)
            elif found:
                # `nn.Sequential(backbone, head)` with a backbone from a config: its
                # elements the index cannot see make the site partial too
                unseen += self._opaque_elements(value, 0)
            for entry in found:
                if entry[0] not in seen:
                    seen.add(entry[0])
                    entries.append(entry)
            named += self._value_targets(value, 0)
        if entries and not self.is_test_file(site.path):
            # the tests' defs reached through what the values hold (the elements of a
            # container a helper rebuilds around a test's model: Video-Swin-Transformer's
            # `_convert_batchnorm`, bench/dev48), as `_without_test_doubles` for the values
            kept = [e for e in entries if not self.is_test_file(e[1].path)]
            if (kept or unseen) and len(kept) < len(entries):
                entries = kept
                named = [n for n in named if not self.is_test_file(n[0].path)]
        self.site_targets[site_key(site)] = named
        if entries:
            # a union with a member the index cannot see is partial, never resolved
            return entries, (PARTIAL + self._why_not(site, unseen, resolver.why) if unseen else None)
        return [], self._why_not(site, values, resolver.why)

    def _cannot_be_called(self, value: Value) -> bool:
        """An instance of a project class that is no module and that neither it nor a base
        gives a `__call__`: `torch.compile` of it raises ("A callable function is expected"),
        as do the tracers and exporters, so beside callable members of a union it is not
        what the site compiles (LiveSwapping's `load_model()`, whose ONNX and DFM branches
        return plain wrapper classes whose compile raises and is caught: bench/fresh_reads
        batch 52). A base from another package may be callable: not told."""
        if value.kind != "inst" or value.dotted not in self.defs or self.defs[value.dotted][1].kind != "class":
            return False
        if self.leaves_project(value.dotted) or self._derives_module(value.dotted):
            return False
        if self.lookup(f"{value.dotted}.__call__") is not None:
            return False
        _owner, body = self._class_body_terms(value.dotted, "__call__", defs_shadow=True)
        return not body

    def _without_test_doubles(self, values: frozenset, site: Site) -> frozenset:
        """What a site outside the tests compiles, less the tests' own classes and
        functions where the application's own reach it too: a test file's def exists only
        while the tests run (a dummy a test passes to the application's helper, a class a
        test registers in the application's registry: miles-credit, earth2studio), so the
        application's answer is the rest, seen or not: beside a model the index cannot see
        (a checkpoint, another package's), the answer is that one, not a partial answer
        naming the test's dummy (earth2studio's StormScope experts, bench/dev23, once
        `super().__init__` calls passed models on). Reached by tests alone, they are the
        answer."""
        if self.is_test_file(site.path):
            return values
        doubles = {v for v in values if v.dotted in self.defs and v.kind in ("class", "inst", "func", "bound")
                   and self.is_test_file(self.defs[v.dotted][0].path)}
        return values - doubles if doubles and len(doubles) < len(values) else values

    def is_test_file(self, path: str) -> bool:
        """A file of the tests: `test_*.py`, `*_test.py`, `conftest.py`, or a file under a
        `tests` or `test` folder (a project inside such a folder is all tests: nothing of
        it is then told apart, in a one-file index as in the whole project's)."""
        found = self._test_files.get(path)
        if found is None:
            *folders, name = os.path.abspath(path).split(os.sep)
            found = self._test_files[path] = (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
                                              or any(f in ("tests", "test") for f in folders))
        return found

    def _value_targets(self, value: Value, depth: int) -> list:
        """The project classes and functions a compiled `value` is, as people name a
        site's target: `@torch.compile class Net(Base)` compiles a Net, whose forward
        is Base's."""
        if depth > 4:
            return []
        forward = patched_attr(value, "forward")
        if forward is not None and not self._rebinds_own_method(value, forward):
            return [t for v in sorted(forward, key=repr) for t in self._value_targets(v, depth + 1)]
        if value.kind in ("class", "inst", "func", "bound") and value.dotted in self.defs:
            if value.kind == "bound" and value.dotted.endswith((".forward", ".__call__")):
                # `torch.compile(self.head.forward)`: the receivers' classes
                return [t for v in sorted(value.elems[0], key=repr) for t in self._value_targets(v, depth + 1)]
            return [self.defs[value.dotted]]
        if _runs_elements(value, depth):
            return [t for elems in value.elems for elem in sorted(elems, key=repr) for t in self._value_targets(elem, depth + 1)]
        return []

    def _rebinds_own_method(self, value: Value, forward: frozenset) -> bool:
        """An instance of a project class whose `forward` the code set to one of the class's
        own methods (`model.forward = model.forward_test`, an exporter's variants): it is
        still that class's model, as people name it, and the method that runs is among the
        site's entries. A function from elsewhere set as `forward` (`model.forward =
        infer_forward`) is what runs instead, and is the target."""
        if value.kind != "inst" or value.dotted not in self.defs:
            return False
        mro = self._mro_set(value.dotted)
        return all(v.kind == "bound" and v.dotted and ((owner := v.dotted.rsplit(".", 1)[0]) == value.dotted or owner in mro)
                   for v in forward)

    def _opaque(self, value: Value) -> bool:
        """A value the compiled object may be that no project code stands for: a model
        from another package or a loader (`torch.load(...)`, `timm.create_model(...)`),
        or something the index cannot see. torch's own layers and containers are known."""
        if value.kind == UNKNOWN:
            return True
        if value.kind in ("inst", "ext") and value.dotted and value.dotted not in self.defs:
            return not (value.kind == "inst" and value.dotted.startswith("torch.nn.") and value.dotted[9:10].isupper())
        return False

    def _why_not(self, site: Site, values, why: list) -> str:
        for value in sorted(values, key=repr):
            if value.kind == UNKNOWN:
                return value.dotted
            if value.kind in ("ext", "inst") and value.dotted and value.dotted not in self.defs:
                return describe_external(value.dotted, value.kind == "inst")
        if why:
            return why[0]
        classes = [self.defs[d] for d in sorted(v.dotted for v in values if v.kind in ("inst", "class")
                                                and v.dotted in self.defs and self.defs[v.dotted][1].kind == "class"
                                                and not self.leaves_project(v.dotted) and self._derives_module(v.dotted)
                                                # (a base class the project subclasses may stand for a subclass)
                                                and len(self.classes_admitted({v.dotted})) == 1)]
        if classes:
            # (dreamerv3-torch, bench/dev11: `torch.compile(self._wm)` of a WorldModel whose
            # training methods are then called on the wrapper: they run eagerly)
            summary, info = classes[0]
            return (f"`{info.qualname}` ({os.path.basename(summary.path)}) defines no forward, nor does a project "
                    f"base: compiling or tracing it runs no project code")
        if values:
            return "the value has no forward or function the index knows"
        return "no binding of the target is visible (a value from a config, a loader or another package)"

    def all_sites(self) -> list[Site]:
        return [site for site, _entries, _why in self.resolved_sites()]

    def resolved_sites(self) -> list[tuple[Site, list, Optional[str]]]:
        """Every site of the run with the defs it runs, or why none was found."""
        return [(site, entries, why) for site, entries, why, _role in self._all_resolved()]

    def _delegated(self, site: Site, summary: ModuleSummary) -> Optional[str]:
        """The wrapper whose `return torch.compile(param)` this site is: each call of the
        wrapper is a site of its own, with the options that call passes."""
        term = site.term
        while term is not None and term[0] == NARROW:  # `if isinstance(m, X): return m` first
            term = term[1]
        if term is None or term[0] != "local":
            return None
        info = summary.defs.get(term[1])
        if info is None or info.wraps is None or info.wraps_param != term[2]:
            return None
        return summary.dotted(info.qualname)

    def _all_resolved(self) -> list:
        if self._resolved is not None:
            return self._resolved
        out = []
        self.decorated_by("")  # decorator applications, answered before any site asks
        for summary in self.summaries:
            for site in summary.sites:
                entries, why = self.resolve_site(site, summary)
                wrapper = self._delegated(site, summary)
                out.append((self._with_target(site, entries), entries, why, ("delegated", wrapper) if wrapper else None))
        # calls of project wrappers that compile or trace their argument (none to look
        # up when no def of the index is one: most files of pass 1, linted alone)
        wrapper_names = self._wrapper_names()
        for summary in self.summaries if wrapper_names else ():
            for callee, target, row, kws, term, col in summary.wrapper_calls:
                if callee.rpartition(".")[2] not in wrapper_names:
                    continue
                found = self.lookup(callee, 0, summary)
                if found is None or found[1].wraps is None:
                    continue
                index, api, (mode, dynamic, cg) = found[1].wraps
                if index != 0:
                    continue
                kind = _kind_of(api)
                kw = dict(kws)
                if isinstance(kw.get("mode"), str):
                    mode = kw["mode"]
                    cg = cg or mode in CUDAGRAPH_MODES
                site = Site(kind, target, summary.path, row, found[1].qualname, mode, dynamic, cg, summary.module, col, None, term)
                entries, why = self.resolve_site(site, summary)
                wrapper = found[0].dotted(found[1].qualname)
                out.append((self._with_target(site, entries), entries, why, ("call", wrapper)))
        # decorators that compile through the project's code: a wrapper (`@compiled`), a
        # factory of one at any depth (`@compile_if(cfg)`), a partial of torch.compile
        for summary in self.summaries:
            for qualname, info in summary.defs.items():
                for term, row, col in info.applied:
                    made = self._decorator_made_site(summary, qualname, info, term, row, col)
                    if made is not None:
                        site, wrapper = made
                        entries, why = self.resolve_site(site, summary)
                        out.append((self._with_target(site, entries), entries, why, ("call", wrapper) if wrapper else None))
        self._resolved = out
        return out

    def _wrapper_names(self) -> set:
        """The last names a call of a project wrapper (a def that compiles or traces its
        first argument) may be spelled with: the wrappers' own names, and the names imports
        bind them to (`from .utils import compile_fn as cf`), to any depth. `lookup` keeps a
        name's last part except through such a binding, so a call spelled otherwise reaches
        no wrapper and is not looked up (46k calls on corpus M, a third of the index)."""
        names = {info.qualname.rpartition(".")[2] for _summary, info in self.defs.values()
                 if info.wraps is not None and info.wraps[0] == 0}
        if not names:
            return names
        renames = {(head, target.rpartition(".")[2]) for summary in self.summaries
                   for head, target in summary.bindings.items() if head != target.rpartition(".")[2]}
        grown = True
        while grown:
            grown = False
            for head, name in renames:
                if name in names and head not in names:
                    names.add(head)
                    grown = True
        return names

    def _decorator_made_site(self, summary, qualname, info, term, row, col) -> Optional[tuple]:
        """(Site, wrapper dotted or None) when the decorator `term` compiles, traces or
        scripts the def it is applied to."""
        for value in sorted(self.resolver.values(term, summary), key=repr):
            api, options, wrapper = None, (None, None, False), None
            if value.kind == "ext" and value.dotted in COMPILE_FUNCS | TRACE_FUNCS | SCRIPT_FUNCS:
                api = value.dotted
            elif value.kind in ("func", "bound"):
                found = self.defs.get(value.dotted)
                if found is not None and found[1].wraps is not None and found[1].wraps[0] == 0:
                    api, options, wrapper = found[1].wraps[1], found[1].wraps[2], value.dotted
            if api is None:
                continue
            dotted = summary.dotted(qualname)
            target = Ref(dotted, instance=info.kind == "class")
            mode, dynamic, cg = options
            kind = _kind_of(api)
            name = found[1].qualname if wrapper else api
            site = Site(kind, target, summary.path, row, name, mode, dynamic, cg and kind == COMPILE, summary.module, col,
                        None, (G, dotted))
            return site, wrapper
        return None

    @staticmethod
    def _with_target(site: Site, entries: list) -> Site:
        """The site with `target` naming what it resolved to (rules read it)."""
        if not entries:
            return site
        dotted, _summary, info = entries[0]
        if info.qualname.endswith((".forward", ".__call__")):
            target = Ref(dotted.rsplit(".", 1)[0], instance=True)
        else:
            target = Ref(dotted)
        return replace(site, target=target) if target != site.target else site

    def declared_sites(self) -> list[Site]:
        """Entry sites of config-declared, marker and recorded regions (origin != "static")."""
        if self.resolved_declared is None:
            from .declared import resolve

            self.resolved_declared = resolve(self, self.declared)
        return [site for site, _code in self.resolved_declared.entries]

    def regions(self) -> dict[str, RegionInfo]:
        """dotted def name -> RegionInfo, for every def in a compiled or traced region."""
        result: dict[str, RegionInfo] = {}
        self._marked_at: dict = {}  # (def, id(site), receiver) -> fewest calls from the site's entry
        self._marked_receivers: set = set()  # (def, id(site), receiver) already followed
        resolved = self._all_resolved()
        covered: dict[str, set] = {}  # wrapper -> entries its calls compile
        for _site, entries, _why, role in resolved:
            if role and role[0] == "call":
                covered.setdefault(role[1], set()).update(e[0] for e in entries)
        # wrapper calls before the wrapper's own `return torch.compile(param)`: a
        # region's first site is the call that decides its options
        ordered = [r for r in resolved if not (r[3] and r[3][0] == "delegated")]
        ordered += [r for r in resolved if r[3] and r[3][0] == "delegated"]
        for site, entries, _why, role in ordered:
            if role and role[0] == "delegated":
                entries = [e for e in entries if e[0] not in covered.get(role[1], ())]
            if site.uncalled:
                continue  # what it compiles runs eagerly
            kinds = {site.kind} | ({CUDAGRAPH} if site.cudagraphs and site.kind == COMPILE else set())
            classes = [t[0].dotted(t[1].qualname) for t in self.site_targets.get(site_key(site), ()) if t[1].kind == "class"]
            inheriting = self._inheriting(classes)
            inputs = self._inputs_given(site, role, resolved)
            for dotted, summary, info in entries:
                binding = self._entry_binding(dotted, info, inputs) if inputs is not None else None
                for receiver in inheriting.get(dotted.rsplit(".", 1)[0]) or (None,):
                    self._mark(result, dotted, summary, info, kinds, site, None, 0, receiver, binding)
        # declared and recorded regions: entry sites like any other, plus the code a
        # recorded run saw Dynamo compile (functions inlined into its graphs)
        self.declared_sites()
        for site, compiled_code in self.resolved_declared.entries:
            kinds = {site.kind} | ({CUDAGRAPH} if site.cudagraphs and site.kind == COMPILE else set())
            entries = self._entry_defs(site.target)
            target = self.lookup(site.target.dotted) if site.target is not None else None
            classes = [target[0].dotted(target[1].qualname)] if target is not None and target[1].kind == "class" else []
            inheriting = self._inheriting(classes)
            for dotted, summary, info in entries:
                for receiver in inheriting.get(dotted.rsplit(".", 1)[0]) or (None,):
                    self._mark(result, dotted, summary, info, kinds, site, None, 0, receiver)
            via = entries[0][2].qualname if entries else None
            for dotted in compiled_code:
                found = self.defs.get(dotted)
                if found is not None and dotted not in result:
                    self._mark(result, dotted, found[0], found[1], kinds, site, via, 1)
        return result

    def _inheriting(self, classes: list) -> dict:
        """class -> the classes among `classes` (a site's compiled classes, in order) that
        inherit from it. An entry method runs with `self` of each compiled class that
        inherits it (`RandomCutMix`, whose forward is its base's), else with None (the
        method's own class: no other is known). One pass over the classes' MROs per
        site: asking each entry of each class (timm's create_model site: ~1,000 by
        ~1,000) cost the serial index 0.1 s on corpus M."""
        out: dict = {}
        for c in classes:
            for base in self._mro_set(c):
                if base != c:
                    out.setdefault(base, []).append(c)
        return out

    def _mro_set(self, cls_dotted: str) -> frozenset:
        """`mro(cls_dotted)` as a set, kept: asked of the same classes by every site that
        compiles them (_inheriting) and by _rebinds_own_method."""
        found = self._mro_sets.get(cls_dotted)
        if found is None:
            found = self._mro_sets[cls_dotted] = frozenset(self.mro(cls_dotted))
        return found

    def _inputs_given(self, site: Site, role, resolved: list) -> Optional[int]:
        """How many positional inputs, and no keyword ones, a trace site gives the code it
        enters (_example_count); for a call of a project wrapper that traces its argument,
        what the wrapper's own trace gives (every one of them, the same count)."""
        if site.kind != TRACED:
            return None
        if not (role and role[0] == "call"):
            return self._example_count(site) if site.example is not None else None
        counts = {self._example_count(inner) if inner.example is not None else None
                  for inner, _entries, _why, inner_role in resolved
                  if inner_role and inner_role[0] == "delegated" and inner_role[1] == role[1]}
        return counts.pop() if len(counts) == 1 else None

    def _example_count(self, site: Site) -> Optional[int]:
        """How many positional inputs a trace gives its code: a tuple's length written out,
        or 1 where the one expression passed holds a tensor a torch function made (every
        value of it: `self.im`, set from `torch.zeros(...).to(device)`); None otherwise (a
        name that may hold a tuple)."""
        if isinstance(site.example, int):
            return site.example
        if self._by_path is None:
            self._by_path = {s.path: s for s in self.summaries}
        summary = self._by_path.get(site.path)
        if summary is None:
            return None
        with self.resolver.reasons_apart():
            values = self.resolver.values(site.example, summary)
        return 1 if values and all(v.kind == "inst" and v.dotted in TENSOR_MAKERS for v in values) else None

    def _entry_binding(self, dotted: str, info: DefInfo, inputs: int) -> Optional[tuple]:
        """What a trace giving `inputs` positional inputs and no keyword inputs binds in the
        def it enters (`forward`, or the function traced), shaped as `_callee_binding` returns."""
        if info.kind != "function" or info.positional < 0:
            return None
        offset = 1 if self._is_method(dotted) else 0
        if offset and info.method_kind == "static":
            return None
        flags = frozenset((i, value[1]) for i, value in info.flag_defaults.items() if i >= offset + inputs)
        extra = max(0, inputs - (info.positional - offset)) if info.varargs else 0
        return (flags, extra, True)

    def _is_method(self, dotted: str) -> bool:
        owner = self.defs.get(dotted.rsplit(".", 1)[0])
        return owner is not None and owner[1].kind == "class"

    def _callee_binding(self, info: DefInfo, binding: tuple, position: int, bound_call: bool,
                        c_dotted: str, c_info: DefInfo) -> Optional[tuple]:
        """What the call at `position` of `info.calls` binds in its callee `c_info`, where
        `info` runs with `binding`: (the callee's boolean-default parameters whose value is
        known, as frozenset((index, bool))), how many values its own `*args` holds, whether
        its `**kwargs` is surely empty). A flag the call leaves out holds its default; one
        it passes as the literal True or False holds that; anything else is not known.
        `*args`/`**kwargs` of the calling def passed on are what `binding` says they hold.
        None where the call's shape is not read: no record of it, a method called unbound
        or static, any other `*`/`**`, more arguments than a record keeps."""
        shapes = info.call_shapes
        shape = shapes[position] if position < len(shapes) else None
        if shape is None or c_info.kind != "function" or c_info.positional < 0:
            return None
        if self._is_method(c_dotted):
            if c_info.method_kind == "static" or not bound_call:
                return None  # (`Base.predict(self, x)`: which argument is `self` is not read here)
            offset = 1
        else:
            offset = 0
        given, star, double_star, literals, named = shape
        _known, extra, kw_empty = binding
        if star == OTHER or double_star == OTHER or double_star == OWN and not kw_empty:
            return None
        count = given + (extra if star == OWN else 0)
        literals, named = dict(literals), dict(named)
        params = c_info.params
        flags = []
        for index, default in c_info.flag_defaults.items():
            at = index - offset
            if at < count:
                value = literals.get(at) if at < given else None
            elif index < len(params) and params[index] in named:
                value = named[params[index]]
            else:
                value = default[1]
            if value is not None:
                flags.append((index, value))
        c_extra = max(0, count - (c_info.positional - offset)) if c_info.varargs else 0
        c_kw_empty = all(name in params for name in named)
        return (frozenset(flags), c_extra, c_kw_empty)

    def _mark(self, result, dotted, summary, info, kinds, site, via, depth, receiver=None, binding=None) -> None:
        """Mark `dotted` as in `site`'s region and follow its calls. `receiver`: the class
        of `self` when it is known to be a subclass of the def's own class (a compiled
        subclass running an inherited forward): methods called on `self` are looked up
        from it, so the subclass's overrides run. `binding`: what the calls from a trace's
        entry bind in this def (_entry_binding, _callee_binding), None where not known: a
        call under a test of a flag whose value it knows, and that the value closes, is
        not followed (ultralytics' `if augment:` in `predict`, which `forward(x, *args,
        **kwargs)` reaches with the trace's one input: bench/fresh_reads batches 4, 15, 41)."""
        if info.disabled or depth > MAX_DEPTH:
            return
        if info.scripted and TRACED in kinds:
            # a scripted def is TorchScript when a trace calls it: its Python is not traced
            # (TOFlow's `@script def half_flow`, reached from an ONNX export: its `int(H/2)`
            # keeps following the size, judged false as CL101 in bench/fresh_reads batch 25)
            kinds = kinds - {TRACED}
            if not kinds:
                return
        # a def first reached far from its entry and then again nearer to it goes on
        # from the nearer one: which defs are marked must not depend on the order the
        # entries come in (MAX_DEPTH counts calls from the entry)
        seen_key = (dotted, id(site), receiver, binding)
        nearer = depth < self._marked_at.get(seen_key, MAX_DEPTH + 1)
        if nearer:
            self._marked_at[seen_key] = depth
        region = result.get(dotted)
        first_with_receiver = seen_key not in self._marked_receivers
        self._marked_receivers.add(seen_key)
        if region is None:
            region = result[dotted] = RegionInfo(via=via)
        elif kinds <= region.kinds and site in region.sites and not nearer and not first_with_receiver:
            return
        new_kinds = kinds - region.kinds
        region.kinds |= kinds
        if site not in region.sites:
            region.sites.append(site)
        elif not new_kinds and not nearer and not first_with_receiver:
            return
        callees: list[Ref] = list(info.calls)
        owner_name = dotted.rsplit(".", 1)[0]
        owner = self.defs.get(owner_name)
        if owner is not None and owner[1].kind == "class" and info.qualname.endswith(".forward"):
            callees += self._forward_submodules(owner[0], owner[1])
            if receiver is not None and receiver in self.defs:
                # an inherited forward runs on the subclass's submodules too
                reads = set(info.self_reads)
                callees += [ref for c in self.mro(receiver) if c != owner_name
                            for attr, ref in self.defs[c][1].attr_submodules if self._read(attr, ref, reads, summary)]
        short = info.qualname
        # the tests' defs exist only while the tests run: the region of a site outside them
        # does not go on into them from the application's code (a test double a test hands
        # the application's exporter: sleap-nn's mock models, bench/dev15, torch-rechub's
        # SimpleModel, bench/dev23), as its targets leave them out (_without_test_doubles)
        outside_tests = not self.is_test_file(site.path) and not self.is_test_file(summary.path)
        closed = ()
        if binding is not None and info.call_guards:
            known = dict(binding[0])
            closed = {position for position, index, truth in info.call_guards
                      if index in known and bool(known[index]) != truth}
        for position, callee in enumerate(callees):
            if position in closed:
                continue  # under `if flag:` (or its `else`) with a flag value that closes it
            next_receiver = None
            bound_call = callee.on_self or callee.instance  # (before `callee` names the receiver's method)
            if callee.on_self and receiver is not None:
                # `self.m()` with `self` a subclass: its `m`, maybe an override
                callee = Ref(f"{receiver}.{callee.dotted.rsplit('.', 1)[1]}")
                next_receiver = receiver
            for c_dotted, c_summary, c_info in self._callee_defs(callee, summary):
                if c_dotted != dotted and not (outside_tests and self.is_test_file(c_summary.path)):
                    c_receiver = next_receiver if next_receiver is not None and c_dotted.rsplit(".", 1)[0] != receiver else None
                    c_binding = self._callee_binding(info, binding, position, bound_call, c_dotted, c_info) \
                        if binding is not None and position < len(info.calls) else None
                    self._mark(result, c_dotted, c_summary, c_info, kinds, site, short, depth + 1, c_receiver, c_binding)

    def _forward_submodules(self, summary: ModuleSummary, cls: DefInfo) -> list[Ref]:
        """The submodules a class's forward can run: those stored on an attribute that
        forward, or a method of the class it calls, reads; and instances of classes it
        builds without storing them on `self` (a local list wrapped later). Factory
        functions called for another purpose (`named_apply(get_init_weights(mode),
        self)` in `__init__`) run no forward."""
        key = ("forward-submodules", id(summary), cls.qualname)
        found = self._callees.get(key)
        if found is not None:
            return found
        reads: set = set()
        todo, seen = [f"{cls.qualname}.forward"], set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            method = summary.defs.get(name)
            if method is None:
                continue
            reads.update(method.self_reads)
            prefix = summary.dotted(cls.qualname) + "."
            for ref in method.calls:
                if ref.dotted.startswith(prefix):
                    todo.append(f"{cls.qualname}.{ref.dotted[len(prefix):]}")
        out = [ref for attr, ref in cls.attr_submodules if self._read(attr, ref, reads, summary)]
        for ref in cls.submodules:
            target = self.lookup(ref.dotted, 0, summary)
            if target is not None and target[1].kind == "class":
                out.append(ref)
        self._callees[key] = out
        return out

    def _attr_entries(self, summary: ModuleSummary, cls_dotted: str, attr: str) -> Optional[list]:
        """The defs that run when `self.<attr>` of `cls_dotted` (a class of `summary`) is
        called: the value model's answer for the attribute, with the arguments of the
        calls that made what it holds; None when that answer has a part it cannot see.
        Asked only where the attribute holds what a pass-through helper returns
        (`_passes_through`): for a factory that builds what its arguments name (timm's
        `create_attn(attn_layer, ...)`, whose layer names come from model configurations
        through `**kwargs` the value model does not follow), every instance it returns to
        any caller may run, as before (corpus M: BatNonLocalAttn's CL303, judged true)."""
        key = ("attr-entries", cls_dotted, attr)
        if key not in self._callees:
            with self.resolver.reasons_apart():
                values = self.resolver.values((ATTR, (SELF, cls_dotted), attr), summary)
            self._callees[key] = None if any(v.kind == UNKNOWN for v in values) else [
                e for v in sorted(values, key=repr) for e in self._value_entries(v, 0)]
        return self._callees[key]

    def _read(self, attr: str, ref: Ref, reads: set, summary: ModuleSummary) -> bool:
        """Whether methods that read `reads` may run the submodule `ref` stored on `attr`:
        they read it, or any attribute (`getattr(self, name)`), or call any attribute with
        as many positional arguments as its class's forward takes (`getattr(self, name)()`
        runs methods, not a module whose forward needs an input)."""
        if attr in reads or ANY_ATTR in reads:
            return True
        counts = [int(r[len(ANY_ATTR):]) for r in reads if r[:len(ANY_ATTR)] == ANY_ATTR and r[len(ANY_ATTR):].isdigit()]
        if not counts:
            return False
        forward = self.lookup(f"{ref.dotted}.forward", 0, summary)
        if forward is None or forward[1].kind != "function" or forward[1].positional < 0:
            return True  # (a forward the index does not see may take anything)
        info = forward[1]
        if info.varargs:
            return True
        most = info.positional - 1  # (self)
        return any(most - info.positional_defaults <= n <= most for n in counts)

    def _callee_defs(self, ref: Ref, summary: Optional[ModuleSummary] = None):
        key = (ref, id(summary))  # (every summary lives as long as the index: ids are not reused)
        found = self._callees.get(key)
        if found is None:
            found = self._callees[key] = self._callee_defs_uncached(ref, summary)
        return found

    def _callee_defs_uncached(self, ref: Ref, summary: Optional[ModuleSummary]):
        found = self.lookup(ref.dotted, 0, summary)
        if found is None:
            return self._stored_callee_defs(ref) if ref.on_self else []
        c_summary, info = found
        if info.kind == "class":
            # calling an instance runs forward; calling the class only builds one
            return self._entry_defs(Ref(c_summary.dotted(info.qualname), True)) if ref.instance else []
        if ref.instance and info.kind == "function":
            if isinstance(ref, StoredRef) and ref.stored_on and _passes_through(c_summary, info):
                # `self.w_block(x)` where `self.w_block = init_net(nn.Sequential(...))`:
                # what that call returns, not what the function returns for every caller
                cls_dotted, _, attr = ref.stored_on.rpartition(".")
                owner = self.lookup(cls_dotted)
                entries = self._attr_entries(owner[0], cls_dotted, attr) if owner is not None else None
                if entries is not None:
                    return entries
            return self._entry_defs(Ref(c_summary.dotted(info.qualname), True, applied=ref.applied))
        return [(c_summary.dotted(info.qualname), c_summary, info)]


def _passes_through(summary: ModuleSummary, info: DefInfo) -> bool:
    """Whether every `return` of the function gives back one of its parameters as it
    came (`def init_net(net, ...): ...; return net`): what it returns is what each call
    passes, so the calls' own arguments say what runs, not every caller's."""
    terms = summary.returns.get(info.qualname) or ()
    if not terms:
        return False
    for term in terms:
        if not (term and term[0] == LOCAL and term[1] == info.qualname):
            return False
        bindings = summary.scopes.get(info.qualname, {}).get(term[2]) or ()
        if not bindings or any(entry[2][0] != PARAM for entry in bindings):
            return False
    return True


def _c3_merge(sequences: list) -> Optional[list]:
    """The C3 merge of linearizations (Python's MRO), or None where they admit no order."""
    out: list = []
    sequences = [seq for seq in sequences if seq]
    while sequences:
        for seq in sequences:
            head = seq[0]
            if not any(head in other[1:] for other in sequences):
                break
        else:
            return None
        out.append(head)
        sequences = [[c for c in seq if c != head] for seq in sequences]
        sequences = [seq for seq in sequences if seq]
    return out


_TARGET_READ_TYPES = frozenset({ast.Subscript, ast.Attribute, ast.Call})  # what _target_read may answer for


def _target_read(expr) -> Optional[str]:
    """The name `x` of `x["target"]`, `x.target`, `x.get("target")` (or `_target_`), else None."""
    if isinstance(expr, ast.Subscript):
        key = expr.slice
        if isinstance(key, ast.Constant) and key.value in TARGET_KEYS and isinstance(expr.value, ast.Name):
            return expr.value.id
    elif isinstance(expr, ast.Attribute):
        if expr.attr in TARGET_KEYS and isinstance(expr.value, ast.Name):
            return expr.value.id
    elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "get" \
            and expr.args and isinstance(expr.args[0], ast.Constant) and expr.args[0].value in TARGET_KEYS \
            and isinstance(expr.func.value, ast.Name):
        return expr.func.value.id
    return None


def _substituted(value, passed: dict):
    """A method setter's value term (a parameter, or a tuple of parameters and
    constants: `_method_setter`) with each parameter replaced by what a call passes."""
    if value[0] == SEQ:
        return (SEQ, tuple(passed[e[2]] if e[0] == LOCAL else e for e in map(unnarrowed, value[1])), value[2])
    return passed[unnarrowed(value)[2]]
