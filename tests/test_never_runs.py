"""check and fix read code; they never import or run it (only `verify` does)."""
import subprocess
import sys

import pytest

MARKERS = ("module", "sidecar", "package", "setup", "conftest", "decorator", "default")


def payload(marker_dir, name):
    return f"open({str(marker_dir / (name + '.ran'))!r}, 'w').write('ran')\n"


@pytest.fixture
def project(tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text(payload(markers, "package"))
    (src / "sidecar.py").write_text(payload(markers, "sidecar"))
    (src / "setup.py").write_text(payload(markers, "setup"))
    (src / "conftest.py").write_text(payload(markers, "conftest"))
    (src / "pkg" / "model.py").write_text(
        "import sidecar\n"
        "import torch\n"
        "import torch._dynamo\n"
        "from pkg import helpers\n"
        + payload(markers, "module")
        + "def mark(fn, _=" + payload(markers, "default").strip() + "):\n    return fn\n"
        "@mark\n"
        "def forward(x):\n"
        "    print(x)\n"
        "    return x.item()\n"
        "model = Net()\n"
        "torch.compile(model)\n"
        "fast = torch.compile(forward)\n"
        "torch._dynamo.config.suppress_errors = True\n"
        "with torch.compile(model) as m:\n"
        "    m(1)\n"
        "if __name__ == '__main__':\n    " + payload(markers, "decorator")
    )
    return tmp_path


def run(args, cwd, stdin=None):
    return subprocess.run([sys.executable, "-m", "compile_lint", *args], cwd=str(cwd),
                          capture_output=True, text=True, input=stdin)


def ran(project):
    return sorted(p.name for p in (project / "markers").iterdir())


@pytest.mark.parametrize(
    "args",
    [
        ("check", "."),
        ("check", ".", "-j", "2", "--no-cache"),
        ("check", ".", "--output-format", "json"),  # computes fix edits with the codemods
        ("fix", ".", "--diff"),
        ("fix", ".", "--unsafe-fixes"),
    ],
    ids=lambda a: " ".join(a),
)
def test_check_and_fix_never_run_what_they_read(project, args):
    src = project / "src"
    before = (src / "pkg" / "model.py").read_text()
    proc = run(args, src)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    assert ran(project) == []
    if args[:2] == ("fix", ".") and "--unsafe-fixes" in args:
        assert (src / "pkg" / "model.py").read_text() != before  # it did fix something
        assert run(("check", "."), src).returncode in (0, 1)
        assert ran(project) == []


def test_stdin_is_not_run_either(project):
    text = (project / "src" / "pkg" / "model.py").read_text()
    for args in (("check", "-", "--stdin-filename", "pkg/model.py"), ("fix", "-", "--unsafe-fixes", "--stdin-filename", "pkg/model.py")):
        proc = run(args, project / "src", stdin=text)
        assert proc.returncode in (0, 1), proc.stderr
    assert ran(project) == []


def test_in_process_lint_imports_nothing_it_reads(project):
    from compile_lint.config import Settings
    from compile_lint.engine import Linter, Selection
    from compile_lint.fixer import fix_source

    src = project / "src"
    settings = Settings(root=str(src))
    linter = Linter(lambda _p: settings, Selection())
    paths = sorted(str(p) for p in src.rglob("*.py"))
    results = linter.lint(paths)
    model = next(r for r in results if r.path.endswith("model.py"))
    assert model.findings
    data = (src / "pkg" / "model.py").read_bytes()
    fix_source(linter, model.path, data, model.findings, unsafe=True)
    assert "sidecar" not in sys.modules and "pkg" not in sys.modules
    assert ran(project) == []
