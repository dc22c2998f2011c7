"""PNG artifacts for divergent image-shaped outputs: eager | compiled | amplified difference.

The PNG encoder is zlib + struct (no imaging dependency). Tensors are converted inside
`save_comparison`, which only the worker calls.
"""
from __future__ import annotations

import os
import re
import struct
import zlib
from typing import Optional

GAP = 2  # pixels of white between the panels
MIN_HEIGHT = 96  # tiny outputs are scaled up by whole pixels so they can be seen


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
    diff = (first_compiled - first_eager).abs()
    peak = diff.max().item()
    amplified = diff / peak if peak > 0 else diff  # the largest difference shows white
    panels = [first_eager.clamp(0, 1), first_compiled.clamp(0, 1), amplified]
    panels = [p.expand(3, -1, -1) if p.shape[0] == 1 else p for p in panels]
    scale = max(1, -(-MIN_HEIGHT // panels[0].shape[1]))
    panels = [p.repeat_interleave(scale, 1).repeat_interleave(scale, 2) for p in panels]
    height = panels[0].shape[1]
    gap = torch.ones(3, height, GAP)
    strip = torch.cat([panels[0], gap, panels[1], gap, panels[2]], dim=2)
    pixels = (strip.permute(1, 2, 0) * 255).round().to(torch.uint8).contiguous()
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, _safe_name(name) + ".png")
    with open(path, "wb") as fh:
        fh.write(encode_png(strip.shape[2], height, bytes(pixels.flatten().tolist())))
    return path
