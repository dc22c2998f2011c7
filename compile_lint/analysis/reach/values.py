"""One value model: which classes, instances and functions an expression can hold.

Two halves, like the region index:

1. Per file (`TermBuilder`, run by `regions.summarize` over the scopes it already
   walks): every binding of a name (assignment, `for` target, parameter with its
   annotation, nested def), every `return`, every `self.x = ...` and every store into
   a container (`REGISTRY[name] = Cls`, `self.blocks.append(Block())`) is kept as a
   *term*: a small picklable tuple describing the expression, e.g.
   `("call", ("g", "pkg.models.build_model"), (("local", "", "cfg", 12),), ())`.
   Names are bound to the scope and position that define them, so a use sees the
   bindings that reach it (the last unconditional one and any conditional ones after
   it: an `if`/`else` gives the union).
2. Per project (`Resolver`, owned by `regions.ProjectIndex`): a term is evaluated to
   a set of `Value`s across files: a call of a class is an instance, a call of a
   project function is what its `return`s hold with the arguments bound (factories,
   classmethods like `GPT.from_pretrained`, functions returning `nn.Sequential(...)`),
   attributes are looked up in the instance's class and its bases, containers hold
   their elements, `torch.compile(x)` / `DataParallel(x)` / `.module` /
   `._orig_mod` hold what `x` holds, and an annotated parameter holds an instance of
   its annotation. When nothing is found, the resolver says why in one line.

Flow-insensitive beyond the rule above; what is not visible is not
assumed (an empty set, never a guess).
"""
from __future__ import annotations

import ast
import bisect
import os
from contextlib import contextmanager
from typing import Callable, NamedTuple, Optional

from ..branches.around import sides
from .configured import TARGET_KEYS, UNREAD
from ..semantic.walk import walk_scope
from ..semantic.names import chain_text

# -- terms -------------------------------------------------------------------------
G = "g"  # ("g", dotted): a name resolved through imports, or a def of this file
LOCAL = "local"  # ("local", scope, name, row|None): a name bound in scope ("" = module)
PARAM = "param"  # ("param", scope, index, name, annotation term|None)
SELF = "self"  # ("self", class dotted, method name): `self` in a method
CLS = "cls"  # ("cls", class dotted): `cls` in a classmethod
ATTR = "attr"  # ("attr", term, name)
# ("prior", term, name, row): `self.<name>` read in the value of the statement at `row` that
# stores `self.<name>` (`self.f = wrap(torch.compile(self.f))`): the attribute as it was
# before that statement, so every value but the one the statement stores
PRIOR = "prior"
CALL = "call"  # ("call", func term, arg terms, ((kw, term), ...))
ITEM = "item"  # ("item", term, index|None)
SEQ = "seq"  # ("seq", element terms, ordered)
UNION = "union"  # ("union", terms)
# the term of a `None` default: a union of nothing (a call that leaves the parameter out
# passes no model, as one that leaves out any other default passes that default)
NONE_DEFAULT = (UNION, ())
ANN = "ann"  # ("ann", term): an instance of the annotated class
STAR = "star"  # ("star", term): `*xs` in a call or display
CONST = "const"  # ("const", "text"): a string constant (chooses branches guarded on it)
FLAG = "flag"  # ("flag", True|False): a boolean constant (chooses the branches of `if param:`)
# the constant of a guard on a parameter's truth (`if train:`: (param, TRUTH, True))
TRUTH = "<truth>"
# the constant of a guard on a parameter being None (`if device_ids is not None:`:
# (param, IS_NONE, False)), and the env key a call that surely leaves out a `None` default
# binds beside the parameter's own ((OMITTED_NONE, scope, index): the guard's answer)
IS_NONE = "<is None>"
OMITTED_NONE = "<omitted None>"
STARS = "stars"  # ("stars", modules, name): a name that may come from `from m import *`
# ("narrow", term, class terms, admitted): what `term` holds where `isinstance(it, classes)`
# is known to hold (admitted True) or to fail (False): a compile under such a guard
NARROW = "narrow"
# ("annotated", value term, annotation term): `model: Net = timm.create_model(name)`: what
# the value holds, and where that is no project code, an instance of the annotated class
ANNOTATED = "annotated"
# ("stored", locations): what the project stores into a container (`REGISTRY[k] = C`,
# `self.blocks.append(B())`) at those locations; made by the resolver, never by a file, so
# that the container is one question, answered once
STORED = "stored"
# ("kwargs", def qualname): in a call's keywords (a term's or a recorded call's) as (None,
# term), `**kwargs` that is the calling def's own `**` parameter (TermBuilder.passed_on):
# what its callers pass by keyword goes on. A `super().__init__(...)` call is kept with
# that term alone, extended with (the keyword names it gives, how many positional
# arguments): ("kwargs", def, names, count)
KWARGS = "kwargs"
# ("varargs", def qualname): `*args` in a call, the calling def's own `*` parameter (as
# (STAR, ("varargs", def))): the positional arguments its callers pass after its own
VARARGS = "varargs"
# ("super", class dotted, attr): `super().<attr>` in a method of the class: the first def
# of that name after the class in its MRO, bound to the instance
SUPER = "super"
# ("unseen", why): a value the file shows but the summary does not keep (an entry past
# the first MAX_DICT_ITEMS of a dict display): an unknown member, never dropped silently
UNSEEN = "unseen"
# ("foreign", instance Value, attr): what code outside the instance's class stores in its
# attribute (Resolver._set_from_outside); made by the resolver, never by a file
FOREIGN = "foreign"
# ("patch", term, attr, value term): `term` after `obj.<attr> = value` on an instance, a
# function stored on it (`model.forward = infer`, `m.encode = f.__get__(m)`): calling or
# compiling the instance afterwards runs what was stored (Value.patched)
PATCH = "patch"
# the callee name under which a summary records a decorator applied to a def
# (`@deco def f` calls `deco(f)`): what a wrapper's parameter may receive
DECORATED = "@"
# ("guarded", term, guards, scope): a def's return under `if flag:` / `if isinstance(param,
# C):` on its parameters (TermBuilder._guard), or after such an `if` that returns: what a
# call returns there only when the values the call passes let it run (detr's
# `_make_detr(mask=...)`)
GUARDED = "guarded"
ISA = "isa"  # a guard's test `isinstance(param, classes)`: (ISA, class terms)

MAX_ARGS = 16
# entries a dict display keeps: registries spelled as one literal (`__model_factory = {...}`,
# 60 names in deep-person-reid) are looked up by any of their keys
MAX_DICT_ITEMS = 256
RECORDED_ARGS = 8  # arguments (and keywords) a project call keeps in the index (regions._record_call)
# the name under which the index keeps calls of what a lookup gives: `REGISTRY.get(k)(opt)`,
# `MODELS[name](cfg)` (basicsr's `MODEL_REGISTRY.get(opt['model_type'])(opt)` is the only
# call that passes a model class its options: bench/dev27)
LOOKED_UP = "<looked up>"
# the name under which the index keeps calls of what another call returns, `Exporter(args)(
# model=m)`: an instance's `__call__` runs (ultralytics' exporter is handed its model so,
# bench/dev33)
CALLED_RESULT = "<called result>"
# node classes `TermBuilder._term` tells apart, as module globals (one lookup each)
(_Name, _Attribute, _Call, _Subscript, _Constant, _List, _Tuple, _Set, _Dict, _ListComp, _GeneratorExp, _SetComp,
 _DictComp, _IfExp, _BoolOp, _Starred, _Lambda, _NamedExpr, _Await) = (
    ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp,
    ast.GeneratorExp, ast.SetComp, ast.DictComp, ast.IfExp, ast.BoolOp, ast.Starred, ast.Lambda, ast.NamedExpr, ast.Await)

# a method more project subclasses override is not followed into each (`self.<name>` in
# the base: Resolver._overrides)
MAX_OVERRIDES = 16
# Value.made of `self` in a method when which instance runs it is not known: an instance
# of the class or of a project subclass that runs the method (Resolver._open_self)
OPEN_SELF = ("open",)
# nn.Module methods that return the module itself: `Net().to(dev).eval()` is a Net
RETURNS_SELF = frozenset(
    {"to", "eval", "train", "cuda", "cpu", "half", "float", "double", "bfloat16", "requires_grad_", "to_empty", "share_memory"}
)
# bases whose own bases are known to be no user class (isinstance of them is decided)
# the spellings of torch's nn.Module a base or an isinstance test names
TORCH_MODULE = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
KNOWN_ROOTS = TORCH_MODULE | {"builtins.object", "object"}
# attributes of a wrapper that hold the wrapped module
WRAPPED_ATTRS = frozenset({"module", "_orig_mod"})
# bases that make a class an enumeration: its class-body names are its members, each a
# "member" Value whose `.value` is what the class body assigned it (`ModelName[name].value`
# picks a model class: tryoffdiff, bench/dev28)
ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"})
# calls whose result holds what their first argument holds
PASS_THROUGH = frozenset(
    {
        "torch.compile",
        "torch._dynamo.optimize",
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
        # FSDP runs the module it shards (`FullyShardedDataParallel(m).forward` calls m's);
        # FSDP2's `fully_shard(m)` returns m itself
        "torch.distributed.fsdp.FullyShardedDataParallel",
        "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
        "torch.distributed.fsdp.fully_shard",
        "torch.distributed.fsdp._fully_shard._fully_shard.fully_shard",
        "torch.distributed._composable.fsdp.fully_shard",
        # activation checkpointing's wrapper runs the module it wraps (`forward` checkpoints
        # `self._checkpoint_wrapped_module`): lingua's `parallelize_model`, bench/fresh_reads
        "torch.distributed.algorithms._checkpoint.checkpoint_wrapper.checkpoint_wrapper",
        "torch.distributed.algorithms._checkpoint.checkpoint_wrapper.CheckpointWrapper",
        "torch.jit.script",
        # a traced, frozen or FX-traced module runs the code it was made from:
        # `torch.onnx.export(torch.jit.trace(net, x), ...)` exports the net's forward
        "torch.jit.trace",
        "torch.jit.freeze",
        "torch.jit.optimize_for_inference",
        "torch.fx.symbolic_trace",
        # tensordict's modules run the callable they are given (`TensorDictModule(actor.act,
        # in_keys=..., out_keys=...)`, `CudaGraphModule(update)`)
        "tensordict.nn.TensorDictModule",
        "tensordict.nn.common.TensorDictModule",
        "tensordict.nn.CudaGraphModule",
        "tensordict.nn.cudagraphs.CudaGraphModule",
        # torch's EMA wrapper runs the module it averages (`forward` is `self.module(...)`),
        # and dynamic quantization returns the model (or its copy) with layers swapped
        "torch.optim.swa_utils.AveragedModel",
        "torch.ao.quantization.quantize_dynamic",
        "torch.ao.quantization.quantize.quantize_dynamic",
        "torch.quantization.quantize_dynamic",
        # eager-mode static quantization: each step returns the model (or its copy), its
        # layers fused, observed or swapped (`convert(prepare(model))`: wekws' KWSModel)
        "torch.ao.quantization.prepare",
        "torch.ao.quantization.prepare_qat",
        "torch.ao.quantization.convert",
        "torch.ao.quantization.fuse_modules",
        "torch.ao.quantization.quantize.prepare",
        "torch.ao.quantization.quantize.prepare_qat",
        "torch.ao.quantization.quantize.convert",
        "torch.ao.quantization.fuse_modules.fuse_modules",
        "torch.quantization.prepare",
        "torch.quantization.prepare_qat",
        "torch.quantization.convert",
        "torch.quantization.fuse_modules",
        # PEFT's adapters: the PeftModel's forward runs the model it wraps, adapter layers
        # injected into it (`get_peft_model(model, LoraConfig(...))`)
        "peft.get_peft_model",
        "peft.mapping.get_peft_model",
        "peft.mapping_func.get_peft_model",
        "peft.PeftModel",
        "peft.PeftModel.from_pretrained",
        "peft.peft_model.PeftModel",
        "peft.peft_model.PeftModel.from_pretrained",
        # SyncBatchNorm's converter returns the module it is given, its BatchNorm layers swapped
        "torch.nn.SyncBatchNorm.convert_sync_batchnorm",
        "torch.nn.modules.batchnorm.SyncBatchNorm.convert_sync_batchnorm",
        # NVIDIA apex's: the same converter, and its DDP, which runs the module it wraps;
        # timm's converters to split and synced BatchNorm
        "apex.parallel.convert_syncbn_model",
        "apex.parallel.DistributedDataParallel",
        "timm.models.convert_splitbn_model",
        "timm.layers.convert_splitbn_model",
        "timm.models.layers.convert_splitbn_model",
        "timm.layers.split_batchnorm.convert_splitbn_model",
        "timm.layers.convert_sync_batchnorm",
        "timm.models.convert_sync_batchnorm",
        "timm.models.layers.convert_sync_batchnorm",
        "copy.deepcopy",
        "copy.copy",
        # `partial(torch.compile, mode=...)` is called like torch.compile
        "functools.partial",
    }
)
# Hugging Face accelerate: `accelerator.prepare(model, opt, loader)` returns what it is
# given, in order (the model maybe wrapped in DDP, which runs it), one value when given one;
# `prepare_model` and `unwrap_model` return the model
ACCELERATORS = frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator"})
ACCELERATOR_PREPARE = frozenset({"prepare", "prepare_model", "unwrap_model"})
CONTAINER_MODULES = frozenset(
    {"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict", "collections.OrderedDict", "builtins.list", "builtins.tuple", "builtins.dict"}
)
# objects whose attributes are their constructor's keywords
NAMESPACES = frozenset({"types.SimpleNamespace", "argparse.Namespace"})
# a container's methods that return one of its elements, and those that return a view
# of all of them (`for name, block in blocks.items()`: a pair per element)
CONTAINER_GETTERS = frozenset({"get", "pop", "__getitem__", "setdefault"})
CONTAINER_VIEWS = frozenset({"values", "items", "keys", "children", "copy", "named_children"})
# a registry object's method that builds an instance of an entry from a configuration
# (mmengine's and mmcv's `Registry.build(cfg)`): asked only of a container the project
# registers classes into (`@MODELS.register_module()`)
REGISTRY_BUILD = "build"
# builtins that iterate over their arguments: what they yield is made of those elements
ITERATION_BUILTINS = frozenset(
    {"builtins.enumerate", "builtins.zip", "builtins.reversed", "builtins.sorted", "builtins.iter", "builtins.next",
     "builtins.filter"}
)
# timm's model registry: `@register_model` on a def of the project puts it in the registry
# that `timm.create_model(name)` looks `name` up in (timm's own models are there too)
TIMM_CREATE = frozenset({"timm.create_model", "timm.models.create_model", "timm.models._factory.create_model",
                         "timm.models.factory.create_model"})
# timm's builder: `build_model_with_cfg(RepNext, variant, pretrained, **kwargs)` makes an
# instance of the class it is given (what a registered factory of the project returns)
TIMM_BUILD = frozenset({"timm.models.build_model_with_cfg", "timm.models._builder.build_model_with_cfg",
                        "timm.models.helpers.build_model_with_cfg", "timm.models._helpers.build_model_with_cfg"})
TIMM_REGISTER = frozenset({"timm.models.register_model", "timm.models.registry.register_model",
                           "timm.models._registry.register_model", "timm.register_model"})
# `typing.cast(T, value)` returns `value`; `T` says what it is where the value shows no project code
CASTS = frozenset({"typing.cast"})
# calls that import a class or function by its dotted name (`locate("pkg.nets.UNet")`, as
# Hydra configurations write class paths): the project's def of that name
LOCATORS = frozenset({"pydoc.locate", "hydra.utils.get_class", "hydra.utils.get_method", "hydra.utils.get_object"})
ARGS_MATTER = (PASS_THROUGH | CONTAINER_MODULES | NAMESPACES | ITERATION_BUILTINS | CASTS | LOCATORS | TIMM_BUILD
               | {"builtins.getattr", "builtins.eval", "torch.load"})
# calls of other packages whose result is known without their arguments
OPAQUE_CALLS = ("torch.", "numpy.", "builtins.", "math.", "os.", "re.", "json.", "logging.", "typing.", "random.", "time.")
TYPING_WRAPPERS = frozenset({"Optional", "Union", "Type", "type"})


# where a value that no project code stands for comes from, for `regions` to say so
CONFIG_SOURCES = ("argparse.", "omegaconf.", "hydra.", "yaml.", "json.", "configparser.", "ml_collections.",
                  "easydict.", "tomllib.", "tomli.", "toml.", "click.", "typer.", "fire.", "os.environ", "sys.argv")
LOADERS = ("torch.load", "torch.jit.load", "torch.hub.load", "torch.export.load", "pickle.load", "dill.load",
           "joblib.load", "safetensors.")


CONFIGURED = "the value comes from a configuration"
# Intel's `ipex.optimize(model, ...)` returns the model (or its copy) with its layers
# optimized, and `(model, optimizer)` when given an optimizer
IPEX_OPTIMIZE = frozenset({"intel_extension_for_pytorch.optimize", "intel_extension_for_pytorch.frontend.optimize"})
# calls that load a YAML configuration: what a key of it holds is read from the project's
# YAML files (configured.py), a Value of kind "yaml" whose `keys` is the path read so far
# hyperpyyaml builds every `!new:` entry while it loads: `configs["llm"]` is the instance
HYPERPYYAML_LOADERS = frozenset({"hyperpyyaml.load_hyperpyyaml", "hyperpyyaml.core.load_hyperpyyaml"})
YAML_LOADERS = frozenset({"yaml.load", "yaml.safe_load", "yaml.full_load", "yaml.unsafe_load",
                          "omegaconf.OmegaConf.load"})
# calls that build what a configuration entry's `_target_` names (configured.py)
CONFIG_INSTANTIATE = frozenset({"hydra.utils.instantiate"})
ARGUMENT_PARSERS = frozenset({"argparse.ArgumentParser"})
PARSE_ARGS = frozenset({"parse_args", "parse_known_args"})
PARSE_ARGS_CALLS = frozenset(f"{parser}.{method}" for parser in ARGUMENT_PARSERS for method in PARSE_ARGS)
PARSED_ARGS = "argparse.ArgumentParser.parse_args"  # the namespace `parse_args()` returns (Resolver._parsed_args)
# what a module's namespace gives for a name a configuration picks (`models.__dict__[args.arch]`)
CHOSEN = "a configuration names the model among what a module exports, and those build different models"


def _from_configuration(value: "Value") -> bool:
    """Whether `value` is one a configuration gives (an argument, a YAML entry)."""
    return value.kind == UNKNOWN and bool(value.dotted) and value.dotted.startswith(CONFIGURED)


def _loads_pipeline(dotted: str) -> bool:
    """`diffusers.<X>Pipeline.from_pretrained` (or `from_single_file`, `from_pipe`): a
    diffusers pipeline loader, which takes components by keyword."""
    parts = dotted.split(".")
    return len(parts) >= 3 and parts[0] == "diffusers" and "Pipeline" in parts[-2] \
        and parts[-1] in ("from_pretrained", "from_single_file", "from_pipe")


def describe_external(dotted: str, called: bool) -> str:
    """Why a value from outside the project's code has no target, in words a user acts on."""
    shown = f"`{dotted}{'()' if called else ''}`"
    if dotted.startswith(CONFIG_SOURCES):
        return (f"{CONFIGURED} ({shown}): the code does not say which model it is "
                "(declare it with `compiled = [...]`, or record a run)")
    if dotted.startswith(LOADERS) or dotted.rsplit(".", 1)[-1] in ("from_pretrained", "load_from_checkpoint", "load_model"):
        return f"{shown} loads a model the code does not define (unpickled or from another package)"
    if dotted.startswith("torch.nn.") and dotted.rsplit(".", 1)[-1][:1].isupper():
        return f"{shown} is torch's own layer, not code of the project"
    return f"{shown} is from another package"



def isinstance_tests(names, test: ast.AST, holds: bool):
    """(tested expression, class expressions, passes) for each `isinstance(x, C)` whose
    outcome is known when `test` holds (or fails): through `not`, and the operands of an
    `and` that holds (of an `or` that fails): branches.around.sides."""
    for part, part_holds in sides(test, holds):
        if (isinstance(part, ast.Call) and len(part.args) == 2 and not part.keywords
                and names.resolve(part.func) == "builtins.isinstance"):
            classes = part.args[1].elts if isinstance(part.args[1], ast.Tuple) else [part.args[1]]
            if all(isinstance(c, (ast.Name, ast.Attribute)) for c in classes):
                yield part.args[0], list(classes), part_holds


_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def unnarrowed(term):
    """`term` without the isinstance tests around it: the read itself, for the questions
    about where a value comes from (a parameter, a local of some def), not what it is;
    a branch of a conditional expression on a parameter is its own read too."""
    while term is not None and (term[0] == NARROW or term[0] == GUARDED):
        term = term[1]
    return term


def isinstance_narrowed_reads(names, body: list, out: dict) -> None:
    """Fill `out` (id(Name node) -> (node, [(class expressions, passes)], outermost
    first)) with the reads of a name that an `isinstance` test on it decides, in one
    scope's statements `body` (not descending into nested defs): the reads in the branch
    of an `if` whose test decides (`elif isinstance(model, nn.Module): module =
    model.to(device)`), and the reads after an `if` that always leaves and has no else
    (`if not isinstance(m, nn.Module): raise TypeError`). A read is narrowed only up to
    the statement that binds the name again (its value's reads included: `if
    isinstance(model, str): model = Calculator(model)`)."""
    _narrow_block(names, body, out)


def _narrow_block(names, block: list, out: dict) -> None:
    for i, stmt in enumerate(block):
        if stmt.__class__ is ast.If:
            for branch, holds in ((stmt.body, True), (stmt.orelse, False)):
                for arg, classes, passes in isinstance_tests(names, stmt.test, holds):
                    if arg.__class__ is ast.Name:
                        _mark_reads(branch, arg.id, (classes, passes), out)
            if (not stmt.orelse and stmt.body
                    and stmt.body[-1].__class__ in (ast.Return, ast.Raise, ast.Continue, ast.Break)):
                for arg, classes, passes in isinstance_tests(names, stmt.test, False):
                    if arg.__class__ is ast.Name:
                        _mark_reads(block[i + 1:], arg.id, (classes, passes), out)
        if stmt.__class__ in _NESTED_SCOPES:
            continue
        for field in _BLOCK_FIELDS:
            inner = getattr(stmt, field, None)
            if inner:
                _narrow_block(names, inner, out)
        for handler in getattr(stmt, "handlers", None) or ():
            _narrow_block(names, handler.body, out)
        for case in getattr(stmt, "cases", None) or ():
            _narrow_block(names, case.body, out)


def _mark_reads(block: list, name: str, narrowing: tuple, out: dict) -> None:
    """Mark the reads of `name` in `block` up to the statement that binds it again."""
    for stmt in block:
        binds = name in assigned_names([stmt])
        if binds:
            # the value of `name = f(name)` is read before the store
            value = getattr(stmt, "value", None) if stmt.__class__ in (ast.Assign, ast.AnnAssign, ast.AugAssign) else None
            roots = [value] if value is not None else []
        else:
            roots = [stmt]
        stack = roots
        while stack:
            node = stack.pop()
            if node.__class__ is ast.Name:
                if node.id == name and node.ctx.__class__ is ast.Load:
                    entry = out.get(id(node))
                    if entry is None:
                        out[id(node)] = (node, [narrowing])
                    else:  # an inner test: applied after the outer one
                        entry[1].append(narrowing)
                continue
            if node.__class__ in _NESTED_SCOPES:
                continue  # read later, when the name may hold something else
            stack.extend(ast.iter_child_nodes(node))
        if binds:
            return


class Value(NamedTuple):
    """One thing an expression can hold.

    kind: "class" | "inst" | "func" | "bound" (a method with its receivers in
    `elems[0]`) | "seq" (a container: `elems` holds one set per position or, with
    `keys`, per key) | "const" (a string, in `dotted`) | "unknown" (what the index cannot
    see, `dotted` says why) | "ext" (a
    name from another package; `dotted` is how it was imported) | "getter" (a
    container's `.get`/`.pop`: calling it gives an element) | "view" (a container's
    `.items()`/`.values()`/`.keys()`, named in `dotted`: calling it gives a container
    of them) | "selfret" (a method returning its receiver, such as `.to(device)`) |
    "binder" (`f.__get__` of a def `f`: calling it binds f to its argument) | "yaml" (a
    YAML configuration the code loads, `dotted` the loader, `keys` the path read so far:
    a key read from it holds what the project's YAML files give that key) | "member"
    (members of the project's Enum class `dotted`, their names in `keys`) | "yaml-getter"
    (`cfg.get`/`cfg.pop` of a "yaml" value: calling it reads the key it is given)."""

    kind: str
    dotted: Optional[str] = None
    elems: Optional[tuple] = None
    ordered: bool = False
    # a container's key for each of `elems` (a string constant, None when unknown):
    # `REGISTRY["unet"] = UNet`, `@register("vae")`, `{"a": A, "b": B}`
    keys: Optional[tuple] = None
    # an instance built by a call whose `__init__` stores its parameters on `self`
    # (`Pipeline(extractor, LightGlue(...))`): ("call", ...), the resolver's key for that
    # call, so its attributes hold what this construction passed, not what every one
    # does; or ("param", ...), an instance a parameter is annotated with (`pipeline:
    # Pipeline`): the constructions its callers pass, asked when an attribute is read
    made: Optional[tuple] = None
    # attributes stored on this instance after it was made, outside its class ((attr,
    # frozenset of values), ...) sorted by attr: `model.forward = infer` makes compiling
    # or tracing the model run `infer` (PATCH)
    patched: Optional[tuple] = None

    def __repr__(self) -> str:
        # values are sorted by repr (a site's values, entries and reasons): the same text
        # in every process, so the same order. A set's members are listed sorted (its own
        # order moves with the hash seed), and a construction (`made`) by its kind alone:
        # its key holds a summary's id and a number given in the order of evaluation
        fields = ", ".join(f"{name}={_stable_repr(value) if name != 'made' or value is None else repr(value[0])}"
                           for name, value in zip(self._fields, self))
        return f"Value({fields})"


def _stable_repr(obj) -> str:
    """repr(obj), but the same in every process: frozensets list their members sorted."""
    cls = obj.__class__
    if cls is frozenset or cls is set:
        if not obj:
            return f"{cls.__name__}()"
        return f"{cls.__name__}({{{', '.join(sorted(_stable_repr(o) for o in obj))}}})"
    if cls is tuple:
        inner = ", ".join(_stable_repr(o) for o in obj)
        return f"({inner},)" if len(obj) == 1 else f"({inner})"
    return repr(obj)


def _known_keys(keys: frozenset) -> Optional[frozenset]:
    """The string keys `keys` (what a key expression holds) can be, or None when one of
    them is not a known constant (then any key)."""
    return frozenset(v.dotted for v in keys) if keys and all(v.kind == "const" for v in keys) else None


def patched_attr(value: "Value", name: str) -> Optional[frozenset]:
    """What `value.<name>` was set to on the instance itself (None: not set)."""
    if value.patched:
        for attr, held in value.patched:
            if attr == name:
                return held
    return None


EMPTY: frozenset = frozenset()
MAX_MEMBERS = 64  # names of a module taken for `getattr(module, unknown)`
# a value the index cannot see (`dotted` says why): with other values it makes a site
# partial, never a resolved target (issue 19: "unresolved beats wrong")
UNKNOWN = "unknown"


# -- per file: building terms ------------------------------------------------------
class Scope:
    """A function (or the module) as seen by the term builder."""

    __slots__ = ("key", "bound", "params", "self_kind", "cls", "parent", "defaults", "globals")

    def __init__(self, key, bound, params=(), self_kind=None, cls=None, parent=None, defaults=None, globals=frozenset()):
        self.key = key  # "" for the module, else the def's qualname
        self.bound = bound  # names bound in this scope by assignment, `for`, params, defs
        self.params = params
        self.self_kind = self_kind  # "self" | "cls" | None: what the first parameter is
        self.cls = cls  # dotted name of the class a method belongs to
        self.parent = parent  # the enclosing function scope (classes are skipped)
        self.defaults = defaults or {}  # parameter name -> default expression
        self.globals = globals  # names the def declares `global`: its bindings of them are the module's


def assigned_names(body) -> set:
    """Names a block of statements binds (not descending into nested scopes)."""
    out: set = set()
    declared: set = set()  # `global x` / `nonlocal x`: bound elsewhere
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
            continue
        if isinstance(node, ast.Assign):
            for t in node.targets:
                _target_names(t, out)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            _target_names(node.target, out)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            _target_names(node.target, out)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    _target_names(item.optional_vars, out)
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, name, None)
            if block:
                stack.extend(block)
    return out - declared


def _leaves(body: list) -> bool:
    """A block whose last statement returns or raises: what follows it runs only where
    the block did not."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _rows(body: list) -> tuple:
    """(first row, last row) of a block of statements."""
    return (body[0].lineno, getattr(body[-1], "end_lineno", None) or body[-1].lineno)


def _patches(attr: str, value) -> bool:
    """Whether storing the term `value` as `obj.<attr>` replaces code the object runs:
    its `forward` (whatever is stored), or a method bound to it by hand
    (`f.__get__(obj)`, `types.MethodType(f, obj)`). Other attribute stores (`args.out =
    path`) are data and not followed."""
    if attr == "forward":
        return True
    if value[0] != CALL:
        return False
    func = value[1]
    return (func[0] == ATTR and func[2] == "__get__") or (func[0] == G and func[1] == "types.MethodType")


def _definitely_assigned(body: list) -> set:
    """Names an assignment among `body`'s own statements (or a `with` body's) binds."""
    out: set = set()
    for stmt in body:
        t = stmt.__class__
        if t is ast.Assign:
            for target in stmt.targets:
                _target_names(target, out)
        elif t is ast.AnnAssign and stmt.value is not None:
            _target_names(stmt.target, out)
        elif t is ast.With or t is ast.AsyncWith:
            out |= _definitely_assigned(stmt.body)
    return out


def _leaves(body: list) -> bool:
    return bool(body) and body[-1].__class__ in (ast.Raise, ast.Return, ast.Continue, ast.Break)


def _holds_term(term, part) -> bool:
    """Whether `part` is `term` or one of the terms it is made of."""
    if term == part:
        return True
    return type(term) is tuple and any(type(t) is tuple and _holds_term(t, part) for t in term)


def _target_names(target, out: set) -> None:
    if isinstance(target, ast.Name):
        out.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            _target_names(elt, out)
    elif isinstance(target, ast.Starred):
        _target_names(target.value, out)


class TermBuilder:
    """Turns expressions of one file into terms, and collects its bindings."""

    def __init__(self, names, module: str):
        self.names = names
        self.module = module
        self.module_bound: set = set()
        # scope key -> name -> [(row, depth, term)]
        self.bindings: dict[str, dict[str, list]] = {}
        self.returns: dict[str, list] = {}  # scope key -> [term]
        self.attrs: dict[str, dict[str, list]] = {}  # class dotted -> attr -> [term]
        # class dotted -> attr -> [the method that stores it, None in the class body]: in
        # the order of `attrs` (a subclass that overrides the method stores instead)
        self.attr_methods: dict[str, dict[str, list]] = {}
        # (location, term, key term); location: ("G", dotted) a module-level name, ("L",
        # def dotted, name) a def's local, ("A", class, attr), ("I", dotted) an imported name
        self.stores: list = []
        self.module_scope: Optional[Scope] = None  # (set by the summarizer)
        self._ends: list = []  # last rows of the nested blocks being collected
        self._terms: dict = {}  # (id(expr), id(scope), row) -> (expr, scope, term)
        self._comprehended: dict = {}  # a comprehension's loop names -> their terms, while its element is built
        # id(`self.x` node) -> (node, row): reads of an attribute in the value of a statement
        # at `row` that stores that attribute (TermBuilder._mark_prior_reads)
        self._prior_reads: dict = {}
        # (method qualname, attr) -> entries as `bindings` holds them, of each `self.attr = v`
        # of the method, and the method's body: a read after such a store (_stored_before)
        self._self_stores: dict[tuple, list] = {}
        self._bodies: dict[str, list] = {}
        self._self_calls: dict[str, list] = {}  # method qualname -> _self_call_rows
        self._statement_end = 0  # last row of the assignment being collected
        # def qualname -> (its `*` parameter's name, its `**` parameter's name), None where it has none
        self.star_params: dict[str, tuple] = {}
        # the file's command-line options, for what `parser.parse_args()` holds here:
        # dest -> [(default term, choices term)] of each `*.add_argument(...)` naming it
        self.options: dict[str, list] = {}
        # id(Name node) -> (node, [(class expressions, passes)]): the reads an isinstance
        # test decides (isinstance_narrowed_reads, filled by the summarizer)
        self.narrowed_reads: dict = {}

    def dotted(self, qualname: str) -> str:
        return f"{self.module}.{qualname}" if self.module else qualname

    # -- expressions ---------------------------------------------------------------
    def term(self, expr, scope: Scope, row: Optional[int]):
        """The term of `expr` seen from `scope` at line `row` (None: anywhere in it)."""
        # the summary asks for the same expression several times (a call's argument is
        # a term of the call and, as a call itself, of its own record): built once
        key = (id(expr), id(scope), row)
        hit = self._terms.get(key)
        if hit is not None and hit[0] is expr and hit[1] is scope:  # both kept: ids not reused
            return hit[2]
        found = self._term(expr, scope, row)
        self._terms[key] = (expr, scope, found)
        return found

    def _term(self, expr, scope: Scope, row: Optional[int]):
        t = type(expr)
        if t is _Name:
            if self._comprehended and expr.id in self._comprehended:
                return self._comprehended[expr.id]
            term = self.name_term(expr.id, scope, row)
            narrowed = self.narrowed_reads.get(id(expr)) if self.narrowed_reads else None
            if narrowed is not None and narrowed[0] is expr and term is not None:
                for classes, passes in narrowed[1]:
                    class_terms = tuple(t for t in (self.term(c, scope, row) for c in classes) if t is not None)
                    if class_terms and len(class_terms) == len(classes):
                        # filtering only: a test does not make an unseen value an instance
                        term = (NARROW, term, class_terms, passes, True)
            return term
        if t is _Attribute:
            if self._self_stores and row is not None:
                stored = self._stored_before(expr, scope, row)
                if stored is not None:
                    return stored
            if self._prior_reads:
                marked = self._prior_reads.get(id(expr))
                if marked is not None and marked[0] is expr:
                    inner = self.term(expr.value, scope, row)
                    return (PRIOR, inner, expr.attr, marked[1]) if inner is not None else None
            if own_super_attribute(expr, scope):
                return (SUPER, scope.cls, expr.attr)
            base = expr.value
            while isinstance(base, _Attribute):
                base = base.value
            if isinstance(base, _Name) and self._is_global_name(base.id, scope):
                dotted = self.names.resolve(expr)
                if dotted:
                    return (G, dotted)
            inner = self.term(expr.value, scope, row)
            return (ATTR, inner, expr.attr) if inner is not None else None
        if t is _Call:
            func = self.term(expr.func, scope, row)
            if func is None:
                return None
            if isinstance(expr.func, _Name):
                partial = self.names.partials.get(expr.func.id) if expr.func.id not in scope.bound else None
                if partial is not None:
                    func = (G, partial.target)
            if func[0] == G and func[1].startswith(OPAQUE_CALLS) and func[1] not in ARGS_MATTER:
                return (CALL, func, (), ())  # `torch.cat(...)`: what it returns does not hang on its arguments
            star = self.star_params.get(scope.key, (None, None))[0] if scope.key else None
            args = tuple([(STAR, (VARARGS, scope.key)) if star and a.__class__ is _Starred and a.value.__class__ is _Name
                          and a.value.id == star else self.term(a, scope, row) for a in expr.args[:MAX_ARGS]])
            # `**kw` is (None, None): it may name any parameter; `**kwargs` of the def's own
            # `**` parameter is (None, (KWARGS, def)): what the def's callers pass on
            kws = tuple([(k.arg, self.term(k.value, scope, row) if k.arg else self.passed_on(k.value, scope))
                         for k in expr.keywords[:MAX_ARGS]])
            return (CALL, func, args, kws)
        if t is _Subscript:
            inner = self.term(expr.value, scope, row)
            if inner is None:
                return None
            index = expr.slice
            if index.__class__ is ast.Slice:
                return inner  # `blocks[1:]`: a part of the same container
            if isinstance(index, _Constant) and isinstance(index.value, (int, str)) and not isinstance(index.value, bool):
                key = index.value if isinstance(index.value, int) else (CONST, index.value)
            elif isinstance(index, (_Name, _Attribute, _Subscript)):
                # a key known where it is evaluated (`MODELS[name]`), or one a configuration
                # picks (`models.__dict__[args.arch]`, `REGISTRY[cfg["model"]["name"]]`)
                key = self.term(index, scope, row)
            else:
                key = None
            return (ITEM, inner, key)
        if t in (_List, _Tuple, _Set):
            elems = tuple([self.term(e, scope, row) for e in expr.elts[:MAX_ARGS]])
            if len(expr.elts) > MAX_ARGS:  # the rest is not kept: the display is not all seen
                return (SEQ, elems + ((UNSEEN, f"an element past the first {MAX_ARGS} of a display"),), False)
            return (SEQ, elems, not any([isinstance(e, _Starred) for e in expr.elts]))
        if t is _Dict:
            pairs = [(k, v) for k, v in zip(expr.keys, expr.values) if k is not None]
            kept = pairs[:MAX_DICT_ITEMS]
            keys = tuple([k.value if isinstance(k, _Constant) and isinstance(k.value, str) else None for k, _v in kept])
            values = tuple([self.term(v, scope, row) for _k, v in kept])
            if len(kept) < len(pairs):  # an entry not kept may be the one a key asks for
                values += ((UNSEEN, f"an entry past the first {MAX_DICT_ITEMS} of a dict display"),)
                keys += (None,)
            if len(pairs) < len(expr.keys):  # `{**base, ...}`: keys not all known
                values += tuple([(STAR, self.term(v, scope, row)) for k, v in zip(expr.keys, expr.values) if k is None])
                keys += (None,) * (len(values) - len(keys))
            return (SEQ, values, False, keys) if any(keys) else (SEQ, values, False)
        if t in (_ListComp, _GeneratorExp, _SetComp):
            return (SEQ, (self._comprehended_term(expr, expr.elt, scope, row),), False)
        if t is _DictComp:
            return (SEQ, (self._comprehended_term(expr, expr.value, scope, row),), False)
        if t is _IfExp:
            return (UNION, self._branches(expr, scope, row))
        if t is _BoolOp:
            return (UNION, tuple([self.term(v, scope, row) for v in expr.values]))
        if t is _Starred:
            inner = self.term(expr.value, scope, row)
            return (STAR, inner) if inner is not None else None
        if t is _Lambda:
            from .regions import lambda_qualname

            return (G, self.dotted(lambda_qualname(expr)))
        if t is _Constant and isinstance(expr.value, str) and len(expr.value) <= 64:
            return (CONST, expr.value)
        if t is _Constant and isinstance(expr.value, bool):
            return (FLAG, expr.value)
        if t is _NamedExpr:
            return self.term(expr.value, scope, row)
        if t is _Await:
            return self.term(expr.value, scope, row)
        return None

    def _branches(self, expr, scope: Scope, row: Optional[int]) -> tuple:
        """The terms of a conditional expression's two branches; a branch that is the name
        (or attribute chain) an `isinstance` test of the condition tests holds what passes
        that test, or fails it: `mapping if isinstance(mapping, MappingNetwork) else
        MappingNetwork(mapping.width)` (CompVis' weather-rf, bench/dev36)."""
        branches = [self.term(expr.body, scope, row), self.term(expr.orelse, scope, row)]
        for i, (branch, holds) in enumerate(((expr.body, True), (expr.orelse, False))):
            text = chain_text(branch) if branches[i] is not None else None
            if text is None:
                continue
            for arg, classes, passes in isinstance_tests(self.names, expr.test, holds):
                if chain_text(arg) != text:
                    continue
                class_terms = tuple(t for t in (self.term(c, scope, row) for c in classes) if t is not None)
                if class_terms and len(class_terms) == len(classes):
                    branches[i] = (NARROW, branches[i], class_terms, passes)
        guard = self._guard(expr.test, scope) if scope.params else None
        if guard is not None:
            # `SamBatch if enable_batch else Sam` on a parameter: each branch only where the
            # values a call passes let its test hold (EdgeSAM's `_build_sam(encoder, ckpt)`,
            # which leaves `enable_batch=False`: bench/fresh_reads batch 19)
            negated = (guard[0], guard[1], not guard[2])
            branches = [(GUARDED, b, (g,), scope.key) if b is not None else None for b, g in zip(branches, (guard, negated))]
        return tuple(branches)

    def passed_on(self, value, scope: Scope):
        """The term of `**value` in a call: (KWARGS, def) when `value` is the enclosing
        def's own `**` parameter (each keyword its callers pass it goes on), else None."""
        if value.__class__ is _Name and scope.key and self.star_params.get(scope.key, (None, None))[1] == value.id:
            return (KWARGS, scope.key)
        return None

    def _is_global_name(self, name: str, scope: Scope) -> bool:
        s = scope
        while s is not None:
            if name in s.bound or (s.self_kind and s.params and s.params[0] == name):
                return False
            s = s.parent
        return name not in self.module_bound

    def _comprehended_term(self, comp, elt, scope: Scope, row: Optional[int]):
        """The term of a comprehension's element, its loop names standing for the items of
        what they loop over: `{a.__name__.lower(): a for a in ARCHITECTURES}` holds the
        classes of ARCHITECTURES (smp's create_model registry). Built apart from the term
        memo: the same name nodes read outside this question mean something else."""
        loops = self.comprehension_loops(comp, scope, row)
        if not loops:
            return self.term(elt, scope, row)
        return self.term_within(loops, elt, scope, row)

    def comprehension_loops(self, comp, scope: Scope, row: Optional[int]) -> dict:
        """name -> term of what a comprehension's loop names hold: an item of what they
        loop over (None: an int of `range`, or not known)."""
        loops = {}
        for gen in comp.generators:
            items = self.term(gen.iter, scope, row)
            # `for i in range(depth)` (most comprehensions of model code) loops over ints
            item = (ITEM, items, None) if items is not None and items[:2] != (CALL, (G, "builtins.range")) else None
            targets = [(gen.target, item)]
            while targets:
                target, held = targets.pop()
                if isinstance(target, _Name):
                    loops[target.id] = held
                elif isinstance(target, (ast.Tuple, ast.List)):
                    targets += [(e, (ITEM, held, i) if held is not None else None) for i, e in enumerate(target.elts)]
        return loops

    def term_within(self, loops: dict, expr, scope: Scope, row: Optional[int]):
        """The term of `expr` inside a comprehension whose loop names hold `loops`."""
        with self.within(loops):
            return self.term(expr, scope, row)

    @contextmanager
    def within(self, loops: dict):
        """Terms built inside a comprehension whose loop names hold `loops`; apart from the
        term memo: the same name nodes read outside this question mean something else."""
        saved_memo, saved = self._terms, self._comprehended
        self._terms, self._comprehended = {}, {**saved, **loops}
        try:
            yield
        finally:
            self._terms, self._comprehended = saved_memo, saved

    def name_term(self, name: str, scope: Scope, row: Optional[int]):
        s, here = scope, True
        while s is not None:
            if s.params and s.self_kind and name == s.params[0]:
                if s.self_kind == "self":
                    # with the method's name: which subclasses run it (Resolver._overrides)
                    return (SELF, s.cls, s.key.rpartition(".")[2])
                return (CLS, s.cls)
            if name in s.bound:
                return (LOCAL, s.key, name, row if here else None)
            s, here = s.parent, False
        if name in self.module_bound:
            return (LOCAL, "", name, row if scope.key == "" else None)
        dotted = self.names.resolve_name(name)
        if dotted:
            return (G, dotted)
        stars = self.names.star_imports
        if stars:  # `from pkg import *`: the last of those modules that has the name
            return (STARS, stars, name)
        return None

    def annotation_term(self, ann, scope: Scope):
        """`Net`, `Optional[Net]`, `"Net"`, `Net | None` -> the classes named."""
        if ann is None:
            return None
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                ann = ast.parse(ann.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(ann, ast.Subscript):
            head = ann.value.attr if isinstance(ann.value, ast.Attribute) else getattr(ann.value, "id", None)
            if head in TYPING_WRAPPERS:
                inner = ann.slice
                parts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
                return (UNION, tuple([self.annotation_term(p, scope) for p in parts]))
            return None
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
            return (UNION, (self.annotation_term(ann.left, scope), self.annotation_term(ann.right, scope)))
        if isinstance(ann, (ast.Name, ast.Attribute)):
            inner = self.term(ann, scope, None)
            return (ANN, inner) if inner is not None else None
        return None

    # -- statements ------------------------------------------------------------------
    def bind(self, scope: Scope, name: str, row: int, depth: int, term) -> None:
        """Record a binding of `name` in `scope` at `row`; `depth` 0 when it runs whenever
        the scope does, > 0 inside a block (made -the block's last row here), or already
        -R for a loop's target (see `_chosen`)."""
        self._record(scope, name, row, self._block_depth(depth), term)

    def _block_depth(self, depth: int) -> int:
        """A binding's depth as `_chosen` reads it: -the last row of the block being
        collected for one inside a block, else as given."""
        return -self._ends[-1] if depth > 0 and self._ends else depth

    def _record(self, scope: Scope, name: str, row: int, depth: int, term) -> None:
        if term is not None:
            self.bindings.setdefault(scope.key, {}).setdefault(name, []).append(self._entry(row, depth, term))

    def _entry(self, row: int, depth: int, term) -> tuple:
        # (only arms below the binding matter: `_chosen` asks `_inside` for uses after
        # it; an `elif` chain's earlier arms made the spans grow with its length)
        spans = tuple([span for span in self._elsewhere if span[1] >= row]) if self._elsewhere else ()
        if self._guards and not self._open_blocks:
            # in guarded arms only (`if task == "predict": model = Bench(model)`): where every
            # guard holds the binding surely runs, and replaces what the name held before
            return (row, depth, term, self._guards, spans, True)
        if spans:
            return (row, depth, term, self._guards, spans)
        return (row, depth, term, self._guards) if self._guards else (row, depth, term)

    def _stored_before(self, expr: ast.Attribute, scope: Scope, row: int):
        """The term of `self.x` read at `row` of a method that stored `self.x` before, on
        every path to the read (`self.teacher = [hf_model]` then, in the same branch,
        `torch.compile(self.teacher[0])`: not what the other branch or another method
        stores). None (the attribute as every method stores it) where no such store
        reaches the read, or where the method calls a method of `self` or passes `self`
        on between the store and the read (`self.model = None; self.load()`)."""
        if type(expr.value) is not _Name or scope.self_kind != "self" or not scope.params \
                or expr.value.id != scope.params[0]:
            return None
        entries = self._self_stores.get((scope.key, expr.attr))
        if not entries:
            return None
        chosen, always = _reaching(entries, row)
        if not always:
            return None  # a path to the read that stores nothing here
        calls = self._self_calls.get(scope.key)
        if calls is None:
            calls = self._self_calls[scope.key] = _self_call_rows(self._bodies.get(scope.key, ()), scope.params[0])
        at = bisect.bisect_right(calls, chosen[-1][0])
        if at < len(calls) and calls[at] < row:
            return None
        terms = tuple(sorted({e[2] for e in chosen}, key=repr))
        return terms[0] if len(terms) == 1 else (UNION, terms)

    _guards: tuple = ()  # (parameter, constant, equal) of the `if`s around a binding
    # (first row, last row) of the other arms of the `if`s and `match`es around a binding:
    # a use there never sees it (`if jit == "trace": m.forward = f` ... `elif jit ==
    # "script": torch.jit.script(m)` scripts the class's own forward)
    _elsewhere: tuple = ()
    _loops = 0  # loops around the statements collected: there one arm's binding reaches the next turn's other arm
    # blocks around the statements collected that run or not for reasons other than a
    # guard on a parameter (loops, `try`, `match`, an `if` on anything else)
    _open_blocks = 0

    def _guard(self, test, scope: Scope):
        """`if kind == "warp":` on a parameter: the branch runs only for that value;
        `if train:` (`if not train:`) on one: only for a true (false) value
        (`load_model(cfg, stage, train=False)` builds the inference model: bench/dev50)."""
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        flag = test.operand if negated else test
        if isinstance(flag, ast.Name) and flag.id in scope.params:
            return (flag.id, TRUTH, not negated)
        if isinstance(flag, ast.Call) and isinstance(flag.func, ast.Name) and flag.func.id == "isinstance" \
                and "isinstance" not in scope.bound and len(flag.args) == 2 and isinstance(flag.args[0], ast.Name) \
                and flag.args[0].id in scope.params:
            # `if not isinstance(module, nn.Linear): return module` (lingua's fp8 conversion,
            # applied to whole models): the rest runs only for an instance of those classes
            kinds = flag.args[1].elts if isinstance(flag.args[1], ast.Tuple) else [flag.args[1]]
            classes = tuple(self.term(k, scope, None) for k in kinds)
            if classes and all(c is not None for c in classes):
                return (flag.args[0].id, (ISA, classes), not negated)
            return None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq)):
            left, right = test.left, test.comparators[0]
            if isinstance(left, ast.Constant):
                left, right = right, left
            if isinstance(left, ast.Name) and left.id in scope.params and isinstance(right, ast.Constant) and isinstance(right.value, str):
                return (left.id, right.value, isinstance(test.ops[0], ast.Eq))
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
            # `if device_ids is not None:` (nunif's `create_model(name, device_ids=None)`,
            # whose callers leave it out: bench/fresh_reads batch 17)
            left, right = test.left, test.comparators[0]
            if isinstance(left, ast.Constant):
                left, right = right, left
            if isinstance(left, ast.Name) and left.id in scope.params and isinstance(right, ast.Constant) and right.value is None:
                return (left.id, IS_NONE, isinstance(test.ops[0], ast.Is))
        return None

    def _exit_guards(self, stmt: ast.If, guard, scope: Scope) -> Optional[tuple]:
        """(guards of the body, guards of the rest of the block) for an `if` with no `else`
        whose body returns or raises: `if mask: return DETRsegm(detr)` (the rest only where
        `mask` is false); `if not isinstance(m, nn.Linear) or not keep(name): return m` (the
        rest only where every operand it can read failed; the body under none of them).
        None for any other `if`."""
        if not _leaves(stmt.body):
            return None
        if guard is not None:
            return (guard,), ((guard[0], guard[1], not guard[2]),)
        test = stmt.test
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            failed = [g for g in (self._guard(v, scope) for v in test.values) if g is not None]
            if failed:
                return (), tuple((g[0], g[1], not g[2]) for g in failed)
        return None

    def collect(self, body, scope: Scope, cls_attrs: Optional[str] = None) -> None:
        """Bindings, returns, self attributes and container stores of one scope."""
        saved = self._guards, self._elsewhere, self._loops, self._open_blocks
        self._guards, self._elsewhere, self._loops, self._open_blocks = (), (), 0, 0
        if scope.self_kind == "self":
            self._bodies[scope.key] = body
        try:
            self._block(body, scope, 0, cls_attrs)
        finally:
            self._guards, self._elsewhere, self._loops, self._open_blocks = saved

    def _block(self, body, scope: Scope, depth: int, cls_attrs) -> None:
        if depth > 0 and body:
            # a nested block: its bindings reach the rest of it unconditionally (`_chosen`
            # reads -its last row as their depth), and what follows it conditionally
            self._ends.append(_rows(body)[1])
            try:
                self._statements(body, scope, depth, cls_attrs)
            finally:
                self._ends.pop()
        else:
            self._statements(body, scope, depth, cls_attrs)

    def _statements(self, body, scope: Scope, depth: int, cls_attrs) -> None:
        guards = self._guards  # (an early return below guards the rest of this block only)
        try:
            self._statements_of(body, scope, depth, cls_attrs)
        finally:
            self._guards = guards

    def _statements_of(self, body, scope: Scope, depth: int, cls_attrs) -> None:
        for stmt in body:
            t = type(stmt)
            if t is ast.Assign:
                row = stmt.lineno
                self._statement_end = stmt.end_lineno or row
                if scope.self_kind == "self" and scope.params:
                    self._mark_prior_reads(stmt.targets, stmt.value, scope.params[0], row)
                value = None  # built once, on demand
                for target in stmt.targets:
                    value = value or self.term(stmt.value, scope, row)
                    self._assign(target, value, scope, row, depth, cls_attrs)
            elif t is ast.AnnAssign:
                row = stmt.lineno
                self._statement_end = stmt.end_lineno or row
                value = self.term(stmt.value, scope, row) if stmt.value is not None else None
                if value is not None:
                    declared = self.annotation_term(stmt.annotation, scope)
                    if declared is not None:
                        value = (ANNOTATED, value, declared)
                if value is None and cls_attrs is not None and isinstance(stmt.target, ast.Name):
                    # `unet: UNet2DConditionModel` in a class body (a dataclass field, a
                    # pipeline's declared component): an instance of the annotation
                    value = self.annotation_term(stmt.annotation, scope.parent or scope)
                if isinstance(stmt.target, ast.Name) and stmt.target.id in scope.bound:
                    ann = self.annotation_term(stmt.annotation, scope)
                    self.bind(scope, stmt.target.id, row, depth, value or ann)
                else:
                    self._assign(stmt.target, value, scope, row, depth, cls_attrs)
            elif t is ast.Return:
                if stmt.value is not None:
                    term = self.term(stmt.value, scope, stmt.lineno)
                    # guarded by flags and isinstance tests only: a flag counts only where a
                    # literal passes it (Resolver._argument), an instance only where every
                    # value is seen; a string a call passes may be a configuration's default
                    # the code overrides where the index does not read (CrazyAra's
                    # `get_default_model(train_config.model_type)`, bench/dev47)
                    guards = tuple(g for g in self._guards if g[1] == TRUTH or type(g[1]) is tuple)
                    if term is not None:
                        if guards:
                            term = (GUARDED, term, guards, scope.key)
                        self.returns.setdefault(scope.key, []).append(term)
            elif t is ast.Expr:
                call = stmt.value
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "register_modules"
                        and scope.self_kind == "self" and isinstance(call.func.value, ast.Name)
                        and scope.params and call.func.value.id == scope.params[0]):
                    # diffusers' `DiffusionPipeline.register_modules(unet=unet, vae=vae)`
                    # sets each keyword as an attribute of the pipeline
                    for keyword in call.keywords:
                        if keyword.arg:
                            value = self.term(keyword.value, scope, stmt.lineno)
                            if value is not None:
                                self._store_attr(scope.cls, keyword.arg, value, scope)
                    continue
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument":
                    self._option(call, scope, stmt.lineno)
                    continue
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.args:
                    if call.func.attr in ("append", "add", "insert", "extend", "update", "add_module", "register_module"):
                        loc = self._location(call.func.value, scope)
                        arg = call.args[-1]
                        if loc is not None and call.func.attr == "update" and isinstance(arg, ast.Dict) \
                                and all(k is not None for k in arg.keys):
                            # `self.transformer.update({"blocks": nn.ModuleList(blocks)})`: a
                            # store under each key, as `d["blocks"] = ...` would be
                            for k, v in zip(arg.keys, arg.values):
                                value = self.term(v, scope, stmt.lineno)
                                if value is not None:
                                    self.stores.append((loc, value, self._key(k, scope, stmt.lineno)))
                        elif loc is not None:
                            value = self.term(arg, scope, stmt.lineno)
                            if call.func.attr in ("extend", "update"):
                                value = (ITEM, value, None) if value is not None else None
                            if value is not None:
                                key = None
                                if call.func.attr in ("add_module", "register_module") and len(call.args) == 2:
                                    key = self._key(call.args[0], scope, stmt.lineno)
                                self.stores.append((loc, value, key))
            elif t in (ast.For, ast.AsyncFor):
                if isinstance(stmt.target, (ast.Name, ast.Tuple, ast.List)):
                    it = self.term(stmt.iter, scope, stmt.lineno)
                    # `for name, model in pairs:` unpacks each element like an assignment
                    # the body always sees this binding, not an earlier one of the name; after
                    # the loop it is one of the values (the loop may not have run): a depth of
                    # -last row says so to `_chosen`
                    end = getattr(stmt, "end_lineno", None) or stmt.lineno
                    self._assign(stmt.target, (ITEM, it, None) if it else None, scope, stmt.lineno, -end, None)
                self._loops += 1
                self._open_blocks += 1
                self._block(stmt.body, scope, depth + 1, cls_attrs)
                self._loops -= 1
                self._block(stmt.orelse, scope, depth + 1, cls_attrs)
                self._open_blocks -= 1
            elif t is ast.If:
                guard = self._guard(stmt.test, scope)
                exit_guards = self._exit_guards(stmt, guard, scope) if not stmt.orelse and not self._loops else None
                opened = 1 if guard is None else 0  # (an arm of a guard on a parameter is no open block)
                if exit_guards is not None:
                    # an `if` that returns: its body runs under its test, the rest of the
                    # block only where the test failed
                    outer = self._guards
                    self._guards = outer + exit_guards[0]
                    self._open_blocks += opened
                    self._block(stmt.body, scope, depth + 1, cls_attrs)
                    self._open_blocks -= opened
                    self._guards = outer + exit_guards[1]
                    continue
                outer, around = self._guards, self._elsewhere
                if guard is not None:
                    self._guards = outer + (guard,)
                if stmt.orelse and not self._loops:
                    self._elsewhere = around + (_rows(stmt.orelse),)
                self._open_blocks += opened
                self._block(stmt.body, scope, depth + 1, cls_attrs)
                if guard is not None:
                    self._guards = outer + ((guard[0], guard[1], not guard[2]),)
                if not self._loops:
                    self._elsewhere = around + (_rows(stmt.body),)
                self._block(stmt.orelse, scope, depth + 1, cls_attrs)
                self._open_blocks -= opened
                self._guards, self._elsewhere = outer, around
                if cls_attrs is None and not self._loops:
                    self._settle_isinstance(stmt, scope, depth)
            elif t is ast.Import or t is ast.ImportFrom:
                # a def's imports are its bindings; the module's are read through the names
                # table, except a name the module also assigns (`import model.detector`
                # then `model = model.detector.Detector()`): there the import is the binding
                # the assignment's right side reads
                for name, dotted in self.names.import_bindings(stmt):
                    if scope.key or name in self.module_bound:
                        self.bind(scope, name, stmt.lineno, depth, (G, dotted))
            elif t is ast.While:
                self._loops += 1
                self._open_blocks += 1
                self._block(stmt.body, scope, depth + 1, cls_attrs)
                self._loops -= 1
                self._block(stmt.orelse, scope, depth + 1, cls_attrs)
                self._open_blocks -= 1
            elif t in (ast.With, ast.AsyncWith):
                # `with Trainer(cfg) as trainer:` binds what `__enter__` returns (a project
                # class's `return self`: the instance; molmo's compiled `trainer.train_batch`,
                # bench/dev31)
                for item in stmt.items:
                    if item.optional_vars is not None:
                        context = self.term(item.context_expr, scope, stmt.lineno)
                        entered = (CALL, (ATTR, context, "__enter__"), (), ()) if context is not None else None
                        self._assign(item.optional_vars, entered, scope, stmt.lineno, depth, cls_attrs)
                # a `with` body runs whenever the statement does: `with init_empty_weights():
                # vae = VAE.from_config(c)` replaces what `vae` held, as an assignment would
                self._statements(stmt.body, scope, depth, cls_attrs)
            elif t is ast.Try or t.__name__ == "TryStar":
                self._open_blocks += 1
                self._block(stmt.body, scope, depth + 1, cls_attrs)
                for handler in stmt.handlers:
                    self._block(handler.body, scope, depth + 1, cls_attrs)
                self._block(stmt.orelse, scope, depth + 1, cls_attrs)
                self._block(stmt.finalbody, scope, depth + 1, cls_attrs)
                self._open_blocks -= 1
                if cls_attrs is None:
                    self._settle_try(stmt, scope, depth)
            elif t.__name__ == "Match":
                around = self._elsewhere
                self._open_blocks += 1  # (restored below)
                for case in stmt.cases:
                    if not self._loops:
                        self._elsewhere = around + tuple(_rows(c.body) for c in stmt.cases if c is not case)
                    self._block(case.body, scope, depth + 1, cls_attrs)
                self._elsewhere = around
                self._open_blocks -= 1

    def _option(self, call: ast.Call, scope: Scope, row: int) -> None:
        """`parser.add_argument("--model-name", default="unet", choices=[...])`: the option
        `args.model_name` of this file's `parse_args()` (Resolver._parsed_args). Flags whose
        action stores no string (`store_true`, `count`, ...) hold no model name: left out,
        so that reading them stays unknown."""
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        action, nargs = keywords.get("action"), keywords.get("nargs")
        if action is not None and not (isinstance(action, ast.Constant) and action.value == "store"):
            return
        if nargs is not None and not (isinstance(nargs, ast.Constant) and nargs.value == "?"):
            return  # a list of strings
        dest = keywords.get("dest")
        if dest is not None:
            name = dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else None
        else:
            flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if len(flags) < len(call.args) or not flags:
                return
            # argparse's rule: the first long flag, else the first flag, dashes stripped
            name = next((f for f in flags if f.startswith("--")), flags[0]).lstrip("-").replace("-", "_")
        if not name or not name.isidentifier():
            return
        default = self.term(keywords["default"], scope, row) if "default" in keywords else None
        choices = self.term(keywords["choices"], scope, row) if "choices" in keywords else None
        self.options.setdefault(name, []).append((default, choices))

    def _settle_try(self, stmt, scope: Scope, depth: int) -> None:
        """After a `try` whose body assigns a name and whose every handler assigns it too
        (or leaves: raise, return), the name holds one of those values, never what it held
        before (open_clip's loader: `try: model = build(sd) except KeyError: model =
        build(sd2)` after a `model = torch.jit.load(path)` the next lines replace). Recorded
        as one binding at the statement's last row: the union of the assignments in it."""
        names = _definitely_assigned(stmt.body)
        for handler in stmt.handlers:
            if names and not _leaves(handler.body):
                names &= _definitely_assigned(handler.body)
        first, last = stmt.lineno, getattr(stmt, "end_lineno", None) or stmt.lineno
        bound = self.bindings.get(scope.key, {})
        for name in sorted(names - scope.globals):
            inside = [e for e in bound.get(name, ()) if first <= e[0] <= last]
            if inside and all(len(e) == 3 for e in inside):  # (none guarded or in another arm)
                self.bind(scope, name, last, depth, (UNION, tuple([e[2] for e in inside])))

    def _settle_isinstance(self, stmt: ast.If, scope: Scope, depth: int) -> None:
        """After `if not isinstance(x, C): <body>` whose body binds `x` (and whose `else`, if
        any, does not), `x` holds what it held before, narrowed to the instances of C, or
        what the body bound (SeedVR2's `if not isinstance(model, CompatibleDiT): model =
        CompatibleDiT(model)` before compiling it, bench/fresh_reads batch 15: the DiT and
        VAE its callers pass were taken as compiled). Recorded as one binding at the
        statement's last row, as `_settle_try` does. (A body that leaves instead narrows the
        reads after it: isinstance_narrowed_reads.)"""
        tests = list(isinstance_tests(self.names, stmt.test, False))
        if len(tests) != 1 or not isinstance(tests[0][0], ast.Name) or not tests[0][2]:
            return
        target, classes, _passes = tests[0]
        name = target.id
        if name not in _definitely_assigned(stmt.body) or name in _definitely_assigned(stmt.orelse) \
                or name in scope.globals or scope.self_kind and scope.params and name == scope.params[0]:
            return  # (`self` is read as the instance, never through bindings)
        before = self.name_term(name, scope, stmt.lineno)
        class_terms = tuple(t for t in (self.term(c, scope, None) for c in classes) if t is not None)
        if before is None or len(class_terms) != len(classes):
            return
        first, last = _rows(stmt.body)
        end = getattr(stmt, "end_lineno", None) or last
        inside = tuple(e[2] for e in self.bindings.get(scope.key, {}).get(name, ()) if first <= e[0] <= last)
        if not inside:
            return
        # (filtering only: the test makes no unseen value an instance)
        self.bind(scope, name, end, depth, (UNION, ((NARROW, before, class_terms, True, True),) + inside))

    def _mark_prior_reads(self, targets: list, value, self_name: str, row: int) -> None:
        """Mark the reads of `self.<x>` in `value` where a target stores `self.<x>`: they see
        the attribute before the statement (lambdas and defs in `value` run later: not
        entered)."""
        stored = {t.attr for t in targets if t.__class__ is _Attribute and t.value.__class__ is _Name
                  and t.value.id == self_name}
        if not stored:
            return
        for node in walk_scope([value]):
            if node.__class__ is _Attribute and node.attr in stored and node.value.__class__ is _Name \
                    and node.value.id == self_name:
                self._prior_reads[id(node)] = (node, row)

    def _assign(self, target, value, scope: Scope, row: int, depth: int, cls_attrs) -> None:
        if isinstance(target, ast.Name):
            if cls_attrs is not None:  # a class body: `model_cls = Net` is a class attribute
                if value is not None:
                    self._store_attr(cls_attrs, target.id, value, None)
                return
            if target.id in scope.globals and self.module_scope is not None:
                # `global decoder` then `decoder = Decoder()`: the module's name, bound
                # whenever the def runs (a branch of what the module's name may hold)
                self._record(self.module_scope, target.id, row, 1, value)
                return
            self.bind(scope, target.id, row, depth, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    elt = elt.value
                    i = None
                self._assign(elt, (ITEM, value, i) if value is not None else None, scope, row, depth, cls_attrs)
        elif isinstance(target, ast.Attribute):
            base = target.value
            if scope.self_kind and isinstance(base, ast.Name) and scope.params and base.id == scope.params[0]:
                # `self.x = v`, and `cls.x = v` in a classmethod (unittest's `setUpClass`):
                # an attribute every instance reads
                if value is not None:
                    self._store_attr(scope.cls, target.attr, value, scope)
                    if scope.self_kind == "self":
                        # (at the statement's last row: a read in its own value, on a line
                        # below its first, comes before the store)
                        self._self_stores.setdefault((scope.key, target.attr), []).append(
                            self._entry(max(row, self._statement_end), self._block_depth(depth), value))
            elif isinstance(base, ast.Name) and base.id in scope.bound and value is not None \
                    and base.id not in scope.globals and _patches(target.attr, value):
                # `model_g.forward = infer_forward`: from here on the name holds the patched
                # instance (a binding of the name, so a branch gives the union)
                self.bind(scope, base.id, row, depth, (PATCH, self.term(base, scope, row), target.attr, value))
            elif value is not None:
                # `self.model.inference_model = deepcopy(...)`, `trainer.model = Net()`: an
                # attribute set from outside its class, a store keyed by the attribute's
                # name with the receiver's term (Resolver._set_from_outside matches it)
                receiver = self.term(base, scope, row)
                if receiver is not None:
                    self.stores.append((("F", target.attr), value, (receiver, scope.key, row, self._loops > 0)))
        elif isinstance(target, ast.Subscript):
            loc = self._location(target.value, scope)
            if loc is not None and value is not None:
                self.stores.append((loc, value, self._key(target.slice, scope, row)))

    def _store_attr(self, cls: str, attr: str, value, method: Optional[Scope]) -> None:
        self.attrs.setdefault(cls, {}).setdefault(attr, []).append(value)
        self.attr_methods.setdefault(cls, {}).setdefault(attr, []).append(
            method.key.rpartition(".")[2] if method is not None else None)

    def _key(self, expr, scope: Scope, row):
        """The key a store writes under: a string constant, or the term of a name
        (`MODELS[name] = cls` in a registering decorator), else None."""
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return (CONST, expr.value)
        if isinstance(expr, ast.Name):
            return self.term(expr, scope, row)
        return None

    def _location(self, expr, scope: Scope):
        """Where a container lives: a module-level name, a local of a def (`layers = []`
        then `layers.append(Block())`) or a `self` attribute."""
        if isinstance(expr, ast.Name):
            owner = self._owner(expr.id, scope)
            if owner is not None:
                return ("L", self.dotted(owner.key), expr.id)
            if expr.id in self.module_bound:
                return ("G", self.dotted(expr.id))
            if self._is_global_name(expr.id, scope):
                dotted = self.names.resolve_name(expr.id)
                if dotted and "." in dotted and not dotted.startswith(("builtins.", "torch.")):
                    return ("I", dotted)  # another module's container (`from registry import MODELS`)
            return None
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            if scope.self_kind and scope.params and expr.value.id == scope.params[0]:
                return ("A", scope.cls, expr.attr)
        return None

    def _owner(self, name: str, scope: Scope) -> Optional[Scope]:
        """The def whose local `name` is where it is used (None: the module's, or a global)."""
        s = scope
        while s is not None and s.key != "":
            if name in s.bound:
                return s
            s = s.parent
        return None


# -- per project: evaluating terms -------------------------------------------------
# The answers are the least fix-point of the evaluation equations, computed by
# tabling: every (file, term, bound parameters) question is answered once and
# remembered; a question that reaches itself again (`m = wrap(m)`, recursive
# factories, a parameter passed around a cycle of calls) is iterated from the empty
# set until its answer stops growing, and the answers computed inside that cycle are
# kept only once it has settled (Tarjan-style lowlinks tell which those are). So an
# answer does not depend on which site asked first, nor on a step budget.
# Only a cycle's lowest question takes rounds: a question inside it that is asked
# again before it has its answer leaves its answer as the seed of the next round, and
# says whether it grew (`_dirty`). Rounds taken by every question of a cycle nested
# k deep cost up to 2^k evaluations of the innermost one (4,097 of one term of
# transformers 4.44.2's `from_pretrained`); seeded rounds at the lowest one cost k.
# An answer keeps one unknown member and at most MAX_CONTAINERS containers apart
# (`_bounded`): more only cost (each measured needed on the same tree, bench/results.md).
# Two bounds remain, as guards against pathological inputs only (a value nested
# deeper at every round of a loop, `x = [x]`): how deep questions may nest, and how
# many rounds one cycle may take. Each time either cuts, `cuts` counts it (corpus M: 1,
# at 400 as at 800). transformers 5.23 nests 400-800 deep since a base class's `self`
# may be a subclass's (OPEN_SELF): at 400, 925 of its questions were cut (33 before
# OPEN_SELF), at 800, 2. At ~6 Python frames a level that is inside the 20,000 the
# resolver allows itself, and its whole `check -j 1` ran in a thread of a 3 MB stack
# (the main thread has 8 MB).
MAX_NESTED = 800
MAX_ROUNDS = 32
MAX_NESTING = 4
MAX_CONTAINERS = 16  # containers one answer keeps apart (_merged_containers)


def _widen(values: frozenset, depth: int, seen: Optional[dict] = None) -> frozenset:
    """`values` with the elements of containers nested deeper than `depth` forgotten;
    `values` itself (the same object) where nothing is that deep. Values share their
    parts, so each part is widened once per call (`seen`), not once per path to it."""
    for v in values:
        if v.elems:
            break
    else:  # (a loop: `any()` over a generator costs more, and this is asked ~100k times)
        return values
    if seen is None:
        seen = {}
    key = (id(values), depth)
    got = seen.get(key)
    if got is not None:
        return got[1]
    out = []
    changed = False
    for v in values:
        if v.elems:
            if depth <= 0:
                elems = tuple(EMPTY for _ in v.elems)
            else:
                elems = tuple(_widen(e, depth - 1, seen) for e in v.elems)
            if any(a is not b for a, b in zip(elems, v.elems)):
                v = v._replace(elems=elems)
                changed = True
        out.append(v)
    result = frozenset(out) if changed else values
    seen[key] = (values, result)  # (`values` kept alive: its id stays its own)
    return result


def _bounded(values: frozenset, levels: int = 2) -> frozenset:
    """`values` with one unknown member at most, and at most MAX_CONTAINERS containers.
    An unknown member makes a site partial whatever its reason, and the reason shown is
    the first by `repr` (regions `_why_not`): the others only cost. In transformers
    4.44.2, 195 image-processor parameters "that no call passes a known value" reach
    `get_size_dict(size)`, each with its own reason."""
    unknowns = [v for v in values if v.kind == UNKNOWN]
    if len(unknowns) > 1:
        values = frozenset([v for v in values if v.kind != UNKNOWN] + [min(unknowns, key=repr)])
    return values if len(values) <= MAX_CONTAINERS else _merged_containers(values, levels)


def _merged_containers(values: frozenset, levels: int) -> frozenset:
    """`values` with its containers merged into one when there are more than
    MAX_CONTAINERS of them: one unordered container of every element. A parameter
    that calls all over a project pass their own literal dicts to (transformers' image
    processors pass ~550 `size` dicts to `get_size_dict`) would otherwise make every
    answer and every binding built from it that large."""
    containers = [v for v in values if v.kind == "seq"]
    if len(containers) <= MAX_CONTAINERS:
        return values
    elements: set = set()
    for v in containers:
        for e in v.elems:
            elements |= e
    # the elements are answers, bounded when they were made: only the union is new, and
    # it is bounded `levels` deep (values share their parts: a walk down every level
    # would visit a shared part once per path to it)
    elements = frozenset(elements)
    merged = Value("seq", None, (_bounded(elements, levels - 1) if levels > 1 and len(elements) > 1 else elements,), False)
    return frozenset([v for v in values if v.kind != "seq"] + [merged])


def _refs(values) -> list:
    return sorted(values, key=repr)


class _Question:
    """One question being answered: its position on the stack, the open question of
    lowest position its answer depends on (`low`, itself when none), and its answer so
    far. A question that closes while depending on one below it keeps pointing there,
    so answers that depended on it find the question they really wait for."""

    __slots__ = ("index", "low", "approx", "reentered", "log_start", "closed")

    def __init__(self, index: int, log_start: int):
        self.index = index
        self.low = self
        self.approx = EMPTY
        self.reentered = False
        self.log_start = log_start
        self.closed = False

    def waits_for(self) -> "_Question":
        q = self.low
        while q.closed:
            q = q.low
        return q


class _Env(dict):
    """Bound parameters ((scope, index) -> values, "self" -> receivers), with its key."""

    key = None


class Resolver:
    """Evaluates terms across the files of a `regions.ProjectIndex`."""

    def __init__(self, index):
        import sys
        import weakref

        # the index owns its resolver: a weak link back, so an index (one per file in
        # pass 1) is freed without the cyclic GC
        self.index = weakref.proxy(index)
        self.why: list[str] = []  # reasons collected by the last evaluations
        self._memo: dict = {}  # settled answers: key -> (values, reasons)
        self._reads_memo: dict = {}  # (summary id, term) -> env keys it may read (_reads)
        self._open: dict = {}  # key -> _Question, for the questions on the stack
        self._stack: list = []
        # answers computed inside a cycle that has not settled yet: key -> (values,
        # reasons, low); `_log` lists them in order, so a new round can drop them
        self._pending: dict = {}
        self._log: list = []
        self._callees: dict = {}  # call name -> its calls by callee (_calls_by_callee)
        self._hydra_keys: dict = {}  # class dotted -> keys of the YAML entries that build it (_configured_texts)
        self._callees_this_round: dict = {}  # the same, from provisional answers
        self._through_busy: set = set()  # (def, keyword) whose `**kwargs` callers are being asked
        # _widen's answers while a question is open (its parts recur round after round)
        self._widened: dict = {}
        # whether an answer inside the open cycle grew past what a question of the cycle
        # was given for it: the cycle's lowest question takes another round
        self._dirty = False
        self._seeds: dict = {}  # key -> its answer in an earlier round of the open cycle (_drop_pending)
        self.cuts = 0  # how often a guard (MAX_NESTED, MAX_ROUNDS) cut an answer short
        self._enums: dict = {}  # class dotted -> _enum_members (None: no Enum)
        self.evaluations = 0  # terms evaluated (each round of a cycle counts again)
        self._made: dict = {}  # Value.made -> (summary, env) of the call that built the instance
        self._env_ids: dict = {}  # env key -> its number in Value.made (_instance)
        self._open_selfs: dict = {}  # (class, method) -> _open_self
        self._override_subs: dict = {}  # (class, method, name) -> the subclasses _overrides follows
        self._nodes = None  # the project's ComfyUI nodes (node_graph.NodeGraph), made when first asked
        if sys.getrecursionlimit() < 20_000:  # questions nest ~6 Python frames deep each
            sys.setrecursionlimit(20_000)

    def values(self, term, summary, env=None, depth: int = 0) -> frozenset:
        if term is None:
            return EMPTY
        if env:
            env = self._restricted(env, term, summary)
        if env:
            env_key = env.key if type(env) is _Env else None
            if env_key is None:
                env_key = _env_key(env)
                if type(env) is _Env:
                    env.key = env_key
        else:
            env_key = None
        key = (id(summary), term, env_key)
        hit = self._memo.get(key)
        if hit is not None:
            if hit[1]:
                self.why.extend(hit[1])
            return hit[0]
        stack = self._stack
        pending = self._pending.get(key)
        if pending is not None:
            if pending[1]:
                self.why.extend(pending[1])
            waits = pending[2].waits_for()
            if waits.index < stack[-1].low.index:
                stack[-1].low = waits
            return pending[0]
        question = self._open.get(key)
        if question is not None:  # a cycle: its answer so far; the loop below completes it
            question.reentered = True
            if question.index < stack[-1].low.index:
                stack[-1].low = question
            return question.approx
        if len(stack) >= MAX_NESTED:
            self.cuts += 1
            return EMPTY
        question = _Question(len(stack), len(self._log))
        seed = self._seeds.get(key)
        if seed is not None:
            question.approx = seed
        stack.append(question)
        self._open[key] = question
        said = len(self.why)
        rounds = 0
        outer_dirty = self._dirty
        self._dirty = False
        dirty = False
        try:
            while True:
                self.evaluations += 1
                result = self._values(term, summary, env or {}, depth + 1)
                if seed is not None:
                    result = result | seed
                changed = False
                if question.reentered:
                    # rounds only grow (some steps are not monotone), and from the third
                    # round containers nest at most MAX_NESTING deep (`x = [x]` would
                    # nest one more each round)
                    result = result | question.approx
                    if rounds >= 2 or seed is not None:
                        result = _widen(result, MAX_NESTING, self._widened)
                    changed = result != question.approx
                if question.low is not question:
                    # a cycle through a question below: that question's rounds bring this
                    # one back, seeded with this answer; they go on while it grows
                    dirty = changed or self._dirty
                    break
                if changed or self._dirty:
                    rounds += 1
                    if rounds < MAX_ROUNDS:
                        question.approx = result
                        question.reentered = False
                        self._dirty = False
                        del self.why[said:]
                        self._drop_pending(question.log_start)
                        continue
                    self.cuts += 1
                break
        finally:
            self._dirty = outer_dirty or dirty
            stack.pop()
            del self._open[key]
            question.closed = True
            if not stack:
                self._seeds.clear()
                self._callees_this_round.clear()
                self._widened.clear()
        if len(result) > 1:
            result = _bounded(result)
        why = tuple(self.why[said : said + 1])  # the index reports the first reason only
        if question.low is question:  # settled: it and what it waited for
            for k in self._log[question.log_start:]:
                entry = self._pending.pop(k, None)
                if entry is not None:
                    self._memo[k] = entry[:2]
            del self._log[question.log_start:]
            self._memo[key] = (result, why)
        else:  # part of a cycle still open below: provisional until that one settles
            self._pending[key] = (result, why, question.low)
            self._log.append(key)
            if question.low.index < stack[-1].low.index:
                stack[-1].low = question.low
        return result

    def _restricted(self, env, term, summary):
        """`env` cut down to the bindings evaluating `term` can read: the answer is the
        same, and questions that differ only in parameters the term never reads (timm's
        1,600 `build_model_with_cfg(..., variant="resnet50")` calls) share one answer."""
        reads = self._reads(term, summary)
        if reads is None:
            return env
        if not reads:
            return None
        if len(reads) >= len(env) and all(k in reads for k in env):
            return env
        cut = _Env()
        for k in reads:
            got = env.get(k)
            if got is not None:
                cut[k] = got
        return cut

    def _reads(self, term, summary):
        """The env keys (`(scope, index)` of a parameter, "self") that evaluating `term`
        in `summary` may read, or None when not known (a cycle of bindings: all of them).
        Only parameters, `self`/`cls` and branch guards read the env; a call evaluates its
        callee's body in an env of its own."""
        key = (id(summary), term)
        memo = self._reads_memo
        if key in memo:
            return memo[key]
        memo[key] = None  # in progress: a cycle reads what it may
        found = self._reads_uncached(term, summary)
        memo[key] = found
        return found

    def _reads_uncached(self, term, summary):
        tag = term[0]
        if tag == G or tag == CONST or tag == FLAG or tag == STARS or tag == STORED or tag == KWARGS or tag == VARARGS:
            return frozenset()
        if tag == PARAM:
            ann = self._reads(term[4], summary) if term[4] is not None else frozenset()
            return None if ann is None else ann | {(term[1], term[2])}
        if tag == SELF or tag == CLS:
            return frozenset({"self"})
        if tag == GUARDED:
            return None  # guarded on a parameter's value
        if tag == LOCAL:
            _, scope, name, row = term
            parts = []
            for entry in _chosen(summary.scopes.get(scope, {}).get(name) or [], row):
                if len(entry) > 3 and entry[3]:
                    return None  # guarded on a parameter's value
                parts.append(entry[2])
        elif tag == ITEM:
            parts = [term[1], term[2]] if type(term[2]) is tuple else [term[1]]
        elif tag == ATTR or tag == PRIOR or tag == ANN or tag == STAR:
            parts = [term[1]]
        elif tag == NARROW:
            parts = [term[1], *term[2]]
        elif tag == ANNOTATED:
            parts = [term[1], term[2]]
        elif tag == PATCH:
            parts = [term[1], term[3]]
        elif tag == CALL:
            parts = [term[1], *term[2], *(t for _k, t in term[3])]
        elif tag == SEQ or tag == UNION:
            parts = list(term[1])
        else:
            return None
        out: set = set()
        for part in parts:
            if part is None:
                continue
            got = self._reads(part, summary)
            if got is None:
                return None
            out |= got
        return frozenset(out)

    def _node_graph(self):
        if self._nodes is None:
            from .node_graph import NodeGraph

            self._nodes = NodeGraph(self)
        return self._nodes

    def _drop_pending(self, start: int) -> None:
        """Forget the provisional answers logged from `start` on, for a new round of the
        cycle they depend on; each is kept as the seed its question starts from when the
        round asks it again. Answers only grow from round to round, so a seed is below
        the settled answer, and a question inside the cycle that has already settled
        against it takes one evaluation, not rounds of its own: without seeds, cycles
        nested k deep evaluate the innermost up to 2^k times (4,097 evaluations of one
        term in transformers 4.44.2's `from_pretrained` machinery, bench/results.md)."""
        self._callees_this_round.clear()
        seeds = self._seeds
        for k in self._log[start:]:
            entry = self._pending.pop(k, None)
            if entry is not None:
                seeds[k] = entry[0]
        del self._log[start:]

    def _values(self, term, summary, env, depth) -> frozenset:
        tag = term[0]
        if tag == G:
            return self._global(term[1], summary, depth)
        if tag == LOCAL:
            return self._local(summary, term[1], term[2], term[3], env, depth)
        if tag == PARAM:
            _, scope, index, name, ann = term
            bound = env.get((scope, index))
            if bound is not None:
                return bound
            declared = self.values(ann, summary, env, depth) if ann is not None else EMPTY
            if any(v.dotted in self.index.defs and not self.index.is_abstract(v.dotted) for v in declared):
                # `model: Transformer`: an instance of the annotation; which ones its callers
                # build is asked only where an attribute of it is read (`_made_env`): asking
                # every annotated parameter's callers costs minutes on transformers
                made = ("param", id(summary), scope, index, name)
                self._made.setdefault(made, (summary, None))
                return frozenset(v._replace(made=made) if v.kind == "inst" and v.dotted in self.index.defs else v
                                 for v in declared)
            passed, called = self._passed_by_callers(summary, scope, index, name, depth)
            if passed:
                return passed
            if not called:  # a ComfyUI node's method: ComfyUI calls it with other nodes' outputs
                fed = self._node_graph().fed(summary, scope, name, depth)
                if fed is not None:
                    return fed
            if called and self._defaults_to_none(summary, scope, index):
                # every call the project makes leaves it None (`def smart_compile(func=None,
                # **kw)` used as `@smart_compile()`): it holds nothing, not an unknown
                return EMPTY
            # an annotation of another package's base class (`model: nn.Module`) says
            # what kind of thing is passed, not which one: the value is not seen
            shown = f" (annotated `{sorted(v.dotted for v in declared)[0]}`)" if declared else ""
            why = f"`{name}` is a parameter of `{scope}()`{shown} and no call of it passes a known value"
            self.why.append(why)
            return frozenset({Value(UNKNOWN, why)})
        if tag == SELF:
            got = env.get("self")
            if got is not None:
                return got
            held = self._def_value(term[1], instance=True)
            # which instance runs the method is not known: one of the class or of a project
            # subclass that runs it, whose overrides `_attr` adds
            made = self._open_self(term[1], term[2] if len(term) > 2 else None)
            return frozenset(v._replace(made=made) if v.kind == "inst" else v for v in held) if made else held
        if tag == CLS:
            got = env.get("self")
            if got is not None:
                return frozenset(Value("class", v.dotted) if v.kind == "inst" else v for v in got)
            return self._def_value(term[1], instance=False)
        if tag == PRIOR:
            out = set()
            for base in self.values(term[1], summary, env, depth):
                out |= self._attr(base, term[2], depth, prior=term)
            return frozenset(out)
        if tag == ATTR:
            out: set = set()
            inner = term[1]
            # where a read through a local name stands (a store after it in the same def,
            # outside loops, is not seen: `_set_from_outside`)
            read_of = unnarrowed(inner)
            read = (id(summary), read_of[1], read_of[3]) if read_of[0] == LOCAL and read_of[3] is not None else None
            for base in self.values(inner, summary, env, depth):
                out |= self._attr(base, term[2], depth, read)
            return frozenset(out)
        if tag == CALL:
            return self._call(term, summary, env, depth)
        if tag == NARROW:
            return self._narrowed(term, summary, env, depth)
        if tag == ANNOTATED:
            return self._annotated(self.values(term[1], summary, env, depth), lambda: self.values(term[2], summary, env, depth))
        if tag == ITEM:
            index = term[2]
            inner = term[1]
            if type(index) is int and inner is not None and inner[0] == SEQ and inner[2] and -len(inner[1]) <= index < len(inner[1]):
                # `a, b = x.half(), m.half()`: `b` is the second element alone (the other
                # elements' reasons would be given for it otherwise)
                element = inner[1][index]
                if element is not None and element[0] != STAR:
                    return self.values(element, summary, env, depth)
            keys = EMPTY
            if type(index) is tuple:  # a key: the constants it can be, or None (any)
                keys = self.values(index, summary, env, depth)
                index = _known_keys(keys)
            out = set()
            for base in self.values(term[1], summary, env, depth):
                if isinstance(index, frozenset) and base.kind in ("seq", "ext") and base.dotted \
                        and base.dotted.endswith(".__dict__"):
                    # `models.__dict__["vit_base"]` is `models.vit_base`, exported or not; a
                    # name a module of the project does not hold is nothing, not another package's
                    module = base.dotted[: -len(".__dict__")]
                    own = any(self.index.holds_module(c) for c in self.index.candidates(module, summary))
                    for name in sorted(index):
                        got = self.values((G, f"{module}.{name}"), summary, None, depth)
                        out |= {v for v in got if not (own and v.kind == "ext" and v.dotted == f"{module}.{name}")}
                    continue
                if base.kind == "yaml":
                    out |= self._yaml_read(base, index, depth)
                    continue
                if base.kind == "class":
                    members = self._enum_members(base.dotted)
                    if members is not None:  # `ModelName[name]`: the member of that name, any for a name not known
                        picked = sorted(members if not isinstance(index, frozenset) else index & members.keys())
                        if picked:
                            out.add(Value("member", base.dotted, keys=tuple(picked)))
                        continue
                got = self._elements(base, index)
                out |= self._picked(got, keys, depth) if base.kind == "seq" and base.dotted else got  # (a module's namespace)
            return frozenset(out)
        if tag == SEQ:
            elems, ordered = [], term[2]
            for t in term[1]:
                if t is not None and t[0] == STAR:
                    inner = self.values(t[1], summary, env, depth)
                    elems.append(frozenset(e for v in inner for e in self._elements(v, None)))
                    ordered = False
                else:
                    elems.append(self.values(t, summary, env, depth))
            keys = term[3] if len(term) > 3 else None
            return frozenset({Value("seq", None, tuple(elems), ordered, keys)})
        if tag == UNION:
            out = set()
            for t in term[1]:
                out |= self.values(t, summary, env, depth)
            return frozenset(out)
        if tag == ANN:
            return self._instances_of(self.values(term[1], summary, env, depth))
        if tag == STAR:
            return self.values(term[1], summary, env, depth)
        if tag == VARARGS:
            # (what the callers pass on through `*args` is bound where a call is: _bind)
            return EMPTY
        if tag == CONST:
            return frozenset({Value("const", term[1])})
        if tag == FLAG:
            return frozenset({Value(FLAG, str(term[1]))})
        if tag == GUARDED:
            _, inner, guards, scope = term
            if env and not self._guards_hold(guards, summary, scope, env):
                return EMPTY  # a return the values this call passes do not reach
            return self.values(inner, summary, env, depth)
        if tag == SUPER:
            return self._super(term[1], term[2], env.get("self") if env else None, depth)
        if tag == UNSEEN:
            self.why.append(term[1])
            return frozenset({Value(UNKNOWN, term[1])})
        if tag == PATCH:
            return self._patched(term, summary, env, depth)
        if tag == FOREIGN:
            return frozenset(self._set_from_outside(term[1], term[2], depth, term[3]))
        if tag == STORED:
            return frozenset({self._stored_seq([s for loc in term[1] for s in self.index.stored(loc)], depth)})
        if tag == STARS:
            for module in reversed(term[1]):
                dotted = f"{module}.{term[2]}"
                if self.index.find_def(dotted, summary) is not None or self.index.find_global(dotted, summary) is not None:
                    return self._global(dotted, summary, depth)
            return EMPTY  # (or a builtin, or a name of another package's `*`)
        return EMPTY

    def _super(self, cls: str, attr: str, receivers, depth) -> frozenset:
        """`super().<attr>` in a method of `cls`, for each receiver (the instance or class
        the method runs on; an instance of `cls` when unknown): the first def of that
        name after `cls` in the receiver's MRO, bound to it; past the project's bases, an
        alternate constructor (`super().from_pretrained(...)` in a mixin's classmethod,
        surya: bench/dev9) builds the receiver's class, as `_attr` reads one inherited
        from another package."""
        out: set = set()
        for receiver in receivers or (Value("inst", cls),):
            if receiver.kind not in ("inst", "class") or not receiver.dotted:
                continue
            mro = self.index.mro(receiver.dotted)
            after = mro[mro.index(cls) + 1:] if cls in mro else self.index.mro(cls)[1:]
            for owner in after:
                found = self.index.defs.get(f"{owner}.{attr}")
                if found is not None:
                    out.add(Value("bound", found[0].dotted(found[1].qualname), (frozenset({receiver}),)))
                    break
            else:
                if receiver.kind == "class" and _is_alternate_constructor(attr) and self.index.leaves_project(receiver.dotted):
                    out.add(receiver)
        return frozenset(out)

    def _patched(self, term, summary, env, depth) -> frozenset:
        """The values of `obj` after `obj.<attr> = value`: each instance (or unseen value)
        with the attribute replaced. A bound method stored there keeps its receivers
        without their own patches, so a patch in a loop does not nest round after round."""
        _, base_term, attr, value_term = term
        stored = frozenset(
            v._replace(elems=(frozenset(r._replace(patched=None) if r.patched else r for r in v.elems[0]),))
            if v.kind == "bound" and any(r.patched for r in v.elems[0]) else v
            for v in self.values(value_term, summary, env, depth))
        out = set()
        for base in self.values(base_term, summary, env, depth):
            if base.kind in ("inst", UNKNOWN):
                attrs = dict(base.patched or ())
                attrs[attr] = stored
                base = base._replace(patched=tuple(sorted(attrs.items(), key=lambda kv: kv[0])))
            out.add(base)
        return frozenset(out)

    # -- names -------------------------------------------------------------------
    def _def_value(self, dotted: str, instance: bool) -> frozenset:
        found = self.index.defs.get(dotted)
        if found is None:
            return frozenset({Value("inst" if instance else "ext", dotted)})
        kind = found[1].kind
        if kind == "class":
            return frozenset({Value("inst" if instance else "class", dotted)})
        return frozenset({Value("func", dotted)})

    def _narrowed(self, term, summary, env, depth) -> frozenset:
        """The instances of `term`'s values that the isinstance guard lets through; a
        value it cannot tell about (not an instance of a project class, a base outside
        the project) stays."""
        inner, class_terms, admitted = term[1], term[2], term[3]
        held = self.values(inner, summary, env, depth)
        classes = {v.dotted for t in class_terms for v in self.values(t, summary, env, depth) if v.kind in ("class", "ext")}
        if not classes:
            return held
        filter_only = len(term) > 4  # a read's own test (TermBuilder narrowed_reads): what it lets through
        if filter_only and admitted and not all(c in self.index.defs or c in KNOWN_ROOTS or c.startswith("builtins.")
                                                for c in classes):
            # `if isinstance(model, DDP): torch.compile(model.module)`: the value model
            # sees through wrappers (DDP(m), torch.compile(m), `.module`, `._orig_mod`
            # hold m), so an instance of m may be what such a class wraps: kept
            return held
        kept = frozenset(v for v in held if v.kind != "inst" or self._is_instance(v.dotted, classes) in (None, admitted))
        if filter_only:
            return kept
        if admitted and (not held or any(v.kind == UNKNOWN for v in held)):
            # an unseen value the test admits is an instance of one of its project classes
            # or of their project subclasses (ZipVoice, bench/dev13: `for m in
            # model.modules(): if isinstance(m, RelPositionalEncoding): torch.jit.script(m)`)
            admits = self.index.classes_admitted(classes)
            if admits:
                return frozenset(v for v in kept if v.kind != UNKNOWN) | frozenset(Value("inst", c) for c in admits)
        return kept

    def _is_instance(self, dotted: str, classes: set) -> Optional[bool]:
        """Whether an instance of the project class `dotted` passes isinstance(_, classes):
        None when it cannot be told (not a project class, or a base outside the project
        that is not one of them)."""
        if dotted in classes:
            return True
        if not TORCH_MODULE.isdisjoint(classes):
            classes = classes | TORCH_MODULE  # `from torch.nn.modules.module import Module` is nn.Module
        chain = self.index.mro(dotted)
        if not chain:
            return None
        seen_outside = False
        for cls in chain:
            if cls in classes:
                return True
            owner = self.index.defs.get(cls)
            for base in owner[1].bases if owner is not None else ():
                if base in classes:
                    return True
                if base not in KNOWN_ROOTS and self.index.lookup(base, 0, owner[0]) is None:
                    seen_outside = True
        if seen_outside and all(c in self.index.defs for c in classes):
            return False  # a base from another package derives from none of the project's classes
        return None if seen_outside else False

    def _global(self, dotted: str, summary, depth) -> frozenset:
        found = self.index.find_def(dotted, summary)
        if found is not None:
            d_summary, info = found
            if info.method_kind == "class":
                # `ShapeVAE.from_pretrained`: a classmethod, maybe inherited, bound to the
                # class it is called on (its `cls`), not to the class that defines it
                owner = self.index.find_def(dotted.rpartition(".")[0], summary)
                if owner is not None and owner[1].kind == "class":
                    receiver = Value("class", owner[0].dotted(owner[1].qualname))
                    return frozenset({Value("bound", d_summary.dotted(info.qualname), (frozenset({receiver}),))})
            return self._def_value(d_summary.dotted(info.qualname), instance=False)
        glob = self.index.find_global(dotted, summary)
        if glob is not None:
            g_summary, name = glob
            return self._local(g_summary, "", name, None, {}, depth)
        owner, _, attr = dotted.rpartition(".")
        if attr == "__dict__" and owner:
            exported = self._module_dict(Value("ext", owner), depth, summary)
            if exported is not None:
                return frozenset({exported})
        if owner and attr:
            # `REGISTRY.get(name)` with REGISTRY imported from another module of the project
            # (`from pkg.registry import REGISTRY`): an attribute of what that module-level
            # variable holds. Where that gives nothing (another package's object) the chain
            # stays another package's, as before. An instance of a project class is left
            # out: the stores its methods read are kept per class, not per instance, and
            # fast-reid's and traiNNer's `Registry` instances (one per kind: models,
            # datasets, losses) then gave every registry's entries (bench/dev8, dev2)
            held = self.index.find_global(owner, summary)
            values = self._local(held[0], "", held[1], None, {}, depth) if held is not None else EMPTY
            if not any(v.kind == "inst" and v.dotted in self.index.defs for v in values):
                got = frozenset().union(*(self._attr(v, attr, depth) for v in values))
                if got:
                    return got
            elif attr in CONTAINER_GETTERS and held is not None:
                # `ARCH_REGISTRY.get(name)` on an instance of the project's own Registry
                # class: what the decorators registered into that variable (basicsr's
                # `@ARCH_REGISTRY.register()`, bench/dev27), not what the class's methods
                # store, which every registry instance shares
                location = ("G", held[0].dotted(held[1]))
                if self.index.stored(location):
                    registered = self._stored_seq(self.index.stored(location), depth)
                    return frozenset({Value("getter", owner, registered.elems, False, registered.keys)})
        if owner and attr:
            # `ModelName.TryOffDiff` and `ModelName.TryOffDiff.value`: a member of a project Enum
            for cls_dotted, member, rest in ((owner, attr, None), (owner.rpartition(".")[0], owner.rpartition(".")[2], attr)):
                found = self.index.find_def(cls_dotted, summary) if cls_dotted else None
                if found is not None and found[1].kind == "class":
                    cls_dotted = found[0].dotted(found[1].qualname)
                    if member in (self._enum_members(cls_dotted) or ()):
                        held = Value("member", cls_dotted, keys=(member,))
                        return frozenset({held} if rest is None else self._attr(held, rest, depth))
        if owner and attr and _is_alternate_constructor(attr):
            # `Net.from_pretrained`: an attribute of a project class its own defs do not hold
            found = self.index.find_def(owner, summary)
            if found is not None and found[1].kind == "class":
                got = self._attr(Value("class", found[0].dotted(found[1].qualname)), attr, depth)
                if got:
                    return frozenset(got)
        if summary is not None:
            # a module of the project (`import model.detector` bound to `model`): named as the
            # index knows it, read from the importing file, so that an attribute chain on
            # it later (`_attr`, which no longer knows that file) finds that file's sibling
            # and not another package's module of the same name
            module = self._imported_module(dotted, summary)
            if module is not None:
                return frozenset({Value("ext", module)})
            unparsed = self.index.unparsed_reason(dotted, summary)
            if unparsed is not None:
                self.why.append(unparsed)
                return frozenset({Value(UNKNOWN, unparsed)})
        return frozenset({Value("ext", dotted)})

    def _local(self, summary, scope: str, name: str, row, env, depth) -> frozenset:
        out: set = set()
        entries = summary.scopes.get(scope, {}).get(name) or []
        reaching = _reaching(entries, row)[0] if row is not None else None  # (latest first)
        for entry in reaching or entries:
            if len(entry) > 3 and entry[3] and env and not self._guards_hold(entry[3], summary, scope, env):
                continue  # a branch for another value of the parameter this call passes
            out |= self.values(entry[2], summary, env, depth)
            if reaching and len(entry) > 5 and env and self._guards_sure(entry[3], summary, scope, env):
                # (latest first) the arm this call takes binds the name: what it held before
                # does not reach here (effdet's `create_model(bench_task="predict")` returns
                # the DetBenchPredict, not the bare EfficientDet: bench/fresh_reads batch 18)
                break
        # a container: what is stored in it anywhere (a module-level one), or in its def
        location = ("G", summary.dotted(name)) if scope == "" else ("L", summary.dotted(scope), name)
        if self.index.stored(location):
            out |= self.values((STORED, (location,)), None, None, depth)
        return frozenset(out)

    @staticmethod
    def _param_index(summary, scope: str, name: str) -> Optional[int]:
        """The index of the parameter `name` a guard in `scope` tests (None: no parameter)."""
        params = summary.scopes.get(scope, {}).get(name) or ()
        return next((e[2][2] for e in params if e[2][0] == PARAM), None)

    def _guard_passed(self, summary, scope: str, name: str, env) -> Optional[frozenset]:
        """What this call passes for the parameter `name` a guard tests (None: not known)."""
        index = self._param_index(summary, scope, name)
        return env.get((scope, index)) if index is not None else None

    def _guards_sure(self, guards, summary, scope: str, env) -> bool:
        """Every guard surely holds for what this call passes: each constant or flag the
        guard tests is all the call passes (an isinstance guard is never sure here)."""
        for name, const, equal in guards:
            if const == IS_NONE:
                if not (equal and self._left_none(summary, scope, name, env)):
                    return False
                continue
            passed = self._guard_passed(summary, scope, name, env)
            if not passed or type(const) is tuple:
                return False
            if const == TRUTH:
                if not all(v.kind == FLAG and (v.dotted == "True") == equal for v in passed):
                    return False
                continue
            if any(v.kind != "const" for v in passed):
                return False
            known = {v.dotted for v in passed}
            if (known != {const}) if equal else (const in known):
                return False
        return True

    def _left_none(self, summary, scope: str, name: str, env) -> bool:
        """Whether this call surely leaves the parameter `name` to its `None` default."""
        index = self._param_index(summary, scope, name)
        return index is not None and (OMITTED_NONE, scope, index) in env

    def _guards_hold(self, guards, summary, scope: str, env) -> bool:
        for name, const, equal in guards:
            if const == IS_NONE:
                if not equal and self._left_none(summary, scope, name, env):
                    return False  # `if x is not None:` where the call leaves `x=None`
                continue
            passed = self._guard_passed(summary, scope, name, env)
            if type(const) is tuple:  # (ISA, class terms): `isinstance(param, classes)`
                if passed and all(v.kind == "inst" for v in passed):
                    classes = {c.dotted for t in const[1] for c in self.values(t, summary, None, 0)
                               if c.kind in ("class", "ext")}
                    told = {self._is_instance(v.dotted, classes) for v in passed} if classes else {None}
                    if told == {not equal}:
                        return False  # every instance passed fails the test the branch needs
                continue
            if const == TRUTH:
                if passed and all(v.kind == FLAG for v in passed) and {v.dotted == "True" for v in passed} == {not equal}:
                    return False  # `if train:` where every call passes False (or the reverse)
                continue
            if not passed or any(v.kind != "const" for v in passed):
                continue  # not known here: the branch may run
            known = {v.dotted for v in passed}
            if equal and const not in known:
                return False
            if not equal and known == {const}:
                return False
        return True

    def _stored_seq(self, stored, depth) -> Value:
        """A container holding what the project stores into it, each store under its
        key (a constant, or None when unknown)."""
        by_key: dict = {}
        for s_summary, term, key in stored:
            if isinstance(term, Value):
                got = frozenset({term})
            else:
                got = self.values(term, s_summary, None, depth)
            if key is not None and not isinstance(key, str):
                known = self.values(key, s_summary, None, depth)
                key = next(iter(known)).dotted if len(known) == 1 and next(iter(known)).kind == "const" else None
            by_key[key] = by_key.get(key, EMPTY) | got
        keys = tuple(sorted(by_key, key=lambda k: (k is None, k or "")))
        return Value("seq", None, tuple(by_key[k] for k in keys), False, keys if any(k is not None for k in keys) else None)

    # -- attributes and items -------------------------------------------------------
    def _open_self(self, cls_dotted: str, method: Optional[str]) -> Optional[tuple]:
        """Value.made of `self` in `method` of `cls_dotted` when which instance runs it is
        not known: None for a class no project class derives from; OPEN_SELF when every
        project subclass inherits the method, else (OPEN_SELF[0], method): only the
        subclasses that do run it (a subclass whose `__init__` replaces the base's, lingua's
        PackedRNNGenerator, never runs the base's `torch.compile(self.prefill)`: bench/dev2)."""
        key = (cls_dotted, method)
        if key not in self._open_selfs:
            admitted = self.index.classes_admitted({cls_dotted})
            if len(admitted) <= 1:
                made = None
            elif method is None or all(self._runs(sub, method, cls_dotted) for sub in admitted):
                made = OPEN_SELF
            else:
                made = (OPEN_SELF[0], method)
            self._open_selfs[key] = made
        return self._open_selfs[key]

    def _runs(self, sub: str, method: str, cls_dotted: str) -> bool:
        """Whether an instance of `sub` runs `cls_dotted`'s `method`: every class before it
        in the MRO of `sub` that defines one calls it on through `super()` (RepTok's
        encoders, whose `__init__` calls `super().__init__(...)`, bench/dev36)."""
        defs = self.index.defs
        for c in self.index.mro(sub):
            dotted = f"{c}.{method}"
            if dotted in defs:
                if c == cls_dotted:
                    return True
                if not self.index.extends_base(dotted):
                    return False
        return False

    def _overrides(self, base: Value, name: str, depth, read) -> set:
        """Attribute `name` of `self` in a method of class `base.dotted` where which
        instance runs it is not known (`base.made` from `_open_self`): the methods of that
        name its project subclasses define (the template method: nnU-Net's `self.network =
        self.build_network_architecture(...)`, which each trainer subclass overrides,
        bench/dev45), of the subclasses that run the method. A method more than
        MAX_OVERRIDES subclasses define is not followed into each."""
        defs, cls_dotted = self.index.defs, base.dotted
        method = base.made[1] if len(base.made) > 1 else None
        key = (cls_dotted, method, name)
        subs = self._override_subs.get(key)
        if subs is None:
            subs = self._override_subs[key] = [
                sub for sub in self.index.classes_admitted({cls_dotted}) if sub != cls_dotted and f"{sub}.{name}" in defs
                and (method is None or self._runs(sub, method, cls_dotted))]
        if not subs or len(subs) > MAX_OVERRIDES:
            return set()
        out: set = set()
        for sub in subs:
            out |= self._attr_of(Value("inst", sub), name, depth, read)
        return out

    def _subclass_stores(self, cls_dotted: str, name: str, depth) -> set:
        """What the project subclasses of `cls_dotted` store in attribute `name` in their
        own methods (an instance of each, as `self`)."""
        out: set = set()
        for sub in self.index.classes_admitted({cls_dotted}):
            if sub == cls_dotted:
                continue
            s_summary = self.index.defs[sub][0]
            for term, method in s_summary.attr_stores(sub, name):
                if method is not None:  # (a store in a method of the subclass itself)
                    out |= self.values(term, s_summary, _Env(self=frozenset({Value("inst", sub)})), depth)
        return out

    def _enum_members(self, cls_dotted: Optional[str]) -> Optional[dict]:
        """{member name: [(summary, term of its value)]} of a project class derived from an
        Enum (ENUM_BASES, through its project bases); None for any other class."""
        if not cls_dotted or cls_dotted not in self.index.defs:
            return None
        found = self._enums.get(cls_dotted, False)
        if found is False:
            found = None
            defs = self.index.defs
            if any(ENUM_BASES.intersection(defs[c][1].bases or ()) for c in self.index.mro(cls_dotted) if c in defs):
                summary = defs[cls_dotted][0]
                found = {}
                for name in summary.attrs.get(cls_dotted, {}):
                    # class-body stores (no method made them) of a public name
                    body = [(summary, t) for t, m in summary.attr_stores(cls_dotted, name) if m is None]
                    if body and not name.startswith("_"):
                        found[name] = body
            self._enums[cls_dotted] = found
        return found

    @contextmanager
    def reasons_apart(self):
        """Answer a side question (a class's rebound `forward`, a scripted module's
        attributes) without its reasons joining those of the site being resolved."""
        why, self.why = self.why, []
        try:
            yield
        finally:
            self.why = why

    def attribute(self, base: Value, name: str) -> frozenset:
        """What attribute `name` of `base` holds (the index asks it of a scripted module's
        attributes: ProjectIndex._submodule_forwards); its reasons stay apart."""
        with self.reasons_apart():
            return frozenset(self._attr(base, name, 0))

    def _attr(self, base: Value, name: str, depth, read=None, prior=None) -> set:
        """What attribute `name` of `base` holds; `prior`: the PRIOR term of a read in the
        value of a store of that attribute, whose own store is then no answer."""
        if base.kind == "inst" and _open(base):
            return self._attr_of(base, name, depth, read, prior) | self._overrides(base, name, depth, read)
        return self._attr_of(base, name, depth, read, prior)

    def _attr_of(self, base: Value, name: str, depth, read=None, prior=None) -> set:
        """`_attr` of `base`'s own class (its MRO), without the overrides of subclasses."""
        if base.patched:
            held = patched_attr(base, name)
            if held is not None:
                return set(held)
        kind = base.kind
        if kind == "yaml":
            if name in CONTAINER_GETTERS:
                return {Value("yaml-getter", base.dotted, keys=base.keys)}
            return self._yaml_read(base, frozenset({name}), depth)
        if kind == "func" and name == "__get__":
            return {Value("binder", base.dotted)}  # `f.__get__(obj)` binds f to obj
        if kind == UNKNOWN:
            return {base}  # what an unseen value holds is unseen too
        if kind == "member":
            if name == "name":
                return {Value("const", key) for key in base.keys}
            members = self._enum_members(base.dotted) or {}
            out: set = set()
            if name == "value":
                for key in base.keys:
                    for m_summary, term in members.get(key, ()):
                        out |= self.values(term, m_summary, None, depth)
            return out
        if kind == "class" and name in (self._enum_members(base.dotted) or ()):
            return {Value("member", base.dotted, keys=(name,))}  # `ModelName.TryOffDiff`
        if kind in ("inst", "class") and base.dotted in self.index.defs:
            if kind == "inst" and name in WRAPPED_ATTRS and not self.index.attr_terms(base.dotted, name):
                return {base}
            out: set = set()
            for c_summary, term in self.index.attr_terms(base.dotted, name):
                if prior is not None and _holds_term(term, prior):
                    continue  # the store the read is part of: not made yet when it reads
                for made in self._made_envs(base, self._reads(term, c_summary), depth) \
                        if base.made and not _open(base) else [{}]:
                    env = _Env(self=frozenset({base}))
                    env.update(made)
                    out |= self.values(term, c_summary, env, depth)
            classes = self.index.mro(base.dotted)
            if kind == "inst" and not (base.made and base.made[0] == "call") and name in self.index.receiver_stored_attrs():
                # a container each subclass fills for itself (ProjectIndex._self_setter_stores):
                # an instance not known to be built by a call of its own class (an annotated
                # parameter, `self` in a base's method) may be any subclass's
                classes = classes + [c for c in self.index.classes_admitted({base.dotted}) if c not in classes]
            locations = tuple(("A", c, name) for c in classes if self.index.stored(("A", c, name)))
            if locations:
                out |= self.values((STORED, locations), None, None, depth)
            if out:
                return out
            method = self.index.find_def(f"{base.dotted}.{name}", None)
            if method is None and kind == "class" and _is_alternate_constructor(name) and self.index.leaves_project(base.dotted):
                # `Transformer.from_pretrained(...)` with the classmethod inherited from
                # another package's base (diffusers' ModelMixin, transformers'
                # PreTrainedModel, Lightning's load_from_checkpoint): by convention it
                # builds an instance of the class it is called on
                return {base}
            if method is not None:
                m_summary, info = method
                dotted = m_summary.dotted(info.qualname)
                if info.method_kind == "property":
                    return set(self.returns_of(m_summary, info, _Env(self=frozenset({base})), depth))
                if info.method_kind == "static":
                    return {Value("func", dotted)}
                return {Value("bound", dotted, (frozenset({base}),))}
            if kind == "inst" and name in RETURNS_SELF:
                return {Value("selfret", None, (frozenset({base}),))}
            if kind == "inst" and (not base.made or _open(base)) and not name.startswith("_"):
                # an attribute the class reads but never sets to a value (at most None):
                # an instance that runs the read is one of the subclasses that set it
                # (Real3DPortrait's BaseTask compiles `self.model`, which each task's
                # `build_model` sets: bench/dev28)
                got = self._subclass_stores(base.dotted, name, depth)
                if got:
                    return got
            if kind == "inst" and not (name.startswith("__") and name.endswith("__")) \
                    and not self.index.attr_terms(base.dotted, name) and not locations:
                # stores made outside the class, asked only when the class neither stores
                # nor defines the name: its own store with an unseen value (`self.vae =
                # pipe.vae`) is no gap (StreamDiffusion's later `stream.vae = Engine(...)`
                # took a wrong target), and asking it of every attribute read took corpus
                # M's index from 2 s to 97 s. A term, so that the answer is kept (and a
                # cycle through it takes rounds) as any. Python looks a dunder such as
                # `__call__` up on the class, never on the instance.
                return set(self.values((FOREIGN, base, name, read), None, None, depth))
            return set()
        if kind == "inst":
            if base.elems is not None and (name in CONTAINER_GETTERS or name in CONTAINER_VIEWS):
                return self._container_method(base, name)  # `nn.ModuleDict(...).items()`
            if name in WRAPPED_ATTRS:
                return {base}
            if name in RETURNS_SELF:
                return {Value("selfret", None, (frozenset({base}),))}
            if base.keys is not None and name in base.keys:  # `SimpleNamespace(model=m).model`
                return set(base.elems[base.keys.index(name)])
            if base.dotted in ARGUMENT_PARSERS and name in PARSE_ARGS:
                return {Value("ext", f"{base.dotted}.{name}")}  # called: Resolver._parsed_args
            if base.dotted == PARSED_ARGS:  # an option this file does not add: as any configuration
                return {Value(UNKNOWN, describe_external("argparse.ArgumentParser", True))}
            if base.dotted and base.dotted.startswith(CONFIG_SOURCES + LOADERS):
                # `args.model` of `parser.parse_args()`: chosen by a configuration;
                # `torch.load(p).model`: what a checkpoint holds
                return {Value(UNKNOWN, describe_external(base.dotted, True))}
            if base.dotted in ACCELERATORS and name in ACCELERATOR_PREPARE:
                return {Value("ext", f"accelerate.Accelerator.{name}")}
            return set()
        if kind == "ext":
            if name == "__dict__":
                exported = self._module_dict(base, depth)
                if exported is not None:
                    return {exported}
            dotted = f"{base.dotted}.{name}"
            within = self._project_name(dotted)
            if within is not None:
                # a module bound to a name (`import model.detector` as a binding of `model`):
                # the chain goes on into the project
                return set(self._global(within, None, depth))
            return {Value("ext", dotted)}
        if kind == "seq" and (name in CONTAINER_GETTERS or name in CONTAINER_VIEWS):
            return self._container_method(base, name)
        if kind == "seq" and name == REGISTRY_BUILD:
            return {Value("builder", None, base.elems)}
        if kind == "seq" and base.keys is not None and name in base.keys:
            # what the project stored under a key of an `nn.ModuleDict` (its entries are its
            # attributes: `transformer.blocks` after `transformer.update({"blocks": ...})`)
            return set(base.elems[base.keys.index(name)])
        return set()

    def _timm_created(self, names: frozenset, depth, summary) -> set:
        """What `timm.create_model(name)` builds in a project whose defs `@register_model`
        into timm's registry: for a constant name the project's def of that name (a
        pretrained tag, `name.tag`, names the same def), else one of timm's own models; for a
        name not known here, any registered def of the project or one of timm's own. A
        registration runs when its module is imported: called from a script, only those of
        the modules the script imports are in the registry (one of several subprojects'
        `train.py`, bench/dev17)."""
        registered = self.index.registered_with(TIMM_REGISTER)
        out: set = set()
        wanted = [v.dotted.split(".", 1)[0] for v in names if v.kind == "const" and v.dotted]
        if not names or len(wanted) < len(names):
            program = self.index.program_modules(summary) if summary is not None else None
            if program is not None:
                # (a file no project module imports that imports no registration either is
                # a library's entry, called from outside: every registration counts; unless
                # it reads its own command line, a script: then only timm's own models are
                # registered when it runs, EfficientMod's benchmark_onnx.py, bench/dev30)
                own = {name: [d for d in defs if d[0].module in program] for name, defs in registered.items()}
                kept = {name: defs for name, defs in own.items() if defs}
                registered = kept if kept or summary.options else registered
            wanted = sorted(registered)
            if not registered:
                return {Value("inst", "timm.create_model")}  # one of timm's own models
            out.add(Value(UNKNOWN, "`timm.create_model()` is given a name the code does not fix: one of the "
                                   "project's `@register_model` defs or one of timm's own models"))
        for name in wanted:
            defs = registered.get(name)
            if not defs:
                out.add(Value("inst", "timm.create_model"))  # one of timm's own models
            for d_summary, dotted in defs or ():
                out |= self.values((CALL, (G, dotted), (), ()), d_summary, None, depth + 1)
        return out

    def _project_name(self, dotted: str) -> Optional[str]:
        """`dotted` when it names a def or module-level name of the project as the index
        names it (a module value is named so by `_global`, read from its importing file);
        else None. An import name is not matched here: an ext value does not say which
        file imported it, and two packages may both have a `model.detector`."""
        if dotted in self.index.defs:
            return dotted
        module, _, name = dotted.rpartition(".")
        owner = self.index.modules.get(module)
        # (a name the module imports counts: `from .model.base import Head` in the package's
        # `__init__` makes `pkg.Head` the project's Head, whoever reads it through `pkg`)
        return dotted if owner is not None and (name in owner.scopes.get("", {}) or name in owner.bindings) else None

    def _module_dict(self, module: Value, depth, summary=None) -> Optional[Value]:
        """`models.__dict__` (`models.__dict__[args.arch]()`): a container of what the
        module exports, keyed by name and named `<module>.__dict__` (no registry's
        container has a name: `_picked` tells a namespace by it); None as `_module_members`."""
        members = self._namespace_members(module, depth, summary)
        if members is None:
            return None
        return Value("seq", f"{module.dotted}.__dict__", tuple(members.values()), False, tuple(members))

    def _namespace_members(self, module: Value, depth, summary=None) -> Optional[dict]:
        """{name: values} a name the code does not fix may pick from a project module's
        namespace (`models.__dict__[args.arch]`, `getattr(models, name)`): what it exports
        (`_module_members`); for a module without `__all__`, its own public classes and
        functions when they all build one model (V-JEPA's `vit_tiny` ... `vit_gigantic`,
        each returning a VisionTransformer): whichever the name is, that model. Other
        modules without `__all__` export helpers too: None, no guess."""
        members = self._module_members(module, depth, summary)
        if members is not None:
            return members
        found = self._project_module(module, summary)
        if found is None or "__all__" in found.scopes.get("", {}) or found.star_imports:
            return None
        names = sorted(q for q in found.defs if "." not in q and not q.startswith(("_", "<")))
        if not 2 <= len(names) <= MAX_MEMBERS:
            return None
        members = {name: self._global(f"{found.module}.{name}", found, depth) for name in names}
        built = self._built_by(frozenset(v for held in members.values() for v in held), depth)
        return members if len(built) == 1 else None

    def _project_module(self, module: Value, summary=None):
        """The summary of the project module `module` names, read where it is named when
        that is known (`summary`); else only a name no two packages share. None otherwise."""
        modules = [c for c in self.index.candidates(module.dotted, summary) if c in self.index.modules]
        if not modules or summary is None and len(set(modules)) > 1:
            return None
        return self.index.modules[modules[0]]

    def _module_members(self, module: Value, depth, summary=None, levels: int = 3) -> Optional[dict]:
        """{name: values} a module of the project exports, as `from module import *` takes
        them: its `__all__`, or, for a package `__init__` that only star-imports, what
        those modules export. None when the module is not the project's or its exports are
        not all known (a module without `__all__` also exports its helpers: no guess)."""
        found = self._project_module(module, summary) if levels else None
        if found is None:
            return None
        names: list = []
        if found.scopes.get("", {}).get("__all__"):
            for held in self._local(found, "", "__all__", None, {}, depth):
                for elems in (held.elems or ()) if held.kind == "seq" else (None,):
                    if elems is None or not all(v.kind == "const" for v in elems):
                        return None
                    names += sorted(v.dotted for v in elems)
        elif found.star_imports and not any("." not in q for q in found.defs):
            out: dict = {}
            for star in found.star_imports:
                inner = self._module_members(Value("ext", star), depth, found, levels - 1)
                if inner is None:
                    return None
                out.update(inner)
            return out
        else:
            return None
        return {name: self._global(f"{found.module}.{name}", found, depth) for name in names[:MAX_MEMBERS]}

    def _set_from_outside(self, base: Value, name: str, depth, read=None) -> set:
        """What code outside the class stores in `<instance>.name` (`trainer.model =
        Net()`, `self.model.head = Head()` in another class): the stores of that attribute
        name whose receiver may be the instance `base`: of its class or a subclass, and not
        made by another construction (two `UnifiedCFM(estimator=...)` of two models are
        two objects). A receiver not seen is no match: its store may be on any object.
        `read` (file, def, row) of a read through a local name: a store later in the same
        def, outside loops, runs after it (`vae = stream.vae` ... `stream.vae =
        Engine(...)`) and is not what it reads."""
        out: set = set()
        for summary, value, (receiver, scope, row, looped) in self.index.stored(("F", name)):
            if read is not None and read[0] == id(summary) and read[1] == scope and row > read[2] and not looped:
                continue
            said = len(self.why)
            held = self.values(receiver, summary, None, depth + 1)
            if any(v.kind == "inst" and v.dotted in self.index.defs and base.dotted in self.index.mro(v.dotted)
                   and not _other_construction(v.made, base.made) for v in held):
                out |= self.values(value, summary, None, depth + 1)
            else:  # why another object's receiver is unseen is no reason of this site's
                del self.why[said:]
        return out

    @staticmethod
    def _container_method(base: Value, name: str) -> set:
        """A container's method, as a value to call: a getter gives one element, a view
        (`values()`, `items()`, `keys()`, `children()`) a container of them."""
        if name in CONTAINER_GETTERS:
            return {Value("getter", None, base.elems, False, base.keys)}
        return {Value("view", name, base.elems, base.ordered, base.keys)}

    def _picked(self, members, names, depth) -> frozenset:
        """What a module's namespace gives for a name the code does not fix (`models.__dict__[
        args.arch]`, `getattr(models, cfg.name)`): the names it exports. Unlike a registry's
        entries they are not alternatives of one role (a generator and its discriminator,
        helpers, predictors): when a configuration gives the name and they build different
        models, which one is the configuration's (unknown, CHOSEN)."""
        if len(members) > 1 and any(_from_configuration(v) for v in names) and not any(v.kind == "const" for v in names):
            built = sorted(self._built_by(members, depth), key=lambda d: d.rsplit(".", 1)[-1])
            if len(built) > 1:
                built = [d.rsplit(".", 1)[-1] for d in built]
                shown = ", ".join(built[:4]) + (f" and {len(built) - 4} more" if len(built) > 4 else "")
                said = (f"{CHOSEN} ({shown}): the code does not say which (declare it with `compiled = [...]`, "
                        "or record a run)")
                self.why.append(said)
                return frozenset({Value(UNKNOWN, said)})
        return frozenset(members)

    def _saved_checkpoint(self, arg_terms, kw_terms, depth) -> frozenset:
        """`torch.load("./weights/best.pt")` of a path the project's own code saves to
        (`torch.save({"model": deepcopy(ema.ema)}, f="./weights/best.pt")` in its training
        loop): what was saved there, pickled and unpickled as the same classes. Nothing for
        a path no code of the project writes (a downloaded checkpoint)."""
        path = passed_term(arg_terms, kw_terms, 0, ("f",))
        if path is None or path[0] != CONST or not isinstance(path[1], str):
            return EMPTY
        out: set = set()
        for s_summary, term in self.index.saved_to(path[1]):
            out |= self.values(term, s_summary, None, depth)
        return frozenset(out)

    def _built_by(self, entries, depth) -> set:
        """The project classes that `entries` are or build when called (a factory counts
        as the classes it returns; `net_small()` and `net_big()` both build a Net)."""
        built: set = set()
        for v in entries:
            if v.kind == "func" and v.dotted in self.index.defs:
                made = self.values((CALL, (G, v.dotted), (), ()), self.index.defs[v.dotted][0], None, depth + 1)
                built |= {m.dotted for m in made if m.kind == "inst" and m.dotted in self.index.defs} or {v.dotted}
            elif v.dotted in self.index.defs:
                built.add(v.dotted)
        return built

    def _elements(self, base: Value, index) -> set:
        """What `base[index]` can hold: `index` an int position, a frozenset of the
        string keys it can be, or None (unknown: every element)."""
        if base.kind == UNKNOWN:
            return {base}
        if base.elems is None and base.kind == "inst" and base.dotted:
            if base.dotted.startswith(LOADERS + CONFIG_SOURCES):
                # `torch.load(p)["model"]`: what was saved; `yaml.safe_load(f)["model"]`: what
                # a configuration says
                return {Value(UNKNOWN, describe_external(base.dotted, True))}
            if base.dotted in self.index.defs:  # an item of a project container class (an Ensemble)
                return {Value(UNKNOWN, f"an item of `{base.dotted.rsplit('.', 1)[-1]}`, which the index does not follow")}
        if base.elems is None or base.kind in ("bound", "selfret"):
            return set()
        if base.ordered and isinstance(index, int) and -len(base.elems) <= index < len(base.elems):
            return set(base.elems[index])
        out: set = set()
        if isinstance(index, frozenset) and base.keys is not None:
            # the elements stored under one of those keys, and those whose key is unknown
            for key, elem in zip(base.keys, base.elems):
                if key is None or key in index:
                    out |= elem
            return out
        for elem in base.elems:
            out |= elem
        return out

    # -- calls ---------------------------------------------------------------------
    def _call(self, term, summary, env, depth) -> frozenset:
        _, func_term, arg_terms, kw_terms = term
        funcs = self.values(func_term, summary, env, depth)
        if not funcs:
            return EMPTY
        args_cache: dict = {}

        def arg(i):
            if i not in args_cache:
                args_cache[i] = self.values(arg_terms[i], summary, env, depth) if i < len(arg_terms) else EMPTY
            return args_cache[i]

        out: set = set()
        for f in funcs:
            if f.kind == "class":
                out.add(self._instance(f.dotted, arg_terms, kw_terms, summary, env))
            elif f.kind == "func":
                found = self.index.defs.get(f.dotted)
                if found is None:
                    continue
                f_summary, info = found
                if info.instantiates is not None:
                    made = self._configured_call(info, 0, arg_terms, kw_terms, summary, env, depth)
                    if made is not None:
                        out |= made
                        continue
                bound = self._bind(info, f.dotted, arg_terms, kw_terms, summary, env, depth, skip_first=False)
                got = self.returns_of(f_summary, info, bound, depth)
                if not got and f_summary is not None and not f_summary.returns.get(info.qualname):
                    # (no `return` with a value: it returns None, nothing to compile)
                    self.why.append(f"`{info.qualname}()` returns nothing the index can follow")
                out |= got
            elif f.kind == "bound":
                found = self.index.defs.get(f.dotted)
                if found is None:
                    continue
                f_summary, info = found
                if info.instantiates is not None:
                    made = self._configured_call(info, 1, arg_terms, kw_terms, summary, env, depth)
                    if made is not None:
                        out |= made
                        continue
                bound = self._bind(info, f.dotted, arg_terms, kw_terms, summary, env, depth, skip_first=True)
                bound["self"] = f.elems[0]
                out |= self.returns_of(f_summary, info, bound, depth)
            elif f.kind == "selfret":
                out |= f.elems[0]
            elif f.kind == "binder":
                out.add(Value("bound", f.dotted, (arg(0),)))
            elif f.kind == UNKNOWN:
                out.add(f)
            elif f.kind == "getter":
                # `REGISTRY.get("unet")`: the element stored under that key (and those under
                # keys not known), every element for a key not known; `d.get(k, default)`
                # may give the default
                keys = arg(0) if arg_terms else EMPTY
                index = _known_keys(keys)
                if index is None and f.dotted:
                    # a Registry object's entries are not one role (basicsr's ARCH_REGISTRY holds
                    # generators, discriminators and loss networks): a key not known here is a
                    # choice made at run time, not every entry; the keys that are known still
                    # give theirs (a partial answer: BasicSR's options files beside a caller's
                    # dict, bench/dev27)
                    why = (f"{CHOSEN}: the key given to `{f.dotted.rsplit('.', 1)[-1]}.get()` is not known here "
                           "(declare it with `compiled = [...]`, or record a run)")
                    self.why.append(why)
                    out.add(Value(UNKNOWN, why))
                    known = frozenset([v.dotted for v in keys if v.kind == "const"])
                    if known:
                        out |= self._elements(Value("seq", None, f.elems, False, f.keys), known)
                else:
                    out |= self._elements(Value("seq", None, f.elems, False, f.keys), index)
                if len(arg_terms) > 1:
                    out |= arg(1)
            elif f.kind == "yaml-getter":  # `cfg.pop("type")`: the key of the YAML configuration
                keys = arg(0) if arg_terms else EMPTY
                index = _known_keys(keys)
                out |= self._yaml_read(Value("yaml", f.dotted, keys=f.keys), index, depth)
            elif f.kind == "builder":
                # a registry's `build(cfg)` (mmengine, mmcv): an instance of the class the
                # configuration's `type` names, one of those registered
                for elem in f.elems:
                    out |= {self._instance(c.dotted, (), (), summary, env) if c.kind == "class" else c
                            for c in elem if c.kind in ("class", UNKNOWN)}
            elif f.kind == "view":
                out.add(_view(f))
            elif f.kind == "ext":
                dotted = f.dotted
                if dotted in PASS_THROUGH:
                    out |= arg(0)
                elif dotted in CASTS:
                    if len(arg_terms) == 2:
                        declared = self._instances_of(arg(0))  # (its reasons come first, as the type's)
                        out |= self._annotated(arg(1), lambda: declared)
                elif dotted.startswith("accelerate.Accelerator.") and dotted[23:] in ACCELERATOR_PREPARE:
                    # (ACCELERATOR_PREPARE) each argument comes back; a `*` argument: not told which
                    if any(t is not None and t[0] == STAR for t in arg_terms):
                        out.add(Value(UNKNOWN, "`accelerator.prepare(*...)`: which values it is given is not seen"))
                    elif len(arg_terms) == 1:
                        out |= arg(0)
                    elif arg_terms:
                        out.add(Value("seq", None, tuple(arg(i) for i in range(len(arg_terms))), True))
                elif dotted == "types.MethodType":  # `MethodType(f, obj)`: f bound to obj
                    out |= {Value("bound", v.dotted, (arg(1),)) for v in arg(0) if v.kind == "func"}
                elif dotted == "builtins.getattr":
                    # `getattr(self, name)`: the attribute of each name the argument can be
                    names = arg(1) if len(arg_terms) > 1 else EMPTY
                    for name in names:
                        if name.kind == "const" and name.dotted and name.dotted.isidentifier():
                            for base in arg(0):
                                if base.kind == "ext" and self._module_lacks(base.dotted, name.dotted):
                                    continue  # no value: an AttributeError
                                out |= self._attr(base, name.dotted, depth)
                    if len(arg_terms) > 1 and not (names and all(n.kind == "const" for n in names)):
                        # `getattr(models, cfg.arch)` on a module of the project: any name it exports
                        said, exported = len(self.why), False
                        for base in arg(0):
                            members = self._namespace_members(base, depth, summary) if base.kind == "ext" else None
                            if members is not None:
                                exported = True
                                out |= self._picked(frozenset(v for held in members.values() for v in held), names, depth)
                        if not exported:  # (what the object is does not say which attribute)
                            del self.why[said:]
                            # unknown, not nothing: `getattr(importlib.import_module(mod), name)`
                            # is a registry's lazy class (FastVideo's ModelRegistry, bench/fresh_reads),
                            # with the reason recorded last before it in this question, where
                            # there is one (a configuration's or a parameter's, which the
                            # name came from, says more than its own: test_reach's
                            # `instantiate_from_config(config.tokenizer)`)
                            unseen = {n for n in names if n.kind == UNKNOWN}
                            if not unseen:
                                why = self.why[said - 1] if said else \
                                    "`getattr(...)` reads an attribute whose name the code does not say"
                                unseen = {Value(UNKNOWN, why)}
                            out |= unseen
                elif dotted in PARSE_ARGS_CALLS:
                    parsed = self._parsed_args(summary, depth)
                    # `parse_known_args()`: (the namespace, the arguments it did not know)
                    out.add(parsed if dotted.endswith(".parse_args") else Value(
                        "seq", None, (frozenset({parsed}), frozenset({Value(UNKNOWN, CONFIGURED)})), True))
                elif dotted == "builtins.eval":
                    out |= self._evaluated(arg(0) if arg_terms else EMPTY, summary, depth)
                elif dotted == "torch.load" and (saved := self._saved_checkpoint(arg_terms, kw_terms, depth)):
                    out |= saved
                elif dotted == "importlib.import_module":
                    out |= self._imported_by_name(arg(0) if arg_terms else EMPTY, summary)
                elif dotted in LOCATORS:
                    named = passed_term(arg_terms, kw_terms, 0, ("path", "name"))
                    out |= self._located(dotted, self.values(named, summary, env, depth) if named else EMPTY, summary)
                elif dotted in TIMM_BUILD and arg_terms:
                    out |= {self._instance(c.dotted, (), (), summary, env) if c.kind == "class" else c
                            for c in arg(0) if c.kind in ("class", UNKNOWN)}
                elif dotted in TIMM_CREATE and self.index.registered_with(TIMM_REGISTER):
                    named = passed_term(arg_terms, kw_terms, 0, ("model_name",))
                    out |= self._timm_created(self.values(named, summary, env, depth), depth, summary)
                elif dotted in ITERATION_BUILTINS:
                    out |= self._iterated(dotted, [arg(i) for i in range(len(arg_terms))])
                elif dotted in NAMESPACES:
                    names = tuple(k for k, _t in kw_terms if k)
                    elems = tuple(self.values(t, summary, env, depth) for k, t in kw_terms if k)
                    out.add(Value("inst", dotted, elems, False, names))
                elif dotted in CONTAINER_MODULES:
                    elems = [arg(i) for i in range(len(arg_terms))]
                    flat: set = set()
                    if dotted.startswith("torch.") and any(not values and arg_terms[i] is not None and arg_terms[i][0] != STAR
                                                           for i, values in enumerate(elems)):
                        # `nn.Sequential(backbone, head)` with a backbone the index cannot
                        # follow: the container runs it too (`_opaque_elements`)
                        flat.add(Value(UNKNOWN, f"an element of `{dotted.rsplit('.', 1)[-1]}(...)` the index cannot see"))
                    for values in elems:
                        for v in values:
                            if v.kind == "seq":
                                flat |= self._elements(v, None)
                            else:
                                flat.add(v)
                    out.add(Value("inst" if dotted.startswith("torch.") else "seq", dotted, (frozenset(flat),), False))
                elif dotted in IPEX_OPTIMIZE and arg_terms:
                    if len(arg_terms) > 2 or any(k == "optimizer" for k, _t in kw_terms):
                        out.add(Value("seq", None, (arg(0), frozenset({Value(UNKNOWN, "an optimizer")})), True))
                    else:
                        out |= arg(0)
                elif (dotted in YAML_LOADERS or dotted in HYPERPYYAML_LOADERS) and self.index.configured.files:
                    out.add(Value("yaml", dotted, keys=()))
                    self.why.append(describe_external(dotted, True))  # (the reason, where nothing more is seen)
                elif dotted in CONFIG_INSTANTIATE and arg_terms \
                        and (made := self._configured(self._config_keys(arg_terms[0], summary, depth), True, summary, depth,
                                                      read_from=arg_terms[0])) is not None:
                    out |= made  # `hydra.utils.instantiate(cfg.model)`: what the YAML under `model` names
                elif _loads_pipeline(dotted) and any(k for k, _t in kw_terms):
                    # `HunyuanVideoPipeline.from_pretrained(path, transformer=net)`: diffusers
                    # sets each component given by keyword as the pipeline's attribute, so
                    # `pipe.transformer` is `net` (xDiT's runners, bench/fresh_reads); the
                    # components it loads itself stay another package's, as before
                    names = tuple(k for k, _t in kw_terms if k)
                    elems = tuple(self.values(t, summary, env, depth) for k, t in kw_terms if k)
                    out.add(Value("inst", dotted, elems, False, names))
                    self.why.append(describe_external(dotted, True))
                elif not dotted.startswith("builtins."):
                    out.add(Value("inst", dotted))
                    self.why.append(describe_external(dotted, True))
        return frozenset(out)

    # -- configured classes (configured.py) ------------------------------------------
    def _configured_call(self, info, skipped: int, arg_terms, kw_terms, summary, env, depth) -> Optional[set]:
        """What a call of a def that builds a configuration entry gives (DefInfo.instantiates):
        `instantiate_from_config(config.model)` an instance of each class the project's
        YAML names under `model`, `get_obj_from_str(cfg.model.target)` each class, and
        `get_obj_from_str("pkg.nets.UNet")` the class that names. None when the argument's
        key is not known or no YAML has it (the def's own code is then followed as for any
        call)."""
        index, how = info.instantiates
        position = index - skipped
        name = info.params[index]
        term = passed_term(arg_terms, kw_terms, position, (name,))
        if how == "name":
            owner = _target_owner(term)
            if owner is None:
                return self._named_classes(term, summary, env, depth)
            term = owner
        return self._configured(self._config_keys(term, summary, depth), how == "config", summary, depth, read_from=term)

    def _named_classes(self, term, summary, env, depth) -> Optional[set]:
        """`get_obj_from_str("pkg.nets.UNet")`: the project class each constant dotted name
        the argument can hold names; None unless every value is such a constant."""
        if term is None:
            return None
        texts = self.values(term, summary, env, depth)
        out: set = set()
        for text in texts:
            if text.kind != "const" or not isinstance(text.dotted, str) or "." not in text.dotted:
                return None
            found = self.index.find_def(text.dotted, summary)
            if found is None or found[1].kind not in ("class", "function"):
                return None
            out |= self._def_value(found[0].dotted(found[1].qualname), instance=False)
        return out or None

    def _config_keys(self, term, summary, depth, seen: int = 0) -> frozenset:
        """The keys a configuration entry is read under: `config.model`, `config["model"]`
        and `config.get("model")` -> {"model"}; a parameter -> the keys its callers' arguments
        are read under (`self.instantiate_first_stage(first_stage_config)`), or, where the
        project never calls the def (a class the YAML's builder makes: `unet_config` of
        `LatentDiffusion.__init__`), its own name; a local -> the keys of what it is bound
        to. Empty when not known."""
        if term is None or seen > 4:
            return EMPTY
        kind = term[0]
        if kind == ATTR:
            return frozenset({term[2]})
        if kind == ITEM:
            key = term[2]
            return frozenset({key[1]}) if isinstance(key, tuple) and key[0] == CONST else EMPTY
        if kind == CALL:
            func, args = term[1], term[2]
            if func is not None and func[0] == ATTR and func[2] == "get" and args and args[0] is not None and args[0][0] == CONST:
                return frozenset({args[0][1]})
            return EMPTY
        if kind == PARAM:
            passed = self._keys_passed(summary, term[1], term[2], term[3], depth, seen)
            return passed if passed is not None else frozenset({term[3]})
        if kind == LOCAL and summary is not None:
            keys: set = set()
            for binding in summary.scopes.get(term[1], {}).get(term[2], ()):
                found = self._config_keys(binding[2], summary, depth, seen + 1)
                if not found:
                    return EMPTY
                keys |= found
            return frozenset(keys)
        return EMPTY

    def _keys_passed(self, summary, qualname: str, index: int, name: str, depth, seen: int) -> Optional[frozenset]:
        """The keys of what the project's calls of def `qualname` pass for parameter `index`
        (empty: one of them passes something else); None when no call names it (nothing
        calls the def, or only `super().__init__(**kwargs)` pass-throughs and calls that
        leave it out)."""
        passed = self._arguments_passed(summary, qualname, index, name, depth)
        if not passed:
            return None
        keys: set = set()
        for term, c_summary in passed:
            found_keys = self._config_keys(term, c_summary, depth, seen + 1)
            if not found_keys:
                return EMPTY
            keys |= found_keys
        return frozenset(keys)

    def _arguments_passed(self, summary, qualname: str, index: int, name: str, depth) -> list:
        """(term, caller's summary) of the argument each project call of def `qualname`
        passes for parameter `index`, by position or keyword; the calls that leave it out
        or pass it on with `*args` are not in it."""
        dotted = summary.dotted(qualname)
        found = self.index.defs.get(dotted)
        if found is None:
            return []
        info = found[1]
        short = qualname.rsplit(".", 1)[-1]
        calls = [c for c in self._calls_by_callee(short, depth).get(dotted, ()) if c[1] != "class"]
        # an `__init__` is called by building its class (`DiffusionWrapper(unet_config)`)
        for cls in sorted(self.index.classes_built_by(dotted)) if short == "__init__" else ():
            calls += [c for c in self._calls_by_callee(cls.rsplit(".", 1)[-1], depth).get(cls, ()) if c[1] == "class"]
        out = []
        for _i, kind, c_summary, args, kws in calls:
            offset = 1 if kind == "class" or (kind == "bound" and info.method_kind != "static") else 0
            position = index - offset
            if any(a is not None and a[0] == STAR for a in args[: position + 1]):
                continue  # `super().__init__(*args, **kwargs)`: passed on from its own callers
            term = passed_term(args, kws, position, (name,))
            if term is not None:
                out.append((term, c_summary))
        return out

    def _hydra_files(self, term, summary, depth) -> Optional[frozenset]:
        """The YAML files a configuration entry can be read from when it is read off the
        configuration `@hydra.main(config_path=..., config_name=...)` hands its function
        (`cfg.agent`, passed on through parameters, locals and `self.cfg`): that primary
        file and the config-group files its `defaults` list picks. Which file a run
        composes is the code's choice there, not the command line's. None when the entry
        is not read off such a configuration, or from where is not seen."""
        return self._files_read_from(term, summary, depth, 0, {})

    def _files_read_from(self, term, summary, depth, seen: int, asked: dict) -> Optional[frozenset]:
        """_hydra_files, with what this question asked already (`asked`: each term once,
        so a project where every caller passes on its own parameter is not walked again
        and again; a cycle of calls is None)."""
        if term is None or seen > 12 or summary is None:
            return None
        key = (id(summary), term)
        if key not in asked:
            asked[key] = None
            asked[key] = self._files_of_term(term, summary, depth, seen, asked)
        return asked[key]

    def _files_of_term(self, term, summary, depth, seen: int, asked: dict) -> Optional[frozenset]:
        kind = term[0]
        if kind == ATTR and term[1] is not None and term[1][0] == SELF:  # `self.cfg`: what its stores hold
            stores = [(t, s) for s, t in self.index.attr_terms(term[1][1], term[2])]
            return self._files_of_all(stores, depth, seen, asked)
        if kind == ATTR or kind == ITEM:
            return self._files_read_from(term[1], summary, depth, seen + 1, asked)
        if kind == CALL:
            func = term[1]
            if func is not None and func[0] == ATTR and func[2] == "get":
                return self._files_read_from(func[1], summary, depth, seen + 1, asked)
            return None
        if kind == PARAM:
            _, scope, index, name, _ann = term
            found = self.index.defs.get(summary.dotted(scope))
            if found is not None and index == 0:
                root = _hydra_primary(found[1].decorators, summary.path)
                if root is not None:
                    return self.index.configured.composed(root)
            passed = self._arguments_passed(summary, scope, index, name, depth)
            return self._files_of_all(passed, depth, seen, asked)
        if kind == LOCAL:
            bindings = summary.scopes.get(term[1], {}).get(term[2], ())
            return self._files_of_all([(b[2], summary) for b in bindings], depth, seen, asked)
        return None

    def _files_of_all(self, sources: list, depth, seen: int, asked: dict) -> Optional[frozenset]:
        """The files of each (term, summary), when every one is known."""
        if not sources:
            return None
        files: set = set()
        for term, t_summary in sources:
            found = self._files_read_from(term, t_summary, depth, seen + 1, asked)
            if found is None:
                return None
            files |= found
        return frozenset(files)

    def _yaml_read(self, base: Value, index, depth: int = 0) -> set:
        """`cfg["MODEL"]["NAME"]` (or `cfg.MODEL.NAME`) of a YAML configuration the code
        loads: the names the project's YAML files give NAME inside MODEL, as constants
        (which a registry, `eval` or a module's namespace then looks up); a key that holds
        a mapping, or no name, is the configuration one level down. Which file a run
        loads is a command-line choice: every file's names count, as for targets."""
        if not isinstance(index, frozenset):
            return {Value(UNKNOWN, describe_external(base.dotted, True))}
        if base.dotted in HYPERPYYAML_LOADERS and not base.keys:
            # `load_hyperpyyaml(f)["llm"]`: what the `!new:` entry at the top of a file
            # under that key builds (InspireMusic's `llm: !new:inspiremusic.llm.llm.LLM`,
            # bench/fresh_reads batch 26; its nested `llm:` is the LLM's argument)
            out = set()
            for key in sorted(index):
                entries = [e for e in self.index.configured.by_key(key) if e.owner is None and e.hydra]
                out |= self._configured_entries(entries, key, True, None, depth) if entries else \
                    {Value(UNKNOWN, describe_external(base.dotted, True))}
            return out
        parent = base.keys[-1] if base.keys else None
        out: set = set()
        for key in sorted(index):
            names = self.index.configured.names_at(parent, key)
            if not names:
                out.add(Value("yaml", base.dotted, keys=(*base.keys, key)))
                continue
            out |= {Value("const", name) for name in names if name is not None}
            if None in names:  # (a flow list, a block of text, an alias: not all its values are seen)
                out.add(Value(UNKNOWN, f"a value of `{key}` in a YAML file that the reader does not read"))
        return out

    def _built_nested(self, summary, cls_qualname: str, name: str, depth) -> Optional[frozenset]:
        """What Hydra (or hyperpyyaml) passes a class's constructor parameter `name` that no
        code of the project passes: the instance of each entry nested under `name` in a
        YAML entry that builds this class or a subclass of it (`model: {_target_: SAM2Base,
        image_encoder: {_target_: ImageEncoder}}` builds the ImageEncoder first)."""
        cls = summary.dotted(cls_qualname)
        nested = [e for e in self.index.configured.by_key(name) if e.hydra and e.owner]
        if not nested:
            return None
        owners = {}
        for entry in nested:
            if entry.owner not in owners:
                owners[entry.owner] = self._builds(entry.owner, cls, summary)
        chosen = [e for e in nested if owners[e.owner]]
        if not chosen:
            return None
        return frozenset(self._configured_entries(chosen, name, True, summary, depth))

    def _configured_texts(self, summary, cls_qualname: str, name: str) -> Optional[frozenset]:
        """The scalars Hydra passes a class's constructor parameter `name` that no code of
        the project passes: what the key `name` holds in the YAML entries whose `_target_`
        is this class or a subclass of it (`model: {_target_: Aligner, feature_extractor_cls:
        pkg.nets.UNet}`), every file's (which one a run loads is a command-line choice).
        None when no such entry gives the key."""
        cls = summary.dotted(cls_qualname)
        keys = self._hydra_keys.get(cls)
        if keys is None:
            keys = set()
            for entry in self.index.configured.entries if self.index.configured.files else ():
                if entry.hydra and self._builds(entry.target, cls, summary):
                    keys.add(entry.key)
            keys = self._hydra_keys[cls] = frozenset(keys)
        out: set = set()
        for key in sorted(keys):
            texts = self.index.configured.names_at(key, name)
            out |= {Value("const", text) for text in texts if text is not None}
            if None in texts:  # (a flow list, a block of text, an alias: not all its values are seen)
                out.add(Value(UNKNOWN, f"a value of `{name}` in a YAML file that the reader does not read"))
        return frozenset(out) if out else None

    def _builds(self, target: str, cls: str, summary) -> bool:
        """Whether a YAML entry's `target` is the project class `cls` or a subclass of it."""
        found = self.index.find_def(target, summary)
        return found is not None and found[1].kind == "class" and cls in self.index.mro(found[0].dotted(found[1].qualname))

    def _configured(self, keys: frozenset, instance: bool, summary, depth, read_from=None) -> Optional[set]:
        """Each class the project's YAML names under one of `keys` (an instance of it when
        `instance`); a target that is no class of the project is an unknown member (the
        answer is then partial). When the entries of a key come from several files and the
        term `read_from` reads the configuration `@hydra.main` names (_hydra_files), those
        of its files, where they have one. None when a key has no YAML entry (that value
        is unseen)."""
        if not keys:
            return None
        out: set = set()
        files: Optional[frozenset] = None
        asked = False  # (once, and only where several files have a key)
        parent = _config_parent(read_from)
        for key in sorted(keys):
            entries = self.index.configured.by_key(key)
            if not entries:
                return None
            if parent is not None:
                # `cfg.model.instance`: the `instance` entries inside `model` (a mapping so
                # named, or a file of the `model` config group), not those of another group's
                # files that use the same key (AnySat's `model/network/*.yaml` each hold an
                # `instance` too: their networks were taken for the compiled model,
                # bench/fresh_reads batch 24); all of them where none is inside `model`
                entries = [e for e in entries if e.parent == parent] or entries
            if read_from is not None and len({e.where.rpartition(":")[0] for e in entries}) > 1:
                if not asked:
                    files, asked = self._hydra_files(read_from, summary, depth), True
                chosen = [e for e in entries if e.where.rpartition(":")[0] in (files or ())]
                entries = chosen or entries
            out |= self._configured_entries(entries, key, instance, summary, depth)
        return out

    def _configured_entries(self, entries, key: str, instance: bool, summary, depth) -> set:
        out: set = set()
        for target in sorted({e.target for e in entries}):
            if target.startswith(UNREAD):
                out.add(Value(UNKNOWN, f"a YAML configuration names `{target[len(UNREAD):]}` under `{key}`, "
                                       "which is no name the reader can follow"))
                continue
            found = self.index.find_def(target, summary)
            if found is not None and found[1].kind == "class":
                dotted = found[0].dotted(found[1].qualname)
                out.add(Value("inst" if instance else "class", dotted))
            elif found is not None and found[1].kind == "function":
                f_summary, info = found
                out |= self.returns_of(f_summary, info, {}, depth) if instance else self._def_value(f_summary.dotted(info.qualname), False)
            else:
                out.add(Value(UNKNOWN, f"`{target}`, which a YAML configuration names under `{key}`, is no class of the project"))
        return out

    def _parsed_args(self, summary, depth) -> Value:
        """What `parser.parse_args()` gives, read where it is called: a namespace whose
        attributes are the options this file adds (`--arch` -> `args.arch`). An option with
        `choices` holds one of them; one with a string default holds it, or whatever the
        command line gives instead (an unknown member: the default is not a resolved
        target). An option this file does not add (a parser built in another file, a flag)
        stays unknown, as any configuration."""
        options = summary.options if summary is not None else None
        if not options:  # (as before options were read: the parser's attribute is a configuration's)
            return Value(UNKNOWN, describe_external("argparse.ArgumentParser", True))
        keys, elems = [], []
        for name in sorted(options):
            held: set = set()
            for default, choices in options[name]:
                if choices is not None:
                    picked = frozenset(e for v in self.values(choices, summary, None, depth) for e in self._elements(v, None))
                    if picked and all(v.kind == "const" for v in picked):
                        held |= picked
                        continue
                if default is not None:
                    held |= {v for v in self.values(default, summary, None, depth) if v.kind == "const"}
                said = (f"{CONFIGURED} (`--{name.replace('_', '-')}` on the command line"
                        f"{', or its default' if held else ''}): the code does not say which model it is "
                        "(declare it with `compiled = [...]`, or record a run)")
                held.add(Value(UNKNOWN, said))
            keys.append(name)
            elems.append(frozenset(held))
        return Value("inst", PARSED_ARGS, tuple(elems), False, tuple(keys))

    def _evaluated(self, texts: frozenset, summary, depth) -> set:
        """What `eval(text)` gives for a constant text that names something (`eval(args.model)`
        with `--model efficientformerv2_l`, a def star-imported from the project's models):
        that name as the calling module reads it. Any other text: unknown."""
        out: set = set()
        for text in texts:
            parts = text.dotted.split(".") if text.kind == "const" and isinstance(text.dotted, str) else []
            if summary is None or not parts or not all(p.isidentifier() for p in parts):
                if text.kind == UNKNOWN:
                    out.add(text)
                else:
                    said = "`eval(...)` of a text the code does not fix"
                    self.why.append(said)
                    out.add(Value(UNKNOWN, said))
                continue
            held = self.values(self._module_name_term(parts[0], summary), summary, None, depth)
            for attr in parts[1:]:
                held = frozenset(v for base in held for v in self._attr(base, attr, depth))
            out |= held
        return out

    @staticmethod
    def _module_name_term(name: str, summary):
        """The term of `name` read at the top level of the summary's module: its own
        binding, else its import, else a `from m import *` that may give it."""
        if name in summary.scopes.get("", {}):
            return (LOCAL, "", name, None)
        if name in summary.bindings:
            return (G, summary.bindings[name])
        if summary.star_imports:
            return (STARS, summary.star_imports, name)
        return (G, f"builtins.{name}")

    def _imported_module(self, dotted: str, summary) -> Optional[str]:
        """The name (as the index names modules) of the project module or package that an
        import of `dotted` written in `summary` binds, or None."""
        return next((c for c in self.index.candidates(dotted, summary) if self.index.holds_module(c)), None)

    def _module_lacks(self, module: str, name: str) -> bool:
        """Whether the project's module `module` surely has no attribute `name`: it
        neither binds it (def, assignment, import) nor has such a submodule, and has no
        `import *` or module `__getattr__` (PEP 562: miles-credit's lazy model classes)
        that may give it."""
        owner = self.index.modules.get(module)
        return owner is not None and not owner.star_imports and self._project_name(f"{module}.{name}") is None \
            and self._project_name(f"{module}.__getattr__") is None and not self.index.holds_module(f"{module}.{name}")

    def _imported_by_name(self, names: frozenset, summary) -> set:
        """What `importlib.import_module(name)` gives: for a constant name the module, as
        `import name` binds it (a registry of `(module path, class name)` pairs, whose
        `getattr(module, class_name)` is then the class: miles-credit); for a name the code
        does not fix, what a call of another package gives (an unknown module there made
        PufferLib's `env_module.Policy(...)`, wrapped in the project's `Policy`, a gap of
        every site it reaches)."""
        out: set = set()
        for name in names:
            if name.kind == "const" and isinstance(name.dotted, str) and all(p.isidentifier() for p in name.dotted.split(".")):
                module = self._imported_module(name.dotted, summary)
                if module is not None:
                    out.add(Value("ext", module))
        if len(out) < len(names) or not names:
            # (as any call of another package: attributes of it are no project code)
            out.add(Value("inst", "importlib.import_module"))
            self.why.append(describe_external("importlib.import_module", True))
        return out

    def _located(self, locator: str, names: frozenset, summary) -> set:
        """What `pydoc.locate(name)` (or Hydra's `get_class`/`get_method`) gives: for a
        constant dotted name, the project's class, function or module of that name; for a
        name the code does not fix, or one of another package, what a call of another
        package gives (cleandift builds `locate(feature_extractor_cls)()`, the class path a
        Hydra YAML gives the constructor: bench/dev25)."""
        out: set = set()
        known = 0
        for name in names:
            if name.kind != "const" or not isinstance(name.dotted, str) or not all(p.isidentifier() for p in name.dotted.split(".")):
                continue
            found = self.index.find_def(name.dotted, summary)
            if found is not None and found[1].kind in ("class", "function"):
                out |= self._def_value(found[0].dotted(found[1].qualname), False)
                known += 1
                continue
            module = self._imported_module(name.dotted, summary)
            if module is not None:
                out.add(Value("ext", module))
                known += 1
        if known < len(names) or not names:
            out.add(Value("inst", locator))
            self.why.append(describe_external(locator, True))
        return out

    def _instance(self, dotted: str, arg_terms, kw_terms, summary, env) -> Value:
        """An instance of the class `dotted` built with these arguments. Where its
        `__init__` stores a parameter on `self`, the call is kept with it (`Value.made`,
        evaluated only when such an attribute is read: `_made_env`)."""
        if not arg_terms and not kw_terms or dotted not in self.index.defs or not self.index.stores_init_params(dotted):
            return Value("inst", dotted)
        env_key = env.key if type(env) is _Env and env.key is not None else _env_key(env)
        # the bindings by a number of their own: a key holds the values bound, which hold
        # the keys of their own constructions, so that a chain of constructions passed on
        # (ultralytics' trainer -> model -> exporter, bench/dev33) made keys whose `repr`
        # and hash walked every path of a shared structure (minutes, gigabytes)
        made = ("call", id(summary), arg_terms, kw_terms, self._env_ids.setdefault(env_key, len(self._env_ids)))
        self._made.setdefault(made, (summary, env))
        return Value("inst", dotted, made=made)

    def _made_envs(self, base: Value, reads, depth) -> list:
        """The bindings of `__init__`'s parameters (those `reads` names; None: all) for
        each construction `base` may come from: the call that built it, or for an
        instance a parameter is annotated with, each instance its callers pass that
        carries its construction (none of them: the class's, every construction's)."""
        if base.made[0] == "call":
            return [self._made_env(base, reads, depth)]
        summary, _env = self._made[base.made]
        _kind, _sid, scope, index, name = base.made
        passed = self._passed(summary, scope, index, name, depth)
        built = [v for v in passed if v.kind == "inst" and v.made and v.made[0] == "call"
                 and base.dotted in self.index.mro(v.dotted)]
        if not built or any(v.kind in (UNKNOWN, "ext") or (v.kind == "inst" and (not v.made or _open(v)))
                            for v in passed):
            return [{}]  # not every value is known by its construction: what any construction passes
        return [self._made_env(v, reads, depth) for v in built]

    def _made_env(self, base: Value, reads, depth) -> dict:
        """What the call that built `base` passed to the parameters of its `__init__`
        that `reads` names (None: all of them)."""
        summary, env = self._made[base.made]
        _kind, _sid, arg_terms, kw_terms, _key = base.made
        init = self.index.lookup(f"{base.dotted}.__init__")
        if init is None or init[1].kind != "function":
            return {}
        info = init[1]
        if reads is not None:
            wanted = {k[1] for k in reads if type(k) is tuple and k[0] == info.qualname}
            if not wanted:
                return {}
        else:
            wanted = None
        return self._bind(info, init[0].dotted(info.qualname), arg_terms, kw_terms, summary, env, depth, skip_first=True,
                          only=wanted)

    def _iterated(self, dotted: str, args: list) -> set:
        """What an iteration builtin gives for arguments holding `args`: `enumerate(xs)`
        a container of (index, element) pairs, `zip(xs, ys)` of (x, y) tuples,
        `next(it)` an element, the others a container of the same elements."""
        if not args:
            return set()
        elements = [frozenset(e for v in values for e in self._elements(v, None)) for values in args]
        if dotted == "builtins.next":
            return set(elements[0])
        if dotted == "builtins.enumerate":
            pairs = Value("seq", None, (EMPTY, elements[0]), True)  # (the index: a number, not followed)
            return {Value("seq", None, (frozenset({pairs}),), False)}
        if dotted == "builtins.zip":
            return {Value("seq", None, (frozenset({Value("seq", None, tuple(elements), True)}),), False)}
        if dotted == "builtins.filter":
            elements = elements[1:] or elements
        return {Value("seq", None, (elements[0],), False)}

    def _bind(self, info, dotted, arg_terms, kw_terms, summary, env, depth, skip_first, only=None) -> dict:
        """The parameters of `info` (by (qualname, index)) bound to what a call passes;
        `only`: the indexes to evaluate (None: all)."""
        params = list(info.params)
        offset = 1 if skip_first and info.method_kind != "static" else 0
        arg_terms, kw_terms, through = self._forwarded(arg_terms, kw_terms, summary, depth)
        bound: dict = _Env()
        for i, t in enumerate(arg_terms):
            if t is not None and t[0] == STAR:
                break
            index = i + offset
            if index < len(params) and (only is None or index in only):
                bound[(info.qualname, index)] = self._argument(t, summary, env, depth)
        if kw_terms:
            # (a dict, not `params.index`: a pipeline's `__call__` of 40 parameters called
            # with 40 keywords, asked thousands of times, was most of one site's second of CPU)
            position = {p: i for i, p in enumerate(params)}
            for name, t in kw_terms:
                index = position.get(name)
                if index is not None and (only is None or index in only):
                    if t is not None:
                        bound[(info.qualname, index)] = self._argument(t, summary, env, depth)
                    elif through is not None and (info.qualname, index) not in bound:
                        # a keyword the calling def's callers give its `**kwargs`
                        bound[(info.qualname, index)] = _without_flags(self._passed_through(summary, through, name, depth))
        if info.defaults:
            for index in _omitted(info.defaults, params, offset, arg_terms, kw_terms, MAX_ARGS):
                if (only is None or index in only) and (info.qualname, index) not in bound:
                    bound[(info.qualname, index)] = self._default(dotted, info, index, depth)
                    if info.defaults[index] == NONE_DEFAULT:
                        bound[(OMITTED_NONE, info.qualname, index)] = EMPTY
        if info.flag_defaults and not info.qualname.endswith("__init__"):
            # a call that surely leaves out `mask=False` runs the def with False: its own
            # branches of `if mask:` are closed (detr's `_make_detr("resnet50")`). Not
            # in DefInfo.defaults, which also answer for the callers the index cannot see;
            # not for `__init__`, whose call may be an alternate constructor's, which passes
            # what a checkpoint saved (TAO's `load_from_checkpoint(..., export=True)`, bench/dev48)
            for index in _omitted(info.flag_defaults, params, offset, arg_terms, kw_terms, MAX_ARGS):
                if (only is None or index in only) and (info.qualname, index) not in bound:
                    bound[(info.qualname, index)] = frozenset({Value(FLAG, str(info.flag_defaults[index][1]))})
        return bound

    def _argument(self, term, summary, env, depth) -> frozenset:
        """What a call passes for one parameter. A boolean only a literal argument fixes
        (`train=False`): a name may hold one on a path the index does not read
        (`ref = cfg["enable"] if "ref" in cfg else False`, whose other arm it cannot see:
        animatediff-cli-prompt-travel, bench/dev28), so it chooses no branch of `if ref:`."""
        got = self.values(term, summary, env, depth)
        return got if term is None or term[0] == FLAG else _without_flags(got)

    def _forwarded(self, arg_terms, kw_terms, summary, depth) -> tuple:
        """A call's arguments with `*args` and `**kwargs` that the calling def takes itself
        (`super().from_pretrained(path, *args, **kwargs)`, `return Net(**kwargs)`) made
        plain where every call of that def is seen: `*args` dropped when no caller passes a
        positional argument past the def's own, `**kwargs` the names its callers give it,
        each a keyword of no term (what it holds: `_passed_through`). (arg terms, keyword
        terms, the def whose `**kwargs` they are or None); unchanged where not known."""
        through = None
        if arg_terms and arg_terms[-1] is not None and arg_terms[-1][0] == STAR and arg_terms[-1][1] is not None \
                and arg_terms[-1][1][0] == VARARGS and self._extra_positional(summary, arg_terms[-1][1][1], depth) == 0:
            arg_terms = arg_terms[:-1]
        forwarded = [t for k, t in kw_terms if k is None]
        if len(forwarded) == 1 and forwarded[0] is not None and forwarded[0][0] == KWARGS and len(forwarded[0]) == 2:
            names = self._kwargs_names(summary, forwarded[0][1], depth)
            if names is not None:
                given = {k for k, _t in kw_terms if k is not None}
                kw_terms = tuple(kw for kw in kw_terms if kw[0] is not None) + tuple((n, None) for n in sorted(names - given))
                through = forwarded[0][1]
        return arg_terms, kw_terms, through

    def _calls_of_def(self, summary, qualname: str, depth) -> Optional[list]:
        """(kind, caller summary, args, kws) of every call of a function or method def the
        index sees; None for a class's `__init__` (built in more ways than called) or a
        def no call of which is seen (a caller outside the project may pass anything)."""
        dotted = summary.dotted(qualname)
        short = qualname.rsplit(".", 1)[-1]
        if short == "__init__" or dotted not in self.index.defs:
            return None
        calls = [(kind, c_summary, args, kws) for _i, kind, c_summary, args, kws in self._calls_by_callee(short, depth).get(dotted, ())
                 if kind != "class"]
        return calls or None

    def _extra_positional(self, summary, qualname: str, depth) -> Optional[int]:
        """How many positional arguments past its own parameters the calls of a def pass
        into its `*args` at most; None when not known."""
        calls = self._calls_of_def(summary, qualname, depth)
        if calls is None:
            return None
        info = self.index.defs[summary.dotted(qualname)][1]
        most = 0
        for kind, _c_summary, args, _kws in calls:
            if len(args) >= RECORDED_ARGS or any(a is not None and a[0] == STAR for a in args):
                return None
            offset = 1 if kind == "bound" and info.method_kind != "static" else 0
            most = max(most, len(args) + offset - info.positional)
        return most

    def _kwargs_names(self, summary, qualname: str, depth) -> Optional[frozenset]:
        """The keyword names the calls of a def give its `**kwargs` (and on, through the
        `**kwargs` of their own defs); None when not known: a call of `**` something else,
        or more keywords than a call keeps, or no call seen."""
        key = (summary.dotted(qualname), "names")
        if key in self._through_busy:  # a cycle of `**kwargs` pass-throughs
            return None
        calls = self._calls_of_def(summary, qualname, depth)
        if calls is None:
            return None
        own = set(self.index.defs[summary.dotted(qualname)][1].params)
        names: set = set()
        self._through_busy.add(key)
        try:
            for _kind, c_summary, args, kws in calls:
                if len(kws) >= RECORDED_ARGS:
                    return None
                for k, t in kws:
                    if k is not None:
                        if k not in own:
                            names.add(k)
                    elif t is not None and t[0] == KWARGS and len(t) == 2:
                        more = self._kwargs_names(c_summary, t[1], depth + 1)
                        if more is None:
                            return None
                        names |= more - own
                    else:
                        return None
        finally:
            self._through_busy.discard(key)
        return frozenset(names)

    def _defaults_to_none(self, summary, qualname: str, index: int) -> bool:
        found = self.index.defs.get(summary.dotted(qualname))
        return found is not None and found[1].defaults.get(index) == NONE_DEFAULT

    def _default(self, dotted: str, info, index: int, depth) -> frozenset:
        """The value of parameter `index`'s default, evaluated where the def is."""
        found = self.index.defs.get(dotted)
        return self.values(info.defaults[index], found[0], None, depth) if found is not None else EMPTY

    def _passed(self, summary, qualname: str, index: int, name: str, depth) -> frozenset:
        """What the calls of def `qualname` anywhere in the project pass for one parameter.
        For a class's `__init__`, the calls that build the class (`Net(block)`, a subclass
        that inherits that `__init__`, `cls(**kw)` in a classmethod) pass its parameters."""
        return self._passed_by_callers(summary, qualname, index, name, depth)[0]

    def _passed_by_callers(self, summary, qualname: str, index: int, name: str, depth) -> tuple[frozenset, bool]:
        """(_passed's answer, whether the project calls or applies the def at all)."""
        dotted = summary.dotted(qualname)
        found = self.index.defs.get(dotted)
        if found is None or found[1].kind != "function":
            return EMPTY, False
        info = found[1]
        out: set = set()
        short = qualname.rsplit(".", 1)[-1]
        names = [short]
        builders = self.index.classes_built_by(dotted) if short == "__init__" else ()
        if short == "__call__":
            names.append(CALLED_RESULT)
        elif "." not in qualname and dotted in self.index.functions_held():
            # `PARALLELIZE_FNS[name](model, mesh)` with PARALLELIZE_FNS a dict of functions
            # (torchtitan, copied in Adam-mini: bench/dev31)
            names.append(LOOKED_UP)
        if builders:
            names += sorted({c.rsplit(".", 1)[-1] for c in builders} | {"cls"})
            # (looked-up callees are evaluated, all of them, only for a class some container
            # holds: corpus M's index took 2 -> 7 s when every `__init__` asked for them)
            if not builders.isdisjoint(self.index.registered_classes()):
                names.append(LOOKED_UP)
        calls = []  # (name's position, call's position, kind, caller, args, kws): the calls of this def
        for n, call_name in enumerate(names):
            table = self._calls_by_callee(call_name, depth)
            calls += [(n, *c) for c in table.get(dotted, ()) if c[1] != "class"]
            # (the builders a call of this name may build: transformers' PreTrainedModel has
            # thousands, each a name of its own, and few calls hold any of them)
            for cls in sorted(builders.intersection(table)) if builders else ():
                calls += [(n, *c) for c in table[cls] if c[1] == "class"]
        calls.sort(key=lambda c: c[:2])
        if dotted in self.index.receiver_setters():
            # its calls on `self` fill each receiver's container (ProjectIndex._self_setter_stores)
            named_calls = self.index.calls_named(short)
            calls = [c for c in calls if not (c[0] == 0 and _on_self(named_calls[c[1]][1]))]
        # the default is passed by a call that omits the parameter, and where no call
        # names it at all (callers the index cannot see: `model_cls(**kwargs)`)
        named = omitted = False
        # `super().__init__(**kwargs)` of subclasses: what their callers pass on, unless one
        # of them gives `name` itself (then which subclass built the instance decides, and
        # the index does not follow that: unknown, as before these calls were kept)
        supers = [(c_summary, term) for _n, _i, _kind, c_summary, _args, kws in calls
                  if (term := _super_init_through(kws)) is not None]
        if supers and not any(name in term[2] or index - 1 < term[3] for _s, term in supers):
            for c_summary, term in supers:
                through = self._passed_through(c_summary, term[1], name, depth)
                if through:
                    named = True
                    out |= through
        for _n, _i, kind, c_summary, args, kws in calls:
            if _super_init_through(kws) is not None:
                continue  # (a `super().__init__` call: above)
            if kind == "class":
                offset = 1  # `Net(block)` calls `Net.__init__(self, block)`
            else:
                offset = 1 if kind == "bound" and info.method_kind != "static" else 0
            position = index - offset
            if 0 <= position < len(args) and not any(a is not None and a[0] == STAR for a in args[: position + 1]):
                named = True
                out |= self.values(args[position], c_summary, None, depth)
            for kw, term in kws:
                if kw == name:
                    named = True
                    out |= self.values(term, c_summary, None, depth)
            if index in info.defaults and index in _omitted(info.defaults, info.params, offset, args, kws, RECORDED_ARGS):
                omitted = True
            for kw, term in kws:
                if kw is None and term is not None and term[0] == KWARGS and not any(k == name for k, _t in kws):
                    # `build(**kwargs)` in a def of `**kwargs`: what its callers pass as `name`
                    through = self._passed_through(c_summary, term[1], name, depth)
                    if through:
                        named = True
                        out |= through
        # a call through a local name that holds the class or the def, found by the keyword
        # it passes (`model_class(image_encoder=enc)` where `model_class` is a parameter its
        # callers give SAM2Base or a subclass: bench/dev3's ComfyUI-segment-anything-2).
        # Calls through a name that leave the parameter out are not seen: the default stays
        through = self._through_by_callee(name, depth) if self.index.calls_through_names(name) else {}
        seen: set = set()  # a call through a name that may hold two of the builders counts once
        for callee_dotted in [dotted, *sorted(builders)] if through else ():
            for i, kind, c_summary, _args, kws in through.get(callee_dotted, ()):
                if i in seen or (kind == "class") != (callee_dotted in builders):
                    continue
                seen.add(i)
                for kw, term in kws:
                    if kw == name:
                        named = True
                        omitted = omitted or index in info.defaults
                        out |= self.values(term, c_summary, None, depth)
        if "." not in qualname:
            # `runner(build_results, data, predictor)` of a project `runner(fn, *args)` that
            # calls `fn(*args)`: the arguments after the def are its arguments
            for c_summary, callee, args, _kws, position in self.index.calls_passing(short):
                for at in self._handed_on(c_summary, callee, args, position, dotted, index, depth):
                    if at >= len(args):
                        omitted = True
                    elif not any(a is not None and a[0] == STAR for a in args[: at + 1]):
                        named = True
                        out |= self.values(args[at], c_summary, None, depth)
        # `@deco` applied to a def passes the def as the first argument; `@Wrapper` passes it
        # to `Wrapper.__init__(self, fn)`
        applications = [a for a in self.index.decorated_by(dotted) if a[1] != "class"]
        for cls in sorted(builders):
            applications += [a for a in self.index.decorated_by(cls) if a[1] == "class"]
        for c_summary, kind, arg in applications:
            offset = 1 if kind == "class" or (kind == "bound" and info.method_kind != "static") else 0
            if index - offset == 0:
                named = True
                out |= self.values(arg, c_summary, None, depth)
        if index in info.parametrized:  # pytest calls the test with each row
            named = True
            out |= self.values(info.parametrized[index], found[0], None, depth)
        elif not named and _requests_fixtures(summary, qualname, info):
            fixture = self.index.fixture_for(summary, qualname, name)
            if fixture is not None:  # pytest passes what the fixture of that name returns or yields
                named = True
                f_summary, f_info = fixture
                out |= self.returns_of(f_summary, f_info, None, depth + 1)
                for term in f_info.fixture[1]:
                    out |= self.values(term, f_summary, None, depth + 1)
        if not named and short == "__init__":
            # no call of the project names it: what Hydra builds from a YAML entry nested
            # under it (configured.py), where one is, or the text a YAML entry that builds
            # the class gives it (a class path the constructor locates)
            built = self._built_nested(summary, qualname[: -len(".__init__")], name, depth)
            if built is None:
                built = self._configured_texts(summary, qualname[: -len(".__init__")], name)
            out |= built or EMPTY
        if index in info.defaults and (omitted or not named):
            out |= self._default(dotted, info, index, depth)
        return frozenset(out), bool(calls or applications or named)

    def _handed_on(self, c_summary, callee, args, position: int, dotted: str, index: int, depth) -> list:
        """Where, among a call's arguments, the argument the def `dotted` (passed at
        `position`) receives as its parameter `index` is, for each project function the
        callee may be that calls that parameter with its own `*args`."""
        if not any(v.kind == "func" and v.dotted == dotted for v in self.values(args[position], c_summary, None, depth)):
            return []
        out = []
        for g in self.values(callee, c_summary, None, depth):
            found = self.index.defs.get(g.dotted) if g.kind == "func" else None
            if found is None:
                continue
            for param, leading in found[1].calls_params:
                if param == position and index >= leading:
                    out.append(found[1].positional + index - leading)
        return out

    def _passed_through(self, summary, qualname: str, name: str, depth) -> frozenset:
        """What the calls of def `qualname` pass by keyword `name` into its `**` parameter
        (and on through theirs): a def with a parameter `name` keeps it for itself."""
        found = self.index.defs.get(summary.dotted(qualname))
        if found is None or name in found[1].params:
            return EMPTY
        key = (summary.dotted(qualname), name)
        if key in self._through_busy:  # a cycle of `**kwargs` pass-throughs
            return EMPTY
        self._through_busy.add(key)
        try:
            # no position reaches `**kwargs`: an index past every parameter asks for keywords only
            return self._passed(summary, qualname, len(found[1].params) + MAX_ARGS, name, depth + 1)
        finally:
            self._through_busy.discard(key)

    def _calls_by_callee(self, call_name: str, depth) -> dict:
        """The project's calls of something named `call_name`, by what the callee is:
        dotted -> [(position, kind, caller summary, args, kws)] for the project classes
        ("class") and functions or methods ("func", "bound") it may be. Asked for every
        parameter whose callers are sought (`_passed`): transformers has thousands of
        `super().__init__(...)` calls, each of which `_passed` asked about afresh. Kept
        for good once every callee's answer has settled; else until the open cycle's next
        round (within a round, a provisional answer is asked again as it was)."""
        return self._by_callee(call_name, self.index.calls_named(call_name), depth)

    def _through_by_callee(self, keyword: str, depth) -> dict:
        """`_calls_by_callee` of the calls through a local name that pass `keyword`
        (`ProjectIndex.calls_through_names`): built once per keyword, not per parameter
        asked (transformers' thousands of `__init__(self, config)` each asked about every
        `model_class(config=config)`: its index 10 -> 36 s)."""
        return self._by_callee((KWARGS, keyword), self.index.calls_through_names(keyword), depth)

    def _by_callee(self, key, calls, depth) -> dict:
        got = self._callees.get(key)
        if got is None:
            got = self._callees_this_round.get(key)
        if got is not None:
            return got
        table: dict = {}
        settled = True
        memo = self._memo
        # (a key is a callee's name, or (KWARGS, keyword) for the calls through a name)
        instances = key == CALLED_RESULT or type(key) is tuple and key[0] == KWARGS
        for i, (c_summary, callee, args, kws) in enumerate(calls):
            for f in self.values(callee, c_summary, None, depth):
                if f.kind == "class" or f.kind == "func" or f.kind == "bound":
                    table.setdefault(f.dotted, []).append((i, f.kind, c_summary, args, kws))
                elif f.kind == "inst" and instances and f.dotted in self.index.defs:
                    # calling an instance runs its class's `__call__`, `self` bound: `Exporter(args)(
                    # model=m)`, or through a name, `exporter(model=m)`
                    method = self.index.find_def(f"{f.dotted}.__call__", None)
                    if method is not None:
                        table.setdefault(method[0].dotted(method[1].qualname), []).append((i, "bound", c_summary, args, kws))
            if settled and (id(c_summary), callee, None) not in memo:
                settled = False
        (self._callees if settled else self._callees_this_round)[key] = table
        return table

    def returns_of(self, summary, info, env, depth) -> frozenset:
        out: set = set()
        for term in summary.returns.get(info.qualname, ()):
            out |= self.values(term, summary, env, depth)
        if info.ret_ann is not None and not any(v.dotted in self.index.defs for v in out):
            # `def load() -> Net: return torch.load(...)`
            declared = self.values(info.ret_ann, summary, env, depth)
            based = sorted(v.dotted for v in declared if v.kind == "inst" and len(self.index.classes_admitted({v.dotted})) > 1)
            if based and all(v.kind == UNKNOWN for v in out):
                # `-> BaseModel` over a registry lookup: a base class the project subclasses
                # says "one of these", not which (ptlflow, bench/dev12: the model a name picks)
                why = (f"`{info.qualname}()` returns some `{based[0].rsplit('.', 1)[-1]}` (its annotation), "
                       f"a class the project subclasses: which one is not seen")
                self.why.append(why)
                return frozenset({Value(UNKNOWN, why)})
            return self._declared(frozenset(out), declared)
        return frozenset(out)

    @staticmethod
    def _instances_of(classes: frozenset) -> frozenset:
        """What a value declared to be of `classes` (an annotation, `typing.cast`) holds:
        an instance of each."""
        return frozenset(Value("inst", v.dotted) for v in classes if v.kind in ("class", "ext"))

    def _annotated(self, held: frozenset, declared: Callable[[], frozenset]) -> frozenset:
        """What `held`, declared to be of a type (`declared()`: the instances the type
        names, evaluated only when needed), holds: itself where all of it is project code;
        else what it shows of the project stays and its unseen part is what the annotation
        names (`gpt: Infinity = timm.create_model(name)`, `net: Net = torch.load(p)`,
        `cast(Net, loaded)`): an instance of that class."""
        if held and all(v.dotted in self.index.defs or v.kind == "seq" for v in held):
            return held
        return self._declared(held, declared())

    def _declared(self, held: frozenset, declared: frozenset) -> frozenset:
        """What a value declared by an annotation holds, when the value itself shows no
        project code: the project classes the annotation names. An annotation naming
        another package's class (`-> nn.Module`) says what kind of thing it is, not
        which one: the value stays what it was (unseen, or partial)."""
        # (an abstract class says "one of its subclasses", not which: `workload:
        # spec.Workload`, `cast(GraphPESModel, module.model)`, bench/dev15)
        named = frozenset(v for v in declared if v.dotted in self.index.defs and not self.index.is_abstract(v.dotted))
        if not named:
            return held
        # the value's own unseen reasons are replaced: the annotation says what it is; of
        # the project instances it shows, those of the annotated classes (`m: Big =
        # timm.create_model(name)` is no `Small` that name could also build), unless none is
        kept = frozenset(v for v in held if v.kind not in (UNKNOWN, "ext", "inst") or v.dotted in self.index.defs)
        classes = {v.dotted for v in named}
        fitting = frozenset(v for v in kept if v.kind != "inst" or classes & set(self.index.mro(v.dotted)))
        return (fitting if any(v.kind == "inst" for v in fitting) or not any(v.kind == "inst" for v in kept)
                else kept) | named


def _other_construction(made, other) -> bool:
    """Whether two instances' `made` keys name two different construction calls."""
    return bool(made and other and made[0] == "call" and other[0] == "call" and made != other)


def _omitted(defaults: dict, params, offset: int, arg_terms, kw_terms, limit: int) -> list:
    """The indexes of parameters with a default that a call surely leaves to it: not
    given by position or keyword, with no `*args` or `**kw` that might give it and no
    arguments cut off at `limit`."""
    if len(arg_terms) >= limit or len(kw_terms) >= limit:
        return []
    if any(t is not None and t[0] == STAR for t in arg_terms) or any(k is None for k, _t in kw_terms):
        return []
    named = {k for k, _t in kw_terms}
    return [i for i in defaults if i >= len(arg_terms) + offset and params[i] not in named]


def _requests_fixtures(summary, qualname: str, info) -> bool:
    """A def pytest calls with fixtures for its parameters: a fixture, or a test as
    pytest collects it by default (`test*` at module level or in a `Test*` class, in a
    `test_*.py` or `*_test.py` file)."""
    if info.fixture is not None:
        return True
    owner, _, short = qualname.rpartition(".")
    base = os.path.basename(summary.path)
    return short.startswith("test") and (not owner or (owner.startswith("Test") and "." not in owner)) \
        and base.endswith(".py") and (base.startswith("test_") or base.endswith("_test.py"))


def _hydra_primary(decorators: tuple, path: str) -> Optional[str]:
    """The primary configuration file of a def decorated `@hydra.main(config_path="cfgs",
    config_name="train")` in the file at `path` (`cfgs/train.yaml` beside it); None for
    any other def, or where the decorator's strings are not constants."""
    for deco in decorators:
        if deco[0] != CALL or deco[1] != (G, "hydra.main"):
            continue
        given = dict(zip(("config_path", "config_name"), deco[2]))
        given.update((k, t) for k, t in deco[3] if k in ("config_path", "config_name"))
        folder, name = given.get("config_path"), given.get("config_name")
        if not (folder and name and folder[0] == CONST and name[0] == CONST):
            return None
        base = name[1] if name[1].endswith((".yaml", ".yml")) else f"{name[1]}.yaml"
        return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), folder[1], base))
    return None


def own_super_attribute(expr, scope: Scope) -> bool:
    """`expr` is `super().<attr>` (or `super(Cls, self).<attr>`) in a method, with `super`
    the builtin: an attribute of the next class after the method's own in the MRO."""
    sup = expr.value
    return (type(sup) is _Call and type(sup.func) is _Name and sup.func.id == "super" and bool(scope.cls)
            and bool(scope.self_kind) and "super" not in scope.bound and _own_super(sup, scope))


def _own_super(call: ast.Call, scope: Scope) -> bool:
    """`super()`, or `super(Net, self)` naming the method's own class and first
    parameter (Python 2's spelling, still 27% of the development apps' `super(...).__init__`
    calls): the next class after this one in the receiver's MRO."""
    if not call.args:
        return not call.keywords
    return (len(call.args) == 2 and not call.keywords and type(call.args[0]) is _Name and type(call.args[1]) is _Name
            and call.args[0].id == scope.cls.rsplit(".", 1)[-1] and bool(scope.params) and call.args[1].id == scope.params[0])


def passed_term(arg_terms: tuple, kw_terms: tuple, position: int, names: tuple):
    """The term a recorded call (its argument terms, its (keyword, term) pairs) passes
    for the parameter at `position` (counted after those it skips, such as `self`) that
    is named one of `names`: by position, else by keyword; None when it passes neither.
    The recorded-call twin of `signatures.call_argument`."""
    if 0 <= position < len(arg_terms):
        return arg_terms[position]
    return next((t for k, t in kw_terms if k in names), None)


def _super_init_through(kws: tuple) -> Optional[tuple]:
    """The ("kwargs", def, names, count) term of a recorded `super().__init__(...)` call
    (regions._record_super_init), None for any other call's keywords."""
    if len(kws) == 1 and kws[0][0] is None and kws[0][1] is not None and len(kws[0][1]) == 4:
        return kws[0][1]
    return None


def _is_alternate_constructor(name: str) -> bool:
    """The names other packages give the classmethods that build an instance of the
    class they are called on (`from_pretrained`, `from_config`, `from_single_file`,
    `load_from_checkpoint`, `load`: audiotools' `BaseModel.load`, inherited by vampnet's
    `VampNet`, bench/fresh_reads batch 26). Asked only of a project class with a base of
    another package whose own code does not define the name."""
    return name.startswith(("from_", "_from_")) or name in ("load_from_checkpoint", "load")


def _view(view: Value) -> Value:
    """The container a view method returns (`d.items()`, `d.values()`, `d.keys()`)."""
    every = frozenset().union(*view.elems) if view.elems else EMPTY
    if view.dotted == "items" or view.dotted == "named_children":  # (a module container's (name, module) pairs)
        keys = view.keys or (None,) * len(view.elems)
        pairs = frozenset(Value("seq", None, (frozenset({Value("const", k)}) if k is not None else EMPTY, elems), True)
                          for k, elems in zip(keys, view.elems))
        return Value("seq", None, (pairs,), False)
    if view.dotted == "keys":
        return Value("seq", None, (frozenset(Value("const", k) for k in (view.keys or ()) if k is not None),), False)
    if view.dotted == "copy":
        return Value("seq", None, view.elems, view.ordered, view.keys)
    return Value("seq", None, (every,), False)


def _chosen(entries: list, row) -> list:
    """The bindings of a name that reach a use at `row` (every one when row is None): the
    last unconditional one before it and the conditional ones after that. An entry's
    depth is 0 when unconditional, > 0 inside a branch or loop, and -R for the target of
    a `for` whose last row is R (unconditional in the loop, conditional after it)."""
    if row is None:
        return entries
    chosen, _always = _reaching(entries, row)
    return chosen or entries  # used above its bindings: a loop, or a closure


def _reaching(entries: list, row: int) -> tuple[list, bool]:
    """(the bindings of `entries` that reach a use at `row`, as `_chosen` says, latest
    first; whether the last of them binds on every path to the use)."""
    chosen = []
    # (a binding in another arm of an `if` or `match` the use is in does not reach it)
    for entry in reversed([e for e in entries if e[0] < row and not (len(e) > 4 and _inside(row, e[4]))]):
        chosen.append(entry)
        depth = entry[1]
        if depth == 0 or (depth < 0 and row <= -depth):  # (a loop's target, used in its body)
            return chosen, True
    return chosen, False


def _self_call_rows(body: list, self_name: str) -> list:
    """The rows, sorted, of the calls in `body` (not in nested defs) that call a method of
    `self_name` or of `super()`, or pass `self_name` on: where a method may store an
    attribute of `self` again."""
    rows = []
    for node in walk_scope(body):
        if node.__class__ is not ast.Call:
            continue
        func = node.func
        if func.__class__ is ast.Attribute and (
                (func.value.__class__ is ast.Name and func.value.id == self_name)
                or (func.value.__class__ is ast.Call and func.value.func.__class__ is ast.Name and func.value.func.id == "super")):
            rows.append(node.lineno)
        elif any(a.__class__ is ast.Name and a.id == self_name for a in node.args) \
                or any(k.value.__class__ is ast.Name and k.value.id == self_name for k in node.keywords):
            rows.append(node.lineno)
    rows.sort()
    return rows


def _inside(row: int, spans: tuple) -> bool:
    for first, last in spans:
        if first <= row <= last:
            return True
    return False


def _on_self(callee) -> bool:
    """A recorded call's callee is a method of `self` (`self.register(...)`)."""
    return callee[0] == ATTR and callee[1][0] == SELF


def _open(value: "Value") -> bool:
    """An instance whose class is known only up to its project subclasses (OPEN_SELF)."""
    return bool(value.made) and value.made[0] == OPEN_SELF[0]


def _without_flags(values: frozenset) -> frozenset:
    """`values` less the booleans (Resolver._argument)."""
    return frozenset(v for v in values if v.kind != FLAG) if any(v.kind == FLAG for v in values) else values


def _env_key(env):
    if not env:
        return None
    return tuple(sorted(((k if isinstance(k, str) else repr(k)), v) for k, v in env.items()))


def _config_parent(term) -> Optional[str]:
    """The key a configuration read sits inside: "model" for `cfg.model.instance` and
    `cfg["model"]["instance"]`; None where the read names no enclosing key."""
    if term is None or term[0] not in (ATTR, ITEM):
        return None
    inner = term[1]
    if inner is None:
        return None
    if inner[0] == ATTR:
        return inner[2]
    if inner[0] == ITEM and isinstance(inner[2], tuple) and inner[2][0] == CONST and isinstance(inner[2][1], str):
        return inner[2][1]
    return None


def _target_owner(term):
    """`cfg.model` of the term of `cfg.model.target` (`["target"]`, `.get("target")`, or
    `_target_`): the entry whose target a def that imports a dotted name is given; None
    for any other term."""
    if term is None:
        return None
    if term[0] == ATTR and term[2] in TARGET_KEYS:
        return term[1]
    if term[0] == ITEM and isinstance(term[2], tuple) and term[2][0] == CONST and term[2][1] in TARGET_KEYS:
        return term[1]
    if term[0] == CALL and term[1] is not None and term[1][0] == ATTR and term[1][2] == "get" and term[2] \
            and term[2][0] is not None and term[2][0][0] == CONST and term[2][0][1] in TARGET_KEYS:
        return term[1][1]
    return None
