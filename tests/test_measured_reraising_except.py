"""The measurement behind eager_only's re-raising `except` handlers, rerun on the pinned
torch (scripts/measure/graph_break_in_reraising_except.py): a `print` in a handler that
re-raises leaves one graph and no break when nothing raises; the same `print` on the
normal path breaks the graph."""
from __future__ import annotations

import pytest
from conftest import measure_script

torch = pytest.importorskip("torch")


def _explain(name: str):
    module = measure_script("graph_break_in_reraising_except")
    torch._dynamo.reset()
    return torch._dynamo.explain(getattr(module, name))(torch.randn(4, 8), torch.randn(8, 3))


def test_a_print_in_a_reraising_handler_breaks_no_graph():
    found = _explain("reraising")
    assert (found.graph_count, found.graph_break_count) == (1, 0)


def test_the_same_print_on_the_normal_path_breaks_the_graph():
    found = _explain("printing")
    assert (found.graph_count, found.graph_break_count) == (2, 1)
