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
    assert rule.valid and rule.invalid, f"{code} needs valid and invalid cases"
    assert rule.fix_safety in ("safe", "unsafe", "none")
    if rule.fix_safety != "none":
        assert rule.codemod, f"{code} declares a fix but names no codemod"
        assert any(c.fixed for c in rule.invalid), f"{code} has no case showing its fix"
