"""``FrozenBatchNorm2d`` for the oracle bench's torchvision stand-in (our own code)."""

from __future__ import annotations

import torch
from torch import nn


class FrozenBatchNorm2d(nn.Module):
    """Batch norm over channels (dim 1) with fixed statistics and affine terms.

    All four are buffers (never trained); the output is
    ``(x - running_mean) / sqrt(running_var + eps) * weight + bias``.
    """

    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", torch.ones(num_features))
        self.register_buffer("bias", torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = self.weight * (self.running_var + self.eps).rsqrt()
        shift = self.bias - self.running_mean * scale
        shape = (1, -1) + (1,) * (x.dim() - 2)
        return x * scale.reshape(shape) + shift.reshape(shape)

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.eps}"
