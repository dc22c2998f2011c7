"""CL103: at which input sizes does compiled nearest resizing by a fractional scale
differ from eager?

Run: python scripts/measure/cl103_sizes.py [--max-size 519] [--no-inductor]   (torch 2.13 CPU)

For each scale, eager `F.interpolate(x, scale_factor=s, mode="nearest")` on square
inputs of 2..max-size px is compared with the decomposition of `upsample_nearest2d`
that aot_eager and Inductor share (torch._decomp); it prints how many sizes differ and
the range of those sizes. Then a few shapes go through real Inductor
(`torch.compile(..., backend="inductor")`) to confirm the decomposition's verdict.
"""
import argparse
import warnings

import torch
import torch.nn.functional as F
from torch._decomp import decomposition_table

warnings.filterwarnings("ignore")
SCALES = [1.01, 1.05, 1.1, 1.2, 1.25, 1.3, 1.333, 1.4, 1.45, 1.5, 1.7, 1.9, 2.0, 2.2, 2.4, 2.5, 3.0,
          0.5, 0.6, 0.7, 0.75, 0.9]
INDUCTOR_SHAPES = {1.3: [(3, 8), (9, 14), (64, 69), (257, 262)], 1.1: [(3, 3), (9, 9), (64, 64), (257, 257)]}
DECOMP = decomposition_table[torch.ops.aten.upsample_nearest2d.vec]


def eager(x, s):
    return F.interpolate(x, scale_factor=s, mode="nearest")


def differs(a, b) -> bool:
    return a.shape != b.shape or not torch.equal(a, b)


def sweep(max_size: int):
    print(f"eager vs the shared decomposition, square inputs 2..{max_size} px")
    for s in SCALES:
        bad = []
        for n in range(2, max_size + 1):
            x = torch.arange(float(n * n)).reshape(1, 1, n, n)
            if differs(eager(x, s), DECOMP(x, None, [s, s])):
                bad.append(n)
        where = f" ({bad[0]}-{bad[-1]} px)" if bad else ""
        print(f"  s={s:<6} {len(bad):4} of {max_size - 1} sizes differ{where}")


def inductor():
    print("eager vs Inductor")
    for s, shapes in INDUCTOR_SHAPES.items():
        fn = torch.compile(lambda x, s=s: eager(x, s), backend="inductor", dynamic=False)
        for h, w in shapes:
            torch._dynamo.reset()
            x = torch.arange(float(h * w)).reshape(1, 1, h, w)
            verdict = "differs" if differs(eager(x, s), fn(x)) else "identical"
            print(f"  s={s} {h}x{w}: {verdict}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-size", type=int, default=519)
    parser.add_argument("--no-inductor", action="store_true")
    args = parser.parse_args()
    sweep(args.max_size)
    if not args.no_inductor:
        inductor()
