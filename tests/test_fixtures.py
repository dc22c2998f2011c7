"""Run the real CLI over fixtures/rules/<CODE>/: hazard.py (or hazard/) must produce
<CODE>, clean.py (or clean/) nothing at all, and `fix --unsafe-fixes` on a copy of
hazard.py must give fixed.py byte for byte (and then nothing more to fix)."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

FIXTURES = os.path.join(ROOT, "fixtures", "rules")
CODES = sorted(d for d in os.listdir(FIXTURES) if d.startswith("CL")) if os.path.isdir(FIXTURES) else []


def _copy_config(code, folder):
    """A fixture folder's compile-lint.toml (e.g. selecting a rule that is off by default)."""
    config = os.path.join(FIXTURES, code, "compile-lint.toml")
    if os.path.exists(config):
        shutil.copyfile(config, os.path.join(str(folder), "compile-lint.toml"))


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "compile_lint", *args], capture_output=True, text=True, cwd=cwd or ROOT
    )


def findings(path, *extra):
    proc = cli("check", path, "--output-format", "json", *extra)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _entry(code, name):
    for candidate in (os.path.join(FIXTURES, code, f"{name}.py"), os.path.join(FIXTURES, code, name)):
        if os.path.exists(candidate):
            return candidate
    return None


@pytest.mark.parametrize("code", CODES)
def test_hazard_fixture_fires(code):
    hazard = _entry(code, "hazard")
    assert hazard, f"fixtures/rules/{code} has no hazard.py"
    codes = {f["code"] for f in findings(hazard)}
    assert code in codes, f"{code} did not fire on its hazard fixture"


@pytest.mark.parametrize("code", CODES)
def test_clean_fixture_is_clean(code):
    clean = _entry(code, "clean")
    assert clean, f"fixtures/rules/{code} has no clean look-alike"
    assert findings(clean) == []


@pytest.mark.parametrize("code", [c for c in CODES if os.path.exists(os.path.join(FIXTURES, c, "fixed.py"))])
def test_fix_gives_fixed_fixture(code, tmp_path):
    work = tmp_path / "hazard.py"
    shutil.copyfile(os.path.join(FIXTURES, code, "hazard.py"), work)
    _copy_config(code, tmp_path)
    proc = cli("fix", str(work), "--unsafe-fixes", cwd=str(tmp_path))
    assert proc.returncode in (0, 1), proc.stderr
    with open(os.path.join(FIXTURES, code, "fixed.py"), "rb") as fh:
        assert work.read_bytes() == fh.read()
    before = work.read_bytes()
    again = cli("fix", str(work), "--unsafe-fixes", cwd=str(tmp_path))
    assert again.returncode in (0, 1), again.stderr
    assert work.read_bytes() == before, "a second fix changed the file"
