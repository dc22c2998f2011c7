from __future__ import annotations

import ast
from textwrap import dedent
from typing import Optional

from ..analysis.precision import CONVERT_METHODS, LOW, SHORT, precision_for
from ..analysis.region_queries import ELEMENTWISE, call_name, is_number, region_nodes, region_sets_config, runs_inductor, stmt_text
from ..analysis.facts import RegionsFact
from ..analysis.compiled_values import CompiledValuesFact
from ..analysis.precision import PrecisionFact
from .base import Case, Rule

ORDER_OPS = (ast.Gt, ast.Lt, ast.GtE, ast.LtE)
COMPARE_METHODS = frozenset({"gt", "lt", "ge", "le", "greater", "less", "greater_equal", "less_equal"})
CONVERSIONS = frozenset({"half", "bfloat16", "to", "type"})


class LowPrecisionThreshold(Rule):
    """
    ## What it does
    Finds a threshold (`>`, `<`, `>=`, `<=`, `.gt()`/`.lt()`/`.ge()`/`.le()`,
    `torch.gt(...)`, the condition of `torch.where`) applied to an fp16/bf16 value that
    is *computed* in a `torch.compile`d region: an arithmetic expression such as
    `0.299*r + 0.587*g + 0.114*b`, inline or through a local name. Comparing a value
    that is not computed there (a parameter, a conv output) is not reported: it has
    the same bits compiled and eager. `.float()` applied to the computed value after
    the fact does not help and is still reported (see below).

    ## Why is this bad?
    Eager rounds the computed value to fp16/bf16 before comparing; Inductor fuses the
    arithmetic with the compare and compares the unrounded fp32 intermediate
    (pytorch#183761). Values within half an ULP of the threshold land on the other
    side: a luma key `where(luma > 0.6, ...)` gave pixel errors of 0.885 (fp16) and
    0.937 (bf16) on 0.1-0.4% of pixels. Converting afterwards (`luma.float() > 0.6`)
    does not restore eager's result: Inductor drops that rounding as well (measured:
    317 of 1M pixels still differ in fp16, 2319 in bf16).

    ## Example
    ```python
    @torch.compile
    def luma_key(img: torch.HalfTensor, fg, bg):
        luma = 0.299 * img[:, 0] + 0.587 * img[:, 1] + 0.114 * img[:, 2]
        return torch.where(luma > 0.6, fg, bg)
    ```

    ## Use instead
    Compute the thresholded value from fp32 inputs:
    ```python
    @torch.compile
    def luma_key(img: torch.HalfTensor, fg, bg):
        luma = 0.299 * img[:, 0].float() + 0.587 * img[:, 1].float() + 0.114 * img[:, 2].float()
        return torch.where(luma > 0.6, fg, bg)
    ```
    Then eager and compiled compute the same fp32 value (fp32 arithmetic is
    bit-identical) and make the same decision. `torch._inductor.config.emulate_precision_casts = True`
    also removes the difference, at some speed cost.

    ## Fix safety
    Unsafe: the fix adds `.float()` to the low-precision inputs of the computation the
    compare reads (where that computation starts from values that are already
    rounded the same way compiled and eager: inputs of the compiled function,
    subscripts of them, conv/matmul outputs). Eager results change: the value is
    now compared unrounded, so pixels near the threshold may flip, and the computed
    name becomes fp32 wherever else it is used (a returned value changes dtype). No
    fix is offered when the inputs are themselves computed or converted (`.half()`)
    inside the region, since Inductor would skip those roundings too.

    ## References
    - measured on torch 2.13 CPU: luma key, pixel errors of 0.885 (fp16) and 0.937 (bf16)
      on 0.1-0.4% of pixels. `tests/test_verify_hazards.py` runs `compile-lint verify` on `fixtures/verify/` and reproduces it (fp16_luma_key.py)
    - pytorch#183761 (Inductor keeps fp32 intermediates by design)
    - `torch._inductor.config.emulate_precision_casts`
    """

    code = "CL302"
    name = "low-precision-threshold"
    summary = "Threshold on a computed fp16/bf16 value in a compiled region flips pixels vs eager"
    fix_safety = "unsafe"
    codemod = "codemods.compare_in_fp32:CompareInFp32"
    requires = ()
    needs = (RegionsFact, CompiledValuesFact, PrecisionFact,)  # fires only inside compiled regions

    valid = [
        Case(
            """
            import torch

            @torch.compile
            def luma_key(img: torch.HalfTensor, fg, bg):
                return torch.where(img[:, 0] > 0.6, fg, bg)
            """,
            note="compares an input: same bits compiled and eager",
        ),
        Case(
            """
            import torch

            @torch.compile
            def luma_key(img: torch.FloatTensor, fg, bg):
                luma = 0.299 * img[:, 0] + 0.587 * img[:, 1] + 0.114 * img[:, 2]
                return torch.where(luma > 0.6, fg, bg)
            """,
            note="fp32",
        ),
        Case(
            """
            import torch

            @torch.compile
            def luma_key(img: torch.HalfTensor, fg, bg):
                luma = 0.299 * img[:, 0].float() + 0.587 * img[:, 1].float() + 0.114 * img[:, 2].float()
                return torch.where(luma > 0.6, fg, bg)
            """,
            note="computed from fp32 inputs (the fix applied)",
        ),
        Case(
            """
            import torch

            def luma_key(img, fg, bg):
                luma = 0.299 * img[:, 0] + 0.587 * img[:, 1] + 0.114 * img[:, 2]
                return torch.where(luma > 0.6, fg, bg)

            out = luma_key(frame.half(), a, b)
            """,
            note="not compiled",
        ),
        Case(
            """
            import torch
            from torch._inductor import config
            config.emulate_precision_casts = True

            @torch.compile
            def luma_key(img: torch.HalfTensor, fg, bg):
                luma = 0.299 * img[:, 0] + 0.587 * img[:, 1] + 0.114 * img[:, 2]
                return torch.where(luma > 0.6, fg, bg)
            """,
            note="emulate_precision_casts",
        ),
        Case(
            """
            import torch

            @torch.compile
            def mask(x, n: int):
                steps = n * 2 + 1
                return x[: steps] if steps > 4 else x
            """,
            note="Python ints, not tensors",
        ),
    ]
    invalid = [
        Case(
            files={
                "train.py": dedent("""
                    import torch
                    from ops import luma_key

                    fast = torch.compile(luma_key)
                    out = fast(frame.half(), fg, bg)
                """),
            },
            path="ops.py",
            code="""
            import torch

            def luma_key(img, fg, bg):
                luma = 0.2126 * img[:, 0] + 0.7152 * img[:, 1] + 0.0722 * img[:, 2]
                return torch.where(luma.lt(0.5), bg, fg)
            """,
            at=[(6, 24)],
            fixed="""
            import torch

            def luma_key(img, fg, bg):
                luma = 0.2126 * img[:, 0].float() + 0.7152 * img[:, 1].float() + 0.0722 * img[:, 2].float()
                return torch.where(luma.lt(0.5), bg, fg)
            """,
            note="cross-file: compiled and called with fp16 in train.py",
        ),
        Case(
            """
            import torch

            @torch.compile
            def luma_key(img: torch.HalfTensor, fg, bg):
                luma = 0.299 * img[:, 0] + 0.587 * img[:, 1] + 0.114 * img[:, 2]
                return torch.where(luma > 0.6, fg, bg)
            """,
            at=[(7, 24)],
            fixed="""
            import torch

            @torch.compile
            def luma_key(img: torch.HalfTensor, fg, bg):
                luma = 0.299 * img[:, 0].float() + 0.587 * img[:, 1].float() + 0.114 * img[:, 2].float()
                return torch.where(luma > 0.6, fg, bg)
            """,
        ),
        Case(
            """
            import torch

            @torch.compile
            def key(a, b):
                return ((a - b).abs().sum(1) * 0.5).gt(0.1)

            m = key(x.bfloat16(), y.bfloat16())
            """,
            fixed="""
            import torch

            @torch.compile
            def key(a, b):
                return ((a.float() - b.float()).abs().sum(1) * 0.5).gt(0.1)

            m = key(x.bfloat16(), y.bfloat16())
            """,
            note="method spelling, inputs from the call site",
            at=[(6, 12)],
        ),
        Case(
            """
            import torch

            @torch.compile
            def key(img):
                img = img.half()
                luma = img.mean(1) * 1.2
                return luma.float() > 0.6
            """,
            at=[(8, 12)],
            note="converted inside the region, compared after .float(): no fix",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Matte(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Conv2d(16, 1, 3, padding=1)

                def forward(self, feats):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logits = self.head(feats)
                        return torch.where(torch.sigmoid(logits * 2) >= 0.5, 1.0, 0.0)

            matte = torch.compile(Matte())
            """,
            fixed="""
            import torch
            import torch.nn as nn

            class Matte(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Conv2d(16, 1, 3, padding=1)

                def forward(self, feats):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logits = self.head(feats)
                        return torch.where(torch.sigmoid(logits.float() * 2) >= 0.5, 1.0, 0.0)

            matte = torch.compile(Matte())
            """,
            note="a conv output under autocast",
            at=[(13, 32)],
        ),
    ]

    def check(self, facts):
        precision = None
        skip: dict[int, bool] = {}
        for node, region in region_nodes(facts, (ast.Compare, ast.Call)):
            operands = self._operands(facts, node)
            if not operands:
                continue
            key = id(region)
            if key not in skip:
                skip[key] = not runs_inductor(facts, region) or region_sets_config(facts, region, "emulate_precision_casts", True)
            if skip[key]:
                continue
            precision = precision or precision_for(facts)
            for operand in operands:
                computed = self._computed(facts, precision, operand)
                if computed is None:
                    continue
                expr, after = computed
                dtype = precision.dtype(expr)
                leaves = self._leaves(facts, precision, expr, region)
                message = (
                    f"`{stmt_text(facts, node, 40)}` thresholds a value computed in {SHORT[dtype]}: compiled code "
                    "flips pixels near the threshold"
                )
                if after:
                    message += " (`.float()` after computing it does not help)"
                if leaves:
                    yield self.finding(
                        facts, node, message,
                        fix="convert the inputs of the computation with `.float()`", unsafe=True,
                        data={"wrap": [self._range(facts, leaf) for leaf in leaves]}, region=region,
                    )
                else:
                    yield self.finding(facts, node, message, region=region)
                break

    @staticmethod
    def _range(facts, node):
        start, end = facts.source.node_range(node)
        return [start.row, start.column, end.row, end.column]

    @staticmethod
    def _operands(facts, node) -> list:
        if isinstance(node, ast.Compare):
            if not all(isinstance(op, ORDER_OPS) for op in node.ops):
                return []
            return [node.left] + list(node.comparators)
        name = call_name(facts, node)
        if name not in COMPARE_METHODS:
            return []
        dotted = facts.resolve(node.func) or ""
        if dotted.startswith("torch."):
            return list(node.args[:2])
        if isinstance(node.func, ast.Attribute):
            return [node.func.value] + list(node.args[:1])
        return []

    def _computed(self, facts, precision, operand) -> Optional[tuple[ast.AST, bool]]:
        """(the low-precision computation, converted-after) behind a compared operand."""
        after = False
        expr = operand
        for _ in range(4):
            if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in ("float", "double", "to") and precision.dtype(expr) not in LOW:
                expr, after = expr.func.value, True
                continue
            if isinstance(expr, ast.Name):
                found = precision.binding(expr)
                if found is None or not isinstance(found[0], ast.AST) or facts.enclosing_function(found[1]) is not facts.enclosing_function(operand):
                    return None
                expr = found[0]
                continue
            break
        if precision.dtype(expr) not in LOW or not self._is_computation(facts, expr):
            return None
        return expr, after

    @staticmethod
    def _is_computation(facts, expr) -> bool:
        if isinstance(expr, ast.BinOp):
            return not is_number(expr)
        if isinstance(expr, ast.UnaryOp):
            return isinstance(expr.op, ast.USub)
        if isinstance(expr, ast.Call):
            name = call_name(facts, expr)
            return name in ELEMENTWISE or name in ("sum", "mean", "amax", "amin", "norm")
        return False

    def _leaves(self, facts, precision, expr, region) -> list:
        """Low-precision inputs of the computation to convert, or [] when a safe fix is not known."""
        leaves: list = []
        ok = [True]
        entry = region.via is None
        func = facts.enclosing_function(expr)

        def visit(node):
            if isinstance(node, (ast.Constant,)) or is_number(node):
                return
            if self._is_computation(facts, node):
                if isinstance(node, ast.BinOp):
                    visit(node.left)
                    visit(node.right)
                elif isinstance(node, ast.UnaryOp):
                    visit(node.operand)
                else:
                    dotted = facts.resolve(node.func) or ""
                    if isinstance(node.func, ast.Attribute) and not dotted.startswith("torch."):
                        visit(node.func.value)
                        for arg in node.args:
                            if precision.dtype(arg) in LOW:
                                visit(arg)
                    else:
                        for arg in node.args:
                            visit(arg)
                return
            dtype = precision.dtype(node)
            if dtype not in LOW:
                return
            if not self._materialized(facts, precision, node, func, entry):
                ok[0] = False
                return
            leaves.append(node)

        visit(expr)
        return leaves if ok[0] else []

    def _materialized(self, facts, precision, node, func, entry) -> bool:
        """A value with the same bits compiled and eager: an input of the compiled
        function (or a view of one), or the output of a conv/matmul-like op."""
        base = node
        while isinstance(base, (ast.Subscript, ast.Attribute)) and not (isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "self"):
            base = base.value
        if isinstance(base, ast.Name):
            found = precision.binding(base)
            if found is None:
                params = {a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs} if func is not None and not isinstance(func, ast.Lambda) else set()
                return entry and base.id in params
            value = found[0]
            if value is base or not isinstance(value, ast.AST):
                return False
            return self._materialized(facts, precision, value, func, entry) if not self._is_computation(facts, value) else False
        if isinstance(base, ast.Call):
            f = base.func
            if isinstance(f, ast.Attribute) and f.attr in CONVERSIONS | set(CONVERT_METHODS):
                return False
            return not self._is_computation(facts, base)
        return False
