"""Declared regions (config lists, `# compile-lint:` markers) and reading a recorded
`compile-lint-regions.json`: valid and invalid cases, cross-file ones included."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

MODEL = """\
import torch
from torch import nn

from .blocks import jitter


class Net(nn.Module):
    def forward(self, x):
        return jitter(x) * 2


class Other(nn.Module):
    def forward(self, x):
        return x + torch.rand_like(x)
"""
BLOCKS = """\
import torch


def jitter(x):
    return x + torch.randn_like(x)


def shift(x):
    return x + torch.rand(1)
"""


def run(*args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "compile_lint", *args, "--no-cache"],
                          capture_output=True, text=True, cwd=str(cwd), env=env)


def codes_at(proc):
    """{(file, row, code)} of the JSON findings."""
    assert proc.returncode in (0, 1), proc.stderr
    return {(os.path.basename(f["filename"]), f["location"]["row"], f["code"]) for f in json.loads(proc.stdout)}


@pytest.fixture
def project(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text(MODEL)
    (pkg / "blocks.py").write_text(BLOCKS)
    (pkg / "serve.py").write_text("from .model import Net\n\ndef build(name):\n    return Net()\n")
    return tmp_path


def config(project, body):
    (project / "pyproject.toml").write_text("[tool.compile-lint]\n" + textwrap.dedent(body))


def check(project, *paths):
    return run("check", *(paths or (".",)), "--select", "CL303,CL402", "--output-format", "json", cwd=project)


# -- config lists -------------------------------------------------------------------
def test_nothing_without_a_declaration(project):
    config(project, "select = ['ALL']\n")
    assert codes_at(check(project)) == set()


def test_declared_class_is_a_region_and_reaches_other_files(project):
    config(project, 'compiled = ["pkg.model:Net"]\n')
    found = codes_at(check(project))
    # Net.forward calls blocks.jitter (another file): the RNG there is in the region
    assert found == {("blocks.py", 5, "CL303")}
    proc = check(project)
    assert "declared compiled in the configuration" in json.loads(proc.stdout)[0]["message"]


def test_declared_function_and_reexport(project):
    (project / "pkg" / "__init__.py").write_text("from .blocks import shift\n")
    config(project, 'compiled = ["pkg:shift"]\n')  # through the package's re-export
    assert codes_at(check(project)) == {("blocks.py", 9, "CL303")}


def test_wildcard_module(project):
    config(project, 'compiled = ["pkg.blocks.*"]\n')
    assert codes_at(check(project)) == {("blocks.py", 5, "CL303"), ("blocks.py", 9, "CL303")}


def test_table_form_with_mode(project):
    config(project, """\
        compiled = [{target = "pkg.model:Other", mode = "reduce-overhead"}]
        """)
    proc = check(project)
    messages = [f["message"] for f in json.loads(proc.stdout)]
    assert len(messages) == 1 and "declared compiled with mode='reduce-overhead'" in messages[0]


def test_traced_list(project):
    config(project, 'traced = ["pkg.model:Other"]\n')
    # CL303 is about compiled code: a traced region alone does not make it fire
    assert codes_at(check(project)) == set()


@pytest.mark.parametrize(
    "body, expected",
    [
        ('compiled = ["pkg.model:Nett"]\n', "'pkg.model:Nett' names no class or function of this project"),
        ('compiled = ["pkg.modell:Net"]\n', "'pkg.modell:Net' names no class or function of this project"),
        ('compiled = ["pkg.nothing.*"]\n', "'pkg.nothing.*' names no class or function"),
        ('compiled = ["pkg model"]\n', "is not a def name like"),
        ('compiled = "pkg.model:Net"\n', "must be a list of names"),
        ('compiled = [{target = "pkg.model:Net", mdoe = "x"}]\n', "unknown key 'mdoe'"),
        ('compiled = [{mode = "x"}]\n', "has no 'target'"),
        ('traced = [{target = "pkg.model:Net", mode = "reduce-overhead"}]\n', "apply to compiled entries only"),
        ('compiled = [{target = "pkg.model:Net", dynamic = "yes"}]\n', "'dynamic' must be true or false"),
        ('regions-file = "missing.json"\n', "does not exist"),
    ],
)
def test_config_errors_are_one_line_exit_2(project, body, expected):
    config(project, body)
    proc = check(project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert expected in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_partial_run_does_not_call_a_name_outside_it_unknown(project):
    config(project, 'compiled = ["pkg.model:Net"]\n')
    proc = check(project, "pkg/serve.py")
    assert proc.returncode == 0, proc.stderr


# -- markers ----------------------------------------------------------------------
MARKED = """\
import torch


# compile-lint: compiled
def above(x):
    return torch.rand(2) + x


def same_line(x):  # compile-lint: compiled mode=reduce-overhead
    return torch.rand(2) + x


# compile-lint: compiled
@staticmethod
def decorated(x):
    return torch.rand(2) + x


def not_marked(x):
    # compile-lint: compiled (inside a body: not a marker of this def)
    return torch.rand(2) + x


TEXT = "# compile-lint: compiled"
def after_string(x):
    return torch.rand(2) + x


# compile-lint: traced
def traced_only(x):
    return torch.rand(2) + x
"""


def test_markers(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.compile-lint]\n")
    (tmp_path / "marked.py").write_text(MARKED)
    proc = check(tmp_path)
    found = codes_at(proc)
    assert found == {("marked.py", 6, "CL303"), ("marked.py", 10, "CL303"), ("marked.py", 16, "CL303")}
    by_row = {f["location"]["row"]: f for f in json.loads(proc.stdout)}
    assert "by a `# compile-lint: compiled` comment at marked.py:4" in by_row[6]["message"]
    assert "mode='reduce-overhead'" in by_row[10]["message"]


def test_marker_region_reaches_another_file(project):
    (project / "pyproject.toml").write_text("[tool.compile-lint]\n")
    model = (project / "pkg" / "model.py").read_text().replace("class Net(", "# compile-lint: compiled\nclass Net(")
    (project / "pkg" / "model.py").write_text(model)
    assert codes_at(check(project)) == {("blocks.py", 5, "CL303")}


# -- the recorded file ------------------------------------------------------------
def recording(sites):
    return json.dumps({"version": 1, "sites": sites})


def site(path, qualname, shapes=(), mode=None, code=(), call=None, **seen):
    return {
        "target": {"path": path, "qualname": qualname, "row": 1, "kind": "class"},
        "kind": "compiled", "api": "torch.compile",
        "options": {"mode": mode, "dynamic": None, "fullgraph": False, "backend": None, "options": None},
        "calls": [call] if call else [],
        "seen": {"inputs": [[{"shape": list(s), "dtype": "float32"}] for s in shapes],
                 "code": [{"path": p, "qualname": q, "row": 1} for p, q in code], **seen},
    }


def test_recorded_region_and_shapes(project):
    (project / "pyproject.toml").write_text("[tool.compile-lint]\n")
    sites = [site("pkg/model.py", "Other", shapes=[(1, 3, 8, 8), (1, 3, 16, 16), (1, 3, 24, 24)], mode="reduce-overhead")]
    (project / "compile-lint-regions.json").write_text(recording(sites))
    proc = check(project)
    found = codes_at(proc)
    assert found == {("model.py", 13, "CL402"), ("model.py", 14, "CL303")}
    messages = {f["code"]: f["message"] for f in json.loads(proc.stdout)}
    assert "3 input shapes ((1, 3, 8, 8) float32; (1, 3, 16, 16) float32; (1, 3, 24, 24) float32)" in messages["CL402"]
    assert "recorded at run time" in messages["CL303"]


def test_recorded_single_shape_or_no_cudagraphs_is_not_cl402(project):
    (project / "pyproject.toml").write_text("[tool.compile-lint]\n")
    sites = [
        site("pkg/model.py", "Other", shapes=[(1, 3, 8, 8)], mode="reduce-overhead"),
        site("pkg/model.py", "Other", shapes=[(1, 3, 8, 8), (1, 3, 16, 16)]),
    ]
    (project / "compile-lint-regions.json").write_text(recording(sites))
    assert codes_at(check(project)) == {("model.py", 14, "CL303")}


def test_recorded_inlined_code_is_region_code(project):
    (project / "pyproject.toml").write_text("[tool.compile-lint]\n")
    # the run saw Dynamo compile blocks.shift as part of Net's graph (no static call)
    sites = [site("pkg/model.py", "Net", code=[("pkg/blocks.py", "shift")])]
    (project / "compile-lint-regions.json").write_text(recording(sites))
    assert codes_at(check(project)) == {("blocks.py", 5, "CL303"), ("blocks.py", 9, "CL303")}


def test_stale_entry_is_one_warning_not_a_crash(project):
    (project / "pyproject.toml").write_text("[tool.compile-lint]\n")
    sites = [site("pkg/model.py", "Gone"), site("pkg/moved.py", "Net"), site("pkg/model.py", "Other")]
    (project / "compile-lint-regions.json").write_text(recording(sites))
    proc = check(project)
    assert codes_at(proc) == {("model.py", 14, "CL303")}
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 2, proc.stderr
    assert "compile-lint-regions.json: `pkg/model.py:Gone` was recorded but is no longer defined there" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "text, expected",
    [
        ("{not json", "not valid JSON"),
        ('{"version": 1}', "expected an object with a 'sites' list"),
        ('{"version": 99, "sites": []}', "unsupported recording version 99"),
        ('{"version": 1, "sites": [{"target": {"path": "x.py"}}]}', "needs a 'path' and a 'qualname'"),
        ('{"version": 1, "sites": [{"target": {"path": "x.py", "qualname": "f"}, "kind": "jitted"}]}', "'kind' must be"),
        ('{"version": 1, "sites": [{"target": {"path": "x.py", "qualname": "f"}, "kind": "compiled", "seen": {"graphs": "2"}}]}',
         "'seen.graphs' must be a number"),
    ],
)
def test_malformed_recording_is_a_configuration_error(project, text, expected):
    (project / "pyproject.toml").write_text("[tool.compile-lint]\n")
    (project / "compile-lint-regions.json").write_text(text)
    proc = check(project)
    assert proc.returncode == 2
    assert expected in proc.stderr and "Traceback" not in proc.stderr


def test_regions_file_option(project):
    (project / "pyproject.toml").write_text('[tool.compile-lint]\nregions-file = "ci/regions.json"\n')
    (project / "ci").mkdir()
    (project / "ci" / "regions.json").write_text(recording([site("../pkg/model.py", "Other")]))
    assert codes_at(check(project)) == {("model.py", 14, "CL303")}


def test_partial_run_reads_the_recording(project):
    (project / "pyproject.toml").write_text("[tool.compile-lint]\n")
    (project / "compile-lint-regions.json").write_text(recording([site("pkg/model.py", "Other")]))
    assert codes_at(check(project, "pkg/model.py")) == {("model.py", 14, "CL303")}
