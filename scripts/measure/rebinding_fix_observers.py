"""Which later uses of a name see that a fix rebound it to its compiled wrapper?

CL503, CL504 and CL502 fix `torch.compile(m)` (or `m.compile()`, `with torch.compile(m):`)
as `m = torch.compile(m)`: from there on `m` is an OptimizedModule (or, for a function,
the compiled function), no longer the object the code before held. The fix is safe only
where no later use of `m` can tell. This runs each kind of later use on the original
and on the rebound name, eagerly on CPU, and prints whether it behaves the same.

Run: python scripts/measure/rebinding_fix_observers.py   (torch 2.13 CPU; `backend="eager"`
is not needed: nothing is called compiled unless the use calls it)
"""
import copy
import io
import pickle
import warnings

import torch

warnings.filterwarnings("ignore")


class Up(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 1)

    def forward(self, x):
        return torch.nn.functional.interpolate(self.conv(x), scale_factor=2.0)


def up_fn(x):
    return x * 2


X = torch.rand(1, 3, 4, 4)


def outcome(use, obj):
    try:
        value = use(obj)
    except Exception as exc:  # what the user's script would see
        return f"raises {type(exc).__name__}: {str(exc).splitlines()[0][:90]}"
    return f"ok ({value})"


USES = {
    # called: what the fix is for
    "m(x)": lambda m: tuple(m(X).shape),
    "m.eval(); m.to('cpu')": lambda m: m.eval().to("cpu") is not None,
    "m.parameters()": lambda m: sum(p.numel() for p in m.parameters()),
    # handed to a tracer or exporter
    "torch.jit.trace(m, x)": lambda m: type(torch.jit.trace(m, X)).__name__,
    "torch.jit.script(m)": lambda m: type(torch.jit.script(m)).__name__,
    "torch.export.export(m, (x,))": lambda m: type(torch.export.export(m, (X,))).__name__,
    "torch.fx.symbolic_trace(m)": lambda m: type(torch.fx.symbolic_trace(m)).__name__,
    # serialized
    "pickle.dumps(m)": lambda m: len(pickle.dumps(m)) > 0,
    "torch.save(m, f)": lambda m: torch.save(m, io.BytesIO()) is None,
    "copy.deepcopy(m)": lambda m: type(copy.deepcopy(m)).__name__,
    # identity and type
    "m is original": lambda m: m is ORIGINAL[0],
    "type(m).__name__": lambda m: type(m).__name__,
    "isinstance(m, Up)": lambda m: isinstance(m, Up),
    # checkpoints
    "m.state_dict() keys": lambda m: sorted(m.state_dict())[:1],
    "m.load_state_dict(Up().state_dict())": lambda m: str(m.load_state_dict(Up().state_dict())),
    "m.named_parameters() names": lambda m: [n for n, _ in m.named_parameters()][:1],
}

ORIGINAL = [None]


def main() -> None:
    print(f"torch {torch.__version__}")
    for label, make in (("module", Up), ("function", lambda: up_fn)):
        print(f"\n## a {label}: m = {'Up()' if label == 'module' else 'up_fn'}; m = torch.compile(m)")
        print("| later use | the original | after the fix | the same? |")
        print("|---|---|---|---|")
        for name, use in USES.items():
            if label == "function" and name not in ("m(x)", "torch.jit.trace(m, x)", "torch.jit.script(m)",
                                                    "torch.export.export(m, (x,))", "torch.fx.symbolic_trace(m)",
                                                    "pickle.dumps(m)", "copy.deepcopy(m)", "m is original", "type(m).__name__"):
                continue
            torch.manual_seed(0)
            original = make()
            ORIGINAL[0] = original
            before = outcome(use, original)
            torch.compiler.reset()
            torch.manual_seed(0)
            original = make()
            ORIGINAL[0] = original
            after = outcome(use, torch.compile(original))
            same = before == after
            print(f"| `{name}` | {before} | {after} | {'yes' if same else '**no**'} |")


if __name__ == "__main__":
    main()
