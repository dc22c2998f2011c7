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

traced = torch.jit.trace(Upscale(), torch.rand(1, 3, 8, 8))
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
