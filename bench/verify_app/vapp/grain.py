"""Film grain for the preview player: random noise in the compiled region (CL303)."""
import torch
from torch import nn


class FilmGrain(nn.Module):
    def __init__(self, amount=0.08):
        super().__init__()
        self.amount = amount

    def forward(self, frame):
        return (frame + torch.randn_like(frame) * self.amount).clamp(0, 1)
