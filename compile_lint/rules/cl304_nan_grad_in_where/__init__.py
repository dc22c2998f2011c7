from __future__ import annotations

import ast
from textwrap import dedent

from ...analysis.semantic.bindings import BindingsFact
from ...analysis.branches.feature_tests import never_runs_compiled
from ...analysis.compiled.values import chain_text
from .domains import (
    NEEDS,
    clamp_fix,
    condition_of,
    guarded,
    python_number,
    risky_ops,
    safe_when_unselected,
    tested_variables,
    variables,
    where_parts,
)
from ...analysis.semantic.facts import RegionsFact
from .gradients import GradientsFact, under_no_grad
from ...analysis.reach.queries import stmt_text
from ..base import Case, Rule


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
    `x ** 2` or `a*a + b*b`, are taken into account, and so are lower bounds a
    clamp sets: after `u = x.clamp(1e-12, 1)`, `u` and what positive scaling, sums,
    powers, `where`, reshaping and non-negative constant weights
    (`u @ torch.tensor([0.2126, 0.7152, 0.0722])`) build from it stay > 0), when the input is a Python
    number, and when the condition compares two variables (nothing to tell the
    domain by), or when the op's input there also holds other variables whose values
    the code does not bound (detectron2's `pairwise_iou`, `where(inter > 0, inter /
    (area1[:, None] + area2 - inter), 0)`: at `inter == 0` the divisor is the areas' sum;
    still reported where the input is out of the domain whatever they hold, `1 / (d * w)`
    at `d == 0`); when no input of the op can carry a gradient (comparisons, counts of
    thresholded values such as `(pred > t).sum()`, `.long()`/`.int()`/`.bool()`,
    `.detach()`, `torch.arange`, fresh random draws (`torch.rand(*shape)`, `randn_like`),
    sizes and Python numbers (parameters annotated `int` / `float` / `bool`, or unannotated
    with a number as default, included), and arithmetic on those
    only, torch ops and tensor methods on such inputs alone (`torch.sin(math.pi * x)`,
    `torch.cat([-out.flip([0]), out])`), names unpacked from such a value (`h, w = x.shape`),
    what a def of the file decorated `@torch.no_grad()` returns, a tensor made without a gradient whose item
    stores (`out[i] = cur`) and in-place updates all write such values; a parameter of
    a private or nested def every call of which in the file passes such a value, what
    a private helper returns, and an element unpacked from a private helper's returned
    tuple, count too); when the where's result cannot reach a loss (everything
    derived from it only feeds torch ops and Python numbers, such as
    `int(needed.min().item())`, and nothing of it is returned as a tensor, stored,
    passed to project code or used in place); code lexically under
    `torch.no_grad()` / `torch.inference_mode()`; code in the `forward` or `backward` of a
    custom `torch.autograd.Function`, and a private or nested def that only such code
    calls (autograd runs them with grad mode off, so they record no graph:
    `scripts/measure/autograd_function_grad_mode.py` prints the grad mode inside each and a
    finite gradient where plain autograd gives NaN); and code in the branch where
    `torch.is_grad_enabled()` is false (`if torch.is_grad_enabled(): ... else: where(...)`,
    Depth-Anything-3, two findings on bench/dev7 before); code that only a torch before
    2.0 runs (`if "sinc" not in dir(torch): def sinc(x): ...`). The
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
      `u = -0.1` gives a NaN gradient, clamped 0.0774; a where over a count of a bool
      mask does not require grad. `python scripts/measure/cl304_nan_grad.py` reproduces
      all three; `fixtures/rules/CL304/` holds the hazard and its fix
    - kornia `color/rgb.py` clamps before `pow` (the correct spelling)
    - judged on corpus L (`bench/judged/verdicts.jsonl`): kornia `geometry/ransac.py`
      (a count of a bool mask passed as a `Tensor` parameter, its where reduced to an
      `int`) was a false finding; the valid cases above keep its shape.
      `scripts/measure/cl304_corpus.sh` lists the rule's findings on corpus L: 10 at
      975f23b (1 false), 8 now: ransac and diffusers' nested `hz_to_mel` (called only
      with a `torch.tensor` of constants) are no longer reported
    - judged on bench/dev2 (`python bench/dev2/score.py /work/dev2`): a public SR app's
      `_sinc` over a `_ramp` grid filled with Python floats was false (the valid case
      above keeps its shape), and its `hsluv.py` public `rgb_to_xyz`/`_y_to_l` (inputs
      clamped only by their one caller in the repository) are still reported: a public
      function of a package that declares itself one (`[project]`) is called by code
      the repository does not hold. Following a name into its own earlier value
      (`textures = torch.cat(textures)`) reads that earlier value now, instead of
      assuming it carries none (diffusers `shap_e/renderer.py`, judged true, kept by an
      invalid case above); diffusers `ltx2/vocoder.py`'s sinc over `torch.arange` of
      parameters annotated `int`/`float` (judged latent: "its inputs carry no gradient")
      is no longer reported
    - judged on the development apps (`bench/dev_findings/`, a sample of dev34-dev50's
      findings read by people who did not write the rule): 11 of 12 sampled findings
      were false, each a value that carries no gradient. Across all 476 development apps
      held, 25 of the rule's 65 findings were two vendored files: BigVGAN's
      alias-free-torch `filter.py` (15), whose `sinc` is defined only
      `if "sinc" not in dir(torch)`, and legged_gym's `torch_rand_sqrt_float` (10), a
      `torch.rand(*shape)` draw. Code only a torch before 2.0 runs is no longer read
      (`analysis/branches/feature_tests.py`, as CL303 and CL507 do), fresh random and
      spectral tensors (`rand`, `randn`, `*_like`, `fftfreq`, windows) carry none
      whatever their size arguments, and an unannotated parameter whose default is a
      number is a Python number (earth2mip's `brown_noise(shape, reddening=2)`); the
      valid cases above keep each shape
    - a where whose value only feeds a comparison (`r_square < torch.where(...)`, UniK3D's and
      UniDepth's camera models and glue-factory's distortion check, judged false in
      `bench/dev_findings/`) reaches no loss: the comparison's boolean result carries none
    - names unpacked from what carries none (`n_y, n_x = grid.shape`, a loop over
      `range(n)`), `torch.from_numpy`, and what a def of the file decorated
      `@torch.no_grad()` returns carry none. On all 476 development apps (`bench/dev_findings/`,
      `run.py`) this took 1 of the rule's 34 findings, earth2studio's observation
      gridding (judged false: sizes unpacked from `.shape` fed a `scatter_add_` count);
      corpus M's findings are unchanged. stereoanywhere's `run_inference` result (judged
      false) is still reported: its public `disparity_to_depth` may be called with a
      differentiable focal length
    - a sparse tensor built from indices and values (`torch.sparse_coo_tensor`, the legacy
      `torch.sparse.FloatTensor`, CSR/CSC) carries a gradient through its values alone, and
      `torch.sparse.sum`, `.to_dense()` pass what their input carries
      (`scripts/measure/sparse_values_grad.py`, `tests/test_measured_sparse_values.py`):
      EasyVolcap's copy of PyTorch3D's mesh Laplacian divides by degrees counted from
      `torch.ones(...)` values (2 findings judged false, `bench/fresh_reads/` batch 28)
    - read on repositories no set holds (`bench/fresh_reads/`, session 62): 10 findings, all
      judged false. Three were where results that only build integer codes (Forge's gguf
      quantizers: `trunc(...).to(torch.uint8)`, bitwise packing stored into a uint8
      buffer, the scale `.view(torch.uint8)`); `scripts/measure/integer_view_grad.py`
      shows none of those requires grad, so an integer `.view(dtype)` carries none and a
      value that carries none may be stored anywhere. Three were LTX-2's sigma schedule
      (LightX2V twice, FastVideo): `math.exp(...)` is a Python float, and a store into
      `sigmas` below the where, in no loop around it, changes nothing the where read.
      Corpus M: 74 -> 73 findings, diffusers' `quantize_nvfp4` (judged latent on corpus L
      for its inputs; its where result, too, only reaches `.to(torch.uint8)` codes). The
      four left: public functions that code outside the repository may differentiate
      (LightX2V's test quantizer, detectron2's `pairwise_iou` vendored in Forge), and
      no-grad contexts in a caller (Forge's `train_difference` under an
      `inference_mode` far up the sampler, FastVideo's `forward_warp`)
    - PyTorch FAQ on NaN gradients through `torch.where` (the double-where trick)
    """

    code = "CL304"
    name = "nan-grad-in-where"
    summary = "An unselected `torch.where` branch outside its op's domain turns gradients into NaN"
    fix_safety = "unsafe"
    codemod = "codemods.clamp_branch_input:ClampBranchInput"
    requires = (b"where",)
    needs = (RegionsFact, BindingsFact, GradientsFact)  # fires wherever the code can be differentiated; names the region when there is one

    valid = [
        Case(
            """
            import torch

            def _safe_div(n, d):
                return torch.where(d.abs() < 1e-5, n * 100000.0, n / d)

            class PScan(torch.autograd.Function):
                @staticmethod
                def forward(ctx, weights, bias):
                    ctx.save_for_backward(weights, bias)
                    return torch.where(weights.abs() < 1e-5, bias, bias / weights)

                @staticmethod
                def backward(ctx, grad):
                    weights, bias = ctx.saved_tensors
                    return _safe_div(grad, weights), _safe_div(grad * bias, weights)
            """,
            note="a custom autograd Function's forward and backward run with grad mode off, and so does a "
                 "helper only they call (tapnet's pscan.py shape; scripts/measure/autograd_function_grad_mode.py)",
        ),
        Case(
            """
            import torch

            def unproject(u, v, fx, fy, cx, cy, alpha, beta):
                mx, my = (u - cx) / fx, (v - cy) / fy
                r_square = mx ** 2 + my ** 2
                valid_mask = r_square < torch.where(alpha < 0.5, 1e6, 1 / (beta * (2 * alpha - 1)))
                return torch.stack([mx, my], -1), valid_mask
            """,
            note="UniK3D's camera model (bench/dev29, judged false in bench/dev_findings): the where "
                 "only feeds a comparison, whose boolean result carries no gradient back",
        ),
        Case(
            """
            import math
            import torch

            if "sinc" in dir(torch):
                sinc = torch.sinc
            else:
                def sinc(x: torch.Tensor):
                    return torch.where(x == 0, torch.tensor(1.0, device=x.device, dtype=x.dtype),
                                       torch.sin(math.pi * x) / math.pi / x)
            """,
            note="the vendored BigVGAN / alias-free-torch filter.py: the def exists only on a torch "
                 "without torch.sinc (before 1.8); 15 of 65 findings on the development apps (bench/dev_findings)",
        ),
        Case(
            """
            import torch

            def torch_rand_sqrt_float(lower, upper, shape, device):
                r = 2 * torch.rand(*shape, device=device) - 1
                r = torch.where(r < 0., -torch.sqrt(-r), torch.sqrt(r))
                return (upper - lower) * r + lower
            """,
            note="legged_gym's math.py (five development apps): `torch.rand(*shape)` takes sizes, "
                 "its draw carries no gradient",
        ),
        Case(
            """
            import torch

            def brown_noise(shape, reddening=2):
                noise = torch.normal(torch.zeros(shape), torch.ones(shape))
                S = torch.abs(torch.fft.fftfreq(noise.shape[-2]).reshape(-1, 1)) ** reddening
                S = torch.where(S == 0, 0, 1 / S)
                return torch.fft.ifft2(torch.fft.fft2(noise) * S).real
            """,
            note="earth2mip's ensemble_utils.py: frequencies of sizes raised to a parameter whose "
                 "default is a number",
        ),
        Case(
            """
            import torch

            def rgb_to_luma(img):
                out = img.permute(0, 2, 3, 1).clamp(1e-12, 1)
                out = torch.where(out <= 0.04045, out / 12.92, torch.pow((out + 0.055) / 1.055, 2.4))
                if img.shape[-3] == 3:
                    out = out @ torch.tensor([0.2126, 0.7152, 0.0722]).to(img)
                out = torch.where(out <= (216 / 24389), out * (out * (24389 / 27)), torch.pow(out, 1 / 3) * 116 - 16)
                return torch.clamp(out / 100, 0, 1)
            """,
            note="clamped to [1e-12, 1] first: every value after it stays > 0, through the sRGB decode and "
                 "the positive luma weights, so the cube root runs in its domain (a public SR app's color_util.py)",
        ),
        Case(
            """
            import math
            import torch

            def _sinc(x):
                return torch.where(x != 0, torch.sin(math.pi * x) / (math.pi * x), x.new_ones([]))

            def _lanczos(x, a: int):
                cond = torch.logical_and(-a < x, x < a)
                out = torch.where(cond, _sinc(x) * _sinc(x / a), x.new_zeros([]))
                return out / out.sum()

            def _ramp(ratio: float, width: int):
                n = math.ceil(width / ratio + 1)
                out = torch.empty([n])
                cur = 0
                for i in range(out.shape[0]):
                    out[i] = cur
                    cur += ratio
                return torch.cat([-out[1:].flip([0]), out])[1:-1]

            def resample_kernel(size: int, target: int, a: int = 3):
                return _lanczos(_ramp(target / size, a), a)
            """,
            note="a resampling kernel (a public SR app's degradations.py): every call of the private "
                 "helpers passes a grid filled with Python numbers, which carries no gradient",
        ),
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

            def sqrt_positive_part(x):
                ret = torch.zeros_like(x)
                positive_mask = x > 0
                if torch.is_grad_enabled():
                    ret[positive_mask] = torch.sqrt(x[positive_mask])
                else:
                    ret = torch.where(positive_mask, torch.sqrt(x), ret)
                return ret
            """,
            note="Depth-Anything-3 (bench/dev7): the where runs only where torch.is_grad_enabled() is false",
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

            def laplacian(verts, edges):
                V = verts.shape[0]
                e0, e1 = edges.unbind(1)
                idx = torch.stack([torch.cat([e0, e1]), torch.cat([e1, e0])])
                ones = torch.ones(idx.shape[1], dtype=torch.float32, device=verts.device)
                A = torch.sparse.FloatTensor(idx, ones, (V, V))
                deg = torch.sparse.sum(A, dim=1).to_dense()
                deg0 = deg[e0]
                return torch.where(deg0 > 0.0, 1.0 / deg0, deg0)
            """,
            note="a sparse tensor carries a gradient through its values only: degrees counted from ones carry none "
                 "(PyTorch3D's mesh Laplacian in EasyVolcap, bench/fresh_reads batch 28; "
                 "scripts/measure/sparse_values_grad.py)",
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
        Case(
            """
            import math
            import torch

            class Sampler:
                def _samples_needed(self, probability, confidence: float) -> int:
                    needed = torch.where(
                        probability > 0,
                        math.log1p(-confidence) / torch.log1p(-probability),
                        torch.full_like(probability, float("inf")),
                    )
                    return int(needed.min().item())
            """,
            note="the where's result only becomes a Python number: no loss depends on it (kornia ransac.py shape)",
        ),
        Case(
            """
            import torch

            class Matcher:
                def _log_support(self, inliers):
                    support = inliers.cumsum(0).to(torch.float64)
                    return torch.where(support > 0, torch.log(support), torch.zeros_like(support))

                def score(self, errors, threshold):
                    mask = errors <= threshold
                    return self._log_support(mask) + self._log_support(errors.argmax(0))
            """,
            note="a private method every call of which passes a bool mask or an argmax: no gradient",
        ),
        Case(
            """
            import torch

            def _best(errors, threshold):
                mask = errors <= threshold
                return mask.sum(dim=1), mask

            def inverse_support(errors, threshold):
                counts, mask = _best(errors, threshold)
                return torch.where(counts > 0, 1.0 / counts, 0.0)
            """,
            note="a count of a bool mask unpacked from what a private helper returns",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            def class_balance(logits, labels, num_classes: int):
                hits = F.one_hot(labels, num_classes).sum(0)
                top = logits.topk(5, dim=-1).indices
                votes = torch.bincount(top.flatten(), minlength=num_classes).to(torch.float32)
                picked = (logits.argmax(-1) == labels).to(torch.long).sum()
                return torch.where(hits > 0, votes / hits, 0.0), torch.where(picked > 0, 1.0 / picked, 0.0)
            """,
            note="one-hot counts, top-k indices, bincounts and integer casts carry no gradient",
        ),
        Case(
            """
            import torch

            def average_cells(grid, obs_y, obs_x, obs_val):
                n_y, n_x = grid.shape
                yi = torch.tensor(obs_y, dtype=torch.long)
                xi = torch.tensor(obs_x, dtype=torch.long)
                vals = torch.tensor(obs_val, dtype=torch.float32)
                flat_idx = yi * n_x + xi
                flat_sum = torch.zeros(n_y * n_x)
                flat_cnt = torch.zeros_like(flat_sum)
                flat_sum.scatter_add_(0, flat_idx, vals)
                flat_cnt.scatter_add_(0, flat_idx, torch.ones_like(vals))
                return torch.where(flat_cnt > 0, flat_sum / flat_cnt, flat_sum)
            """,
            note="earth2studio's observation gridding (bench/dev_findings, judged false): sizes unpacked "
                 "from `.shape` (`n_y, n_x = grid.shape`) are Python numbers, like `grid.shape[0]`",
        ),
        Case(
            """
            import torch

            @torch.no_grad()
            def run_inference(model, left, right):
                return model(left, right)

            def disparity_to_depth(model, left, right, fx: float, baseline: float):
                disparity = run_inference(model, left, right)
                return torch.where(disparity > 0, (fx * baseline) / disparity, torch.zeros_like(disparity))
            """,
            note="stereoanywhere's demo (bench/dev_findings, judged false): what a def decorated "
                 "`@torch.no_grad()` returns records no graph, whoever calls it",
        ),
        Case(
            """
            import torch

            def quantize_blocks(blocks):
                d = blocks.abs().amax(dim=-1, keepdim=True) / -8
                inv = torch.where(d == 0, torch.tensor(0.0), 1.0 / d)
                codes = torch.trunc(blocks * inv + 8.5).clip(0, 15).to(torch.uint8)
                packed = torch.zeros((blocks.shape[0], 1), dtype=torch.uint8)
                packed[:, 0] = codes[:, 0] | (codes[:, 1] << 4)
                d = d.to(torch.float16).view(torch.uint8)
                return torch.cat([d, packed], dim=-1)
            """,
            note="Forge's gguf quantizers (bench/fresh_reads, judged false): the where's result only builds "
                 "integer codes, stored into a uint8 buffer and returned with the scale viewed as bytes "
                 "(scripts/measure/integer_view_grad.py: none requires grad)",
        ),
        Case(
            """
            import math
            import torch

            def shifted_sigmas(steps: int, shift, model):
                sigmas = torch.linspace(1.0, 0.0, steps + 1)
                num = math.exp(shift)
                sigmas = torch.where(sigmas != 0, num / (num + (1 / sigmas - 1)), 0)
                mask = sigmas != 0
                sigmas = sigmas.clone()
                sigmas[mask] = 1.0 - (1.0 - sigmas[mask]) / model.terminal
                return sigmas
            """,
            note="LTX-2's sigma schedule in LightX2V and FastVideo (bench/fresh_reads, judged false): `math.exp` "
                 "gives a Python float, and the stretch stored into `sigmas` after the where changes nothing it read",
        ),
        Case(
            """
            import torch

            def pairwise_iou(boxes1, boxes2):
                area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
                area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
                inter = intersection(boxes1, boxes2)
                return torch.where(inter > 0, inter / (area1[:, None] + area2 - inter), torch.zeros(1))
            """,
            note="detectron2's pairwise_iou (four copies in bench/fresh_reads, judged false or latent): where "
                 "`inter` is not selected the divisor is the areas' sum, which the code does not bound",
        ),
    ]
    invalid = [
        Case(
            """
            import torch

            def weighted_inverse(d, w):
                return torch.where(d > 0, 1 / (d * w), 0)
            """,
            at=[(5, 31)],
            note="at `d == 0` the divisor is 0 whatever `w` holds",
        ),
        Case(
            """
            import torch

            def schedule(steps: int, model):
                sigmas = torch.linspace(1.0, 0.0, steps + 1)
                for _ in range(2):
                    out = torch.where(sigmas != 0, 1 / sigmas, 0)
                    sigmas[1:] = out[1:] * model.scale
                return out
            """,
            at=[(7, 40)], note="a store below the read in a loop around both reaches the read next time round",
        ),
        Case(
            """
            import torch

            def scale_blocks(blocks, buffer):
                d = blocks.abs().amax(dim=-1, keepdim=True)
                inv = torch.where(d == 0, torch.tensor(0.0), 1.0 / d)
                buffer[:, 0] = (blocks * inv).view(-1)
                return buffer
            """,
            at=[(6, 50)], note="a float value stored into a buffer: `.view(-1)` reshapes, it does not cast",
        ),
        Case(
            """
            import torch

            def _safe_div(n, d):
                return torch.where(d.abs() < 1e-5, n * 100000.0, n / d)

            class Ratio(torch.autograd.Function):
                @staticmethod
                def forward(ctx, n, d):
                    ctx.save_for_backward(n, d)
                    return _safe_div(n, d)

            def ratio(n, d):
                return _safe_div(n, d)
            """,
            at=[(5, 54)], note="the helper is also called from plain code, which autograd differentiates",
        ),
        Case(
            """
            import torch

            def _convert_srgb_to_linear(u):
                return torch.where(u <= 0.04045, u / 12.92, ((u + 0.055) / 1.055) ** 2.4)

            @torch.no_grad()
            def decode_to_mesh(textures):
                return _convert_srgb_to_linear(textures)
            """,
            fixed="""
            import torch

            def _convert_srgb_to_linear(u):
                return torch.where(u <= 0.04045, u / 12.92, ((u.clamp(min=0.04045) + 0.055) / 1.055) ** 2.4)

            @torch.no_grad()
            def decode_to_mesh(textures):
                return _convert_srgb_to_linear(textures)
            """,
            at=[(5, 49)], note="called only under no_grad, yet the same helper usually serves training "
                               "(diffusers' shap_e renderer, judged true on corpus L)",
        ),
        Case(
            """
            import torch

            @torch.inference_mode(False)
            def run(model, x):
                return model(x)

            def depth(model, x, fx):
                disparity = run(model, x)
                return torch.where(disparity > 0, fx / disparity, torch.zeros_like(disparity))
            """,
            at=[(10, 39)], note="`inference_mode(False)` leaves grad mode on: the result may carry a gradient",
        ),
        Case(
            """
            import torch

            def inverse(x):
                d = torch.where(x > 0, 1 / x, torch.zeros_like(x))
                keep = d < 3
                return d * keep
            """,
            at=[(5, 28)], note="compared, and also returned: the where's value reaches a loss",
        ),
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
            """
            import math
            import torch

            if "sinc" in dir(torch):
                def safe_sinc(x):
                    return torch.where(x == 0, torch.ones_like(x), torch.sin(math.pi * x) / math.pi / x)
            """,
            at=[(7, 56)], note="defined where torch has sinc: it runs on every torch 2.x",
        ),
        Case(
            """
            import torch

            def noisy_root(shape, scale=2):
                r = torch.rand(*shape, requires_grad=True) * scale
                return torch.where(r < 0., -torch.sqrt(-r), torch.sqrt(r))
            """,
            at=[(6, 33), (6, 49)], note="a draw made to require a gradient carries one",
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
        Case(
            """
            import torch

            class Matcher:
                def _log_support(self, inliers):
                    support = inliers.cumsum(0)
                    return torch.where(support > 0, torch.log(support), torch.zeros_like(support))

                def score(self, errors, threshold):
                    return self._log_support(errors <= threshold) + self._log_support(torch.sigmoid(errors))
            """,
            at=[(7, 41)], note="one call passes soft probabilities: they carry a gradient",
        ),
        Case(
            """
            import torch

            def log_support(inliers):
                support = inliers.cumsum(0)
                return torch.where(support > 0, torch.log(support), torch.zeros_like(support))

            def score(errors, threshold):
                return log_support(errors <= threshold)
            """,
            at=[(6, 37)], note="a public function: other modules may pass a differentiable tensor",
        ),
        Case(
            """
            import torch

            class Sampler:
                def _samples_needed(self, probability) -> int:
                    needed = torch.where(probability > 0, 1.0 / torch.log1p(-probability), probability)
                    self.history.append(needed)
                    return int(needed.min().item())
            """,
            at=[(6, 47)], note="the where's result is kept on the object: a later loss may use it",
        ),
        Case(
            """
            import torch

            def train_step(model, img, target, opt):
                u = model(img)
                linear = torch.where(u <= 0.04045, u / 12.92, ((u + 0.055) / 1.055) ** 2.4)
                loss = (linear - target).abs().mean()
                loss.backward()
                opt.step()
                return loss.item()
            """,
            fixed="""
            import torch

            def train_step(model, img, target, opt):
                u = model(img)
                linear = torch.where(u <= 0.04045, u / 12.92, ((u.clamp(min=0.04045) + 0.055) / 1.055) ** 2.4)
                loss = (linear - target).abs().mean()
                loss.backward()
                opt.step()
                return loss.item()
            """,
            at=[(6, 51)], note="only a Python number is returned, but the loss is differentiated here",
        ),
        Case(
            """
            import math
            import torch

            def _sinc(x):
                return torch.where(x != 0, torch.sin(math.pi * x) / (math.pi * x), x.new_ones([]))

            def _ramp(ratio: float, width: int, scale):
                out = torch.empty([width])
                for i in range(width):
                    out[i] = scale * i * ratio
                return torch.cat([-out[1:].flip([0]), out])

            def learned_kernel(scale, width: int):
                return _sinc(_ramp(0.5, width, scale))
            """,
            at=[(6, 32)],
            note="the grid is filled with a parameter that may require grad: a store into it counts",
        ),
        Case(
            """
            import torch

            def _srgb_to_linear(u):
                return torch.where(u <= 0.04045, u / 12.92, ((u + 0.055) / 1.055) ** 2.4)

            def decode(mlp, queries):
                textures = []
                for q in queries:
                    textures.append(mlp(q))
                textures = torch.cat(textures, dim=1)
                return _srgb_to_linear(textures)
            """,
            fixed="""
            import torch

            def _srgb_to_linear(u):
                return torch.where(u <= 0.04045, u / 12.92, ((u.clamp(min=0.04045) + 0.055) / 1.055) ** 2.4)

            def decode(mlp, queries):
                textures = []
                for q in queries:
                    textures.append(mlp(q))
                textures = torch.cat(textures, dim=1)
                return _srgb_to_linear(textures)
            """,
            at=[(5, 49)],
            note="`textures = torch.cat(textures)`: the name read inside is the list of model outputs "
                 "(diffusers shap_e renderer.py, judged true)",
        ),
        Case(
            """
            import torch

            def rgb_to_luma(img):
                out = img.permute(0, 2, 3, 1).clamp(-1, 1)
                out = out @ torch.tensor([0.2126, 0.7152, 0.0722]).to(img)
                return torch.where(out <= (216 / 24389), out * (24389 / 27), torch.pow(out, 1 / 3) * 116 - 16)
            """,
            fixed="""
            import torch

            def rgb_to_luma(img):
                out = img.permute(0, 2, 3, 1).clamp(-1, 1)
                out = out @ torch.tensor([0.2126, 0.7152, 0.0722]).to(img)
                return torch.where(out <= (216 / 24389), out * (24389 / 27), torch.pow(out.clamp(min=216 / 24389), 1 / 3) * 116 - 16)
            """,
            at=[(7, 66)],
            note="clamped to [-1, 1]: negative values reach the cube root on the unselected side",
        ),
    ]

    def check(self, facts):
        grads = facts.get(GradientsFact)
        for call in facts.nodes(ast.Call):
            func = call.func
            if len(call.args) < 2 or (isinstance(func, ast.Attribute) and func.attr != "where"):
                continue  # cheap: where_parts would say None
            parts = where_parts(facts, call)
            if parts is None or under_no_grad(facts, call):
                continue  # not a where, or no gradient is recorded here
            branches = [(branch, when_true, list(risky_ops(facts, branch))) for branch, when_true in parts[1]]
            if not any(ops for _, _, ops in branches):
                continue  # nothing to report: skip the condition's value model questions
            if not isinstance(parts[0], ast.Name):
                # the tested variables are among the condition's: none shared with an op's input, nothing to report
                inputs = set().union(*(variables(arg) for _, _, ops in branches for _, _, arg in ops))
                if not inputs & variables(parts[0]):
                    continue
            cond = condition_of(facts, parts[0])
            tested = tested_variables(facts, cond)
            if not tested:
                continue
            region: list = []  # asked once, only when reported
            reaches: list = []  # asked once, only when an op would be reported
            for branch, when_true, ops in branches:
                done: list = []
                for op, need, arg in ops:
                    if any(any(n is op for n in ast.walk(d)) for d in done):
                        continue  # nested in an op already reported for this branch
                    shared = variables(arg) & tested
                    if not shared or guarded(facts, arg, need) or python_number(facts, arg):
                        continue
                    if safe_when_unselected(facts, cond, arg, need, when_true):
                        continue
                    if grads.op_carries_no_gradient(op, arg):
                        continue  # counts of thresholded values, integer tensors, .detach(): no gradient to poison
                    if not reaches:
                        # a fallback only a torch before 2.0 runs (`if "sinc" not in dir(torch): def sinc`)
                        # is no code of ours to judge; else: can the where's result reach a loss?
                        # a helper only a custom autograd Function's forward/backward calls records none
                        reaches.append(not never_runs_compiled(facts, call) and not grads.called_only_by_autograd_functions(call)
                                       and grads.may_reach_backward(call))
                    if not reaches[0]:
                        break  # no backward pass runs through the where's result
                    done.append(op)
                    if not region:
                        region.append(facts.in_region(call, "compiled") if facts.enclosing_function(call) is not None else None)
                    yield self._report(facts, op, cond, need, arg, when_true, shared, region[0])

    def _report(self, facts, op, cond, need, arg, when_true, shared, region):
        message = (
            f"`{stmt_text(facts, op, 40)}` {NEEDS[need]} but `torch.where` computes it on unselected elements too: "
            f"NaN gradient for `{sorted(shared)[0]}`"
        )
        fix = clamp_fix(facts, cond, arg, need, when_true)
        if fix is None:
            return self.finding(facts, op, message, region=region)
        var_nodes, suffix = fix
        return self.finding(
            facts, op, message,
            fix=f"clamp `{chain_text(var_nodes[0])}` inside the branch with `{suffix}`", unsafe=True,
            data={"wrap": [self._range(facts, n) for n in var_nodes], "suffix": suffix}, region=region,
        )

    @staticmethod
    def _range(facts, node):
        start, end = facts.source.node_range(node)
        return [start.row, start.column, end.row, end.column]
