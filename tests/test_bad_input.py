"""Bad input loses nothing: each case gets a clear one-line message and the exit code
cli.py documents (0 clean, 1 findings, 2 errors), and no other file is affected."""
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

HAZARD = "import torch\nmodel = Net()\ntorch.compile(model)\n"
FIXED = "import torch\nmodel = Net()\nmodel = torch.compile(model)\n"
CLEAN = "import torch\nmodel = torch.compile(Net())\n"


def run(*args, cwd, prefix=()):
    return subprocess.run(
        [*prefix, sys.executable, "-m", "compile_lint", *args],
        capture_output=True, text=True, cwd=str(cwd), timeout=300,
    )


@pytest.fixture
def project(tmp_path):
    (tmp_path / "hazard.py").write_text(HAZARD)
    (tmp_path / "good.py").write_text(CLEAN)
    return tmp_path


def assert_hazard_still_reported(proc):
    assert "hazard.py:3:1: CL503" in proc.stdout, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


def one_line_errors(proc):
    return [line for line in proc.stderr.splitlines() if line.startswith("compile-lint: error:")]


def test_undecodable_bytes_are_a_cl000_finding(project):
    (project / "latin.py").write_bytes(b"name = '\xe9t\xe9'\n")  # latin-1, no coding cookie
    proc = run("check", ".", "--no-cache", cwd=project)
    assert proc.returncode == 1
    assert "latin.py:1:" in proc.stdout and "CL000" in proc.stdout
    assert_hazard_still_reported(proc)


@pytest.mark.parametrize("text, row", [
    ("type NameOrID = str | int\n", 1),
    ("class Backtrackable[T]:\n    pass\n", 1),
    ("x = 1\ndef load[T: int](obj: T) -> T:\n    return obj\n", 2),
    ("async def run[T](x: T) -> T:\n    return x\n", 1),
])
def test_pep_695_syntax_says_which_python_reads_it(project, text, row):
    """`type X = ...`, `def f[T](...)` and `class C[T]:` are valid from Python 3.12
    (lerobot, which requires 3.12, bench/fresh_reads); on an older Python the finding
    says so instead of calling the user's file broken."""
    (project / "generic.py").write_text(text)
    proc = run("check", ".", "--no-cache", cwd=project)
    if sys.version_info >= (3, 12):
        assert "generic.py" not in proc.stdout, proc.stdout
    else:
        assert proc.returncode == 1
        assert f"generic.py:{row}:" in proc.stdout and "CL000" in proc.stdout
        assert f"CL000 not linted: valid from Python 3.12 on; compile-lint runs on 3.{sys.version_info[1]}" in proc.stdout, proc.stdout
        assert "SyntaxError" not in proc.stdout, proc.stdout  # the file is valid Python: not "a syntax error"
    assert_hazard_still_reported(proc)


def test_a_plain_syntax_error_gets_no_newer_python_note(project):
    """A `type` or `class` line that is broken in every Python is not called newer syntax."""
    (project / "broken.py").write_text("type = 1\nclass Net(:\n    pass\n")
    proc = run("check", ".", "--no-cache", cwd=project)
    assert "broken.py:2:" in proc.stdout and "CL000" in proc.stdout
    assert "valid from Python 3.12" not in proc.stdout, proc.stdout


def test_a_pep_701_f_string_says_which_python_reads_it(project):
    """`f"{row["image"]}"` is valid from Python 3.12 (sleap-nn's tests, bench/dev15); on an
    older Python the finding says so instead of calling the user's file broken."""
    (project / "quotes.py").write_text('row = {"image": 1}\nprint(f"{row["image"]}")\n')
    proc = run("check", ".", "--no-cache", cwd=project)
    if sys.version_info >= (3, 12):
        assert "quotes.py" not in proc.stdout, proc.stdout
    else:
        assert proc.returncode == 1
        assert "quotes.py:2:" in proc.stdout and "CL000" in proc.stdout
        assert f"CL000 not linted: valid from Python 3.12 on; compile-lint runs on 3.{sys.version_info[1]}" in proc.stdout, proc.stdout
        assert "SyntaxError" not in proc.stdout, proc.stdout  # the file is valid Python: not "a syntax error"
    assert_hazard_still_reported(proc)


def test_an_unparenthesized_except_says_python_3_14_reads_it(project):
    """`except A, B:` is valid from Python 3.14 (PEP 758: TheAnimeScripter, bench/dev22);
    with `as` it is an error in every Python, and says nothing of a newer one."""
    (project / "handlers.py").write_text("try:\n    pass\nexcept ValueError, OSError:\n    pass\n")
    (project / "named.py").write_text("try:\n    pass\nexcept ValueError, OSError as e:\n    pass\n")
    proc = run("check", ".", "--no-cache", cwd=project)
    if sys.version_info < (3, 14):
        assert f"handlers.py:3:" in proc.stdout and "CL000 not linted: valid from Python 3.14 on" in proc.stdout, proc.stdout
    else:
        assert "handlers.py" not in proc.stdout, proc.stdout
    named = [line for line in proc.stdout.splitlines() if line.startswith("named.py:3:")]
    assert named and "SyntaxError" in named[0] and "valid from Python" not in named[0], proc.stdout
    assert_hazard_still_reported(proc)


def test_a_python_2_file_is_not_said_to_be_valid_on_python_3_14(project):
    """`except IOError, e:` in a file with Python 2 `print` statements parses on no Python 3
    (DB's ic15 evaluation script, bench/fresh_reads batch 18): a syntax error, not 3.14."""
    (project / "legacy.py").write_text("try:\n    pass\nexcept IOError, e:\n    print 'failed', e\n")
    proc = run("check", ".", "--no-cache", cwd=project)
    legacy = [line for line in proc.stdout.splitlines() if line.startswith("legacy.py:")]
    assert legacy and "SyntaxError" in legacy[0] and "valid from Python" not in legacy[0], proc.stdout
    assert_hazard_still_reported(proc)


def test_binary_file_named_py(project):
    (project / "blob.py").write_bytes(bytes(range(256)) * 64)
    proc = run("check", ".", "--no-cache", cwd=project)
    assert proc.returncode == 1
    assert "blob.py:" in proc.stdout and "CL000" in proc.stdout
    assert_hazard_still_reported(proc)
    fix = run("fix", ".", "--no-cache", cwd=project)
    assert (project / "blob.py").read_bytes() == bytes(range(256)) * 64
    assert (project / "hazard.py").read_text() == FIXED, fix.stderr


def test_ten_megabyte_file(project):
    line = "value_{0} = compute({0}, scale=0.5)  # a comment to make it longer\n"
    text = "".join(line.format(i) for i in range(150_000))
    assert len(text) > 10_000_000
    (project / "huge.py").write_text(text + HAZARD)
    # Speed lives in bench/, not here: a loaded CI machine must not fail this test.
    proc = run("check", "huge.py", "--no-cache", cwd=project)
    assert proc.returncode == 1, proc.stderr
    assert "huge.py:150003:1: CL503" in proc.stdout


def test_deeply_nested_expression_is_a_cl000_finding_not_a_crash(project):
    (project / "deep.py").write_text("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    proc = run("check", ".", "--no-cache", cwd=project)
    assert proc.returncode == 1, proc.stderr
    assert "deep.py:" in proc.stdout and "CL000" in proc.stdout
    assert_hazard_still_reported(proc)


def test_directory_named_x_py(project):
    (project / "x.py").mkdir()
    (project / "x.py" / "inner.py").write_text(HAZARD)
    proc = run("check", ".", "--no-cache", cwd=project)
    assert proc.returncode == 1
    assert "inner.py:3:1: CL503" in proc.stdout
    assert_hazard_still_reported(proc)
    proc = run("check", "x.py", "--no-cache", cwd=project)  # named: linted as a folder
    assert proc.returncode == 1 and "inner.py:3:1: CL503" in proc.stdout


def test_symlink_loops(project):
    os.symlink("self.py", project / "self.py")  # a file link to itself
    (project / "sub").mkdir()
    os.symlink("..", project / "sub" / "up")  # a folder loop
    os.symlink("missing.py", project / "dangling.py")
    proc = run("check", ".", "--no-cache", cwd=project)
    assert proc.returncode in (1, 2)
    assert_hazard_still_reported(proc)
    for line in one_line_errors(proc):
        assert "self.py" in line or "dangling.py" in line, line
    # named on the command line: a finding, as Ruff's E902 (CL001), or with CL001 off an error
    named = run("check", "self.py", "good.py", "--no-cache", cwd=project)
    assert named.returncode == 1 and "self.py:1:1: CL001 symbolic link loop" in named.stdout, named.stdout + named.stderr
    named = run("check", "self.py", "good.py", "--no-cache", "--ignore", "CL001", cwd=project)
    assert named.returncode == 2
    assert any("self.py" in line and "symbolic link" in line for line in one_line_errors(named)), named.stderr
    named = run("check", "dangling.py", "--no-cache", cwd=project)
    assert named.returncode == 1 and "dangling.py:1:1: CL001 broken symbolic link" in named.stdout


def test_a_file_found_through_a_link_and_where_it_lies_is_linted_once_where_it_lies(project):
    # miles-credit's `applications/train.py -> ../credit/applications/train.py`: the walk
    # meets the link first (`applications` sorts before `credit`)
    (project / "credit" / "applications").mkdir(parents=True)
    (project / "credit" / "applications" / "train.py").write_text(HAZARD)
    (project / "applications").mkdir()
    os.symlink(os.path.join("..", "credit", "applications", "train.py"), project / "applications" / "train.py")
    (project / "linked").mkdir()
    os.symlink(os.path.join("..", "credit"), project / "linked" / "credit")  # a linked folder too
    proc = run("check", ".", "--no-cache", cwd=project)
    assert proc.returncode == 1
    found = [line for line in proc.stdout.splitlines() if "train.py" in line]
    assert found == [os.path.join("credit", "applications", "train.py") + ":3:1: CL503 " + found[0].split(" CL503 ", 1)[1]], proc.stdout
    # named on its own, a link is linted under the name it was given
    proc = run("check", os.path.join("applications", "train.py"), "--no-cache", cwd=project)
    assert proc.returncode == 1 and proc.stdout.startswith(os.path.join("applications", "train.py") + ":3:1: CL503"), proc.stdout


def _unreadable_runner():
    """Run compile-lint so that mode 000 means unreadable: as a normal user that is
    what it is; as root, drop the capabilities that override file modes."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root, where mode 000 is still readable, and setpriv (util-linux) is missing")
    return (setpriv, "--bounding-set", "-dac_override,-dac_read_search")


def test_unreadable_file(project):
    prefix = _unreadable_runner()
    secret = project / "secret.py"
    secret.write_text(HAZARD)
    os.chmod(secret, 0)
    try:
        # Ruff's E902: a finding (CL001), exit 1, the other files checked
        proc = run("check", ".", "--no-cache", cwd=project, prefix=prefix)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "secret.py:1:1: CL001 cannot read: Permission denied" in proc.stdout
        assert_hazard_still_reported(proc)
        ignored = run("check", ".", "--no-cache", "--ignore", "CL001", cwd=project, prefix=prefix)
        assert ignored.returncode == 2
        assert any("secret.py" in e and "Permission denied" in e for e in one_line_errors(ignored)), ignored.stderr
        fix = run("fix", ".", "--no-cache", cwd=project, prefix=prefix)
        assert fix.returncode == 1 and "CL001" in fix.stdout
        assert (project / "hazard.py").read_text() == FIXED
    finally:
        os.chmod(secret, 0o644)
    assert secret.read_text() == HAZARD


def test_read_only_file_under_fix_is_left_alone(project):
    ro = project / "ro.py"
    ro.write_text(HAZARD)
    os.chmod(ro, 0o444)
    proc = run("fix", ".", "--no-cache", cwd=project)
    assert proc.returncode == 2
    assert any("ro.py" in e and "read-only" in e for e in one_line_errors(proc)), proc.stderr
    assert ro.read_text() == HAZARD and (os.stat(ro).st_mode & 0o777) == 0o444
    assert (project / "hazard.py").read_text() == FIXED  # the others are still fixed
    assert "ro.py:3:1: CL503" in proc.stdout  # and what was not fixed is still reported


def test_syntax_error_among_good_files(project):
    (project / "broken.py").write_text("def f(:\n    pass\n")
    proc = run("check", ".", "--no-cache", cwd=project)
    assert proc.returncode == 1
    assert "broken.py:1:7: CL000 SyntaxError" in proc.stdout
    assert_hazard_still_reported(proc)
    fix = run("fix", ".", "--no-cache", cwd=project)
    assert (project / "broken.py").read_text() == "def f(:\n    pass\n"
    assert (project / "hazard.py").read_text() == FIXED, fix.stderr


def test_python2_code(project):
    (project / "py2.py").write_text('print "hello"\nexec "x = 1"\n')
    proc = run("check", ".", "--no-cache", cwd=project)
    assert proc.returncode == 1
    assert "py2.py:1:1: CL000 SyntaxError: Missing parentheses in call to 'print'" in proc.stdout
    assert_hazard_still_reported(proc)


def test_invalid_pyproject_is_one_line_and_exit_2(project):
    (project / "pyproject.toml").write_text("[tool.compile-lint\nselect = [\n")
    for command in ("check", "fix"):
        proc = run(command, ".", cwd=project)
        assert proc.returncode == 2
        assert len(one_line_errors(proc)) == 1 and "invalid TOML" in proc.stderr
        assert "Traceback" not in proc.stderr
    assert (project / "hazard.py").read_text() == HAZARD  # nothing was touched


def test_fix_killed_at_random_moments_leaves_every_file_whole(tmp_path):
    """kill -9 a `fix` over many files: each file is the old or the new version."""
    count = 120
    original = {}
    for i in range(count):
        text = f"import torch\n\n\ndef build_{i}():\n    return Net()\n\n\nmodel = build_{i}()\n" + "x = 1\n" * (i % 7) + "torch.compile(model)\n"
        original[f"m{i:03d}.py"] = text
    ref = tmp_path / "ref"
    ref.mkdir()
    for name, text in original.items():
        (ref / name).write_text(text)
    proc = run("fix", ".", "--no-cache", cwd=ref)
    assert proc.returncode == 0, proc.stderr
    fixed = {name: (ref / name).read_text() for name in original}
    assert all(fixed[n] != original[n] for n in original)
    # time the whole fix, then kill others at random points within it
    rng = random.Random(1234)
    seen_partial_runs = 0
    for trial in range(6):
        work = tmp_path / f"t{trial}"
        work.mkdir()
        for name, text in original.items():
            (work / name).write_text(text)
        child = subprocess.Popen([sys.executable, "-m", "compile_lint", "fix", ".", "--no-cache"],
                                 cwd=str(work), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 3.0))
        child.send_signal(signal.SIGKILL)
        child.wait()
        done = 0
        for name in original:
            text = (work / name).read_text()
            assert text in (original[name], fixed[name]), f"trial {trial}: {name} is neither old nor new:\n{text}"
            done += text == fixed[name]
        seen_partial_runs += 0 < done < count
        leftovers = [p.name for p in work.iterdir() if p.name not in original]
        assert all(p.endswith(".compile-lint.tmp") for p in leftovers), leftovers
    assert seen_partial_runs or True  # timing-dependent: whole-file checks above are the point


@pytest.mark.parametrize("depth", [500, 2000])
def test_a_deeply_nested_expression_is_linted_and_fixed(tmp_path, depth):
    """A chain of attributes deeper than Python's recursion limit: on dd75348 `check`
    exited 2 with an internal RecursionError while stdout said "All checks passed!"."""
    chain = "a" + ".b" * depth
    (tmp_path / "gen.py").write_text(f"import torch\nmodel = Net()\ntorch.compile(model)\nx = {chain}\ny = torch.compile({chain})\n")
    proc = run("check", "gen.py", "--output-format", "concise", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "error" not in proc.stderr
    assert proc.stdout.count("CL503") == 1, proc.stdout
    fixed = run("fix", "gen.py", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "model = torch.compile(model)\n" in (tmp_path / "gen.py").read_text()


def test_an_oserror_that_is_not_reading_the_file_is_an_internal_error_not_cl001(tmp_path, monkeypatch):
    """CL001 says the linted file cannot be read. An OSError raised anywhere else while
    linting (a data file of the tool itself gone missing, as after a package move) used
    to be reported as "cannot read: No such file or directory" on the linted file."""
    from compile_lint import lint_file
    from compile_lint.config import Settings
    from compile_lint.engine import Linter

    source = tmp_path / "model.py"
    source.write_text(HAZARD)
    real = lint_file.run_rules

    def broken(*args, **kwargs):
        raise FileNotFoundError(2, "No such file or directory", "graph_break_ids.json")

    monkeypatch.setattr(lint_file, "run_rules", broken)
    results = Linter(lambda _p: Settings(root=str(tmp_path))).lint([str(source)])
    assert results[0].error_kind == "internal" and "FileNotFoundError" in results[0].error
    monkeypatch.setattr(lint_file, "run_rules", real)
    os.chmod(source, 0)
    try:
        if os.access(source, os.R_OK):
            return  # root reads mode 000: the file is still readable here
        results = Linter(lambda _p: Settings(root=str(tmp_path))).lint([str(source)])
        assert results[0].error_kind == "io" and results[0].error.startswith("cannot read")
    finally:
        os.chmod(source, 0o644)
