"""The real CLI over fixtures/rules/CL1xx and CL2xx: each hazard fixture produces its
rule's code at the pinned lines, each clean look-alike produces nothing of any rule,
and `fix --unsafe-fixes` on a copy of hazard.py gives fixed.py byte for byte."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

FIXTURES = os.path.join(ROOT, "fixtures", "rules")

# code -> {file relative to the fixture folder: rows where that code must fire}
HAZARDS = {
    "CL101": {"hazard.py": [27, 43, 44]},
    "CL102": {"hazard/grading.py": [20, 21], "hazard/deploy.py": [13]},
    "CL103": {"hazard.py": [24, 29]},
    "CL104": {"hazard.py": [49, 50]},
    "CL201": {"hazard.py": [31, 32]},
    "CL202": {"hazard.py": [32, 34]},
    "CL203": {"hazard.py": [22, 26]},
    "CL204": {"hazard.py": [6, 7]},
}
FIXED = ["CL101", "CL103", "CL201"]
CODES = sorted(HAZARDS)


def _copy_config(code, folder):
    """A fixture folder's compile-lint.toml (e.g. selecting a rule that is off by default)."""
    config = os.path.join(FIXTURES, code, "compile-lint.toml")
    if os.path.exists(config):
        shutil.copyfile(config, os.path.join(str(folder), "compile-lint.toml"))


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "compile_lint", *args], capture_output=True, text=True, cwd=cwd or ROOT)


def check_json(path):
    proc = cli("check", path, "--output-format", "json", "--no-cache")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def entry(code, name):
    folder = os.path.join(FIXTURES, code)
    for candidate in (os.path.join(folder, f"{name}.py"), os.path.join(folder, name)):
        if os.path.exists(candidate):
            return candidate
    raise AssertionError(f"fixtures/rules/{code} has no {name}")


@pytest.mark.parametrize("code", CODES)
def test_hazard_fires_where_expected(code):
    found = check_json(entry(code, "hazard"))
    folder = os.path.join(FIXTURES, code)
    rows: dict[str, list[int]] = {}
    for f in found:
        if f["code"] == code:
            rel = os.path.relpath(f["filename"], folder).replace(os.sep, "/")
            rows.setdefault(rel, []).append(f["location"]["row"])
            assert f["message"] and f["url"].endswith(f"{code}.md")
    assert {k: sorted(set(v)) for k, v in rows.items()} == HAZARDS[code]


@pytest.mark.parametrize("code", CODES)
def test_clean_look_alike_is_clean(code):
    assert check_json(entry(code, "clean")) == []


@pytest.mark.parametrize("code", FIXED)
def test_fix_gives_fixed(code, tmp_path):
    work = tmp_path / "hazard.py"
    shutil.copyfile(os.path.join(FIXTURES, code, "hazard.py"), work)
    _copy_config(code, tmp_path)
    proc = cli("fix", str(work), "--unsafe-fixes", cwd=str(tmp_path))
    assert proc.returncode in (0, 1), proc.stderr
    expected = open(os.path.join(FIXTURES, code, "fixed.py"), "rb").read()
    assert work.read_bytes() == expected
    # nothing of this rule is left to fix, and a second run changes nothing
    again = check_json(str(work))
    assert not [f for f in again if f["code"] == code and f["fix"]]
    cli("fix", str(work), "--unsafe-fixes", cwd=str(tmp_path))
    assert work.read_bytes() == expected


def test_safe_fix_alone_applies_cl101_but_not_the_unsafe_ones(tmp_path):
    for code in ("CL101", "CL103", "CL201"):
        shutil.copyfile(os.path.join(FIXTURES, code, "hazard.py"), tmp_path / f"{code}.py")
    _copy_config("CL103", tmp_path)
    proc = cli("fix", str(tmp_path), cwd=str(tmp_path))
    assert proc.returncode in (0, 1), proc.stderr
    assert (tmp_path / "CL101.py").read_bytes() == open(os.path.join(FIXTURES, "CL101", "fixed.py"), "rb").read()
    for code in ("CL103", "CL201"):
        assert (tmp_path / f"{code}.py").read_bytes() == open(os.path.join(FIXTURES, code, "hazard.py"), "rb").read()


def test_json_reports_fix_applicability():
    found = {f["code"]: f for f in check_json(os.path.join(FIXTURES, "CL103", "hazard.py"))}
    assert found["CL103"]["fix"]["applicability"] == "unsafe"
    found = {f["code"]: f for f in check_json(os.path.join(FIXTURES, "CL101", "hazard.py"))}
    assert found["CL101"]["fix"]["applicability"] == "safe"
    assert "torch.jit.trace" in found["CL101"]["message"]
