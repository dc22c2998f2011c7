from __future__ import annotations

import ast

from ..analysis.modules.classes import labelled
from ..analysis.semantic.signatures import call_argument
from ..analysis.tensors.resize_calls import MISSING, NEAREST_SIGNATURES, RESIZE_MODULES, const_value
from ..analysis.reach.queries import stmt_text
from .base import Case, Related, Rule
from ..analysis.semantic.facts import RegionsFact
from ..analysis.torch_api import COMPILE

# Eager's nearest kernels copy a dimension whose size does not change, and (CPU)
# take `i >> 1` for an output exactly twice the input; the compiled decomposition
# always computes floor(i / scale). The two disagree only when a dimension of n >= 2
# keeps its size (floor(n * s) == n) or exactly doubles (floor(n * s) == 2n), that is
# when n * frac(s) < 1: inputs smaller than 1 / frac(s) pixels, possible for n >= 2
# only with 1 < s < 1.5 or 2 < s < 2.5. scripts/measure/cl103_sizes.py measures it
# (square inputs 2..519 px): every size that differs is below that bound.
HAZARD_RANGES = ((1.0, 1.5), (2.0, 2.5))


def _scales(value) -> list:
    values = value if isinstance(value, (tuple, list)) else [value]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return []
    return [v for v in values if any(lo < v < hi for lo, hi in HAZARD_RANGES)]


def _hazardous(value) -> bool:
    return bool(_scales(value))


def largest_diverging_size(value) -> int:
    """The largest dimension (px) at which compiled and eager can differ for this scale."""
    largest = 1
    for s in _scales(value):
        frac = s - int(s)
        n = 1
        while (n + 1) * frac < 1:
            n += 1
        largest = max(largest, n)
    return largest


class NearestFractionalScale(Rule):
    """
    ## What it does
    Off by default (a small-input hazard): select it with `--extend-select CL103` or
    `extend-select = ["CL103"]` when your compiled code resizes tensors of a few pixels
    (masks, tiles, bottleneck feature maps).

    Finds nearest-neighbour resizing in a compiled region whose literal scale factor
    makes eager and compiled code pick different pixels on small inputs: a scale `s`
    between 1 and 1.5 or between 2 and 2.5 (`1.25`, `1.3`, `(1.3, 1.5)`, `2.2`), where
    an input dimension smaller than `1 / frac(s)` pixels keeps its size or exactly
    doubles; the finding names that size. With mode `"nearest"`
    (the default when `mode` is absent). Covers `F.interpolate`, `F.upsample`,
    `F.upsample_nearest`, and `nn.Upsample` / `nn.UpsamplingNearest2d` built by a
    module whose `forward` is compiled (also when it is compiled from another file)
    or by a container passed to `torch.compile`. `recompute_scale_factor=True` is the
    way out. A name bound once to a literal (`SCALE = 1.25`) counts as the literal.

    ## Why is this bad?
    `torch.compile` (with `aot_eager` and `inductor` alike) lowers nearest resizing
    through a decomposition that always takes source pixel `floor(i / scale)`. Eager's
    kernels take shortcuts instead: a dimension whose size does not change is
    copied, and (CPU) an output exactly twice the input takes `i >> 1`. With a scale
    in (1, 1.5) a small dimension keeps its size (3 * 1.3 -> 3), with one in (2, 2.5)
    it doubles exactly (2 * 2.2 -> 4), and then the compiled output is silently
    different: 1.0 off on 50% of elements (scale 1.3, a 1x2 input) and 4.0 off on
    67% (scale (1.3, 1.5), 3x4), no error.

    It is a small-input hazard: at image sizes compiled and eager are identical for
    every scale measured. `scripts/measure/cl103_sizes.py` (torch 2.13 CPU, square
    inputs 2..519 px, eager against the decomposition aot_eager and Inductor share):
    s=1.01: 63 sizes differ (all below 100 px); 1.05: 18 (2-19 px); 1.1: 8 (2-9 px);
    1.2 and 2.2: 3 (2-4 px); 1.25, 1.3, 1.333: 2 (2-3 px); 1.4, 1.45, 2.4: 1 (2 px);
    1.5, 1.7, 1.9, 2.0, 2.5, 3.0, 0.5, 0.6, 0.7, 0.75, 0.9: none. Inductor itself at
    s=1.3: 3x8 differs, 9x14, 64x69 and 257x262 are identical. Masks, tiles,
    bottleneck feature maps and 1-pixel strips are where it bites; full-size images
    are safe, which is why the rule is not selected by default.

    ## Example
    ```python
    class Upscaler(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.Upsample(scale_factor=1.25)
            self.conv = nn.Conv2d(3, 3, 3, padding=1)

        def forward(self, x):
            return self.conv(self.up(x))

    model = torch.compile(Upscaler())
    ```

    ## Use instead
    ```python
    self.up = nn.Upsample(scale_factor=1.25, recompute_scale_factor=True)
    ```
    or pass an explicit `size=`, or use `mode="bilinear"`.

    ## Fix safety
    Unsafe: the fix adds `recompute_scale_factor=True` (or turns `False`/`None` into
    `True`), which makes eager and compiled agree, but it changes the eager output
    too: the scale is recomputed from the rounded output size, and on 64x64 images
    7-40% of pixels change for scales 1.3, 1.7 and 0.6. Checkpoints are unaffected.
    `F.upsample`, `F.upsample_nearest` and `nn.UpsamplingNearest2d` take no such
    argument and get no fix.

    Not reported: integer scales; scales outside those ranges (`1.5`, `1.7`, `2.5`,
    `0.6`, `0.75`: measured identical to eager at every size by the script above,
    because no dimension of 2 px or more keeps its size or doubles exactly);
    `size=`; other modes (`"bilinear"`, `"bicubic"`; `"nearest-exact"` measured
    identical on CPU, although pytorch#184848 notes that CUDA also copies same-size
    dimensions for it); scales that are not literals; eager and traced code.

    ## References
    - `scripts/measure/cl103_sizes.py` (which sizes differ, per scale);
      `fixtures/verify/pixel_zoom.py` with `compile-lint verify` (diff 1.0 on 50% of
      elements at 1x2, scale 1.3)
    - pytorch#175154 (open), pytorch#198201 (open); the shortcut paths are described
      in pytorch#184848
    - https://pytorch.org/docs/stable/generated/torch.nn.functional.interpolate.html
    """

    needs = (RegionsFact,)
    code = "CL103"
    name = "nearest-fractional-scale"
    summary = "Compiled nearest resize by a scale in (1, 1.5) or (2, 2.5) differs on inputs of a few pixels"
    default_selected = False  # a small-input hazard: identical at image sizes
    fix_safety = "unsafe"
    codemod = "codemods.recompute_scale_factor:RecomputeScaleFactor"
    requires = (b"scale_factor", b"Upsampl", b"upsample")

    valid = [
        Case(
            """\
            import torch
            import torch.nn.functional as F
            @torch.compile
            def up(x):
                a = F.interpolate(x, scale_factor=2)
                b = F.interpolate(x, scale_factor=2.0, mode="nearest")
                c = F.interpolate(x, scale_factor=(2, 3))
                return a, b, c
            """,
            note="integer scales",
        ),
        Case(
            """\
            import torch
            import torch.nn.functional as F
            @torch.compile
            def up(x):
                a = F.interpolate(x, scale_factor=1.5)
                b = F.interpolate(x, scale_factor=0.6)
                c = F.interpolate(x, scale_factor=(1.7, 2.5), mode="nearest")
                return a, b, c
            """,
            note="scales at which no dimension keeps its size or doubles: measured identical",
        ),
        Case(
            """\
            import torch
            import torch.nn.functional as F
            @torch.compile
            def up(x):
                a = F.interpolate(x, scale_factor=1.25, mode="bilinear", align_corners=False)
                b = F.interpolate(x, scale_factor=1.25, mode="nearest-exact")
                c = F.interpolate(x, scale_factor=1.25, recompute_scale_factor=True)
                d = F.interpolate(x, size=(48, 48))
                return a, b, c, d
            """,
            note="another mode, recompute_scale_factor=True, size=",
        ),
        Case(
            """\
            import torch.nn.functional as F
            def up(x):
                return F.interpolate(x, scale_factor=1.25)
            """,
            note="eager code",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Up(nn.Module):
                def __init__(self, scale):
                    super().__init__()
                    self.up = nn.Upsample(scale_factor=scale)
                def forward(self, x):
                    return self.up(x)
            m = torch.compile(Up(1.25))
            """,
            note="the scale is not a literal here",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Up(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.up = nn.Upsample(scale_factor=1.25)
                def forward(self, x):
                    return self.up(x)
            m = torch.jit.trace(Up(), torch.rand(1, 3, 8, 8))
            """,
            note="traced, not compiled",
        ),
    ]
    invalid = [
        Case(
            """\
            import torch
            import torch.nn.functional as F
            @torch.compile(mode="max-autotune")
            def enlarge(x):
                return F.interpolate(x, scale_factor=1.3)
            """,
            fixed="""\
            import torch
            import torch.nn.functional as F
            @torch.compile(mode="max-autotune")
            def enlarge(x):
                return F.interpolate(x, scale_factor=1.3, recompute_scale_factor=True)
            """,
            at=[(5, 12)],
        ),
        Case(
            """\
            import torch
            from torch.nn import functional
            SCALE = (1.3, 1.5)
            def resize(x):
                return functional.interpolate(
                    x,
                    None,
                    SCALE,
                    "nearest",
                    recompute_scale_factor=False,
                )
            fast = torch.compile(resize)
            """,
            fixed="""\
            import torch
            from torch.nn import functional
            SCALE = (1.3, 1.5)
            def resize(x):
                return functional.interpolate(
                    x,
                    None,
                    SCALE,
                    "nearest",
                    recompute_scale_factor=True,
                )
            fast = torch.compile(resize)
            """,
            note="positional mode, a constant name, recompute_scale_factor=False",
            at=[(5, 12)],
        ),
        Case(
            """\
            from torch import nn
            class Upscaler(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Sequential(
                        nn.Conv2d(3, 12, 3, padding=1),
                        nn.Upsample(scale_factor=1.25),
                        nn.Conv2d(12, 3, 3, padding=1),
                    )
                def forward(self, x):
                    return self.body(x)
            """,
            fixed="""\
            from torch import nn
            class Upscaler(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Sequential(
                        nn.Conv2d(3, 12, 3, padding=1),
                        nn.Upsample(scale_factor=1.25, recompute_scale_factor=True),
                        nn.Conv2d(12, 3, 3, padding=1),
                    )
                def forward(self, x):
                    return self.body(x)
            """,
            files={
                "sr/__init__.py": "",
                "sr/train.py": "import torch\nfrom sr.blocks import Upscaler\nmodel = Upscaler().cuda()\nmodel.compile(mode='reduce-overhead')\n",
            },
            path="sr/blocks.py",
            at=[(7, 13)],
            note="cross-file: nn.Upsample built in __init__, the module compiled in train.py",
        ),
        Case(
            """\
            import torch
            import torch.nn as nn
            head = nn.Sequential(nn.Conv2d(3, 3, 1), nn.UpsamplingNearest2d(scale_factor=2.2))
            head = torch.compile(head)
            """,
            at=[(3, 42)],
            note="a built-in container compiled directly; no recompute argument, so no fix",
        ),
        Case(
            """\
            import torch
            import torch.nn.functional as F
            @torch.compile
            def widen(x):
                return F.interpolate(
                    x,
                    scale_factor=(1, 1.25),
                )
            """,
            fixed="""\
            import torch
            import torch.nn.functional as F
            @torch.compile
            def widen(x):
                return F.interpolate(
                    x,
                    scale_factor=(1, 1.25),
                    recompute_scale_factor=True,
                )
            """,
            note="one argument per line, trailing comma kept",
            at=[(5, 12)],
        ),
    ]

    def check(self, facts):
        if not facts.has_region("compiled") and b"compile" not in facts.source.data:
            return
        for call in facts.nodes(ast.Call):
            dotted = facts.resolve(call.func)
            sig = NEAREST_SIGNATURES.get(dotted or "")
            if sig is None or any(kw.arg is None for kw in call.keywords):
                continue
            scale_pos, mode_pos, recompute_pos, fixed_mode = sig
            scale = call_argument(call, scale_pos, "scale_factor", MISSING)
            if scale is MISSING:
                continue
            value = const_value(facts, scale)
            if value is MISSING or not _hazardous(value):
                continue
            if fixed_mode is None:
                mode_expr = call_argument(call, mode_pos, "mode", MISSING)
                mode = "nearest" if mode_expr is MISSING else const_value(facts, mode_expr)
                if mode != "nearest":
                    continue
            recompute = call_argument(call, recompute_pos, "recompute_scale_factor", MISSING) if recompute_pos is not None else MISSING
            if recompute is not MISSING:
                flag = const_value(facts, recompute)
                if flag is MISSING or flag:
                    continue  # True, or unknown
            how = self._compiled(facts, call, dotted)
            if how is None:
                continue
            region, reached = how
            callee = facts.text(call.func)
            message = (
                f"nearest resize `{callee}(scale_factor={stmt_text(facts, scale, 20)})` in compiled code "
                f"picks other pixels than eager on inputs of {largest_diverging_size(value)} px or less per side"
            )
            fixable = recompute_pos is not None and recompute_pos >= len(call.args)
            kw = {"region": labelled(region, "compiled")} if region is not None else {"related": [reached]}
            if fixable:
                yield self.finding(
                    facts, call, message, fix="pass `recompute_scale_factor=True` (changes eager output slightly)",
                    unsafe=True, data={"callee": callee.rsplit(".", 1)[-1]}, **kw,
                )
            else:
                yield self.finding(facts, call, message, **kw)

    def _compiled(self, facts, call, dotted):
        """(region, None), or (None, the compile call as a related location), when the resize runs compiled."""
        region = facts.in_region(call, "compiled")
        if region is not None:
            return region, None
        if dotted not in RESIZE_MODULES:
            return None
        # built in a method of a module class whose forward is compiled
        for anc in facts.ancestors(call):
            if isinstance(anc, ast.ClassDef):
                for node in anc.body:
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in ("forward", "__call__"):
                        region = facts.in_region(node, "compiled")
                        if region is not None:
                            return region, None
                break
        # `head = nn.Sequential(..., nn.Upsample(...))`, then `torch.compile(head)` in the same scope
        stmt = facts.statement_of(call)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            scope = facts.enclosing_function(stmt)
            for other in facts.calls_to(COMPILE):
                if (
                    other.args
                    and isinstance(other.args[0], ast.Name)
                    and other.args[0].id == name
                    and other.lineno > stmt.lineno
                    and facts.enclosing_function(other) is scope
                ):
                    return None, Related(facts.path, other.lineno, other.col_offset + 1, f"compiled by `{facts.text(other.func)}`")
        return None
