"""Tensors and masks that cross a call, for the graph-break guesses of analysis/tensors/kinds.py.

A value read inside one def often comes from another: a def's return, a parameter its
callers fill, an attribute the class keeps. Seen on the oracle bench (bench/oracle/):
transformers' encodec pads by `max(padding_left, padding_right)` of a `paddings` tuple its
caller builds from a buffer and a method's `-> torch.Tensor` return; kornia's RANSAC
indexes with `inliers`, a mask its caller passes, and with `valid` from
`candidates, valid = _five_point_candidates(design)`. What is known here, per file:

- **returns**: a call of a def this file can see (a module-level def of this file or an
  imported one of another project file; a method through `self.`/`cls.` of the class or
  an in-file base; a static method through its class's name) returns a tensor when the
  def is annotated so (`-> torch.Tensor`, `Optional[...]`, `Tuple[torch.Tensor, ...]`
  element by element), or when every value it returns is one by the def's own guess; a
  mask when every value it returns is a mask;
- **parameters**: a parameter of a def of this file that is not annotated as a tensor
  holds one when every call of that def in this file passes one (at least one call; a
  call that leaves it to its default does not), a mask when every call passes a mask,
  and a tuple of tensors element by element (`self._pad1d(h, (self.padding_total, extra))`);
- **attributes**: `self.<attr>` holds a tensor when every assignment of it in the class
  is a tensor: `nn.Buffer(...)`, `nn.Parameter(...)`, a torch factory, or
  `self.register_buffer("attr", value)` with a value that is not None.

And `torch.Generator`s the same ways (a local name every binding of which makes one,
`self.<attr> = torch.Generator().manual_seed(0)`, a parameter annotated so or filled
with one by every caller): Dynamo cannot create one, call its methods, or pass one to an
op (GB0363, GB7650, GB0055). `g = None` then `g = torch.Generator()` under a seed test
holds one as a method's receiver (a method call on None would raise), not as an op's
argument: with None the op does not break (kornia's unseeded RANSAC, the oracle bench).

Kinds: "tensor", "mask" (a boolean tensor: also a tensor), "generator", a tuple of
kinds, or None (unknown). Recursion (a def that calls itself, callers of callers) is cut: what is being
worked out counts as unknown.
"""
from __future__ import annotations

import ast
import weakref
from typing import Optional

from ..semantic.facts import FUNCTION_NODES, ModuleFacts
from ..project.context import module_def
from ..semantic.signatures import first_parameter
from ..semantic.walk import own_nodes, walk

TENSOR, MASK, GENERATOR = "tensor", "mask", "generator"
FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
TENSOR_CTORS = frozenset({"torch.nn.Buffer", "torch.nn.Parameter", "torch.nn.parameter.Parameter",
                          "torch.nn.parameter.Buffer"})
TUPLE_ANNOTATIONS = frozenset({"typing.Tuple", "builtins.tuple", "tuple"})
_FLOWS: "weakref.WeakKeyDictionary[ModuleFacts, CallFlow]" = weakref.WeakKeyDictionary()


class Known(ast.expr):
    """A value whose kind a call told (an element of a tuple a def returns): stands in an
    assignment's value where the guesses look for one."""

    _fields = ()

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind


def meet(a, b):
    """What two values of kinds `a` and `b` have in common."""
    if a == b:
        return a
    if {a, b} == {TENSOR, MASK}:
        return TENSOR
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(meet(x, y) for x, y in zip(a, b))
    return None


def is_tensor_kind(kind) -> bool:
    return kind in (TENSOR, MASK)


def flow_for(facts: ModuleFacts) -> "CallFlow":
    flow = _FLOWS.get(facts)
    if flow is None:
        flow = _FLOWS[facts] = CallFlow(facts)
    return flow


class CallFlow:
    def __init__(self, facts: ModuleFacts):
        self.facts = facts
        self._guesses: dict[int, object] = {}
        self._masks: dict[int, object] = {}
        self._returns: dict[int, object] = {}
        self._params: dict[tuple, object] = {}
        self._attrs: dict[tuple, object] = {}
        self._bindings: dict[int, dict] = {}  # id(def) -> {name: [whether each binding makes a generator]}
        self._assigned: dict[int, dict] = {}  # id(class) -> {attr: [values assigned to self.<attr>]}
        self._calls: Optional[dict[int, list]] = None  # id(def) -> [(call, offset)] in this file
        self._callees: dict[int, Optional[tuple]] = {}  # id(call) -> callee(call)
        self._busy: set = set()

    # -- the guesses of a def of this file, with this flow ------------------------------
    def guess(self, func):
        from .kinds import TensorGuess

        key = id(func)
        if key not in self._guesses:
            self._guesses[key] = None  # while it is built: a call back into it is unknown
            self._guesses[key] = TensorGuess(self.facts, func, flow=self)
        return self._guesses[key]

    def masks(self, func):
        from .kinds import MaskGuess

        tensors = self.guess(func)
        if tensors is None:
            return None
        key = id(func)
        if key not in self._masks:
            self._masks[key] = None
            self._masks[key] = MaskGuess(self.facts, tensors)
        return self._masks[key]

    def kind_of(self, func, expr: ast.AST):
        """The kind of `expr` read in `func` (a def of this file)."""
        if isinstance(expr, (ast.Tuple, ast.List)):
            return tuple(self.kind_of(func, e) for e in expr.elts)
        if isinstance(expr, Known):
            return expr.kind
        if self.is_generator(func, expr):
            return GENERATOR
        masks = self.masks(func)
        if masks is not None and masks.is_mask(expr):
            return MASK
        tensors = self.guess(func)
        if tensors is not None and tensors.is_tensor(expr):
            return TENSOR
        if tensors is not None and isinstance(expr, ast.Name):
            return tensors.seq(expr.id)
        return None

    def is_generator(self, func, expr: ast.AST, receiver: bool = False) -> bool:
        """`expr`, read in `func`, holds a `torch.Generator`: made there (a name every
        binding of which makes one; as a method's `receiver`, one binding is enough),
        kept in `self.<attr>`, or a parameter
        annotated so (`receiver`: also `Optional[...]`, since a method call on None
        would raise) or filled with one by every caller in this file."""
        if isinstance(expr, ast.Call):
            return self._creates_generator(expr)
        if isinstance(expr, ast.Attribute):
            return self.attr_kind(expr) == GENERATOR
        if not isinstance(expr, ast.Name) or not isinstance(func, FUNCTION_DEFS):
            return False
        made = self._generator_bindings(func).get(expr.id, ())
        # `g = None` then `g = torch.Generator()` under a seed test: a method call on it
        # runs only once it is one; an op given it breaks only then (the creation's own
        # finding says where)
        if made and (any(made) if receiver else all(made)):
            return True
        args = func.args
        param = next((a for a in args.posonlyargs + args.args + args.kwonlyargs if a.arg == expr.id), None)
        if param is None:
            return False
        if param.annotation is not None:
            optional, dotted = _optional(self.facts, param.annotation)
            if dotted == "torch.Generator" and (receiver or not optional):
                return True
        return self.param_kind(func, expr.id) == GENERATOR

    def _generator_bindings(self, func) -> dict:
        """Per name bound in `func`'s own body: for each binding, whether it makes a
        generator (built once per def: `is_generator` is asked of every name read)."""
        key = id(func)
        found = self._bindings.get(key)
        if found is None:
            found = self._bindings[key] = {}
            for node in _own_nodes(func):
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.NamedExpr)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    names = {t.id for t in targets if isinstance(t, ast.Name)}
                    if names:
                        made = getattr(node, "value", None) is not None and self._creates_generator(node.value)
                        for name in names:
                            found.setdefault(name, []).append(made)
        return found

    def _creates_generator(self, value: ast.AST) -> bool:
        """`torch.Generator(...)`, also with a method chained (`.manual_seed(0)` returns it)."""
        while isinstance(value, ast.Call):
            if self.facts.resolve(value.func) == "torch.Generator":
                return True
            if not (isinstance(value.func, ast.Attribute) and value.func.attr == "manual_seed"):
                return False
            value = value.func.value
        return False

    # -- calls ---------------------------------------------------------------------------
    def callee(self, call: ast.Call) -> Optional[tuple]:
        """(facts, def, offset) of the def `call` runs, when this file can see it; offset:
        how many leading parameters the call does not pass (`self`)."""
        key = id(call)
        if key not in self._callees:  # asked of a call by each guess that reads it
            self._callees[key] = self._callee(call)
        return self._callees[key]

    def _callee(self, call: ast.Call) -> Optional[tuple]:
        facts, func = self.facts, call.func
        if isinstance(func, ast.Name):
            dotted = facts.resolve(func)
            if not dotted:
                return None
            found = module_def(facts, dotted)
            return (found[0], found[1], 0) if found is not None else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            cls = self._receiver_class(call, func.value)
            if cls is not None:
                found = self._method(cls, func.attr)
                if found is not None:
                    return facts, found, 0 if _is_static(found) else 1
                return None
            owner = self._class_named(func.value.id) if facts.resolve(func.value) else None
            if owner is not None:
                found = self._method(owner, func.attr)
                if found is not None and _is_static(found):
                    return facts, found, 0
        return None

    def returns_kind(self, call: ast.Call):
        target = self.callee(call)
        if target is None:
            return self._submodule_returns(call)
        other, func, _ = target
        flow = self if other is self.facts else flow_for(other)
        return flow.def_returns(func)

    def _submodule_returns(self, call: ast.Call):
        """What `self.<attr>(...)` returns, in a method, when every assignment of
        `self.<attr>` in the class builds a module class of this file: the kind its
        `forward` returns (surya, bench/dev9: `embeddings, output_dimensions =
        self.patch_embeddings(pixel_values)`, whose forward returns a tensor and a tuple
        of ints); None when not told (then the call is read as a tensor, as any module's)."""
        func = call.func
        cls = self._receiver_class(call, func.value) if isinstance(func, ast.Attribute) else None
        if cls is None:
            return None
        values = self._self_assignments(cls).get(func.attr)
        found, seen = None, False
        for value in values or ():
            owner = self._class_named(value.func.id) if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                and self.facts.resolve(value.func) in (None, f"{self.facts.names.module}.{value.func.id}") else None
            forward = self._method(owner, "forward") if owner is not None else None
            if forward is None:
                return None
            kind = self.def_returns(forward)
            found = kind if not seen else meet(found, kind)
            seen = True
        return found

    def def_returns(self, func):
        key = id(func)
        if key in self._returns:
            return self._returns[key]
        self._returns[key] = None
        declared = self._annotated(func.returns) if func.returns is not None else None
        found = None
        nodes = list(_own_nodes(func))
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in nodes):
            return None  # a generator
        values = [n.value for n in nodes if isinstance(n, ast.Return)]
        if values and all(v is not None and not _is_none(v) for v in values):
            kinds = [self.kind_of(func, v) for v in values]
            found = kinds[0]
            for k in kinds[1:]:
                found = meet(found, k)
        if declared is not None:
            found = _upgrade(declared, found)
        self._returns[key] = found
        return found

    def _annotated(self, ann: ast.AST):
        from .kinds import TENSOR_ANNOTATIONS

        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            return TENSOR if ann.value in ("Tensor", "torch.Tensor") else None
        dotted = self.facts.resolve(ann)
        if dotted in TENSOR_ANNOTATIONS:
            return TENSOR
        if isinstance(ann, ast.Subscript):
            head = self.facts.resolve(ann.value) or (ann.value.id if isinstance(ann.value, ast.Name) else None)
            if head in TUPLE_ANNOTATIONS:
                elts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
                if any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elts):
                    return None
                kinds = tuple(self._annotated(e) for e in elts)
                return kinds if any(k is not None for k in kinds) else None
        return None

    # -- parameters ----------------------------------------------------------------------
    def param_kind(self, func, name: str):
        """The kind every call of `func` (a def of this file) in this file passes for `name`."""
        key = (id(func), name)
        if key in self._params:
            return self._params[key]
        self._params[key] = None
        args = func.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        kwonly = [a.arg for a in args.kwonlyargs]
        found, seen = None, False
        for call, offset in self._calls_of(func):
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                found, seen = None, True
                break
            value = next((k.value for k in call.keywords if k.arg == name), None)
            if value is None and name in positional:
                index = positional.index(name) - offset
                value = call.args[index] if 0 <= index < len(call.args) else None
            elif value is None and name not in kwonly:
                value = None
            caller = self.facts.enclosing_function(call)
            kind = self.kind_of(caller, value) if value is not None and isinstance(caller, FUNCTION_DEFS) else None
            found = kind if not seen else meet(found, kind)
            seen = True
            if found is None:
                break
        self._params[key] = found if seen else None
        return self._params[key]

    def _calls_of(self, func) -> list:
        if self._calls is None:
            self._calls = {}
            module = self.facts.names.module
            for call in self.facts.nodes(ast.Call):
                if isinstance(call.func, ast.Name) and (
                        not module or (self.facts.resolve(call.func) or "").rpartition(".")[0] != module):
                    continue  # a def of another file (module_def would read that file to say so)
                target = self.callee(call)
                if target is not None and target[0] is self.facts:
                    self._calls.setdefault(id(target[1]), []).append((call, target[2]))
        return self._calls.get(id(func), [])

    # -- attributes ----------------------------------------------------------------------
    def attr_kind(self, node: ast.Attribute):
        """The kind of `self.<attr>` read at `node` (in a method of a class of this file)."""
        cls = self._receiver_class(node, node.value)
        if cls is None:
            return None
        key = (id(cls), node.attr)
        if key not in self._attrs:
            self._attrs[key] = self._class_attr(cls, node.attr)
        return self._attrs[key]

    def _class_attr(self, cls: ast.ClassDef, attr: str):
        from .kinds import is_torch_tensor_call

        values = self._self_assignments(cls).get(attr)
        if not values:
            return None
        if all(v is not None and not isinstance(v, Known) and self._creates_generator(v) for v in values):
            return GENERATOR
        for value in values:
            if isinstance(value, Known):
                continue
            if not isinstance(value, ast.Call):
                return None
            dotted = self.facts.resolve(value.func)
            if dotted not in TENSOR_CTORS and not is_torch_tensor_call(dotted):
                return None
        return TENSOR

    def _self_assignments(self, cls: ast.ClassDef) -> dict:
        """Per attribute, what `cls` assigns to `self.<attr>` (None where the value is not
        the whole right-hand side) and what it registers as a buffer; one walk per class."""
        found = self._assigned.get(id(cls))
        if found is not None:
            return found
        found = self._assigned[id(cls)] = {}
        for sub in walk(cls):
            if isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                for t in targets:
                    for elt in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                        if isinstance(elt, ast.Attribute) and isinstance(elt.value, ast.Name) and elt.value.id == "self":
                            found.setdefault(elt.attr, []).append(
                                sub.value if elt is t and not isinstance(sub, ast.AugAssign) else None)
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) \
                    and sub.func.attr == "register_buffer" and len(sub.args) >= 2 \
                    and isinstance(sub.args[0], ast.Constant) and isinstance(sub.args[0].value, str):
                found.setdefault(sub.args[0].value, []).append(None if _is_none(sub.args[1]) else Known(TENSOR))
        return found

    # -- where things are ----------------------------------------------------------------
    def _enclosing_method(self, node):
        func = self.facts.enclosing_function(node)
        while func is not None and not isinstance(self.facts.parent(func), ast.ClassDef):
            if not isinstance(func, FUNCTION_NODES):
                return None
            func = self.facts.enclosing_function(func)
        return func

    def _receiver_class(self, node, receiver: ast.expr) -> Optional[ast.ClassDef]:
        """The class of the method around `node` when `receiver` is that method's first
        parameter (`self.<attr>`, `self.method(...)`); None otherwise."""
        if not isinstance(receiver, ast.Name):
            return None
        method = self._enclosing_method(node)
        cls = self.facts.parent(method) if method is not None else None
        return cls if isinstance(cls, ast.ClassDef) and receiver.id == first_parameter(method.args) else None

    def _class_named(self, name: str) -> Optional[ast.ClassDef]:
        return next((n for n in self.facts.tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)

    def _method(self, cls: ast.ClassDef, name: str, depth: int = 0):
        for node in cls.body:
            if isinstance(node, FUNCTION_DEFS) and node.name == name:
                return node
        if depth > 4:
            return None
        for base in cls.bases:
            owner = self._class_named(base.id) if isinstance(base, ast.Name) else None
            if owner is not None and owner is not cls:
                found = self._method(owner, name, depth + 1)
                if found is not None:
                    return found
        return None


def _optional(facts: ModuleFacts, ann: ast.AST) -> tuple:
    """(whether the annotation allows None, the dotted name of the rest)."""
    if isinstance(ann, ast.Subscript) and facts.resolve(ann.value) == "typing.Optional":
        return True, facts.resolve(ann.slice)
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        parts = [p for p in (ann.left, ann.right) if not _is_none(p)]
        if len(parts) == 1:
            return True, facts.resolve(parts[0])
    return False, facts.resolve(ann)


def _is_static(func) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list)


def _is_none(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _upgrade(declared, found):
    """The declared kind, made a mask where the body says so."""
    if isinstance(declared, tuple):
        if isinstance(found, tuple) and len(found) == len(declared):
            return tuple(_upgrade(d, f) for d, f in zip(declared, found))
        return declared
    if declared == TENSOR and found == MASK:
        return MASK
    return declared


def _own_nodes(func):
    """The nodes of `func`'s body, not those of defs, classes or lambdas nested in it."""
    return own_nodes(func.body)
