"""The measurement behind CL304's sparse-constructor exemption, rerun on the pinned torch
(scripts/measure/sparse_values_grad.py): a sparse tensor built from integer indices and
values that carry no gradient, its `torch.sparse.sum` and `.to_dense()`, and a where over
them require no grad; with values that require grad, all of them do."""
from __future__ import annotations

import pytest
from conftest import measure_script

torch = pytest.importorskip("torch")


def test_sparse_degrees_carry_a_gradient_only_through_their_values():
    degrees = measure_script("sparse_values_grad").degrees
    for name, value in degrees(torch.ones(4)).items():
        assert not value.requires_grad, name
    for name, value in degrees(torch.rand(4, requires_grad=True)).items():
        assert value.requires_grad, name
