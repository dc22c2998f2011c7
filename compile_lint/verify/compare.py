"""Accuracy judgement: is a compiled output the same as eager's, rounding, or a divergence?

Imported only inside a worker process (it imports torch).

The verdict is the rule of PyTorch's own accuracy harness, `same(ref, res, fp64_ref, tol)`
in torch/_dynamo/utils.py (torch 2.13), used by the dynamo benchmarks' `--accuracy` mode
and the accuracy minifier. It is reimplemented here because it is private API:
  1. `allclose(eager, compiled, atol, rtol)` passes outright ("within-tolerance");
  2. otherwise compiled passes when its RMSE against an fp64 reference is within a
     multiplier of eager's RMSE against it: `res_error <= multiplier * ref_error + tol / 10`,
     multiplier 3.0 for fp16/bf16 or for fewer than 1000 elements, else 2.0 (its
     `get_multiplier`). Compiled code is not expected to match eager's rounding, only to
     be as accurate: a gradient summed in another order (error 3.3e-4 against eager's
     2.8e-4 on values of 60) passes.
Two additions:
- Where no fp64 reference could be computed (an op without a float64 kernel), a
  difference of at most ROUNDING_ULPS units in the last place at the output's largest
  magnitude counts as rounding. With a reference, the ULP bound is never the verdict
  (8 fp16 ULPs near 1.0 are 0.008: far more than an accurate compiled result needs).
- A flip guard for the RMSE average: a threshold that flips 0.2% of pixels by 0.9
  (CL302) can keep the RMSE small. So compiled's largest element error against fp64
  must also stay within the same multiplier of eager's largest element error (plus the
  ULP bound): eager that never strays far from fp64 leaves no room for compiled flips.
- A flip rule for low precision: when the target computes in fp16/bf16 and a few
  elements (at most FLIP_FRACTION) differ from eager by more than 8 ULPs while the rest
  are rounding, a threshold on a rounded intermediate chose the other side there. That
  is a divergence from eager ("flip", CL302) even when compiled is nearer fp64 than
  eager (measured on fixtures/verify/fp16_luma_key.py: 0.1% of pixels off by 0.6,
  compiled RMSE against fp64 0.0071 vs eager's 0.0089); continuous rounding (fp16
  blends, 1 ULP on a third of the pixels) stays rounding.
The fp64 reference is computed from the inputs as given to eager (already rounded to
fp16/bf16 in the low-precision check), so it measures the arithmetic, not the inputs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import torch

from .config import FORWARD_TOLERANCE

ROUNDING_ULPS = 8  # hazards.md CL301 measured up to ~4 ULP (gamma, normalize)

BIT_IDENTICAL = "bit-identical"
WITHIN_TOLERANCE = "within-tolerance"
ROUNDING = "rounding"  # within ROUNDING_ULPS, or as accurate as eager against fp64
DIVERGENCE = "divergence"
FLIP = "flip"  # a few elements jump (a threshold on a rounded value): a divergence from eager
FLIP_FRACTION = 0.01
PASSING_VERDICTS = (BIT_IDENTICAL, WITHIN_TOLERANCE, ROUNDING)


@dataclass
class Tolerance:
    atol: float = FORWARD_TOLERANCE
    rtol: float = FORWARD_TOLERANCE
    fp64_multiplier: Optional[float] = None  # None: the harness's 2.0 / 3.0


@dataclass
class Judgement:
    verdict: str
    max_abs_diff: float
    mismatch_fraction: float
    compiled_rmse_vs_fp64: Optional[float] = None
    eager_rmse_vs_fp64: Optional[float] = None
    max_diff_vs_fp64: Optional[float] = None
    eager_max_diff_vs_fp64: Optional[float] = None

    @property
    def passed(self) -> bool:
        return self.verdict in PASSING_VERDICTS


def _rmse(a: torch.Tensor, b: torch.Tensor) -> float:
    return torch.sqrt(torch.mean(torch.square(a.double() - b.double()))).item()


def _multiplier(compute_dtype: torch.dtype, numel: int, tol: Tolerance) -> float:
    if tol.fp64_multiplier is not None:
        return tol.fp64_multiplier
    if compute_dtype in (torch.float16, torch.bfloat16) or numel < 1000:
        return 3.0
    return 2.0


def ulp(values: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Spacing of `dtype`'s representable numbers at `values` (at least the smallest normal's)."""
    info = torch.finfo(dtype)
    magnitude = values.double().abs().clamp_min(info.tiny)
    return torch.exp2(torch.floor(torch.log2(magnitude))) * info.eps


def judge(
    eager: torch.Tensor,
    compiled: torch.Tensor,
    fp64_ref: Optional[torch.Tensor],
    tol: Tolerance,
    compute_dtype: torch.dtype = torch.float32,
) -> Judgement:
    """Compare one output tensor. `compute_dtype` is the lowest float precision the target
    computed in (its inputs' dtype, or a `.half()` inside it)."""
    if eager.shape != compiled.shape:
        return Judgement(DIVERGENCE, math.inf, 1.0)
    if not eager.is_floating_point():
        differ = eager != compiled
        fraction = differ.float().mean().item() if differ.numel() else 0.0
        max_diff = (eager.double() - compiled.double()).abs().max().item() if differ.numel() else 0.0
        return Judgement(BIT_IDENTICAL if fraction == 0 else DIVERGENCE, max_diff, fraction)

    e, c = eager.detach().double(), compiled.detach().double()
    diff = (e - c).abs().nan_to_num(nan=math.inf)
    both_nan = e.isnan() & c.isnan()
    diff = torch.where(both_nan, torch.zeros_like(diff), diff)
    max_diff = diff.max().item() if diff.numel() else 0.0
    fraction = (diff > 0).double().mean().item() if diff.numel() else 0.0
    judgement = Judgement(BIT_IDENTICAL, max_diff, fraction)
    if fp64_ref is not None:
        ref = fp64_ref.detach().double()
        judgement.compiled_rmse_vs_fp64 = _rmse(ref, c)
        judgement.eager_rmse_vs_fp64 = _rmse(ref, e)
        judgement.max_diff_vs_fp64 = (ref - c).abs().max().item() if ref.numel() else 0.0
        judgement.eager_max_diff_vs_fp64 = (ref - e).abs().max().item() if ref.numel() else 0.0
    if max_diff == 0:
        return judgement
    if torch.allclose(e, c, atol=tol.atol, rtol=tol.rtol, equal_nan=True):
        judgement.verdict = WITHIN_TOLERANCE
        return judgement
    # Rounding errors scale with the magnitude of the values computed, not with each
    # output element (an element near 0 can come from cancelling large terms).
    scale = torch.maximum(e.abs().nan_to_num(posinf=0), c.abs().nan_to_num(posinf=0)).max()
    ulp_bound = ROUNDING_ULPS * ulp(scale, compute_dtype).item()
    if fp64_ref is not None and reference_trusted(judgement, scale.item(), compute_dtype):
        accurate = fp64_accurate(judgement, compute_dtype, e.numel(), tol, ulp_bound)
    else:
        accurate = max_diff <= ulp_bound
    judgement.verdict = ROUNDING if accurate else DIVERGENCE
    if accurate and compute_dtype in (torch.float16, torch.bfloat16):
        beyond = (diff > ulp_bound).double().mean().item()
        if 0 < beyond <= FLIP_FRACTION:
            judgement.verdict = FLIP
    return judgement


def reference_trusted(j: Judgement, scale: float, compute_dtype: torch.dtype) -> bool:
    """Is the fp64 run a reference at all? It is eager's arithmetic in float64 on the same
    inputs, so eager stays within rounding of it on the whole, except where the code draws
    random numbers (a float64 draw yields other numbers than a float32 one from the same
    seed). PyTorch's harness avoids that case by running its accuracy checks with
    `fallback_random`; here an eager RMSE against the reference above 1% (fp32) or 5%
    (fp16/bf16) of the output's largest magnitude means it is no reference, and the verdict
    falls back to the ULP rule (the RNG rerun then tells randomness apart). The RMSE, not the
    largest error: a low-precision threshold flips a few elements far (CL302) and stays a
    reference."""
    if j.eager_rmse_vs_fp64 is None:
        return False
    share = 0.05 if compute_dtype in (torch.float16, torch.bfloat16) else 0.01
    return j.eager_rmse_vs_fp64 <= share * max(scale, 1e-12)


def fp64_accurate(j: Judgement, compute_dtype: torch.dtype, numel: int, tol: Tolerance, ulp_bound: float) -> bool:
    """The harness's rule (torch._dynamo.utils.same, fp64 branch) plus the flip guard."""
    if math.isnan(j.compiled_rmse_vs_fp64) or math.isnan(j.eager_rmse_vs_fp64):
        return False  # NaN where the other has numbers: never "rounding"
    multiplier = _multiplier(compute_dtype, numel, tol)
    rmse_ok = j.compiled_rmse_vs_fp64 <= multiplier * j.eager_rmse_vs_fp64 + tol.atol / 10.0
    worst_ok = j.max_diff_vs_fp64 <= multiplier * j.eager_max_diff_vs_fp64 + ulp_bound + tol.atol
    return rmse_ok and worst_ok


def worst(judgements: list[Judgement]) -> Judgement:
    """The judgement that decides a multi-output result: a divergence first, then the
    largest difference."""
    order = {BIT_IDENTICAL: 0, WITHIN_TOLERANCE: 1, ROUNDING: 2, FLIP: 3, DIVERGENCE: 4}
    return max(judgements, key=lambda j: (order[j.verdict], j.max_abs_diff))
