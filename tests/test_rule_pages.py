"""Rule pages (`compile-lint rule CODE`, docs/rules/): sections in order, and the
evidence they cite."""
import subprocess
import sys

import pytest

from compile_lint.rules import get_rule

from conftest import ROOT

MINE = ["CL101", "CL102", "CL103", "CL104", "CL201", "CL202", "CL203", "CL204"]


@pytest.mark.parametrize("code", MINE)
def test_page_cites_hazards_and_sections(code):
    page = get_rule(code).page()
    assert f"hazards.md {code}" in page
    assert page.index("## What it does") < page.index("## Why is this bad?") < page.index("## References")


def test_cl201_page_says_it_adds_state_dict_keys():
    proc = subprocess.run([sys.executable, "-m", "compile_lint", "rule", "CL201"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "adds `state_dict` keys" in proc.stdout and "strict=False" in proc.stdout


def test_pages_have_evidence():
    from compile_lint.rules import get_rule

    for code in ("CL301", "CL302", "CL303", "CL304", "CL401", "CL402", "CL403"):
        page = get_rule(code).page()
        assert f"hazards.md {code}" in page
        assert "pytorch#" in page or "kornia" in page or "cudagraph_utils.py" in page
