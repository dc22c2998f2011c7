"""Which expressions can carry a gradient, and which values can reach a backward pass.

A gradient flows only through differentiable float tensors. Comparisons, boolean and
bitwise ops, counts (`(x > t).sum()`, `bincount`, `one_hot`), integer casts
(`.long()`, `.to(torch.int64)`, `.view(torch.uint8)`), `.detach()`, `argmax` and `.indices`, sizes and Python
numbers (parameters annotated `int` / `float` / `bool`) carry none, and neither does
arithmetic on them only. Across a function boundary:

- a parameter carries none when every call of its function passes a value that
  carries none (`self._ratio(errors <= t)`); the calls are known only for a private
  def (`_name`, not a dunder) or a nested one, called by name (`_f(...)`,
  `self._f(...)`, `cls._f(...)`) in this file and used nowhere else (not passed as a
  callback); a parameter the call leaves out has its default;
- `a, b = self._f(...)` unpacks the returns of `_f`: element i carries none when the
  i-th element of every returned tuple carries none.

`may_reach_backward(node)` asks the other direction: whether the value of `node` can
reach a loss at all. It cannot when, inside its function, everything derived from it
only feeds torch ops, tensor methods that are not in place, Python numbers
(`int(x.item())`) and control flow, and nothing derived from it is returned as a
tensor, stored (attribute, subscript, container), passed to project code, yielded or
used in place. Code lexically under `torch.no_grad()` / `torch.inference_mode()`
records no gradient at all.
"""
from __future__ import annotations

import ast
from typing import Optional

from ...analysis.modules.classes import local_class
from ...analysis.semantic.bindings import bindings_for
from ...analysis.semantic.facts import Fact
from ...analysis.semantic.signatures import parameter_defaults
from ...analysis.semantic.walk import own_nodes
from ...analysis.branches.around import tests_around

# methods whose result never requires grad
NO_GRAD_METHODS = frozenset({
    "detach", "long", "int", "short", "byte", "bool", "char", "argmax", "argmin", "argsort",
    "count_nonzero", "numel", "nonzero", "size", "dim", "item", "tolist", "eq", "ne", "gt", "ge",
    "lt", "le", "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not",
    "logical_xor", "sign", "floor", "ceil", "round", "trunc", "all", "any",
})
# methods whose result carries a gradient only if their receiver does
PASS_METHODS = frozenset({
    "sum", "mean", "float", "double", "half", "bfloat16", "to", "clone", "contiguous", "view",
    "reshape", "flatten", "squeeze", "unsqueeze", "expand", "permute", "transpose", "cpu", "cuda",
    "type_as", "max", "min", "amax", "amin", "abs", "clamp", "clamp_min", "clamp_max", "cumsum",
    "prod", "nansum", "float_", "t", "flip", "fliplr", "flipud", "roll", "repeat", "tile", "narrow",
    "neg", "negative", "to_dense", "to_sparse", "coalesce",
})
# torch names whose result may carry a gradient whatever their arguments: modules and
# parameters (`torch.nn.Linear`, `nn.Parameter`), loaders, and transforms of functions
NOT_PURE_TORCH = ("torch.nn.", "torch.autograd.", "torch.func.", "torch.load", "torch.hub.", "torch.jit.",
                  "torch.utils.", "torch.compile", "torch.export", "torch.vmap", "torch.cond")
# keyword arguments that are options, not tensor inputs
OPTION_KEYWORDS = frozenset({"dim", "dtype", "device", "keepdim", "layout", "memory_format", "pin_memory", "non_blocking"})
# functions joining a list of tensors: the result carries a gradient only if an element does
JOINS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack"})
NO_GRAD_FUNCS = NO_GRAD_METHODS | frozenset({
    "arange", "zeros", "ones", "full", "empty", "tensor", "as_tensor", "scalar_tensor", "zeros_like", "ones_like",
    "full_like", "empty_like", "linspace", "eye", "randint", "bucketize", "searchsorted", "numel", "from_numpy",
    "where_nonzero", "one_hot", "bincount", "histc", "isclose", "randperm",
    # fresh random and spectral tensors: their arguments are sizes or other tensors' shapes
    # (`torch.rand(*shape)`, `torch.randn_like(x)`), never a gradient's path
    "rand", "randn", "rand_like", "randn_like", "randint_like", "fftfreq", "rfftfreq", "logspace",
    "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window",
})
# sparse tensors built from index tensors and values: a gradient flows through the values
# alone (the position of the values argument); PyTorch3D's mesh Laplacian, copied into
# EasyVolcap, builds its degrees from `torch.ones(...)` values (bench/fresh_reads batch 28)
SPARSE_CONSTRUCTORS = {
    "torch.sparse_coo_tensor": 1, "torch.sparse.FloatTensor": 1, "torch.sparse.DoubleTensor": 1,
    "torch.sparse.HalfTensor": 1, "torch.sparse_csr_tensor": 2, "torch.sparse_csc_tensor": 2,
}
# dtypes that never carry a gradient: `.to(torch.long)`, `.type(torch.bool)`
INTEGER_DTYPES = frozenset({
    "torch.bool", "torch.uint8", "torch.int8", "torch.int16", "torch.int32", "torch.int64",
    "torch.int", "torch.long", "torch.short",
})
# attributes of torch's result tuples that hold integer indices (`x.max(1).indices`)
INDEX_ATTRS = frozenset({"indices"})
PASS_FUNCS = PASS_METHODS
NO_GRAD_CONTEXTS = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"})
PY_NUMBER_ANNOTATIONS = frozenset({"int", "float", "bool"})
PY_NUMBERS = frozenset({"builtins.range", "builtins.len", "builtins.int", "builtins.float", "builtins.round", "builtins.sum", "builtins.max", "builtins.min", "builtins.abs"})


def _requires_grad_kw(call: ast.Call) -> bool:
    return any(kw.arg == "requires_grad" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False) for kw in call.keywords)


# calls through which a value is only computed on, never kept: builtins and math
PURE_CALL_PREFIXES = ("torch.", "builtins.", "math.", "numpy.")
# tensor methods that keep or hand on their receiver's value
ESCAPING_METHODS = frozenset({"backward", "register_hook", "retain_grad", "append", "extend", "insert", "add", "update", "put"})
MAX_CALL_DEPTH = 4
MAX_STEPS = 400  # name reads followed for one question (each read is followed once)


class _Unpacked:
    """Element `index` of what `call` returns (`a, b = self._f(x)`)."""

    def __init__(self, call: ast.Call, index: int):
        self.call = call
        self.index = index


class GradientFacts:
    """Asks, per function, whether an expression can carry a gradient."""

    def __init__(self, facts):
        self.facts = facts
        self._memo: dict[int, bool] = {}
        self._steps = 0  # name reads followed for the current question
        self._defs: Optional[dict[str, list]] = None
        self._decorated: Optional[dict[str, list]] = None  # def name -> [decorated no_grad, per def]
        self._autograd_callers: dict[int, bool] = {}  # id(def) -> called_only_by_autograd_functions

    def op_carries_no_gradient(self, op: ast.AST, arg: ast.AST) -> bool:
        """No input of the op can carry a gradient (for a division: neither side)."""
        if isinstance(op, ast.BinOp) and isinstance(op.op, (ast.Div, ast.FloorDiv)):
            return self.no_grad(op.left) and self.no_grad(op.right)
        if isinstance(op, ast.Call):
            method = isinstance(op.func, ast.Attribute) and not (self.facts.resolve(op.func) or "").startswith("torch.")
            return all(self.no_grad(i) for i in ([op.func.value] if method else []) + list(op.args))
        return self.no_grad(arg)

    def no_grad(self, expr: ast.AST, _seen: Optional[set] = None) -> bool:
        """True when `expr` cannot carry a gradient (False when it may, or is unknown)."""
        if _seen is None:
            key = id(expr)
            if key not in self._memo:
                self._steps = 0
                self._memo[key] = self._no_grad(expr, set())
            return self._memo[key]
        return self._no_grad(expr, _seen)

    def _no_grad(self, expr, seen: set) -> bool:
        facts = self.facts
        if isinstance(expr, _Unpacked):
            return self._unpacked_no_grad(expr, seen)
        if isinstance(expr, ast.Constant):
            return True
        if isinstance(expr, (ast.Compare, ast.BoolOp)):
            return True
        if isinstance(expr, ast.UnaryOp):
            return isinstance(expr.op, (ast.Not, ast.Invert)) or self.no_grad(expr.operand, seen)
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)):
                return True
            return self.no_grad(expr.left, seen) and self.no_grad(expr.right, seen)
        if isinstance(expr, ast.Subscript):
            return self.no_grad(expr.value, seen)
        if isinstance(expr, ast.Attribute):
            if expr.attr in ("shape", "ndim", "dtype", "device") or expr.attr in INDEX_ATTRS:
                return True
            return (facts.resolve(expr) or "").startswith(("math.", "numpy."))  # `math.pi`: a constant
        if isinstance(expr, ast.IfExp):
            return self.no_grad(expr.body, seen) and self.no_grad(expr.orelse, seen)
        if isinstance(expr, ast.Call):
            dotted = facts.resolve(expr.func) or ""
            if dotted in PY_NUMBERS or dotted.startswith("math."):
                return True  # (`math.exp(shift)`: a Python float, even of a one-element tensor)
            if any(facts.resolve(a) in INTEGER_DTYPES for a in [*expr.args, *(k.value for k in expr.keywords if k.arg == "dtype")]):
                if isinstance(expr.func, ast.Attribute) and expr.func.attr in ("to", "type", "view"):
                    # `.to(torch.long)`, and `.view(torch.uint8)` reinterpreting the bytes
                    # (gguf's quantizers): an integer tensor, requires_grad False
                    # (scripts/measure/integer_view_grad.py)
                    return True
            if isinstance(expr.func, ast.Attribute) and not dotted.startswith("torch."):
                name = expr.func.attr
                if name in NO_GRAD_METHODS:
                    return True
                if name in PASS_METHODS:
                    return self.no_grad(expr.func.value, seen)
                if name == "requires_grad_" or _requires_grad_kw(expr) or not self.no_grad(expr.func.value, seen):
                    return False
                # a method of a tensor without a gradient (`x.sin()`, `x.new_ones([])`)
                return self._inputs_no_grad(expr, seen)
            if dotted in SPARSE_CONSTRUCTORS:
                position = SPARSE_CONSTRUCTORS[dotted]
                values = expr.args[position] if len(expr.args) > position else next(
                    (k.value for k in expr.keywords if k.arg == "values"), None)
                return values is not None and not _requires_grad_kw(expr) and self.no_grad(values, seen)
            if dotted.startswith("torch."):
                name = dotted.rsplit(".", 1)[-1]
                if name in NO_GRAD_FUNCS and not _requires_grad_kw(expr):
                    return True
                if name in PASS_FUNCS and expr.args:
                    return self.no_grad(expr.args[0], seen)
                if name == "where" and len(expr.args) == 3:
                    return self.no_grad(expr.args[1], seen) and self.no_grad(expr.args[2], seen)
                if name in JOINS and expr.args and isinstance(expr.args[0], (ast.List, ast.Tuple)):
                    elements = expr.args[0].elts
                    return not any(isinstance(e, ast.Starred) for e in elements) and all(self.no_grad(e, seen) for e in elements)
                if dotted.startswith(NOT_PURE_TORCH) and not dotted.startswith("torch.nn.functional."):
                    return False  # modules, parameters, loaders, transforms of functions
                # an op on inputs none of which carries a gradient (`torch.sin(math.pi * x)`)
                return not _requires_grad_kw(expr) and self._inputs_no_grad(expr, seen)
            if self._runs_without_grad(expr):
                return True  # a def of this file decorated `@torch.no_grad()`: what it returns has no graph
            callee = self._callee(expr)
            if callee is not None:
                return self._returns_no_grad(callee, seen)
            return False
        if isinstance(expr, ast.Name):
            return self._name_no_grad(expr, seen)
        return False

    def _name_no_grad(self, name: ast.Name, seen: set) -> bool:
        """Every binding reaching `name` (the value model's rule) carries no gradient."""
        bindings = bindings_for(self.facts)
        scope = bindings.binding_scope(name)
        if scope is None or isinstance(scope, (ast.Lambda, ast.Module)):
            return False  # a global of another module, a lambda's parameter, module state
        if ("use", id(name)) in seen:
            return True  # `xs = xs + 1` in a loop: back at this very read, the other values decide
        self._steps += 1
        if self._steps > MAX_STEPS:
            return False  # too long a chain of names to follow: may carry one
        seen.add(("use", id(name)))
        if not self._stores_no_grad(scope, name.id, seen, name):
            return False  # `out[i] = w`, `out.copy_(w)`: a tensor made without a gradient may get one
        reaching = bindings.reaching(name)
        for bound in reaching:
            if bound.kind == "assign":
                ok = self._no_grad(bound.value, seen)
            elif bound.kind == "param":
                ok = _python_number_annotation(bound.arg.annotation) or _python_number_default(scope, bound.arg) \
                    or self._passed_no_grad(scope, bound.arg, seen)
            elif bound.kind == "unpack" and isinstance(bound.source, ast.Call) and bound.index is not None:
                ok = self._unpacked_no_grad(_Unpacked(bound.source, bound.index), seen) \
                    or self._no_grad(bound.source, seen)
            elif bound.kind in ("unpack", "for") and bound.source is not None:
                # an element of what carries none carries none: `h, w = x.shape`,
                # `for i in range(n)`, rows of a tensor made without a gradient
                ok = self._no_grad(bound.source, seen)
            else:
                ok = False  # a `with` value, a nested def
            if not ok:
                return False
        return bool(reaching)

    def _stores_no_grad(self, scope, name: str, seen: set, read: Optional[ast.AST] = None) -> bool:
        """Every value written into `name` in place in its scope carries none: item
        stores (`out[i] = cur`, `out[i] += v`) and in-place methods (`out.copy_(v)`).
        With `read`, only the writes that can come before it count: a write below the
        read, outside every loop around the read, changes nothing the read saw
        (LightX2V's sigma schedule stretches `sigmas[mask] = ...` after its where)."""
        row = getattr(read, "lineno", None)
        key = ("stores", id(scope), name, row)
        if key in seen:
            return True  # `out[i] = out[i - 1] * 2`: the other stores decide
        seen.add(key)
        loops = _loops_around(scope, row) if row is not None else ()
        for node in _own_nodes(scope) if not isinstance(scope, ast.Module) else ():
            if row is not None and getattr(node, "lineno", 0) > row and not any(
                    loop.lineno <= node.lineno <= loop.end_lineno for loop in loops):
                continue  # written after the read, and no loop brings it back round
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Subscript) and _base_name(t) == name for t in targets):
                    if not self._no_grad(node.value, seen):
                        return False
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _base_name(node.func.value) == name:
                method = node.func.attr
                if method == "requires_grad_":
                    return False
                if method.endswith("_") and not method.endswith("__"):
                    if not all(self._no_grad(a, seen) for a in [*node.args, *(k.value for k in node.keywords)]):
                        return False
        return True

    # -- across function boundaries ---------------------------------------------------
    def _def_table(self) -> dict[str, list]:
        """Private and nested defs of this file by name (`_f` -> [def, ...])."""
        if self._defs is None:
            table: dict[str, list] = {}
            for node in self.facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
                nested = self.facts.enclosing_function(node) is not None
                private = node.name.startswith("_") and not node.name.endswith("__")
                if nested or private:
                    table.setdefault(node.name, []).append(node)
            self._defs = table
        return self._defs

    def _callee(self, call: ast.Call):
        """The private/nested def of this file a call runs (None when not exactly one)."""
        name = _name_called(call)
        found = self._def_table().get(name, []) if name is not None else []
        return found[0] if len(found) == 1 else None

    def _runs_without_grad(self, call: ast.Call) -> bool:
        """`call` runs a def of this file (any, public too) decorated `@torch.no_grad()`
        or `@torch.inference_mode()`: whoever calls it, its result records no graph
        (stereoanywhere's `disparity = run_inference(...)`)."""
        name = _name_called(call)
        if name is None:
            return False
        if self._decorated is None:
            self._decorated = {}
            for node in self.facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
                self._decorated.setdefault(node.name, []).append(decorated_no_grad(self.facts, node))
        found = self._decorated.get(name, [])
        return len(found) == 1 and found[0]

    def called_only_by_autograd_functions(self, node: ast.AST) -> bool:
        """`node` sits in a private or nested def every call of which in this file is made
        by a custom autograd Function's `forward` or `backward`, directly or through
        another such def: a helper of the Function (`_safe_div` in its `backward`) records
        no graph either. A helper merely called under `no_grad` is not one: the same code
        usually serves training elsewhere (diffusers' `_convert_srgb_to_linear`, called only
        in the `@torch.no_grad()` `decode_to_mesh` of shap_e's renderer, was judged true on
        corpus L and stays reported)."""
        func = self.facts.enclosing_function(node)
        return isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and self._only_autograd_callers(func, 0)

    def _only_autograd_callers(self, func, depth: int) -> bool:
        key = id(func)
        if key in self._autograd_callers:
            return self._autograd_callers[key]
        self._autograd_callers[key] = False  # (a cycle of calls: not known)
        calls = self._calls_of(func) if depth <= MAX_CALL_DEPTH else None
        found = bool(calls) and all(
            isinstance(caller := self.facts.enclosing_function(call), (ast.FunctionDef, ast.AsyncFunctionDef))
            and (autograd_function_method(self.facts, caller) or self._only_autograd_callers(caller, depth + 1))
            for call in calls)
        self._autograd_callers[key] = found
        return found

    def _calls_of(self, func) -> Optional[list[ast.Call]]:
        """Every call of a private/nested def in this file; None when it may be called
        from elsewhere or used as a value (a callback)."""
        if self._def_table().get(func.name) != [func]:
            return None
        calls = []
        for node in self.facts.nodes(ast.Name, ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name != func.name:
                continue
            parent = self.facts.parent(node)
            if not isinstance(node.ctx, ast.Load):
                return None  # rebound: other code may be called by this name
            if not (isinstance(parent, ast.Call) and parent.func is node) or self._callee(parent) is not func:
                return None
            calls.append(parent)
        return calls

    def _passed_no_grad(self, func, param: ast.arg, seen: set) -> bool:
        """Every call of `func` passes, for `param`, a value that carries no gradient."""
        depth = sum(1 for key in seen if key[0] == "param")
        if depth > 8 * MAX_CALL_DEPTH:
            return False
        seen.add(("param", id(func), param.arg))
        calls = self._calls_of(func)
        if not calls:
            return False
        args = func.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        parent = self.facts.parent(func)
        method = isinstance(parent, ast.ClassDef) and not any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list
        )
        defaults = parameter_defaults(args)
        for call in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return False
            index = positional.index(param.arg) - (1 if method else 0) if param.arg in positional else None
            passed = next((k.value for k in call.keywords if k.arg == param.arg), None)
            if passed is None and index is not None and 0 <= index < len(call.args):
                passed = call.args[index]
            passed = passed if passed is not None else defaults.get(param.arg)
            if passed is None or not self._no_grad(passed, seen):
                return False
        return True

    def _inputs_no_grad(self, call: ast.Call, seen: set) -> bool:
        """No argument of `call` carries a gradient (a list or tuple argument: none of
        its elements); options such as `dim=` or `dtype=` aside."""
        inputs = list(call.args) + [k.value for k in call.keywords if k.arg not in OPTION_KEYWORDS]
        for item in inputs:
            elements = item.elts if isinstance(item, (ast.List, ast.Tuple)) else [item]
            for element in elements:
                if isinstance(element, ast.Starred) or not self._no_grad(element, seen):
                    return False
        return True

    def _returns_no_grad(self, func, seen: set) -> bool:
        """Every value the private/nested def `func` returns carries none (`_ramp(r, w)`
        returning a grid built from Python numbers). Its parameters are judged by every
        call of it (`_passed_no_grad`), so one call's arguments never vouch for another's."""
        key = (id(func), "return")
        if key in seen:
            return True  # recursion: the other returns decide
        seen.add(key)
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(func)):
            return False
        returns = [n for n in _own_nodes(func) if isinstance(n, ast.Return)]
        return bool(returns) and all(r.value is not None and self._no_grad(r.value, seen) for r in returns)

    def _unpacked_no_grad(self, unpacked: _Unpacked, seen: set) -> bool:
        """Element i of every tuple the called private/nested def returns carries none."""
        func = self._callee(unpacked.call)
        if func is None or (id(func), "return", unpacked.index) in seen:
            return func is not None
        seen.add((id(func), "return", unpacked.index))
        returns = [n for n in _own_nodes(func) if isinstance(n, ast.Return)]
        if not returns:
            return False
        for ret in returns:
            value = ret.value
            if not isinstance(value, ast.Tuple) or unpacked.index >= len(value.elts):
                return False
            if not self._no_grad(value.elts[unpacked.index], seen):
                return False
        return True

    # -- where a value goes ------------------------------------------------------------
    def may_reach_backward(self, node: ast.AST) -> bool:
        """The value of `node` may reach a loss: something derived from it leaves its
        function as a tensor (returned, stored, passed to project code, yielded) or is
        used in place. False only when every use is known to stay local."""
        func = self.facts.enclosing_function(node)
        if func is None or isinstance(func, ast.Lambda):
            return True
        own = list(_own_nodes(func))
        shared = {n for g in own if isinstance(g, (ast.Global, ast.Nonlocal)) for n in g.names}
        own_ids = {id(n) for n in own}
        nested_reads = {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and id(n) not in own_ids}
        derived: set[str] = set()
        pending = [node]
        while pending:
            expr = pending.pop()
            target = self._flows_into(expr, func)
            if target is True:
                return True
            for name in target:
                if name in shared or name in nested_reads:
                    return True  # module state, or read by a closure that may outlive the call
                if name not in derived:
                    derived.add(name)
                    pending.extend(n for n in own if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load))
        return False

    def _flows_into(self, expr: ast.AST, func):
        """Names the value of `expr` is assigned to in `func`, or True when it escapes."""
        facts = self.facts
        child = expr
        for parent in facts.ancestors(expr):
            if isinstance(parent, ast.Call):
                dotted = facts.resolve(parent.func) or ""
                if child is not parent.func and not dotted.startswith(PURE_CALL_PREFIXES):
                    return True  # handed to project code (or to a method of another object)
            elif isinstance(parent, ast.Attribute):
                call = facts.parent(parent)
                if isinstance(call, ast.Call) and call.func is parent and (
                    parent.attr.endswith("_") and not parent.attr.endswith("__") or parent.attr in ESCAPING_METHODS
                ):
                    return True  # used in place, or kept by its receiver
            elif isinstance(parent, ast.Compare):
                return set()  # `r2 < where(...)`: a comparison's result is boolean, no gradient flows back
            elif isinstance(parent, (ast.Lambda, ast.comprehension, ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
                return True
            elif isinstance(parent, ast.Return):
                if parent.value is not None and not self.no_grad(parent.value):
                    return True  # returned as a tensor
                return set()
            elif isinstance(parent, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                if child is not parent.value:
                    return set()
                if self.no_grad(parent.value):
                    return set()  # `q = torch.trunc(x * inv).to(torch.uint8)`: what is stored carries none
                targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
                names: set[str] = set()
                for target in targets:
                    if not isinstance(target, ast.Name):
                        return True  # stored into an attribute, a subscript, or unpacked
                    names.add(target.id)
                return names
            elif isinstance(parent, (ast.If, ast.While, ast.Assert, ast.Expr)):
                return set()  # control flow, or a value thrown away
            elif isinstance(parent, ast.stmt):
                return True
            if parent is func:
                return True
            child = parent
        return True


def _loops_around(scope, row: int) -> list:
    """The loops of `scope` (its own, not a nested def's) whose lines hold `row`."""
    return [node for node in _own_nodes(scope) if isinstance(node, (ast.For, ast.AsyncFor, ast.While))
            and node.lineno <= row <= node.end_lineno]


def _name_called(call: ast.Call) -> Optional[str]:
    """The name of the def of this file a call may run: `f(...)`, `self.f(...)`, `cls.f(...)`."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
        return func.attr
    return None


def _base_name(expr: ast.AST) -> Optional[str]:
    """The name under subscripts and slices: `out` of `out[i]`, `out[1:][0]`."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _python_number_annotation(annotation: Optional[ast.AST]) -> bool:
    """`int`, `float`, `bool` (or a string of one): a Python number never carries a gradient."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value in PY_NUMBER_ANNOTATIONS
    return isinstance(annotation, ast.Name) and annotation.id in PY_NUMBER_ANNOTATIONS


def _python_number_default(func: ast.AST, param: ast.arg) -> bool:
    """An unannotated parameter whose default is a number (`reddening=2`, earth2mip's
    `brown_noise`): the author's type for it is a Python number, as an `int` annotation says."""
    if param.annotation is not None or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return False
    default = parameter_defaults(func.args).get(param.arg)
    if isinstance(default, ast.UnaryOp) and isinstance(default.op, ast.USub):
        default = default.operand
    return isinstance(default, ast.Constant) and type(default.value) in (int, float)


def under_no_grad(facts, node: ast.AST) -> bool:
    """`node` runs under `with torch.no_grad():` / `torch.inference_mode()`, or in a def
    decorated with them, or where `torch.is_grad_enabled()` is known false (the `else`
    of `if torch.is_grad_enabled():`, the body of `if not torch.is_grad_enabled():`:
    Depth-Anything-3's `_sqrt_positive_part` takes `torch.where` only there), in the
    same function."""
    if any(not truth and _grad_enabled_call(facts, test)
           for test, truth in tests_around(facts, node, stop=(ast.FunctionDef, ast.AsyncFunctionDef))):
        return True
    for anc in facts.ancestors(node):
        if isinstance(anc, (ast.With, ast.AsyncWith)):
            for item in anc.items:
                ctx = item.context_expr
                target = ctx.func if isinstance(ctx, ast.Call) else ctx
                if facts.resolve(target) in NO_GRAD_CONTEXTS:
                    return True
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return decorated_no_grad(facts, anc) or autograd_function_method(facts, anc)
    return False


AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function",
                                "torch.autograd.function.InplaceFunction"})
# the methods of a custom autograd Function that autograd runs with grad mode off
# (`backward` and `vjp` unless the backward pass is itself differentiated, create_graph=True)
AUTOGRAD_FUNCTION_METHODS = frozenset({"forward", "backward", "vjp", "jvp", "setup_context"})


def autograd_function_method(facts, func) -> bool:
    """`func` is `forward`/`backward` (`vjp`, `jvp`, `setup_context`) of a subclass of
    `torch.autograd.Function` (directly, or through a class of this file): autograd runs
    them with grad mode off, so what they compute records no graph and no NaN of theirs
    reaches a gradient through autograd (scripts/measure/autograd_function_grad_mode.py:
    tapnet's `safe_div`, NaN on its unselected side, in a Function's forward and backward
    leaves the input's gradient finite, and makes it NaN differentiated by autograd)."""
    if func.name not in AUTOGRAD_FUNCTION_METHODS:
        return False
    cls = facts.parent(func)
    return isinstance(cls, ast.ClassDef) and _derives_autograd_function(facts, cls, 0)


def _derives_autograd_function(facts, cls: ast.ClassDef, depth: int) -> bool:
    if depth > 4:
        return False
    for base in cls.bases:
        dotted = facts.resolve(base)
        if dotted in AUTOGRAD_FUNCTIONS:
            return True
        local = local_class(facts, dotted)
        if local is not None and local is not cls and _derives_autograd_function(facts, local, depth + 1):
            return True
    return False


def decorated_no_grad(facts, func) -> bool:
    """`func` is decorated `@torch.no_grad()` / `@torch.inference_mode()` (bare too), not
    `@torch.inference_mode(False)`, which leaves grad mode as it is."""
    for dec in func.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if facts.resolve(target) in NO_GRAD_CONTEXTS:
            if isinstance(dec, ast.Call):
                mode = dec.args[0] if dec.args else next((k.value for k in dec.keywords if k.arg == "mode"), None)
                if mode is not None and not (isinstance(mode, ast.Constant) and mode.value is True):
                    continue  # `inference_mode(False)`, or a mode the code computes
            return True
    return False


def _grad_enabled_call(facts, test: ast.AST) -> bool:
    """`test` is `torch.is_grad_enabled()`."""
    return isinstance(test, ast.Call) and not test.args and facts.resolve(test.func) == "torch.is_grad_enabled"


def _own_nodes(func):
    """The nodes of a def's body, not descending into nested defs, classes or lambdas."""
    return own_nodes(func.body if isinstance(func.body, list) else [func.body])


class GradientsFact(Fact):
    """Which expressions of a file can carry a gradient (GradientFacts), asked once per file."""

    name = "gradients"

    @classmethod
    def compute(cls, facts) -> GradientFacts:
        return GradientFacts(facts)
