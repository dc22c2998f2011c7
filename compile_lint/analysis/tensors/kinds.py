"""A cheap guess at which expressions are tensors, and which are boolean tensors, inside
one function.

Dynamo graph-breaks on Python-level reads of tensor values (`bool(t)`, `if t:`,
`t.item()`) and on indexing with a boolean mask (`x[keep]`: the output's shape depends on
the data), so the graph-break rules must tell a tensor from a Python number, and a
boolean mask from an index tensor, without running anything. The guess is deliberately
conservative: a value is a tensor when it comes from a torch op, a tensor method,
arithmetic on a tensor, or a parameter annotated as a Tensor; an unannotated parameter
is unknown (it may be an int). A value is a boolean mask when it is a comparison of a
tensor, a logical op (`&`, `|`, `^`, `~`, `torch.logical_*`, `isfinite`/`isnan`/`isinf`),
a cast to `torch.bool`, a tensor made with `dtype=torch.bool`, a reduction of a mask
over a dimension, a row of a mask, or a name whose every assignment in the function is
one; or a name tested `name.dtype == torch.bool` on the way to the use.
"""
from __future__ import annotations

import ast
from typing import Optional

from ..semantic.bindings import bindings_under
from ..semantic.facts import ModuleFacts
from ..semantic.signatures import parameter_names
from ..semantic.walk import own_nodes
from ..modules.classes import self_name

# Methods of a tensor that return Python values or non-tensors.
NON_TENSOR_METHODS = frozenset(
    {
        "size", "dim", "ndimension", "numel", "item", "tolist", "numpy", "element_size",
        "data_ptr", "stride", "storage_offset", "is_contiguous", "is_floating_point",
        "is_complex", "get_device", "nelement", "type", "__len__", "untyped_storage",
    }
)
NON_TENSOR_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout", "names", "T_", "grad_fn"})
# torch.* callables that do not return tensors
NON_TENSOR_TORCH = (
    "torch.is_", "torch.cuda.", "torch.backends.", "torch.get_", "torch.set_", "torch.Size",
    "torch.device", "torch.dtype", "torch.finfo", "torch.iinfo", "torch.jit.", "torch.compiler.",
    "torch._dynamo.", "torch.autograd.", "torch.manual_seed", "torch.no_grad", "torch.enable_grad",
    "torch.inference_mode", "torch.autocast", "torch.amp.", "torch.nn.", "torch.distributed.",
    "torch.Generator", "torch.compile", "torch.load", "torch.save", "torch.numel", "torch.typename",
    "torch.utils.", "torch.testing.", "torch.sym_", "torch.export.", "torch.fx.", "torch.library.",
)
# Methods that only tensors (and numpy arrays) have: the receiver is a tensor.
TENSOR_METHODS = frozenset(
    {
        "sum", "mean", "amax", "amin", "abs", "any", "all", "norm", "std", "var", "clamp",
        "clamp_min", "clamp_max", "sigmoid", "softmax", "exp", "log", "sqrt", "pow", "float",
        "half", "bfloat16", "double", "contiguous", "view", "reshape", "permute", "unsqueeze",
        "squeeze", "flatten", "detach", "argmax", "argmin", "nonzero", "isnan", "isinf", "lerp",
        "masked_fill", "sign", "round", "floor", "ceil", "prod", "cumsum", "matmul", "bmm",
        "max", "min", "long", "isfinite", "logical_not", "masked_select",
    }
)
# the tensor methods of TENSOR_METHODS that take no positional argument (`log() -> Tensor`):
# called with one, the receiver is some other object (`debug.log("OOM ...")`, SeedVR2's
# memory manager: bench/fresh_reads batch 15). tests/test_tensor_method_calls.py checks
# both sets against the installed torch.
NO_POSITIONAL_TENSOR_METHODS = frozenset({
    "abs", "ceil", "detach", "exp", "floor", "isfinite", "isinf", "isnan", "log", "logical_not", "nonzero",
    "sigmoid", "sign", "sqrt",
})


def fits_tensor_method(call: ast.Call) -> bool:
    """Whether a call of a TENSOR_METHODS name can be the tensor's method: not with a
    positional argument where the method takes none, nor with a string one (none of them
    takes a string: `logger.log("step")`, `parser.sum("a")`)."""
    if call.args and call.func.attr in NO_POSITIONAL_TENSOR_METHODS:
        return False
    return not any(a.__class__ is ast.JoinedStr or a.__class__ is ast.Constant and isinstance(a.value, str)
                   for a in call.args)


# torch.* functions and tensor methods whose result is a boolean tensor
BOOL_OPS = frozenset(
    {
        "isfinite", "isnan", "isinf", "isposinf", "isneginf", "isreal", "isin", "logical_and", "logical_or",
        "logical_not", "logical_xor", "eq", "ne", "gt", "ge", "lt", "le", "greater", "greater_equal", "less",
        "less_equal", "not_equal", "bool", "signbit",
    }
)
BOOL_REDUCTIONS = frozenset({"any", "all"})  # of a mask over a dimension: a mask
MIN_MAX = frozenset({"builtins.max", "builtins.min"})
PYTHON_SCALARS = frozenset({"builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.complex"})
TENSOR_TORCH_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.")
TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "torch.FloatTensor", "torch.HalfTensor", "torch.BoolTensor",
                                "torch.LongTensor", "torch.IntTensor", "torch.DoubleTensor", "torch.ByteTensor"})


def is_torch_tensor_call(dotted: Optional[str]) -> bool:
    if not dotted or not dotted.startswith("torch."):
        return False
    if dotted.startswith(TENSOR_TORCH_NAMESPACES):
        return True
    if dotted.startswith(NON_TENSOR_TORCH):
        return False
    tail = dotted.rsplit(".", 1)[-1]
    return dotted.count(".") == 1 and tail[:1].islower()


class TensorGuess:
    def __init__(self, facts: ModuleFacts, func: ast.AST, flow=None):
        self.facts = facts
        self.func = func
        # what other defs say (analysis/tensors/calls.py: returns, callers' arguments,
        # `self.<attr>` buffers); None: this def alone
        self.flow = flow
        self._names: dict[str, bool] = {}
        self._seqs: dict[str, tuple] = {}  # names holding a tuple of tensors: name -> the kinds of its elements
        self._unsettled: set[str] = set()  # parameters whose callers are not read yet (see _settle)
        # names whose every item is a tensor, however many (`params: Dict[str, torch.Tensor]`,
        # `factors = tuple(params[k] for k in KEYS)`): an item read from them is a tensor
        self.holders: set[str] = set()
        self.hidden: frozenset = frozenset()  # names known not to hold a tensor where asked (see not_tensors_at)
        self._params: set[str] = set()
        # names a tensor for a reason other than an assignment: a parameter's annotation or
        # callers, a tensor method called on it (see _before_assignment)
        self._evidence: set[str] = set()
        self._comprehension_names: set[str] = set()
        # id(generator) whose loop variable has a tensor method called on it in the comprehension
        self._element_evidence: set[int] = set()
        self._collect()

    def _collect(self) -> None:
        from .calls import is_tensor_kind

        func = self.func
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for arg in func.args.posonlyargs + func.args.args + func.args.kwonlyargs:
                self._params.add(arg.arg)
                if arg.annotation is not None and self._is_tensor_annotation(arg.annotation):
                    self._names[arg.arg] = True
                    self._evidence.add(arg.arg)
                elif arg.annotation is not None and self._holds_tensors(arg.annotation):
                    self.holders.add(arg.arg)
                elif self.flow is not None and not (arg.annotation is not None and self.facts.resolve(
                        arg.annotation) in PYTHON_SCALARS):
                    # what the callers pass is read when first asked: most parameters never
                    # are, and each asks every caller's guess (CL508's largest cost). Not for
                    # `x: float`: the code says a number, whatever a guess of a caller's
                    # argument says (doctr's NumPy post-processing, bench/dev12)
                    self._unsettled.add(arg.arg)
        body = func.body if isinstance(func.body, list) else [func.body]
        nodes = own_nodes(body)  # walked once, read three times
        # names a comprehension binds: inside it they are its own (`[int(h) for h in
        # heights]` next to `h = torch.tensor(...)`: switti, bench/dev25), see _comprehended
        self._comprehension_names = {n.id for node in nodes if isinstance(node, ast.comprehension)
                                     for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        # a name whose tensor-only methods are called is a tensor (`img.mean(1)`); not a
        # method's own receiver: `self.norm(x)` calls a submodule named like a tensor
        # method (olmoearth's FlexiPatchEmbed, bench/dev45: `self` became a tensor, and
        # so did what every `self._helper(...)` returns)
        receiver = self_name(func) if isinstance(self.facts.parent(func), ast.ClassDef) else None
        for node in nodes:
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in TENSOR_METHODS
                and isinstance(node.func.value, ast.Name)
                and fits_tensor_method(node)
                and node.func.value.id != receiver
                and self.facts.resolve(node.func.value) is None
            ):
                name = node.func.value
                generator = self._comprehended(name) if name.id in self._comprehension_names else None
                if generator is not None:  # about the comprehension's own name
                    self._element_evidence.add(id(generator))
                    continue
                self._names[name.id] = True
                self._evidence.add(name.id)
        # two rounds so `b = a * 2` after `a = torch.rand(...)` is seen either way round
        assigns = [node for node in nodes if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
        self._bound: dict[str, list] = {}  # name -> the values assigned to it (None: unknown)
        for node in nodes:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)) else []
            for target in targets:
                value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) else None
                if isinstance(target, ast.Name):
                    self._bound.setdefault(target.id, []).append(value)
                elif isinstance(target, (ast.Tuple, ast.List)):
                    parts = self.parts(value, len(target.elts))
                    for i, elt in enumerate(target.elts):
                        if isinstance(elt, ast.Name):
                            part = parts[i] if parts else (value if self.is_tensor(value) else None)
                            self._bound.setdefault(elt.id, []).append(part)
        for _ in range(2):
            for node in assigns:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                        and self._all_tensors(node.value) and all(
                            v is not None and self._all_tensors(v) for v in self._bound.get(node.targets[0].id, ())):
                    self.holders.add(node.targets[0].id)
                if isinstance(node, ast.Assign) and any(isinstance(t, (ast.Tuple, ast.List)) for t in node.targets):
                    for target in node.targets:
                        parts = self.parts(node.value, len(target.elts)) if isinstance(target, (ast.Tuple, ast.List)) else None
                        if parts is None:
                            continue
                        # `candidates, valid = _five_point_candidates(design)`: element by element
                        for elt, part in zip(target.elts, parts):
                            if isinstance(elt, ast.Name) and part is not None and self.is_tensor(part):
                                self._names[elt.id] = True
                if isinstance(node, ast.Assign) and self.is_tensor(node.value):
                    for target in node.targets:
                        if isinstance(target, (ast.Tuple, ast.List)) and self.parts(node.value, len(target.elts)) is not None:
                            continue  # what each part is was said above
                        # `vals, idx = torch.topk(...)`, `a, b = t.unbind(0)`: each part is a tensor
                        for name in ([target] if isinstance(target, ast.Name) else target.elts
                                     if isinstance(target, (ast.Tuple, ast.List)) else []):
                            if isinstance(name, ast.Name):
                                self._names[name.id] = True
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
                    if node.value is not None and self.is_tensor(node.value):
                        self._names[node.target.id] = True

    def _comprehended(self, name: ast.Name) -> Optional[ast.comprehension]:
        """The generator of a comprehension around `name` that binds it: there the name
        is the comprehension's own, not the function's (the first generator's iterable
        is read in the function's scope)."""
        child = grandchild = name
        for anc in self.facts.ancestors(name):
            if anc is self.func:
                return None
            if isinstance(anc, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                generators = anc.generators
                if child in generators:  # its iterable sees the generators before it, its `if`s itself too
                    at = generators.index(child)
                    generators = generators[: at + 1] if grandchild in child.ifs else generators[:at]
                for generator in reversed(generators):  # the innermost binding
                    if any(isinstance(n, ast.Name) and n.id == name.id for n in ast.walk(generator.target)):
                        return generator
            grandchild, child = child, anc
        return None

    def _iterates_tensors(self, generator: ast.comprehension) -> bool:
        """The loop variable of `generator` holds a tensor: it is one name iterating a
        tensor (each element is a tensor) or a sequence of tensors, or a tensor method is
        called on it in the comprehension; a name unpacked from elements is not told."""
        if not isinstance(generator.target, ast.Name):
            return False
        if id(generator) in self._element_evidence:
            return True
        it = generator.iter
        if isinstance(it, ast.Name) and it.id in self.holders:
            return True
        return self._all_tensors(it) or self.is_tensor(it)

    def _before_assignment(self, name: ast.Name) -> bool:
        """A parameter that only an assignment makes a tensor, read where no assignment
        reaches: it holds what the caller passed (`if max_length and max_length > 0:
        max_length = max_length * torch.ones(n)`, AlgoPerf's SpecAug, bench/dev15). Not
        in a loop, where an assignment below reaches the next round."""
        for anc in self.facts.ancestors(name):
            if anc is self.func:
                break
            if isinstance(anc, (ast.For, ast.AsyncFor, ast.While, ast.comprehension)):
                return False
        reaching = bindings_under(self.facts).reaching(name)
        return bool(reaching) and all(b.kind == "param" for b in reaching)

    def _settle(self, name: str) -> None:
        """Read what this file's callers pass for parameter `name`, once."""
        if name in self._unsettled:
            from .calls import is_tensor_kind

            self._unsettled.discard(name)
            kind = self.flow.param_kind(self.func, name)
            if is_tensor_kind(kind):
                self._names[name] = True
                self._evidence.add(name)
            elif isinstance(kind, tuple):
                self._seqs[name] = kind

    def seq(self, name: str) -> Optional[tuple]:
        """The kinds of the elements of the tuple `name` holds (None: not a known tuple)."""
        self._settle(name)
        return self._seqs.get(name)

    def bound_values(self, name: str) -> list:
        """The values assigned to `name` in the function (None: a binding with no plain
        value, a loop target or an augmented assignment)."""
        return list(self._bound.get(name, ()))

    def parts(self, value: Optional[ast.AST], n: int) -> Optional[list]:
        """What each of `n` names gets from unpacking `value`, when a call or a tuple of
        tensors says (a `Known` kind or None per element); None when nothing says."""
        from .calls import Known

        kinds = None
        if isinstance(value, ast.Name):
            kinds = self.seq(value.id)
        elif isinstance(value, ast.Call) and self.flow is not None:
            kinds = self.flow.returns_kind(value)
        if not isinstance(kinds, tuple) or len(kinds) != n:
            return None
        return [Known(k) if isinstance(k, str) else None for k in kinds]

    def _holds_tensors(self, ann: ast.expr) -> bool:
        """`Dict[str, torch.Tensor]`, `List[torch.Tensor]`, `Tuple[torch.Tensor, ...]`,
        `Sequence[Tensor]` (also `Optional[...]` of one): every item a tensor."""
        if isinstance(ann, ast.Subscript) and self.facts.resolve(ann.value) == "typing.Optional":
            return self._holds_tensors(ann.slice)
        if not isinstance(ann, ast.Subscript):
            return False
        head = self.facts.resolve(ann.value) or ""
        items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        if head.rsplit(".", 1)[-1] in ("Dict", "dict", "Mapping", "MutableMapping") and len(items) == 2:
            return self._is_tensor_annotation(items[1])
        if head.rsplit(".", 1)[-1] in ("List", "list", "Sequence", "Tuple", "tuple", "Iterable"):
            kinds = [i for i in items if not (isinstance(i, ast.Constant) and i.value is Ellipsis)]
            return bool(kinds) and all(self._is_tensor_annotation(i) for i in kinds)
        return False

    def _all_tensors(self, value: ast.AST) -> bool:
        """A list, tuple or comprehension whose every item is a tensor."""
        if isinstance(value, ast.Call) and self.facts.resolve(value.func) in ("builtins.tuple", "builtins.list") \
                and len(value.args) == 1:
            value = value.args[0]
        if isinstance(value, (ast.GeneratorExp, ast.ListComp)):
            return self.is_tensor(value.elt)
        if isinstance(value, (ast.Tuple, ast.List)):
            return bool(value.elts) and all(self.is_tensor(e) for e in value.elts)
        return False

    def _is_tensor_annotation(self, ann: ast.expr) -> bool:
        # `Optional[torch.LongTensor]`, `torch.Tensor | None`: a tensor where it is not None
        if isinstance(ann, ast.Subscript) and self.facts.resolve(ann.value) == "typing.Optional":
            return self._is_tensor_annotation(ann.slice)
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
            parts = [ann.left, ann.right]
            none = [p for p in parts if isinstance(p, ast.Constant) and p.value is None]
            return len(none) == 1 and all(self._is_tensor_annotation(p) for p in parts if p not in none)
        dotted = self.facts.resolve(ann)
        if dotted in TENSOR_ANNOTATIONS:
            return True
        return isinstance(ann, ast.Constant) and ann.value in ("Tensor", "torch.Tensor")

    def only_tensor(self, expr: ast.AST, depth: int = 0) -> bool:
        """`expr` holds tensor data where a Python int would do (a size, a slice bound):
        a tensor on every assignment of a name (`n = t.sum()` then `n = int(n)` is not),
        and made from a tensor, not only from Python numbers (`torch.div(seq_len, w,
        rounding_mode="trunc")` on ints is folded by Dynamo: no break, transformers'
        longformer)."""
        if depth > 4 or not self.is_tensor(expr):
            return False
        if isinstance(expr, ast.Name):
            values = self._bound.get(expr.id)
            if values is None or expr.id in self._comprehension_names and self._comprehended(expr) is not None:
                return True  # a parameter (its annotation says), or an element of a tensor iterated
            return all(v is not None and self.only_tensor(v, depth + 1) for v in values)
        if isinstance(expr, ast.BinOp):
            return self.only_tensor(expr.left, depth + 1) or self.only_tensor(expr.right, depth + 1)
        if isinstance(expr, ast.Call) and not (isinstance(expr.func, ast.Attribute) and self.facts.resolve(expr.func) is None):
            # torch.f(...): from tensor data only when an argument is a tensor
            args = list(expr.args) + [kw.value for kw in expr.keywords]
            return any(self.only_tensor(a, depth + 1) for a in args)
        return True

    def is_tensor(self, expr: ast.AST) -> bool:
        from .calls import Known, is_tensor_kind

        if isinstance(expr, ast.Name):
            if expr.id in self.hidden:
                return False
            if expr.id in self._comprehension_names:
                generator = self._comprehended(expr)
                if generator is not None:
                    return self._iterates_tensors(generator)
            self._settle(expr.id)
            found = self._names.get(expr.id, False)
            if found and expr.id in self._params and expr.id not in self._evidence and self._before_assignment(expr):
                return False
            return found
        if isinstance(expr, Known):
            return is_tensor_kind(expr.kind)
        if isinstance(expr, ast.Call):
            func = expr.func
            dotted = self.facts.resolve(func)
            if is_torch_tensor_call(dotted):
                return True
            if dotted in MIN_MAX and expr.args and not expr.keywords and len(expr.args) > 1:
                # Dynamo turns `max(a, b)` of tensors into torch.maximum: a tensor, no break
                return any(self.is_tensor(a) for a in expr.args)
            if isinstance(func, ast.Attribute) and dotted is None:
                if func.attr in NON_TENSOR_METHODS:
                    return False
                if func.attr in TENSOR_METHODS and fits_tensor_method(expr) or self.is_tensor(func.value):
                    return True
            return self.flow is not None and is_tensor_kind(self.flow.returns_kind(expr))
        if isinstance(expr, ast.BinOp):
            return self.is_tensor(expr.left) or self.is_tensor(expr.right)
        if isinstance(expr, ast.BoolOp):
            # `a and t`: the truth of every operand may be asked, and any may be the value
            return any(self.is_tensor(v) for v in expr.values)
        if isinstance(expr, ast.UnaryOp):
            return not isinstance(expr.op, ast.Not) and self.is_tensor(expr.operand)
        if isinstance(expr, ast.Compare):
            if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in expr.ops):
                return False
            return self.is_tensor(expr.left) or any(self.is_tensor(c) for c in expr.comparators)
        if isinstance(expr, ast.Subscript):
            if isinstance(expr.value, ast.Name) and expr.value.id in self.holders and not isinstance(expr.slice, ast.Slice):
                return expr.value.id not in self.hidden
            if isinstance(expr.value, ast.Name) and isinstance(expr.slice, ast.Constant) \
                    and isinstance(expr.slice.value, int) and (kinds := self.seq(expr.value.id)) is not None:
                return -len(kinds) <= expr.slice.value < len(kinds) and is_tensor_kind(kinds[expr.slice.value])
            return self.is_tensor(expr.value)
        if isinstance(expr, ast.Attribute):
            if expr.attr in NON_TENSOR_ATTRS:
                return False
            if expr.attr in ("T", "mT", "real", "imag", "data", "grad") and self.is_tensor(expr.value):
                return True
            return self.flow is not None and is_tensor_kind(self.flow.attr_kind(expr))
        return False


def plainly_not_tensor(facts: ModuleFacts, expr: ast.AST) -> bool:
    """Whether TensorGuess.is_tensor answers False for `expr` whatever the guess of its
    function: its form alone says so (a constant, `x is None`, `not x`, `x.shape[0]`,
    `x.size(1)`). It mirrors is_tensor, branch for branch. Asked first, it spares the
    guess of a function whose only questions are of that form (CL508 asks every `if`
    test and size argument of compiled code; a guess costs milliseconds)."""
    from .calls import Known

    if isinstance(expr, (ast.Name, Known)):
        return False
    if isinstance(expr, ast.Call):
        func = expr.func
        return isinstance(func, ast.Attribute) and func.attr in NON_TENSOR_METHODS and facts.resolve(func) is None
    if isinstance(expr, ast.BinOp):
        return plainly_not_tensor(facts, expr.left) and plainly_not_tensor(facts, expr.right)
    if isinstance(expr, ast.BoolOp):
        return all(plainly_not_tensor(facts, v) for v in expr.values)
    if isinstance(expr, ast.UnaryOp):
        return isinstance(expr.op, ast.Not) or plainly_not_tensor(facts, expr.operand)
    if isinstance(expr, ast.Compare):
        if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in expr.ops):
            return True
        return plainly_not_tensor(facts, expr.left) and all(plainly_not_tensor(facts, c) for c in expr.comparators)
    if isinstance(expr, ast.Subscript):
        return not isinstance(expr.value, ast.Name) and plainly_not_tensor(facts, expr.value)
    if isinstance(expr, ast.Attribute):
        return expr.attr in NON_TENSOR_ATTRS
    return True


def plainly_not_mask(expr: ast.AST) -> bool:
    """Whether MaskGuess.is_mask answers False for `expr` whatever the guesses: a form it
    never reads as a mask (a constant, a slice, an attribute, `a + b`), or a part of one.
    It mirrors is_mask's branches, as plainly_not_tensor mirrors is_tensor's."""
    from .calls import Known

    while isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.BinOp):
        return not isinstance(expr.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) or (
            plainly_not_mask(expr.left) and plainly_not_mask(expr.right))
    if isinstance(expr, ast.UnaryOp):
        return not isinstance(expr.op, ast.Invert) or plainly_not_mask(expr.operand)
    return not isinstance(expr, (ast.Name, Known, ast.Compare, ast.Call))


class MaskGuess:
    """Which expressions of one function are boolean tensors (masks), on top of a
    TensorGuess of the same function."""

    def __init__(self, facts: ModuleFacts, tensors: TensorGuess):
        self.facts = facts
        self.tensors = tensors
        self._names: set[str] = set()
        func = tensors.func
        body = func.body if isinstance(func.body, list) else [func.body]
        assigned: dict[str, list[Optional[ast.expr]]] = {}
        # name -> (statement, value) of each binding, value None unless a plain `name = value`
        # (for the binding that reaches a use)
        self._plain: dict[str, list[tuple[ast.stmt, Optional[ast.expr]]]] = {}
        # parameters every caller in the file passes a mask: read when first asked (TensorGuess._settle)
        self._unsettled: set[str] = set()
        if tensors.flow is not None and isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._unsettled = parameter_names(func.args)
        for node in own_nodes(body):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.NamedExpr)) else []
            for target in targets:
                value = getattr(node, "value", None) if not isinstance(node, ast.For) else None
                parts = tensors.parts(value, len(target.elts)) if isinstance(target, (ast.Tuple, ast.List)) else None
                if parts is not None:  # `candidates, valid = _five_point_candidates(design)`
                    for elt, part in zip(target.elts, parts):
                        _bind(elt, part, assigned)
                        if isinstance(elt, ast.Name):
                            self._plain.setdefault(elt.id, []).append((node, part))
                    continue
                _bind(target, value, assigned)
                plain = node.value if isinstance(node, ast.Assign) and isinstance(target, ast.Name) else None
                for bound in _bound_names(target):
                    self._plain.setdefault(bound, []).append((node, plain))
        for _ in range(2):  # `keep = valid & mask` after `valid = x > 0`, either order
            for name, values in assigned.items():
                if values and all(v is not None and self.is_mask(v) for v in values):
                    self._names.add(name)

    def _reaching_mask(self, name: str, at: ast.AST) -> bool:
        """The last `name = value` before `at` is a mask and always runs on the way to it
        (its block holds `at`), with no other binding of `name` between them:
        `router_mask = router_mask.bool()` after `router_mask, probs = self.router(x)`."""
        plain = [(stmt, value) for stmt, value in self._plain.get(name, ()) if _before(stmt, at)]
        if not plain:
            return False
        stmt, value = max(plain, key=lambda sv: (sv[0].lineno, sv[0].col_offset))
        ancestors = set(map(id, self.facts.ancestors(at)))
        if id(self.facts.parent(stmt)) not in ancestors or id(stmt) in ancestors:
            return False
        return value is not None and self.is_mask(value)

    def is_mask(self, expr: ast.AST, at: Optional[ast.AST] = None) -> bool:
        """`expr` is a boolean tensor; `at`: the node using it (for a dtype test above it)."""
        from .calls import MASK, Known

        facts, tensors = self.facts, self.tensors
        if isinstance(expr, ast.Name):
            if expr.id in self._unsettled:
                self._unsettled.discard(expr.id)
                if tensors.flow.param_kind(tensors.func, expr.id) == MASK:
                    self._names.add(expr.id)
            return expr.id in self._names or (at is not None and (
                _dtype_tested(facts, expr.id, at) or self._reaching_mask(expr.id, at)))
        if isinstance(expr, Known):
            return expr.kind == MASK
        if isinstance(expr, ast.Compare):
            return tensors.is_tensor(expr)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return self.is_mask(expr.left, at) or self.is_mask(expr.right, at)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Invert):
            return self.is_mask(expr.operand, at)
        if isinstance(expr, ast.Subscript):  # any part of a mask is a mask: `mask[0]`, `mask[:, 1]`
            return self.is_mask(expr.value, at)
        if isinstance(expr, ast.Call):
            dotted = facts.resolve(expr.func)
            name = dotted[6:] if dotted and dotted.startswith("torch.") and dotted.count(".") == 1 else None
            if name in BOOL_OPS:
                return True
            if _dtype_is_bool(facts, expr) and (name is not None or isinstance(expr.func, ast.Attribute) and dotted is None):
                return True  # torch.zeros(..., dtype=torch.bool), t.to(torch.bool)
            if isinstance(expr.func, ast.Attribute) and dotted is None:
                method, receiver = expr.func.attr, expr.func.value
                if method in BOOL_OPS - {"bool"} and tensors.is_tensor(receiver):
                    return True
                if method == "bool" and not expr.args and not expr.keywords:
                    return True  # `t.bool()`: only tensors have the method (a Python value has no `.bool()`)
                if method in BOOL_REDUCTIONS and (expr.args or expr.keywords) and self.is_mask(receiver, at):
                    return True
                if method in ("clone", "detach", "contiguous", "flatten", "view", "reshape", "squeeze", "unsqueeze",
                              "expand", "expand_as", "to", "cpu", "cuda", "t", "transpose", "permute", "repeat", "tile",
                              "movedim", "narrow", "select") \
                        and self.is_mask(receiver, at) and not _dtype_changed(facts, expr):
                    return True
            if tensors.flow is not None and tensors.flow.returns_kind(expr) == MASK:
                return True  # a def that returns a mask (analysis/tensors/calls.py)
        return False


def _bound_names(target: ast.AST) -> list:
    """The names an assignment target binds (not those read by `x[i] = ...`, `o.a = ...`)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _bound_names(elt)]
    return []


def _before(a: ast.AST, b: ast.AST) -> bool:
    return (a.lineno, a.col_offset) < (b.lineno, b.col_offset)


def not_tensors_at(facts: ModuleFacts, node: ast.AST) -> frozenset:
    """Names that cannot hold a tensor where `node` runs: in the `else` of
    `if isinstance(x, torch.Tensor):`, the body of `if not isinstance(x, torch.Tensor):`,
    or the body of a test that `x` is a number or a string (`isinstance(x, (int, float))`,
    `type(x) == str`, `type(a) == type(b) == str`, each operand of an `and`). A test of
    an element (`type(heights[0]) == str`) speaks for the loop variables that iterate over
    that sequence around `node` (`[int(h) for h in heights]`): the code itself converts
    every element on that reading (switti, bench/dev25)."""
    names = set()
    iterated: list[tuple[str, str]] = []  # (loop variable, the name it iterates over) around `node`
    child = node
    for anc in facts.ancestors(node):
        if isinstance(anc, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) \
                and child is not anc.generators[0].iter:
            iterated += [(g.target.id, g.iter.id) for g in anc.generators
                         if isinstance(g.target, ast.Name) and isinstance(g.iter, ast.Name)]
        elif isinstance(anc, (ast.For, ast.AsyncFor)) and child in anc.body \
                and isinstance(anc.target, ast.Name) and isinstance(anc.iter, ast.Name):
            iterated.append((anc.target.id, anc.iter.id))
        if isinstance(anc, (ast.If, ast.IfExp)) and child is not anc.test:
            in_body = child in anc.body if isinstance(anc, ast.If) else child is anc.body
            test, negated = anc.test, False
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, negated = test.operand, True
            # `a and b` holds both in the body (not negated); nothing is read from its `else`
            tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and in_body \
                and not negated else [test]
            for one in tests:
                for subject, is_tensor_test in _type_tests(facts, one):
                    if (is_tensor_test and in_body == negated) or (not is_tensor_test and in_body and not negated):
                        if isinstance(subject, str):
                            names.add(subject)
                        else:  # an element of the sequence subject.id
                            names.update(var for var, seq in iterated if seq == subject.id)
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            break
        child = anc
    return frozenset(names)


NUMBER_TYPES = frozenset({"builtins.int", "builtins.float", "builtins.bool", "builtins.complex", "numbers.Number", "numbers.Real"})
# types no tensor has: a value that is one of them is not a tensor
NOT_TENSOR_TYPES = NUMBER_TYPES | {"builtins.str", "builtins.bytes"}


def _type_tests(facts: ModuleFacts, test: ast.AST) -> list:
    """What a test says when true: [(subject, True)] for `isinstance(x, torch.Tensor)`,
    [(subject, False)] for `isinstance(x, (int, float))`, `isinstance(x, str)`,
    `type(x) == str` / `type(x) is int`, and each `type(...)` of a chain
    `type(a) == type(b) == str`. A subject is a name (str), or the ast.Name of a
    sequence for a test of one of its elements (`seq[0]`)."""
    if isinstance(test, ast.Call) and facts.resolve(test.func) == "builtins.isinstance" and len(test.args) == 2:
        subject = _type_subject(test.args[0])
        if subject is None:
            return []
        kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
        resolved = [facts.resolve(k) for k in kinds]
        if resolved and all(r in TENSOR_ANNOTATIONS or r == "torch.Tensor" for r in resolved):
            return [(subject, True)]
        if resolved and all(r in NOT_TENSOR_TYPES for r in resolved):
            return [(subject, False)]
        return []
    if isinstance(test, ast.Compare) and all(isinstance(op, (ast.Eq, ast.Is)) for op in test.ops):
        # `type(x) == str`: x is exactly a str (`type(x) is torch.Tensor` says nothing of
        # its else: a subclass such as nn.Parameter is a tensor too)
        operands = [test.left, *test.comparators]
        typed = [o.args[0] for o in operands if isinstance(o, ast.Call) and len(o.args) == 1 and not o.keywords
                 and facts.resolve(o.func) == "builtins.type"]
        named = [facts.resolve(o) for o in operands if not isinstance(o, ast.Call)]
        if typed and named and len(typed) + len(named) == len(operands) and all(n in NOT_TENSOR_TYPES for n in named):
            subjects = [_type_subject(t) for t in typed]
            return [(s, False) for s in subjects if s is not None]
    return []


def _type_subject(expr: ast.AST):
    """The subject of a type test: a name's id, or the sequence's ast.Name for `seq[0]`."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and isinstance(expr.slice, ast.Constant) \
            and isinstance(expr.slice.value, int):
        return expr.value
    return None


def _bind(target: ast.AST, value: Optional[ast.expr], assigned: dict) -> None:
    if isinstance(target, ast.Name):
        assigned.setdefault(target.id, []).append(value)
    elif isinstance(target, (ast.Tuple, ast.List)):
        values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
        for i, elt in enumerate(target.elts):
            _bind(elt, values[i] if values else None, assigned)


def _is_torch_bool(facts: ModuleFacts, expr: ast.AST) -> bool:
    return facts.resolve(expr) == "torch.bool"


def _dtype_is_bool(facts: ModuleFacts, call: ast.Call) -> bool:
    if any(kw.arg == "dtype" and _is_torch_bool(facts, kw.value) for kw in call.keywords):
        return True
    return isinstance(call.func, ast.Attribute) and call.func.attr in ("to", "type") and bool(call.args) \
        and _is_torch_bool(facts, call.args[0])


def _dtype_changed(facts: ModuleFacts, call: ast.Call) -> bool:
    """`m.to(torch.float32)`: no longer a mask (`m.to(device)` keeps it one)."""
    args = list(call.args) + [kw.value for kw in call.keywords if kw.arg == "dtype"]
    return any((facts.resolve(a) or "").startswith("torch.") and not _is_torch_bool(facts, a)
               for a in args if isinstance(a, (ast.Attribute, ast.Name)))


def _dtype_tested(facts: ModuleFacts, name: str, at: ast.AST) -> bool:
    """`at` runs only where an `if` above it found `name.dtype == torch.bool`."""
    child = at
    for anc in facts.ancestors(at):
        if isinstance(anc, ast.If) and child in anc.body:
            test = anc.test
            conjuncts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
            for node in conjuncts:
                if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.Is)):
                    left, right = node.left, node.comparators[0]
                    for a, b in ((left, right), (right, left)):
                        if isinstance(a, ast.Attribute) and a.attr == "dtype" and isinstance(a.value, ast.Name) \
                                and a.value.id == name and _is_torch_bool(facts, b):
                            return True
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
        child = anc
    return False

