"""The project's promises about itself: docs in sync, CI runs the README's command,
pre-commit hooks work."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def test_rule_docs_and_readme_table_are_generated_from_the_registry():
    from compile_lint import docs

    assert docs.main(["--check"]) == 0, "run `python -m compile_lint.docs`"


def _readme_commands():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    quick = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", quick)


def test_readme_has_two_quickstart_commands_and_ci_runs_the_test_one():
    setup_and_check, setup_and_test = _readme_commands()
    assert "compile-lint check fixtures/" in setup_and_check
    assert "pytest" in setup_and_test and "-c constraints.txt" in setup_and_test
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as fh:
        ci_lines = [line.strip() for line in fh]
    assert setup_and_test in ci_lines


def test_constraints_pin_torch_and_package_declares_a_range():
    with open(os.path.join(ROOT, "constraints.txt")) as fh:
        assert "torch==2.13.0" in fh.read()
    with open(os.path.join(ROOT, "pyproject.toml")) as fh:
        text = fh.read()
    assert re.search(r'"torch>=[\d.]+,<\d+"', text)
    assert "torch==" not in text


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_pre_commit_try_repo(tmp_path):
    pre_commit = os.path.join(os.path.dirname(sys.executable), "pre-commit")
    if not os.path.exists(pre_commit):
        pytest.skip("pre-commit is not installed (pip install -e '.[test]')")
    repo = tmp_path / "user"
    repo.mkdir()
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    git = lambda *a: subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True, env=env)  # noqa: E731
    git("init", "-q")
    (repo / "clean.py").write_text("import torch\nmodel = torch.compile(Net())\n")
    git("add", "clean.py")

    def try_repo(*files):
        return subprocess.run(
            [pre_commit, "try-repo", ROOT, "compile-lint", "--files", *files],
            cwd=repo, capture_output=True, text=True, env=env,
        )

    ok = try_repo("clean.py")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (repo / "hazard.py").write_text("import torch\nmodel = Net()\ntorch.compile(model)\n")
    git("add", "hazard.py")
    bad = try_repo("hazard.py")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "CL503" in bad.stdout
    (repo / "notes.txt").write_text("no python here\n")
    git("add", "notes.txt")
    none = try_repo("notes.txt")
    assert none.returncode == 0, none.stdout + none.stderr


def test_config_modules_table_matches_the_shipped_keys():
    """analysis/torch_api.py names the same config modules the key table covers."""
    from compile_lint.analysis.torch_api import CONFIG_MODULES
    from compile_lint.torch_config import config_modules

    assert CONFIG_MODULES == frozenset(config_modules())


def test_wheel_lists_every_package_and_no_top_level_codemods():
    """pyproject lists packages by hand (to install codemods/ as compile_lint_codemods):
    a new package folder must be added there, and `codemods` never installs as is."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        setup = tomllib.load(fh)["tool"]["setuptools"]
    listed = set(setup["packages"])
    on_disk = set()
    for folder, dirs, files in os.walk(os.path.join(ROOT, "compile_lint")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if "__init__.py" in files:
            on_disk.add(os.path.relpath(folder, ROOT).replace(os.sep, "."))
    assert on_disk | {"compile_lint_codemods"} == listed
    assert "codemods" not in listed
    assert setup["package-dir"] == {"compile_lint_codemods": "codemods"}


def test_the_installed_console_script_checks_and_fixes_outside_the_checkout(tmp_path):
    """As a user runs it: the `compile-lint` script of this install, from another folder,
    without the checkout on sys.path (the codemods import as compile_lint_codemods)."""
    script = os.path.join(os.path.dirname(sys.executable), "compile-lint")
    if not os.path.exists(script):
        pytest.skip("compile-lint is not installed in this environment")
    (tmp_path / "m.py").write_text("import torch\nmodel = Net()\ntorch.compile(model)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    check = subprocess.run([script, "check", "m.py"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert check.returncode == 1 and "CL503" in check.stdout, check.stderr
    fix = subprocess.run([script, "fix", "m.py"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert fix.returncode == 0, fix.stderr
    assert (tmp_path / "m.py").read_text().endswith("model = torch.compile(model)\n")
