"""Jupyter notebooks: check and fix .ipynb as users run them (default options)."""
import json
import subprocess
import sys

import pytest

from compile_lint.notebook import NotebookError, mask_cell, read_notebook


def run(*args, cwd, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "compile_lint", *args],
        capture_output=True, text=True, cwd=str(cwd), input=stdin,
    )


def code(src, count=None, outputs=()):
    return {"cell_type": "code", "execution_count": count, "metadata": {"scrolled": True},
            "outputs": list(outputs), "source": src.splitlines(keepends=True)}


def markdown(src):
    return {"cell_type": "markdown", "metadata": {}, "source": src.splitlines(keepends=True)}


UP = 'def up(x, ref):\n    return F.interpolate(x, size=(int(ref.shape[2]), int(ref.shape[3])), mode="bilinear")'
# the trace deploys TorchScript on purpose: CL105 (deprecated API) is silenced for these tests
TRACE = "traced = torch.jit.trace(up, (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16)))  # noqa: CL105"
PNG = {"data": {"image/png": "iVBORw0KGgoAAAANSUhEUg==", "text/plain": ["<Figure size 640x480 with 1 Axes>"]},
       "metadata": {"needs_background": "light"}, "output_type": "display_data"}


def experiment_cells():
    """A compile experiment as people write it: magics, shell escapes, outputs,
    markdown between code, a region (the trace in cell 6) reaching a def in cell 3."""
    return [
        markdown("# Upsampler under torch.jit.trace\n\nDoes the trace keep the size?"),
        code("%matplotlib inline\nimport torch\nimport torch.nn.functional as F", 1),
        code("!pip install -q einops\n" + UP, 2),
        markdown("Timing, eager:"),
        code("%%timeit\nup(torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16))", 3,
             [{"name": "stdout", "output_type": "stream", "text": ["1.2 ms ± 3.1 µs per loop\n"]}]),
        code(TRACE + "\nmodel = Net()\ntorch.compile(model)", 4, [PNG]),
        code("%%bash\necho 'not python (' ?\n  fi", 5),
        code("files = !ls *.png\ntorch.compile?\nprint('done?')  # really?", 6),
    ]


def notebook_text(cells, indent=1, ensure_ascii=False, trailing_newline=True, metadata=None):
    doc = {"cells": cells,
           "metadata": metadata or {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                                    "language_info": {"name": "python", "version": "3.11.7"}},
           "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(doc, indent=indent, sort_keys=True, ensure_ascii=ensure_ascii) + ("\n" if trailing_newline else "")


@pytest.fixture
def nb(tmp_path):
    path = tmp_path / "exp.ipynb"
    path.write_text(notebook_text(experiment_cells()), encoding="utf-8")
    return path


# -- check ---------------------------------------------------------------------
def test_check_names_cells_and_follows_regions_across_cells(nb):
    proc = run("check", "--output-format", "concise", ".", cwd=nb.parent)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("exp.ipynb:cell 3:3:35: CL101 ")
    assert lines[1].startswith("exp.ipynb:cell 3:3:54: CL101 ")
    assert lines[2].startswith("exp.ipynb:cell 6:3:1: CL503 ")
    assert lines[3].startswith("Found 3 findings")
    assert "CL000" not in proc.stdout  # magics, `!`, `?` and %%bash were not parsed


def test_text_report_shows_the_cell_line(nb):
    proc = run("check", "exp.ipynb", cwd=nb.parent)
    assert "3 |     return F.interpolate(x, size=(int(ref.shape[2])" in proc.stdout
    assert "= note: exp.ipynb:cell 6:1: traced by torch.jit.trace()" in proc.stdout  # named by cell
    assert "3 | torch.compile(model)" in proc.stdout


def test_json_has_cell_and_rows_relative_to_it(nb):
    proc = run("check", "--output-format", "json", "exp.ipynb", cwd=nb.parent)
    items = json.loads(proc.stdout)
    got = [(i["code"], i["cell"], i["location"]["row"], i["location"]["column"]) for i in items]
    assert got == [("CL101", 3, 3, 35), ("CL101", 3, 3, 54), ("CL503", 6, 3, 1)]
    (related,) = items[0]["related"]
    assert (related["cell"], related["location"]["row"]) == (6, 1)
    edit = items[2]["fix"]["edits"][0]
    assert edit["location"]["row"] == 3 and edit["content"].startswith("model = ")


def test_sarif_and_github_point_at_the_notebook_line(nb):
    lines = nb.read_text().splitlines()
    proc = run("check", "--output-format", "sarif", "exp.ipynb", cwd=nb.parent)
    results = json.loads(proc.stdout)["runs"][0]["results"]
    cl503 = [r for r in results if r["ruleId"] == "CL503"][0]
    loc = cl503["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "exp.ipynb"
    assert lines[loc["region"]["startLine"] - 1].strip() == '"torch.compile(model)"'
    assert cl503["properties"] == {"cell": 6, "cellRow": 3, "cellColumn": 1}
    gh = run("check", "--output-format", "github", "exp.ipynb", cwd=nb.parent).stdout.splitlines()
    assert gh[2].startswith(f"::error title=compile-lint (CL503),file=exp.ipynb,line={loc['region']['startLine']}::exp.ipynb:cell 6:3:1: CL503")


def test_noqa_in_a_cell(tmp_path):
    cells = experiment_cells()
    cells[5] = code(TRACE + "\nmodel = Net()\ntorch.compile(model)  # noqa: CL503", 4)
    (tmp_path / "n.ipynb").write_text(notebook_text(cells))
    proc = run("check", "--output-format", "concise", "n.ipynb", cwd=tmp_path)
    assert "CL503" not in proc.stdout and "CL101" in proc.stdout


def test_stdin_notebook(nb):
    proc = run("check", "-", "--stdin-filename", "other.ipynb", "--output-format", "concise", cwd=nb.parent, stdin=nb.read_text())
    assert proc.stdout.splitlines()[2].startswith("other.ipynb:cell 6:3:1: CL503"), proc.stdout + proc.stderr


def test_syntax_error_in_a_cell_is_reported_in_that_cell(tmp_path):
    cells = [code("import torch", 1), markdown("x"), code("x = 1\ndef broken(:\n    pass", 2)]
    (tmp_path / "s.ipynb").write_text(notebook_text(cells))
    proc = run("check", "--output-format", "concise", "s.ipynb", cwd=tmp_path)
    assert proc.stdout.startswith("s.ipynb:cell 3:2:"), proc.stdout
    assert "CL000" in proc.stdout


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the cell parses on Python 3.12+")
def test_a_cell_valid_on_a_newer_python_says_so(tmp_path):
    """A PEP 701 f-string in a cell: the same message as in a file (source.syntax_error_message),
    not "SyntaxError"."""
    cells = [code("import torch", 1), code('row = {"a": 1}\nprint(f"{row["a"]}")', 2)]
    (tmp_path / "s.ipynb").write_text(notebook_text(cells))
    proc = run("check", "--output-format", "concise", "s.ipynb", cwd=tmp_path)
    assert proc.stdout.startswith("s.ipynb:cell 2:2:"), proc.stdout
    assert "CL000 not linted: valid from Python 3.12 on" in proc.stdout and "SyntaxError" not in proc.stdout


# -- discovery -----------------------------------------------------------------
def test_discovered_by_default_and_governed_by_include(tmp_path, nb):
    (tmp_path / "mod.py").write_text("import torch\ntorch.compile(m)\n")
    proc = run("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert "exp.ipynb:cell 6" in proc.stdout and "mod.py:2:1" in proc.stdout
    (tmp_path / "pyproject.toml").write_text('[tool.compile-lint]\ninclude = ["*.py"]\n')
    proc = run("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert "exp.ipynb" not in proc.stdout and "mod.py:2:1" in proc.stdout
    (tmp_path / "pyproject.toml").write_text('[tool.compile-lint]\ninclude = ["*.py"]\nextend-include = ["*.ipynb"]\n')
    proc = run("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert "exp.ipynb:cell 6" in proc.stdout and "mod.py:2:1" in proc.stdout


def test_checkpoints_folder_is_skipped(tmp_path, nb):
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "exp-checkpoint.ipynb").write_text(nb.read_text())
    proc = run("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert "checkpoint" not in proc.stdout and "exp.ipynb" in proc.stdout


# -- bad notebooks -------------------------------------------------------------
@pytest.mark.parametrize("content, message", [
    ('{"cells": [', "invalid JSON"),
    (json.dumps({"cells": [], "metadata": {}, "nbformat": 3, "nbformat_minor": 0}), "nbformat 3 is not supported"),
    ('[1, 2]', "no 'cells' list"),
])
def test_bad_notebook_is_a_clear_error_and_never_touched(tmp_path, content, message):
    path = tmp_path / "bad.ipynb"
    path.write_text(content)
    for command in ("check", "fix"):
        proc = run(command, "bad.ipynb", cwd=tmp_path)
        assert proc.returncode == 2
        assert message in proc.stderr and "Traceback" not in proc.stderr
        assert proc.stderr.startswith("compile-lint: error: ")
    assert path.read_text() == content


# -- fix -----------------------------------------------------------------------
def test_fix_rewrites_only_the_changed_cells(nb):
    before = nb.read_bytes()
    proc = run("fix", "exp.ipynb", cwd=nb.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = nb.read_bytes()
    # exactly the two lines of code change; outputs, counts, metadata, indent and the
    # trailing newline are the same bytes
    expected = before.replace(
        b'"    return F.interpolate(x, size=(int(ref.shape[2]), int(ref.shape[3])), mode=\\"bilinear\\")"',
        b'"    return F.interpolate(x, size=(ref.shape[2], ref.shape[3]), mode=\\"bilinear\\")"',
    ).replace(b'"torch.compile(model)"', b'"model = torch.compile(model)"')
    assert expected != before
    assert after == expected
    doc = json.loads(after)
    assert doc["cells"][5]["outputs"] == [PNG] and doc["cells"][5]["execution_count"] == 4
    assert "".join(doc["cells"][6]["source"]) == "%%bash\necho 'not python (' ?\n  fi"
    assert "".join(doc["cells"][7]["source"]).startswith("files = !ls *.png\ntorch.compile?\n")
    # a second fix changes nothing
    assert run("fix", "exp.ipynb", cwd=nb.parent).returncode == 0
    assert nb.read_bytes() == after


def test_fix_keeps_another_layout(tmp_path):
    """indent 2, escaped non-ASCII, no trailing newline, source as one string."""
    cells = experiment_cells()
    cells[5]["source"] = "".join(cells[5]["source"])
    text = notebook_text(cells, indent=2, ensure_ascii=True, trailing_newline=False)
    path = tmp_path / "l.ipynb"
    path.write_text(text)
    assert run("fix", "l.ipynb", cwd=tmp_path).returncode == 0
    after = path.read_text()
    assert not after.endswith("\n") and "\\u00b5s" in after
    old = json.dumps(cells[5]["source"])
    assert after == text.replace(old, old.replace("\\ntorch.compile(model)", "\\nmodel = torch.compile(model)")).replace(
        "(int(ref.shape[2]), int(ref.shape[3]))", "(ref.shape[2], ref.shape[3])")


def test_fix_adds_lines_inside_a_cell(tmp_path):
    """A fix that adds a line (an import) keeps the cells apart and the magics intact."""
    cells = [code("%load_ext autoreload\nimport torch", 1), code("!nvidia-smi\nwith torch.cuda.amp.autocast():\n    y = model(x)", 2)]
    path = tmp_path / "a.ipynb"
    path.write_text(notebook_text(cells))
    proc = run("fix", "--output-format", "concise", "a.ipynb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(path.read_text())
    first, second = ("".join(c["source"]) for c in doc["cells"])
    assert first.startswith("%load_ext autoreload\n")
    assert second.startswith("!nvidia-smi\nwith torch.amp.autocast(")
    assert "torch.cuda.amp" not in second


def test_fix_diff_names_cells(nb):
    before = nb.read_bytes()
    proc = run("fix", "--diff", "exp.ipynb", cwd=nb.parent)
    assert proc.returncode == 1
    assert "--- a/exp.ipynb:cell 3\n+++ b/exp.ipynb:cell 3\n" in proc.stdout
    assert "-torch.compile(model)\n+model = torch.compile(model)\n" in proc.stdout
    assert nb.read_bytes() == before


def test_fix_stdin_notebook(nb):
    proc = run("fix", "-", "--stdin-filename", "exp.ipynb", cwd=nb.parent, stdin=nb.read_text())
    assert json.loads(proc.stdout)["cells"][5]["source"][-1] == "model = torch.compile(model)"


# -- masking -------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    "%matplotlib inline", "!pip install x", "  !ls", "x = !ls", "a, b = %sx ls", "torch.compile?",
    "?torch.compile", "torch.compile??", "%time y = model(x)", "obj.method?  # help",
])
def test_ipython_lines_are_masked(line):
    masked: dict = {}
    out = mask_cell(line + "\n", masked)
    assert "compile-lint masked line 1" in out and masked[1] == line


@pytest.mark.parametrize("text", [
    's = """\n!not a magic\n%not either\n"""\n',
    "x = (1,\n     !2)\n",  # inside brackets: a syntax error the user should see
    "y = 1 if a else b  # why?\n",
    "print('what?')\n",
    "z = a \\\n  !b\n",
])
def test_python_lines_are_not_masked(text):
    masked: dict = {}
    assert mask_cell(text, masked) == text and not masked


def test_cell_magics():
    masked: dict = {}
    assert mask_cell("%%timeit -n 3\nmodel(x)", masked) == "pass  # compile-lint masked line 1\nmodel(x)"
    masked = {}
    out = mask_cell("%%writefile model.py\nimport torch\n  bad indent", masked)
    assert out.count("compile-lint masked line") == 3 and "import torch" not in out


def test_other_kernels_have_no_python(tmp_path):
    cells = [code("library(torch)\nx <- 1", 1)]
    text = notebook_text(cells, metadata={"kernelspec": {"language": "R", "name": "ir"}})
    assert read_notebook("r.ipynb", text.encode()).code == ""
    (tmp_path / "r.ipynb").write_text(text)
    assert run("check", "r.ipynb", cwd=tmp_path).returncode == 0


def test_read_errors():
    with pytest.raises(NotebookError, match="not UTF-8"):
        read_notebook("x.ipynb", b'{"cells": "\xff"}')
    with pytest.raises(NotebookError, match="source that is not text"):
        read_notebook("x.ipynb", json.dumps({"cells": [{"cell_type": "code", "source": 3}], "nbformat": 4}).encode())


def test_verify_leaves_notebooks_as_notes():
    from compile_lint.model import Finding, Position
    from compile_lint.verify.targets import targets_from_findings

    pos = Position(3, 1)
    plan = targets_from_findings([Finding("CL101", "m", "/x/exp.ipynb", pos, pos, scope="up")])
    assert plan.targets == [] and "in a notebook" in plan.notes[0]


def _ids(cells):
    """Cells with the `id` nbformat 4.5 requires."""
    return [dict(cell, id=f"cell-{i}") for i, cell in enumerate(cells)]


def _valid(path):
    """The notebook as Jupyter reads it (nbformat: the library Jupyter uses), validated."""
    nbformat = pytest.importorskip("nbformat")
    with open(path, encoding="utf-8") as fh:
        doc = nbformat.read(fh, as_version=4)
    nbformat.validate(doc)
    return doc


def test_a_cell_that_does_not_parse_hides_nothing_of_the_others(tmp_path):
    """On dd75348 one broken cell made the whole notebook one CL000: no finding of any
    other cell, nothing fixed. Now the cell is reported and left alone, the others are
    linted and fixed."""
    path = tmp_path / "exp.ipynb"
    broken = "def f(:\n    pass"
    path.write_text(notebook_text(_ids([code("import torch"), code(broken), code("model = Net()\ntorch.compile(model)")])))
    proc = run("check", "exp.ipynb", "--output-format", "concise", cwd=tmp_path)
    assert proc.returncode == 1
    assert "exp.ipynb:cell 2:1:7: CL000" in proc.stdout and "exp.ipynb:cell 3:2:1: CL503" in proc.stdout, proc.stdout
    fixed = run("fix", "exp.ipynb", cwd=tmp_path)
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr  # the CL000 remains
    assert "Found 2 findings (1 fixed, 1 remaining)." in fixed.stdout
    assert "cell 2:1:7: CL000" in fixed.stdout
    doc = _valid(path)
    assert doc.cells[1].source == broken
    assert doc.cells[2].source == "model = Net()\nmodel = torch.compile(model)"


def test_an_unsafe_fix_that_empties_a_cell_keeps_the_other_fixes(tmp_path):
    """On dd75348 emptying a cell made the notebook "not read back" (exit 2) and every
    other cell's fix was dropped."""
    path = tmp_path / "exp.ipynb"
    path.write_text(notebook_text(_ids([code("import torch._dynamo"), code("torch._dynamo.config.suppress_errors = True"),
                                   code("model = Net()\ntorch.compile(model)")])))
    proc = run("fix", "exp.ipynb", "--unsafe-fixes", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = _valid(path)
    assert [cell.source for cell in doc.cells] == ["import torch._dynamo", "", "model = Net()\nmodel = torch.compile(model)"]
    assert run("check", "exp.ipynb", cwd=tmp_path).returncode == 0


def test_a_crlf_notebook_keeps_crlf_in_the_cells_it_rewrites(tmp_path):
    """On dd75348 the rewritten source list used LF in a notebook written with CRLF."""
    path = tmp_path / "exp.ipynb"
    text = notebook_text(_ids([code("import torch"), code("model = Net()\ntorch.compile(model)")])).replace("\n", "\r\n")
    path.write_bytes(text.encode())
    proc = run("fix", "exp.ipynb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    raw = path.read_bytes()
    assert raw.count(b"\n") == raw.count(b"\r\n") == text.count("\n")
    assert raw == text.replace('"torch.compile(model)"', '"model = torch.compile(model)"').encode()
    assert _valid(path).cells[1].source == "model = Net()\nmodel = torch.compile(model)"
