"""Layer compositing for the editor: alpha over, screen, multiply and a display gamma, fp32."""
import torch
from torch import nn


class Compositor(nn.Module):
    def __init__(self, gamma=2.2, screen_amount=0.3):
        super().__init__()
        self.gamma = gamma
        self.screen_amount = screen_amount

    def forward(self, fg, bg, mask):
        over = fg * mask + bg * (1 - mask)
        screen = 1 - (1 - over) * (1 - fg)
        mixed = over + self.screen_amount * (screen - over)
        shaded = mixed * (0.5 + 0.5 * bg)
        return shaded.clamp(0, 1) ** (1 / self.gamma)
