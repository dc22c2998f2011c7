"""A repro per real divergence, and the rules that can explain it (repro.py, attribution.py).

Each diverged check comes with a standalone script: run with plain torch and
compile-lint made unimportable, it must show the same divergence (exit 1). The kornia
shape of a compiled-backward defect (fixtures/verify/color_augment.py: non-finite input
gradients compiled, finite eager) is explained by no rule and its repro fails on plain
torch; a nearest resize at 1.3 with CL103 off by default still names CL103, "not
selected"; a frozen traced attribute's repro redoes the change after tracing.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures", "verify")
NO_COMPILE_LINT = "import runpy, sys; sys.modules['compile_lint'] = None; runpy.run_path(sys.argv[1], run_name='__main__')"


def verify(*args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "compile_lint", "verify", "--device", "cpu", "--report", "json",
                           *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=1800)
    assert done.stdout, done.stderr[-3000:]
    return done, {t["target"].rsplit(":", 1)[1]: t for t in json.loads(done.stdout)["targets"]}


def run_repro(path, cwd):
    """The repro as a user runs it: plain torch, compile-lint unimportable, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", NO_COMPILE_LINT, path], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=900)


def test_a_compiled_backward_defect_gets_a_repro_that_fails_on_plain_torch(tmp_path):
    done, targets = verify("--checks", "gradients", f"{FIXTURES}/color_augment.py", cwd=tmp_path)
    target = targets["ColorAugment"]
    (check,) = [c for c in target["checks"] if c["name"] == "gradients"]
    assert check["status"] == "diverged" and done.returncode == 1
    assert check["explained_by"] == []  # no lint rule explains it: a compiler defect
    repro = tmp_path / check["repro"]
    text = repro.read_text()
    assert not [line for line in text.splitlines() if "import compile_lint" in line or "from compile_lint" in line]
    assert "color_augment.py:" in text and "torch.compile(target, mode=None, dynamic=False)" in text
    shown = run_repro(str(repro), tmp_path)
    assert shown.returncode == 1, shown.stderr[-2000:]
    assert "gradients output 0" in shown.stdout and "non-finite in compiled only: 0" not in shown.stdout


def test_a_divergence_names_a_rule_that_is_not_selected(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.compile-lint]\n")  # CL103 is off by default
    (tmp_path / "zoom.py").write_text(textwrap.dedent("""
        import torch
        import torch.nn.functional as F
        from torch import nn


        class PixelZoom(nn.Module):
            def forward(self, x):
                return F.interpolate(x, scale_factor=1.3, mode="nearest")


        zoom = torch.compile(PixelZoom())
    """))
    done, targets = verify("--checks", "forward", "--resolutions", "2x3", "--dynamic", "static", ".", cwd=tmp_path)
    (check,) = [c for c in targets["PixelZoom"]["checks"] if c["status"] == "diverged"]
    (why,) = check["explained_by"]
    assert why.startswith("CL103 at zoom.py:9 (not selected): nearest resize")
    shown = run_repro(str(tmp_path / check["repro"]), tmp_path)
    assert shown.returncode == 1 and "forward output 0" in shown.stdout, shown.stderr[-2000:]
    text = subprocess.run([sys.executable, "-m", "compile_lint", "verify", "--device", "cpu", "--checks", "forward",
                           "--resolutions", "2x3", "--dynamic", "static", "."], capture_output=True, text=True,
                          cwd=tmp_path, env=dict(os.environ, PYTHONPATH=ROOT), timeout=900)
    assert "can be explained by: CL103 at zoom.py:9 (not selected)" in text.stdout, text.stdout
    assert f"repro: {check['repro']}" in text.stdout


def test_a_frozen_attribute_repro_changes_it_after_tracing(tmp_path):
    _, targets = verify("--checks", "frozen-state", "--target", f"{FIXTURES}/frozen_grade.py:ColorGrade",
                        "--resolutions", "16x16", cwd=tmp_path)
    diverged = [c for c in targets["ColorGrade"]["checks"] if c["status"] == "diverged" and c["repro"]]
    assert diverged and all(c["explained_by"] for c in diverged)  # CL102 at the line that changes it
    shown = run_repro(str(tmp_path / diverged[0]["repro"]), tmp_path)
    assert shown.returncode == 1 and "frozen-state output 0" in shown.stdout, shown.stderr[-2000:]
