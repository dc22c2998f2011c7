"""A layer built lazily in `forward` (`if self.proj is None: self.proj = nn.Linear(...)`)
under torch.compile: what breaks, on which call, and what an eager warm-up call changes.

Run: python scripts/measure/lazy_layer_first_call.py   (torch 2.13 CPU, backend="eager")

The module is compiled and called three times at one shape, after `torch.compiler.reset()`,
once cold and once after one eager call (Flow-TimesNet's `model(dummy, **warmup_kwargs)`
before `maybe_compile`, bench/fresh_reads batch 48). Printed: Dynamo's graph-break
counter (`torch._dynamo.utils.counters["graph_break"]`, the reason's GB id), the number of
distinct graphs and of calls captured. The question it answers for CL508, which reports
the layer's construction as a break (GB0264): is it a break of every call, of the first
only, or of none?
"""
import re
import warnings

import torch
import torch._dynamo
from torch import nn
from torch._dynamo.utils import counters

from measure_env import header, verdict

warnings.filterwarnings("ignore")


class LazyHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = None

    def forward(self, x):
        if self.proj is None:
            self.proj = nn.Linear(x.shape[-1], 4)
        return self.proj(x).relu()


def run(warm: bool) -> tuple[dict, int]:
    torch.compiler.reset()
    counters.clear()
    module = LazyHead()
    x = torch.randn(2, 8)
    if warm:
        module(x)
    compiled = torch.compile(module, backend="eager")
    for _ in range(3):
        compiled(x)
    breaks = {}
    for reason, count in counters["graph_break"].items():
        ids = re.findall(r"gb(\d{4})\.html", reason)
        key = f"GB{ids[0]}" if ids else reason.splitlines()[0][:60]
        breaks[key] = breaks.get(key, 0) + count
    graphs = counters["stats"]["unique_graphs"]
    print(f"{'warm' if warm else 'cold'}: graph breaks {breaks or 'none'}, distinct graphs {graphs}, "
          f"calls captured {counters['stats']['calls_captured']}")
    return breaks, graphs


def main() -> None:
    header("a layer built lazily in forward, compiled cold and after an eager warm-up call")
    cold_breaks, cold_graphs = run(warm=False)
    warm_breaks, warm_graphs = run(warm=True)
    once = sum(cold_breaks.values()) == 1 and cold_graphs == 2
    verdict(once and not warm_breaks and warm_graphs == 1,
            "cold, the first compiled call breaks once (the layer's construction) and Dynamo "
            "recompiles once, after which the branch is not traced; after an eager warm-up call "
            "nothing breaks and one graph serves every call")


if __name__ == "__main__":
    main()
