"""The tensor-method evidence of analysis/tensors/kinds.py checked against the installed
torch: a method listed as taking no positional argument refuses one, and no method of
TENSOR_METHODS takes a string positionally (so `debug.log("OOM")` or `logger.log(f"...")`
is no tensor's method)."""
import pytest

from compile_lint.analysis.tensors.kinds import NO_POSITIONAL_TENSOR_METHODS, TENSOR_METHODS
from compile_lint.api import lint_paths

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("method", sorted(NO_POSITIONAL_TENSOR_METHODS))
def test_takes_no_positional_argument(method):
    assert method in TENSOR_METHODS
    t = torch.ones(2, 2)
    getattr(t, method)()  # the call without one works
    with pytest.raises(TypeError):
        getattr(t, method)(1)


@pytest.mark.parametrize("method", sorted(TENSOR_METHODS))
def test_takes_no_string(method):
    t = torch.ones(2, 2)
    with pytest.raises((TypeError, RuntimeError)):
        getattr(t, method)("a")


def test_a_logger_is_no_tensor(tmp_path):
    # SeedVR2's memory manager (bench/fresh_reads batch 15): `debug.log(...)` made `debug`
    # a tensor and every `if debug:` a data-dependent branch
    source = (
        "import torch\n\n"
        "def clear(debug=None):\n"
        "    if debug:\n"
        "        debug.log(f'clearing {1}')\n\n"
        "def helper(x, debug=None):\n"
        "    if debug:\n"
        "        debug.log('oom', level='WARNING')\n"
        "    clear(debug=debug)\n"
        "    return x.exp()\n\n"
        "class Net(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        if x.log().sum() > 0:\n"
        "            x = x * 2\n"
        "        return helper(x)\n\n"
        "net = torch.compile(Net())\n"
    )
    path = tmp_path / "memory.py"
    path.write_text(source)
    rows = sorted((f.code, f.row) for f in lint_paths([str(path)]) if f.code == "CL508")
    assert rows == [("CL508", 15)]
