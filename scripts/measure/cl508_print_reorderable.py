"""CL508: does `print` in a compiled function break the graph, with and without
`print` in `torch._dynamo.config.reorderable_logging_functions`?

Run: python scripts/measure/cl508_print_reorderable.py   (torch 2.13 CPU)
Prints one line per print spelling: graph breaks without and with `print` reorderable
(counted from torch._dynamo.utils.counters["graph_break"], reset between runs).
Measured on 2.13: every spelling breaks once when not reorderable; when reorderable,
only a bare `torch.Size` argument (`y.shape`, `y.size()`) still breaks; tensors,
constants, f-strings (even of a shape), `y.shape[0]` and `y.dtype` do not.
"""
import contextlib
import io

import torch
import torch._dynamo
from torch._dynamo.utils import counters

SPELLINGS = {
    "print('step', y)": lambda y: print("step", y),
    "print('step', 3)": lambda y: print("step", 3),
    "print(f'{y.shape}')": lambda y: print(f"{y.shape}"),
    "print(y.shape[0])": lambda y: print(y.shape[0]),
    "print(y.dtype)": lambda y: print(y.dtype),
    "print(y.sum())": lambda y: print(y.sum()),
    "print(y.shape)": lambda y: print(y.shape),
    "print(y.size())": lambda y: print(y.size()),
}


def breaks(body, reorderable: bool) -> int:
    def f(x):
        y = x * 2
        body(y)
        return y + 1

    torch.compiler.reset()
    counters.clear()
    functions = {print} if reorderable else set()
    with torch._dynamo.config.patch(reorderable_logging_functions=functions):
        with contextlib.redirect_stdout(io.StringIO()):
            torch.compile(f, backend="eager")(torch.ones(3))
    return sum(counters["graph_break"].values())


if __name__ == "__main__":
    print(f"{'spelling':24} not-reorderable reorderable")
    for text, body in SPELLINGS.items():
        print(f"{text:24} {breaks(body, False):15} {breaks(body, True):11}")
