"""A luma keyer run in fp16 for speed: a threshold on a computed half-precision value (CL302)."""
import torch
from torch import nn


class LumaKey(nn.Module):
    def __init__(self, threshold=0.6):
        super().__init__()
        self.threshold = threshold

    def forward(self, fg, bg):
        fg, bg = fg.half(), bg.half()
        luma = 0.299 * fg[:, 0:1] + 0.587 * fg[:, 1:2] + 0.114 * fg[:, 2:3]
        return torch.where(luma > self.threshold, bg, fg).float()
