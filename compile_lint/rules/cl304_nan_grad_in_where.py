from __future__ import annotations

import ast
from textwrap import dedent
from typing import Optional

from ..analysis.compiled_values import chain_text
from ..analysis.facts import RegionsFact
from ..analysis.gradients import GradientFacts, under_no_grad
from ..analysis.region_queries import is_number, number_value, stmt_text
from .base import Case, Rule

POSITIVE = "positive"  # the op needs an input > 0 (a finite gradient at 0 is not enough)
NONNEG = "non-negative"
NONZERO = "non-zero"  # a denominator
LOG_FUNCS = frozenset({"log", "log2", "log10"})
POSITIVE_FUNCS = frozenset({"sqrt", "rsqrt", "reciprocal"}) | LOG_FUNCS
GUARDS = frozenset({"clamp", "clamp_min", "clamp_max", "clip", "maximum", "fmax", "where", "nan_to_num"})
NONNEG_GUARDS = frozenset({"relu", "abs", "square", "relu6"})
POSITIVE_GUARDS = frozenset({"exp", "sigmoid", "softplus", "exp2"})
FLIP = {ast.Gt: ast.LtE, ast.GtE: ast.Lt, ast.Lt: ast.GtE, ast.LtE: ast.Gt}
MIRROR = {ast.Gt: ast.Lt, ast.GtE: ast.LtE, ast.Lt: ast.Gt, ast.LtE: ast.GtE}


def _name(facts, call: ast.Call) -> Optional[str]:
    dotted = facts.resolve(call.func) or ""
    if dotted.startswith("torch."):
        return dotted.rsplit(".", 1)[-1]
    if isinstance(call.func, ast.Attribute) and not dotted:
        return call.func.attr
    return None


def _is_method(facts, call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and not (facts.resolve(call.func) or "").startswith("torch.")


def _variables(expr: ast.AST) -> set[str]:
    out = set()
    for node in ast.walk(expr):
        if isinstance(node, (ast.Name, ast.Attribute)):
            text = chain_text(node)
            if text and text != "self":
                out.add(text)
    return out


class NanGradInWhere(Rule):
    """
    ## What it does
    Finds `torch.where(cond, a, b)` (also `a.where(cond, b)`), in any code that can be
    differentiated (compiled or not: the NaN gradient happens in eager too), where a branch applies an op with a restricted domain to a variable that the
    condition compares with a constant (`u <= 0.04045`, `d != 0`): a fractional or
    negative power (`** 2.4`, `** (1/2.4)`, `.pow(...)`, `torch.pow`), `sqrt`, `rsqrt`,
    `log`, `reciprocal`, or a division by it, without first clamping the input into
    the op's domain (`clamp`/`clamp_min`/`clip`/`maximum`, a `+ eps`, an inner
    `where`, `exp`/`sigmoid`/`softplus`; `relu`/`abs` for powers above 1). A condition
    held in a local name (`m = u > t; torch.where(m, ...)`) is followed.

    Not reported: when the op's input, evaluated on the side where its branch is
    *not* selected, stays in the domain (`where(q < 50, 5000 / q, ...)`: the division
    only runs unselected for `q >= 50`; values known to be non-negative, such as
    `x ** 2` or `a*a + b*b`, are taken into account), when the input is a Python
    number, and when the condition compares two variables (nothing to tell the
    domain by); when no input of the op can carry a gradient (comparisons, counts of
    thresholded values such as `(pred > t).sum()`, `.long()`/`.int()`/`.bool()`,
    `.detach()`, `torch.arange`, sizes and Python numbers (parameters annotated `int` / `float` /
    `bool` included), and arithmetic on those
    only); and code lexically under `torch.no_grad()` / `torch.inference_mode()`. The
    NaN appears in gradients only; a function merely called under `no_grad` elsewhere is
    still reported, since the same function usually serves training.

    ## Why is this bad?
    `torch.where` computes both branches for every element. Where the condition picks
    the other branch, the unused one still runs on inputs outside its domain and gives
    NaN or inf; its gradient is multiplied by zero, and `0 * NaN` is NaN, so the NaN
    reaches the input's gradient and then the weights. The sRGB decode
    `where(u <= 0.04045, u / 12.92, ((u + 0.055) / 1.055) ** 2.4)` at `u = -0.1` gives a
    NaN gradient; with the input clamped, 0.0774. Forward values look fine, so this
    only shows up as NaN losses in training.

    ## Example
    ```python
    @torch.compile
    def srgb_to_linear(u):
        return torch.where(u <= 0.04045, u / 12.92, ((u + 0.055) / 1.055) ** 2.4)
    ```

    ## Use instead
    Clamp inside the branch to the threshold it is selected on, as kornia's `rgb.py`
    does:
    ```python
    @torch.compile
    def srgb_to_linear(u):
        return torch.where(u <= 0.04045, u / 12.92, ((u.clamp(min=0.04045) + 0.055) / 1.055) ** 2.4)
    ```
    For a division, `x / d.clamp(min=eps)` or the double-where
    `x / torch.where(cond, d, 1)`.

    ## Fix safety
    Unsafe. Offered when the condition compares the variable with a constant
    (`u <= 0.04045`) and the op is defined at that constant: the fix clamps the
    variable inside the branch to the constant (`min=` or `max=`, the side the branch
    is selected on). Elements where the branch is selected are unchanged, except
    exactly at the threshold when the comparison is strict on the other side. It is
    unsafe because a NaN that used to appear in gradients no longer does, which can
    hide a different bug, and because the branch's code changes.

    ## References
    - measured on torch 2.13 CPU, eager and compiled alike: the sRGB decode above at
      `u = -0.1` gives a NaN gradient, clamped 0.0774; `fixtures/rules/CL304/` and
      `compile-lint verify` on `fixtures/verify/` reproduce it
    - kornia `color/rgb.py` clamps before `pow` (the correct spelling)
    - PyTorch FAQ on NaN gradients through `torch.where` (the double-where trick)
    """

    code = "CL304"
    name = "nan-grad-in-where"
    summary = "An unselected `torch.where` branch outside its op's domain turns gradients into NaN"
    fix_safety = "unsafe"
    codemod = "codemods.clamp_branch_input:ClampBranchInput"
    requires = (b"where",)
    needs = (RegionsFact,)  # fires wherever the code can be differentiated; names the region when there is one

    valid = [
        Case(
            """
            import torch

            def normalized_ramp(width: int, scale: float) -> torch.Tensor:
                xs = torch.arange(width, dtype=torch.float32)
                size = torch.scalar_tensor(width)
                xs = torch.where(size > 1, (xs / (width - 1) - 0.5) * 2, xs * 0.0)
                return torch.where(size > 1, xs * scale / (size - 1), xs)
            """,
            note="a grid of sizes: parameters annotated int/float and tensors built from them carry no gradient",
        ),
        Case(
            """
            import torch

            @torch.compile
            def srgb_to_linear(u):
                return torch.where(u <= 0.04045, u / 12.92, ((u.clamp(min=0.04045) + 0.055) / 1.055) ** 2.4)
            """,
            note="clamped before pow (kornia)",
        ),
        Case(
            """
            import torch

            @torch.compile
            def linear_to_srgb(x):
                return torch.where(x > 0.0031308, 1.055 * torch.pow(x.clamp(min=0.0031308), 1 / 2.4) - 0.055, 12.92 * x)
            """,
            note="kornia linear_rgb_to_rgb",
        ),
        Case(
            """
            import torch

            def srgb_to_linear(u):
                with torch.no_grad():
                    return torch.where(u <= 0.04045, u / 12.92, ((u + 0.055) / 1.055) ** 2.4)
            """,
            note="under torch.no_grad(): no gradient is recorded",
        ),
        Case(
            """
            import torch

            def f1_score(pred, gt, t=0.5):
                tp = ((pred > t) & (gt > t)).sum()
                fp = ((pred > t) & (gt <= t)).sum().float()
                precision = torch.where(tp + fp > 0, tp / (tp + fp), torch.zeros_like(tp))
                n = (gt > t).long().sum()
                recall = torch.where(n > 0, tp / n, 0.0)
                return precision, recall
            """,
            note="counts of thresholded values carry no gradient",
        ),
        Case(
            """
            import torch

            @torch.compile
            def ratio(x, valid):
                count = valid.detach().sum()
                idx = torch.arange(x.shape[0])
                return torch.where(count > 0, x.sum() .detach() / count, 0.0), torch.where(idx > 0, 1.0 / idx, 0.0)
            """,
            note="detached and integer inputs",
        ),
        Case(
            """
            import torch

            @torch.compile
            def safe_div(x, d, eps=1e-6):
                return torch.where(d > 0, x / (d + eps), torch.zeros_like(x)), torch.where(d > 0, x ** 2, x)
            """,
            note="eps in the denominator; integer power",
        ),
        Case(
            """
            import torch

            @torch.compile
            def masked(x, mask, gamma):
                return torch.where(mask, x ** 2.2, x)
            """,
            note="the condition does not test the pow's input",
        ),
        Case(
            """
            import torch

            @torch.compile
            def f(u):
                return torch.where(u > 0, torch.sqrt(torch.where(u > 0, u, 1.0)), 0.0)
            """,
            note="double where",
        ),
    ]
    invalid = [
        Case(
            """
            import torch

            def srgb_to_linear(u):
                return torch.where(u <= 0.04045, u / 12.92, ((u + 0.055) / 1.055) ** 2.4)
            """,
            fixed="""
            import torch

            def srgb_to_linear(u):
                return torch.where(u <= 0.04045, u / 12.92, ((u.clamp(min=0.04045) + 0.055) / 1.055) ** 2.4)
            """,
            at=[(5, 49)], note="not compiled: the NaN gradient happens in eager too",
        ),
        Case(
            """
            import torch

            def soft_recall(prob, gt):
                tp = (prob * gt).sum()
                n = gt.sum()
                return torch.where(n > 0, tp / n, 0.0)
            """,
            at=[(7, 31)], note="a soft count of probabilities carries a gradient",
        ),
        Case(
            files={
                "train.py": dedent("""
                    import torch
                    from color import srgb_to_linear

                    decode = torch.compile(srgb_to_linear)
                """),
            },
            path="color.py",
            code="""
            import torch

            def srgb_to_linear(img):
                return torch.where(img > 0.04045, torch.pow((img + 0.055) / 1.055, 2.4), img / 12.92)
            """,
            at=[(5, 39)],
            fixed="""
            import torch

            def srgb_to_linear(img):
                return torch.where(img > 0.04045, torch.pow((img.clamp(min=0.04045) + 0.055) / 1.055, 2.4), img / 12.92)
            """,
            note="cross-file (diffusers shap_e style), torch.pow spelling",
        ),
        Case(
            """
            import torch

            @torch.compile
            def srgb_to_linear(u):
                return torch.where(u <= 0.04045, u / 12.92, ((u + 0.055) / 1.055) ** 2.4)
            """,
            at=[(6, 49)],
            fixed="""
            import torch

            @torch.compile
            def srgb_to_linear(u):
                return torch.where(u <= 0.04045, u / 12.92, ((u.clamp(min=0.04045) + 0.055) / 1.055) ** 2.4)
            """,
        ),
        Case(
            """
            import torch

            @torch.compile
            def linear_to_srgb(x):
                low = x <= 0.0031308
                return x.mul(12.92).where(low, 1.055 * x.pow(1 / 2.4) - 0.055)
            """,
            fixed="""
            import torch

            @torch.compile
            def linear_to_srgb(x):
                low = x <= 0.0031308
                return x.mul(12.92).where(low, 1.055 * x.clamp(min=0.0031308).pow(1 / 2.4) - 0.055)
            """,
            note="method spelling, condition in a name",
            at=[(7, 44)],
        ),
        Case(
            """
            import torch

            @torch.compile
            def inverse_depth(depth, rgb):
                return torch.where(depth > 0, rgb / depth, torch.zeros_like(rgb))
            """,
            at=[(6, 35)],
            note="division: no fix (the threshold is the singular point)",
        ),
        Case(
            """
            import torch

            def log_luma(y):
                return torch.where(y > 1e-3, torch.log(y), y * 1000 - 6.9)

            @torch.compile
            def tonemap(y):
                return log_luma(y)
            """,
            fixed="""
            import torch

            def log_luma(y):
                return torch.where(y > 1e-3, torch.log(y.clamp(min=1e-3)), y * 1000 - 6.9)

            @torch.compile
            def tonemap(y):
                return log_luma(y)
            """,
            note="in a helper the region calls",
            at=[(5, 34)],
        ),
    ]

    def check(self, facts):
        self.facts = facts
        grads = GradientFacts(facts)
        for call in facts.nodes(ast.Call):
            if _name(facts, call) != "where":
                continue
            if under_no_grad(facts, call):
                continue  # no gradient is recorded here
            region = facts.in_region(call, "compiled") if facts.enclosing_function(call) is not None else None
            if _is_method(facts, call):
                if len(call.args) < 2:
                    continue
                cond, branches = call.args[0], [(call.func.value, True), (call.args[1], False)]
            else:
                if len(call.args) < 3:
                    continue
                cond, branches = call.args[0], [(call.args[1], True), (call.args[2], False)]
            cond = self._follow(facts, cond)
            tested = self._tested(facts, cond)
            if not tested:
                continue
            for branch, when_true in branches:
                done: list = []
                for op, need, arg in self._risky(facts, branch):
                    if any(any(n is op for n in ast.walk(d)) for d in done):
                        continue  # nested in an op already reported for this branch
                    shared = _variables(arg) & tested
                    if not shared or self._guarded(facts, arg, need) or self._number(facts, arg):
                        continue
                    if self._safe_when_unselected(cond, arg, need, when_true):
                        continue
                    if self._carries_no_gradient(grads, op, arg):
                        continue  # counts of thresholded values, integer tensors, .detach(): no gradient to poison
                    done.append(op)
                    yield self._report(facts, call, cond, op, need, arg, when_true, shared, region)

    @staticmethod
    def _carries_no_gradient(grads, op, arg) -> bool:
        """No input of the risky op can carry a gradient (for a division: neither side)."""
        if isinstance(op, ast.BinOp) and isinstance(op.op, (ast.Div, ast.FloorDiv)):
            return grads.no_grad(op.left) and grads.no_grad(op.right)
        if isinstance(op, ast.Call):
            inputs = ([op.func.value] if isinstance(op.func, ast.Attribute) and not (grads.facts.resolve(op.func) or "").startswith("torch.") else []) + list(op.args)
            return all(grads.no_grad(i) for i in inputs)
        return grads.no_grad(arg)

    def _tested(self, facts, cond) -> set[str]:
        """Variables the condition compares with a constant (`u <= 0.04045`, `d != 0`)."""
        out: set[str] = set()
        for node in ast.walk(cond):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left] + list(node.comparators)
            if any(self._number(facts, side) for side in sides):
                for side in sides:
                    if not self._number(facts, side):
                        out |= _variables(side)
        return out

    @staticmethod
    def _number(facts, expr) -> bool:
        """A Python number: a literal, or a name bound only to one in this file."""
        if is_number(expr):
            return True
        if isinstance(expr, ast.Name):
            values = [n.value for n in facts.nodes(ast.Assign) if any(isinstance(t, ast.Name) and t.id == expr.id for t in n.targets)]
            func = facts.enclosing_function(expr)
            if func is not None and not isinstance(func, ast.Lambda):
                if expr.id in {a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs}:
                    return False
            return bool(values) and all(is_number(v) for v in values)
        return False

    def _safe_when_unselected(self, cond, arg, need, when_true) -> bool:
        """With `cond` = `var OP c` and `arg` arithmetic in `var`: the op is in its domain on
        the whole side where the branch is *not* selected (no NaN to leak)."""
        if not isinstance(cond, ast.Compare) or len(cond.ops) != 1 or type(cond.ops[0]) not in FLIP:
            return False
        left, op, right = cond.left, type(cond.ops[0]), cond.comparators[0]
        if is_number(left) and chain_text(right):
            left, right, op = right, left, MIRROR[op]
        var, bound = chain_text(left), number_value(right)
        if var is None or bound is None:
            return False
        if when_true:
            op = FLIP[op]  # the side where this branch is not selected
        direction = 1.0 if op in (ast.Gt, ast.GtE) else -1.0
        probes = [bound, bound + direction * max(abs(bound), 1.0), bound + direction * 1e6]
        if self._nonneg_name(var, cond):
            probes = sorted({max(p, 0.0) for p in probes})
        values = [self._evaluate(arg, var, probe) for probe in probes]
        if any(v is None for v in values):
            return False
        if need == NONZERO:
            return all(v > 0 for v in values) or all(v < 0 for v in values)
        return all((v > 0) if need == POSITIVE else (v >= 0) for v in values)

    def _nonneg_name(self, var: str, near) -> bool:
        """`var` is bound, in the function around `near`, to a value that cannot be negative."""
        facts = self.facts
        func = facts.enclosing_function(near)
        if func is None or "." in var:
            return False
        values = [n.value for n in ast.walk(func) if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == var for t in n.targets)]
        return bool(values) and all(self._nonneg(facts, v) for v in values)

    def _nonneg(self, facts, expr) -> bool:
        """An expression that cannot be negative: squares, sums of them, abs, exp, ..."""
        if is_number(expr):
            value = number_value(expr)
            return value is not None and value >= 0
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, ast.Pow):
                value = number_value(expr.right)
                return value is not None and value == int(value) and int(value) % 2 == 0
            if isinstance(expr.op, ast.Mult):
                return ast.dump(expr.left) == ast.dump(expr.right) or (self._nonneg(facts, expr.left) and self._nonneg(facts, expr.right))
            if isinstance(expr.op, (ast.Add, ast.Div)):
                return self._nonneg(facts, expr.left) and self._nonneg(facts, expr.right)
            return False
        if isinstance(expr, ast.Call):
            name = _name(facts, expr)
            if name in NONNEG_GUARDS or name in POSITIVE_GUARDS or name in ("sqrt", "norm", "numel"):
                return True
            if name in ("pow",) and len(expr.args) >= 1:
                value = number_value(expr.args[-1])
                return value is not None and value == int(value) and int(value) % 2 == 0
            if name in ("clamp", "clamp_min", "clip"):
                low = next((k.value for k in expr.keywords if k.arg == "min"), None)
                if low is None and expr.args:
                    low = expr.args[0] if _is_method(facts, expr) else (expr.args[1] if len(expr.args) > 1 else None)
                return low is not None and self._nonneg(facts, low)
            if name in ("sum", "mean") and _is_method(facts, expr):
                return self._nonneg(facts, expr.func.value)
        if isinstance(expr, ast.Name):
            return self._nonneg_name(expr.id, expr)
        return False

    @staticmethod
    def _follow(facts, cond):
        """A condition held in a local name: `m = u > t` ... `torch.where(m, ...)`."""
        if not isinstance(cond, ast.Name):
            return cond
        func = facts.enclosing_function(cond)
        if func is None:
            return cond
        best = None
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and node.lineno < cond.lineno and any(isinstance(t, ast.Name) and t.id == cond.id for t in node.targets):
                if best is None or node.lineno > best.lineno:
                    best = node
        return best.value if best is not None and isinstance(best.value, ast.Compare) else cond

    def _risky(self, facts, branch):
        """(op node, domain needed, input) for each restricted-domain op in a branch."""
        for node in ast.walk(branch):
            if isinstance(node, ast.BinOp):
                if isinstance(node.op, ast.Pow):
                    need = self._pow_need(node.right)
                    if need:
                        yield node, need, node.left
                elif isinstance(node.op, (ast.Div, ast.FloorDiv)) and not is_number(node.right):
                    yield node, NONZERO, node.right
            elif isinstance(node, ast.Call):
                name = _name(facts, node)
                method = _is_method(facts, node)
                args = ([node.func.value] if method else []) + list(node.args)
                if name in POSITIVE_FUNCS and args:
                    yield node, POSITIVE, args[0]
                elif name == "log1p" and args:
                    continue
                elif name in ("pow", "float_power") and len(args) >= 2:
                    need = self._pow_need(args[1])
                    if need:
                        yield node, need, args[0]
                elif name in ("div", "true_divide", "divide") and len(args) >= 2 and not is_number(args[1]):
                    yield node, NONZERO, args[1]

    @staticmethod
    def _pow_need(exponent) -> Optional[str]:
        value = number_value(exponent)
        if value is None:
            if isinstance(exponent, ast.BinOp) and isinstance(exponent.op, ast.Div):
                return POSITIVE  # 1 / gamma: fractional, maybe below 1
            return None
        if value == int(value) and value >= 0:
            return None
        return NONNEG if value > 1 else POSITIVE

    def _guarded(self, facts, arg, need) -> bool:
        for node in ast.walk(arg):
            if isinstance(node, ast.Call):
                name = _name(facts, node)
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
                    if value is not None and value > 0 and need == NONZERO or (value is not None and value > 0 and self._nonneg(facts, node.left if side is node.right else node.right)):
                        return True
        if need == NONNEG and isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Pow) and number_value(arg.right) == 2:
            return True
        return False

    def _report(self, facts, where, cond, op, need, arg, when_true, shared, region):
        fix = self._fix(facts, cond, arg, need, when_true)
        what = {
            POSITIVE: "needs an input > 0",
            NONNEG: "needs an input >= 0",
            NONZERO: "needs a non-zero denominator",
        }[need]
        message = (
            f"`{stmt_text(facts, op, 40)}` {what} but `torch.where` computes it on unselected elements too: "
            f"NaN gradient for `{sorted(shared)[0]}`"
        )
        if fix is None:
            return self.finding(facts, op, message, region=region)
        var_nodes, suffix = fix
        start_end = [self._range(facts, n) for n in var_nodes]
        return self.finding(
            facts, op, message,
            fix=f"clamp `{chain_text(var_nodes[0])}` inside the branch with `{suffix}`", unsafe=True,
            data={"wrap": start_end, "suffix": suffix}, region=region,
        )

    @staticmethod
    def _range(facts, node):
        start, end = facts.source.node_range(node)
        return [start.row, start.column, end.row, end.column]

    def _fix(self, facts, cond, arg, need, when_true):
        """(variable nodes to clamp, ".clamp(min=c)") when the threshold is a safe bound."""
        if not isinstance(cond, ast.Compare) or len(cond.ops) != 1:
            return None
        left, op, right = cond.left, type(cond.ops[0]), cond.comparators[0]
        if op not in FLIP:
            return None
        if is_number(left) and chain_text(right):
            left, right, op = right, left, MIRROR[op]
        var = chain_text(left)
        bound = number_value(right)
        if var is None or bound is None:
            return None
        if not when_true:
            op = FLIP[op]
        side = "min" if op in (ast.Gt, ast.GtE) else "max"
        occurrences = [n for n in ast.walk(arg) if isinstance(n, (ast.Name, ast.Attribute)) and chain_text(n) == var]
        occurrences = [n for n in occurrences if not any(isinstance(a, ast.Attribute) and a.value is n for a in ast.walk(arg))]
        if not occurrences:
            return None
        if need == NONZERO:
            return None  # clamping a denominator to a bound of either sign is not generally right
        value = self._evaluate(arg, var, bound)
        if value is None or (need == POSITIVE and not value > 0) or (need == NONNEG and not value >= 0):
            return None
        # the op must be safe on the whole clamped side, not only at the bound
        probe = bound + (1.0 if side == "min" else -1.0) * max(abs(bound), 1.0)
        other = self._evaluate(arg, var, probe)
        if other is None or (need == POSITIVE and not other > 0) or (need == NONNEG and not other >= 0):
            return None
        return occurrences, f".clamp({side}={facts.text(right)})"

    @staticmethod
    def _evaluate(expr, var, value) -> Optional[float]:
        """`expr` with `var` := value, when it is arithmetic on `var` and numbers only."""

        def ev(node):
            if isinstance(node, (ast.Name, ast.Attribute)) and chain_text(node) == var:
                return value
            if is_number(node):
                return number_value(node)
            if isinstance(node, ast.BinOp):
                a, b = ev(node.left), ev(node.right)
                if a is None or b is None:
                    return None
                ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b, ast.Div: lambda: a / b if b else None}
                fn = ops.get(type(node.op))
                return fn() if fn else None
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
                a = ev(node.operand)
                return -a if a is not None else None
            return None

        try:
            return ev(expr)
        except (ArithmeticError, TypeError):
            return None
