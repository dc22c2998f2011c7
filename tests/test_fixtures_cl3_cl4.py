"""The CL3xx/CL4xx fixtures through the real command line.

fixtures/rules/CLxxx/ holds, per rule:
  hazard.py   realistic code with the hazard: `check` reports the rule
  clean.py    a look-alike without it: `check` reports nothing, of any rule
  fixed.py    (rules with a fix) `fix --unsafe-fixes` of a copy of hazard.py, byte for byte
  crossfile/  (some rules) a small project whose hazard spans files
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures", "rules")
CODES = ["CL301", "CL302", "CL303", "CL304", "CL401", "CL402", "CL403"]
WITH_FIX = [c for c in CODES if os.path.exists(os.path.join(FIXTURES, c, "fixed.py"))]
CROSSFILE = [c for c in CODES if os.path.isdir(os.path.join(FIXTURES, c, "crossfile"))]


def cli(*args: str, cwd: str = ROOT) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "compile_lint", *args, "--no-cache"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )


def check_json(path: str) -> list[dict]:
    proc = cli("check", path, "--output-format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout or "[]")


def test_every_rule_has_fixtures():
    for code in CODES:
        for name in ("hazard.py", "clean.py"):
            assert os.path.isfile(os.path.join(FIXTURES, code, name)), f"{code}/{name} is missing"
    assert set(WITH_FIX) == {"CL302", "CL304", "CL401", "CL402"}


@pytest.mark.parametrize("code", CODES)
def test_hazard_is_reported(code):
    findings = check_json(os.path.join(FIXTURES, code, "hazard.py"))
    ours = [f for f in findings if f["code"] == code]
    assert ours, f"{code} missed its hazard fixture: {findings}"
    for f in ours:
        assert " at " in f["message"], "the message says where the region was compiled"


@pytest.mark.parametrize("code", CODES)
def test_clean_look_alike_is_quiet(code):
    findings = check_json(os.path.join(FIXTURES, code, "clean.py"))
    assert findings == [], f"{code}/clean.py should produce no finding of any rule: {findings}"


@pytest.mark.parametrize("code", WITH_FIX)
def test_fix_matches_fixed(code, tmp_path):
    target = tmp_path / "hazard.py"
    shutil.copyfile(os.path.join(FIXTURES, code, "hazard.py"), target)
    proc = cli("fix", "--unsafe-fixes", str(target), cwd=str(tmp_path))
    assert proc.returncode in (0, 1), proc.stderr
    with open(os.path.join(FIXTURES, code, "fixed.py"), "rb") as fh:
        expected = fh.read()
    assert target.read_bytes() == expected
    # the fixed file is not reported any more, and fixing it again changes nothing
    again = cli("fix", "--unsafe-fixes", str(target), cwd=str(tmp_path))
    assert again.returncode == 0, again.stdout + again.stderr
    assert target.read_bytes() == expected


@pytest.mark.parametrize("code", WITH_FIX)
def test_json_carries_the_edits(code):
    findings = [f for f in check_json(os.path.join(FIXTURES, code, "hazard.py")) if f["code"] == code]
    fixable = [f for f in findings if f["fix"]]
    assert fixable, f"{code}: no finding offers its fix"
    for f in fixable:
        assert f["fix"]["applicability"] == ("safe" if code == "CL401" else "unsafe")
        assert f["fix"]["edits"], "the JSON report spells out the edit"


@pytest.mark.parametrize("code", CROSSFILE)
def test_crossfile_project(code):
    folder = os.path.join(FIXTURES, code, "crossfile")
    findings = [f for f in check_json(folder) if f["code"] == code]
    assert findings, f"{code} missed its cross-file fixture"
    files = {os.path.basename(f) for f in os.listdir(folder)}
    reached = {os.path.basename(f["filename"]) for f in findings}
    assert reached <= files
    # linted alone, the file with the hazard cannot know it is compiled (or how)
    for name in reached:
        alone = [f for f in check_json(os.path.join(folder, name)) if f["code"] == code]
        assert not alone or code == "CL401", f"{code} fired on {name} without the compile site"
