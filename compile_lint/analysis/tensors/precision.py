"""Which values are fp16/bf16, as far as can be known without running anything.

CL301/CL302 fire only on arithmetic that really runs in a low-precision dtype, so a
wrong "fp16" here is a false finding and "unknown" is always the safe answer. Sources:

- explicit conversions: `.half()`, `.bfloat16()`, `.to(torch.float16)`,
  `.to(dtype=torch.bfloat16)`, `.type(torch.HalfTensor)`; `.float()` ends it;
- factory calls: `dtype=` arguments; `*_like(x)` / `x.new_*` keep `x`'s dtype; a
  factory without `dtype=` gives the default, float32;
- parameters: annotations (`torch.HalfTensor`, jaxtyping `Float16[...]`/`BFloat16[...]`),
  the arguments passed at every call site this file (or a compile site's file) shows,
  and modules converted at their compile site (`torch.compile(model.half())`,
  `model = Net().half()` before the compile): every tensor of such a forward is fp16;
- names bound to `X.from_pretrained(..., torch_dtype=torch.float16)` (or converted with
  `.half()`): what calling them returns is fp16;
- autocast: `torch.autocast(...)`, `torch.amp.autocast(...)`, `torch.cuda.amp.autocast()`,
  `torch.cpu.amp.autocast()` as a `with` block or decorator, around the code or
  around every call of the compiled callable. Autocast only changes the ops of its op
  lists (PyTorch "Autocast Op Reference"): matmul/conv/linear-like ops produce the
  low dtype; on CUDA, `pow`, `exp`, `log`, `sum`, `softmax`, `normalize`, ... run in
  float32; every other op (all elementwise blend math) runs in its inputs' dtype, so
  `a*alpha + b*(1-alpha)` on fp32 inputs stays fp32 under autocast.

Type promotion follows torch: a Python number never changes a tensor's float dtype;
fp16 with bf16 gives fp32; fp32 or fp64 wins over low precision. An operand of unknown
dtype is ignored (it is most often a Python float such as `alpha`).
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import Optional

from ..compiled.values import (
    calls_of_site,
    chain_root,
    chain_text,
    compiled_values,
    facts_for_path,
    literal,
    NOT_LITERAL,
    site_call,
    target_history,
)
from ..semantic.bindings import MAX_ALIASES, bindings_for, holds_def
from ..semantic.facts import FUNCTION_NODES, Fact, ModuleFacts
from ..semantic.signatures import parameter_defaults
from ..reach.queries import class_attrs

F16, BF16, F32, F64 = "float16", "bfloat16", "float32", "float64"
LOW = frozenset({F16, BF16})
FLOATS = frozenset({F16, BF16, F32, F64})
BOOL, INT = "bool", "int64"
SHORT = {F16: "fp16", BF16: "bf16", F32: "fp32", F64: "fp64"}

DTYPES = {
    "torch.float16": F16, "torch.half": F16, "torch.bfloat16": BF16,
    "torch.float32": F32, "torch.float": F32, "torch.float64": F64, "torch.double": F64,
    "torch.bool": BOOL, "torch.int64": INT, "torch.long": INT, "torch.int32": INT, "torch.int": INT,
    "torch.uint8": INT, "torch.int8": INT, "torch.int16": INT,
}
TENSOR_TYPES = {
    "torch.HalfTensor": F16, "torch.cuda.HalfTensor": F16, "torch.BFloat16Tensor": BF16,
    "torch.cuda.BFloat16Tensor": BF16, "torch.FloatTensor": F32, "torch.cuda.FloatTensor": F32,
    "torch.DoubleTensor": F64, "torch.cuda.DoubleTensor": F64,
}
JAXTYPING = {"Float16": F16, "BFloat16": BF16, "Float32": F32, "Float64": F64}
CONVERT_METHODS = {"half": F16, "bfloat16": BF16, "float": F32, "double": F64, "bool": BOOL, "long": INT, "int": INT}

FACTORIES = frozenset(
    {
        "zeros", "ones", "full", "empty", "rand", "randn", "arange", "linspace", "logspace",
        "eye", "tensor", "as_tensor", "normal", "randint", "empty_strided", "scalar_tensor",
    }
)
LIKE_FACTORIES = frozenset({"zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "randint_like"})
NEW_METHODS = frozenset({"new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"})
INT_FACTORIES = frozenset({"randint", "randperm", "arange"})  # arange of ints is int64

# Autocast op lists (PyTorch docs, "Autocast Op Reference"; aten/src/ATen/autocast_mode.h).
AUTOCAST_LOWER = frozenset(
    {
        "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
        "conv_tbc", "convolution", "prelu", "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv",
        "linear", "addbmm", "baddbmm", "bmm", "chain_matmul", "multi_dot", "vecdot",
        "scaled_dot_product_attention", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
    }
)
AUTOCAST_LOWER_MODULES = frozenset(
    {
        "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
        "LazyConv1d", "LazyConv2d", "LazyConv3d", "Linear", "LazyLinear", "Bilinear", "PReLU",
        "MultiheadAttention", "LSTMCell", "GRUCell", "RNNCell", "LSTM", "GRU", "RNN",
    }
)
AUTOCAST_F32_CUDA = frozenset(
    {
        "pow", "__pow__", "__rpow__", "__rdiv__", "__rtruediv__", "acos", "asin", "cosh", "sinh", "tan",
        "cdist", "cosine_similarity", "cumprod", "cumsum", "dist", "erfinv", "exp", "expm1",
        "group_norm", "layer_norm", "log", "log_softmax", "log10", "log1p", "log2", "norm",
        "normalize", "pdist", "prod", "reciprocal", "rsqrt", "softmax", "softmin", "softplus", "sum",
        "renorm", "mse_loss", "l1_loss", "smooth_l1_loss", "nll_loss", "cross_entropy", "kl_div",
        "binary_cross_entropy_with_logits",
    }
)
AUTOCAST_F32_CPU = frozenset({"prod", "quantile", "nanquantile", "cdist", "trace", "mse_loss", "l1_loss", "nll_loss", "cross_entropy", "kl_div", "smooth_l1_loss", "grid_sample"})
AUTOCAST_MODULES_F32_CUDA = frozenset({"LayerNorm", "GroupNorm", "Softmax", "LogSoftmax", "Softplus", "Softmin"})

# Calls whose result is not a floating tensor.
NON_TENSOR = frozenset(
    {
        "size", "dim", "ndimension", "numel", "item", "tolist", "numpy", "element_size", "data_ptr",
        "stride", "storage_offset", "is_contiguous", "is_floating_point", "get_device", "nelement",
        "__len__", "len", "isinstance", "int", "float", "bool", "str", "range", "tuple", "list", "dict",
    }
)
BOOL_METHODS = frozenset({"gt", "lt", "ge", "le", "eq", "ne", "greater", "less", "greater_equal", "less_equal", "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "logical_xor", "any", "all", "signbit"})
INT_METHODS = frozenset({"argmax", "argmin", "argsort", "nonzero", "bucketize", "searchsorted", "count_nonzero"})
PIPE_NON_TENSOR = ("tokenizer", "scheduler", "feature_extractor", "image_processor", "safety_checker", "to", "enable_", "set_", "register_", "save_pretrained", "load_", "fuse_", "unload_")


@dataclass(frozen=True)
class Autocast:
    device: Optional[str]  # "cuda" | "cpu" | None when not known
    dtype: Optional[str]  # the low dtype; None when not known

    @property
    def describe(self) -> str:
        dev = f"{self.device!r}" if self.device else "an unknown device"
        return f"autocast({dev}, {SHORT.get(self.dtype, 'an unknown dtype')})"


NO_AUTOCAST = Autocast("none", None)
UNKNOWN_AUTOCAST = Autocast(None, None)


def promote(dtypes) -> Optional[str]:
    """torch's result dtype for a float op over these operand dtypes (None = unknown)."""
    floats = {d for d in dtypes if d in FLOATS}
    if not floats:
        return None
    if F64 in floats:
        return F64
    if F32 in floats or floats == {F16, BF16}:
        return F32
    return next(iter(floats))


def _is_number(expr: ast.AST) -> bool:
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.UnaryOp):
        return _is_number(expr.operand)
    if isinstance(expr, ast.BinOp):
        return _is_number(expr.left) and _is_number(expr.right)
    return False


class Precision:
    """Lazy dtype facts for one file. Get it with `precision_for(facts)`."""

    MAX_DEPTH = 3

    def __init__(self, facts: ModuleFacts, depth: int = 0):
        self.facts = facts
        self.depth = depth
        self._memo: dict[int, Optional[str]] = {}
        self._active: set[int] = set()
        self._bindings: dict[int, dict[str, list[tuple[tuple[int, int], ast.AST, ast.AST]]]] = {}
        self._param_memo: dict[tuple[int, str], Optional[str]] = {}
        self._autocast_memo: dict[int, Autocast] = {}
        self._module_memo: dict[int, Optional[str]] = {}
        self._file_bindings = None
        self._names_holding: dict[int, frozenset] = {}  # id(def) -> names that may hold it
        self._attr_callees: dict[int, object] = {}  # id(call) -> its compiled callee, if any (_callers)

    # -- public -----------------------------------------------------------------
    def dtype(self, expr: ast.AST) -> Optional[str]:
        """float16/bfloat16/float32/float64 (or bool/int64) when known, else None."""
        key = id(expr)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            return None
        self._active.add(key)
        try:
            result = self._dtype(expr)
        except RecursionError:  # a pathologically deep expression: unknown
            result = None
        finally:
            self._active.discard(key)
        self._memo[key] = result
        return result

    def autocast_at(self, node: ast.AST) -> Autocast:
        """The autocast state the code at `node` runs under."""
        for anc in [node] + list(self.facts.ancestors(node)):
            if isinstance(anc, (ast.With, ast.AsyncWith)) and anc is not node:
                for item in reversed(anc.items):
                    state = self._autocast_call(item.context_expr)
                    if state is not None:
                        return state
            if isinstance(anc, FUNCTION_NODES):
                return self.function_autocast(anc)
        return NO_AUTOCAST

    def why_low(self, expr: ast.AST) -> str:
        """A short reason `expr` is low precision, for messages."""
        reason = self._reason(expr, set())
        return reason or f"{SHORT.get(self.dtype(expr), 'low precision')}"

    # -- autocast ---------------------------------------------------------------------
    def _autocast_call(self, expr: ast.AST) -> Optional[Autocast]:
        if not isinstance(expr, ast.Call):
            return None
        dotted = self.facts.resolve(expr.func)
        if dotted in ("torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"):
            device = expr.args[0] if expr.args else None
            dtype_node = expr.args[1] if len(expr.args) > 1 else None
        elif dotted in ("torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"):
            device, dtype_node = ast.Constant("cuda"), None
        elif dotted in ("torch.cpu.amp.autocast", "torch.cpu.amp.autocast_mode.autocast"):
            device, dtype_node = ast.Constant("cpu"), None
        else:
            return None
        enabled = True
        for kw in expr.keywords:
            if kw.arg == "device_type":
                device = kw.value
            elif kw.arg == "dtype":
                dtype_node = kw.value
            elif kw.arg == "enabled":
                enabled = literal(kw.value)
        if enabled is False:
            return NO_AUTOCAST
        dev = literal(device) if device is not None else NOT_LITERAL
        dev = dev if dev in ("cuda", "cpu") else None
        if dtype_node is not None:
            dtype = DTYPES.get(self.facts.resolve(dtype_node) or "")
            dtype = dtype if dtype in LOW else None
        else:
            dtype = {"cuda": F16, "cpu": BF16}.get(dev)
        if enabled is not True:
            return UNKNOWN_AUTOCAST
        return Autocast(dev, dtype)

    def function_autocast(self, func: ast.AST) -> Autocast:
        key = id(func)
        if key in self._autocast_memo:
            return self._autocast_memo[key]
        self._autocast_memo[key] = NO_AUTOCAST  # cycles: assume none
        state = None
        for deco in getattr(func, "decorator_list", []):
            state = self._autocast_call(deco)
            if state is not None:
                break
        if state is None:
            seen = set()
            for other, call in self._callers(func):
                seen.add(Precision._for(other, self).autocast_at(call))
            state = NO_AUTOCAST if not seen else (seen.pop() if len(seen) == 1 else UNKNOWN_AUTOCAST)
        self._autocast_memo[key] = state
        return state

    # -- callers and parameters ---------------------------------------------------------------
    @staticmethod
    def _for(facts: ModuleFacts, current: "Precision") -> "Precision":
        if facts is current.facts:
            return current
        return facts.get(PrecisionFact, make=lambda other: Precision(other, current.depth + 1))

    def _callers(self, func: ast.AST):
        """(facts, call) for the calls of `func` this file and its compile sites show.

        Which def a callee holds is the value model's answer (bindings.holds_def): a
        name whose reaching bindings are the def, an alias of it or a compiled wrapper
        of it (a local of the same name shadows it); `self.name(...)` in the class for
        a method; a `self.x` / `obj.x` bound to a compiled wrapper of it."""
        if self.depth >= self.MAX_DEPTH or isinstance(func, ast.Lambda):
            return []
        facts = self.facts
        out = []
        parent = facts.parent(func)
        values = compiled_values(facts)
        cls = parent if isinstance(parent, ast.ClassDef) else None
        target = self._compile_target
        for call in facts.nodes(ast.Call):
            f = call.func
            if cls is not None:
                if isinstance(f, ast.Attribute) and f.attr == func.name and isinstance(f.value, ast.Name) and f.value.id == "self":
                    if any(a is cls for a in facts.ancestors(call)):
                        out.append((facts, call))
            elif isinstance(f, ast.Name):
                if f.id in self._callable_names(func) and holds_def(facts, f, func, target):
                    out.append((facts, call))
            elif isinstance(f, ast.Attribute) and chain_text(f) is not None:
                # `self.fast = torch.compile(fn)` then `self.fast(x)`: the same for every
                # def asked about, so asked once per call
                key = id(call)
                if key not in self._attr_callees:
                    self._attr_callees[key] = values.callee(f, call)
                cc = self._attr_callees[key]
                if cc is not None and cc.path == facts.path and isinstance(cc.target, ast.Name):
                    if holds_def(facts, cc.target, func, target):
                        out.append((facts, call))
        qualname = facts.qualname_of(func)
        region = facts.region_of(func) if qualname else None
        if region is not None and region.via is None:
            for site in region.sites:
                if site.path == facts.path and out:
                    continue
                for other, call in calls_of_site(facts, site):
                    if not any(c is call for _, c in out):
                        out.append((other, call))
        return out

    def _compile_target(self, call: ast.Call) -> Optional[ast.AST]:
        """The target of a compile call of this file (`torch.compile(fn)`: `fn`), else None."""
        cc = compiled_values(self.facts).compile_call(call)
        return cc.target if cc is not None else None

    def _callable_names(self, func: ast.AST) -> frozenset:
        """Names that can hold `func`: its own and every name an assignment in this file
        binds to it, its aliases or its compiled wrappers (a cheap filter before
        holds_def asks the value model)."""
        key = id(func)
        found = self._names_holding.get(key)
        if found is None:
            names = {func.name}
            for _ in range(MAX_ALIASES):
                grown = set(names)
                for node in self.facts.nodes(ast.Assign, ast.AnnAssign, ast.NamedExpr):
                    value = node.value
                    if isinstance(value, ast.Call):
                        value = self._compile_target(value)
                    if isinstance(value, ast.Name) and value.id in names:
                        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                        grown.update(t.id for t in targets if isinstance(t, ast.Name))
                if grown == names:
                    break
                names = grown
            found = self._names_holding[key] = frozenset(names)
        return found

    def _params(self, func: ast.AST) -> list[str]:
        args = func.args
        names = [a.arg for a in args.posonlyargs + args.args]
        parent = self.facts.parent(func)
        if isinstance(parent, ast.ClassDef) and names and names[0] in ("self", "cls"):
            names = names[1:]
        return names

    def param_dtype(self, func: ast.AST, name: str) -> Optional[str]:
        key = (id(func), name)
        if key in self._param_memo:
            return self._param_memo[key]
        self._param_memo[key] = None
        result = self._param_dtype(func, name)
        self._param_memo[key] = result
        return result

    def _param_dtype(self, func: ast.AST, name: str) -> Optional[str]:
        args = func.args
        for arg in args.posonlyargs + args.args + args.kwonlyargs:
            if arg.arg == name and arg.annotation is not None:
                found = self._annotation_dtype(arg.annotation)
                if found is not None:
                    return found
        if name in ("self", "cls"):
            return None
        if _number_default(args, name):
            # `def drop_path(x, drop_prob=0.)`: a Python number by design, even where the
            # module around it runs in fp16 (timm-style drop_path in LivePortrait's
            # ConvNeXtV2, a CL302 false finding on the judged apps)
            return None
        owner = self.module_dtype(func)
        if owner in LOW:
            return owner
        params = self._params(func) if not isinstance(func, ast.Lambda) else []
        index = params.index(name) if name in params else None
        seen = set()
        for other, call in self._callers(func):
            arg = None
            if index is not None and index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
                arg = call.args[index]
            for kw in call.keywords:
                if kw.arg == name:
                    arg = kw.value
            if arg is None:
                return None  # a default, or *args: not known
            seen.add(Precision._for(other, self).dtype(arg))
        if len(seen) == 1:
            return seen.pop()
        return None

    def _annotation_dtype(self, ann: ast.AST) -> Optional[str]:
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            text = ann.value
            for key, dtype in {**JAXTYPING, "HalfTensor": F16, "BFloat16Tensor": BF16}.items():
                if text.startswith(key + "[") or text.endswith(key):
                    return dtype
            return None
        dotted = self.facts.resolve(ann) or ""
        if dotted in TENSOR_TYPES:
            return TENSOR_TYPES[dotted]
        if isinstance(ann, ast.Subscript):
            head = self.facts.resolve(ann.value) or ""
            return JAXTYPING.get(head.rsplit(".", 1)[-1]) if head.startswith("jaxtyping.") else None
        return None

    def module_dtype(self, func: ast.AST) -> Optional[str]:
        """The dtype a method's module was converted to at its compile sites."""
        key = id(func)
        if key in self._module_memo:
            return self._module_memo[key]
        self._module_memo[key] = None
        result = None
        parent = self.facts.parent(func)
        if isinstance(parent, ast.ClassDef):
            forward = next((n for n in parent.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in ("forward", "__call__")), None)
            region = self.facts.region_of(forward) if forward is not None else None
            if region is not None:
                seen = set()
                for site in region.sites:
                    if site.target is None or not site.target.instance:
                        continue
                    found = site_call(self.facts, site)
                    if found is None:
                        seen.add(None)
                        continue
                    other, cc = found
                    seen.add(history_dtype(other, target_history(other, cc.target, cc.node)))
                if len(seen) == 1:
                    result = seen.pop()
        self._module_memo[key] = result
        return result

    # -- bindings: the value model's (analysis/reach/values.py FileBindings) -------------------
    @property
    def bindings(self):
        if self._file_bindings is None:
            self._file_bindings = bindings_for(self.facts)
        return self._file_bindings

    def _value(self, bound) -> ast.AST:
        """What a binding gives this analysis: the expression, an element of a
        collection (`for x in xs`), or an unknown value."""
        if bound.kind == "assign":
            return bound.value
        if bound.kind == "for":
            return _Element(bound.source)
        return _UNKNOWN

    def _conversions(self, scope) -> dict[str, list[tuple[tuple[int, int], "_ModuleConversion", ast.AST]]]:
        """In-place module conversions (`model.half()` as a statement) of one scope, by name
        (all scopes' found in one pass over the file's statements)."""
        if not self._bindings:
            self._bindings[-1] = {}  # the pass ran
            for stmt in self.facts.nodes(ast.Expr):
                call = stmt.value
                f = call.func if isinstance(call, ast.Call) else None
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.attr in ("half", "bfloat16", "float", "to"):
                    table = self._bindings.setdefault(id(self.bindings.scope_around(stmt)), {})
                    table.setdefault(f.value.id, []).append(((stmt.lineno, stmt.col_offset), _ModuleConversion(call), stmt))
        return self._bindings.get(id(scope), {})

    def _entries(self, scope, name: str) -> list:
        """(position, value, statement) of every binding of `name` in `scope` and every
        in-place conversion of it, in source order (parameters and defs aside)."""
        out = [
            ((b.row, b.col), self._value(b), b.stmt)
            for b in self.bindings.table(scope).get(name, ()) if b.kind not in ("param", "def")
        ]
        out.extend(self._conversions(scope).get(name, ()))
        return sorted(out, key=lambda entry: entry[0])

    def _module_names(self) -> set:
        """Names the module binds by assignment (defs and classes aside)."""
        table = self.bindings.table(self.facts.tree)
        return {name for name, bounds in table.items() if any(b.kind != "def" for b in bounds)} | set(self._conversions(self.facts.tree))

    def _module_binding(self, name: str):
        """(value, statement) of the last module-level binding or conversion of `name`."""
        entries = self._entries(self.facts.tree, name)
        return (entries[-1][1], entries[-1][2]) if entries else None

    def binding(self, name: ast.Name) -> Optional[tuple[ast.AST, ast.AST]]:
        """(value, statement) of the latest binding of `name` before it, in its function,
        among those that reach it (an in-place conversion after it counts)."""
        bindings = self.bindings
        scope = bindings.scope_around(name)
        if isinstance(scope, ast.Lambda) or bindings.binding_scope(name) is not scope:
            return None
        pos = (name.lineno, name.col_offset)
        reaching = [b for b in bindings.reaching(name) if b.kind not in ("param", "def") and (b.row, b.col) < pos]
        entries = [((b.row, b.col), self._value(b), b.stmt) for b in reaching]
        entries += [c for c in self._conversions(scope).get(name.id, ()) if c[0] < pos and not _contains(c[2], name)]
        if not entries:
            return None
        latest = max(entries, key=lambda entry: entry[0])
        return latest[1], latest[2]

    # -- the dtype of an expression -------------------------------------------------------------
    def _dtype(self, expr: ast.AST) -> Optional[str]:
        if isinstance(expr, ast.Constant):
            return BOOL if isinstance(expr.value, bool) else None
        if isinstance(expr, _ModuleConversion):
            return self._conversion_dtype(expr.call)
        if expr is _UNKNOWN:
            return None
        if isinstance(expr, _Element):
            if isinstance(expr.iter, (ast.List, ast.Tuple)):
                kinds = {self.dtype(e) for e in expr.iter.elts}
                return kinds.pop() if len(kinds) == 1 else None
            if isinstance(expr.iter, ast.Call):
                return None  # range(), zip(), enumerate(): not the elements' dtype
            return self.dtype(expr.iter)
        if isinstance(expr, ast.Name):
            return self._name_dtype(expr)
        if isinstance(expr, ast.BinOp):
            return self._binop_dtype(expr)
        if isinstance(expr, ast.UnaryOp):
            return BOOL if isinstance(expr.op, ast.Not) else self.dtype(expr.operand)
        if isinstance(expr, ast.Compare):
            return BOOL
        if isinstance(expr, ast.IfExp):
            a, b = self.dtype(expr.body), self.dtype(expr.orelse)
            return a if a == b else None
        if isinstance(expr, ast.Subscript):
            return self.dtype(expr.value)
        if isinstance(expr, ast.Attribute):
            return self._attribute_dtype(expr)
        if isinstance(expr, ast.Call):
            return self._call_dtype(expr)
        return None

    def _name_dtype(self, name: ast.Name) -> Optional[str]:
        """The dtype every binding reaching `name` gives (a parameter: its callers')."""
        found = self.binding(name)
        bindings = self.bindings
        if found is not None:
            value = found[0]
            if isinstance(value, _ModuleConversion):
                return self._conversion_dtype(value.call)
            scope, pos = bindings.scope_around(name), (name.lineno, name.col_offset)
            kinds = {
                self.param_dtype(scope, name.id) if b.kind == "param" else self.dtype(self._value(b))
                for b in bindings.reaching(name) if (b.row, b.col) < pos and b.kind != "def"
            }
            return kinds.pop() if len(kinds) == 1 else None  # every path must agree
        scope = bindings.binding_scope(name)
        if scope is None or (scope is self.facts.tree and self.facts.enclosing_function(name) is None):
            return None
        entries = self._entries(scope, name.id)
        if scope is not self.facts.tree and (scope is bindings.scope_around(name) or not entries):
            # nothing assigned before the use in its own def: a parameter, or bound later (a loop)
            named = _named_params(scope) if not isinstance(scope, ast.Lambda) else []
            if any(b.kind == "param" and b.arg in named for b in bindings.table(scope).get(name.id, ())):
                return self.param_dtype(scope, name.id)
            return None
        if not entries:
            return None
        value = entries[-1][1]
        return self._conversion_dtype(value.call) if isinstance(value, _ModuleConversion) else self.dtype(value)

    def _binop_dtype(self, expr: ast.BinOp) -> Optional[str]:
        if isinstance(expr.op, ast.MatMult):
            state = self.autocast_at(expr)
            if state.device != "none":
                return state.dtype
            return promote([self.dtype(expr.left), self.dtype(expr.right)])
        left, right = self.dtype(expr.left), self.dtype(expr.right)
        result = promote([left, right])
        if result in LOW:
            state = self.autocast_at(expr)
            if state.device != "none":
                fp32 = isinstance(expr.op, ast.Pow) or (isinstance(expr.op, ast.Div) and _is_number(expr.left))
                if fp32 and state.device == "cuda":
                    return F32
                if fp32 and state.device is None:
                    return None
        return result

    def _attribute_dtype(self, expr: ast.Attribute) -> Optional[str]:
        if expr.attr in ("shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout", "training"):
            return None
        base = expr.value
        if isinstance(base, ast.Name) and base.id == "self":
            func = self.facts.enclosing_function(expr)
            if func is not None and self.module_dtype(func) in LOW:
                return self.module_dtype(func)
            return None
        return self.dtype(base)

    def _conversion_dtype(self, call: ast.Call) -> Optional[str]:
        func = call.func
        if not isinstance(func, ast.Attribute):
            return None
        if func.attr in CONVERT_METHODS and not call.args:
            return CONVERT_METHODS[func.attr]
        if func.attr in ("to", "type"):
            candidates = list(call.args) + [k.value for k in call.keywords if k.arg in ("dtype", "torch_dtype")]
            for arg in candidates:
                dotted = self.facts.resolve(arg) or ""
                if dotted in DTYPES:
                    return DTYPES[dotted]
                if dotted in TENSOR_TYPES:
                    return TENSOR_TYPES[dotted]
                if isinstance(arg, ast.Attribute) and arg.attr == "dtype":
                    return self.dtype(arg.value)
            for arg in call.args:
                if not isinstance(arg, ast.Constant) and (self.facts.resolve(arg) or "").startswith("torch.device") is False:
                    other = self.dtype(arg) if isinstance(arg, ast.Name) else None
                    if other in FLOATS:
                        return other  # `.to(other_tensor)`
            return self.dtype(func.value)
        return None

    def _call_dtype(self, call: ast.Call) -> Optional[str]:
        facts = self.facts
        func = call.func
        dotted = facts.resolve(func) or ""
        tail = dotted.rsplit(".", 1)[-1] if dotted else (func.attr if isinstance(func, ast.Attribute) else "")
        explicit = None
        for kw in call.keywords:
            if kw.arg in ("dtype", "torch_dtype"):
                explicit = DTYPES.get(facts.resolve(kw.value) or "")
                if explicit is None and isinstance(kw.value, ast.Attribute) and kw.value.attr == "dtype":
                    explicit = self.dtype(kw.value.value)
                return explicit
        if dotted.startswith("builtins."):
            return None
        if isinstance(func, ast.Attribute) and not dotted and (func.attr in CONVERT_METHODS or func.attr in ("to", "type")):
            if func.attr in CONVERT_METHODS and call.args:
                return None
            return self._conversion_dtype(call)
        if tail in NON_TENSOR:
            return None
        # torch.* functions
        if dotted.startswith("torch."):
            if dotted in ("torch.tensor", "torch.as_tensor") and call.args and _is_number(call.args[0]) and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, int):
                return INT
            if tail in FACTORIES and dotted.count(".") == 1:
                return INT if tail in INT_FACTORIES and not any(isinstance(a, ast.Constant) and isinstance(a.value, float) for a in call.args) else F32
            if tail in LIKE_FACTORIES and call.args:
                return self.dtype(call.args[0])
            if tail in BOOL_METHODS:
                return BOOL
            if tail in INT_METHODS:
                return INT
            if dotted.startswith(("torch.nn.functional.", "torch.")) and not dotted.startswith(("torch.nn.functional.",)) and dotted.count(".") > 1 and not dotted.startswith(("torch.linalg.", "torch.special.", "torch.fft.")):
                return None  # torch.cuda.*, torch.jit.*, ...: not tensor math
            return self._op_dtype(call, tail, [a for a in call.args] + [k.value for k in call.keywords if k.arg in ("input", "other", "weight", "end")])
        # methods
        if isinstance(func, ast.Attribute):
            attr = func.attr
            if attr in CONVERT_METHODS or attr in ("to", "type"):
                if attr in CONVERT_METHODS and call.args:
                    return None
                return self._conversion_dtype(call)
            if attr in NEW_METHODS:
                return self.dtype(func.value)
            if attr in BOOL_METHODS:
                return BOOL
            if attr in INT_METHODS:
                return INT
            base = func.value
            if isinstance(base, ast.Name) and base.id == "self":
                return self._self_call_dtype(call, attr)
            root = chain_root(func)
            if root is not None and root.id != "self" and not isinstance(base, ast.Call) and self._is_low_module(root) and not any(p in attr or attr.startswith(p) for p in PIPE_NON_TENSOR):
                text = chain_text(func) or ""
                if not any(part in text.split(".") for part in ("tokenizer", "scheduler", "feature_extractor", "image_processor", "safety_checker")):
                    return self._low_module_dtype(root)
            receiver = self.dtype(base)
            if receiver is None and not (isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "self"):
                return None
            if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "self" and receiver is None:
                # `self.block.forward(x)`-like: a submodule's method
                return None
            return self._op_dtype(call, attr, [base] + list(call.args))
        if isinstance(func, ast.Name):
            found = self.binding(func)
            if found is not None or func.id in self._module_names():
                if self._is_low_module(func):
                    return self._low_module_dtype(func)
                return None
            target = self._local_def(func.id)
            if target is not None:
                return self.return_dtype(target)
        return None

    def _local_def(self, name: str):
        for stmt in self.facts.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                return stmt
        return None

    def return_dtype(self, func) -> Optional[str]:
        """The dtype every `return` of a def of this file gives (context-insensitive)."""
        key = ("return", id(func))
        if key in self._param_memo:
            return self._param_memo[key]
        self._param_memo[key] = None
        kinds = set()
        stack = list(func.body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Return) and node.value is not None:
                kinds.add(self.dtype(node.value))
            stack.extend(ast.iter_child_nodes(node))
        result = kinds.pop() if len(kinds) == 1 else None
        self._param_memo[key] = result
        return result

    def _is_low_module(self, name: ast.Name) -> bool:
        return self._low_module_dtype(name) in LOW

    def _low_module_dtype(self, name: ast.Name) -> Optional[str]:
        """The dtype of a name bound to a module/pipeline converted to low precision."""
        found = self.binding(name) or self._module_binding(name.id)
        value = found[0] if found is not None else None
        if value is None:
            return None
        if isinstance(value, _ModuleConversion):
            return self._conversion_dtype(value.call)
        if isinstance(value, ast.Call):
            history = _history_of(value)
            return history_dtype(self.facts, history)
        return None

    def _self_call_dtype(self, call: ast.Call, attr: str) -> Optional[str]:
        func = self.facts.enclosing_function(call)
        owner = self.module_dtype(func) if func is not None else None
        if owner in LOW:
            return owner
        cls = self.facts.parent(func) if func is not None else None
        if isinstance(cls, ast.ClassDef):
            method = next((n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == attr), None)
            if method is not None:
                return self.return_dtype(method)
        kind = self._self_attr_kind(call, attr)
        if kind is None:
            return None
        state = self.autocast_at(call)
        if kind in AUTOCAST_LOWER_MODULES:
            if state.device != "none":
                return state.dtype
        if kind in AUTOCAST_MODULES_F32_CUDA and state.device == "cuda":
            return F32
        if kind.startswith("torch.nn.") and call.args:
            # a torch layer keeps its input's dtype (norms, activations, pooling, upsampling)
            if kind.rsplit(".", 1)[-1] in AUTOCAST_LOWER_MODULES:
                return None
            return self.dtype(call.args[0])
        return None

    def _self_attr_kind(self, call: ast.Call, attr: str) -> Optional[str]:
        """The torch.nn layer `self.<attr>` holds (`self.<attr> = nn.Conv2d(...)`, the last
        such assignment in the class)."""
        assigned = class_attrs(self.facts, call).get(attr)
        if not assigned:
            return None
        dotted = self.facts.resolve(assigned[-1][1].func) or ""
        if not dotted:
            return None
        short = dotted.rsplit(".", 1)[-1]
        if dotted.startswith("torch.nn.") and short in AUTOCAST_LOWER_MODULES | AUTOCAST_MODULES_F32_CUDA:
            return short
        return dotted if dotted.startswith("torch.nn.") else None

    def _op_dtype(self, call: ast.Call, op: str, operands: list) -> Optional[str]:
        """A torch op or tensor method: autocast lists first, then type promotion."""
        state = self.autocast_at(call)
        if state.device != "none":
            if op in AUTOCAST_LOWER:
                return state.dtype
            if op in AUTOCAST_F32_CPU:
                return F32
            if op in AUTOCAST_F32_CUDA:
                if state.device == "cuda":
                    return F32
                if state.device is None:
                    return None
        if op in ("where",) and len(operands) >= 3 and isinstance(call.func, ast.Attribute) and not (self.facts.resolve(call.func) or "").startswith("torch."):
            operands = [operands[0], operands[2]]  # x.where(cond, y)
        elif op == "where" and len(operands) >= 3:
            operands = operands[1:3]
        kinds = [self.dtype(o) for o in operands if not isinstance(o, ast.Starred)]
        if op in ("cat", "stack", "concat", "concatenate", "hstack", "vstack") and operands and isinstance(operands[0], (ast.List, ast.Tuple)):
            kinds = [self.dtype(e) for e in operands[0].elts]
        return promote(kinds)

    def _reason(self, expr: ast.AST, seen: set) -> Optional[str]:
        """Where a low dtype came from: a conversion, dtype=, autocast, a parameter."""
        if id(expr) in seen:
            return None
        seen.add(id(expr))
        if isinstance(expr, _Element):
            return self._reason(expr.iter, seen)  # an element of a collection of low-precision values
        if isinstance(expr, _ModuleConversion):
            return self._reason(expr.call, seen)
        facts = self.facts
        if isinstance(expr, ast.Call):
            f = expr.func
            if isinstance(f, ast.Attribute) and f.attr in ("half", "bfloat16", "to", "type"):
                d = self._conversion_dtype(expr)
                if d in LOW:
                    return f"`{facts.text(expr)}` (line {expr.lineno})"
            for kw in expr.keywords:
                if kw.arg in ("dtype", "torch_dtype") and DTYPES.get(facts.resolve(kw.value) or "") in LOW:
                    return f"`{facts.text(kw)}` (line {expr.lineno})"
            state = self.autocast_at(expr)
            if state.device not in ("none", None) and state.dtype in LOW and self.dtype(expr) == state.dtype:
                name = f.attr if isinstance(f, ast.Attribute) else (facts.resolve(f) or "").rsplit(".", 1)[-1]
                if name in AUTOCAST_LOWER or self._self_attr_kind(expr, name) in AUTOCAST_LOWER_MODULES:
                    return f"`{facts.text(expr)}` under {state.describe} (line {expr.lineno})"
            for part in [f] + list(expr.args):
                r = self._reason(part, seen)
                if r:
                    return r
            return None
        if isinstance(expr, ast.Name):
            found = self.binding(expr)
            if found is not None:
                value, stmt = found
                if isinstance(value, _ModuleConversion):
                    return f"`{facts.text(value.call)}` (line {stmt.lineno})"
                return self._reason(value, seen)
            func = facts.enclosing_function(expr)
            if func is not None and not isinstance(func, ast.Lambda):
                return self._param_reason(func, expr.id)
            found = self._module_binding(expr.id)
            if found is not None and not isinstance(found[0], _ModuleConversion):
                return self._reason(found[0], seen)
            if found is not None:
                return f"`{facts.text(found[0].call)}` (line {found[1].lineno})"
            return None
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            func = facts.enclosing_function(expr)
            owner = self.module_dtype(func) if func is not None else None
            return f"the module is converted to {SHORT.get(owner, 'low precision')} where it is compiled"
        for child in ast.iter_child_nodes(expr):
            if isinstance(child, ast.expr) and self.dtype(child) in LOW:
                r = self._reason(child, seen)
                if r:
                    return r
        return None


    def _param_reason(self, func, name: str) -> Optional[str]:
        facts = self.facts
        args = func.args
        for arg in args.posonlyargs + args.args + args.kwonlyargs:
            if arg.arg == name and arg.annotation is not None and self._annotation_dtype(arg.annotation) in LOW:
                return f"`{name}: {facts.text(arg.annotation)}`"
        owner = self.module_dtype(func)
        if owner in LOW:
            return f"the module is converted to {SHORT[owner]} where it is compiled"
        d = self.param_dtype(func, name)
        if d not in LOW:
            return None
        params = self._params(func)
        index = params.index(name) if name in params else None
        for other, call in self._callers(func):
            arg = call.args[index] if index is not None and index < len(call.args) else None
            for kw in call.keywords:
                if kw.arg == name:
                    arg = kw.value
            if arg is not None:
                where = "" if other is facts else f" in {os.path.basename(other.path)}"
                return f"`{name}` is `{other.text(arg)}` at the call on line {call.lineno}{where}"
        return f"`{name}` is {SHORT[d]} at its call sites"


class _Element:
    """A loop variable: an element of `iter`."""

    def __init__(self, iter_: ast.AST):
        self.iter = iter_


class _ModuleConversion:
    """A statement `m.half()` / `m.to(torch.float16)`: converts module `m` in place."""

    def __init__(self, call: ast.Call):
        self.call = call


_UNKNOWN = ast.Constant(value=...)  # a binding whose value is not known (loop target, unpacking)


def _named_params(func) -> list:
    """Parameters that can be passed by position or keyword (not *args / **kwargs)."""
    args = func.args
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def _contains(node: ast.AST, inner: ast.AST) -> bool:
    return any(n is inner for n in ast.walk(node))


def _history_of(value: ast.Call) -> list[ast.Call]:
    out = []
    expr = value
    while isinstance(expr, ast.Call):
        out.append(expr)
        expr = expr.func.value if isinstance(expr.func, ast.Attribute) else None
    return out


def history_dtype(facts: ModuleFacts, calls: list[ast.Call]) -> Optional[str]:
    """The dtype a module ends up in after these calls (latest first)."""
    for call in calls:
        func = call.func
        attr = func.attr if isinstance(func, ast.Attribute) else None
        if attr in CONVERT_METHODS and not call.args and attr in ("half", "bfloat16", "float", "double"):
            return CONVERT_METHODS[attr]
        if attr in ("to", "type") or attr == "from_pretrained" or attr == "from_single_file":
            for arg in list(call.args) + [k.value for k in call.keywords if k.arg in ("dtype", "torch_dtype")]:
                d = DTYPES.get(facts.resolve(arg) or "")
                if d in FLOATS:
                    return d
            if attr in ("from_pretrained", "from_single_file"):
                return None
    return None


class PrecisionFact(Fact):
    """The dtype and autocast state of values in a file (Precision)."""

    name = "precision"

    @classmethod
    def compute(cls, facts: ModuleFacts) -> "Precision":
        return Precision(facts)


def precision_for(facts: ModuleFacts) -> Precision:
    return facts.get(PrecisionFact)


__all__ = [
    "Autocast", "BF16", "F16", "F32", "F64", "LOW", "NO_AUTOCAST", "Precision", "SHORT",
    "PrecisionFact", "history_dtype", "precision_for", "promote", "facts_for_path",
]


def _number_default(args: ast.arguments, name: str) -> bool:
    """Whether parameter `name` defaults to a number literal (`0.`, `1`, `-1`)."""
    default = parameter_defaults(args).get(name)
    if isinstance(default, ast.UnaryOp) and isinstance(default.op, ast.USub):
        default = default.operand
    return isinstance(default, ast.Constant) and type(default.value) in (int, float)
