"""The warm path: a check the cache answers whole, and the pieces that make it cheap
(what it imports, the manifest's shared parts, the dependency check, the early exit)."""
import os
import subprocess
import sys

from conftest import HAZARD, run

from compile_lint.cache import _shared, loads
from compile_lint.cache_validity import still_holds

# a package whose second module compiles the first one's class: a cross-file region
MODEL = "import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n"
EXPORT = "import torch\nfrom .model import Net\n\nfast = torch.compile(Net())\n"


def _project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.compile-lint]\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text(MODEL)
    (pkg / "export.py").write_text(EXPORT)
    (tmp_path / "script.py").write_text(HAZARD)
    return tmp_path


def _imported_after_check(cwd, *args) -> tuple[str, set[str]]:
    """stdout of `check ARGS` run in-process (runpy, as `python -m` does), and the
    compile_lint modules it imported."""
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['compile-lint', 'check', *{list(args)!r}]\n"
        "try:\n"
        "    runpy.run_module('compile_lint', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('MODULES=' + ','.join(sorted(m for m in sys.modules if m.startswith('compile_lint'))) + '\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd)
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("MODULES=")]
    assert line, proc.stderr
    return proc.stdout, set(line[0][len("MODULES="):].split(","))


MACHINERY = {"compile_lint.lint_file", "compile_lint.rules.base", "compile_lint.analysis.project.context",
             "compile_lint.analysis.semantic.facts", "compile_lint.analysis.reach.regions"}


def test_a_run_the_cache_answers_imports_no_linting_machinery(tmp_path):
    project = _project(tmp_path)
    cold = run("check", ".", cwd=project)
    assert cold.returncode == 1 and "CL" in cold.stdout, cold.stdout + cold.stderr
    out, modules = _imported_after_check(project, ".")
    assert out == cold.stdout
    assert not MACHINERY & modules, sorted(MACHINERY & modules)
    out, modules = _imported_after_check(project, "pkg/model.py")  # a partial run: project context from the cache
    assert out == run("check", "pkg/model.py", "--no-cache", cwd=project).stdout
    assert not MACHINERY & modules, sorted(MACHINERY & modules)


def test_an_edited_file_is_linted_again_on_the_warm_path(tmp_path):
    project = _project(tmp_path)
    assert run("check", ".", cwd=project).returncode == 1
    (project / "script.py").write_text("import torch\nmodel = torch.compile(Net())\n")
    os.utime(project / "script.py", ns=(1, 1))  # an old mtime: only the content says it changed
    warm = run("check", ".", cwd=project)
    assert warm.stdout == run("check", ".", "--no-cache", cwd=project).stdout
    assert "script.py" not in warm.stdout


def test_the_program_exits_with_its_code_and_all_its_output(tmp_path):
    project = _project(tmp_path)
    for _ in range(2):  # cold, then the warm run that ends with os._exit
        proc = run("check", ".", "--output-format", "concise", cwd=project)
        assert proc.returncode == 1
        assert proc.stdout.rstrip().splitlines()[-1].startswith("Found "), proc.stdout
    proc = run("check", "missing.py", "--ignore", "CL001", cwd=project)
    assert proc.returncode == 2 and "missing.py: no such file or directory" in proc.stderr


def test_the_manifest_shares_equal_parts_and_keeps_every_record():
    a, b = ("/p/a.py", "probe:may_call:0:x:reset"), ("/p/b.py", "d1")
    records = {
        "/p/c.py": {"digest": "1", "deps": (a, b), "used": {("mod", "p"): "-"}, "where": "w"},
        "/p/d.py": {"digest": "2", "deps": (tuple(list(a)), b, a), "used": {("mod", "p"): "-"}, "where": "w"},
        "/p/e.py": {"digest": "3", "deps": (), "used": {}, "where": None},
    }
    shared = _shared(records)
    assert shared == records
    assert shared["/p/c.py"]["deps"][0] is shared["/p/d.py"]["deps"][0] is shared["/p/d.py"]["deps"][2]
    import pickle

    assert loads(pickle.dumps({"files": shared}, protocol=pickle.HIGHEST_PROTOCOL))["files"] == records


def test_still_holds_answers_each_dependency_once_and_fails_on_any_change():
    digests = {"/p/a.py": "1", "/p/b.py": "2"}
    asked = []

    def current(path):
        asked.append(path)
        return digests.get(path)

    checked = {}
    assert still_holds({}, (("/p/a.py", "1"), ("/p/b.py", "2"), ("/p/a.py", "1")), None, current, checked)
    assert still_holds({}, (("/p/b.py", "2"),), None, current, checked)
    assert asked == ["/p/a.py", "/p/b.py"]  # each once in the run
    assert not still_holds({}, (("/p/a.py", "1"), ("/p/b.py", "3")), None, current, checked)
    assert not still_holds({}, (("/p/b.py", "3"), ("/p/a.py", "1")), None, current, checked)
    assert still_holds({}, (), None, current, checked)
