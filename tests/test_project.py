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


class _UserRepo:
    """A git repository of a user, and `pre-commit try-repo` of this checkout's hooks in it
    (pre-commit installs the hooks into their own virtualenv, as a user's run does)."""

    def __init__(self, tmp_path):
        self.pre_commit = os.path.join(os.path.dirname(sys.executable), "pre-commit")
        if not os.path.exists(self.pre_commit):
            pytest.skip("pre-commit is not installed (pip install -e '.[test]')")
        self.path = tmp_path / "user"
        self.path.mkdir()
        self.env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                        GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
        self.git("init", "-q")

    def git(self, *args):
        return subprocess.run(["git", *args], cwd=self.path, check=True, capture_output=True, env=self.env)

    def add(self, name: str, text: str) -> None:
        (self.path / name).write_text(text)
        self.git("add", name)

    def try_repo(self, hook: str, *files):
        return subprocess.run(
            [self.pre_commit, "try-repo", ROOT, hook, "--files", *files],
            cwd=self.path, capture_output=True, text=True, env=self.env,
        )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_pre_commit_try_repo(tmp_path):
    repo = _UserRepo(tmp_path)
    repo.add("clean.py", "import torch\nmodel = torch.compile(Net())\n")
    ok = repo.try_repo("compile-lint", "clean.py")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    repo.add("hazard.py", "import torch\nmodel = Net()\ntorch.compile(model)\n")
    bad = repo.try_repo("compile-lint", "hazard.py")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "CL503" in bad.stdout
    repo.add("notes.txt", "no python here\n")
    none = repo.try_repo("compile-lint", "notes.txt")
    assert none.returncode == 0, none.stdout + none.stderr


def _notebook(*cells: str) -> str:
    import json

    return json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                   "source": cell.splitlines(keepends=True)} for i, cell in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }, indent=1) + "\n"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_pre_commit_checks_and_fixes_notebooks(tmp_path):
    """The hooks take `.ipynb` files (identify's `jupyter` type): on dd75348 pre-commit
    said "(no files to check) Skipped" for a notebook."""
    repo = _UserRepo(tmp_path)
    repo.add("exp.ipynb", _notebook("import torch\nmodel = Net()\n", "torch.compile(model)\n"))
    found = repo.try_repo("compile-lint", "exp.ipynb")
    assert found.returncode == 1, found.stdout + found.stderr
    assert "exp.ipynb:cell 2:1:1: CL503" in found.stdout, found.stdout
    fixed = repo.try_repo("compile-lint-fix", "exp.ipynb")
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr  # pre-commit: the hook changed files
    assert "files were modified by this hook" in fixed.stdout
    again = repo.try_repo("compile-lint", "exp.ipynb")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (repo.path / "exp.ipynb").read_text() == _notebook("import torch\nmodel = Net()\n", "model = torch.compile(model)\n")


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


def test_what_is_derived_from_a_file_goes_with_its_parsed_tree(tmp_path):
    """Sources keeps `max_files` parsed files; what was derived from one (compile calls,
    a semantic model: each holds the tree) is forgotten with it, so the cache never holds
    more trees than that. A file whose derived value is asked again stays among the most
    recent."""
    from compile_lint.analysis.project.context import Sources

    paths = []
    for i in range(4):
        p = tmp_path / f"m{i}.py"
        p.write_text(f"x = {i}\n")
        paths.append(str(p))
    sources = Sources(max_files=2)
    made = []

    def make(source, tree, names):
        made.append(source.path)
        return tree

    assert sources.derived(paths[0], ("k",), make) is not None
    sources.derived(paths[1], ("k",), make)
    sources.derived(paths[0], ("k",), make)  # a hit: m0 is the most recent again
    sources.derived(paths[2], ("k",), make)  # evicts m1 (the least recent) and its derived value
    assert len(sources._derived) == 2 and len(sources._parsed) == 2
    sources.derived(paths[0], ("k",), make)
    sources.derived(paths[1], ("k",), make)  # made again
    assert made == [paths[0], paths[1], paths[2], paths[1]]
