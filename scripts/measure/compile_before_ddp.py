"""`DistributedDataParallel(torch.compile(model))` vs `torch.compile(DDP(model))`.

Run: python scripts/measure/compile_before_ddp.py   (torch 2.13 CPU, gloo, world size 1)
A user-defined 4-layer MLP (1 MB of weights a layer) under DDP with `bucket_cap_mb=1`,
so that DDP makes several gradient buckets. For each order: the graphs the backend
receives (a counting backend: how many, and their op counts; Dynamo's DDPOptimizer
splits the graph at bucket boundaries so that each bucket's all-reduce can start while
the backward of earlier layers still runs), the first state_dict key, and whether the
gradients equal eager DDP's. What cannot be measured here: the overlap itself needs
several ranks and an interconnect; with one CPU rank there is nothing to overlap.
"""
import os
import warnings

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from measure_env import header, torch_sources, verdict

warnings.filterwarnings("ignore")


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(512, 512) for _ in range(4)])

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


GRAPHS = []


def counting_backend(gm, example_inputs):
    GRAPHS.append(sum(1 for node in gm.graph.nodes if node.op in ("call_function", "call_module", "call_method")))
    return gm.forward


def mlp():
    torch.manual_seed(0)
    return MLP()


def run(order):
    torch.compiler.reset()
    GRAPHS.clear()
    model = mlp()
    if order == "torch.compile(model), no DDP":
        wrapped = torch.compile(model, backend=counting_backend)
    elif order == "eager DDP(model)":
        wrapped = DDP(model, bucket_cap_mb=1)
    elif order == "DDP(torch.compile(model))":
        wrapped = DDP(torch.compile(model, backend=counting_backend), bucket_cap_mb=1)
    else:
        wrapped = torch.compile(DDP(model, bucket_cap_mb=1), backend=counting_backend)
    x = torch.ones(8, 512)
    wrapped(x).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    return list(GRAPHS), list(wrapped.state_dict())[:1], grads


if __name__ == "__main__":
    header("torch.compile before or after DistributedDataParallel")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        _, _, reference = run("eager DDP(model)")
        results = {}
        for order in ("torch.compile(model), no DDP", "DDP(torch.compile(model))", "torch.compile(DDP(model))"):
            graphs, keys, grads = run(order)
            same = all(torch.allclose(a, b) for a, b in zip(grads, reference))
            results[order] = graphs
            print(f"{order:28} graphs (ops each) {graphs}, first state_dict key {keys}, grads equal eager DDP: {same}")
    finally:
        dist.destroy_process_group()
    print("optimize_ddp default by release:")
    for version, text in torch_sources("torch/_dynamo/config.py").items():
        start = text.find("\noptimize_ddp:")
        value = text[start:text.find("\n\n", start)].split("=", 1)[-1].split("#")[0].strip() if start >= 0 else "absent"
        print(f"  {version}: optimize_ddp = {value}")
    inner, outer = results["DDP(torch.compile(model))"], results["torch.compile(DDP(model))"]
    verdict(inner != outer, f"gradients equal in both orders (world size 1); graphs split at buckets: "
            f"DDP(compile(m)) {len(inner)} graphs {inner}, compile(DDP(m)) {len(outer)} graphs {outer}; "
            f"the orders differ in state_dict keys ('module._orig_mod.' vs '_orig_mod.module.': the "
            f"checkpoint-keys hazard); overlap not measurable on one CPU rank")
