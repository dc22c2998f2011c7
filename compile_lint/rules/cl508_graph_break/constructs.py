"""What CL508 reports, construct by construct: the operators and calls whose break it
names, and the tests that decide whether a call of one is a break (measured by
scripts/measure/graph_break_causes.py: each construct and each look-alike, its ID)."""
from __future__ import annotations

import ast
from typing import Optional

from ...analysis.graph_breaks.common import Breaks
from ...analysis.tensors.kinds import plainly_not_tensor
from ...analysis.reach.queries import class_attrs

REORDERABLE = "reorderable_logging_functions"
CAPTURE_SCALARS = "capture_scalar_outputs"
CAPTURE_SHAPES = "capture_dynamic_output_shape_ops"
LOCAL_SCALAR = {"cause.func": "aten._local_scalar_dense.default"}
# operators whose output shape depends on the data (GB0036), with the aten op Dynamo names;
# measured by scripts/measure/graph_break_causes.py
DYNAMIC_SHAPE_FUNCS = {
    "nonzero": "aten.nonzero.default", "argwhere": "aten.nonzero.default", "where": "aten.nonzero.default",
    "masked_select": "aten.masked_select.default", "unique": "aten._unique2.default",
    "unique_consecutive": "aten.unique_consecutive.default", "bincount": "aten.bincount.default",
    "repeat_interleave": "aten.repeat_interleave.Tensor",
}
DYNAMIC_SHAPE_METHODS = {k: v for k, v in DYNAMIC_SHAPE_FUNCS.items() if k != "where"}
DATA_DEPENDENT_BOOLS = frozenset({"equal", "allclose", "is_nonzero"})  # a Python bool from tensor data (GB0033)
# a tensor value where a Python int is needed (GB0033; as a slice bound GB0124): the sizes of
# factories (every positional argument or the elements of a size tuple), of shape methods,
# and F.pad's padding
SIZE_FACTORIES = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.rand", "torch.randn"})
SIZE_METHODS = frozenset({"view", "reshape", "expand", "repeat", "new_zeros", "new_ones", "new_empty", "new_full"})
PADS = frozenset({"torch.nn.functional.pad"})


SEQUENCE_CALLS = frozenset({"builtins.list", "builtins.tuple", "builtins.sorted", "torch.nn.ModuleList",
                            "torch.nn.ParameterList", "torch.nn.Sequential"})
SEQUENCE_ANNOTATIONS = frozenset({"typing.List", "typing.Tuple", "typing.Sequence", "builtins.list", "builtins.tuple",
                                  "collections.abc.Sequence"})


# conversions that return the tensor itself when nothing changes (`.to()` to its own dtype)
MAY_RETURN_SELF = frozenset({"to", "type", "float", "double", "half", "bfloat16", "cpu", "cuda", "contiguous"})
BUFFER_CTORS = frozenset({"torch.nn.Buffer", "torch.nn.parameter.Buffer"})


def buffer_reassigned(facts, assign: ast.Assign) -> Optional[ast.AST]:
    """The value of `self.pe = self.pe.to(...)` when the class made `pe` with
    `nn.Buffer(...)`: a conversion that changes nothing returns the buffer itself, and
    `Module.__setattr__` registers it again, which Dynamo cannot trace (GB4841, measured:
    transformers' ctrl; a real conversion or a new tensor does not break)."""
    value = assign.value
    if len(assign.targets) != 1 or not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return None
    target, source = assign.targets[0], value.func.value
    if value.func.attr not in MAY_RETURN_SELF or not (
            isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
            and isinstance(source, ast.Attribute) and isinstance(source.value, ast.Name) and source.value.id == "self"
            and source.attr == target.attr):
        return None
    made = class_attrs(facts, assign).get(target.attr, ())
    return value if any(facts.resolve(ctor.func) in BUFFER_CTORS for _, ctor in made) else None


def requires_grad_set(facts, assign: ast.Assign, breaks: Breaks) -> Optional[ast.AST]:
    """`t.requires_grad = ...` on a tensor: GB0206 (measured; transformers' wav2vec2 feature
    encoder sets it on its input in training, for gradient checkpointing). The receiver is
    a tensor by the guess, or a local name: only tensors have the attribute (a module's
    `self.requires_grad = ...` is a plain attribute)."""
    for target in assign.targets:
        if not (isinstance(target, ast.Attribute) and target.attr == "requires_grad"):
            continue
        receiver = target.value
        local = isinstance(receiver, ast.Name) and receiver.id not in ("self", "cls") and facts.resolve(receiver) is None
        if local or breaks.is_tensor(assign, receiver):
            return target
    return None


def entered_lock(facts, item: ast.withitem) -> bool:
    """`with LOCK:` on a `threading.Lock()` (RLock, Semaphore...) a module-level name or
    `self.<attr>` holds: Dynamo cannot enter it, GB0142 (measured; transformers' output
    capturing takes one to install its hooks on the first call)."""
    from ...analysis.branches.compiling import single_binding
    from ...analysis.graph_breaks.untraceable_calls import LOCKS

    made = item.context_expr
    if isinstance(made, ast.Name):
        bound = single_binding(facts, made)
        return isinstance(bound, ast.Call) and facts.resolve(bound.func) in LOCKS
    if isinstance(made, ast.Attribute) and isinstance(made.value, ast.Name) and made.value.id == "self":
        assigned = class_attrs(facts, made).get(made.attr, ())
        return bool(assigned) and all(facts.resolve(v.func) in LOCKS for _, v in assigned)
    return False


def statement_cause(facts, node: ast.AST, breaks: Breaks) -> Optional[tuple]:
    """(node to report, what, ID) for an assignment or a `with` item that breaks."""
    if isinstance(node, ast.withitem):
        return (node.context_expr, "`with` on a threading lock", "GB0142") if entered_lock(facts, node) else None
    value = buffer_reassigned(facts, node)
    if value is not None:
        return value, "re-assigning an `nn.Buffer` attribute to a conversion of itself", "GB4841"
    target = requires_grad_set(facts, node, breaks)
    return (target, "setting `.requires_grad` of a tensor", "GB0206") if target is not None else None


def python_sequence(facts, at: ast.AST, expr: ast.AST, breaks: Breaks, depth: int = 0) -> bool:
    """`expr`, read at `at`, is a Python list or tuple (or a ModuleList): a literal, a
    name every binding of which is one (or a tuple of tensors a call gives), a
    `self.<attr>` the class only ever assigns one, or a parameter annotated so."""
    if isinstance(expr, (ast.List, ast.Tuple, ast.ListComp)):
        return True
    if isinstance(expr, ast.Call):
        return facts.resolve(expr.func) in SEQUENCE_CALLS
    guess = breaks.tensors(at)
    if guess is None or depth > 2:
        return False
    if isinstance(expr, ast.Name):
        if guess.seq(expr.id) is not None:
            return True
        func = guess.func
        values = [v for v in guess.bound_values(expr.id)]
        if values:
            return all(v is not None and python_sequence(facts, at, v, breaks, depth + 1) for v in values)
        args = getattr(func, "args", None)
        param = next((a for a in (args.posonlyargs + args.args + args.kwonlyargs if args else [])
                      if a.arg == expr.id), None)
        ann = param.annotation if param is not None else None
        head = ann.value if isinstance(ann, ast.Subscript) else ann
        return head is not None and facts.resolve(head) in SEQUENCE_ANNOTATIONS
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        assigned = class_attrs(facts, expr).get(expr.attr, ())
        return bool(assigned) and all(facts.resolve(v.func) in SEQUENCE_CALLS for _, v in assigned)
    return False



def tensor_size(breaks: Breaks, call: ast.Call, dotted: Optional[str]):
    """A tensor value given as a size or a padding: `torch.zeros(n)`, `x.view(b, n)`,
    `F.pad(x, (0, n))` with `n = lengths[-1] + 1`."""
    func = call.func
    if dotted in SIZE_FACTORIES or dotted in PADS:
        sizes = call.args[1:2] if dotted in PADS else call.args[:1] if dotted == "torch.full" else call.args
    elif isinstance(func, ast.Attribute) and dotted is None and func.attr in SIZE_METHODS:
        sizes = call.args[:1] if func.attr == "new_full" else call.args
    else:
        return None
    parts = [e for a in sizes for e in (a.elts if isinstance(a, (ast.Tuple, ast.List)) else [a])]
    # the sizes' forms first: `x.view(-1)` and `x.flatten(1)` need no guess of the
    # function (a guess costs milliseconds; CL508 asks every size method of compiled code)
    parts = [p for p in parts if not isinstance(p, ast.Starred) and not plainly_not_tensor(breaks.facts, p)]
    if not parts or dotted is None and not breaks.is_tensor(call, func.value):
        return None
    size = next((p for p in parts if breaks.only_tensor(call, p)), None)
    if size is None:
        return None
    return breaks.report(size, "a tensor value as a size", "GB0033", CAPTURE_SCALARS, LOCAL_SCALAR)

def dynamic_shape(breaks: Breaks, call: ast.Call, name: str, args: list) -> bool:
    """Whether this call of a dynamic-shape operator has a data-dependent output shape:
    `torch.where` only with one argument, `repeat_interleave` only with tensor repeats
    and no `output_size`."""
    if name == "where":
        return len(args) == 1 and not call.keywords
    if name == "repeat_interleave":
        if any(kw.arg == "output_size" for kw in call.keywords):
            return False
        repeats = args[1] if len(args) > 1 else next((kw.value for kw in call.keywords if kw.arg == "repeats"), None)
        return breaks.is_tensor(call, repeats) if repeats is not None else len(args) == 1
    return True

def prints_size(call: ast.Call) -> bool:
    """A bare `torch.Size` argument (`x.shape`, `x.size()`): Dynamo cannot reorder
    that print even when `print` is reorderable."""
    for arg in list(call.args) + [kw.value for kw in call.keywords]:
        if isinstance(arg, ast.Attribute) and arg.attr == "shape":
            return True
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "size" and not arg.args:
            return True
    return False

def print_reorderable(facts) -> bool:
    """The module puts `print` into Dynamo's `reorderable_logging_functions`
    (`.add(print)`, `.update({print})`, `= {print}`, `patch(reorderable_logging_functions=...)`):
    Dynamo then moves the call after the graph instead of breaking it."""
    for node in facts.nodes(ast.Attribute, ast.keyword):
        if isinstance(node, ast.keyword):
            if node.arg != REORDERABLE:
                continue
        elif node.attr != REORDERABLE or not (facts.resolve(node) or "").startswith("torch."):
            continue
        stmt = facts.statement_of(node)
        if any(isinstance(n, ast.Name) and facts.resolve(n) == "builtins.print" for n in ast.walk(stmt)):
            return True
    return False
