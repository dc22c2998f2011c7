"""Weights changed after the first compiled call: does the compiled module see them?

Run: python scripts/measure/weights_swapped_after_compile.py   (torch 2.13 CPU)
Net = Linear(4, 4) plus a plain tensor attribute `self.scale` (neither parameter nor
buffer) and a buffer `self.shift`. After a first compiled call, the weights are changed
one way, then the compiled output is compared with eager on the same, changed module:
max |compiled - eager|; <= 1e-5 (rounding) = the change is seen; graphs = graphs compiled in all (2 = the
change recompiled). Both calls run under torch.no_grad(): a grad-mode change alone recompiles. Ways: `load_state_dict` (copies into
the same tensors), `load_state_dict(assign=True)` (new tensors), a new `nn.Parameter`,
a new submodule, `.data =`, in-place `copy_`, a new plain tensor attribute, a new
buffer; for `torch.compile(net)` and `net.compile()`, backends eager, aot_eager and
inductor (a compiled function that calls a global module too); last, inductor with the
opt-in `torch._inductor.config.freezing = True`.
"""
import warnings

import torch
from torch._dynamo.utils import counters

from measure_env import header, verdict

warnings.filterwarnings("ignore")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.scale = torch.tensor(1.0)
        self.register_buffer("shift", torch.zeros(4))

    def forward(self, x):
        return self.proj(x) * self.scale + self.shift


def other_state():
    torch.manual_seed(1)
    return Net().state_dict()


def swap_load(net):
    net.load_state_dict(other_state())


def swap_assign(net):
    net.load_state_dict(other_state(), assign=True)


def swap_parameter(net):
    net.proj.weight = torch.nn.Parameter(torch.randn(4, 4))


def swap_submodule(net):
    net.proj = torch.nn.Linear(4, 4)


def swap_data(net):
    net.proj.weight.data = torch.randn(4, 4)


def swap_copy(net):
    with torch.no_grad():
        net.proj.weight.copy_(torch.randn(4, 4))


def swap_plain_tensor(net):
    net.scale = torch.tensor(3.0)


def swap_buffer(net):
    net.shift = torch.ones(4)


SWAPS = {
    "load_state_dict(sd)": swap_load,
    "load_state_dict(sd, assign=True)": swap_assign,
    "proj.weight = nn.Parameter(...)": swap_parameter,
    "proj = nn.Linear(...)": swap_submodule,
    "proj.weight.data = ...": swap_data,
    "proj.weight.copy_(...)": swap_copy,
    "scale = tensor(3.0) (plain attribute)": swap_plain_tensor,
    "shift = ones (buffer)": swap_buffer,
}
GLOBAL_NET = None


def calls_global(x):
    return GLOBAL_NET(x)


def measure(swap, spelling, backend):
    global GLOBAL_NET
    torch.compiler.reset()
    counters.clear()
    torch.manual_seed(0)
    net = Net()
    if spelling == "torch.compile(net)":
        model = torch.compile(net, backend=backend)
    elif spelling == "net.compile()":
        net.compile(backend=backend)
        model = net
    else:
        GLOBAL_NET = net
        model = torch.compile(calls_global, backend=backend)
    x = torch.randn(2, 4)
    with torch.no_grad():  # both calls in the same grad mode: a mode change alone recompiles
        model(x)
        swap(net)
        compiled = model(x)
        eager = Net.forward(net, x)
    return (compiled - eager).abs().max().item(), counters["stats"].get("unique_graphs", 0)


if __name__ == "__main__":
    header("weights swapped or loaded after the first compiled call")
    stale = []
    recompiled = 0
    for backend in ("eager", "aot_eager", "inductor"):
        spellings = ("torch.compile(net)", "net.compile()", "compiled fn calling a global net")
        for spelling in spellings if backend != "inductor" else spellings[:1]:
            for text, swap in SWAPS.items():
                diff, graphs = measure(swap, spelling, backend)
                state = "seen" if diff <= 1e-5 else "STALE"
                print(f"{backend:9} {spelling:32} {text:40} max diff {diff:.4g} ({state}), graphs {graphs}")
                recompiled += graphs > 1
                if diff > 1e-5:
                    stale.append(f"{backend} {spelling} {text} ({diff:.3g})")
    frozen = []
    for text in ("load_state_dict(sd)", "load_state_dict(sd, assign=True)", "proj.weight.copy_(...)"):
        with torch._inductor.config.patch(freezing=True):
            diff, graphs = measure(SWAPS[text], "torch.compile(net)", "inductor")
        print(f"inductor, torch._inductor.config.freezing=True (opt-in), torch.compile(net) {text:32} "
              f"max diff {diff:.4g} ({'seen' if diff <= 1e-5 else 'STALE'}), graphs {graphs}")
        frozen.append(f"{text} {diff:.3g}")
    print(f"(opt-in freezing under no_grad folds weights into the code: {'; '.join(frozen)})")
    verdict(bool(stale), f"{len(stale)} stale: {'; '.join(stale)}" if stale else
            f"every change is seen by the compiled module (max diff 0 in all cases; {recompiled} of them recompiled)")
