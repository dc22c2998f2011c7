"""CL508: a graph break inside an `except` handler that re-raises costs nothing when no
error happens.

Run: python scripts/measure/graph_break_in_reraising_except.py   (torch 2.13 CPU)

ai-toolkit's LoRA forward wraps a matmul in `try: ... except RuntimeError as e:
print(...); raise e`. Dynamo traces the handler only when the `try` body raises, so a
normal call compiles into one graph with no break; the same `print` on the normal path
(the control) breaks the graph. Printed: `torch._dynamo.explain` of each (graphs, breaks).
"""
import torch


def reraising(x, w):
    try:
        y = x @ w
    except RuntimeError as e:
        print(e)
        print(x.size())
        raise e
    return torch.relu(y)


def printing(x, w):
    try:
        y = x @ w
    except RuntimeError as e:
        raise e
    print(y.size())
    return torch.relu(y)


if __name__ == "__main__":
    x, w = torch.randn(4, 8), torch.randn(8, 3)
    for fn in (reraising, printing):
        torch._dynamo.reset()
        found = torch._dynamo.explain(fn)(x, w)
        print(f"{fn.__name__}: graphs={found.graph_count} graph_breaks={found.graph_break_count}")
