"""The fp64 reference: the target run eagerly with every float computation in float64.

Imported only in the worker (imports torch).

Casting the model and inputs to float64 (what PyTorch's accuracy harness does) is not
enough for image code, which casts inside: `base.half()`, `.to(torch.bfloat16)`,
`torch.zeros(..., dtype=torch.float16)`. A TorchFunctionMode turns those casts into
float64 too, and remembers the lowest precision the code asked for: that is the
precision the eager and compiled results should be judged in.
"""
from __future__ import annotations

import copy

import torch
from torch.overrides import TorchFunctionMode

_LOWER = (torch.float16, torch.bfloat16, torch.float32)
_CAST_METHODS = {
    torch.Tensor.half: torch.float16,
    torch.Tensor.bfloat16: torch.bfloat16,
    torch.Tensor.float: torch.float32,
}
# Coarsest first: bf16 has 8 significant bits, fp16 11, fp32 24.
_COARSENESS = {torch.bfloat16: 3, torch.float16: 2, torch.float32: 1, torch.float64: 0}


def coarsest(*dtypes: torch.dtype) -> torch.dtype:
    floats = [d for d in dtypes if d in _COARSENESS]
    return max(floats, key=_COARSENESS.__getitem__) if floats else torch.float32


class Float64Everywhere(TorchFunctionMode):
    """Redirect float casts and float dtype arguments to float64, noting what was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.requested: set = set()

    def _swap(self, value):
        if isinstance(value, torch.dtype) and value in _LOWER:
            self.requested.add(value)
            return torch.float64
        return value

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _CAST_METHODS:
            self.requested.add(_CAST_METHODS[func])
            return args[0].double()
        if "dtype" in kwargs:
            kwargs["dtype"] = self._swap(kwargs["dtype"])
        if func in (torch.Tensor.to, torch.Tensor.type):
            args = tuple(self._swap(a) for a in args)
        return func(*args, **kwargs)


def to_float64(value):
    """A float64 copy of a tensor (float ones only) or a module; anything else as is."""
    if isinstance(value, torch.nn.Module):
        return copy.deepcopy(value).double()
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.detach().double()
    if isinstance(value, dict):
        return {k: to_float64(v) for k, v in value.items()}
    return value
