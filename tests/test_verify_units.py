"""verify's parts that need no compile: config, targets, judgement, reports, CLI errors.

Fast (no inductor): the hazard reproductions are in test_verify_hazards.py.
"""
import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from compile_lint.verify import config as vconfig
from compile_lint.verify.artifacts import encode_png
from compile_lint.verify.command import verify_command
from compile_lint.verify.report import junit_report
from compile_lint.verify.results import (
    COULD_NOT_CHECK, DIVERGED, ERROR, NOT_RUN, PASS, SKIPPED, STRICT_FAIL_ON, CheckResult, TargetResult, exit_code, finish, target_status,
)
from compile_lint.verify.targets import parse_shard, shard, targets_from_findings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures", "verify")


# ---- the CLI never imports torch, and says so when torch is missing ----

def test_importing_the_command_does_not_import_torch():
    code = "import sys, compile_lint.verify.command, compile_lint.verify.runner; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "False"


def test_without_torch_a_clear_message_and_exit_2(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    result = CliRunner().invoke(verify_command, [FIXTURES])
    assert result.exit_code == 2
    assert "pip install 'compile-lint[verify]'" in result.output
    assert "Traceback" not in result.output


# ---- config ----

def test_unknown_key_is_an_error_with_did_you_mean():
    with pytest.raises(vconfig.VerifyConfigError, match=r"unknown key 'resolution' \(did you mean 'resolutions'\?\)"):
        vconfig.parse_verify_table({"resolution": ["16x16"]})
    with pytest.raises(vconfig.VerifyConfigError, match=r"did you mean 'kwargs'"):
        vconfig.parse_verify_table({"targets": [{"target": "a.b:C", "kwarg": {}}]})
    with pytest.raises(vconfig.VerifyConfigError, match=r"did you mean 'max-autotune'"):
        vconfig.parse_verify_table({"modes": ["max-autotun"]})


def test_target_entry_parses_inputs_tolerances_and_paths(tmp_path):
    (tmp_path / "grade.py").write_text("def f(x):\n    return x\n")
    options = vconfig.parse_verify_table({
        "resolutions": ["8x8", [9, 13]],
        "targets": [{
            "target": "grade.py:f",
            "kwargs": {"size": 17},
            "inputs": [{"shape": [1, 3, "H", "W"]}, {"shape": [1, 3, 17, 17, 17], "fill": "ramp"}, 0.5],
            "atol": 1e-3,
            "codes": ["CL103"],
        }],
    }, root=str(tmp_path))
    assert options.resolutions == [[8, 8], [9, 13]]
    spec = options.targets[0]
    assert spec.file == str(tmp_path / "grade.py") and spec.qualname == "f"
    assert [i.shape for i in spec.inputs] == [[1, 3, "H", "W"], [1, 3, 17, 17, 17], None]
    assert spec.inputs[2].value == 0.5 and spec.atol == 1e-3 and spec.kwargs == {"size": 17}


@pytest.mark.parametrize("table, message", [
    ({"targets": [{"target": "no_colon"}]}, "must look like"),
    ({"targets": [{"target": "missing.py:f"}]}, "no such file"),
    ({"targets": [{"target": "a.b:C", "inputs": [{"shape": [1, "X"]}]}]}, "neither a size"),
    ({"targets": [{"target": "a.b:C", "inputs": [{"shape": [1], "fill": "noise"}]}]}, "unknown 'noise'"),
    ({"resolutions": ["16by16"]}, "HEIGHTxWIDTH"),
    ({"dtypes": ["float8"]}, "unknown dtype"),
    ({"timeout": -1}, "positive number"),
])
def test_bad_values_are_one_line_errors(tmp_path, table, message):
    with pytest.raises(vconfig.VerifyConfigError, match=message):
        vconfig.parse_verify_table(table, root=str(tmp_path))


def test_cli_usage_errors_exit_2_without_traceback(tmp_path):
    (tmp_path / "compile-lint.toml").write_text('[verify]\nmodez = ["default"]\n')
    runner = CliRunner()
    for args in ([str(tmp_path)], ["--modes", "turbo", "--target", "x.y:Z"], ["--shard", "3/2", "--target", "x.y:Z"],
                 ["--target", "nope.py:Model"], ["--resolutions", "big", "--target", "x.y:Z"]):
        result = runner.invoke(verify_command, args)
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output and result.output.startswith("compile-lint verify:")
    assert "did you mean 'modes'" in runner.invoke(verify_command, [str(tmp_path)]).output


def test_help_says_the_defaults_the_plan_and_the_docs_use():
    """`--help` on modes, budget, gradients and the dynamic setting says what a default
    run does (the plan), as docs/verify.md does."""
    from compile_lint.verify.plan import plan_target

    text = " ".join(CliRunner().invoke(verify_command, ["--help"]).output.split())
    assert "Compile modes, comma-separated (default: 'default'; --full: all the device supports)" in text
    assert "(default 600; 0: no budget)" in text and vconfig.VerifyOptions().budget == 600
    assert "auto (default) where the project trains the target" in text and vconfig.VerifyOptions().gradients == "auto"
    assert "or both (default)" in text and vconfig.VerifyOptions().dynamic == (False, True)
    spec = vconfig.TargetSpec(ref="m.py:Net", qualname="Net", file="/nowhere/m.py")
    default_run = plan_target(spec, vconfig.VerifyOptions(), "cpu")
    assert {s.mode for s in default_run.steps if s.check == "forward"} == {"default"}
    assert {s.dynamic for s in default_run.steps if s.check == "forward"} == {False, True}
    full_run = plan_target(spec, vconfig.VerifyOptions(full=True), "cpu")
    assert {s.mode for s in full_run.steps if s.check == "forward"} == set(vconfig.CPU_MODES)
    with open(os.path.join(ROOT, "docs", "verify.md"), encoding="utf-8") as fh:
        docs = fh.read()
    assert "| `--full` | every mode the device supports and the latency check (default: the plan above) |" in docs
    assert "| `--budget S` | seconds for the whole run (default 600; `0`: none)" in docs
    assert '# default: "default" (all the device supports with full)' in docs


# ---- targets ----

def _finding(code, path, scope, kind="compiled"):
    return SimpleNamespace(code=code, path=path, scope=scope, region_kind=kind, row=1, column=1, message="")


def test_targets_are_the_scopes_that_hold_findings():
    plan = targets_from_findings([
        _finding("CL103", "a.py", "Zoom"),
        _finding("CL508", "a.py", "Zoom"),
        _finding("CL101", "b.py", "export_model", "traced"),
        _finding("CL204", "b.py", None, None),
    ])
    assert [(t.qualname, t.codes, t.region_kinds) for t in plan.targets] == [
        ("Zoom", ["CL103", "CL508"], ["compiled"]), ("export_model", ["CL101"], ["traced"])]
    assert plan.notes == ["b.py: CL204 at module level: no function or class to run"]


def test_findings_of_rules_verify_cannot_check_make_no_target():
    # CL105 (a deprecated call) in an export function: running it would write files and
    # compare nothing (Rule.verify_target)
    plan = targets_from_findings([
        _finding("CL105", "export.py", "export_for_mobile", None),
        _finding("CL511", "train.py", "train", None),
        _finding("CL101", "export.py", "up", "traced"),
    ])
    assert [(t.qualname, t.codes) for t in plan.targets] == [("up", ["CL101"])]
    assert plan.notes == []


def test_shards_split_targets_without_overlap():
    specs = [vconfig.TargetSpec(ref=f"m:T{i}", qualname=f"T{i}", module="m") for i in range(7)]
    parts = [shard(specs, parse_shard(f"{k}/3")) for k in (1, 2, 3)]
    assert sorted(s.ref for part in parts for s in part) == sorted(s.ref for s in specs)
    assert [len(p) for p in parts] == [3, 2, 2]
    with pytest.raises(vconfig.VerifyConfigError):
        parse_shard("0/3")


def test_targets_found_by_the_linter_when_it_has_the_rule():
    from compile_lint.api import lint_paths

    findings = lint_paths([os.path.join(FIXTURES, "pixel_zoom.py")])
    if not any(f.code == "CL103" for f in findings):
        pytest.skip("the linter has no CL103 rule yet")
    plan = targets_from_findings(findings)
    assert any(t.qualname == "PixelArtZoom" and "CL103" in t.codes for t in plan.targets)


# ---- statuses ----

def _check(status, **kw):
    return CheckResult(name="forward", status=status, verdict="", **kw)


def test_target_status_is_its_most_severe_check():
    assert target_status([_check(PASS), _check(DIVERGED), _check(COULD_NOT_CHECK)]) == DIVERGED
    assert target_status([_check(PASS), _check(ERROR), _check(DIVERGED)]) == ERROR
    # a timeout or a tracer limit is not hidden behind the checks that passed
    assert target_status([_check(PASS), _check(COULD_NOT_CHECK)]) == COULD_NOT_CHECK
    assert target_status([_check(PASS), _check(SKIPPED)]) == PASS
    assert target_status([_check(PASS), _check(NOT_RUN)]) == NOT_RUN
    assert target_status([_check(SKIPPED)]) == SKIPPED
    assert target_status([]) == SKIPPED


def test_exit_code_policy_default_and_strict():
    def target(status):
        return finish(TargetResult("t", "", checks=[_check(status)]))

    for status in (PASS, COULD_NOT_CHECK, SKIPPED, NOT_RUN):
        assert exit_code([target(status)]) == 0, status
        assert exit_code([target(status)], STRICT_FAIL_ON) == (0 if status == PASS else 1), status
    for status in (DIVERGED, ERROR):
        assert exit_code([target(status)]) == 1, status
    result = finish(TargetResult(target="t", status="", checks=[
        _check(PASS, confirms=["CL301"], clears=["CL302"]), _check(DIVERGED, confirms=["CL302"])]))
    assert (result.status, result.confirmed, result.cleared) == (DIVERGED, ["CL301", "CL302"], [])
    assert exit_code([result]) == 1 and exit_code([finish(TargetResult("u", "", checks=[_check(SKIPPED)]))]) == 0


# ---- judgement (torch, no compile) ----

def test_judgement_tells_rounding_from_divergence():
    torch = pytest.importorskip("torch")
    from compile_lint.verify.compare import DIVERGENCE, ROUNDING, WITHIN_TOLERANCE, Tolerance, judge

    truth = torch.rand(4096, dtype=torch.float64)
    eager = truth.half()  # what eager fp16 computes
    closer = truth.float()  # Inductor kept the intermediate in fp32
    j = judge(eager.float(), closer, truth, Tolerance(), torch.float16)
    assert j.verdict == ROUNDING and j.compiled_rmse_vs_fp64 < j.eager_rmse_vs_fp64

    flipped = eager.float().clone()
    flipped[:8] = 1 - flipped[:8]  # a threshold flip: few elements, large error
    assert judge(eager.float(), flipped, truth, Tolerance(), torch.float16).verdict == DIVERGENCE

    worse = truth.float() + 0.002  # small per element but farther from the truth than eager
    assert judge(eager.float(), worse, truth, Tolerance(), torch.float16).verdict == DIVERGENCE
    assert judge(truth.float(), truth.float() + 1e-7, truth, Tolerance(), torch.float32).verdict == WITHIN_TOLERANCE


def test_fp32_accumulation_order_beyond_8_ulps_is_rounding_when_as_accurate_as_eager():
    """The false "diverged" of issue 8: a gradient of magnitude ~60 summed in another order
    differs from eager by ~100 ULPs, yet is as close to fp64 as eager (torch's harness rule)."""
    torch = pytest.importorskip("torch")
    from compile_lint.verify.compare import DIVERGENCE, ROUNDING, Tolerance, judge

    generator = torch.Generator().manual_seed(0)
    truth = torch.rand(8192, dtype=torch.float64, generator=generator) * 60  # values up to 60
    # fp32 errors of long reductions with cancelling terms: ~3e-4 (~80 ULPs at 60), as measured
    eager = (truth + 2.8e-4 * torch.randn(truth.shape, dtype=torch.float64, generator=generator)).float()
    other_order = (truth + 3.3e-4 * torch.randn(truth.shape, dtype=torch.float64, generator=generator)).float()
    j = judge(eager, other_order, truth, Tolerance(), torch.float32)
    assert j.max_abs_diff > 8 * 2 ** -23 * 32  # beyond the 8-ULP bound at the largest value
    assert j.verdict == ROUNDING, j
    # the same difference without an fp64 reference to show it is accurate: not rounding
    assert judge(eager, other_order, None, Tolerance(), torch.float32).verdict == DIVERGENCE
    # three times eager's error is not rounding
    worse = (truth + 3 * 2.8e-4 * torch.randn(truth.shape, dtype=torch.float64, generator=generator)).float()
    assert judge(eager, worse, truth, Tolerance(), torch.float32).verdict == DIVERGENCE
    # nor is a single element off by far more than eager ever is (the flip guard)
    flipped = other_order.clone()
    flipped[7] += 0.05
    assert judge(eager, flipped, truth, Tolerance(), torch.float32).verdict == DIVERGENCE


def test_a_few_ulps_at_pixel_scale_pass_at_the_harness_tolerance():
    """Measured on an H200 (bench/results.md, "GPU run"): a clean frame interpolator's
    grid_sample, compiled by Triton, is 1.8e-05 from fp64 where eager is 8e-07, far below
    one 8-bit level. torch's own `same()` passes it (tol=1e-4); verify's first default
    (1e-5) called it diverged."""
    torch = pytest.importorskip("torch")
    from compile_lint.verify.compare import DIVERGENCE, PASSING_VERDICTS, Tolerance, judge

    generator = torch.Generator().manual_seed(4)
    truth = torch.rand(3 * 17 * 23, dtype=torch.float64, generator=generator)
    eager = (truth + 2e-7 * torch.randn(truth.shape, dtype=torch.float64, generator=generator)).float()
    compiled = (truth + 4.4e-6 * torch.randn(truth.shape, dtype=torch.float64, generator=generator)).float()
    assert (compiled.double() - truth).abs().max().item() > 1e-5
    assert judge(eager, compiled, truth, Tolerance(), torch.float32).verdict in PASSING_VERDICTS
    assert judge(eager, compiled, truth, Tolerance(atol=1e-5, rtol=1e-5), torch.float32).verdict == DIVERGENCE
    # a real divergence (CL103's nearest resize picks other pixels: 0.5 off) still is one
    shifted = compiled.clone()
    shifted[::9] += 0.5
    assert judge(eager, shifted, truth, Tolerance(), torch.float32).verdict == DIVERGENCE


def test_an_fp64_run_that_eager_strays_from_is_no_reference():
    """Random draws: a float64 run draws other numbers than the float32 one from the same
    seed, so eager is as far from it as compiled; that must not pass as "rounding"."""
    torch = pytest.importorskip("torch")
    from compile_lint.verify.compare import DIVERGENCE, ROUNDING, Tolerance, judge

    generator = torch.Generator().manual_seed(1)
    fp64_draws = torch.rand(4096, dtype=torch.float64, generator=generator)
    eager = torch.rand(4096, generator=generator)
    compiled = torch.rand(4096, generator=generator)  # another stream: RNG in compiled code
    assert judge(eager, compiled, fp64_draws, Tolerance(), torch.float32).verdict == DIVERGENCE
    # a reference eager keeps to (within 1% of the largest value) still decides
    near = (fp64_draws + 1e-4 * torch.randn(4096, dtype=torch.float64, generator=generator)).float()
    also_near = (fp64_draws + 1e-4 * torch.randn(4096, dtype=torch.float64, generator=generator)).float()
    assert judge(near, also_near, fp64_draws, Tolerance(), torch.float32).verdict == ROUNDING


def test_gradients_are_judged_at_the_harness_training_tolerance():
    torch = pytest.importorskip("torch")
    from compile_lint.verify.compare import DIVERGENCE, WITHIN_TOLERANCE, Tolerance, judge
    from compile_lint.verify.session import GRADIENT_TOLERANCE

    generator = torch.Generator().manual_seed(2)
    truth = torch.randn(8192, dtype=torch.float64, generator=generator)
    eager = (truth + 1e-5 * torch.randn(truth.shape, dtype=torch.float64, generator=generator)).float()
    compiled = (truth + 4e-5 * torch.randn(truth.shape, dtype=torch.float64, generator=generator)).float()
    # four times eager's error: diverged at the forward tolerance ...
    assert judge(eager, compiled, truth, Tolerance(), torch.float32).verdict == DIVERGENCE
    # ... within the training tolerance of PyTorch's harness (1e-3), as a clean instance-norm
    # net's gradients are (fixtures/verify/clean/style_transfer.py)
    training = Tolerance(atol=GRADIENT_TOLERANCE, rtol=GRADIENT_TOLERANCE)
    assert judge(eager, compiled, truth, training, torch.float32).verdict == WITHIN_TOLERANCE


def test_a_low_precision_threshold_flip_diverges_even_when_closer_to_fp64():
    """fp16 eager rounds the luma and takes the wrong side of a threshold on a few pixels;
    compiled keeps it in fp32 and takes the other (fixtures/verify/fp16_luma_key.py)."""
    torch = pytest.importorskip("torch")
    from compile_lint.verify.compare import FLIP, ROUNDING, Tolerance, judge

    generator = torch.Generator().manual_seed(3)
    truth = torch.rand(4096, dtype=torch.float64, generator=generator)
    eager = truth.half().float()
    compiled = truth.float()  # nearer the truth everywhere...
    compiled[:4] = 1 - eager[:4]  # ...and on the other side of a threshold on 0.1% of elements
    truth[:4] = compiled[:4].double()
    assert judge(eager, compiled, truth, Tolerance(), torch.float16).verdict == FLIP
    # plain fp16 rounding (1 ULP on many elements) is not a flip
    smooth = torch.rand(4096, dtype=torch.float64, generator=generator)
    assert judge(smooth.half().float(), smooth.float(), smooth, Tolerance(), torch.float16).verdict == ROUNDING


def test_float64_reference_follows_casts_inside_the_target():
    torch = pytest.importorskip("torch")
    from compile_lint.verify.reference import Float64Everywhere

    mode = Float64Everywhere()
    with mode:
        x = torch.rand(3, dtype=torch.float64)
        y = x.half() * 3
        z = torch.zeros(2, dtype=torch.bfloat16)
        w = x.to(torch.float16)
    assert (y.dtype, z.dtype, w.dtype) == (torch.float64,) * 3
    assert mode.requested == {torch.float16, torch.bfloat16}


# ---- reports ----

def _png_size(data: bytes) -> tuple:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_png_encoder_round_trips():
    rgb = bytes(range(256)) * 3  # 16 x 16 x 3 bytes
    png = encode_png(16, 16, rgb)
    assert _png_size(png) == (16, 16)
    idat = png[png.index(b"IDAT") + 4:png.index(b"IEND") - 8]
    rows = zlib.decompress(idat)
    assert b"".join(rows[y * 49 + 1:(y + 1) * 49] for y in range(16)) == rgb


def test_junit_has_a_case_per_check():
    result = finish(TargetResult("m.py:Zoom", "", checks=[
        _check(PASS, mode="default"), _check(DIVERGED, mode="default", message="differs by 1"),
        _check(SKIPPED, mode="reduce-overhead", message="not checkable on cpu")]))
    suite = ET.fromstring(junit_report([result]).split("\n", 1)[1]).find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")
    assert suite.findall("testcase")[1].find("failure").get("message") == "differs by 1"


def test_png_shows_the_output_that_differs_with_a_scale_bar(tmp_path):
    torch = pytest.importorskip("torch")
    from compile_lint.verify.artifacts import BAR_ROWS, most_different, save_comparison, text_mask

    same = torch.rand(1, 3, 8, 8)
    eager = [same, torch.zeros(1, 3, 8, 8)]
    compiled = [same.clone(), torch.zeros(1, 3, 8, 8)]
    compiled[1][0, :, 2, 3] = 0.25
    assert most_different(eager, compiled) == 1
    path = save_comparison(str(tmp_path), "t", eager[1], compiled[1])
    data = open(path, "rb").read()
    width, height = _png_size(data)
    assert height == 96 + BAR_ROWS and width == 3 * 96 + 4
    rows = zlib.decompress(data[data.index(b"IDAT") + 4:data.index(b"IEND") - 8])
    stride = width * 3 + 1

    def pixel(x, y):
        start = y * stride + 1 + x * 3
        return tuple(rows[start:start + 3])

    bar_y = 96 + 4  # the gradient row of the bar under the difference panel
    assert pixel(2 * 96 + 4, bar_y) == (0, 0, 0) and pixel(width - 1, bar_y) == (255, 255, 255)
    assert any(pixel(x, 96 + 11) == (0, 0, 0) for x in range(width - 20, width))  # "0.25" is drawn
    assert len(text_mask("0.25")[0]) == 16
