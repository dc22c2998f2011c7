"""Tensors made under `torch.inference_mode()` vs outside: does a compiled function
recompile when it gets both, and does calling it inside vs outside inference_mode?

Run: python scripts/measure/inference_mode_recompile.py   (torch 2.13 CPU, backend="eager")
A compiled `Linear(8, 8)` module (parameters without grad) and a compiled plain function. Each sequence of calls
starts from `torch.compiler.reset()`; counted: graphs (stats unique_graphs). "normal" =
a tensor made outside inference_mode; "inference" = made under it; "(in mode)" = the
call itself runs under inference_mode; "(no_grad)" = under torch.no_grad().
"""
import warnings

import torch
from torch._dynamo.utils import counters

from measure_env import header, verdict

warnings.filterwarnings("ignore")


def normal():
    return torch.ones(4, 8)


def inference():
    with torch.inference_mode():
        return torch.ones(4, 8)


def plain(x):
    return torch.tanh(x) * 2


SEQUENCES = {
    "normal, normal": [("normal", None)] * 2,
    "normal, inference": [("normal", None), ("inference", None)],
    "inference, normal": [("inference", None), ("normal", None)],
    "normal, inference, normal, inference": [("normal", None), ("inference", None)] * 2,
    "normal, normal (in mode)": [("normal", None), ("normal", "inference_mode")],
    "normal, normal (no_grad)": [("normal", None), ("normal", "no_grad")],
    "inference (in mode), inference (in mode)": [("inference", "inference_mode")] * 2,
    "normal (no_grad), inference (no_grad)": [("normal", "no_grad"), ("inference", "no_grad")],
}


def run(target, sequence):
    torch.compiler.reset()
    counters.clear()
    torch.manual_seed(0)
    # parameters without grad, as in a model used for inference: an inference tensor
    # cannot meet a grad-requiring weight outside no_grad, eagerly either
    module = torch.nn.Linear(8, 8).requires_grad_(False)
    fn = torch.compile(module if target == "module" else plain, backend="eager")
    for kind, mode in sequence:
        x = normal() if kind == "normal" else inference()
        if mode == "inference_mode":
            with torch.inference_mode():
                fn(x)
        elif mode == "no_grad":
            with torch.no_grad():
                fn(x)
        else:
            fn(x)
    return counters["stats"].get("unique_graphs", 0)


if __name__ == "__main__":
    header("inference_mode tensors and compiled code")
    results = {}
    for target in ("module", "function"):
        for text, sequence in SEQUENCES.items():
            graphs = results[(target, text)] = run(target, sequence)
            print(f"{target:8} {text:44} graphs {graphs}")
    mixed = results[("module", "normal, inference")]
    alternating = results[("module", "normal, inference, normal, inference")]
    verdict(mixed > 1,
            f"module: normal then inference tensor {mixed} graphs, alternating 4 calls {alternating}; "
            f"function: {results[('function', 'normal, inference')]} / "
            f"{results[('function', 'normal, inference, normal, inference')]}; a call under inference_mode "
            f"after a normal one: {results[('module', 'normal, normal (in mode)')]} graphs, as under no_grad "
            f"{results[('module', 'normal, normal (no_grad)')]}: one recompile per kind, then cached, not a storm")
