"""The measurement CL304's autograd-Function exemption rests on, rerun on the pinned torch
(scripts/measure/autograd_function_grad_mode.py): a custom Function's forward and
backward run with grad mode off, so a where that is NaN on its unselected side there
leaves the gradient finite, while the same where differentiated by autograd gives NaN."""
from __future__ import annotations

import math

import pytest
from conftest import measure_script

torch = pytest.importorskip("torch")


def test_a_custom_function_runs_forward_and_backward_without_grad_and_its_where_leaves_no_nan():
    script = measure_script("autograd_function_grad_mode")
    n = torch.tensor([1.0, 0.0], requires_grad=True)
    d = torch.tensor([2.0, 0.0], requires_grad=True)
    script.Ratio.apply(n, d).sum().backward()
    assert script.seen == {"forward": False, "backward": False}
    assert all(math.isfinite(g) for g in n.grad.tolist())


def test_the_same_where_differentiated_by_autograd_gives_nan():
    script = measure_script("autograd_function_grad_mode")
    n = torch.tensor([1.0, 0.0], requires_grad=True)
    d = torch.tensor([2.0, 0.0], requires_grad=True)
    script.safe_div(n, d).sum().backward()
    assert math.isnan(n.grad.tolist()[1])
