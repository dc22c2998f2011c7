"""`compile-lint server`, driven over stdio by a real LSP exchange (tests/lsp_client.py):
initialize, didOpen/didChange, publishDiagnostics, codeAction, hover, shutdown, exit."""
import os

import pytest

from lsp_client import LspClient, uri

MODELS = '''\
import torch
import torch.nn.functional as F
from torch import nn


class Up(nn.Module):
    def forward(self, x, ref):
        return F.interpolate(x, size=(int(ref.shape[2]), int(ref.shape[3])), mode="bilinear")
'''
TRAIN = '''\
import torch
from models import Up

traced = torch.jit.trace(Up(), (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16)))
'''
TRAIN_NO_TRACE = '''\
import torch
from models import Up

model = Up()
'''


def codes(diags):
    return sorted(d["code"] for d in diags)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n\n[tool.compile-lint]\nignore = ["CL508"]\n')
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


@pytest.fixture
def client(project):
    env = dict(os.environ)
    env.pop("COMPILE_LINT_NO_CACHE", None)
    c = LspClient(project, env)
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
        c.proc.wait()


def test_session(project, client):
    result = client.initialize(project, {"debounceMs": 50})
    caps = result["capabilities"]
    assert caps["codeActionProvider"] and caps["hoverProvider"]
    assert caps["textDocumentSync"]["change"] == 2  # incremental
    assert result["serverInfo"]["name"] == "compile-lint"

    # open models.py: its forward is traced in train.py, which is not open
    models = client.open(project / "models.py", MODELS)
    _, params = client.diagnostics_for(models, lambda d: codes(d) == ["CL101", "CL101"])
    first = params["diagnostics"][0]
    assert first["range"] == {"start": {"line": 7, "character": 38}, "end": {"line": 7, "character": 55}}
    assert first["source"] == "compile-lint" and first["severity"] == 2
    assert first["codeDescription"]["href"].endswith("/docs/rules/CL101.md")
    (related,) = first["relatedInformation"]  # where it is traced
    assert related["location"]["uri"] == uri(project / "train.py") and related["location"]["range"]["start"]["line"] == 3
    assert "traced by" in related["message"]

    # an unsaved change: a discarded torch.compile result
    edited = MODELS + "\nmodel = Up()\ntorch.compile(model)\n"
    client.change(models, edited, 2)
    _, params = client.diagnostics_for(models, lambda d: "CL503" in codes(d))
    assert params["version"] == 2
    cl503 = [d for d in params["diagnostics"] if d["code"] == "CL503"][0]
    assert cl503["range"]["start"] == {"line": 10, "character": 0}

    # code actions on that line: its safe fix (preferred), add noqa, fix all safe
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": models}, "range": cl503["range"], "context": {"diagnostics": [cl503]}})
    titles = [a["title"] for a in actions]
    fix = [a for a in actions if a["title"].startswith("CL503: assign")][0]
    assert fix["kind"] == "quickfix" and fix["isPreferred"] is True
    (edit,) = fix["edit"]["changes"][models]
    assert edit["newText"].startswith("model = ") and edit["range"]["start"]["line"] == 10
    noqa = [a for a in actions if "noqa" in a["title"]][0]
    assert noqa["edit"]["changes"][models][0]["newText"] == "torch.compile(model)  # noqa: CL503"
    fix_all = [a for a in actions if a["kind"] == "source.fixAll.compile-lint"][0]
    assert "fix all safe (3)" in fix_all["title"], titles
    (whole,) = fix_all["edit"]["changes"][models]
    assert "int(ref.shape[2])" not in apply_edit(edited, whole)
    assert "model = torch.compile(model)" in apply_edit(edited, whole)

    # hover on the diagnostic shows the rule's summary and page
    hover = client.request("textDocument/hover", {"textDocument": {"uri": models}, "position": {"line": 10, "character": 3}})
    assert "compile-result-discarded" in hover["contents"]["value"] and "CL503.md" in hover["contents"]["value"]

    # the noqa comment silences it
    client.change(models, apply_edit(edited, noqa["edit"]["changes"][models][0]), 3)
    client.diagnostics_for(models, lambda d: codes(d) == ["CL101", "CL101"])
    # hover on a code inside a noqa comment
    hover = client.request("textDocument/hover", {"textDocument": {"uri": models}, "position": {"line": 10, "character": 33}})
    assert "compile-result-discarded" in hover["contents"]["value"]

    # the file that sets up the region changes: the open dependant is linted again
    train = client.open(project / "train.py", TRAIN)
    client.diagnostics_for(train, lambda d: True)
    client.change(train, TRAIN_NO_TRACE, 2)
    client.diagnostics_for(models, lambda d: codes(d) == [])
    client.change(train, TRAIN, 3)
    client.diagnostics_for(models, lambda d: codes(d) == ["CL101", "CL101"])

    client.notify("textDocument/didClose", {"textDocument": {"uri": train}})
    assert client.close() == 0


def test_syntax_error_and_configuration(project, client):
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\n\n[tool.compile-lint]\nignore = ["CL5"]\n')
    client.initialize(project, {"debounceMs": 0})
    doc = client.open(project / "scratch.py", "import torch\ntorch.compile(m)\ndef broken(:\n")
    _, params = client.diagnostics_for(doc, lambda d: bool(d))
    (diag,) = params["diagnostics"]
    assert diag["code"] == "CL000" and diag["severity"] == 1
    client.change(doc, "import torch\ntorch.compile(m)\n", 2)
    client.diagnostics_for(doc, lambda d: d == [])  # CL503 is ignored by the project's config
    # the configuration changes on disk: the open buffer follows it
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri(project / "pyproject.toml"), "type": 2}]})
    client.diagnostics_for(doc, lambda d: codes(d) == ["CL503"])
    assert client.close() == 0


def test_unsafe_fix_is_marked(project, client):
    client.initialize(project, {"debounceMs": 0})
    text = "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.blocks = [nn.Conv2d(3, 3, 3) for _ in range(4)]\n"
    doc = client.open(project / "net.py", text)
    _, params = client.diagnostics_for(doc, lambda d: "CL201" in codes(d))
    diag = [d for d in params["diagnostics"] if d["code"] == "CL201"][0]
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": doc}, "range": diag["range"], "context": {"diagnostics": [diag]}})
    unsafe = [a for a in actions if a["title"].startswith("CL201:") and "noqa" not in a["title"]][0]
    assert unsafe["kind"] == "quickfix.unsafe" and not unsafe.get("isPreferred")
    assert "unsafe fix" in unsafe["title"]
    assert not [a for a in actions if a["kind"].startswith("source.fixAll")]  # nothing safe to fix
    assert client.close() == 0


def test_notebook_document(project, client):
    client.initialize(project, {"debounceMs": 0})
    nb = uri(project / "exp.ipynb")
    cells = [
        ("markdown", "# try compile"),
        ("python", "%matplotlib inline\nimport torch\nfrom models import Up"),
        ("python", "!nvidia-smi\nmodel = Up()\ntorch.compile(model)"),
    ]
    cell_uris = [f"vscode-notebook-cell:{project / 'exp.ipynb'}#cell{i}" for i in range(len(cells))]
    client.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": nb, "notebookType": "jupyter-notebook", "version": 1, "cells": [
            {"kind": 1 if lang == "markdown" else 2, "document": cell_uris[i]} for i, (lang, _) in enumerate(cells)]},
        "cellTextDocuments": [
            {"uri": cell_uris[i], "languageId": lang, "version": 1, "text": text} for i, (lang, text) in enumerate(cells)],
    })
    _, params = client.diagnostics_for(cell_uris[2], lambda d: bool(d))
    (diag,) = params["diagnostics"]
    assert diag["code"] == "CL503" and diag["range"]["start"] == {"line": 2, "character": 0}
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": cell_uris[2]}, "range": diag["range"], "context": {"diagnostics": [diag]}})
    fix = [a for a in actions if a["title"].startswith("CL503: assign")][0]
    (edit,) = fix["edit"]["changes"][cell_uris[2]]
    assert edit["range"]["start"]["line"] == 2 and edit["newText"].startswith("model = ")
    # a change to a cell's text
    client.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": nb, "version": 2},
        "change": {"cells": {"textContent": [{"document": {"uri": cell_uris[2], "version": 2}, "changes": [
            {"text": "!nvidia-smi\nmodel = torch.compile(Up())"}]}]}},
    })
    client.diagnostics_for(cell_uris[2], lambda d: d == [])
    assert client.close() == 0


def apply_edit(text: str, edit: dict) -> str:
    lines = text.splitlines(keepends=True)

    def offset(pos):
        return sum(len(l) for l in lines[:pos["line"]]) + pos["character"]

    start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
    return text[:start] + edit["newText"] + text[end:]


def test_regions_declared_in_the_configuration(project, client):
    """`traced = [...]` in the project's config makes a region the open file cannot show."""
    (project / "train.py").unlink()
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\n\n[tool.compile-lint]\ntraced = ["models:Up"]\n')
    _an_edit_on_disk_takes_the_region_away(project, client, project / "pyproject.toml", '[project]\nname = "demo"\n')


def _an_edit_on_disk_takes_the_region_away(project, client, changed, text):
    """models.py's Up is traced (two CL101) until `changed` is rewritten to `text` and the
    editor reports it; then the open buffer is linted again with no region."""
    client.initialize(project, {"debounceMs": 0})
    models = client.open(project / "models.py", MODELS)
    client.diagnostics_for(models, lambda d: codes(d) == ["CL101", "CL101"])
    changed.write_text(text)
    client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri(changed), "type": 2}]})
    client.diagnostics_for(models, lambda d: codes(d) == [])
    assert client.close() == 0


def test_a_yaml_configuration_that_names_the_model_moves_the_region(project, client):
    """The class a YAML entry names is what `instantiate_from_config(cfg.model)` traces
    (analysis/reach/configured.py); when the editor reports the YAML changed, the open
    model file is linted against the new region."""
    (project / "train.py").write_text(
        "import importlib\nimport torch\nfrom omegaconf import OmegaConf\n\n\n"
        "def instantiate_from_config(config):\n"
        "    module, cls = config[\"target\"].rsplit(\".\", 1)\n"
        "    return getattr(importlib.import_module(module), cls)()\n\n\n"
        "cfg = OmegaConf.load(\"m.yaml\")\n"
        "traced = torch.jit.trace(instantiate_from_config(cfg.model), (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16)))\n")
    (project / "m.yaml").write_text("model:\n  target: models.Up\n")
    _an_edit_on_disk_takes_the_region_away(project, client, project / "m.yaml", "model:\n  target: models.Other\n")


def _wait(predicate, timeout=60.0):
    import time

    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def editor(project, request):
    env = dict(os.environ)
    env.pop("COMPILE_LINT_NO_CACHE", None)
    c = LspClient(project, env, profile=request.param)
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
        c.proc.wait()


@pytest.mark.parametrize("editor", ["eglot"], indirect=True)
def test_eglot_session(project, editor):
    """Emacs eglot 1.9, as it speaks: its capabilities, incremental changes, and a glob
    parser that takes no `{a,b}`. On dd75348 the server registered `**/{*.py,...}`, which
    eglot refused with an error (a popup on every connect) and so never watched a file."""
    client = editor
    client.initialize(project, {"debounceMs": 0})
    assert _wait(lambda: client.server_requests), "no file-watch registration"
    (reg,) = client.server_requests
    assert reg["method"] == "client/registerCapability" and reg["error"] is None, reg
    globs = {w["globPattern"] for r in reg["params"]["registrations"] for w in r["registerOptions"]["watchers"]}
    assert {"**/*.py", "**/*.ipynb", "**/pyproject.toml", "**/compile-lint-regions.json", "**/*.yaml"} <= globs
    models = client.open(project / "models.py", MODELS)
    client.diagnostics_for(models, lambda d: codes(d) == ["CL101", "CL101"])
    # typing at the end of the buffer, as eglot sends it: a range and the new text
    end = MODELS.count("\n")
    client.change_range(models, (end, 0), (end, 0), "\nmodel = Up()\ntorch.compile(model)\n", 2)
    _, params = client.diagnostics_for(models, lambda d: "CL503" in codes(d))
    cl503 = [d for d in params["diagnostics"] if d["code"] == "CL503"][0]
    assert cl503["range"]["start"] == {"line": end + 2, "character": 0}
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": models}, "range": cl503["range"], "context": {"diagnostics": [cl503]}})
    fix = [a for a in actions if a["title"].startswith("CL503: assign")][0]
    assert fix["isPreferred"] and fix["edit"]["changes"][models][0]["newText"].startswith("model = ")
    # another program changes train.py on disk: eglot's file watch tells the server
    (project / "train.py").write_text(TRAIN_NO_TRACE)
    client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri(project / "train.py"), "type": 2}]})
    client.diagnostics_for(models, lambda d: codes(d) == ["CL503"])
    errors = [m for _, m in client.seen if m.get("method") == "window/showMessage" and m["params"]["type"] == 1]
    assert not errors, errors
    assert client.close() == 0


@pytest.mark.parametrize("editor", ["neovim"], indirect=True)
def test_neovim_session(project, editor):
    """Neovim 0.7's built-in client: no file watching to register, incremental changes,
    code actions and hover."""
    client = editor
    result = client.initialize(project, {"debounceMs": 0}, notebooks=False)
    assert result["capabilities"]["textDocumentSync"]["change"] == 2
    models = client.open(project / "models.py", MODELS)
    client.diagnostics_for(models, lambda d: codes(d) == ["CL101", "CL101"])
    # replace `int(ref.shape[2])` on line 8 by `ref.shape[2]`: both CL101 of that line go
    line = MODELS.splitlines()[7]
    start = line.index("int(ref.shape[2])")
    client.change_range(models, (7, start), (7, start + len("int(ref.shape[2])")), "ref.shape[2]", 2)
    _, params = client.diagnostics_for(models, lambda d: codes(d) == ["CL101"])
    diag = params["diagnostics"][0]
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": models}, "range": diag["range"], "context": {"diagnostics": [diag]}})
    fix = [a for a in actions if a["title"].startswith("CL101")][0]
    (edit,) = fix["edit"]["changes"][models]
    assert edit["newText"] == "" or "int(" not in edit["newText"]
    hover = client.request("textDocument/hover", {"textDocument": {"uri": models}, "position": diag["range"]["start"]})
    assert "CL101" in hover["contents"]["value"]
    assert not client.server_requests  # nothing registered with a client that cannot watch files
    assert client.close() == 0
