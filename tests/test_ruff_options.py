"""The options a Ruff user reaches for, with Ruff's meanings: `check --fix`,
`--unsafe-fixes`, `--fix-only`, `--diff`, `--show-fixes`, `--statistics`, `--add-noqa`,
`--watch`, `-q/--quiet`, `-s/--silent`, `--exclude`/`--extend-exclude` and
`--per-file-ignores`/`--extend-per-file-ignores` on the command line, and an unreadable
path as a finding (Ruff's E902, here CL001) with exit 1. None of them existed on dd75348."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import run

TWO_FIXABLE = "import torch\na = Net()\ntorch.compile(a)\nb = Net()\ntorch.compile(b)\ntorch.compile(make())\n"
TWO_FIXED = "import torch\na = Net()\na = torch.compile(a)\nb = Net()\nb = torch.compile(b)\ntorch.compile(make())\n"
UNSAFE = "import torch._dynamo\ntorch._dynamo.config.suppress_errors = True\n"


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "m.py").write_text(TWO_FIXABLE)
    return tmp_path


def test_check_fix_is_fix(repo):
    proc = run("check", "m.py", "--fix", cwd=repo)
    assert proc.returncode == 1  # one finding has no fix: it remains
    assert (repo / "m.py").read_text() == TWO_FIXED
    assert "Found 3 findings (2 fixed, 1 remaining)." in proc.stdout
    (repo / "u.py").write_text(UNSAFE)
    assert run("check", "u.py", "--fix", cwd=repo).returncode == 1 and (repo / "u.py").read_text() == UNSAFE
    assert run("check", "u.py", "--fix", "--unsafe-fixes", cwd=repo).returncode == 0
    assert (repo / "u.py").read_text() == "import torch._dynamo\n"
    assert run("check", "m.py", "--no-fix", cwd=repo).returncode == 1  # --no-fix: a plain check


def test_fix_only_applies_and_reports_nothing_left(repo):
    """Ruff: "Apply fixes to resolve lint violations, but don't report on, or exit
    non-zero for, leftover violations"."""
    proc = run("check", "m.py", "--fix-only", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (repo / "m.py").read_text() == TWO_FIXED
    assert "CL503" not in proc.stdout and "Fixed 2 findings." in proc.stdout
    again = run("check", "m.py", "--fix-only", cwd=repo)
    assert again.returncode == 0 and "No fixes applied." in again.stdout


def test_check_diff_writes_nothing(repo):
    proc = run("check", "m.py", "--diff", cwd=repo)
    assert proc.returncode == 1
    assert "+a = torch.compile(a)" in proc.stdout and "Would fix 2 findings." in proc.stderr
    assert (repo / "m.py").read_text() == TWO_FIXABLE


def test_show_fixes(repo):
    (repo / "n.py").write_text("import torch\nc = Net()\ntorch.compile(c)\n")
    proc = run("check", ".", "--fix", "--show-fixes", cwd=repo)
    assert "Fixed 3 findings:\n- m.py:\n    2 × CL503 (compile-result-discarded)\n- n.py:\n    1 × CL503 (compile-result-discarded)\n" in proc.stdout, proc.stdout
    assert proc.stdout.rstrip().endswith("Found 4 findings (3 fixed, 1 remaining).")
    fixed = run("fix", ".", "--show-fixes", cwd=repo)
    assert "No fixes applied." in fixed.stdout


def test_statistics(repo):
    (repo / "u.py").write_text(UNSAFE)
    proc = run("check", ".", "--statistics", cwd=repo)
    lines = proc.stdout.splitlines()
    assert lines[0] == "3\tCL503\t[*] compile-result-discarded"
    assert lines[1] == "1\tCL506\t[-] suppress-errors"
    assert lines[2].startswith("Found 4 findings")
    data = json.loads(run("check", ".", "--statistics", "--output-format", "json", cwd=repo).stdout)
    assert data[0] == {"code": "CL503", "name": "compile-result-discarded", "count": 3, "fixable": True, "fix_applicability": "safe"}
    assert proc.returncode == 1


def test_add_noqa(repo):
    """Ruff: "Enable automatic additions of noqa directives to failing lines"; an
    existing `# noqa: X` gains the code; a line ending inside a string is left alone."""
    (repo / "m.py").write_text(
        "import torch\n"
        "torch.compile(a)  # noqa: CL101\n"
        "torch.compile(b)\n"
        "torch.compile(c, options={'note': '''starts here\n"
        "ends here'''})\n"
    )
    proc = run("check", "m.py", "--add-noqa", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Added 2 noqa directives." in proc.stderr and "1 lines end inside a string" in proc.stderr
    text = (repo / "m.py").read_text()
    assert "torch.compile(a)  # noqa: CL101, CL503\n" in text and "torch.compile(b)  # noqa: CL503\n" in text
    assert "starts here\nends here'''})\n" in text
    left = run("check", "m.py", "--output-format", "concise", cwd=repo)
    assert [line.split(": ")[1].split()[0] for line in left.stdout.splitlines()[:-1]] == ["CL503"]  # the one in the string


def test_add_noqa_in_a_notebook(tmp_path):
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "a", "metadata": {}, "outputs": [],
                     "source": ["import torch\n", "torch.compile(model)"]}],
          "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "P"}},
          "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "e.ipynb").write_text(json.dumps(nb, indent=1) + "\n")
    assert run("check", "e.ipynb", "--add-noqa", cwd=tmp_path).returncode == 0
    cell = json.loads((tmp_path / "e.ipynb").read_text())["cells"][0]
    assert cell["source"] == ["import torch\n", "torch.compile(model)  # noqa: CL503"]
    assert run("check", "e.ipynb", cwd=tmp_path).returncode == 0


def test_quiet_and_silent(repo):
    quiet = run("check", "m.py", "-q", "--output-format", "concise", cwd=repo)
    assert quiet.returncode == 1 and len(quiet.stdout.splitlines()) == 3 and "Found" not in quiet.stdout
    assert run("check", "m.py", "--quiet", cwd=repo).stdout.count("CL503") == 3
    silent = run("check", "m.py", "-s", cwd=repo)
    assert silent.returncode == 1 and silent.stdout == "" and silent.stderr == ""
    assert run("fix", "m.py", "--silent", cwd=repo).stdout == ""
    assert (repo / "m.py").read_text() == TWO_FIXED


def test_exclude_and_per_file_ignores_on_the_command_line(repo):
    (repo / "pyproject.toml").write_text("[project]\nname = 'p'\n\n[tool.compile-lint]\nexclude = ['gen']\n")
    for folder in ("gen", "vendor", "tests"):
        (repo / folder).mkdir()
        (repo / folder / "x.py").write_text("import torch\ntorch.compile(m)\n")

    def paths(*args):
        out = run("check", ".", "--output-format", "json", *args, cwd=repo).stdout
        return sorted(os.path.relpath(f["filename"], repo) for f in json.loads(out))

    assert paths() == ["m.py"] * 3 + ["tests/x.py", "vendor/x.py"]
    assert paths("--exclude", "vendor") == ["gen/x.py"] + ["m.py"] * 3 + ["tests/x.py"]  # replaces the config's
    assert paths("--extend-exclude", "vendor,tests") == ["m.py"] * 3  # adds to it
    assert paths("--per-file-ignores", "tests/*:CL5") == ["m.py"] * 3 + ["vendor/x.py"]
    assert paths("--extend-per-file-ignores", "vendor/*:CL503", "--extend-per-file-ignores", "m.py:CL5") == ["tests/x.py"]
    bad = run("check", ".", "--per-file-ignores", "tests/*", cwd=repo)
    assert bad.returncode == 2 and "expected PATTERN:CODES" in bad.stderr
    bad = run("check", ".", "--per-file-ignores", "tests/*:XX1", cwd=repo)
    assert bad.returncode == 2 and "unknown rule selector" in bad.stderr


def test_an_unreadable_path_is_a_finding(repo):
    """Ruff reports a path it cannot read as E902 and exits 1; CL001 here (docs/rules/CL001.md)."""
    proc = run("check", "m.py", "missing.py", "--output-format", "concise", cwd=repo)
    assert proc.returncode == 1
    assert "missing.py:1:1: CL001 no such file or directory" in proc.stdout
    data = json.loads(run("check", "missing.py", "--output-format", "json", cwd=repo).stdout)
    assert [(f["code"], f["message"]) for f in data] == [("CL001", "no such file or directory")]
    off = run("check", "missing.py", "--ignore", "CL001", cwd=repo)
    assert off.returncode == 2 and "missing.py: no such file or directory" in off.stderr
    sarif = json.loads(run("check", "missing.py", "--output-format", "sarif", cwd=repo).stdout)
    assert sarif["runs"][0]["results"][0]["ruleId"] == "CL001"


def test_watch_checks_again_on_change_and_ends_cleanly(repo):
    """Ruff: "Run in watch mode by re-running whenever files change". Ctrl-C ends it with
    exit 0; no worker is left behind."""
    # Ctrl-C as a terminal delivers it: a harness that starts the tests in the background
    # (`cmd &` without job control) leaves SIGINT ignored, and exec keeps it ignored
    proc = subprocess.Popen([sys.executable, "-m", "compile_lint", "check", ".", "--watch", "--output-format", "concise"],
                            cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        out = _read_until(proc, "Found 3 findings")
        assert "m.py:3:1: CL503" in out
        time.sleep(1.1)  # a new mtime
        (repo / "m.py").write_text("import torch\nmodel = torch.compile(Net())\n")
        _read_until(proc, "All checks passed!")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout
    assert children == ""


def _read_until(proc, needle: str, timeout: float = 120) -> str:
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    seen = ""
    deadline = time.time() + timeout
    while needle not in seen:
        if time.time() > deadline or proc.poll() is not None:
            raise AssertionError(f"{needle!r} not seen; stdout so far:\n{seen}\nstderr:\n{proc.stderr.read() if proc.poll() is not None else ''}")
        if sel.select(timeout=1):
            line = proc.stdout.readline()
            seen += line
    return seen
