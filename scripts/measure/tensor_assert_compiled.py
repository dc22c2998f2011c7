"""A failing `assert` on a tensor inside compiled code: which exception, if any?

Run: python scripts/measure/tensor_assert_compiled.py   (torch 2.13 CPU)
Each function asserts something false about its input (all ones): a tensor condition
(`assert (x < 0).all()`, with and without a message, `assert torch.all(x < 0)`,
`assert bool(...)` of one), a
Python condition on a shape (`assert x.shape[0] > 4`) and `torch._assert(...)`. Run
eagerly, then compiled with backends eager, aot_eager and inductor (fresh compile per
case). Reported: the exception type and message, or "no error" (the assert vanished),
with the graphs compiled and graph breaks counted (one graph: no break).
`except AssertionError` handlers only see AssertionError.
"""
import warnings

import torch
from torch._dynamo.utils import counters

from measure_env import header, verdict

warnings.filterwarnings("ignore")


def tensor_all(x):
    assert (x < 0).all()
    return x + 1


def tensor_all_message(x):
    assert (x < 0).all(), "x must be negative"
    return x + 1


def torch_all(x):
    assert torch.all(x < 0), "x must be negative"
    return x + 1


def bool_of_tensor(x):
    assert bool((x < 0).all()), "x must be negative"
    return x + 1


def shape_check(x):
    assert x.shape[0] > 4, "batch too small"
    return x + 1


def torch_assert(x):
    torch._assert((x < 0).all(), "x must be negative")
    return x + 1


CASES = {
    "assert (x < 0).all()": tensor_all,
    "assert (x < 0).all(), msg": tensor_all_message,
    "assert torch.all(x < 0), msg": torch_all,
    "assert bool(tensor), msg": bool_of_tensor,
    "assert x.shape[0] > 4, msg": shape_check,
    "torch._assert(tensor, msg)": torch_assert,
}


def outcome(fn, backend):
    if backend:
        torch.compiler.reset()
        counters.clear()
        fn = torch.compile(fn, backend=backend)
    try:
        fn(torch.ones(2))
        result = "no error"
    except Exception as error:
        result = f"{type(error).__name__}: {str(error).splitlines()[0][:60]}" if str(error) else type(error).__name__
    if backend:
        result += f"   (graphs {counters['stats'].get('unique_graphs', 0)}, breaks {sum(counters['graph_break'].values())})"
    return result


if __name__ == "__main__":
    header("tensor assert under torch.compile")
    changed = []
    for text, fn in CASES.items():
        eager = outcome(fn, None)
        print(f"{text:30} eager      {eager}")
        for backend in ("eager", "aot_eager", "inductor"):
            result = outcome(fn, backend)
            print(f"{'':30} {backend:10} {result}")
            if result.split(":")[0].split(" ")[0] != eager.split(":")[0]:
                changed.append(f"{text} [{backend}]: {result.split(':')[0]}")
    verdict(bool(changed), f"exception type differs from eager's AssertionError in {len(changed)} cases: "
            + "; ".join(changed))
