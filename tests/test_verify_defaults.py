"""verify as a user runs it: default options, a cold Inductor cache, targets found by
itself.

`compile-lint verify --device cpu fixtures/verify/clean` with nothing else: the targets
come from the code's own compile sites (the linter flags nothing there), every option is
the default (`--jobs 1`, the fork server, the default plan and its 600 s budget), and TORCHINDUCTOR_CACHE_DIR
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
        assert {"dynamo", "forward", "gradients"} <= names, (name, names)
        # a size the net cannot take eagerly (a 9x9 reflection pad on 2x3) is skipped, not blamed
        unexplained = [c for c in checks if c["status"] != "pass"
                       and not (c["status"] == "skipped" and c["verdict"] == "eager-fails")
                       and c["verdict"] != "budget"]
        assert not unexplained, (name, unexplained)
        assert any(c["name"] == "gradients" and c["status"] == "pass" for c in checks), name


def test_default_plan_runs_the_default_mode_static_once_and_dynamic_at_every_size(clean):
    report = clean["report"]
    assert report["modes"] == ["default"] and report["full"] is False
    forward = [c for c in clean["by_name"]["DenseUpscaler"]["checks"] if c["name"] == "forward"]
    assert {c["mode"] for c in forward} == {"default"}
    static = [c for c in forward if c["dynamic"] is False and c["verdict"] != "budget"]
    dynamic = [c for c in forward if c["dynamic"]]
    assert len(static) + sum(c["verdict"] == "budget" for c in forward) == 1
    assert len(dynamic) == 3  # one dynamic compile run at the three default resolutions
    assert dynamic[0]["shape"][0][-2:] == [17, 23]  # a non-square size first: no duck-sized recompile
    assert all(c["recompiles"] == 0 for c in dynamic)
    assert not any(c["name"] == "latency" for t in report["targets"] for c in t["checks"])


def test_the_plan_then_progress_go_to_stderr_with_output_file(clean):
    stderr = clean["done"].stderr.splitlines()
    assert stderr[0].startswith(f"verify: plan for {len(NETS)} target(s) on cpu, budget 600 s, estimated ~")
    starts = [line for line in stderr if line.startswith("verify [") and " start " in line]
    ends = [line for line in stderr if line.startswith("verify [") and " so far: " in line]
    # a start and an end line per stage of each target: every Dynamo stage first
    assert len(starts) == len(ends) and len(starts) >= 2 * len(NETS)
    assert all(" start dynamo " in line for line in starts[:len(NETS)])
    assert clean["done"].stdout == ""


def test_the_run_ends_within_its_budget_and_lists_what_it_left_out(clean):
    report = clean["report"]
    assert report["budget_s"] == 600
    assert report["wall_s"] <= 600  # the budget bounds the whole run, report included
    left_out = [c for t in report["targets"] for c in t["checks"] if c["verdict"] == "budget"]
    assert all(c["status"] == "not-run" and c["message"].startswith("not run (budget)") for c in left_out)


def test_gradients_are_checked_where_the_project_trains_the_target_only(clean):
    by_name = clean["by_name"]
    for name in ("StyleNet", "FlowInterpolator", "DenseUpscaler"):  # fixtures/verify/clean/train.py trains them
        assert "optimizer over its parameters" in by_name[name]["trained"], name
    for name in ("ToneCurve", "SignedSoftLight", "crossfade"):  # inference only
        assert by_name[name]["trained"] is None
        (hint,) = [c for c in by_name[name]["checks"] if c["name"] == "gradients"]
        assert hint["status"] == "skipped" and "does not train it" in hint["message"]


def test_every_target_says_how_it_was_built_and_fed(clean):
    for name, target in clean["by_name"].items():
        assert target["built"], name
        # an image at every size (SignedSoftLight's in [-1, 1]: its code compares with 0)
        assert target["inputs_config"].startswith("inputs = [{ shape = [1, 3, \"H\", \"W\"]"), name
