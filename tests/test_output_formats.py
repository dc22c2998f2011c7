"""Output formats: text, concise, Ruff-compatible JSON and JSON lines, SARIF, GitHub
annotations, --output-file; and the related locations (where the code is compiled)."""
import json
import os

import pytest

from conftest import ROOT, run


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


# -- related locations: where the code is compiled ---------------------------------------
COMPILED = "import torch\n\n\n@torch.compile\ndef peak(x):\n    return x.amax().item()\n"


def test_related_location_in_text_json_and_sarif(tmp_path):
    (tmp_path / "peak.py").write_text(COMPILED)
    text = run("check", "peak.py", cwd=tmp_path).stdout
    assert "peak.py:6:12: CL508 `.item()` in compiled code forces a graph break (GB0124)\n" in text
    assert "  = note: peak.py:4: compiled by torch.compile()\n" in text
    concise = run("check", "peak.py", "--output-format", "concise", cwd=tmp_path).stdout
    assert concise.splitlines()[0] == "peak.py:6:12: CL508 `.item()` in compiled code forces a graph break (GB0124)"

    [item] = json.loads(run("check", "peak.py", "--output-format", "json", cwd=tmp_path).stdout)
    assert item["related"] == [
        {"filename": str(tmp_path / "peak.py"), "location": {"row": 4, "column": None}, "message": "compiled by torch.compile()"}
    ]

    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(run("check", "peak.py", "--output-format", "sarif", cwd=tmp_path).stdout)
    with open(os.path.join(ROOT, "tests", "data", "sarif-schema-2.1.0.json")) as fh:
        jsonschema.validate(doc, json.load(fh))
    [result] = doc["runs"][0]["results"]
    assert result["relatedLocations"] == [
        {
            "id": 0,
            "physicalLocation": {"artifactLocation": {"uri": "peak.py"}, "region": {"startLine": 4}},
            "message": {"text": "compiled by torch.compile()"},
        }
    ]


def test_findings_without_a_site_have_no_related_locations(project):
    [item] = json.loads(run("check", "bad.py", "--output-format", "json", cwd=project).stdout)
    assert item["related"] == []
    doc = json.loads(run("check", "bad.py", "--output-format", "sarif", cwd=project).stdout)
    assert "relatedLocations" not in doc["runs"][0]["results"][0]


# RFC 3986 URI-reference characters: unreserved, pct-encoded, sub-delims, ":", "@", "/"
_URI_CHARS = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-F]{2})*"


@pytest.mark.parametrize("name", ["my model.py", "é.py", "c#d.py", "x:y.py", "50%.py"])
def test_sarif_uris_are_percent_encoded(tmp_path, name):
    """On dd75348 the URIs were the raw paths: `my model.py`, `é.py`, `c#d.py` (a
    fragment) and `x:y.py` (read as scheme `x`) are not URI references."""
    import re
    from urllib.parse import unquote, urlsplit

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / name).write_text("import torch\nmodel = Net()\ntorch.compile(model)\n", encoding="utf-8")
    doc = json.loads(run("check", ".", "--output-format", "sarif", cwd=tmp_path / "sub").stdout)
    (result,) = doc["runs"][0]["results"]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert re.fullmatch(_URI_CHARS, uri), uri
    assert urlsplit(uri).scheme == "" and urlsplit(uri).fragment == "", uri
    assert unquote(uri) == name
    # outside the folder of the run: an absolute file URI, encoded the same way
    (tmp_path / "elsewhere").mkdir()
    doc = json.loads(run("check", str(tmp_path / "sub" / name), "--output-format", "sarif", cwd=tmp_path / "elsewhere").stdout)
    uri = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.startswith("file:///") and re.fullmatch(_URI_CHARS, uri[len("file:"):]), uri
    assert unquote(urlsplit(uri).path) == str(tmp_path / "sub" / name)


def test_binary_bytes_never_reach_the_terminal(tmp_path):
    """A binary file named on the command line is reported as CL000; on dd75348 the text
    report printed its line as it was (an escape sequence, NUL bytes) to the terminal."""
    (tmp_path / "image.py").write_bytes(b"\x1b[31mred\x07\x00\x8f\x1b]0;title\x07 = 1\n")
    proc = run("check", "image.py", cwd=tmp_path)
    assert proc.returncode == 1 and "CL000" in proc.stdout
    assert not any(ch in proc.stdout for ch in "\x1b\x07\x00\x8f"), repr(proc.stdout)
    assert "1 | \ufffd[31mred" in proc.stdout


def test_force_color_and_no_color(project):
    """FORCE_COLOR colors a report that goes to a pipe (CI logs); NO_COLOR wins. On dd75348
    FORCE_COLOR was ignored."""
    import subprocess
    import sys

    def out(**env):
        base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
        return subprocess.run([sys.executable, "-m", "compile_lint", "check", "bad.py"], cwd=project,
                              capture_output=True, text=True, env={**base, **env}).stdout

    assert "\x1b[" not in out()
    assert "\x1b[1m" in out(FORCE_COLOR="1") and "CL503" in out(FORCE_COLOR="1")
    assert "\x1b[" not in out(FORCE_COLOR="1", NO_COLOR="1")


def test_a_file_not_checked_is_never_all_checks_passed(tmp_path):
    """A file that cannot be linted exits 2; the report must not say "All checks passed!"
    (it did on dd75348, with stdout `All checks passed!` and JSON `[]`)."""
    (tmp_path / "broken.ipynb").write_text("{not json")
    (tmp_path / "ok.py").write_text("x = 1\n")
    proc = run("check", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert "All checks passed" not in proc.stdout
    assert "1 file could not be checked" in proc.stdout
    assert "broken.ipynb: " in proc.stderr
