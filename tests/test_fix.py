"""`compile-lint fix`: what it writes, --diff, the safe/unsafe tiers, convergence of
nested fixes, bytes outside an edit (BOM, CRLF, tabs, comments, mode), and fix data
that the rules' cases cannot show."""
import os
import stat
import textwrap

import pytest

from compile_lint.config import Settings
from compile_lint.engine import Linter, Selection
from compile_lint.model import SAFE, UNSAFE
from compile_lint.rules import get_rule
from compile_lint.rules.base import Case
from compile_lint.testing import run_case

from conftest import run


def run_rule(code, source, tmp_path, **kw):
    return run_case(get_rule(code), Case(textwrap.dedent(source), **kw), str(tmp_path))


def lint(tmp_path, files: dict[str, str], codes):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection(select=tuple(codes)))
    results = linter.lint([str(tmp_path / rel) for rel in files])
    return {os.path.basename(r.path): r.findings for r in results}


def test_fix_writes_and_reports(project):
    proc = run("fix", "bad.py", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Fixed 1 finding" in proc.stdout
    assert (project / "bad.py").read_text() == "import torch\nmodel = Net()\nmodel = torch.compile(model)\n"


def test_fix_diff_writes_nothing(project):
    before = (project / "bad.py").read_bytes()
    proc = run("fix", "--diff", "bad.py", cwd=project)
    assert proc.returncode == 1
    assert "+model = torch.compile(model)" in proc.stdout and "-torch.compile(model)" in proc.stdout
    assert (project / "bad.py").read_bytes() == before
    assert run("fix", "--diff", "good.py", cwd=project).returncode == 0


def test_unsafe_fixes_need_the_flag(tmp_path):
    src = "import torch._dynamo\ntorch._dynamo.config.suppress_errors = True\nx = 1\n"
    (tmp_path / "a.py").write_text(src)
    proc = run("fix", "a.py", cwd=tmp_path)
    assert proc.returncode == 1 and "1 more with `--unsafe-fixes`" in proc.stdout
    assert (tmp_path / "a.py").read_text() == src
    assert run("fix", "a.py", "--unsafe-fixes", cwd=tmp_path).returncode == 0
    assert (tmp_path / "a.py").read_text() == "import torch._dynamo\nx = 1\n"


def test_fix_converges_on_nested_fixes(tmp_path):
    # CL502's rewrite exposes a discarded-free assignment; CL507 inside must land in the same run
    src = (
        "import torch\n"
        "def run(model, x):\n"
        "    with torch.compile(model):\n"
        "        with torch.cuda.amp.autocast():\n"
        "            return model(x)\n"
    )
    (tmp_path / "a.py").write_text(src)
    proc = run("fix", "a.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert (tmp_path / "a.py").read_text() == (
        "import torch\n"
        "def run(model, x):\n"
        "    model = torch.compile(model)\n"
        "    with torch.amp.autocast(\"cuda\"):\n"
        "        return model(x)\n"
    )
    assert run("check", "a.py", cwd=tmp_path).returncode == 0


def test_fix_preserves_bom_crlf_tabs_comments_and_mode(tmp_path):
    src = (
        "\ufeff# header comment\r\n"
        "import torch\r\n"
        "if True:\r\n"
        "\tmodel = Net()  # keep me\r\n"
        "\ttorch.compile(model)\t# and me\r\n"
    )
    path = tmp_path / "a.py"
    path.write_bytes(src.encode("utf-8"))
    os.chmod(path, 0o640)
    assert run("fix", "a.py", cwd=tmp_path).returncode == 0
    assert path.read_bytes() == src.replace("\ttorch.compile", "\tmodel = torch.compile").encode("utf-8")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_fix_tiers(tmp_path):
    cl101 = run_rule("CL101", """\
        import torch
        def f(x, ref):
            return x.view(int(ref.shape[0]), -1)
        t = torch.jit.trace(f, (torch.rand(2, 4), torch.rand(2, 4)))
        """, tmp_path / "a")
    assert [f.fix.applicability for f in cl101.findings] == [SAFE]
    cl103 = run_rule("CL103", """\
        import torch
        import torch.nn.functional as F
        @torch.compile
        def f(x):
            return F.interpolate(x, scale_factor=1.25)
        """, tmp_path / "b")
    assert [f.fix.applicability for f in cl103.findings] == [UNSAFE]
    cl201 = run_rule("CL201", """\
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.b = [nn.Conv2d(3, 3, 1)]  # a module with parameters (a parameterless one is no hazard)
        """, tmp_path / "c")
    assert [f.fix.applicability for f in cl201.findings] == [UNSAFE]
    assert "state_dict" in cl201.findings[0].fix.message


def test_cl402_fix_only_for_a_literal_mode_on_the_call(tmp_path):
    found = lint(tmp_path, {
        "a.py": """
            import functools, torch
            fast = functools.partial(torch.compile, mode="reduce-overhead")
            model = fast(model, dynamic=True)
        """,
        "b.py": """
            import torch
            model = torch.compile(model, mode='max-autotune', dynamic=True)
        """,
    }, codes=("CL402",))
    assert [f.fix for f in found["a.py"]] == [None]
    [b] = found["b.py"]
    assert b.fix is not None and b.fix.applicability == "unsafe"


def test_cl302_two_compares_share_one_rewrite(tmp_path):
    from compile_lint.fixer import fix_source

    code = textwrap.dedent("""
        import torch

        @torch.compile
        def bands(img: torch.HalfTensor):
            luma = img[:, 0] * 0.3 + img[:, 1] * 0.7
            return (luma > 0.2) & (luma < 0.8)
    """)
    path = tmp_path / "bands.py"
    path.write_text(code)
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection(select=("CL302",)))
    [result] = linter.lint([str(path)])
    assert len(result.findings) == 2
    outcome = fix_source(linter, str(path), code.encode(), result.findings, unsafe=True)
    assert outcome.fixed.decode().count(".float()") == 2
    assert "img[:, 0].float() * 0.3 + img[:, 1].float() * 0.7" in outcome.fixed.decode()
    assert outcome.remaining == []


def test_fix_summary_counts_found_as_fixed_plus_remaining(tmp_path):
    """Ruff's count: "Found 3 (2 fixed, 1 remaining)". dd75348 said "Found 1 finding (2 fixed, 1 remaining)"."""
    (tmp_path / "m.py").write_text(
        "import torch\na = Net()\ntorch.compile(a)\nb = Net()\ntorch.compile(b)\ntorch.compile(make())\n")
    proc = run("fix", "m.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert "Found 3 findings (2 fixed, 1 remaining)." in proc.stdout, proc.stdout


HAZARD_SRC = "import torch\nmodel = Net()\ntorch.compile(model)\n"
FIXED_SRC = "import torch\nmodel = Net()\nmodel = torch.compile(model)\n"


def test_an_edit_saved_while_fix_runs_is_never_overwritten(tmp_path):
    """Compare-and-swap: the file must still hold the bytes the fix started from. On
    dd75348 nothing checked, so an edit saved during a long fix (30 s for 4,500 lines)
    was lost."""
    from compile_lint.fixer import fix_files

    path = tmp_path / "m.py"
    path.write_text(HAZARD_SRC)
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection())
    results = linter.lint([str(path)])
    saved = HAZARD_SRC + "# typed in the editor meanwhile\n"
    real_relint = linter.relint

    def relint_while_the_user_saves(*args, **kw):
        path.write_text(saved)  # the editor saves while the fix loop runs
        return real_relint(*args, **kw)

    linter.relint = relint_while_the_user_saves
    run = fix_files(linter, results, None, unsafe=False, write=True)
    assert path.read_text() == saved
    assert run.errors and "changed on disk while fixing" in run.errors[0][1]
    assert run.fixed_count == 0 and [f.code for f in run.remaining] == ["CL503"]


def test_an_edit_saved_between_check_and_fix_is_fixed_as_saved(tmp_path):
    """The lint's findings (and their cached edits) are of the bytes it read: a file
    changed before the fix reads it is linted again, never patched at stale positions."""
    from compile_lint.fixer import fix_files

    path = tmp_path / "m.py"
    path.write_text(HAZARD_SRC)
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection())
    results = linter.lint([str(path)])
    path.write_text("# a new first line\n" + HAZARD_SRC)
    run = fix_files(linter, results, None, unsafe=False, write=True)
    assert not run.errors
    assert path.read_text() == "# a new first line\n" + FIXED_SRC


def test_fix_through_a_symbolic_link_fixes_its_target(tmp_path):
    """dd75348 replaced the link with a regular file and left the target unfixed."""
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "model.py"
    target.write_text(HAZARD_SRC)
    (tmp_path / "link.py").symlink_to(target)
    proc = run("fix", "link.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "link.py").is_symlink()
    assert target.read_text() == FIXED_SRC


def test_fix_keeps_hard_links_shared(tmp_path):
    """A file with two names: a rename would split them (dd75348 fixed one name only)."""
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text(HAZARD_SRC)
    os.link(a, b)
    proc = run("fix", "a.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert b.read_text() == FIXED_SRC and os.stat(a).st_ino == os.stat(b).st_ino and os.stat(a).st_nlink == 2
    assert not [p for p in os.listdir(tmp_path) if "compile-lint" in p]  # no backup or temp file left


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to own a file of another user")
def test_fix_as_root_keeps_the_owner(tmp_path):
    """dd75348 fixed as root re-owned the file to root (the temp file's owner)."""
    path = tmp_path / "m.py"
    path.write_text(HAZARD_SRC)
    os.chown(path, 4321, 4321)
    os.chmod(path, 0o640)
    proc = run("fix", "m.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    st = os.stat(path)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 4321, 0o640)
    assert path.read_text() == FIXED_SRC


def test_fix_keeps_the_last_cr_of_a_cr_only_file(tmp_path):
    """libcst drops the final \\r of a file whose lines end in CR alone; dd75348 wrote that."""
    path = tmp_path / "cr.py"
    path.write_bytes(HAZARD_SRC.replace("\n", "\r").encode())
    proc = run("fix", "cr.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert path.read_bytes() == FIXED_SRC.replace("\n", "\r").encode()


def test_a_safe_fix_never_breaks_code_that_uses_the_name_later(tmp_path):
    """Issue 22: `up = U(); torch.compile(up); torch.jit.trace(up, x)`. CL503's fix
    `up = torch.compile(up)` made the script fail ("torch.jit.trace a dynamo-optimized
    function"), and dd75348 applied it as safe. Now it is unsafe: `fix` leaves the script
    working; `--unsafe-fixes` applies it, and running the result shows why it is unsafe."""
    pytest.importorskip("torch")
    import subprocess
    import sys

    script = textwrap.dedent("""\
        import torch


        class U(torch.nn.Module):
            def forward(self, x):
                return x * 2


        up = U()
        torch.compile(up)
        traced = torch.jit.trace(up, torch.rand(2))  # noqa: CL105 (tracing is what this script does)
        print("traced", type(traced).__name__)
    """)
    path = tmp_path / "export_up.py"
    path.write_text(script)

    def runs() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=300)

    assert runs().returncode == 0
    check = run("check", "export_up.py", cwd=tmp_path)
    assert "(unsafe: line 11 passes `up` to `torch.jit.trace`, which cannot trace the compiled wrapper" in check.stdout, check.stdout
    fixed = run("fix", "export_up.py", cwd=tmp_path)
    assert fixed.returncode == 1 and "1 more with `--unsafe-fixes`" in fixed.stdout, fixed.stdout
    assert path.read_text() == script and runs().returncode == 0
    assert run("fix", "export_up.py", "--unsafe-fixes", cwd=tmp_path).returncode == 0
    assert "up = torch.compile(up)" in path.read_text()
    broken = runs()
    assert broken.returncode != 0 and "dynamo-optimized function" in broken.stderr, broken.stderr[-2000:]


@pytest.mark.parametrize("later,unsafe", [
    ("y = up(x)", False),
    ("up.eval()\nexported = torch.export.export(up, (x,))", False),
    ("traced = torch.jit.trace(up, x)", True),
    ("scripted = torch.jit.script(up)", True),
    ("gm = torch.fx.symbolic_trace(up)", True),
    ("torch.save(up, 'up.pt')", True),
    ("import pickle\nblob = pickle.dumps(up)", True),
    ("assert up is original", True),
    ("print(isinstance(up, U))", True),
    ("sd = up.state_dict()", True),
    ("up.load_state_dict(torch.load('up.pt'))", True),
    ("def export():\n    return torch.jit.trace(up, x)", True),  # a function may run later
])
def test_cl503_fix_is_unsafe_exactly_where_a_later_use_can_tell(tmp_path, later, unsafe):
    code = f"import torch\nup = U()\noriginal = up\ntorch.compile(up)\n{later}\n"
    (tmp_path / "m.py").write_text(code)
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection(select=("CL503",)))
    (finding,) = linter.lint([str(tmp_path / "m.py")])[0].findings
    assert (finding.fix.applicability == UNSAFE) == unsafe, finding.fix.message


def test_cl503_in_a_function_looks_at_later_lines_and_the_loop_around(tmp_path):
    code = textwrap.dedent("""\
        import torch
        def before(up, x):
            traced = torch.jit.trace(up, x)
            torch.compile(up)
            return up(x)
        def loop(up, xs):
            for x in xs:
                sd = up.state_dict()
                torch.compile(up)
    """)
    (tmp_path / "m.py").write_text(code)
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection(select=("CL503",)))
    first, second = linter.lint([str(tmp_path / "m.py")])[0].findings
    assert first.fix.applicability == SAFE  # the trace ran before
    assert second.fix.applicability == UNSAFE and "line 8" in second.fix.message  # the next iteration's state_dict
