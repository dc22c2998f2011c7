"""The traced check runs what the code runs (compile_lint/verify/tracing.py).

- The code's own export with dynamic shapes, of a module that looks a grid up in a
  size-keyed global cache, fails where eager works: diverged (the export guard).
- verify's own export of a two-input function (no site in the code) passes: the
  `*args` wrapper takes its dynamic shapes as one argument.
"""
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def traced():
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "compile_lint", "verify", "--device", "cpu", "--checks", "traced", "--report", "json",
         "--target", "fixtures/verify/cached_grid_export.py:Resampler",
         "--target", "fixtures/verify/clean/crossfade.py:crossfade"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=1800)
    assert done.stdout, done.stderr[-3000:]
    report = json.loads(done.stdout)
    return {t["target"].rsplit(":", 1)[1]: t for t in report["targets"]}


def test_own_dynamic_export_of_a_size_keyed_cache_diverges(traced):
    target = traced["Resampler"]
    (check,) = [c for c in target["checks"] if c["name"] == "traced"]
    assert check["mode"] == "export dynamic"  # the site passes dynamic_shapes
    assert check["status"] == "diverged" and check["verdict"] == "trace-fails"
    assert target["status"] == "diverged"


def test_verify_exports_a_two_input_function_with_free_sizes(traced):
    target = traced["crossfade"]
    checks = {c["mode"]: c for c in target["checks"] if c["name"] == "traced"}
    assert set(checks) == {"jit.trace", "export dynamic"}
    assert checks["export dynamic"]["status"] == "pass", checks["export dynamic"]["message"]
    assert "matches eager at 17x23" in checks["export dynamic"]["message"]
