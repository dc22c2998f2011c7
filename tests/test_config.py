"""Configuration: pyproject.toml / compile-lint.toml discovery, keys and bad values,
per-file ignores, exclusions, .gitignore, --config, the target torch version."""
import subprocess

import pytest

from conftest import HAZARD, run


def test_pyproject_config_is_read(project):
    (project / "pyproject.toml").write_text('[tool.compile-lint]\nignore = ["CL503"]\n')
    assert run("check", "bad.py", cwd=project).returncode == 0


def test_closest_config_wins_and_compile_lint_toml_first(project):
    (project / "pyproject.toml").write_text('[tool.compile-lint]\nignore = ["CL503"]\n')
    sub = project / "sub"
    sub.mkdir()
    (sub / "bad.py").write_text(HAZARD)
    (sub / "compile-lint.toml").write_text('select = ["CL5"]\n')
    assert run("check", "sub/bad.py", cwd=project).returncode == 1
    assert run("check", "bad.py", cwd=project).returncode == 0


def test_unknown_config_key_is_rejected_with_hint(project):
    (project / "pyproject.toml").write_text('[tool.compile-lint]\nselekt = ["CL5"]\n')
    proc = run("check", "bad.py", cwd=project)
    assert proc.returncode == 2
    assert "unknown key 'selekt'" in proc.stderr and "did you mean 'select'" in proc.stderr


@pytest.mark.parametrize(
    "body,needle",
    [
        ("respect-gitignore = 'yes'", "must be true or false"),
        ("select = ['CL9']", "unknown rule selector"),
        ("compile-wrappers = ['not a name']", "is not a dotted name"),
        ("target-torch-version = 'latest'", "expected a torch version"),
        ("select = [", "invalid TOML"),
    ],
)
def test_bad_config_values(project, body, needle):
    (project / "compile-lint.toml").write_text(body + "\n")
    proc = run("check", "bad.py", cwd=project)
    assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr


def test_invalid_pyproject_of_another_tool_is_passed_over(project):
    # a sub-package's pyproject.toml that tomllib rejects (one table declared twice) and
    # that holds no table of ours: the folder above configures, as for a valid one
    (project / "pyproject.toml").write_text('[tool.compile-lint]\nignore = ["CL503"]\n')
    sub = project / "pkg"
    sub.mkdir()
    (sub / "bad.py").write_text(HAZARD)
    (sub / "pyproject.toml").write_text("[tool.hatch.build]\nx = 1\n[tool.hatch.build]\ny = 2\n")
    proc = run("check", "pkg/bad.py", cwd=project)
    assert proc.returncode == 0, proc.stderr
    # one that names compile-lint is ours: its error is reported
    (sub / "pyproject.toml").write_text("[tool.compile-lint]\nselect = [\n")
    proc = run("check", "pkg/bad.py", cwd=project)
    assert proc.returncode == 2 and "invalid TOML" in proc.stderr and "Traceback" not in proc.stderr


def test_per_file_ignores_and_exclude(project):
    (project / "pyproject.toml").write_text(
        '[tool.compile-lint]\nper-file-ignores = {"bad.py" = ["CL5"]}\nextend-exclude = ["gen/"]\n'
    )
    gen = project / "gen"
    gen.mkdir()
    (gen / "x.py").write_text(HAZARD)
    assert run("check", ".", cwd=project).returncode == 0
    # named explicitly, an excluded file is still linted, unless --force-exclude
    assert run("check", "gen/x.py", cwd=project).returncode == 1
    assert run("check", "gen/x.py", "--force-exclude", cwd=project).returncode == 0


def test_gitignore_is_respected(project):
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text("bad.py\n")
    assert run("check", ".", cwd=project).returncode == 0
    (project / "pyproject.toml").write_text("[tool.compile-lint]\nrespect-gitignore = false\n")
    assert run("check", ".", cwd=project).returncode == 1


def test_config_option_overrides_discovery(project):
    (project / "pyproject.toml").write_text('[tool.compile-lint]\nignore = ["CL503"]\n')
    (project / "strict.toml").write_text('select = ["ALL"]\n')
    assert run("check", "bad.py", "--config", "strict.toml", cwd=project).returncode == 1
    proc = run("check", "bad.py", "--config", "nope.toml", cwd=project)
    assert proc.returncode == 2 and "does not exist" in proc.stderr


def test_target_torch_selects_key_table(tmp_path):
    # `compile_on_one_rank` appeared in torch.compiler.config in 2.14
    (tmp_path / "c.py").write_text("import torch\ntorch.compiler.config.compile_on_one_rank = True\n")
    assert run("check", "c.py", "--target-torch", "2.13", cwd=tmp_path).returncode == 1
    assert run("check", "c.py", "--target-torch", "2.14.1", cwd=tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text('[tool.compile-lint]\ntarget-torch-version = "2.13.0"\n')
    assert run("check", "c.py", cwd=tmp_path).returncode == 1
