"""The graph-break family (CL508 and the CL5xx codes that carry a Dynamo graph-break ID):
every finding names its official ID, carries the registry's texts for the target torch
release in JSON, SARIF and text, and each rule's page lists the IDs its findings carry."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from compile_lint.analysis.graph_breaks.ids import describe, release_for, releases, url
from compile_lint.rules import all_rules
from compile_lint.testing import run_case

from conftest import ROOT

FAMILY = [rule for rule in all_rules().values() if rule.graph_break_ids]
GB_ID = re.compile(r"\((GB\d{4})\)")

HAZARD = """\
import torch


@torch.compile
def f(x: torch.Tensor):
    for _ in range(3):
        x = x / x.amax().item()
    return x[x > 0]
"""


def run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "compile_lint", *args], capture_output=True, text=True, cwd=cwd)


def test_the_table_is_read_per_release():
    assert release_for(None) == releases()[-1]
    assert release_for("2.13") == "2.13.0"
    assert release_for("2.14") == "2.14.1"
    assert release_for("1.13") == releases()[0]
    old, new = describe("GB0291", "2.13"), describe("GB0291", "2.15")
    assert old.explanation == "logging.Logger methods are not supported for non-export cases."
    assert new.explanation.startswith("For non-export cases, logging.Logger methods are only supported")
    assert (old.torch, new.torch) == ("2.13.0", "2.15.0")
    assert url("GB0036") == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0036.html"
    assert describe("GB9999") is None


def test_registry_texts_are_made_readable():
    # a Python expression in the registry: its string literals
    assert describe("GB0170", "2.13").explanation == (
        "Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). "
        "Dynamo does not support tracing dynamic control flow.")
    # a variable's name: no explanation rather than the name
    assert describe("GB0007", "2.13").explanation == ""
    # format fields: filled where known, `...` elsewhere
    filled = describe("GB0036", "2.13", fill={"cause.func": "aten.nonzero.default"})
    assert filled.explanation == "Operator `aten.nonzero.default`'s output shape depends on input Tensor data."
    assert "{" not in describe("GB0036", "2.13").explanation
    # a hint the registry splits over several strings is one sentence again
    assert describe("GB0124", "2.13").hints == (
        "Set `torch._dynamo.config.capture_scalar_outputs = True` or `export TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` "
        "to include these operations in the captured graph.",)


def test_findings_carry_the_id_in_every_format(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "m.py").write_text(HAZARD)
    proc = run("check", "m.py", "--output-format", "json", "--target-torch", "2.13", "--no-cache", cwd=tmp_path)
    items = json.loads(proc.stdout)
    by_id = {i["graph_break"]["id"]: i for i in items}
    assert set(by_id) == {"GB0124", "GB0036"}
    item = by_id["GB0124"]
    assert "(GB0124)" in item["message"] and "runs all of `f` eagerly (GB7000)" in item["message"]
    assert item["graph_break"]["frame_to_eager"] == "f" and item["graph_break"]["torch"] == "2.13.0"
    assert by_id["GB0036"]["graph_break"]["frame_to_eager"] is None
    assert by_id["GB0036"]["graph_break"]["hints"] == [
        "Enable tracing of dynamic shape operators with `torch._dynamo.config.capture_dynamic_output_shape_ops = True`"]
    newest = json.loads(run("check", "m.py", "--output-format", "json", "--no-cache", cwd=tmp_path).stdout)
    assert {i["graph_break"]["torch"] for i in newest} == {releases()[-1]}

    text = run("check", "m.py", "--no-cache", cwd=tmp_path).stdout
    assert "= note: GB0124 Unsupported Tensor.item() call with capture_scalar_outputs=False (torch " in text
    assert "= see: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html" in text
    sarif = json.loads(run("check", "m.py", "--output-format", "sarif", "--no-cache", cwd=tmp_path).stdout)
    props = [r["properties"]["graphBreak"]["id"] for r in sarif["runs"][0]["results"]]
    assert sorted(props) == ["GB0036", "GB0124"]


def test_cached_findings_keep_their_id(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "m.py").write_text(HAZARD)
    first = run("check", "m.py", "--output-format", "json", cwd=tmp_path)
    second = run("check", "m.py", "--output-format", "json", cwd=tmp_path)  # from the cache
    assert (tmp_path / ".compile_lint_cache").is_dir()
    assert json.loads(first.stdout) == json.loads(second.stdout)
    assert all("graph_break" in i for i in json.loads(second.stdout))


@pytest.mark.parametrize("rule", FAMILY, ids=lambda r: r.code)
def test_pages_list_the_ids_their_findings_carry(rule, tmp_path):
    page = rule.page()
    section = page[page.index("## Graph-break IDs"):page.index("## Example")]
    for gb_id in rule.graph_break_ids:
        assert f"[{gb_id}](" in section
        assert describe(gb_id, "2.13") is not None, f"{gb_id} is not in torch 2.13's registry"
    seen = set()
    for n, case in enumerate(rule.invalid):
        for finding in run_case(rule, case, str(tmp_path / str(n))).findings:
            gb_id = GB_ID.search(finding.message)
            assert gb_id, f"{rule.code}: {finding.message!r} names no graph-break ID"
            assert finding.graph_break is not None and finding.graph_break.gb_id == gb_id.group(1)
            seen.add(gb_id.group(1))
    assert seen <= set(rule.graph_break_ids), f"{rule.code} reports IDs its page does not list: {seen - set(rule.graph_break_ids)}"


def test_rule_command_prints_the_ids():
    proc = run("rule", "CL508", cwd=ROOT)
    assert proc.returncode == 0 and "## Graph-break IDs" in proc.stdout and "[GB0036](" in proc.stdout


def test_messages_say_when_a_break_needs_training_or_float16(tmp_path):
    from compile_lint.rules import get_rule
    from compile_lint.rules.base import Case

    code = (
        "import torch\nclass Encoder(torch.nn.Module):\n    def forward(self, h: torch.Tensor):\n"
        "        for i in range(4):\n            p = torch.rand([])\n"
        "            skip = self.training and i > 0 and (p < 0.1)\n            if not skip or i > 8:\n                h = h * 2\n"
        "            if h.dtype == torch.float16 and torch.isinf(h).any():\n                h = h.clamp(-1, 1)\n"
        "        return h\nenc = torch.compile(Encoder())\n"
    )
    messages = sorted(f.message for f in run_case(get_rule("CL508"), Case(code), str(tmp_path)).findings)
    assert len(messages) == 2
    assert "graph break when training (GB0170)" in messages[0] or "graph break when training (GB0170)" in messages[1]
    assert any("graph break for float16 inputs (GB0170)" in m for m in messages)
