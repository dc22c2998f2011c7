"""CL104: a static export of a model that resizes accepts only the example's size.

Run: python scripts/measure/cl104_static_export.py   (torch 2.13 CPU)
Exports a 2x nearest upscaler at 16x16 without dynamic shapes, then runs it at 24x32:
prints the error. With `dynamic_shapes=({2: Dim.AUTO, 3: Dim.AUTO},)` it runs.
"""
import torch
import torch.nn.functional as F
from torch.export import Dim


class Up(torch.nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=2, mode="nearest")


if __name__ == "__main__":
    example = torch.rand(1, 3, 16, 16)
    other = torch.rand(1, 3, 24, 32)
    static = torch.export.export(Up(), (example,)).module()
    try:
        static(other)
        print("static export: ran at 24x32 (no hazard)")
    except Exception as exc:  # the guard error names the specialised size
        print(f"static export at 24x32: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
    dynamic = torch.export.export(Up(), (example,), dynamic_shapes=({2: Dim.AUTO, 3: Dim.AUTO},)).module()
    print(f"dynamic export at 24x32: output {tuple(dynamic(other).shape)}")
