"""PNG artifacts for divergent image-shaped outputs: eager | compiled | amplified difference,
with a scale bar under the difference panel (black = 0, white = the largest difference,
both values written beside it), of the output that differs most.

The PNG encoder is zlib + struct (no imaging dependency); numbers are drawn with a 3x5
pixel font. Tensors are converted inside `save_comparison`, which only the worker calls.
"""
from __future__ import annotations

import os
import re
import struct
import zlib
from typing import Optional

GAP = 2  # pixels of white between the panels
MIN_HEIGHT = 96  # tiny outputs are scaled up by whole pixels so they can be seen
BAR_ROWS = 16  # the scale bar strip under the panels: gradient, then labels
GLYPH_SCALE = 1
# 3x5 glyphs, rows top to bottom, 3 bits each (left = 4)
_GLYPHS = {
    "0": (7, 5, 5, 5, 7), "1": (2, 6, 2, 2, 7), "2": (7, 1, 7, 4, 7), "3": (7, 1, 7, 1, 7),
    "4": (5, 5, 7, 1, 1), "5": (7, 4, 7, 1, 7), "6": (7, 4, 7, 5, 7), "7": (7, 1, 1, 1, 1),
    "8": (7, 5, 7, 5, 7), "9": (7, 5, 7, 1, 7), ".": (0, 0, 0, 0, 2), "-": (0, 0, 7, 0, 0),
    "e": (0, 7, 7, 4, 7), "+": (0, 2, 7, 2, 0), " ": (0, 0, 0, 0, 0),
}


def text_mask(text: str) -> list[list[bool]]:
    """Rows of a 5-pixel-high bitmap of `text` (digits, '.', '-', '+', 'e')."""
    rows = [[] for _ in range(5)]
    for char in text:
        glyph = _GLYPHS.get(char, _GLYPHS[" "])
        for y in range(5):
            rows[y] += [bool(glyph[y] & bit) for bit in (4, 2, 1)] + [False]
    return rows


def _scale_bar(torch, width: int, peak: float):
    """A (3, BAR_ROWS, width) strip: a black-to-white gradient over 0..peak, labelled."""
    bar = torch.ones(3, BAR_ROWS, width)
    ramp = torch.linspace(0.0, 1.0, width)
    bar[:, 2:7, :] = ramp
    for text, right in (("0", False), (f"{peak:.3g}", True)):
        mask = torch.tensor(text_mask(text), dtype=torch.bool)
        w = min(mask.shape[1], width)
        x0 = width - w if right else 0
        region = bar[:, 9:14, x0:x0 + w]
        region[:, mask[:, :w]] = 0.0
    return bar


def encode_png(width: int, height: int, rgb: bytes) -> bytes:
    """An 8-bit RGB PNG of `rgb` (height rows of width*3 bytes)."""
    if len(rgb) != width * height * 3:
        raise ValueError("rgb must hold width*height*3 bytes")

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    stride = width * 3
    rows = b"".join(b"\x00" + rgb[y * stride:(y + 1) * stride] for y in range(height))  # filter 0 per row
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


def is_image_shaped(shape) -> bool:
    return len(shape) == 4 and shape[1] in (1, 3, 4) and shape[2] > 0 and shape[3] > 0


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")[:150]


def most_different(eager: list, compiled: list) -> Optional[int]:
    """Index of the image-shaped output pair that differs most (None: none is image-shaped)."""
    import torch

    best, best_diff = None, -1.0
    for index, (e, c) in enumerate(zip(eager, compiled)):
        if not (isinstance(e, torch.Tensor) and isinstance(c, torch.Tensor)) or e.shape != c.shape \
                or not is_image_shaped(e.shape):
            continue
        diff = (e.detach().double() - c.detach().double()).abs().nan_to_num(nan=float("inf")).max().item()
        if diff > best_diff:
            best, best_diff = index, diff
    return best


def save_comparison(folder: str, name: str, eager, compiled) -> Optional[str]:
    """Write folder/name.png for the first image of two (N, 1|3|4, H, W) tensors; None
    when the outputs are not image-shaped or differ in shape."""
    import torch

    if not (isinstance(eager, torch.Tensor) and isinstance(compiled, torch.Tensor)):
        return None
    if eager.shape != compiled.shape or not is_image_shaped(eager.shape):
        return None
    first_eager = eager[0, :3].detach().float().cpu()
    first_compiled = compiled[0, :3].detach().float().cpu()
    diff = (first_compiled - first_eager).abs().nan_to_num(nan=0.0, posinf=0.0)
    peak = diff.max().item()
    amplified = diff / peak if peak > 0 else diff  # the largest difference shows white
    panels = [first_eager.clamp(0, 1), first_compiled.clamp(0, 1), amplified]
    panels = [p.expand(3, -1, -1) if p.shape[0] == 1 else p for p in panels]
    scale = max(1, -(-MIN_HEIGHT // panels[0].shape[1]))
    panels = [p.repeat_interleave(scale, 1).repeat_interleave(scale, 2) for p in panels]
    height = panels[0].shape[1]
    gap = torch.ones(3, height, GAP)
    strip = torch.cat([panels[0], gap, panels[1], gap, panels[2]], dim=2)
    under = torch.ones(3, BAR_ROWS, strip.shape[2])
    bar = _scale_bar(torch, panels[2].shape[2], peak)
    under[:, :, strip.shape[2] - bar.shape[2]:] = bar  # under the difference panel
    strip = torch.cat([strip, under], dim=1)
    pixels = (strip.permute(1, 2, 0) * 255).round().to(torch.uint8).contiguous()
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, _safe_name(name) + ".png")
    with open(path, "wb") as fh:
        fh.write(encode_png(strip.shape[2], strip.shape[1], bytes(pixels.flatten().tolist())))
    return path
