"""verify as a user runs it: default options, a cold Inductor cache, targets found by
itself.

`compile-lint verify --device cpu fixtures/verify/clean` with nothing else: the targets
come from the code's own compile sites (the linter flags nothing there), every option is
the default (`--jobs 1`, the fork server, the default plan), and TORCHINDUCTOR_CACHE_DIR
is a fresh empty folder, as on every new CI runner. That run used to deadlock in its
first forked worker (issue 8); and the gradient check called these clean conv nets
"diverged" under an ULP bound. The subprocess timeout is generous on purpose: it is
a hang detector, not a speed goal (bench/ holds those).
"""
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLEAN = os.path.join("fixtures", "verify", "clean")
NETS = ("StyleNet", "FlowInterpolator", "DenseUpscaler", "ToneCurve", "SignedSoftLight", "crossfade")


def run_verify(*args, cache_dir, timeout=3600):
    env = dict(os.environ, PYTHONPATH=ROOT, TORCHINDUCTOR_CACHE_DIR=str(cache_dir))
    for name in ("TORCHINDUCTOR_COMPILE_THREADS", "COMPILE_LINT_VERIFY_NO_FORK", "OMP_NUM_THREADS"):
        env.pop(name, None)  # the defaults, as a user has them
    return subprocess.run([sys.executable, "-m", "compile_lint", "verify", *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    folder = tmp_path_factory.mktemp("clean")
    cache = folder / "inductor-cache"
    cache.mkdir()
    report = folder / "report.json"
    done = run_verify("--device", "cpu", CLEAN, "--report", "json", "--output-file", str(report), cache_dir=cache)
    assert report.exists(), done.stderr[-3000:]
    data = json.loads(report.read_text())
    return {"done": done, "report": data, "by_name": {t["target"].rsplit(":", 1)[1]: t for t in data["targets"]}}


def test_default_options_on_a_cold_cache_finish_and_pass(clean):
    assert clean["done"].returncode == 0, clean["done"].stderr[-3000:]
    assert set(clean["by_name"]) == set(NETS)  # found from their compile sites, no config
    for name in NETS:
        assert clean["by_name"][name]["status"] == "pass", (name, clean["by_name"][name]["checks"])


def test_clean_conv_nets_pass_forward_and_gradients(clean):
    for name in ("StyleNet", "FlowInterpolator", "DenseUpscaler"):
        checks = clean["by_name"][name]["checks"]
        names = {c["name"] for c in checks}
        assert {"forward", "gradients"} <= names, (name, names)
        # a size the net cannot take eagerly (a 9x9 reflection pad on 2x3) is skipped, not blamed
        unexplained = [c for c in checks if c["status"] != "pass"
                       and not (c["status"] == "skipped" and c["verdict"] == "eager-fails")]
        assert not unexplained, (name, unexplained)
        assert any(c["name"] == "gradients" and c["status"] == "pass" for c in checks), name


def test_default_plan_runs_the_default_mode_static_once_and_dynamic_at_every_size(clean):
    report = clean["report"]
    assert report["modes"] == ["default"] and report["full"] is False
    forward = [c for c in clean["by_name"]["DenseUpscaler"]["checks"] if c["name"] == "forward"]
    assert {c["mode"] for c in forward} == {"default"}
    static = [c for c in forward if not c["dynamic"]]
    dynamic = [c for c in forward if c["dynamic"]]
    assert len(static) == 1 and len(dynamic) == 3  # the three default resolutions
    assert dynamic[0]["shape"][0][-2:] == [17, 23]  # a non-square size first: no duck-sized recompile
    assert all(c["recompiles"] == 0 for c in dynamic)
    assert not any(c["name"] == "latency" for t in report["targets"] for c in t["checks"])


def test_progress_goes_to_stderr_with_output_file(clean):
    lines = [line for line in clean["done"].stderr.splitlines() if line.startswith("verify [")]
    assert len(lines) == 2 * len(NETS)  # a start and an end line per target
    assert clean["done"].stdout == ""
