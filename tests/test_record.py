"""`compile-lint record`: a real run's compiles become regions for `check` (CPU, torch).

The project below loads its model from a string spec (`getattr(importlib.import_module(m),
name)()`), which static analysis cannot follow, compiles it twice (once with
mode="reduce-overhead") and calls the CUDA-graph one at three input sizes that come
from data, not from a loop the linter can read."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

pytest.importorskip("torch")

NET = """\
import torch
from torch import nn


def scale(x):
    return x * 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        noise = torch.randn_like(x)
        return scale(self.conv(x)) + 0.1 * noise
"""
TRAIN = """\
import importlib
import sys

import torch


def load(spec):
    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)()


def batches():
    return [torch.randn(1, 3, s, s) for s in (16, 24, 32)]


def main():
    torch.manual_seed(0)
    model = load(sys.argv[1])
    fast = torch.compile(model, mode="reduce-overhead")
    plain = torch.compile(load(sys.argv[1]))
    for batch in batches():
        out = fast(batch)
    plain(torch.randn(2, 3, 8, 8))
    print("result", round(float(out.sum()), 3))


if __name__ == "__main__":
    main()
"""


def env():
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "compile_lint", *args], capture_output=True, text=True,
                          cwd=str(cwd), env=env(), timeout=900)


def record(*command, cwd, options=("--eager-backend",)):
    return cli("record", *options, "--", *command, cwd=cwd)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("")
    (tmp_path / "models" / "net.py").write_text(NET)
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def findings(project):
    proc = cli("check", ".", "--no-cache", "--select", "CL303,CL402", "--output-format", "json", cwd=project)
    assert proc.returncode in (0, 1), proc.stderr
    return [(f["filename"].replace(os.sep, "/").rsplit("/", 2)[-2:], f["location"]["row"], f["code"],
             f["message"] + " | " + " | ".join(r["message"] for r in f.get("related") or ()))
            for f in json.loads(proc.stdout)]


def test_record_then_check_sees_the_model_loaded_by_string(project):
    assert findings(project) == []  # static analysis cannot see the model
    proc = record(sys.executable, "train.py", "models.net:Net", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("result ")  # the program ran to the end
    assert "2 sites (2 compiled, 0 traced)" in proc.stderr

    data = json.loads((project / "compile-lint-regions.json").read_text())
    first = data["sites"][0]
    assert first["target"] == {"path": "models/net.py", "qualname": "Net", "row": 9, "kind": "class"}
    assert first["options"]["mode"] == "reduce-overhead"
    assert first["calls"] == [{"path": "train.py", "row": 19}]
    assert [s[0]["shape"] for s in first["seen"]["inputs"]] == [[1, 3, 16, 16], [1, 3, 24, 24], [1, 3, 32, 32]]
    assert {"path": "models/net.py", "qualname": "scale", "row": 5} in first["seen"]["code"]  # inlined
    assert first["seen"]["graphs"] >= 1

    found = findings(project)
    codes = {(tuple(path), row, code) for path, row, code, _ in found}
    assert codes == {(("models", "net.py"), 15, "CL303"), (("models", "net.py"), 14, "CL402")}
    messages = {code: message for _, _, code, message in found}
    assert "recorded at run time" in messages["CL303"]
    assert "3 input shapes" in messages["CL402"]
    assert "((1, 3, 16, 16) float32; (1, 3, 24, 24) float32; (1, 3, 32, 32) float32)" in messages["CL402"]

    # merging a run that compiles nothing keeps the file byte for byte; --fresh starts over
    before = (project / "compile-lint-regions.json").read_bytes()
    assert record(sys.executable, "-c", "pass", cwd=project).returncode == 0
    assert (project / "compile-lint-regions.json").read_bytes() == before
    assert record(sys.executable, "-c", "pass", cwd=project, options=("--fresh",)).returncode == 0
    assert json.loads((project / "compile-lint-regions.json").read_text())["sites"] == []


def test_exit_status_and_bad_command(project):
    proc = record(sys.executable, "-c", "import sys; print('out'); sys.exit(3)", cwd=project)
    assert proc.returncode == 3 and proc.stdout == "out\n"
    proc = record("no-such-command-here", cwd=project)
    assert proc.returncode == 2 and "command not found" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("record", "--output", "nowhere/x.json", "--", sys.executable, "-c", "pass", cwd=project)
    assert proc.returncode == 2 and "does not exist" in proc.stderr


PARENT = """\
import multiprocessing
import subprocess
import sys

import torch


def work(n):
    from models.blocks import Block
    fn = torch.compile(Block())
    return float(fn(torch.ones(n, 4)).sum())


if __name__ == "__main__":
    subprocess.run([sys.executable, "child.py"], check=True)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        print(pool.map(work, [2]))
"""
CHILD = """\
import torch

from models.net import scale

traced = torch.jit.trace(scale, (torch.ones(3),))
print(traced(torch.ones(3)).sum().item())
"""
BLOCK = """\
import torch
from torch import nn


class Block(nn.Module):
    def forward(self, x):
        return x * 3
"""


def test_children_subprocess_and_multiprocessing(project):
    (project / "parent.py").write_text(PARENT)
    (project / "child.py").write_text(CHILD)
    (project / "models" / "blocks.py").write_text(BLOCK)
    proc = record(sys.executable, "parent.py", cwd=project)
    assert proc.returncode == 0, proc.stderr
    sites = json.loads((project / "compile-lint-regions.json").read_text())["sites"]
    got = {(s["target"]["path"], s["target"]["qualname"], s["kind"], s["api"]) for s in sites}
    assert got == {
        ("models/blocks.py", "Block", "compiled", "torch.compile"),  # in a spawned worker
        ("models/net.py", "scale", "traced", "torch.jit.trace"),  # in a subprocess
    }
    traced = next(s for s in sites if s["kind"] == "traced")
    assert traced["calls"] == [{"path": "child.py", "row": 5}]
    assert traced["seen"]["inputs"] == [[{"shape": [3], "dtype": "float32"}]]


def test_pytest_run_is_recorded(project):
    (project / "test_model.py").write_text(textwrap.dedent("""\
        import torch

        from models.net import Net


        def test_compiled():
            model = Net()
            model.compile(mode="reduce-overhead")
            assert model(torch.ones(1, 3, 4, 4)).shape == (1, 3, 4, 4)
        """))
    proc = record(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_model.py", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sites = json.loads((project / "compile-lint-regions.json").read_text())["sites"]
    assert [(s["target"]["qualname"], s["api"], s["options"]["mode"]) for s in sites] == [("Net", "Module.compile", "reduce-overhead")]
    assert sites[0]["calls"] == [{"path": "test_model.py", "row": 8}]


def test_check_never_imports_torch_or_the_recorder(project):
    (project / "compile-lint-regions.json").write_text(json.dumps({"version": 1, "sites": []}))
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "compile_lint", "check", ".", "--no-cache"],
                          capture_output=True, text=True, cwd=str(project), env=env(), timeout=300)
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "compile_lint.analysis.reach.declared" in imported
    assert not {m for m in imported if m == "torch" or m.startswith("compile_lint.record")}


@pytest.mark.slow
def test_default_backend(project):
    """Inductor (C++ codegen on CPU): the same regions, and the program's output unchanged."""
    plain = subprocess.run([sys.executable, "train.py", "models.net:Net"], capture_output=True, text=True,
                           cwd=str(project), env=env(), timeout=900)
    proc = record(sys.executable, "train.py", "models.net:Net", cwd=project, options=())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == plain.stdout
    sites = json.loads((project / "compile-lint-regions.json").read_text())["sites"]
    assert {"path": "models/net.py", "qualname": "scale", "row": 5} in sites[0]["seen"]["code"]
    assert len(sites[0]["seen"]["inputs"]) == 3


BREAKS = """\
import importlib

import torch


def scale(x: torch.Tensor):
    return x / x.amax().item()


def rare(x: torch.Tensor):
    return x * x.amax().item()


def where(x: torch.Tensor):
    return torch.nonzero(x)


def net(x: torch.Tensor, flag: bool = False):
    y = scale(x)
    if y.sum() > 0:
        y = y + 1
    if flag:
        y = rare(y)
    return y, where(y)


if __name__ == "__main__":
    # a flag set where the linter cannot read it: nonzero stays in the graph at run time
    setattr(importlib.import_module("torch._dynamo.config"), "capture_dynamic_output_shape_ops", True)
    torch.compile(net)(torch.rand(8))
"""


@pytest.mark.slow
def test_record_reports_each_break_and_marks_the_findings(tmp_path):
    """Each runtime break by ID and line, the data-dependent `if` (not in Dynamo's
    counter) included; then `check` and `record` mark each static finding confirmed,
    compiled without a break, or not reached."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "breaks.py").write_text(BREAKS)
    static = json.loads(cli("check", ".", "--no-cache", "--select", "CL508", "--output-format", "json", cwd=tmp_path).stdout)
    assert {(f["location"]["row"], f["graph_break"]["id"]) for f in static} == {(7, "GB0124"), (11, "GB0124"), (15, "GB0036"),
                                                                               (20, "GB0170")}
    assert all(f["graph_break"]["recorded"] is None for f in static)

    proc = record(sys.executable, "breaks.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    [site] = json.loads((tmp_path / "compile-lint-regions.json").read_text())["sites"]
    breaks = {(b["path"], b["row"], b["id"]) for b in site["seen"]["breaks"]}
    assert breaks == {("breaks.py", 7, "GB0124"), ("breaks.py", 20, "GB0170")}
    assert site["seen"]["graph_breaks"] >= 2  # the `if` counted too
    assert "breaks.py:7: GB0124 Unsupported Tensor.item() call" in proc.stderr
    assert "breaks.py:20: GB0170 Data-dependent branching" in proc.stderr
    assert "static graph-break findings: 2 confirmed, 1 compiled without a break, 1 not reached" in proc.stderr

    found = json.loads(cli("check", ".", "--no-cache", "--select", "CL508", "--output-format", "json", cwd=tmp_path).stdout)
    verdicts = {f["location"]["row"]: f["graph_break"]["recorded"] for f in found}
    assert verdicts == {7: "confirmed GB0124", 11: "not reached", 15: "compiled", 20: "confirmed GB0170"}
    messages = {f["location"]["row"]: f["message"] for f in found}
    assert messages[7].endswith("(confirmed: a recorded run broke here)")
    assert messages[11].endswith("(not reached by the recorded run)")
