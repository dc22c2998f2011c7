"""A small training script for bench/record_overhead.py: a conv net, compiled, trained on
random images; prints the median time of one step after warm-up ("step_ms 1.234")."""
import argparse
import statistics
import time

import torch
from torch import nn


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 3, 3, padding=1),
        )

    def forward(self, x):
        return torch.sigmoid(self.body(x) + x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--backend", default=None)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = SmallNet()
    kwargs = {"backend": args.backend} if args.backend else {}
    compiled = torch.compile(model, **kwargs)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.rand(4, 3, 32, 32)
    times = []
    for step in range(args.steps):
        start = time.perf_counter()
        loss = (compiled(x) - x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step >= 5:
            times.append(time.perf_counter() - start)
    print(f"loss {loss.item():.4f}")
    print(f"step_ms {statistics.median(times) * 1000:.3f}")


if __name__ == "__main__":
    main()
