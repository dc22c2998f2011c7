"""Shape and size values of tensors, for the tracing rules (CL101, CL104).

Under a tracer, `x.shape[2]` and `x.size(2)` are traced values (0-d tensors under
`torch.jit.trace`, proxies under fx, SymInts under export); a Python cast of one
(`int(...)`, `float(...)`, `math.floor(...)`, `.item()`, `.tolist()`) turns it into
the constant it had while tracing.
"""
from __future__ import annotations

import ast
from typing import Optional

from ..semantic.facts import ModuleFacts
from ..semantic.walk import walk as _walk

SHAPE_ATTRS = frozenset({"shape"})
CASTS = {"builtins.int": "int", "builtins.float": "float", "math.floor": "math.floor", "math.ceil": "math.ceil", "math.trunc": "math.trunc"}
CAST_METHODS = frozenset({"item", "tolist"})
TENSOR_FROM = frozenset({"torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.LongTensor", "torch.IntTensor"})
# methods whose arguments are sizes, counts or positions
SIZE_METHODS = frozenset(
    {
        "view", "reshape", "expand", "new_zeros", "new_ones", "new_empty", "new_full", "repeat", "tile",
        "narrow", "unflatten", "resize_", "resize", "split", "unfold", "roll", "chunk", "repeat_interleave",
    }
)
SIZE_FUNCS = frozenset(
    {
        "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.rand", "torch.randn", "torch.randint",
        "torch.arange", "torch.linspace", "torch.reshape", "torch.broadcast_to", "torch.narrow", "torch.split",
        "torch.roll", "torch.tile", "torch.nn.functional.interpolate", "torch.nn.functional.upsample",
        "torch.nn.functional.pad", "torch.nn.functional.adaptive_avg_pool2d", "torch.nn.functional.adaptive_max_pool2d",
        "torch.nn.functional.adaptive_avg_pool1d", "torch.nn.functional.fold", "torch.nn.functional.unfold",
        "torch.nn.Upsample", "torch.nn.AdaptiveAvgPool2d", "builtins.range",
    }
)
SIZE_KEYWORDS = frozenset({"size", "shape", "output_size", "sizes", "scale_factor"})


def is_size_call(node: ast.AST) -> bool:
    """`x.size()` or `x.size(2)` (a call of a `size` method)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and len(node.args) <= 1
        and not node.keywords
    )


def is_shape_value(facts: ModuleFacts, expr: ast.AST, names: frozenset[str] | set[str] = frozenset()) -> bool:
    """`x.shape`, `x.shape[2]`, `x.size(2)`, `x.size()[-2:]`, a name bound to one of
    these (`names`), arithmetic on them, or a tensor/tuple built from them."""
    if isinstance(expr, ast.Attribute):
        return expr.attr in SHAPE_ATTRS and not _module_state(facts, expr.value)
    if is_size_call(expr):
        return not _module_state(facts, expr.func.value)
    if isinstance(expr, ast.Subscript):
        return is_shape_value(facts, expr.value, names)
    if isinstance(expr, ast.Name):
        return expr.id in names
    if isinstance(expr, ast.BinOp):
        return is_shape_value(facts, expr.left, names) or is_shape_value(facts, expr.right, names)
    if isinstance(expr, ast.UnaryOp):
        return is_shape_value(facts, expr.operand, names)
    if isinstance(expr, (ast.Tuple, ast.List)):
        return any(is_shape_value(facts, e, names) for e in expr.elts)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and facts.resolve(expr.func) is None:
        if is_shape_value(facts, expr.func.value, names):  # torch.tensor(x.shape).prod(), x.shape.numel()
            return True
    if isinstance(expr, ast.Call) and expr.args:
        dotted = facts.resolve(expr.func)
        if dotted in TENSOR_FROM or dotted in ("builtins.tuple", "builtins.list", "builtins.max", "builtins.min"):
            return any(is_shape_value(facts, a, names) for a in expr.args)
    return False


PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


def _module_state(facts: ModuleFacts, owner: ast.AST) -> bool:
    """`self.w` where the class makes `w` an `nn.Parameter` or registers it as a buffer:
    its shape is fixed when the module is built, the same in every trace, not a size
    that follows the input."""
    if not (isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) and owner.value.id == "self"):
        return False
    cls = next((a for a in facts.ancestors(owner) if isinstance(a, ast.ClassDef)), None)
    if cls is None:
        return False
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and facts.resolve(node.value.func) in PARAMETER_CLASSES:
            if any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                   and t.attr == owner.attr for t in node.targets):
                return True
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("register_buffer", "register_parameter") and node.args
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == owner.attr):
            return True
    return False


def whole_shape_of(expr: ast.AST) -> Optional[ast.Name]:
    """`x` of `x.shape` / `x.size()` (the whole shape, as an unpack `B, C, H, W = ...` reads
    it) when `x` is a plain name; None otherwise."""
    if isinstance(expr, ast.Attribute) and expr.attr == "shape":
        base = expr.value
    elif isinstance(expr, ast.Call) and not expr.args and isinstance(expr.func, ast.Attribute) and expr.func.attr == "size":
        base = expr.func.value
    else:
        return None
    return base if isinstance(base, ast.Name) else None


def direct_shape_element(expr: ast.AST) -> bool:
    """`x.shape[i]`, `x.size(i)`, `x.size()[i]`: one size, nothing around it."""
    if isinstance(expr, ast.Subscript) and not isinstance(expr.slice, ast.Slice):
        base = expr.value
        return (isinstance(base, ast.Attribute) and base.attr in SHAPE_ATTRS) or (is_size_call(base) and not base.args)
    return is_size_call(expr) and len(expr.args) == 1


def shape_names(facts: ModuleFacts, func: ast.AST) -> set[str]:
    """Local names holding shape values in one function (`h = x.shape[2]`,
    `b, c, h, w = x.shape`, `for s in x.shape[2:]`, comprehension targets)."""
    names: set[str] = set()
    for _ in range(2):
        for node in _walk(func):
            if isinstance(node, ast.Assign):
                value, targets = node.value, node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                value, targets = node.value, [node.target]
            elif isinstance(node, (ast.For, ast.comprehension)):
                value, targets = node.iter, [node.target]
            else:
                continue
            if not is_shape_value(facts, value, names):
                continue
            for target in targets:
                for sub in _walk(target):
                    if isinstance(sub, ast.Name):
                        names.add(sub.id)
    return names


def cast_kind(facts: ModuleFacts, node: ast.AST, names: set[str]) -> Optional[str]:
    """The cast `node` makes of a shape value: "int", "float", "math.floor", ".item()",
    ".tolist()", "map(int, ...)"; None when it is not one."""
    if not isinstance(node, ast.Call):
        return None
    dotted = facts.resolve(node.func)
    if dotted in CASTS and len(node.args) == 1 and is_shape_value(facts, node.args[0], names):
        return CASTS[dotted]
    if dotted == "builtins.map" and len(node.args) == 2 and facts.resolve(node.args[0]) in CASTS:
        if is_shape_value(facts, node.args[1], names):
            return f"map({CASTS[facts.resolve(node.args[0])]}, ...)"
    if isinstance(node.func, ast.Attribute) and node.func.attr in CAST_METHODS and not node.args:
        if is_shape_value(facts, node.func.value, names):
            return f".{node.func.attr}()"
    return None


def sink_of(facts: ModuleFacts, node: ast.AST, stop: ast.AST) -> Optional[ast.AST]:
    """The size-taking call or index that the value of `node` is an argument of, if
    any, looking outwards through its expression (up to `stop`)."""
    child = node
    for anc in facts.ancestors(node):
        if anc is stop or isinstance(anc, ast.stmt):
            return None
        if isinstance(anc, ast.keyword) and anc.arg in SIZE_KEYWORDS:
            return facts.parent(anc)
        if isinstance(anc, ast.Call) and child is not anc.func:
            if isinstance(anc.func, ast.Attribute) and anc.func.attr in SIZE_METHODS and facts.resolve(anc.func) is None:
                return anc
            if facts.resolve(anc.func) in SIZE_FUNCS and not isinstance(child, ast.keyword):
                return anc
        if isinstance(anc, ast.Subscript) and child is anc.slice and _is_slice_index(child):
            return anc
        child = anc
    return None


def _is_slice_index(expr: ast.AST) -> bool:
    if isinstance(expr, ast.Slice):
        return True
    if isinstance(expr, ast.Tuple):
        return any(isinstance(e, ast.Slice) for e in expr.elts)
    return False


def flows_to_sink(facts: ModuleFacts, node: ast.AST, func: ast.AST) -> Optional[ast.AST]:
    """The sink that the value of `node` reaches in `func`: directly, or through
    local names it is assigned to (and names computed from those)."""
    found = sink_of(facts, node, func)
    if found is not None:
        return found
    stmt = facts.statement_of(node)
    tainted: set[str] = set()
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            for sub in _walk(target):
                if isinstance(sub, ast.Name):
                    tainted.add(sub.id)
    if not tainted:
        return None
    # names computed from tainted names are tainted too (two rounds are plenty)
    for _ in range(2):
        for other in _walk(func):
            if isinstance(other, ast.Assign) and other is not stmt and _numberish(facts, other.value):
                if any(isinstance(n, ast.Name) and n.id in tainted for n in _walk(other.value)):
                    for target in other.targets:
                        for sub in _walk(target):
                            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                                tainted.add(sub.id)
    uses = [n for n in _walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in tainted]
    for use in sorted(uses, key=lambda n: (n.lineno, n.col_offset)):
        found = sink_of(facts, use, func)
        if found is not None:
            return found
    return None


def _numberish(facts: ModuleFacts, expr: ast.AST) -> bool:
    """An expression that computes numbers or tuples of numbers from its names
    (so a cast size flows through it), not a call that makes something new."""
    if isinstance(expr, (ast.Name, ast.Constant)):
        return True
    if isinstance(expr, ast.BinOp):
        return _numberish(facts, expr.left) and _numberish(facts, expr.right)
    if isinstance(expr, ast.UnaryOp):
        return _numberish(facts, expr.operand)
    if isinstance(expr, (ast.Tuple, ast.List)):
        return all(_numberish(facts, e) for e in expr.elts)
    if isinstance(expr, ast.IfExp):
        return _numberish(facts, expr.body) and _numberish(facts, expr.orelse)
    if isinstance(expr, ast.Subscript):
        return _numberish(facts, expr.value)
    if isinstance(expr, ast.Call):
        dotted = facts.resolve(expr.func)
        if dotted in ("builtins.min", "builtins.max", "builtins.int", "builtins.round", "builtins.tuple",
                      "builtins.list", "builtins.abs", "math.floor", "math.ceil"):
            return all(_numberish(facts, a) for a in expr.args)
    if isinstance(expr, (ast.ListComp, ast.GeneratorExp)):
        return True
    return False
