"""Restricted-domain ops inside `torch.where` branches, and whether their input stays
in the op's domain where the branch is not selected.

`torch.where(cond, a, b)` computes both branches on every element. An op with a
restricted domain (a fractional or negative power, `sqrt`, `rsqrt`, `log`,
`reciprocal`, a division) in a branch runs on the elements the condition sends to the
other branch too; there it can give NaN/inf, and `0 * NaN` poisons the gradient. This
module answers, from the expression alone:

- `where_parts`: the condition and the two branches of `torch.where(c, a, b)` /
  `a.where(c, b)`; `condition_of` follows a condition held in a local name;
- `tested_variables`: the variables a condition compares with a constant (`u <= 0.04045`);
- `risky_ops`: each restricted-domain op of a branch, the domain it needs and its input;
- `guarded`: the input is clamped into the domain first (`clamp`, `+ eps`, `exp`, an
  inner `where`, `relu`/`abs` for powers above 1);
- `safe_when_unselected`: with `cond = var OP c`, the input evaluated on the side where
  the branch is not selected stays in the domain (`where(q < 50, 5000 / q, ...)`),
  using what is known to be non-negative (`x ** 2`, `a*a + b*b`, `abs`, `exp`);
- `clamp_fix`: the variable occurrences and the `.clamp(min=c)` / `.clamp(max=c)` that
  put the input into the domain on the branch's own side, when that is sound.

Pure reasoning on `ast` expressions; CL304 asks it and decides what to report.
"""
from __future__ import annotations

import ast
from typing import Iterator, Optional

from ...analysis.semantic.bindings import bindings_for
from ...analysis.compiled.values import chain_text
from ...analysis.reach.queries import call_name, is_number, number_value

POSITIVE = "positive"  # the op needs an input > 0 (a finite gradient at 0 is not enough)
NONNEG = "non-negative"
NONZERO = "non-zero"  # a denominator
NEEDS = {POSITIVE: "needs an input > 0", NONNEG: "needs an input >= 0", NONZERO: "needs a non-zero denominator"}
LOG_FUNCS = frozenset({"log", "log2", "log10"})
POSITIVE_FUNCS = frozenset({"sqrt", "rsqrt", "reciprocal"}) | LOG_FUNCS
GUARDS = frozenset({"clamp", "clamp_min", "clamp_max", "clip", "maximum", "fmax", "where", "nan_to_num"})
NONNEG_GUARDS = frozenset({"relu", "abs", "square", "relu6"})
POSITIVE_GUARDS = frozenset({"exp", "sigmoid", "softplus", "exp2"})
FLIP = {ast.Gt: ast.LtE, ast.GtE: ast.Lt, ast.Lt: ast.GtE, ast.LtE: ast.Gt}
MIRROR = {ast.Gt: ast.Lt, ast.GtE: ast.LtE, ast.Lt: ast.Gt, ast.LtE: ast.GtE}


def is_method(facts, call: ast.Call) -> bool:
    """A tensor method call (`x.pow(...)`), not a `torch.*` function."""
    return isinstance(call.func, ast.Attribute) and not (facts.resolve(call.func) or "").startswith("torch.")


def op_inputs(facts, call: ast.Call) -> list:
    """The tensor inputs of a call: the receiver of a method, then the arguments."""
    return ([call.func.value] if is_method(facts, call) else []) + list(call.args)


def variables(expr: ast.AST) -> set[str]:
    """Names and attribute chains (`u`, `self.gamma`) an expression reads, `self` aside."""
    out = set()
    for node in ast.walk(expr):
        if isinstance(node, (ast.Name, ast.Attribute)):
            text = chain_text(node)
            if text and text != "self":
                out.add(text)
    return out


def where_parts(facts, call: ast.Call) -> Optional[tuple[ast.AST, list[tuple[ast.AST, bool]]]]:
    """(condition, [(branch, selected-when-true)]) of a `where` call, else None."""
    if call_name(facts, call) != "where":
        return None
    if is_method(facts, call):
        if len(call.args) < 2:
            return None
        return call.args[0], [(call.func.value, True), (call.args[1], False)]
    if len(call.args) < 3:
        return None
    return call.args[0], [(call.args[1], True), (call.args[2], False)]


def assigned_values(facts, name: ast.Name) -> Optional[list]:
    """The expressions every binding reaching `name` assigns (the value model's rule);
    None when one of them is not a plain assignment (a parameter, a loop, unpacking)."""
    reaching = bindings_for(facts).reaching(name)
    if not reaching or any(b.kind != "assign" for b in reaching):
        return None
    return [b.value for b in reaching]


def condition_of(facts, cond):
    """A condition held in a local name: `m = u > t` ... `torch.where(m, ...)`."""
    if not isinstance(cond, ast.Name):
        return cond
    values = assigned_values(facts, cond)
    return values[-1] if values and isinstance(values[-1], ast.Compare) else cond


def python_number(facts, expr) -> bool:
    """A Python number: a literal, or a name every reaching binding of which is one."""
    if is_number(expr):
        return True
    if isinstance(expr, ast.Name):
        values = assigned_values(facts, expr)
        return bool(values) and all(is_number(v) for v in values)
    return False


def tested_variables(facts, cond) -> set[str]:
    """Variables the condition compares with a constant (`u <= 0.04045`, `d != 0`)."""
    out: set[str] = set()
    for node in ast.walk(cond):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left] + list(node.comparators)
        if any(python_number(facts, side) for side in sides):
            for side in sides:
                if not python_number(facts, side):
                    out |= variables(side)
    return out


def pow_need(exponent) -> Optional[str]:
    """The domain `x ** exponent` needs (None: any real input is fine)."""
    value = number_value(exponent)
    if value is None:
        if isinstance(exponent, ast.BinOp) and isinstance(exponent.op, ast.Div):
            return POSITIVE  # 1 / gamma: fractional, maybe below 1
        return None
    if value == int(value) and value >= 0:
        return None
    return NONNEG if value > 1 else POSITIVE


def risky_ops(facts, branch) -> Iterator[tuple[ast.AST, str, ast.AST]]:
    """(op node, domain needed, input) for each restricted-domain op in a branch."""
    for node in ast.walk(branch):
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Pow):
                need = pow_need(node.right)
                if need:
                    yield node, need, node.left
            elif isinstance(node.op, (ast.Div, ast.FloorDiv)) and not is_number(node.right):
                yield node, NONZERO, node.right
        elif isinstance(node, ast.Call):
            name = call_name(facts, node)
            args = op_inputs(facts, node)
            if name in POSITIVE_FUNCS and args:
                yield node, POSITIVE, args[0]
            elif name in ("pow", "float_power") and len(args) >= 2:
                need = pow_need(args[1])
                if need:
                    yield node, need, args[0]
            elif name in ("div", "true_divide", "divide") and len(args) >= 2 and not is_number(args[1]):
                yield node, NONZERO, args[1]


def nonneg(facts, expr, _depth: int = 0) -> bool:
    """An expression that cannot be negative: squares, sums of them, abs, exp, ..."""
    if is_number(expr):
        value = number_value(expr)
        return value is not None and value >= 0
    if isinstance(expr, ast.BinOp):
        if isinstance(expr.op, ast.Pow):
            value = number_value(expr.right)
            return value is not None and value == int(value) and int(value) % 2 == 0
        if isinstance(expr.op, ast.Mult):
            return ast.dump(expr.left) == ast.dump(expr.right) or (nonneg(facts, expr.left, _depth) and nonneg(facts, expr.right, _depth))
        if isinstance(expr.op, (ast.Add, ast.Div)):
            return nonneg(facts, expr.left, _depth) and nonneg(facts, expr.right, _depth)
        return False
    if isinstance(expr, ast.Call):
        name = call_name(facts, expr)
        if name in NONNEG_GUARDS or name in POSITIVE_GUARDS or name in ("sqrt", "norm", "numel"):
            return True
        if name in ("pow",) and len(expr.args) >= 1:
            value = number_value(expr.args[-1])
            return value is not None and value == int(value) and int(value) % 2 == 0
        if name in ("clamp", "clamp_min", "clip"):
            low = next((k.value for k in expr.keywords if k.arg == "min"), None)
            if low is None and expr.args:
                low = expr.args[0] if is_method(facts, expr) else (expr.args[1] if len(expr.args) > 1 else None)
            return low is not None and nonneg(facts, low, _depth)
        if name in ("sum", "mean") and is_method(facts, expr):
            return nonneg(facts, expr.func.value, _depth)
    if isinstance(expr, ast.Name):
        return nonneg_name(facts, expr.id, expr, _depth + 1)
    return False


def nonneg_name(facts, var: str, near, _depth: int = 0) -> bool:
    """`var` is bound, where `near` reads it, only to values that cannot be negative."""
    if "." in var or _depth > 8:
        return False  # an attribute, or a name defined through itself (`s = s + a * a` in a loop)
    use = near if isinstance(near, ast.Name) and near.id == var else next(
        (n for n in ast.walk(near) if isinstance(n, ast.Name) and n.id == var), None
    )
    values = assigned_values(facts, use) if use is not None else None
    return bool(values) and all(nonneg(facts, v, _depth) for v in values)


# methods that keep every value of their receiver (a lower bound holds through them)
SAME_VALUES = frozenset({
    "permute", "reshape", "view", "contiguous", "float", "double", "half", "to", "clone", "squeeze",
    "unsqueeze", "flatten", "transpose", "expand", "detach", "type_as", "flip", "roll",
})


def lower_bound(facts, expr, _depth: int = 0) -> Optional[float]:
    """A number that every element of `expr` is at least, when its construction says so
    (None: unknown): `x.clamp(1e-12, 1)` is >= 1e-12, and so is what is built from it by
    positive scaling, sums, powers of non-negative values, `where` of two bounded
    branches, reshaping, and a product with a constant vector of non-negative weights
    (`x @ torch.tensor([0.2126, 0.7152, 0.0722])`: at least the bound times their sum)."""
    if _depth > 12:
        return None
    low = lambda e: lower_bound(facts, e, _depth + 1)  # noqa: E731
    if is_number(expr):
        return number_value(expr)
    if isinstance(expr, ast.Name):
        values = assigned_values(facts, expr)
        bounds = [low(v) for v in values] if values else [None]
        return None if any(b is None for b in bounds) else min(bounds)
    if isinstance(expr, ast.Subscript):
        return low(expr.value)  # an element or a slice of a bounded tensor
    if isinstance(expr, ast.BinOp):
        a, b = low(expr.left), None
        if isinstance(expr.op, ast.MatMult):
            weights = _constant_weights(facts, expr.right)
            return a * sum(weights) if a is not None and a >= 0 and weights else None
        b = low(expr.right)
        if a is None or b is None:
            return None
        if isinstance(expr.op, ast.Add):
            return a + b
        if isinstance(expr.op, ast.Mult) and a >= 0 and b >= 0:
            return a * b
        if isinstance(expr.op, ast.Div) and is_number(expr.right) and b > 0:
            return a / b
        if isinstance(expr.op, ast.Pow) and is_number(expr.right) and a >= 0 and b > 0:
            return a ** b
        return None
    if isinstance(expr, ast.Call):
        name = call_name(facts, expr)
        method = is_method(facts, expr)
        receiver = expr.func.value if method else (expr.args[0] if expr.args else None)
        if name in ("clamp", "clamp_min", "clip"):
            bound = next((k.value for k in expr.keywords if k.arg == "min"), None)
            rest = expr.args if method else expr.args[1:]
            if bound is None and rest and name != "clamp_max":
                bound = rest[0]
            floor = number_value(bound) if bound is not None else None
            inner = low(receiver) if receiver is not None else None
            if floor is None:
                return inner
            return floor if inner is None else max(floor, inner)
        if name in SAME_VALUES and method:
            return low(receiver)
        if name == "pow":
            inputs = op_inputs(facts, expr)
            if len(inputs) == 2 and is_number(inputs[1]):
                base, exponent = low(inputs[0]), number_value(inputs[1])
                return base ** exponent if base is not None and base >= 0 and exponent > 0 else None
        if name == "where":
            parts = where_parts(facts, expr)
            if parts is not None:
                bounds = [low(branch) for branch, _ in parts[1]]
                return None if any(b is None for b in bounds) else min(bounds)
    return None


def _constant_weights(facts, expr) -> Optional[list[float]]:
    """The numbers of a constant 1-D weight vector, all >= 0: `torch.tensor([...])`,
    also through `.to(...)`/`.float()`."""
    while isinstance(expr, ast.Call) and is_method(facts, expr) and call_name(facts, expr) in ("to", "float", "double", "half", "type_as"):
        expr = expr.func.value
    if not (isinstance(expr, ast.Call) and call_name(facts, expr) in ("tensor", "as_tensor") and expr.args):
        return None
    data = expr.args[0]
    if not isinstance(data, (ast.List, ast.Tuple)) or not data.elts or not all(is_number(e) for e in data.elts):
        return None
    weights = [number_value(e) for e in data.elts]
    return weights if all(w is not None and w >= 0 for w in weights) else None


def guarded(facts, arg, need) -> bool:
    """The op's input is put into its domain inside the branch (clamp, + eps, exp, ...)."""
    for node in ast.walk(arg):
        if isinstance(node, ast.Call):
            name = call_name(facts, node)
            if name in GUARDS or name in POSITIVE_GUARDS:
                return True
            if name in NONNEG_GUARDS and need == NONNEG:
                return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            for side in (node.left, node.right):
                value = number_value(side)
                text = chain_text(side) or ""
                if (value is not None and 0 < value < 1e-2) or "eps" in text.lower():
                    return True
                other = node.left if side is node.right else node.right
                if value is not None and value > 0 and (need == NONZERO or nonneg(facts, other)):
                    return True
    return need == NONNEG and isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Pow) and number_value(arg.right) == 2


def _threshold(cond) -> Optional[tuple[str, type, ast.AST]]:
    """(variable, comparison, constant) of `var OP c` (or `c OP var`, mirrored)."""
    if not isinstance(cond, ast.Compare) or len(cond.ops) != 1 or type(cond.ops[0]) not in FLIP:
        return None
    left, op, right = cond.left, type(cond.ops[0]), cond.comparators[0]
    if is_number(left) and chain_text(right):
        left, right, op = right, left, MIRROR[op]
    var = chain_text(left)
    if var is None or number_value(right) is None:
        return None
    return var, op, right


def _in_domain(value: Optional[float], need: str) -> bool:
    return value is not None and ((value > 0) if need == POSITIVE else (value >= 0))


def safe_when_unselected(facts, cond, arg, need, when_true) -> bool:
    """With `cond` = `var OP c` and `arg` arithmetic in `var`: the op is in its domain on
    the whole side where the branch is *not* selected (no NaN to leak)."""
    found = _threshold(cond)
    if found is None:
        return False
    var, op, constant = found
    bound = number_value(constant)
    if when_true:
        op = FLIP[op]  # the side where this branch is not selected
    direction = 1.0 if op in (ast.Gt, ast.GtE) else -1.0
    probes = [bound, bound + direction * max(abs(bound), 1.0), bound + direction * 1e6]
    if nonneg_name(facts, var, cond):
        probes = sorted({max(p, 0.0) for p in probes})
    floor = _lower_bound_of(facts, var, cond)
    if floor is not None:
        probes = sorted({max(p, floor) for p in probes})  # `u = x.clamp(1e-12, 1)`: no value below
    values = [evaluate(arg, var, probe, others=True) for probe in probes]
    if any(v is None for v in values):
        return False
    known = [v for v in values if v is not OTHER]
    if len(known) < len(values):
        # the input also holds other variables, which the code does not bound:
        # `inter / (area1 + area2 - inter)` where `inter > 0` is the areas' sum
        # there. Reported only where a value is out of the domain whatever they hold
        # (`1 / (d * w)` at `d == 0`), as a condition on two variables is not
        return all(v != 0 if need == NONZERO else _in_domain(v, need) for v in known)
    if need == NONZERO:
        return all(v > 0 for v in values) or all(v < 0 for v in values)
    return all(_in_domain(v, need) for v in values)


def _lower_bound_of(facts, var: str, near) -> Optional[float]:
    """lower_bound of the local name `var` where the condition `near` reads it."""
    if "." in var:
        return None
    use = next((n for n in ast.walk(near) if isinstance(n, ast.Name) and n.id == var), None)
    return lower_bound(facts, use) if use is not None else None


def clamp_fix(facts, cond, arg, need, when_true) -> Optional[tuple[list, str]]:
    """(variable nodes to clamp, ".clamp(min=c)") when clamping the variable to the
    threshold on the branch's own side puts the op into its domain there."""
    found = _threshold(cond)
    if found is None or need == NONZERO:
        return None  # clamping a denominator to a bound of either sign is not generally right
    var, op, constant = found
    bound = number_value(constant)
    if not when_true:
        op = FLIP[op]
    side = "min" if op in (ast.Gt, ast.GtE) else "max"
    occurrences = [n for n in ast.walk(arg) if isinstance(n, (ast.Name, ast.Attribute)) and chain_text(n) == var]
    occurrences = [n for n in occurrences if not any(isinstance(a, ast.Attribute) and a.value is n for a in ast.walk(arg))]
    if not occurrences:
        return None
    # the op must be safe on the whole clamped side, not only at the bound
    probe = bound + (1.0 if side == "min" else -1.0) * max(abs(bound), 1.0)
    if not (_in_domain(evaluate(arg, var, bound), need) and _in_domain(evaluate(arg, var, probe), need)):
        return None
    return occurrences, f".clamp({side}={facts.text(constant)})"


# what `evaluate(..., others=True)` gives for a part that reads other variables only
OTHER = "other variables"


def evaluate(expr, var, value, others: bool = False) -> Optional[float | str]:
    """`expr` with `var` := value, when it is arithmetic on `var` and numbers only. With
    `others`, a part that does not read `var` but reads other names (`area1[:, None]`,
    `self.eps`, `w.sum()`) is OTHER, and so is arithmetic on it, but for a product with a
    known 0; None still where `var` is read by anything but arithmetic."""

    def ev(node):
        if isinstance(node, (ast.Name, ast.Attribute)) and chain_text(node) == var:
            return value
        if is_number(node):
            return number_value(node)
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            if a is None or b is None:
                return None
            if a is OTHER or b is OTHER:
                if isinstance(node.op, ast.Mult) and (a == 0 or b == 0):
                    return 0.0
                return OTHER if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)) else None
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b, ast.Div: lambda: a / b if b else None}
            fn = ops.get(type(node.op))
            return fn() if fn else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            a = ev(node.operand)
            return a if a is None or a is OTHER else -a
        if others and not any(isinstance(n, (ast.Name, ast.Attribute)) and chain_text(n) == var for n in ast.walk(node)):
            return OTHER
        return None

    try:
        return ev(expr)
    except (ArithmeticError, TypeError):
        return None
