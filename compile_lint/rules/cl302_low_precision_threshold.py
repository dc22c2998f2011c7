from __future__ import annotations

import ast
from textwrap import dedent

from ..analysis.semantic.bindings import BindingsFact
from ..analysis.compiled.values import CompiledValuesFact
from ..analysis.semantic.facts import RegionsFact
from ..analysis.tensors.low_precision import (
    FUSED,
    inputs_to_convert,
    low_computation,
    region_rounding,
)
from ..analysis.tensors.precision import SHORT, PrecisionFact, precision_for
from ..analysis.reach.queries import (
    ClassAttrsFact,
    call_name,
    region_nodes,
    stmt_text,
)
from .base import Case, Rule

ORDER_OPS = (ast.Gt, ast.Lt, ast.GtE, ast.LtE)
COMPARE_METHODS = frozenset({"gt", "lt", "ge", "le", "greater", "less", "greater_equal", "less_equal"})


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

    Not reported: a comparison of a parameter that defaults to a number (`def
    drop_path(x, drop_prob=0.)`: `keep_prob = 1 - drop_prob` is a Python float even in a
    module run in fp16). Measured on the judged apps (`python bench/judged/run.py`):
    LivePortrait's timm-style drop_path in its fp16-compiled ConvNeXtV2 was CL302's one
    false finding there; the `(x - u) / torch.sqrt(s + self.eps)` normalization next to
    it (CL301) is true.

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
    needs = (RegionsFact, CompiledValuesFact, PrecisionFact, BindingsFact, ClassAttrsFact)  # fires only inside compiled regions

    valid = [
        Case(
            """
            import torch
            from torch import nn

            def drop_path(x, drop_prob=0., training=False):
                if drop_prob == 0. or not training:
                    return x
                keep_prob = 1 - drop_prob
                mask = x.new_empty(x.shape).bernoulli_(keep_prob)
                if keep_prob > 0.0:
                    mask.div_(keep_prob)
                return x * mask

            class DropPath(nn.Module):
                def __init__(self, p=0.1):
                    super().__init__()
                    self.p = p
                def forward(self, x):
                    return drop_path(x, self.p, self.training)

            model = torch.compile(DropPath().half())
            """,
            note="a parameter with a number default is a Python number, even in a module run in fp16",
        ),
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
            """
            import torch
            from torch import nn

            def soft_mask(x, level):
                t = level * 2
                return torch.where(t > 0.5, x, 0)

            class Gate(nn.Module):
                def forward(self, x):
                    return soft_mask(x, x.mean())

            model = torch.compile(Gate().half())
            """,
            at=[(7, 24)],
            note="a parameter without a default in a module run in fp16 holds what it is given",
        ),
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
        rounding: dict[int, str] = {}
        for node, region in region_nodes(facts, (ast.Compare, ast.Call)):
            operands = self._operands(facts, node)
            if not operands:
                continue
            key = id(region)
            if key not in rounding:
                rounding[key] = region_rounding(facts, region)
            if rounding[key] != FUSED:
                continue  # rounds like eager
            precision = precision or precision_for(facts)
            for operand in operands:
                computed = low_computation(facts, precision, operand)
                if computed is None:
                    continue
                expr, after = computed
                dtype = precision.dtype(expr)
                leaves = inputs_to_convert(facts, precision, expr, region)
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
