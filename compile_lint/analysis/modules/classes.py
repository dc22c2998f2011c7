"""Facts about classes and the instances a file builds, for rules about captured state.

- which classes are `nn.Module`s, and which calls build a module;
- the Python-valued attributes (`int`, `float`, `bool`, `str`, `list`, ...) a class
  sets in `__init__`, where they are written after `__init__`, and where they are read;
- which local names hold an instance of which class, and which compile/trace calls
  wrap such an instance (`traced = torch.jit.trace(model, x)`), so that a later
  `model.alpha = 0.3` can be tied to it;
- the region of a class (its `forward`), also for classes defined in another file.

Everything here is per file and built on `ModuleFacts` (resolved names, regions).
"""
from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional

from ..semantic.facts import ModuleFacts
from ..semantic.signatures import first_parameter
from ..reach.regions import COMPILE_FUNCS, RETURNS_SELF, TRACE_FUNCS, TRACED, RegionInfo, Site
from ..semantic.walk import walk as _walk
from ..semantic.walk import walk_scope as _walk_scope

FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# torch.nn names that are capitalized but are not modules
NOT_MODULES = frozenset(
    {"Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer", "ParameterList", "ParameterDict"}
)
# third-party namespaces whose CapWords callables are transforms, not layers with state
CALLABLE_NAMESPACES = (
    "torchvision.transforms.", "torchaudio.transforms.", "albumentations.", "kornia.augmentation.",
    "monai.transforms.", "PIL.", "cv2.",
)
# methods that (re)build an object rather than change a live one
INIT_LIKE = frozenset({"__init__", "__setstate__", "__post_init__"})
CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.Sequential"})
LIST_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear", "update", "setdefault", "popitem"})
_ANNOTATION_KINDS = {
    "builtins.int": "int", "builtins.float": "float", "builtins.bool": "bool", "builtins.str": "str",
    "builtins.list": "list", "builtins.tuple": "tuple", "builtins.dict": "dict",
    "typing.List": "list", "typing.Tuple": "tuple", "typing.Dict": "dict", "typing.Sequence": "list",
}
_CALL_KINDS = {
    "builtins.int": "int", "builtins.len": "int", "builtins.float": "float", "builtins.bool": "bool",
    "builtins.str": "str", "builtins.list": "list", "builtins.sorted": "list", "builtins.tuple": "tuple",
    "builtins.dict": "dict", "builtins.round": "int",
}


# -- classes -------------------------------------------------------------------------
def methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in cls.body if isinstance(n, FUNCTION_DEFS)}


def self_name(func: ast.AST) -> Optional[str]:
    """The name of a method's instance parameter (`self`), None for static methods."""
    if not isinstance(func, FUNCTION_DEFS):
        return None
    for deco in func.decorator_list:
        if isinstance(deco, ast.Name) and deco.id in ("staticmethod", "classmethod"):
            return None
    return first_parameter(func.args)


_CLASSES: "weakref.WeakKeyDictionary[ModuleFacts, dict[str, ast.ClassDef]]" = weakref.WeakKeyDictionary()


def self_calls(facts: ModuleFacts, method: ast.AST) -> list[tuple[ast.Call, ast.AST]]:
    """(call, the method it is in) for every `self.<method>(...)` in the method's class;
    [] when the name is used any other way there (passed on, stored), when the class has
    no such call, or when `method` is not a plain method. Calls from other classes and
    modules (a subclass, a caller holding the instance) are not seen: callers use this
    only to learn that every call sits on a branch (training-only, eager-only)."""
    cls = facts.parent(method)
    if not isinstance(cls, ast.ClassDef) or not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    if method.decorator_list:
        return []  # a property, a staticmethod, a decorated wrapper: called in ways not read here
    calls = []
    for node, other in _self_attributes(facts, cls).get(method.name, ()):
        if other is method:
            continue
        parent = facts.parent(node)
        if not (isinstance(parent, ast.Call) and parent.func is node):
            return []  # `self.random_masking` handed on: called where this does not see
        if facts.enclosing_function(parent) is not other:
            return []  # inside a nested def or lambda: its calls are not read here
        calls.append((parent, other))
    return calls


_SELF_ATTRIBUTES: "weakref.WeakKeyDictionary[ModuleFacts, dict[int, dict]]" = weakref.WeakKeyDictionary()


def _self_attributes(facts: ModuleFacts, cls: ast.ClassDef) -> dict[str, list[tuple[ast.Attribute, ast.AST]]]:
    """{attribute: [(`self.<attribute>` node, the method of `cls` it is in)]}, for every
    method's own first parameter, in the order of the class body and each method's walk;
    one walk per class (self_calls is asked of every method a rule reads a branch of)."""
    per_class = _SELF_ATTRIBUTES.get(facts)
    if per_class is None:
        per_class = _SELF_ATTRIBUTES[facts] = {}
    table = per_class.get(id(cls))
    if table is None:
        table = per_class[id(cls)] = {}
        for other in cls.body:
            if not isinstance(other, (ast.FunctionDef, ast.AsyncFunctionDef)) or not other.args.args:
                continue
            me = other.args.args[0].arg
            for node in ast.walk(other):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me:
                    table.setdefault(node.attr, []).append((node, other))
    return table


def local_class(facts: ModuleFacts, dotted: Optional[str]) -> Optional[ast.ClassDef]:
    """The module-level ClassDef of this file that a resolved dotted name stands for."""
    if not dotted:
        return None
    table = _CLASSES.get(facts)
    if table is None:
        table = _CLASSES[facts] = {}
        for node in facts.tree.body:
            if isinstance(node, ast.ClassDef):
                table[facts._dotted(node.name)] = node
    return table.get(dotted)


def is_torch_module_name(dotted: Optional[str]) -> bool:
    if not dotted or not dotted.startswith("torch.nn."):
        return False
    head, _, last = dotted.rpartition(".")
    if head not in ("torch.nn",) and not head.startswith("torch.nn.modules"):
        return False
    return last[:1].isupper() and last not in NOT_MODULES


# Packages whose model base classes derive from torch.nn.Module (`pl.LightningModule`,
# `diffusers.ModelMixin`, `transformers.PreTrainedModel`, ...): a class of another
# package that is not one of these is not taken for a torch module, however it looks
# (`megengine.module.Module` defines `forward` and holds layers too: issue 19)
TORCH_MODEL_PACKAGES = (
    "lightning.", "pytorch_lightning.", "diffusers.", "transformers.", "timm.", "torchvision.", "torchaudio.",
    "kornia.", "mmengine.", "mmcv.", "mmdet.", "mmseg.", "mmagic.", "basicsr.", "spandrel.", "monai.",
    "detectron2.", "fairseq.", "torchmetrics.", "peft.", "accelerate.", "segmentation_models_pytorch.",
    "ultralytics.", "lpips.", "einops.layers.torch.", "open_clip.", "clip.", "xformers.", "torch_geometric.",
)


# What those packages define beside their models, and that is no module: datasets and data
# modules, callbacks, schedulers, pipelines, configurations, tokenizers, trainers
# (LCT's `LSUN(VisionDataset)` keeps its datasets in a plain list: a CL201 judged false in
# bench/fresh_reads batch 55; 418 classes of the benchmarks' apps and corpus M derive from
# such a base (`scripts/measure/non_module_bases.py`), and no other judged finding of a module
# rule sat in one)
NON_MODULE_PARTS = (
    "torchvision.datasets.", "torchaudio.datasets.", "timm.data.", "detectron2.data.", "mmengine.dataset.",
    "monai.data.", "torch_geometric.data.", "diffusers.schedulers.", "diffusers.pipelines.",
    "transformers.pipelines.", "lightning.pytorch.callbacks.", "pytorch_lightning.callbacks.",
    "ultralytics.data.", "ultralytics.engine.",
)
NON_MODULE_SUFFIXES = ("Dataset", "DataModule", "Callback", "Scheduler", "Pipeline", "Config", "Tokenizer",
                       "TokenizerFast", "Trainer", "DataLoader", "FeatureExtractor")


def is_non_module_class_of_torch_package(dotted: str) -> bool:
    """A class of a package known to build on torch that is none of its modules."""
    return dotted.startswith(NON_MODULE_PARTS) or dotted.rpartition(".")[2].endswith(NON_MODULE_SUFFIXES)


def is_module_class(facts: ModuleFacts, cls: ast.ClassDef, _depth: int = 0) -> bool:
    """An `nn.Module` subclass: its bases reach torch.nn's through classes of this
    file, or of a package known to build on torch (TORCH_MODEL_PACKAGES), or it defines
    `forward` on a base of another project file that does not show it is no module (the
    base's file is read only then: a pix2pix-style `CUTModel(BaseModel)` whose
    `BaseModel(ABC)` defines no torch module, joliGAN in bench/fresh_reads; reading it for
    every class cost corpus M ~0.5 CPU s). A base of another package that is none of
    these (another framework's `Module`) makes no torch module."""
    if "forward" not in methods(cls):
        return _module_state(facts, cls, _depth, read=False) is True
    return _module_state(facts, cls, _depth, read=True) is not False


def _module_state(facts: ModuleFacts, cls: ast.ClassDef, depth: int, read: bool) -> Optional[bool]:
    """True when a base of `cls` reaches torch's `nn.Module`, False when none can, None
    when a base is not found (or, without `read`, is in another project file)."""
    if depth > 8:
        return None
    unknown = False
    for base in cls.bases:
        dotted = facts.resolve(base)
        if is_torch_module_name(dotted):
            return True
        local = local_class(facts, dotted)
        if local is not None:
            if local is cls:
                continue
            state = _base_state(facts, local, depth + 1, read)
        elif dotted and not dotted.startswith(("torch.", "builtins.", "typing.", "abc.", "enum.")):
            state = _other_module_class(facts, dotted, depth + 1, read)
        else:
            continue
        if state:
            return True
        unknown = unknown or state is None
    return None if unknown else False


def _base_state(facts: ModuleFacts, cls: ast.ClassDef, depth: int, read: bool) -> Optional[bool]:
    """`_module_state` of a class as another class's base: one whose own bases are not all
    found counts as a module when it defines `forward`."""
    state = _module_state(facts, cls, depth, read)
    return True if state is None and "forward" in methods(cls) else state


def _is_own_module(facts: ModuleFacts, dotted: str) -> bool:
    """`dotted` names code of this file's own package: a relative import binds it, or it
    starts with the file's top package."""
    module = facts.names.module
    if "." in module and dotted.split(".", 1)[0] == module.split(".", 1)[0]:
        return True
    for node in facts.nodes(ast.ImportFrom):
        if node.level:
            base = facts.names.absolute_from(node)
            if dotted == base or dotted.startswith(base + "."):
                return True
    return False


def _other_module_class(facts: ModuleFacts, dotted: str, depth: int, read: bool) -> Optional[bool]:
    """Whether the class `dotted` of another file or package is a torch module: True
    for a package known to build on torch; for a class of another file of the project,
    what its own bases say (the file is read: pix2pix-style `CUTModel(BaseModel)` defines
    `forward` on a `BaseModel(ABC)` that is no module: joliGAN, bench/fresh_reads batch
    14), None when the file or the class in it is not found; False for another package
    (another framework's `Module`)."""
    if depth > 8:
        return None
    if dotted.startswith(TORCH_MODEL_PACKAGES):
        return not is_non_module_class_of_torch_package(dotted)
    from ..project.context import path_for_module

    module, _, name = dotted.rpartition(".")
    path = path_for_module(facts, module) if module else None
    if path is not None:
        if not read:
            return None
        other = facts.project.facts_for_path(facts, path) if facts.project is not None else None
        if other is None:
            return None
        found = next((n for n in other.tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
        if found is not None:
            return _base_state(other, found, depth, read)
        # a package's `__init__` that imports the class from where it is defined
        again = other.names.resolve_name(name)
        if again and again != dotted and "." in again:
            return _other_module_class(other, again, depth + 1, read)
        return None
    if _is_own_module(facts, dotted):
        return None
    return False


def read_construction(facts: ModuleFacts, expr: ast.AST) -> Optional[bool]:
    """For a call building a class of another file of the project (`MaskCollator(...)`,
    which `module_construction` cannot see), what that class's file shows: True a torch
    module, False none (`class MaskCollator(object)`), None not found. The file is read,
    so ask it only of the few calls a verdict hangs on."""
    expr = strip_returns_self(expr)
    if not isinstance(expr, ast.Call):
        return None
    dotted = facts.resolve(expr.func)
    if not dotted or "." not in dotted or local_class(facts, dotted) is not None:
        return None
    from ..project.context import path_for_module

    if path_for_module(facts, dotted.rpartition(".")[0]) is None:
        return None  # another package's class: `_other_module_class` says False of any it does not know
    return _other_module_class(facts, dotted, 0, read=True)


def strip_returns_self(expr: ast.AST) -> ast.AST:
    """`Block(c).to(dev).eval()` -> `Block(c)`."""
    while (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in RETURNS_SELF
        and isinstance(expr.func.value, ast.Call)
    ):
        expr = expr.func.value
    return expr


def module_construction(facts: ModuleFacts, expr: ast.AST) -> Optional[bool]:
    """Whether `expr` builds an nn.Module: True (known), None (a call to a class we
    cannot see, e.g. an imported project class), False (known not to)."""
    expr = strip_returns_self(expr)
    if not isinstance(expr, ast.Call):
        return False
    dotted = facts.resolve(expr.func)
    if dotted in ("copy.deepcopy", "copy.copy") and expr.args:
        return module_construction(facts, expr.args[0])
    if is_torch_module_name(dotted):
        return True
    if dotted is None:
        return None if isinstance(expr.func, ast.Attribute) and expr.func.attr[:1].isupper() else False
    if dotted.startswith(("builtins.", "torch.", "numpy.", "math.", "functools.", "collections.", "typing.")):
        return False
    local = local_class(facts, dotted)
    if local is not None:
        return is_module_class(facts, local)
    if dotted.startswith(CALLABLE_NAMESPACES):
        return False  # transforms and the like: callables without parameters to register
    last = dotted.rsplit(".", 1)[-1]
    return None if last[:1].isupper() and not last.isupper() else False


# -- Python-valued attributes ------------------------------------------------------------
def _param_kinds(facts: ModuleFacts, func: ast.AST) -> dict[str, str]:
    out: dict[str, str] = {}
    if not isinstance(func, FUNCTION_DEFS):
        return out
    args = func.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
    for arg, default in pairs:
        kind = None
        if arg.annotation is not None:
            ann = arg.annotation.value if isinstance(arg.annotation, ast.Subscript) else arg.annotation
            kind = _ANNOTATION_KINDS.get(facts.resolve(ann) or "")
            if kind is None and isinstance(ann, ast.Name) and ann.id in ("List", "Tuple", "Dict", "Sequence"):
                kind = {"List": "list", "Tuple": "tuple", "Dict": "dict", "Sequence": "list"}[ann.id]
        if kind is None and default is not None:
            kind = python_kind(facts, default, {})
        if kind is not None:
            out[arg.arg] = kind
    return out


def python_kind(facts: ModuleFacts, expr: Optional[ast.AST], names: dict[str, str]) -> Optional[str]:
    """The Python type of a value, when the code says it plainly: a literal, a
    display, `len(...)`/`int(...)`/`list(...)`, arithmetic on those, or a name of
    known kind (`names`). None when unknown (a tensor, a module, a call)."""
    if expr is None:
        return None
    if isinstance(expr, ast.Constant):
        value = expr.value
        if isinstance(value, bool):
            return "bool"
        if isinstance(value, int):
            return "int"
        if isinstance(value, float):
            return "float"
        if isinstance(value, str):
            return "str"
        return None
    if isinstance(expr, (ast.List, ast.ListComp)):
        return "list"
    if isinstance(expr, ast.Tuple):
        return "tuple"
    if isinstance(expr, (ast.Dict, ast.DictComp)):
        return "dict"
    if isinstance(expr, ast.JoinedStr):
        return "str"
    if isinstance(expr, ast.Name):
        return names.get(expr.id)
    if isinstance(expr, ast.UnaryOp):
        if isinstance(expr.op, ast.Not):
            return "bool"
        kind = python_kind(facts, expr.operand, names)
        return kind if kind in ("int", "float") else None
    if isinstance(expr, ast.Compare):
        if all(python_kind(facts, e, names) in ("int", "float", "str", "bool") for e in [expr.left, *expr.comparators]):
            return "bool"
        return None
    if isinstance(expr, ast.BinOp):
        left, right = python_kind(facts, expr.left, names), python_kind(facts, expr.right, names)
        if left in ("int", "float", "bool") and right in ("int", "float", "bool"):
            if isinstance(expr.op, ast.Div) or "float" in (left, right):
                return "float"
            return "int"
        if left == right and left in ("list", "tuple", "str") and isinstance(expr.op, ast.Add):
            return left
        return None
    if isinstance(expr, ast.IfExp):
        a, b = python_kind(facts, expr.body, names), python_kind(facts, expr.orelse, names)
        return a if a == b else None
    if isinstance(expr, ast.Call):
        return _CALL_KINDS.get(facts.resolve(expr.func) or "")
    return None


def init_time_methods(cls: ast.ClassDef) -> set[str]:
    """`__init__` and the methods only `__init__` (or another of these) calls."""
    meths = methods(cls)
    callers: dict[str, set[str]] = {name: set() for name in meths}
    for name, func in meths.items():
        me = self_name(func)
        for node in _walk(func):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == me
                and node.func.attr in callers
            ):
                callers[node.func.attr].add(name)
    init = {name for name in INIT_LIKE if name in meths}
    changed = True
    while changed:
        changed = False
        for name, by in callers.items():
            if name not in init and by and by <= init:
                init.add(name)
                changed = True
    return init


def self_attr(node: ast.AST, me: Optional[str]) -> Optional[str]:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me and me:
        return node.attr
    return None


def init_attr_kinds(facts: ModuleFacts, cls: ast.ClassDef) -> dict[str, tuple[str, ast.AST]]:
    """attr -> (kind, the `__init__` assignment) for attributes `__init__` sets to a
    plain Python value (see `python_kind`), including from a typed or defaulted
    parameter (`def __init__(self, scale: float = 1.0): self.scale = scale`)."""
    meths = methods(cls)
    out: dict[str, tuple[str, ast.AST]] = {}
    conflicts: set[str] = set()
    for name in sorted(init_time_methods(cls)):
        func = meths[name]
        me = self_name(func)
        params = _param_kinds(facts, func)
        for node in _walk_scope(func.body):
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            for target in targets:
                attr = self_attr(target, me)
                if attr is None:
                    continue
                kind = python_kind(facts, value, params)
                old = out.get(attr)
                if kind is None or (old is not None and old[0] != kind):
                    conflicts.add(attr)
                elif old is None:
                    out[attr] = (kind, node)
    for attr in conflicts:
        out.pop(attr, None)
    return out


@dataclass(frozen=True)
class AttrWrite:
    attr: str
    node: ast.AST  # the statement or call that writes
    where: str  # "Cls.set_order", "model.order = ... (line 30)"
    how: str  # "assigned", "changed with +=", "mutated with .reverse()"


def _writes_in(node: ast.AST, me: str) -> Iterator[tuple[str, ast.AST, str]]:
    """(attr, node, how) for writes to `me.attr` in one statement or expression."""
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        stack = list(targets)
        while stack:
            target = stack.pop()
            if isinstance(target, (ast.Tuple, ast.List)):
                stack.extend(target.elts)
                continue
            attr = self_attr(target, me)
            if attr is not None:
                how = "changed with an augmented assignment" if isinstance(node, ast.AugAssign) else "assigned"
                yield attr, node, how
            elif isinstance(target, ast.Subscript):
                attr = self_attr(target.value, me)
                if attr is not None:
                    yield attr, node, "changed by item assignment"
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        attr = self_attr(node.func.value, me)
        if attr is not None and node.func.attr in LIST_MUTATORS:
            yield attr, node, f"mutated with `.{node.func.attr}()`"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
        if len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == me:
            key = node.args[1]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                yield key.value, node, "assigned with setattr"


def method_attr_writes(facts: ModuleFacts, cls: ast.ClassDef) -> dict[str, list[AttrWrite]]:
    """attr -> writes of `self.attr` in the class's methods other than `__init__`
    (and the helpers only `__init__` calls)."""
    out: dict[str, list[AttrWrite]] = {}
    init = init_time_methods(cls)
    for name, func in methods(cls).items():
        if name in init:
            continue
        me = self_name(func)
        if me is None:
            continue
        for node in _walk_scope(func.body):
            for attr, where, how in _writes_in(node, me):
                out.setdefault(attr, []).append(AttrWrite(attr, where, f"{cls.name}.{name}", how))
    return out


def self_reads(func: ast.AST) -> Iterator[tuple[str, ast.Attribute]]:
    """(attr, node) for every read of `self.attr` in a method (nested defs included:
    a closure in forward reads the same attribute)."""
    me = self_name(func)
    if me is None:
        return
    for node in _walk(func):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            attr = self_attr(node, me)
            if attr is not None:
                yield attr, node


def is_write_target(facts: ModuleFacts, node: ast.Attribute) -> bool:
    """`self.x` in `self.x += 1` or `self.x.append(...)`: a read that only serves a write."""
    parent = facts.parent(node)
    if isinstance(parent, ast.AugAssign) and parent.target is node:
        return True
    if isinstance(parent, ast.Attribute) and isinstance(facts.parent(parent), ast.Call):
        call = facts.parent(parent)
        return call.func is parent and parent.attr in LIST_MUTATORS
    if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store):
        return True
    return False


# -- regions of classes -----------------------------------------------------------------
def region_of_dotted(facts: ModuleFacts, dotted: str, kind: str) -> Optional[RegionInfo]:
    """The region of a def by its dotted name, wherever it is defined."""
    region = facts.region_of_def(dotted)
    return region if region is not None and kind in region.kinds else None


def class_region(facts: ModuleFacts, cls_dotted: str, kind: str) -> Optional[RegionInfo]:
    """The region a module class's `forward` (or `__call__`) is in."""
    for method in ("forward", "__call__"):
        region = region_of_dotted(facts, f"{cls_dotted}.{method}", kind)
        if region is not None:
            return region
    return None


def local_class_region(facts: ModuleFacts, cls: ast.ClassDef, kind: str) -> Optional[RegionInfo]:
    """The region of `kind` that any method of a class defined in this file is in."""
    for method in methods(cls).values():
        region = facts.in_region(method, kind)
        if region is not None:
            return region
    return None


def site_of_kind(region: RegionInfo, kind: str):
    wanted = "compiled" if kind == "cudagraph" else kind
    for site in region.sites:
        if site.kind == wanted and (kind != "cudagraph" or site.cudagraphs):
            return site
    return region.sites[0] if region.sites else None


def every_trace(region: RegionInfo, test: Callable[[Site], bool]) -> bool:
    """The region is reached by at least one trace or export, and `test(site)` holds for
    each of them (CL101: all static exports; CL102: all ONNX exports to a file)."""
    traces = [site for site in region.sites if site.kind == TRACED]
    return bool(traces) and all(test(site) for site in traces)


def describe(region: RegionInfo, kind: str) -> str:
    """How a region of `kind` was reached: the site of that kind (RegionInfo.describe
    names the first site, which may be of another kind), then the calling code."""
    site = site_of_kind(region, kind)
    text = site.describe() if site is not None else kind
    return f"{text} (reached from {region.via})" if region.via else text


def labelled(region: RegionInfo, kind: str) -> RegionInfo:
    """A copy of `region` that Rule.finding labels with `kind`."""
    return RegionInfo(kinds={kind}, sites=list(region.sites), via=region.via)


# -- instances in a scope -----------------------------------------------------------------
# the last names of the compile and trace functions: an attribute resolves to its base's
# dotted name and its own, so a call of `x.forward` is none of them (scopes skips it:
# resolving every call was most of CL102's CPU)
COMPILE_LAST = frozenset(dotted.rpartition(".")[2] for dotted in COMPILE_FUNCS)
TRACE_LAST = frozenset(dotted.rpartition(".")[2] for dotted in TRACE_FUNCS)


def scopes(facts: ModuleFacts, kind: Optional[str] = None) -> Iterator[tuple[ast.AST, list[ast.stmt]]]:
    """(owner, body) for the module and every function; with `kind` ("compiled" or
    "traced"), only those that hold a call that compiles or traces."""
    if kind is None:
        yield facts.tree, facts.tree.body
        for func in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            yield func, func.body
        return
    funcs, lasts = (COMPILE_FUNCS, COMPILE_LAST) if kind == "compiled" else (TRACE_FUNCS, TRACE_LAST)
    owners: dict[int, ast.AST] = {}
    for call in facts.primary(ast.Call):
        func = call.func
        if func.__class__ is ast.Attribute and func.attr not in lasts:  # ("compile" is in COMPILE_LAST)
            continue
        if (kind == "compiled" and isinstance(func, ast.Attribute) and func.attr == "compile") or facts.resolve(func) in funcs:
            owner = facts.enclosing_function(call)
            if isinstance(owner, ast.Lambda):
                continue
            owner = owner or facts.tree
            owners.setdefault(id(owner), owner)
    for owner in owners.values():
        yield owner, owner.body


def instance_class(facts: ModuleFacts, expr: ast.AST, known: dict[str, str]) -> Optional[str]:
    """The project class `expr` builds (`Net()`, `Net().eval()`, `torch.compile(Net())`)
    or holds (a name in `known`)."""
    expr = strip_returns_self(expr)
    if isinstance(expr, ast.Name):
        return known.get(expr.id)
    if isinstance(expr, ast.Call):
        dotted = facts.resolve(expr.func)
        if dotted in COMPILE_FUNCS and expr.args:
            return instance_class(facts, expr.args[0], known)
        if dotted and not dotted.startswith(("builtins.", "torch.", "numpy.", "functools.", "copy.")):
            last = dotted.rsplit(".", 1)[-1]
            if last[:1].isupper():
                return dotted
    return None


@dataclass
class Wrap:
    """A compile or trace call that takes an instance held by a name."""

    call: ast.Call
    kind: str  # "compiled" | "traced"
    instance: str  # the name holding the eager module
    result: str  # the name of the compiled/traced callable (== instance for in-place compile)
    cls: str  # dotted class of the instance


def wraps_in(facts: ModuleFacts, body: list[ast.stmt]) -> tuple[list[Wrap], dict[str, str]]:
    """Compile/trace calls of named instances in one scope, and the instance types."""
    known: dict[str, str] = {}
    found: list[Wrap] = []
    for node in _walk_scope(body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            value = node.value
            call = strip_returns_self(value)
            dotted = facts.resolve(call.func) if isinstance(call, ast.Call) else None
            if isinstance(call, ast.Call) and (dotted in COMPILE_FUNCS or dotted in TRACE_FUNCS) and call.args:
                kind = "compiled" if dotted in COMPILE_FUNCS else "traced"
                arg = call.args[0]
                cls = instance_class(facts, arg, known)
                if cls is not None:
                    holder = arg.id if isinstance(arg, ast.Name) else name
                    if kind == "compiled":
                        known[name] = cls  # setattr on an OptimizedModule reaches the module
                    found.append(Wrap(call, kind, holder, name, cls))
                continue
            cls = instance_class(facts, value, known)
            if cls is not None:
                known[name] = cls
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            if (
                isinstance(call.func, ast.Attribute)
                and call.func.attr == "compile"
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id in known
            ):
                name = call.func.value.id
                found.append(Wrap(call, "compiled", name, name, known[name]))
    return found, known


def instance_writes(body: list[ast.stmt], names: Iterable[str]) -> Iterator[tuple[str, str, ast.AST, str]]:
    """(name, attr, node, how) for writes `name.attr = ...` in one scope."""
    wanted = set(names)
    for node in _walk_scope(body):
        for name in wanted:
            for attr, where, how in _writes_in(node, name):
                yield name, attr, where, how


def calls_of_name(body: list[ast.stmt], name: str) -> list[ast.Call]:
    return [
        node
        for node in _walk_scope(body)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
    ]


def enclosing_loops(facts: ModuleFacts, node: ast.AST) -> list[ast.AST]:
    """The for/while loops around `node` whose body holds it, up to its function."""
    loops = []
    child = node
    for anc in facts.ancestors(node):
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            break
        if isinstance(anc, (ast.For, ast.AsyncFor, ast.While)) and child in anc.body:
            loops.append(anc)
        child = anc
    return loops


def loop_value_kind(facts: ModuleFacts, name: str, node: ast.AST) -> Optional[str]:
    """Kind of a loop variable `name` at `node`: `for n in (4, 8, 16)` -> "int",
    `for n in range(...)` -> "int"."""
    for loop in enclosing_loops(facts, node):
        if isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.target, ast.Name) and loop.target.id == name:
            it = loop.iter
            if isinstance(it, ast.Call) and facts.resolve(it.func) == "builtins.range":
                return "int"
            if isinstance(it, (ast.Tuple, ast.List, ast.Set)) and it.elts:
                kinds = {python_kind(facts, e, {}) for e in it.elts}
                if len(kinds) == 1:
                    return kinds.pop()
    return None
