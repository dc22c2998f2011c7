"""CL304: the unselected branch of `torch.where` poisons the gradient, eager and compiled.

Run: python scripts/measure/cl304_nan_grad.py   (torch 2.13 CPU)

The sRGB decode `where(u <= 0.04045, u / 12.92, ((u + 0.055) / 1.055) ** 2.4)` at
u = -0.1 selects the linear branch, but the power branch still runs on a negative base:
its NaN times the zero mask is NaN in u's gradient. Clamping the power's input to the
threshold (the rule's fix) gives the linear branch's slope 1/12.92 = 0.0774. Printed for
eager and for `torch.compile` (Inductor); then the counted-mask shape that the rule does
not report: a where over a count of a bool mask has no gradient to poison.
"""
import torch


def decode(u):
    return torch.where(u <= 0.04045, u / 12.92, ((u + 0.055) / 1.055) ** 2.4)


def decode_clamped(u):
    return torch.where(u <= 0.04045, u / 12.92, ((u.clamp(min=0.04045) + 0.055) / 1.055) ** 2.4)


def grad_at(fn, value):
    u = torch.tensor([value], requires_grad=True)
    fn(u).sum().backward()
    return u.grad.item()


if __name__ == "__main__":
    for name, fn in (("unclamped", decode), ("clamped", decode_clamped)):
        compiled = torch.compile(fn, backend="inductor")
        print(f"{name:9s} eager grad at u=-0.1: {grad_at(fn, -0.1):.4g}   compiled: {grad_at(compiled, -0.1):.4g}")
    errors = torch.rand(64, requires_grad=True)
    support = (errors <= 0.5).cumsum(0).to(torch.float64)
    ratio = torch.where(support > 0, 1.0 / torch.log1p(support), torch.zeros_like(support))
    print(f"count of a bool mask: requires_grad={ratio.requires_grad} (no gradient flows to `errors`)")
