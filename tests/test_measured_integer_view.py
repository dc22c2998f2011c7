"""The measurement behind CL304's integer-view and integer-store exemptions, rerun on the
pinned torch (scripts/measure/integer_view_grad.py): a where whose result only builds
integer tensors (`.to(torch.uint8)`, bitwise packing stored into a uint8 buffer,
`.view(torch.uint8)`) leaves nothing that requires grad, so no backward pass runs
through its unselected branch; the where's own result still requires grad."""
from __future__ import annotations

import pytest
from conftest import measure_script

torch = pytest.importorskip("torch")


def test_integer_codes_views_and_stores_require_no_grad():
    blocks = torch.tensor([[0.0, 0.0], [1.0, -2.0]], requires_grad=True)
    values = measure_script("integer_view_grad").quantize(blocks)
    assert values["inv"].requires_grad  # the where itself is differentiable
    for name in ("codes", "packed", "scale", "out"):
        assert not values[name].requires_grad, name
        assert not values[name].dtype.is_floating_point, name
