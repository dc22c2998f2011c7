"""Whether a module runs differently in train and in eval mode, and whether a value is
still in train mode where it is exported or traced.

A module is built in train mode (`training` True) and stays there until `.eval()` or
`.train(False)`. `torch.export.export` and `torch.jit.trace` record the mode they run
in: measured on torch 2.13 CPU (scripts/measure/export_train_mode.py, output in
scripts/measure/out/export_train_mode.txt), a BatchNorm + Dropout module exported or
traced without `.eval()` differs from eager eval by 2.06 / 2.08 (dropout zeroes half
the outputs, batch statistics replace the running ones), and neither
`ep.module().eval()` (NotImplementedError) nor `traced.eval()` changes that afterwards.

- `mode_layer(facts, expr)`: the layer that makes the module `expr` builds depend on
  the mode (`nn.Dropout`, `nn.BatchNorm2d`, `F.dropout(..., training=self.training)`,
  a read of `self.training`), through project classes (this file and others: the
  modules their methods build, their bases), containers (`nn.Sequential(...)`, the
  children of another module: `nn.Sequential(*list(m.children())[:-1])`) and
  torchvision's model builders; None when none is seen.
- `built_in_train_mode(facts, expr, at)`: the expression that built the module `expr`
  holds at `at`, when the code between them provably left it in train mode: it is
  bound in the same scope to a constructor (not a factory, whose body may call
  `.eval()`), and every use in between is a module method that keeps the mode
  (`.to()`, `.load_state_dict()`, `.parameters()`, a call of the module...). An
  `.eval()`, `.train(False)`, or passing it anywhere else gives None.
"""
from __future__ import annotations

import ast
import weakref
from typing import Optional

from ...analysis.modules.classes import is_torch_module_name, local_class, methods
from ...analysis.semantic.facts import ModuleFacts
from ...analysis.semantic.signatures import call_argument
from ...analysis.project.context import path_for_module
from ...analysis.tensors.rng import DROPOUT_MODULES, dropout_module_p

BATCHNORM_MODULES = frozenset({
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
})
# torch.nn layers whose output depends on `training` (InstanceNorm only with
# track_running_stats=True, not its default)
MODE_LAYERS = DROPOUT_MODULES | BATCHNORM_MODULES | frozenset({"RReLU"})
MODE_FUNCTIONS = frozenset({
    "torch.nn.functional.dropout", "torch.nn.functional.dropout1d", "torch.nn.functional.dropout2d",
    "torch.nn.functional.dropout3d", "torch.nn.functional.alpha_dropout", "torch.nn.functional.feature_alpha_dropout",
    "torch.nn.functional.batch_norm",
})
CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})
# model builders of other packages whose models hold BatchNorm or Dropout layers
MODE_BUILDERS = ("torchvision.models.",)
# module methods that keep the mode (and do not hand the module to other code)
KEEPS_MODE = frozenset({
    "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "load_state_dict", "state_dict", "parameters",
    "named_parameters", "buffers", "named_buffers", "requires_grad_", "zero_grad", "share_memory", "to_empty",
    "register_buffer", "forward", "extra_repr",
})
MAX_DEPTH = 6


def mode_layer(facts: ModuleFacts, expr: ast.AST, depth: int = 0) -> Optional[str]:
    """The mode-dependent layer the module built by `expr` holds, by name; None if none is seen."""
    if depth > MAX_DEPTH:
        return None
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in KEEPS_MODE:
        expr = expr.func.value
    if isinstance(expr, ast.Name):
        bound = _constructor_binding(facts, expr)
        return mode_layer(facts, bound.value, depth + 1) if bound is not None else None
    if not isinstance(expr, ast.Call):
        return None
    dotted = facts.resolve(expr.func) or ""
    last = dotted.rpartition(".")[2]
    if is_torch_module_name(dotted) and last in MODE_LAYERS:
        if last in DROPOUT_MODULES and dropout_module_p(facts, expr) == 0:
            return None  # `nn.Dropout(0.0)` is the identity in both modes
        return f"nn.{last}"
    if dotted.startswith(MODE_BUILDERS):
        return f"{dotted} (BatchNorm/Dropout layers)"
    if dotted in CONTAINERS or dotted in ("builtins.list", "builtins.tuple"):
        for arg in [*expr.args, *(k.value for k in expr.keywords)]:
            found = _in_arguments(facts, arg, depth)
            if found:
                return found
        return None
    return class_mode_layer(facts, dotted, depth + 1)


def _in_arguments(facts: ModuleFacts, arg: ast.AST, depth: int) -> Optional[str]:
    """A layer passed to a container: a module built there, a list or comprehension
    of them, or the children of another module (`*list(m.children())[:-1]`)."""
    if isinstance(arg, ast.Starred):
        arg = arg.value
    while isinstance(arg, ast.Subscript):
        arg = arg.value
    if isinstance(arg, (ast.List, ast.Tuple)):
        return next(filter(None, (_in_arguments(facts, e, depth) for e in arg.elts)), None)
    if isinstance(arg, (ast.ListComp, ast.GeneratorExp)):
        return _in_arguments(facts, arg.elt, depth)
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr in ("children", "modules", "values"):
        return mode_layer(facts, arg.func.value, depth + 1)
    return mode_layer(facts, arg, depth + 1)


_SEEN: "weakref.WeakKeyDictionary[ModuleFacts, dict]" = weakref.WeakKeyDictionary()


def class_mode_layer(facts: ModuleFacts, dotted: Optional[str], depth: int = 0) -> Optional[str]:
    """The mode-dependent layer of a project class (this file or another): one its
    methods build, a mode function called with `training=self.training`, a read of
    `self.training`, or one of a project base class. Remembered per class."""
    if not dotted or depth > MAX_DEPTH or dotted.startswith(("torch.", "builtins.")):
        return None
    cls, where = _project_class(facts, dotted)
    if cls is None:
        return None
    memo = _SEEN.setdefault(where, {})
    if id(cls) not in memo:
        memo[id(cls)] = None  # a cycle of classes ends here
        memo[id(cls)] = _class_mode_layer(where, cls, depth)
    return memo[id(cls)]


def _class_mode_layer(where: ModuleFacts, cls: ast.ClassDef, depth: int) -> Optional[str]:
    own = methods(cls)
    init = own.get("__init__")
    evaluated = _evaluated_in_init(init) if init is not None else frozenset()
    if "self" in evaluated:
        return None  # `self.eval()` in `__init__`: built in eval mode, children and all
    skipped = {id(n) for stmt in ast.walk(init) if isinstance(stmt, ast.Assign) and _stores_on(stmt, evaluated)
               for n in ast.walk(stmt.value)} if evaluated else set()
    for method in own.values():
        for node in ast.walk(method):
            if id(node) in skipped:
                continue  # a child `__init__` itself puts in eval mode (`self.flownet.eval()`)
            if isinstance(node, ast.Attribute) and node.attr == "training" and isinstance(node.value, ast.Name) and node.value.id == "self":
                return f"`self.training` in {cls.name}.{method.name}"
            if isinstance(node, ast.Call):
                called = where.resolve(node.func) or ""
                if called in MODE_FUNCTIONS:
                    index = 5 if called.endswith("batch_norm") else 2  # where `training` sits
                    training = node.args[index] if len(node.args) > index else next(
                        (k.value for k in node.keywords if k.arg == "training"), None)
                    if training is not None and not isinstance(training, ast.Constant):
                        return called.replace("torch.nn.functional.", "F.")  # `training=self.training`
                    continue  # a literal or the default: the same in both modes
                if _only_part_kept(where, node):
                    continue  # `Model(args, ckp).model`: the network it holds, not `Model` (EDSR-PyTorch, batch 46)
                found = mode_layer(where, node, depth + 1) if called[:1] and called.rpartition(".")[2][:1].isupper() else None
                if found:
                    return found
    for base in cls.bases:
        found = class_mode_layer(where, where.resolve(base), depth + 1)
        if found:
            return found
    return None


def _only_part_kept(facts: ModuleFacts, call: ast.Call) -> bool:
    """The module a call builds is used only through one of its attributes
    (`Model(args, ckp).model`: EDSR-PyTorch's ONNX wrapper keeps the network the outer
    `Model` holds, whose own forward reads `self.training` and never runs in the export,
    bench/fresh_reads batch 46); a method keeping the module (`.to()`, `.eval()`) is no such read."""
    parent = facts.parent(call)
    return isinstance(parent, ast.Attribute) and parent.value is call and parent.attr not in KEEPS_MODE \
        and parent.attr not in ("eval", "train")


def _evaluated_in_init(init: ast.AST) -> frozenset:
    """The attributes `__init__` puts in eval mode at its top level, after building them
    (`self.flownet.eval()`, `self.net.train(False)`), "self" for `self.eval()`: built that
    way, they stay so until the module's mode is set again, which `built_in_train_mode`
    rules out (GMFupSS-TensorRT's Model evaluates its three networks in `__init__`, so its
    ONNX export, taken with the fresh Model, runs them in eval mode: bench/fresh_reads batch 46)."""
    out = set()
    for stmt in init.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in KEEPS_MODE:
            call = call.func.value  # `self.net.eval().to(device)`
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            continue
        if not (call.func.attr == "eval" and not call.args or call.func.attr == "train" and _switches_off(call)):
            continue
        target = call.func.value
        if isinstance(target, ast.Name) and target.id == "self":
            out.add("self")
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            out.add(target.attr)
    return frozenset(out)


def _stores_on(stmt: ast.Assign, attrs: frozenset) -> bool:
    return any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" and t.attr in attrs
               for t in stmt.targets)


def _project_class(facts: ModuleFacts, dotted: str) -> tuple[Optional[ast.ClassDef], ModuleFacts]:
    local = local_class(facts, dotted)
    if local is not None:
        return local, facts
    module, _, name = dotted.rpartition(".")
    path = path_for_module(facts, module) if module else None
    other = facts.project.facts_for_path(facts, path) if path else None
    if other is None:
        return None, facts
    return next((n for n in other.tree.body if isinstance(n, ast.ClassDef) and n.name == name), None), other


def _constructor_binding(facts: ModuleFacts, name: ast.Name):
    """The one binding of `name` that reaches it, when it is an assignment in the same
    scope (else None: a parameter, a loop variable, several candidates)."""
    from ...analysis.semantic.bindings import bindings_for

    bindings = bindings_for(facts)
    reaching = bindings.reaching(name)
    if len(reaching) != 1 or reaching[0].kind != "assign":
        return None
    if bindings.binding_scope(name) is not bindings.scope_around(name):
        return None
    return reaching[0]


def built_in_train_mode(facts: ModuleFacts, expr: ast.AST, at: ast.AST) -> Optional[ast.AST]:
    """The constructor expression of the module `expr` holds at `at`, when nothing
    between them can have left train mode (see the module docstring)."""
    chain = expr
    while isinstance(chain, ast.Call) and isinstance(chain.func, ast.Attribute):
        if chain.func.attr == "eval" or (chain.func.attr == "train" and _switches_off(chain)):
            return None
        if chain.func.attr not in KEEPS_MODE and chain.func.attr != "train":
            break
        chain = chain.func.value
    if isinstance(chain, ast.Call):
        return chain if _is_constructor(facts, chain) and _children_fresh(facts, chain, at) else None
    if not isinstance(chain, ast.Name):
        return None
    bound = _constructor_binding(facts, chain)
    if bound is None:
        return None
    built = built_in_train_mode(facts, bound.value, bound.stmt)
    scope = facts.enclosing_function(bound.stmt) or facts.tree
    if built is None or not untouched(facts, chain.id, scope, (bound.stmt.end_lineno, bound.stmt.end_col_offset), at):
        return None
    return built


def _switches_off(call: ast.Call) -> bool:
    mode = call_argument(call, 0, "mode")
    return not (mode is None or (isinstance(mode, ast.Constant) and mode.value is True))


def _is_constructor(facts: ModuleFacts, call: ast.Call) -> bool:
    """A class is called (a project or torch.nn class, a CapWords name), or a model
    builder of MODE_BUILDERS: not a factory function of the project."""
    dotted = facts.resolve(call.func) or ""
    if dotted.startswith(MODE_BUILDERS):
        return True
    last = dotted.rpartition(".")[2] or (call.func.attr if isinstance(call.func, ast.Attribute) else "")
    return last[:1].isupper()


def _children_fresh(facts: ModuleFacts, call: ast.Call, at: ast.AST) -> bool:
    """A container built from another module's children (`nn.Sequential(*list(m.children()))`)
    is in train mode only if that module is."""
    for node in ast.walk(call):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("children", "modules"):
            source = node.func.value
            if built_in_train_mode(facts, source, call) is None:
                return False
    return True


def untouched(facts: ModuleFacts, name: str, scope: ast.AST, begin: tuple, end: ast.AST) -> bool:
    """Every use of `name` in the def (or module) `scope`, from position `begin` to the
    node `end`, keeps the module's mode."""
    stop = (end.lineno, end.col_offset)
    own = scope if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else None
    for node in ast.walk(scope):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        here = (node.lineno, node.col_offset)
        if not (begin <= here < stop) or facts.enclosing_function(node) is not own:
            continue
        if not isinstance(node.ctx, ast.Load):
            return False  # rebound on the way
        parent = facts.parent(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            continue  # running the module keeps its mode
        if isinstance(parent, ast.Attribute) and parent.value is node:
            grand = facts.parent(parent)
            if isinstance(grand, ast.Call) and grand.func is parent:
                if parent.attr in KEEPS_MODE or (parent.attr == "train" and not _switches_off(grand)):
                    continue
                return False  # `.eval()`, `.train(False)`, `.apply(...)`, anything else
            continue  # an attribute read (`model.config`)
        return False  # passed, stored or returned: other code may switch it
    return True
