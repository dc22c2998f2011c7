"""CL304: a `torch.where` inside a custom `torch.autograd.Function` records no graph.

Run: python scripts/measure/autograd_function_grad_mode.py   (torch 2.13 CPU)

`Function.apply` runs `forward` with grad mode off, and `backward` runs with grad mode
off unless the backward pass itself is differentiated (`create_graph=True`). Ops there
record no autograd graph, so an unselected `where` branch that is NaN cannot poison a
gradient through autograd: the gradient is what `backward` returns. Printed: the grad
mode seen inside each method, and the input's gradient of a Function whose forward and
backward both use `where(d.abs() < 1e-5, n * 1e5, n / d)` (tapnet's `safe_div`, NaN on
the unselected side at d = 0), next to the same where differentiated by autograd.
"""
import torch

seen = {}


def safe_div(n, d):
    return torch.where(d.abs() < 1e-5, n * 100000.0, n / d)


class Ratio(torch.autograd.Function):
    @staticmethod
    def forward(ctx, n, d):
        seen["forward"] = torch.is_grad_enabled()
        ctx.save_for_backward(n, d)
        return safe_div(n, d)

    @staticmethod
    def backward(ctx, grad):
        seen["backward"] = torch.is_grad_enabled()
        n, d = ctx.saved_tensors
        return safe_div(grad, d), -safe_div(grad * n, d * d)


if __name__ == "__main__":
    n = torch.tensor([1.0, 0.0], requires_grad=True)
    d = torch.tensor([2.0, 0.0], requires_grad=True)
    Ratio.apply(n, d).sum().backward()
    print(f"grad mode inside forward: {seen['forward']}, inside backward: {seen['backward']}")
    print(f"Function: n.grad={n.grad.tolist()} (no NaN from the unselected n / d)")
    n2 = torch.tensor([1.0, 0.0], requires_grad=True)
    d2 = torch.tensor([2.0, 0.0], requires_grad=True)
    safe_div(n2, d2).sum().backward()
    print(f"plain autograd: n.grad={n2.grad.tolist()} d.grad={d2.grad.tolist()} (NaN through the unselected branch)")
