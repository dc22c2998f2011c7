"""The command line: exit codes, output formats, selection, config, noqa, fix."""
import json
import os
import stat
import subprocess
import sys

import pytest

from conftest import ROOT

HAZARD = "import torch\nmodel = Net()\ntorch.compile(model)\n"
CLEAN = "import torch\nmodel = torch.compile(Net())\n"


def run(*args, cwd, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "compile_lint", *args],
        capture_output=True, text=True, cwd=str(cwd), input=stdin,
    )


@pytest.fixture
def project(tmp_path):
    (tmp_path / "bad.py").write_text(HAZARD)
    (tmp_path / "good.py").write_text(CLEAN)
    return tmp_path


# -- exit codes ----------------------------------------------------------------
def test_exit_0_on_clean(project):
    proc = run("check", "good.py", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All checks passed" in proc.stdout


def test_exit_1_on_findings_and_exit_zero(project):
    assert run("check", "bad.py", cwd=project).returncode == 1
    assert run("check", "bad.py", "--exit-zero", cwd=project).returncode == 0


@pytest.mark.parametrize(
    "args,needle",
    [
        (("check", "--select", "CL999"), "unknown rule selector 'CL999'"),
        (("check", "--ignore", "E501"), "unknown rule selector"),
        (("check", "missing.py"), "missing.py: no such file or directory"),
        (("check", "--output-format", "xml"), "Invalid value for '--output-format'"),
        (("check", "--target-torch", "two"), "expected a torch version"),
        (("rule", "CL5O3"), "unknown rule"),
    ],
)
def test_exit_2_on_user_errors_without_traceback(project, args, needle):
    proc = run(*args, cwd=project)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr


def test_default_path_is_current_folder(project):
    proc = run("check", "--output-format", "concise", cwd=project)
    assert proc.returncode == 1
    assert "bad.py:3:1: CL503" in proc.stdout


# -- output formats --------------------------------------------------------------
def test_text_format_has_excerpt_hint_and_summary(project):
    out = run("check", "bad.py", cwd=project).stdout
    assert "bad.py:3:1: CL503" in out
    assert "3 | torch.compile(model)" in out
    assert "^^^^" in out
    assert "help: assign the result" in out
    assert "Found 1 finding (1 fixable with `compile-lint fix`)." in out


def test_json_format_uses_ruff_fields(project):
    data = json.loads(run("check", "bad.py", "--output-format", "json", cwd=project).stdout)
    assert len(data) == 1
    item = data[0]
    assert item["code"] == "CL503"
    assert item["location"] == {"row": 3, "column": 1}
    assert item["end_location"] == {"row": 3, "column": 21}
    assert item["filename"] == str(project / "bad.py")
    assert item["url"].endswith("CL503.md")
    fix = item["fix"]
    assert fix["applicability"] == "safe"
    assert fix["edits"] == [
        {"content": "model = ", "location": {"row": 3, "column": 1}, "end_location": {"row": 3, "column": 1}}
    ]


def test_json_lines_format(project):
    (project / "bad2.py").write_text("import torch\ntorch.compile(a)\ntorch.compile(b)\n")
    lines = run("check", ".", "--output-format", "json-lines", cwd=project).stdout.splitlines()
    assert len(lines) == 3
    assert all(json.loads(line)["code"] == "CL503" for line in lines)


def test_sarif_is_valid_and_carries_rules(project):
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(run("check", "bad.py", "--output-format", "sarif", cwd=project).stdout)
    with open(os.path.join(ROOT, "tests", "data", "sarif-schema-2.1.0.json")) as fh:
        schema = json.load(fh)
    jsonschema.validate(doc, schema)
    run0 = doc["runs"][0]
    rules = {r["id"]: r for r in run0["tool"]["driver"]["rules"]}
    assert rules["CL503"]["name"] == "compile-result-discarded"
    assert rules["CL503"]["helpUri"].endswith("CL503.md")
    assert rules["CL503"]["shortDescription"]["text"]
    result = run0["results"][0]
    assert result["ruleId"] == "CL503"
    assert run0["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "CL503"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (3, 1)


def test_github_format(project):
    out = run("check", "bad.py", "--output-format", "github", cwd=project).stdout
    assert out.startswith("::error title=compile-lint (CL503),file=bad.py,line=3,col=1,endLine=3,endColumn=21::")


def test_output_file(project):
    proc = run("check", "bad.py", "--output-format", "json", "--output-file", "report.json", cwd=project)
    assert proc.returncode == 1 and proc.stdout == ""
    assert json.loads((project / "report.json").read_text())[0]["code"] == "CL503"


def test_columns_count_characters_not_bytes(tmp_path):
    (tmp_path / "u.py").write_text('import torch\nnom = "é"; torch.compile(model)\n', encoding="utf-8")
    data = json.loads(run("check", "u.py", "--output-format", "json", cwd=tmp_path).stdout)
    assert data[0]["location"] == {"row": 2, "column": 12}


# -- selection -----------------------------------------------------------------------
def test_select_ignore_and_prefixes(project):
    assert run("check", "bad.py", "--select", "CL0", cwd=project).returncode == 0
    assert run("check", "bad.py", "--select", "CL5", cwd=project).returncode == 1
    assert run("check", "bad.py", "--ignore", "CL503", cwd=project).returncode == 0
    assert run("check", "bad.py", "--select", "CL0", "--extend-select", "CL503", cwd=project).returncode == 1
    assert run("check", "bad.py", "--select", "ALL", "--ignore", "CL50", cwd=project).returncode == 0


# -- configuration ---------------------------------------------------------------------
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


# -- suppression -------------------------------------------------------------------------
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


# -- stdin --------------------------------------------------------------------------------
def test_stdin_check_and_fix(tmp_path):
    proc = run("check", "-", "--stdin-filename", "model.py", "--output-format", "concise", cwd=tmp_path, stdin=HAZARD)
    assert proc.returncode == 1 and "model.py:3:1: CL503" in proc.stdout
    proc = run("fix", "-", cwd=tmp_path, stdin=HAZARD)
    assert proc.returncode == 0
    assert proc.stdout == "import torch\nmodel = Net()\nmodel = torch.compile(model)\n"


# -- fix ------------------------------------------------------------------------------------
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


def test_syntax_error_is_cl000_and_others_still_linted(project):
    (project / "broken.py").write_bytes(b"def f(:\n    pass\n")
    before = (project / "broken.py").read_bytes()
    proc = run("check", ".", "--output-format", "concise", cwd=project)
    assert proc.returncode == 1
    assert "broken.py:1:7: CL000 SyntaxError" in proc.stdout
    assert "bad.py:3:1: CL503" in proc.stdout
    run("fix", ".", cwd=project)
    assert (project / "broken.py").read_bytes() == before
    assert "model = torch.compile(model)" in (project / "bad.py").read_text()


def test_check_does_not_import_torch_or_libcst(tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    code = (
        "import sys, runpy\n"
        "sys.argv = ['compile-lint', 'check', 'a.py']\n"
        "try:\n"
        "    runpy.run_module('compile_lint', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "bad = [m for m in ('torch', 'libcst') if m in sys.modules]\n"
        "sys.stderr.write('IMPORTED=' + ','.join(bad) + '\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert "IMPORTED=\n" in proc.stderr, proc.stderr


# -- rules and rule --------------------------------------------------------------------------
def test_rules_table_and_rule_page(tmp_path):
    out = run("rules", cwd=tmp_path).stdout
    assert "CL503" in out and "compile-result-discarded" in out and "safe" in out
    page = run("rule", "cl503", cwd=tmp_path).stdout
    for section in ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "References"):
        assert f"## {section}" in page


def test_version(tmp_path):
    from compile_lint import __version__

    assert run("--version", cwd=tmp_path).stdout.strip().endswith(__version__)
