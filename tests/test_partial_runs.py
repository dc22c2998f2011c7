"""Partial runs (a file list, stdin) see the whole project's regions: they report what a
whole-project run reports for those files (compile_lint/cli.py Run.lint)."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODEL = """\
import torch.nn as nn


class Upscale(nn.Module):
    def forward(self, x):
        h = int(x.shape[2])
        return x.reshape(1, 3, h, -1)
"""
EXPORT = """\
import torch

from .model import Upscale

traced = torch.jit.trace(Upscale(), torch.rand(1, 3, 8, 8))  # noqa: CL105 (the project deploys TorchScript)
"""


def run(cwd, *args, stdin=None):
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("COMPILE_LINT_NO_CACHE", None)
    proc = subprocess.run(
        [sys.executable, "-m", "compile_lint", "check", "--output-format", "json", *args],
        cwd=cwd, env=env, input=stdin, capture_output=True,
    )
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return [(os.path.relpath(f["filename"], cwd), f["code"], f["location"]["row"]) for f in json.loads(proc.stdout)]


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text(MODEL)
    (pkg / "export.py").write_text(EXPORT)
    return tmp_path


EXPECTED = [(os.path.join("pkg", "model.py"), "CL101", 6)]


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
def test_one_file_reports_what_the_whole_project_run_reports(project, cache):
    flags = [] if cache else ["--no-cache"]
    assert run(project, ".", *flags) == EXPECTED
    assert run(project, "pkg/model.py", *flags) == EXPECTED
    assert run(project / "pkg", "model.py", *flags) == [("model.py", "CL101", 6)]


def test_stdin_sees_the_project(project):
    data = (project / "pkg" / "model.py").read_bytes()
    assert run(project, "-", "--stdin-filename", "pkg/model.py", stdin=data) == EXPECTED


def test_partial_run_after_the_tracing_file_changed(project):
    assert run(project, "pkg/model.py") == EXPECTED  # warms the cache, export.py as context
    (project / "pkg" / "export.py").write_text(EXPORT.replace("torch.jit.trace", ""))
    assert run(project, "pkg/model.py") == []
    assert run(project, "pkg/export.py") == []  # a context-only cache entry is linted when asked


def test_no_project_flag_uses_the_given_files_only(project):
    assert run(project, "pkg/model.py", "--no-project") == []
    assert run(project, "pkg/model.py", "pkg/export.py", "--no-project") == EXPECTED


def test_no_project_root_means_no_context(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "export.py").write_text(EXPORT.replace("from .model", "from model"))
    assert run(tmp_path, "model.py") == []


MODEL_WITH_LIST = MODEL.replace(
    "class Upscale(nn.Module):\n",
    "class Upscale(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.blocks = [nn.Conv2d(3, 3, 1)]\n\n",
)


def test_pass_two_reruns_only_the_rules_that_read_the_index(project, tmp_path_factory):
    """model.py is a region only through export.py: pass 2 re-lints it against the whole
    index, running just the region-reading rules; CL201 (it reads no region) keeps its
    pass-1 finding."""
    from compile_lint.rules import region_reading_codes

    (project / "pkg" / "model.py").write_text(MODEL_WITH_LIST)
    stats = tmp_path_factory.mktemp("stats") / "stats.jsonl"
    env = dict(os.environ, PYTHONPATH=ROOT, COMPILE_LINT_STATS=str(stats))
    proc = subprocess.run([sys.executable, "-m", "compile_lint", "check", "--no-cache", "--output-format", "json", "."],
                          cwd=project, env=env, capture_output=True)
    assert proc.returncode == 1, proc.stderr.decode()
    found = sorted((os.path.relpath(f["filename"], project), f["code"]) for f in json.loads(proc.stdout))
    model = os.path.join("pkg", "model.py")
    assert found == [(model, "CL101"), (model, "CL201")]
    run_stats = json.loads(stats.read_text().splitlines()[-1])
    assert run_stats["pass2"] >= 1  # model.py (and the package files whose module holds it)
    rerun = set(run_stats["pass2_rule_cpu_s"])
    assert "CL101" in rerun and "CL201" not in rerun
    assert rerun <= region_reading_codes()
