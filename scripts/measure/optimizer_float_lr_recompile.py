"""A compiled optimizer step with a Python float learning rate that a scheduler changes:
does every step recompile? And with a tensor learning rate?

Run: python scripts/measure/optimizer_float_lr_recompile.py   (torch 2.13 CPU, backend="eager")
Linear(16, 16), Adam or SGD, `@torch.compile def step(): opt.step()`, a LambdaLR that
changes the rate every step, 12 steps (backend eager; Adam also with inductor). Counted from torch._dynamo.utils.counters
(reset per case): graphs compiled (stats unique_graphs), frames total / ok (a frame
past the recompile limit runs eagerly). Cases: float lr with the scheduler, float lr
without a scheduler (constant rate), `lr=torch.tensor(0.01)` with the scheduler.
Also reads the recompile limit in the installed torch and 2.14.1/2.15.0 wheels.
"""
import re
import warnings

import torch
from torch._dynamo.utils import counters

from measure_env import header, torch_sources, verdict

warnings.filterwarnings("ignore")
STEPS = 12


def run(optimizer_class, lr, schedule, backend="eager"):
    torch.compiler.reset()
    counters.clear()
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 16)
    opt = optimizer_class(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0 / (1 + step)) if schedule else None

    @torch.compile(backend=backend)
    def step():
        opt.step()

    for _ in range(STEPS):
        model(torch.ones(4, 16)).sum().backward()
        step()
        opt.zero_grad()
        if scheduler:
            scheduler.step()
    frames = counters["frames"]
    return counters["stats"].get("unique_graphs", 0), frames.get("total", 0), frames.get("ok", 0)


if __name__ == "__main__":
    header("compiled optimizer step: float vs tensor learning rate")
    results = {}
    for name, optimizer_class in (("Adam", torch.optim.Adam), ("SGD", torch.optim.SGD)):
        for text, lr, schedule in (("float lr, LambdaLR every step", 0.01, True),
                                   ("float lr, constant", 0.01, False),
                                   ("tensor lr, LambdaLR every step", torch.tensor(0.01), True)):
            graphs, total, ok = run(optimizer_class, lr, schedule)
            results[(name, text)] = graphs
            print(f"{name:5} {text:32} {STEPS} steps: graphs {graphs}, frames total {total} ok {ok}")
    graphs, total, ok = run(torch.optim.Adam, 0.01, True, backend="inductor")
    results[("Adam", "inductor")] = graphs
    print(f"Adam  float lr, LambdaLR, inductor {STEPS} steps: graphs {graphs}, frames total {total} ok {ok}")
    print("recompile limit and float specialization by release:")
    for version, text in torch_sources("torch/_dynamo/config.py").items():
        limit = re.search(r"^recompile_limit\s*=\s*(\d+)", text, re.M)
        floats = re.search(r"^specialize_float\s*=\s*(\w+)", text, re.M)
        print(f"  {version}: recompile_limit = {limit.group(1) if limit else 'absent'}, "
              f"specialize_float = {floats.group(1) if floats else 'absent'}")
    float_adam = results[("Adam", "float lr, LambdaLR every step")]
    tensor_adam = results[("Adam", "tensor lr, LambdaLR every step")]
    verdict(float_adam > tensor_adam + 1,
            f"Adam, {STEPS} steps, lr changed every step: float lr {float_adam} graphs, tensor lr {tensor_adam}; "
            f"SGD: float {results[('SGD', 'float lr, LambdaLR every step')]}, tensor "
            f"{results[('SGD', 'tensor lr, LambdaLR every step')]}; constant float lr: Adam "
            f"{results[('Adam', 'float lr, constant')]}; inductor, float lr: {results[('Adam', 'inductor')]} "
            f"(one recompile when the rate first changes, then the float is dynamic)")
