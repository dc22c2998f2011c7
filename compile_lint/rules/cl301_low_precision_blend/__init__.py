from __future__ import annotations

import ast
from textwrap import dedent

from ...analysis.semantic.bindings import BindingsFact
from .blends import blend_kind, low_precision_part
from ...analysis.compiled.values import CompiledValuesFact
from ...analysis.semantic.facts import RegionsFact
from ...analysis.tensors.low_precision import EAGER, EMULATED, region_rounding
from ...analysis.tensors.precision import SHORT, PrecisionFact, precision_for
from ...analysis.reach.queries import (
    ClassAttrsFact,
    region_nodes,
    stmt_text,
)
from ..base import Case, Rule


class LowPrecisionBlend(Rule):
    """
    ## What it does
    Finds blend, gamma and normalize arithmetic that runs in fp16/bf16 inside a
    `torch.compile`d region: screen (`1 - (1-a)*(1-b)`), alpha-over and mix
    (`a*alpha + b*(1-alpha)`, `fg + bg*(1-alpha)`, `a + (b-a)*t`, `torch.lerp`,
    `a.lerp(b, t)`), overlay / soft light (`torch.where(a < 0.5, 2*a*b, ...)`, also
    `x.where(...)`), gamma (`x ** (1/2.2)`, `x.pow(1/2.2)`, `torch.pow(x, 2.4)`) and
    normalization (`(x - mean) / std`, `(x - lo) / (hi - lo)`, `x / x.sum(...)`,
    `F.normalize`).

    Values count as fp16/bf16 when the analysis can tell (see
    `compile_lint/analysis/tensors/precision.py`): `.half()`, `.bfloat16()`, `.to(torch.float16)`,
    `dtype=` of factory calls, annotations, arguments at every call site, a module
    converted at its compile site (`torch.compile(model.half())`), a pipeline loaded
    with `torch_dtype=torch.float16`, and autocast. Under autocast only the ops of
    autocast's lists change dtype: a conv/linear/matmul output is fp16, but
    elementwise blend math on fp32 inputs stays fp32 (and on CUDA, `pow` runs in
    fp32), so those stay quiet. fp32 code and code of unknown dtype are never reported.

    ## Why is this bad?
    Eager PyTorch rounds every intermediate of `1 - (1-a)*(1-b)` to fp16; Inductor
    fuses the expression into one kernel and keeps the intermediates in fp32
    (intended: pytorch#183761). Compiled output then differs from eager by about one
    ULP on 10-67% of elements: fp16 up to 9.8e-4 (gamma 1.95e-3, normalize 4.9e-3),
    bf16 up to 7.8e-3 (normalize 0.039). The compiled result is the more accurate
    one, but tests comparing against eager references, golden images and
    checksums break. In fp32 the same blends are bit-identical, which is why they
    are not reported.

    ## Example
    ```python
    @torch.compile
    def screen(a, b):
        return 1 - (1 - a) * (1 - b)

    out = screen(fg.half(), bg.half())
    ```

    ## Use instead
    Blend in fp32 and cast once at the end:
    ```python
    @torch.compile
    def screen(a, b):
        a, b = a.float(), b.float()
        return (1 - (1 - a) * (1 - b)).half()
    ```
    or, when eager parity matters more than speed, set
    `torch._inductor.config.emulate_precision_casts = True` (all differences become 0,
    except `pow`).

    ## Fix safety
    No fix: whether fp32 math (more memory traffic) or eager's rounding is wanted is
    the author's decision.

    ## References
    - measured on torch 2.13 CPU: fp16 <= 9.8e-4, gamma 1.95e-3, normalize 4.9e-3; bf16 <=
      7.8e-3, normalize 0.039; `emulate_precision_casts` removes all but `pow`.
      `tests/test_verify_hazards.py` runs `compile-lint verify` on `fixtures/verify/` and reproduces it (fp16_screen.py: closer to fp64 than eager)
    - pytorch#183761 (Inductor keeps fp32 intermediates by design)
    - PyTorch docs, "Autocast Op Reference" (which ops autocast changes)
    """

    code = "CL301"
    name = "low-precision-blend"
    summary = "Blend/gamma/normalize math in fp16/bf16 in a compiled region differs from eager"
    requires = ()
    needs = (RegionsFact, CompiledValuesFact, PrecisionFact, BindingsFact, ClassAttrsFact)  # fires only inside compiled regions

    valid = [
        Case(
            """
            import torch

            @torch.compile
            def fade(a, b, t):
                base = torch.zeros(1, 3, 8, 8)
                return torch.lerp(base + a, b, t)

            out = fade(x.half(), y.half(), 0.5)
            """,
            note="a default-dtype (fp32) factory promotes the blend to fp32",
        ),
        Case(
            """
            import torch

            @torch.cuda.amp.autocast()
            @torch.compile
            def over(fg: torch.FloatTensor, bg: torch.FloatTensor, alpha):
                return fg * alpha + bg * (1 - alpha)
            """,
            note="autocast decorator, fp32 inputs: elementwise math stays fp32",
        ),
        Case(
            """
            import torch

            @torch.compile
            def screen(a, b):
                return 1 - (1 - a) * (1 - b)

            out = screen(fg.float(), bg.float())
            """,
            note="fp32 blends are bit-identical compiled vs eager",
        ),
        Case(
            """
            import torch

            @torch.compile
            def over(fg, bg, alpha):
                return fg * alpha + bg * (1 - alpha)
            """,
            note="dtype unknown: quiet",
        ),
        Case(
            """
            import torch

            def over(fg, bg, alpha):
                return fg * alpha + bg * (1 - alpha)

            out = over(fg.half(), bg.half(), 0.3)
            """,
            note="no compiled region",
        ),
        Case(
            """
            import torch

            @torch.compile
            def composite(fg, bg, alpha):
                with torch.autocast("cuda"):
                    return fg * alpha + bg * (1 - alpha)

            out = composite(torch.rand(1, 3, 64, 64), torch.rand(1, 3, 64, 64), 0.5)
            """,
            note="autocast does not cast elementwise math: fp32 inputs stay fp32",
        ),
        Case(
            """
            import torch

            @torch.compile
            def to_srgb(x):
                with torch.autocast("cuda"):
                    y = x @ x.transpose(-1, -2)
                    return y ** (1 / 2.2)
            """,
            note="on CUDA autocast runs pow in fp32",
        ),
        Case(
            """
            import torch

            @torch.compile
            def screen(a: torch.HalfTensor, b: torch.HalfTensor):
                a, b = a.float(), b.float()
                return (1 - (1 - a) * (1 - b)).half()
            """,
            note="converted to fp32 before the blend",
        ),
        Case(
            """
            import torch
            torch._inductor.config.emulate_precision_casts = True

            @torch.compile
            def screen(a, b):
                return 1 - (1 - a) * (1 - b)

            out = screen(fg.half(), bg.half())
            """,
            note="emulate_precision_casts makes compiled match eager",
        ),
        Case(
            """
            import torch

            def screen(a, b):
                return 1 - (1 - a) * (1 - b)

            fast = torch.compile(screen, backend="aot_eager")
            out = fast(fg.half(), bg.half())
            """,
            note="aot_eager runs eager kernels: no fusion",
        ),
        Case(
            """
            import torch

            @torch.compile
            def scale(x):
                y = x.half()
                return y * 2 + 1, y ** 2
            """,
            note="not a blend/gamma/normalize pattern; integer power",
        ),
    ]
    invalid = [
        Case(
            """
            import torch

            @torch.compile
            def grade(x, lut_a, lut_b, t):
                x = x.to(dtype=torch.bfloat16)
                y = x.pow(1 / 2.2)
                return lut_a.lerp(y, t), y.where(y > 0.5, x * 0.5 + 0.25)
            """,
            at=[(7, 9), (8, 30)],
            note="method spellings: .pow, .where (and lerp on a value of unknown dtype stays quiet)",
        ),
        Case(
            """
            import torch

            @torch.compile
            def screen(a, b):
                return 1 - (1 - a) * (1 - b)

            out = screen(fg.half(), bg.half())
            """,
            at=[(6, 12)],
            note="low precision from the arguments at the call site",
        ),
        Case(
            """
            import torch

            @torch.compile(mode="max-autotune")
            def overlay(a, b):
                a = a.to(torch.bfloat16)
                b = b.to(dtype=torch.bfloat16)
                return torch.where(a < 0.5, 2 * a * b, 1 - 2 * (1 - a) * (1 - b))
            """,
            at=[(8, 12), (8, 44)],
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Compositor(nn.Module):
                def forward(self, fg, bg, alpha):
                    return fg * alpha + bg * (1 - alpha)

            model = torch.compile(Compositor().half())
            """,
            at=[(7, 16)],
            note="module converted at the compile site",
        ),
        Case(
            """
            import torch

            def to_srgb(x):
                return x.clamp(min=0.0031308) ** (1 / 2.2)

            @torch.compile
            def decode(z):
                img = torch.zeros(1, 3, 8, 8, dtype=torch.float16) + z
                return to_srgb(img)
            """,
            at=[(5, 12)],
            note="gamma in a helper reached from the region; dtype from the factory",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Conv2d(64, 3, 1)

                def forward(self, feats, base, t):
                    with torch.autocast("cuda"):
                        rgb = self.proj(feats)
                        return torch.lerp(rgb, base, t)

            head = torch.compile(Head())
            """,
            at=[(14, 20)],
            note="a conv output under autocast is fp16; lerp then runs in fp16",
        ),
        Case(
            """
            import torch
            from diffusers import StableDiffusionPipeline

            pipe = StableDiffusionPipeline.from_pretrained("sd", torch_dtype=torch.float16)

            @torch.compile
            def normalize(img):
                return (img - img.mean()) / img.std()

            image = normalize(pipe.vae.decode(latents).sample)
            """,
            at=[(9, 12)],
            note="pipeline loaded with torch_dtype=torch.float16",
        ),
        Case(
            files={
                "train.py": dedent("""
                    import torch
                    from blocks import Screen

                    model = Screen().half()
                    model = torch.compile(model)
                """),
            },
            path="blocks.py",
            code="""
            import torch.nn as nn

            class Screen(nn.Module):
                def forward(self, a, b):
                    return 1 - (1 - a) * (1 - b)
            """,
            at=[(6, 16)],
            note="cross-file: defined in blocks.py, converted and compiled in train.py",
        ),
    ]

    def check(self, facts):
        precision = None
        reported: list[ast.AST] = []
        rounding: dict[int, str] = {}
        for node, region in region_nodes(facts, (ast.BinOp, ast.Call)):
            kind = blend_kind(facts, node)
            if kind is None:
                continue
            if any(r in facts.ancestors(node) for r in reported):
                continue
            key = id(region)
            if key not in rounding:
                rounding[key] = region_rounding(facts, region)
            if rounding[key] == EAGER or (rounding[key] == EMULATED and kind != "gamma curve"):
                continue  # rounds like eager (emulated casts still fuse `pow`)
            precision = precision or precision_for(facts)
            low = low_precision_part(facts, precision, node, kind)
            if low is None:
                continue
            dtype = precision.dtype(low)
            reported.append(node)
            yield self.finding(
                facts, node,
                f"{kind} `{stmt_text(facts, node, 30)}` in {SHORT[dtype]} differs from eager when compiled "
                f"({precision.why_low(low)})",
                region=region,
            )
