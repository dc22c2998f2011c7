from __future__ import annotations

import ast
from textwrap import dedent

from ...analysis.semantic.facts import RegionsFact
from .input_mutations import InputMutationsFact
from ...analysis.reach.entries import input_params, is_entry
from ...analysis.reach.queries import ClassAttrsFact
from ..base import Case, Rule


class CudagraphInputMutation(Rule):
    """
    ## What it does
    Finds in-place changes to a parameter of a function (or `forward`) compiled with
    CUDA graphs (`mode="reduce-overhead"`, `mode="max-autotune"`,
    `options={"triton.cudagraphs": True}`): `x.add_(...)`, `x.copy_(...)`,
    `x.clamp_(...)`, any other `*_` tensor method, `x[...] = v`, `x[...] += v`,
    `x += v` on a tensor, `out=x`, `F.relu(x, inplace=True)`, `torch.relu_(x)`, and an
    `nn.ReLU(inplace=True)`-like submodule applied to `x`. Views of the parameter
    (`x[0]`, `x.view(...)`, `x.detach()`) count as the parameter; rebinding the name
    (`x = x * 2`, `x = x.clone()`) ends it. A helper of the same file called with the
    parameter is followed one level.

    ## Why is this bad?
    CUDA graphs need inputs that the graph does not write. When the compiled graph
    mutates one of its inputs, Inductor logs "skipping cudagraphs due to mutated
    inputs" and runs that graph without CUDA graphs (`torch/_inductor/cudagraph_utils.py`):
    the `mode="reduce-overhead"` speed-up silently disappears.

    ## Example
    ```python
    @torch.compile(mode="reduce-overhead")
    def denormalize(img, mean, std):
        img.mul_(std).add_(mean)
        return img.clamp_(0, 1)
    ```

    ## Use instead
    ```python
    @torch.compile(mode="reduce-overhead")
    def denormalize(img, mean, std):
        return (img * std + mean).clamp(0, 1)
    ```

    ## Fix safety
    No fix: callers may rely on the input being changed in place.

    Measured on a GPU (scripts/gpu_verify.sh; bench/results.md, "GPU run"): on an
    NVIDIA H200 with torch 2.11.0+cu130, `fixtures/verify/cuda_inplace_normalize.py` compiled with `mode="reduce-overhead"`
    skipped CUDA graphs (`cudagraph_skips` 1): the call ran, without the graphs asked for.

    ## References
    - `torch/_inductor/cudagraph_utils.py`: "skipping cudagraphs due to mutated inputs".
      `fixtures/verify/cuda_inplace_normalize.py` is the GPU check
    - pytorch#117281, pytorch#121861
    """

    code = "CL403"
    name = "cudagraph-input-mutation"
    summary = "In-place change of an input of CUDA-graph compiled code disables CUDA graphs"
    requires = ()
    needs = (RegionsFact, ClassAttrsFact, InputMutationsFact)  # fires only inside compiled regions

    valid = [
        Case(
            """
            import torch

            @torch.compile(mode="reduce-overhead")
            def denormalize(img, mean, std):
                return (img * std + mean).clamp(0, 1)
            """,
            note="out of place",
        ),
        Case(
            """
            import torch

            @torch.compile(mode="reduce-overhead")
            def denormalize(img, mean, std):
                img = img.clone()
                img.mul_(std).add_(mean)
                return img
            """,
            note="works on a copy",
        ),
        Case(
            """
            import torch

            @torch.compile(mode="max-autotune-no-cudagraphs")
            def denormalize(img, mean, std):
                img.mul_(std).add_(mean)
                return img
            """,
            note="no CUDA graphs",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 3, 3)
                    self.act = nn.ReLU(inplace=True)

                def forward(self, x, cache: dict, step: int):
                    y = self.act(self.conv(x))
                    y += 1
                    cache["last"] = step
                    step += 1
                    return y

            model = torch.compile(Block(), mode="reduce-overhead")
            """,
            note="in-place on intermediates; a dict and an int parameter",
        ),        Case(
            """
            import torch

            @torch.compile(mode="reduce-overhead")
            def f(x, table: dict, key):
                out = x.clone()
                out[:, 3:4] = 0
                table[key, 1] = out
                return out
            """,
            note="writes into a clone and a dict keyed by a tuple",
        ),
    ]
    invalid = [
        Case(
            """
            import torch

            @torch.compile(mode="reduce-overhead")
            def denormalize(img, mean, std):
                img.mul_(std).add_(mean)
                return img.clamp_(0, 1)
            """,
            at=[(6, 5), (7, 12)],
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Inpaint(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.act = nn.ReLU(inplace=True)

                def forward(self, image: torch.Tensor, mask):
                    hole = image[:, :3]
                    hole[mask > 0.5] = 0
                    image += 1
                    return self.act(image)

            model = torch.compile(Inpaint(), mode="max-autotune")
            """,
            at=[(12, 9), (13, 9), (14, 16)],
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            def _norm(t):
                t.sub_(t.mean())

            def step(x, buf):
                _norm(x)
                torch.add(x, 1, out=buf)
                return F.relu(x, inplace=True)

            fast = torch.compile(step, options={"triton.cudagraphs": True})
            """,
            at=[(9, 5), (10, 5), (11, 12)],
            note="through a helper, out=, inplace=True",
        ),
        Case(
            files={
                "train.py": dedent("""
                    import torch
                    from blocks import Shift

                    model = torch.compile(Shift(), mode="reduce-overhead")
                """),
            },
            path="blocks.py",
            code="""
            import torch.nn as nn

            class Shift(nn.Module):
                def forward(self, x):
                    x.copy_(x.roll(1, -1))
                    return x
            """,
            at=[(6, 9)],
            note="cross-file",
        ),        Case(
            """
            import torch

            @torch.compile(mode="reduce-overhead")
            def composite(x, alpha):
                x[:, 3:4] = alpha
                return x
            """,
            at=[(6, 5)], note="subscript assignment into a parameter; the multi-axis index says it is a tensor",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Paste(nn.Module):
                def forward(self, canvas, patch, top: int, left: int):
                    h, w = patch.shape[-2:]
                    canvas[..., top:top + h, left:left + w] = patch
                    return canvas

            paste = torch.compile(Paste(), mode="max-autotune")
            """,
            at=[(8, 9)], note="slices on two axes into a parameter",
        ),
    ]

    def check(self, facts):
        if not facts.has_region("cudagraph"):
            return
        mutations = facts.get(InputMutationsFact)
        for func in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            region = facts.in_region(func, "cudagraph")
            if region is None or not is_entry(facts, func, region):
                continue
            params = input_params(func)
            for node, name, how in mutations.of(func, params) if params else ():
                yield self.finding(
                    facts, node, f"{how.format(name=name)}: CUDA graphs are skipped for this compiled code", region=region,
                )
