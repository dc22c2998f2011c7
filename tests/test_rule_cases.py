"""Every rule's VALID and INVALID cases, straight from the rule's module."""
import textwrap

import pytest

from compile_lint.rules import all_rules
from compile_lint.testing import run_case

RULES = all_rules()
VALID = [(code, i) for code, rule in RULES.items() for i in range(len(rule.valid))]
INVALID = [(code, i) for code, rule in RULES.items() for i in range(len(rule.invalid))]


@pytest.mark.parametrize("code,index", VALID, ids=[f"{c}-valid-{i}" for c, i in VALID])
def test_valid_case_is_quiet(code, index, tmp_path):
    rule = RULES[code]
    case = rule.valid[index]
    run = run_case(rule, case, str(tmp_path))
    assert run.findings == [], f"{code} fired on a valid case ({case.note}):\n{case.code}"


@pytest.mark.parametrize("code,index", INVALID, ids=[f"{c}-invalid-{i}" for c, i in INVALID])
def test_invalid_case_fires_and_fixes(code, index, tmp_path):
    rule = RULES[code]
    case = rule.invalid[index]
    run = run_case(rule, case, str(tmp_path))
    assert run.findings, f"{code} missed an invalid case ({case.note}):\n{case.code}"
    found_at = sorted((f.start.row, f.start.column) for f in run.findings)
    assert case.at is not None, f"{code}: pin this invalid case with at={found_at} (check each position)"
    assert found_at == sorted(tuple(p) for p in case.at)
    if case.rows is not None:
        assert sorted({f.start.row for f in run.findings}) == sorted(case.rows)
    for finding in run.findings:
        assert finding.code == code
        assert finding.message and "\n" not in finding.message, "a message is one line"
    if case.fixed is None:
        assert run.fixed is None, f"{code} rewrote a case that has no fix:\n{run.fixed}"
    else:
        assert run.fixed == textwrap.dedent(case.fixed)
        assert run.refixed is None, "a second fix changed the fixed code again"


@pytest.mark.parametrize("code", list(RULES))
def test_rule_has_page_and_cases(code):
    from compile_lint.rules.base import PAGE_SECTIONS

    rule = RULES[code]
    page = rule.page()
    for section in PAGE_SECTIONS:
        assert f"## {section}" in page, f"{code}'s page lacks '{section}'"
    # CL001 is about paths that cannot be read, which code cannot show: tests/test_ruff_options.py
    # and tests/test_bad_input.py cover it
    assert rule.valid and (rule.invalid or code == "CL001"), f"{code} needs valid and invalid cases"
    assert rule.fix_safety in ("safe", "unsafe", "none")
    if rule.fix_safety != "none":
        assert rule.codemod, f"{code} declares a fix but names no codemod"
        assert any(c.fixed for c in rule.invalid), f"{code} has no case showing its fix"


# -- odd code the cases do not show must not crash a rule -------------------------------
ODD_CODE_RULES = ["CL101", "CL102", "CL103", "CL104", "CL201", "CL202", "CL203", "CL204"]
ODD = [
    "",
    "x = 1\n",
    "class A:\n    pass\n",
    "import torch\nclass M(torch.nn.Module):\n    @staticmethod\n    def forward(x):\n        return x\n",
    "import torch\nf = torch.compile(lambda x: x)\nfor i in range(3):\n    g = torch.compile(lambda: i)\n",
    "import torch\nasync def f(x):\n    async for i in x:\n        torch.compile(lambda: i)\n",
    "import torch\ndef f(x):\n    match x.shape:\n        case (a, b):\n            return x.view(int(a), b)\nt = torch.jit.trace(f, torch.rand(2, 2))\n",
    "import torch\nclass M(torch.nn.Module):\n    def __init__(self, *a, **k):\n        super().__init__()\n        self.x, self.y = [], {}\n        self.x += (yield)\n",
    "import torch\ntorch._dynamo.config.recompile_limit = 10 ** 10 ** 10\n",
    "import torch\ntorch.onnx.export(*args)\ntorch.export.export(m, **kw)\n",
    "import torch.nn.functional as F\nimport torch\n@torch.compile\ndef f(x, **kw):\n    return F.interpolate(x, scale_factor=1.2, **kw)\n",
]


@pytest.mark.parametrize("source", ODD)
@pytest.mark.parametrize("code", ODD_CODE_RULES)
def test_odd_code_does_not_crash(code, source, tmp_path):
    from compile_lint.rules.base import Case

    run_case(RULES[code], Case(source), str(tmp_path))
