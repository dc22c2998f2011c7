"""The command line itself: exit codes, paths, selection, stdin, syntax errors, what
`check` imports, `rules`/`rule`, --version. Output formats, configuration, suppression
and fixing have their own files."""
import subprocess
import sys

import pytest

from conftest import HAZARD, run


def test_exit_0_on_clean(project):
    proc = run("check", "good.py", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All checks passed" in proc.stdout


def test_exit_1_on_findings_and_exit_zero(project):
    assert run("check", "bad.py", cwd=project).returncode == 1
    assert run("check", "bad.py", "--exit-zero", cwd=project).returncode == 0


@pytest.mark.parametrize(
    "args,needle",
    [
        (("check", "--select", "CL999"), "unknown rule selector 'CL999'"),
        (("check", "--ignore", "E501"), "unknown rule selector"),
        (("check", "missing.py", "--ignore", "CL001"), "missing.py: no such file or directory"),
        (("check", "--output-format", "xml"), "Invalid value for '--output-format'"),
        (("check", "--target-torch", "two"), "expected a torch version"),
        (("rule", "CL5O3"), "unknown rule"),
    ],
)
def test_exit_2_on_user_errors_without_traceback(project, args, needle):
    proc = run(*args, cwd=project)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr


def test_default_path_is_current_folder(project):
    proc = run("check", "--output-format", "concise", cwd=project)
    assert proc.returncode == 1
    assert "bad.py:3:1: CL503" in proc.stdout


def test_select_ignore_and_prefixes(project):
    assert run("check", "bad.py", "--select", "CL0", cwd=project).returncode == 0
    assert run("check", "bad.py", "--select", "CL5", cwd=project).returncode == 1
    assert run("check", "bad.py", "--ignore", "CL503", cwd=project).returncode == 0
    assert run("check", "bad.py", "--select", "CL0", "--extend-select", "CL503", cwd=project).returncode == 1
    assert run("check", "bad.py", "--select", "ALL", "--ignore", "CL50", cwd=project).returncode == 0


def test_stdin_check_and_fix(tmp_path):
    proc = run("check", "-", "--stdin-filename", "model.py", "--output-format", "concise", cwd=tmp_path, stdin=HAZARD)
    assert proc.returncode == 1 and "model.py:3:1: CL503" in proc.stdout
    proc = run("fix", "-", cwd=tmp_path, stdin=HAZARD)
    assert proc.returncode == 0
    assert proc.stdout == "import torch\nmodel = Net()\nmodel = torch.compile(model)\n"


def test_syntax_error_is_cl000_and_others_still_linted(project):
    (project / "broken.py").write_bytes(b"def f(:\n    pass\n")
    before = (project / "broken.py").read_bytes()
    proc = run("check", ".", "--output-format", "concise", cwd=project)
    assert proc.returncode == 1
    assert "broken.py:1:7: CL000 SyntaxError" in proc.stdout
    assert "bad.py:3:1: CL503" in proc.stdout
    run("fix", ".", cwd=project)
    assert (project / "broken.py").read_bytes() == before
    assert "model = torch.compile(model)" in (project / "bad.py").read_text()


def test_check_does_not_import_torch_or_libcst(tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    code = (
        "import sys, runpy\n"
        "sys.argv = ['compile-lint', 'check', 'a.py']\n"
        "try:\n"
        "    runpy.run_module('compile_lint', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "bad = [m for m in ('torch', 'libcst') if m in sys.modules]\n"
        "sys.stderr.write('IMPORTED=' + ','.join(bad) + '\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert "IMPORTED=\n" in proc.stderr, proc.stderr


def test_rules_table_and_rule_page(tmp_path):
    out = run("rules", cwd=tmp_path).stdout
    assert "CL503" in out and "compile-result-discarded" in out and "safe" in out
    # the rules the default selection leaves out say so (select them by code)
    default = {line.split()[0]: line.split()[4] for line in out.splitlines()[1:]}
    assert default["CL503"] == "on" and default["CL102"] == "off" and default["CL104"] == "off"
    page = run("rule", "cl503", cwd=tmp_path).stdout
    for section in ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "References"):
        assert f"## {section}" in page


def test_version(tmp_path):
    from compile_lint import __version__

    assert run("--version", cwd=tmp_path).stdout.strip().endswith(__version__)


def _fake_exit(monkeypatch):
    """cli._exit_now with os._exit and the atexit run recorded instead of done."""
    import atexit

    from compile_lint import cli

    calls = []
    monkeypatch.setattr(cli.os, "_exit", lambda code: calls.append(code))
    monkeypatch.setattr(atexit, "_run_exitfuncs", lambda: None)
    monkeypatch.setattr(atexit, "_clear", lambda: None)
    return cli, calls


def test_fast_exit_with_multiprocessing_imported_but_no_child(monkeypatch):
    # libcst's codemod module imports multiprocessing when a JSON report fills the
    # fixes' edits; with nothing started the teardown is still skipped
    import multiprocessing  # noqa: F401

    cli, calls = _fake_exit(monkeypatch)
    cli._exit_now(1)
    assert calls == [1]


def test_no_fast_exit_while_a_child_process_lives(monkeypatch):
    import multiprocessing
    import time

    cli, calls = _fake_exit(monkeypatch)
    child = multiprocessing.get_context("fork").Process(target=time.sleep, args=(30,))
    child.start()
    try:
        cli._exit_now(0)
        assert calls == []
    finally:
        child.terminate()
        child.join()
    cli._exit_now(0)
    assert calls == [0]
