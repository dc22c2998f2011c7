import os

from compile_lint.config import Settings
from compile_lint.project_root import find_project_root


def test_config_folder_wins(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text("")
    cfg = tmp_path / "compile-lint.toml"
    cfg.write_text("")
    settings = Settings(source=str(cfg), root=str(tmp_path))
    assert find_project_root(str(tmp_path / "sub" / "m.py"), settings) == str(tmp_path)


def test_nearest_marker_above(tmp_path):
    (tmp_path / "setup.cfg").write_text("")
    (tmp_path / "pkg" / "deep").mkdir(parents=True)
    target = tmp_path / "pkg" / "deep" / "m.py"
    target.write_text("")
    assert find_project_root(str(target)) == str(tmp_path)
    assert find_project_root(str(tmp_path / "pkg")) == str(tmp_path)


def test_git_folder_counts(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "a").mkdir()
    assert find_project_root(str(tmp_path / "a" / "x.py")) == str(tmp_path)
