"""CL201: which built-in `torch.nn` modules hold no parameters and no buffers?

A plain list of such modules (loss functions, activations, pooling) registers
nothing that matters: `parameters()`/`state_dict()` lose nothing and `.to()` has
nothing to move. Run: python scripts/measure/cl201_stateless_modules.py [--python]
(torch 2.13 CPU). Each public `torch.nn` Module class is built with its defaults
(or the first of a few sample arguments it accepts); it is "stateless" when every
construction that works has 0 parameters and 0 buffers, and its constructor takes no
argument that can add state (`weight`, `pos_weight`, `affine`, ...).
`--python` prints the set as Python source for compile_lint/rules/cl201_module_list_not_registered/stateless_modules.py.
"""
import inspect
import sys

import torch
from torch import nn

SAMPLES = [(), (2,), (2, 2), (4, 4, 4)]
STATEFUL_ARGS = {"weight", "pos_weight", "affine", "elementwise_affine", "track_running_stats", "bias", "learnable"}


def classify():
    stateless, weighted, stateful, unbuildable = [], [], [], []
    for name in sorted(dir(nn)):
        cls = getattr(nn, name)
        if not (isinstance(cls, type) and issubclass(cls, nn.Module)) or name.startswith("_"):
            continue
        if cls in (nn.Module, nn.ModuleList, nn.ModuleDict, nn.Sequential, nn.ParameterList, nn.ParameterDict):
            continue
        if name == "Container" or "module" in inspect.signature(cls.__init__).parameters:
            continue  # containers and wrappers (DataParallel) hold other modules
        built = []
        for args in SAMPLES:
            try:
                built.append(cls(*args))
            except Exception:
                continue
            break
        if not built:
            unbuildable.append(name)
            continue
        state = sum(1 for _ in built[0].parameters()) + sum(1 for _ in built[0].buffers())
        params = set(inspect.signature(cls.__init__).parameters)
        if state:
            stateful.append(name)
        elif params & {"weight", "pos_weight"} and not params & (STATEFUL_ARGS - {"weight", "pos_weight"}):
            weighted.append(name)  # stateless unless given a weight tensor (a buffer)
        elif params & STATEFUL_ARGS:
            stateful.append(name)
        else:
            stateless.append(name)
    return stateless, weighted, stateful, unbuildable


if __name__ == "__main__":
    stateless, weighted, stateful, unbuildable = classify()
    if "--python" in sys.argv:
        print("STATELESS = frozenset({" + ", ".join(repr(n) for n in stateless) + "})")
        print("STATELESS_WITHOUT_WEIGHT = frozenset({" + ", ".join(repr(n) for n in weighted) + "})")
    else:
        print(f"torch {torch.__version__}")
        print(f"stateless ({len(stateless)}): {' '.join(stateless)}")
        print(f"stateless without a weight argument ({len(weighted)}): {' '.join(weighted)}")
        print(f"stateful or may be ({len(stateful)}): {' '.join(stateful)}")
        print(f"not built with sample arguments, treated as stateful ({len(unbuildable)}): {' '.join(unbuildable)}")
