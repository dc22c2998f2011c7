"""Golden tests: the real command line over every fixture of fixtures/rules/<CODE>/,
compared with the expected file beside it (Ruff's snapshots, TorchFix's pairs).

A fixture *entry* is a file `NAME.py` or a folder `NAME/` (a small project) in a rule's
fixture folder; `fixed.py` is not an entry but the expected result of fixing
`hazard.py`. Each entry is copied alone into an empty folder and, with default options
and a cold cache, run through

  compile-lint check NAME --output-format json     every finding: code, range, message,
                                                   related locations, fix title and edits
  compile-lint fix NAME --diff                     what the safe fixes change
  compile-lint fix NAME --unsafe-fixes             what all the fixes change (applied; a
                                                   second run must change nothing, and
                                                   its report shows what is left)

and the result, rendered as text, must equal `NAME.expected`. After a deliberate
change of output, regenerate and review the diff:

  python -m pytest tests/test_golden.py --update-golden

Beyond the golden text, each entry must obey what its name promises: `hazard*` fires
its folder's rule, `clean*` produces nothing of any rule, `fixed.py` is the unsafe fix
of `hazard.py` byte for byte, and a `crossfile/` project's hazard is only found with
the file that compiles it.
"""
from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

FIXTURES = os.path.join(ROOT, "fixtures", "rules")
EXPECTED = ".expected"
NOT_ENTRIES = {"fixed.py"}


def _entries() -> list[tuple[str, str]]:
    out = []
    if not os.path.isdir(FIXTURES):
        return out
    for code in sorted(os.listdir(FIXTURES)):
        folder = os.path.join(FIXTURES, code)
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if name in NOT_ENTRIES or name.startswith((".", "__")) or name.endswith(EXPECTED):
                continue
            if os.path.isdir(path) or name.endswith(".py"):
                out.append((code, name))
    return out


ENTRIES = _entries()


def cli(*args: str, cwd: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("COMPILE_LINT_NO_CACHE", None)
    return subprocess.run(
        [sys.executable, "-m", "compile_lint", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def _copy(src: str, dest_folder: str) -> str:
    """Copy an entry alone, with its folder's `compile-lint.toml` when there is one (a
    rule that is off by default, such as CL103, is selected there)."""
    os.makedirs(dest_folder, exist_ok=True)
    dest = os.path.join(dest_folder, os.path.basename(src))
    (shutil.copytree if os.path.isdir(src) else shutil.copyfile)(src, dest)
    config = os.path.join(os.path.dirname(src), "compile-lint.toml")
    if os.path.exists(config):
        shutil.copyfile(config, os.path.join(dest_folder, "compile-lint.toml"))
    return dest


def _files(root: str) -> dict[str, bytes]:
    """Every .py file under `root` (a file or a folder), by path relative to its parent."""
    base = os.path.dirname(root)
    if os.path.isfile(root):
        return {os.path.basename(root): open(root, "rb").read()}
    out = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                out[os.path.relpath(path, base).replace(os.sep, "/")] = open(path, "rb").read()
    return out


def _diff(before: dict[str, bytes], after: dict[str, bytes]) -> str:
    out = []
    for name in sorted(before):
        old = before[name].decode("utf-8", errors="replace").splitlines(keepends=True)
        new = after.get(name, b"").decode("utf-8", errors="replace").splitlines(keepends=True)
        out.extend(difflib.unified_diff(old, new, fromfile=f"a/{name}", tofile=f"b/{name}"))
    return "".join(out)


def _rel(path: str, cwd: str) -> str:
    return os.path.relpath(path, cwd).replace(os.sep, "/") if os.path.isabs(path) else path


def _pos(loc: dict) -> str:
    return f"{loc['row']}:{loc['column']}"


def render_finding(f: dict, cwd: str) -> list[str]:
    lines = [f"{f['code']} {_rel(f['filename'], cwd)}:{_pos(f['location'])}-{_pos(f['end_location'])}", f"  message: {f['message']}"]
    for rel in f.get("related") or []:
        loc = rel["location"]
        where = f"{loc['row']}:{loc['column']}" if loc["column"] else f"{loc['row']}"
        lines.append(f"  note: {_rel(rel['filename'], cwd)}:{where}: {rel['message']}")
    fix = f.get("fix")
    if fix:
        lines.append(f"  fix ({fix['applicability']}): {fix['message']}")
        for edit in fix["edits"]:
            lines.append(f"    edit {_pos(edit['location'])}-{_pos(edit['end_location'])}: {json.dumps(edit['content'])}")
    return lines


def _section(title: str, body: str) -> list[str]:
    return [f"## {title}", body.rstrip("\n") if body.strip() else "(no change)", ""]


class Run:
    """One entry through the command line: findings as JSON, and the fix diffs."""

    def __init__(self, code: str, name: str, tmp: str):
        self.code, self.name = code, name
        self.source = os.path.join(FIXTURES, code, name)
        self.work = os.path.join(tmp, "check")
        _copy(self.source, self.work)
        proc = cli("check", name, "--output-format", "json", cwd=self.work)
        assert proc.returncode in (0, 1), proc.stderr
        assert proc.stderr == "", proc.stderr
        self.findings = json.loads(proc.stdout)
        assert proc.returncode == (1 if self.findings else 0)
        self.safe_diff = self.unsafe_diff = None
        self.fixed_files = self.refixed_files = None
        fixes = [f["fix"]["applicability"] for f in self.findings if f["fix"]]
        if not fixes:
            return
        self.safe_diff = ""
        if "safe" in fixes:
            proc = cli("fix", name, "--diff", cwd=self.work)
            assert proc.returncode in (0, 1), proc.stderr
            self.safe_diff = proc.stdout
        apply = os.path.join(tmp, "fix")
        target = _copy(self.source, apply)
        before = _files(target)
        proc = cli("fix", name, "--unsafe-fixes", cwd=apply)
        assert proc.returncode in (0, 1), proc.stderr
        self.fixed_files = _files(target)
        self.unsafe_diff = _diff(before, self.fixed_files)
        again = cli("fix", name, "--unsafe-fixes", "--output-format", "concise", cwd=apply)
        assert again.returncode in (0, 1), again.stderr
        self.refixed_files = _files(target)
        self.left_after_fix = again.stdout

    def text(self) -> str:
        rel = f"fixtures/rules/{self.code}/{self.name}"
        lines = [
            f"# `compile-lint check/fix {self.name}` on {rel}, run alone.",
            "# Regenerate: python -m pytest tests/test_golden.py --update-golden (then review the diff).",
            "",
            "## check",
        ]
        for f in self.findings:
            lines += render_finding(f, self.work)
        if not self.findings:
            lines.append("(no findings)")
        lines.append("")
        if self.safe_diff is not None:
            lines += _section("fix", self.safe_diff)
            if self.unsafe_diff == self.safe_diff:
                lines += ["## fix --unsafe-fixes", "(same as fix)", ""]
            else:
                lines += _section("fix --unsafe-fixes", self.unsafe_diff)
            lines += ["## left after fix --unsafe-fixes", self.left_after_fix.rstrip("\n"), ""]
        return "\n".join(lines).rstrip("\n") + "\n"


@pytest.fixture(scope="module")
def golden_run(tmp_path_factory):
    """Run each entry once per test module (the crossfile test reuses the golden run)."""
    runs: dict[tuple[str, str], Run] = {}

    def get(code: str, name: str) -> Run:
        if (code, name) not in runs:
            runs[code, name] = Run(code, name, str(tmp_path_factory.mktemp(f"{code}-{name}")))
        return runs[code, name]

    return get


def _expected_path(code: str, name: str) -> str:
    stem = name[:-3] if name.endswith(".py") else name
    return os.path.join(FIXTURES, code, stem + EXPECTED)


@pytest.mark.parametrize("code,name", ENTRIES, ids=[f"{c}/{n}" for c, n in ENTRIES])
def test_fixture_matches_expected(code, name, golden_run, update_golden):
    run = golden_run(code, name)
    from compile_lint.rules.base import DOC_URL

    for f in run.findings:
        assert f["url"] == DOC_URL.format(code=f["code"])
        assert "\n" not in f["message"]
    if name.startswith("hazard"):
        assert code in {f["code"] for f in run.findings}, f"{code} did not fire on its {name}"
    if name.startswith("clean"):
        assert run.findings == [], f"{code}/{name} should produce no finding of any rule"
    if run.fixed_files is not None:
        assert run.refixed_files == run.fixed_files, "a second fix changed the files again"
    fixed = os.path.join(FIXTURES, code, "fixed.py")
    if name == "hazard.py" and os.path.exists(fixed) and not update_golden:
        assert run.fixed_files is not None, f"{code}: fixed.py exists but nothing offers a fix"
        assert run.fixed_files["hazard.py"] == open(fixed, "rb").read()

    expected_path = _expected_path(code, name)
    actual = run.text()
    if update_golden:
        with open(expected_path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(actual)
        if name == "hazard.py" and os.path.exists(fixed) and run.fixed_files is not None:
            with open(fixed, "wb") as fh:
                fh.write(run.fixed_files["hazard.py"])
        return
    assert os.path.exists(expected_path), f"{expected_path} is missing: run pytest tests/test_golden.py --update-golden"
    with open(expected_path, encoding="utf-8", newline="") as fh:
        expected = fh.read()
    assert actual == expected, "output changed; if on purpose, run --update-golden and review the diff"


def test_every_rule_has_fixtures():
    from compile_lint.rules import all_rules

    for code, rule in all_rules().items():
        if code in ("CL000", "CL001"):  # about a file, not its code: reported by the pipeline itself
            continue
        folder = os.path.join(FIXTURES, code)
        names = set(os.listdir(folder)) if os.path.isdir(folder) else set()
        assert {"hazard.py", "hazard"} & names, f"fixtures/rules/{code} has no hazard"
        assert {"clean.py", "clean"} & names, f"fixtures/rules/{code} has no clean look-alike"
        assert "fixed.py" not in names or rule.fix_safety != "none", f"{code}: fixed.py, but the rule has no fix"
    for code, name in ENTRIES:
        assert os.path.exists(_expected_path(code, name)), f"{code}/{name} has no expected file"
    entries = {_expected_path(c, n) for c, n in ENTRIES}
    for code in os.listdir(FIXTURES):
        for name in os.listdir(os.path.join(FIXTURES, code)):
            path = os.path.join(FIXTURES, code, name)
            assert not name.endswith(EXPECTED) or path in entries, f"{path} belongs to no fixture"


CROSSFILE = [(c, n) for c, n in ENTRIES if n == "crossfile"]


@pytest.mark.parametrize("code,name", CROSSFILE, ids=[c for c, _ in CROSSFILE])
def test_crossfile_hazard_needs_the_compile_site(code, name, tmp_path, golden_run):
    """Linted alone, the file holding the hazard cannot know it is compiled (or how).
    CL401 is the exception: its hazard (keeping an output) is visible in one file."""
    project = os.path.join(FIXTURES, code, name)
    hazard_files = sorted({
        os.path.basename(f["filename"]) for f in golden_run(code, name).findings if f["code"] == code
    })
    assert hazard_files
    for file in hazard_files:
        work = str(tmp_path / file)
        _copy(os.path.join(project, file), work)
        proc = cli("check", file, "--output-format", "json", cwd=work)
        alone = [f for f in json.loads(proc.stdout) if f["code"] == code]
        assert not alone or code == "CL401", f"{code} fired on {file} without the compile site"
