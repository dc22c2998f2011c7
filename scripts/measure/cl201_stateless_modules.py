"""CL201: which built-in `torch.nn` modules lose nothing when kept in a plain list?

A module kept in a Python list/dict attribute is not registered with its owner. What
the owner then fails to carry to it: `parameters()`/`state_dict()` (its parameters and
buffers), `.to()`/`.cuda()`/`.half()` (the same tensors) and `train()`/`eval()` (its
`training` flag). A module with no parameters, no buffers and a `forward` that does not
read `self.training` loses nothing (loss functions, activations, pooling, padding,
`Unflatten`). Dropout and RReLU hold nothing either but do read `self.training`: in a
plain list, `model.eval()` leaves them in training mode and inference keeps dropping
(`--demo` shows both on torch 2.13 CPU).

Run: python scripts/measure/cl201_stateless_modules.py [--python | --demo]
Each public `torch.nn` Module class is built with its defaults (or the first of a few
sample arguments it accepts); it is "stateless" when the construction has 0 parameters
and 0 buffers, its constructor takes no argument that can add state (`weight`,
`pos_weight`, `affine`, ...) and its `forward` does not read `self.training`.
`--python` prints the sets as Python source for
compile_lint/rules/cl201_module_list_not_registered/stateless_modules.py.
"""
import inspect
import sys

import torch
from torch import nn

SAMPLES = [(), (2,), (2, 2), (4, 4, 4), (1, (2, 2))]
STATEFUL_ARGS = {"weight", "pos_weight", "affine", "elementwise_affine", "track_running_stats", "bias", "learnable"}


def reads_training(cls) -> bool:
    """`forward` (of the class or a base below nn.Module) reads `self.training`."""
    for klass in cls.__mro__:
        if klass is nn.Module:
            return False
        forward = klass.__dict__.get("forward")
        if forward is not None:
            return "self.training" in inspect.getsource(forward)
    return False


def classify():
    stateless, weighted, mode, stateful, unbuildable = [], [], [], [], []
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
        elif reads_training(cls):
            mode.append(name)  # holds nothing, but train()/eval() must reach it
        else:
            stateless.append(name)
    return stateless, weighted, mode, stateful, unbuildable


class Plain(nn.Module):
    def __init__(self, items):
        super().__init__()
        self.items = items  # a plain list or dict: nothing registered

    def forward(self, x):
        for m in (self.items.values() if hasattr(self.items, "values") else self.items):
            x = m(x)
        return x


class Registered(Plain):
    def __init__(self, items):
        nn.Module.__init__(self)
        self.items = nn.ModuleDict(items) if isinstance(items, dict) else nn.ModuleList(items)


def demo() -> None:
    """The owner's view of a plain container against a registered one."""
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    for label, make in (
        ("dict of Unflatten + Flatten", lambda: {"u": nn.Unflatten(1, (2, 4)), "f": nn.Flatten()}),
        ("list of Dropout(0.5)", lambda: [nn.Dropout(0.5)]),
        ("list of RReLU", lambda: [nn.RReLU()]),
        ("list of Linear(8, 8)", lambda: [nn.Linear(8, 8)]),
    ):
        plain, registered = Plain(make()), Registered(make())
        if isinstance(plain.items, list) and any(list(m.parameters()) for m in plain.items):
            registered.load_state_dict({f"items.{i}.{k}": v for i, m in enumerate(plain.items) for k, v in m.state_dict().items()})
        lost_keys = len(registered.state_dict()) - len(plain.state_dict())
        lost_params = len(list(registered.parameters())) - len(list(plain.parameters()))
        plain.eval(), registered.eval()
        eval_same = torch.equal(plain(x), registered(x))
        plain.to(torch.float64), registered.to(torch.float64)
        try:
            to_same = torch.equal(plain(x.double()), registered(x.double()))
        except RuntimeError as exc:
            to_same = f"fails: {str(exc)[:60]}"
        print(f"{label:30} parameters lost: {lost_params}  state_dict keys lost: "
              f"{lost_keys}  after eval() same output: {eval_same}  "
              f"after .to(float64) same output: {to_same}")


if __name__ == "__main__":
    if "--demo" in sys.argv:
        print(f"torch {torch.__version__}")
        demo()
        sys.exit(0)
    stateless, weighted, mode, stateful, unbuildable = classify()
    if "--python" in sys.argv:
        print("STATELESS = frozenset({" + ", ".join(repr(n) for n in stateless) + "})")
        print("STATELESS_WITHOUT_WEIGHT = frozenset({" + ", ".join(repr(n) for n in weighted) + "})")
        print("TRAINING_MODE = frozenset({" + ", ".join(repr(n) for n in mode) + "})")
    else:
        print(f"torch {torch.__version__}")
        print(f"stateless ({len(stateless)}): {' '.join(stateless)}")
        print(f"stateless without a weight argument ({len(weighted)}): {' '.join(weighted)}")
        print(f"no state, but forward reads self.training ({len(mode)}): {' '.join(mode)}")
        print(f"stateful or may be ({len(stateful)}): {' '.join(stateful)}")
        print(f"not built with sample arguments, treated as stateful ({len(unbuildable)}): {' '.join(unbuildable)}")
