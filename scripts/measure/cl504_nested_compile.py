"""CL504: `.compile()` on a built-in module whose parent module is itself compiled.

Run: python scripts/measure/cl504_nested_compile.py   (torch 2.13 CPU)

`nn.Sequential.compile()` alone compiles nothing (its `_call_impl` frame is in Dynamo's
skip list: 0 graphs, the trunk runs eagerly, alone or called by an eager parent). But
when the parent, a module class of the project, is compiled (`m.compile()`), Dynamo
traces its `forward` and inlines the trunk: the trunk's ops are in the parent's graph.
A trunk used only by a compiled parent's `forward` does not run eagerly, whatever its
own `.compile()` did (lingua `probe.py`'s toy model, judged on bench/dev2).
"""
import torch
from torch import nn

graphs = []


def backend(gm, inputs):
    graphs.append(sorted({str(n.target) for n in gm.graph.nodes if n.op in ("call_module", "call_function")}))
    return gm.forward


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 4)
        self.trunk = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))
        self.trunk.compile(backend=backend)

    def forward(self, x):
        return self.head(self.trunk(x))


if __name__ == "__main__":
    x = torch.randn(2, 8)
    m = Model()
    m.trunk(x)
    print(f"torch {torch.__version__}")
    print("trunk alone, after trunk.compile():", len(graphs), "graphs")
    graphs.clear()
    m(x)
    print("eager parent calling the trunk:", len(graphs), "graphs")
    torch._dynamo.reset()
    graphs.clear()
    m.compile(backend=backend)
    m(x)
    print("parent m.compile():", len(graphs), "graph(s), ops:", graphs)
