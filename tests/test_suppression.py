"""`# noqa` on a line and `# compile-lint: noqa` for a file, in check and in fix."""
import pytest

from conftest import run


@pytest.mark.parametrize(
    "line,suppressed",
    [
        ("torch.compile(model)  # noqa", True),
        ("torch.compile(model)  # noqa: CL503", True),
        ("torch.compile(model)  # noqa: CL501, CL503", True),
        ("torch.compile(model)  # noqa:CL5", True),
        ("torch.compile(model)  # noqa: CL501", False),
        ("torch.compile(model)  # noqa: E501", False),
    ],
)
def test_line_noqa_in_check_and_fix(tmp_path, line, suppressed):
    src = f"import torch\nmodel = Net()\n{line}\n"
    (tmp_path / "a.py").write_text(src)
    assert run("check", "a.py", cwd=tmp_path).returncode == (0 if suppressed else 1)
    run("fix", "a.py", cwd=tmp_path)
    assert ((tmp_path / "a.py").read_text() == src) == suppressed


@pytest.mark.parametrize("directive,suppressed", [("# compile-lint: noqa", True), ("# compile-lint: noqa: CL5", True), ("# compile-lint: noqa: CL1", False)])
def test_file_noqa(tmp_path, directive, suppressed):
    src = f"{directive}\nimport torch\nmodel = Net()\ntorch.compile(model)\n"
    (tmp_path / "a.py").write_text(src)
    assert run("check", "a.py", cwd=tmp_path).returncode == (0 if suppressed else 1)
    run("fix", "a.py", cwd=tmp_path)
    assert ((tmp_path / "a.py").read_text() == src) == suppressed
