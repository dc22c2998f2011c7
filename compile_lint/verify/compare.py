"""Accuracy judgement: is a compiled output the same as eager's, rounding, or a divergence?

Imported only inside a worker process (it imports torch).

The rule follows PyTorch's own accuracy harness, `torch._dynamo.utils.same(ref, res,
fp64_ref, tol)` as of torch 2.13 (torch/_dynamo/utils.py), used by the dynamo benchmarks'
`--accuracy` mode and the accuracy minifier. It is reimplemented here rather than
imported because it is private API:
  1. `allclose(eager, compiled, atol=tol, rtol=tol)` passes outright;
  2. otherwise compiled passes when its RMSE against an fp64 reference is within a
     multiplier of eager's RMSE against it: `res_error <= multiplier * ref_error + tol / 10`,
     multiplier 3.0 for fp16/bf16 or for fewer than 1000 elements, else 2.0.
On top of that rule, verify adds one thing the harness does not need: step 2 alone would
accept a threshold that flips a few pixels by 0.9 (hazards.md CL302) whenever the
RMSE stays small, so an element-wise bound is kept too: "rounding" means every element
differs by at most ROUNDING_ULPS units in the last place, at the output's largest
magnitude, of the precision the target computed in.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import torch

ROUNDING_ULPS = 8  # hazards.md CL301 measured up to ~4 ULP (gamma, normalize)

BIT_IDENTICAL = "bit-identical"
WITHIN_TOLERANCE = "within-tolerance"
ROUNDING = "rounding"
DIVERGENCE = "divergence"
PASSING_VERDICTS = (BIT_IDENTICAL, WITHIN_TOLERANCE, ROUNDING)


@dataclass
class Tolerance:
    atol: float = 1e-5
    rtol: float = 1e-5
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
    within_ulps = max_diff <= ROUNDING_ULPS * ulp(scale, compute_dtype).item()
    if fp64_ref is not None and within_ulps:
        allowed = _multiplier(compute_dtype, e.numel(), tol) * judgement.eager_rmse_vs_fp64 + tol.atol / 10.0
        if judgement.compiled_rmse_vs_fp64 <= allowed:
            judgement.verdict = ROUNDING
            return judgement
    judgement.verdict = DIVERGENCE
    return judgement


def worst(judgements: list[Judgement]) -> Judgement:
    """The judgement that decides a multi-output result: a divergence first, then the
    largest difference."""
    order = {BIT_IDENTICAL: 0, WITHIN_TOLERANCE: 1, ROUNDING: 2, DIVERGENCE: 3}
    return max(judgements, key=lambda j: (order[j.verdict], j.max_abs_diff))
