"""CL508: a comprehension's loop variable and a type test of a sequence's element.

Run: python scripts/measure/cl508_comprehension_scope.py   (torch 2.13 CPU)
Prints the graph breaks `torch._dynamo.explain` counts for each function, called with
tensors (as a compiled `forward` hands them on):
- `[int(h) for h in heights]` over a tensor: each element is a 0-d tensor, `int()` of
  one is `.item()`: 1 break (GB0124);
- the same under `if type(heights[0]) == type(widths[0]) == str:` (switti's
  `get_crop_condition`, bench/dev25): the test is False on tensors, Dynamo does not
  trace the branch: 0 breaks;
- `[int(h) for h in sizes]` over a list of ints next to `h = torch.tensor(sizes)`: the
  comprehension's `h` is its own name, not the tensor: 0 breaks.
Measured on 2.13: 1, 0, 0.
"""
import torch
import torch._dynamo


def over_tensor(x, heights):
    sizes = [int(h) for h in heights]
    return x.view(*sizes)


def guarded(x, heights, widths):
    if type(heights[0]) == type(widths[0]) == str:
        heights = [int(h) for h in heights]
    return x + torch.as_tensor(heights).sum()


def own_name(x, sizes):
    h = torch.tensor(sizes).unsqueeze(1)
    total = sum([int(h) for h in sizes])
    return x * h.sum() * total


CASES = {
    "[int(h) for h in heights] (a tensor)": (over_tensor, (torch.ones(2, 3), torch.tensor([3, 2]))),
    "under type(heights[0]) == type(widths[0]) == str": (guarded, (torch.ones(2), torch.tensor([3, 2]), torch.tensor([1, 1]))),
    "[int(h) for h in sizes] (ints) beside h = torch.tensor(sizes)": (own_name, (torch.ones(2), [3, 2])),
}


def main() -> None:
    print(f"torch {torch.__version__}")
    for label, (fn, args) in CASES.items():
        torch._dynamo.reset()
        explained = torch._dynamo.explain(fn)(*args)
        print(f"{label}: {explained.graph_break_count} graph break(s)")


if __name__ == "__main__":
    main()
