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


def test_a_dotted_folder_above_the_package_keeps_cross_file_findings(tmp_path):
    """`proj.v2/pkg/export.py` exporting `pkg.model.Up`: the region index names the
    module `proj_v2.pkg.model` (a dot in a folder is written `_`) and CL104 found no file
    for it (issue 19: the same tree elsewhere gives the finding)."""
    import subprocess
    import sys

    (tmp_path / ".git").mkdir()
    pkg = tmp_path / "proj.v2" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text(
        "import torch.nn.functional as F\nfrom torch import nn\n\nclass Up(nn.Module):\n"
        "    def forward(self, x):\n        return F.interpolate(x, scale_factor=2)\n"
    )
    (pkg / "export.py").write_text(
        "import torch\nfrom pkg.model import Up\n\ntorch.onnx.export(Up(), torch.rand(1, 3, 64, 64), 'up.onnx')\n"
    )
    out = subprocess.run([sys.executable, "-m", "compile_lint", "check", ".", "--no-cache", "--extend-select", "CL104",
                          "--output-format", "concise"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert "proj.v2/pkg/export.py:4:1: CL104" in out.stdout, out.stdout + out.stderr


def test_a_clone_folder_with_an_init_but_no_importable_name_is_the_import_root(tmp_path):
    """A clone named `algorithmic-efficiency` that holds an `__init__.py` (mlcommons's
    AlgoPerf, bench/dev15) cannot be imported by that name: its code imports `algoperf`
    from inside it. Its modules were named from the folders above it, and no import of
    the project matched them (no subclass, no inherited method, across files)."""
    from compile_lint.analysis.semantic.names import module_name_for

    repo = tmp_path / "algorithmic-efficiency"
    pkg = repo / "algoperf"
    pkg.mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'algoperf'\n")
    (repo / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "spec.py").write_text("")
    assert module_name_for(str(pkg / "spec.py"), {}) == ("algoperf.spec", False)
    named = tmp_path / "algoperf_repo"
    (named / "sub").mkdir(parents=True)
    (named / "__init__.py").write_text("")
    (named / "sub" / "__init__.py").write_text("")
    (named / "sub" / "m.py").write_text("")
    assert module_name_for(str(named / "sub" / "m.py"), {})[0].endswith("algoperf_repo.sub.m")


def _node_pack(folder):
    """A ComfyUI-style node pack: an `__init__.py` at its top for the host, a project
    marker, and modules below a folder without an `__init__.py` (SeedVR2's layout,
    bench/fresh_reads batch 15)."""
    net = folder / "src" / "models" / "net"
    net.mkdir(parents=True)
    (folder / "pyproject.toml").write_text("[project]\nname = 'pack'\n")
    (folder / "__init__.py").write_text("")
    (folder / "src" / "__init__.py").write_text("")
    (folder / "src" / "core").mkdir()
    (folder / "src" / "core" / "__init__.py").write_text("")
    (net / "model.py").write_text(
        "from torch import nn\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        if x.sum().item() > 0:\n            return x\n        return -x\n"
    )
    (folder / "src" / "core" / "run.py").write_text(
        "import torch\nfrom ..models.net.model import Net\n\ncompiled = torch.compile(Net())\n"
    )


def test_a_marked_top_package_is_the_root_whatever_its_folder_is_called(tmp_path):
    """A node pack cloned as `app/` (an identifier) was read as the package `app` of the
    folder above it, so its modules were named from wherever the clone lay while the
    modules below a folder without an `__init__.py` were named from the clone: the
    relative import `from ..models.net.model import Net` named no module and the
    compiled model's graph break went unreported. Cloned as `my-pack/` it was found."""
    import subprocess
    import sys

    from compile_lint.analysis.semantic.names import module_name_for

    for name in ("app", "my-pack"):
        _node_pack(tmp_path / name)
        assert module_name_for(str(tmp_path / name / "src" / "core" / "run.py"), {}) == ("src.core.run", False)
        out = subprocess.run([sys.executable, "-m", "compile_lint", "check", ".", "--no-cache", "--output-format", "concise"],
                             cwd=tmp_path / name, capture_output=True, text=True)
        assert "src/models/net/model.py:5:12: CL508" in out.stdout, (name, out.stdout + out.stderr)


def test_a_marked_folder_inside_a_package_stays_a_package_of_it(tmp_path):
    """A git submodule vendored inside a package (`pkg/third_party/lib/` with its own
    `.git` and `__init__.py`) is imported through the package: its modules keep the
    package's names."""
    from compile_lint.analysis.semantic.names import module_name_for

    lib = tmp_path / "pkg" / "third_party" / "lib"
    lib.mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("")
    for folder in (tmp_path / "pkg", tmp_path / "pkg" / "third_party", lib):
        (folder / "__init__.py").write_text("")
    (lib / ".git").write_text("gitdir: ../../../.git/modules/lib\n")
    (lib / "ops.py").write_text("")
    assert module_name_for(str(lib / "ops.py"), {}) == ("pkg.third_party.lib.ops", False)
