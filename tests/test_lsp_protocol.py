"""The server's own protocol layer (compile_lint/lsp/protocol.py): positions in the
client's code units, incremental text changes, notebook structure changes, and the
JSON-RPC rules a client relies on (errors for unknown methods and early requests,
exit codes)."""
import os

import pytest

from compile_lint.lsp.protocol import UTF8, UTF16, UTF32, PositionCodec, TextDocument, Workspace, choose_encoding
from lsp_client import LspClient, uri


@pytest.mark.parametrize("encoding,units", [(UTF16, 6), (UTF8, 9), (UTF32, 5)])
def test_columns_in_the_clients_units(encoding, units):
    codec = PositionCodec(encoding)
    line = "a😀é = 1"  # a character outside the BMP (2 UTF-16 units, 4 UTF-8 bytes), one of 2 bytes
    index = line.index("=")  # 4 code points in
    assert codec.to_client(line, index + 1) == units
    assert codec.from_client(line, units) == index + 1
    assert codec.from_client(line, 10_000) == len(line)  # past the end: the end


def test_encoding_follows_the_clients_preference():
    assert choose_encoding({}) == UTF16
    assert choose_encoding({"general": {"positionEncodings": ["utf-32", "utf-16"]}}) == UTF32
    assert choose_encoding({"general": {"positionEncodings": ["utf-7", "utf-8"]}}) == UTF8


def test_incremental_changes_in_utf16_and_crlf():
    codec = PositionCodec(UTF16)
    doc = TextDocument("file:///m.py", "x = '😀'\r\ny = 2\rz = 3\n")
    # replace `2` on line 1 (after a CRLF line), then insert after the emoji on line 0
    doc.apply(codec, {"range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 5}}, "text": "20"})
    doc.apply(codec, {"range": {"start": {"line": 0, "character": 7}, "end": {"line": 0, "character": 7}}, "text": "!"})
    assert doc.text == "x = '😀!'\r\ny = 20\rz = 3\n"
    # a line past the end appends; a whole-text change replaces
    doc.apply(codec, {"range": {"start": {"line": 9, "character": 0}, "end": {"line": 9, "character": 0}}, "text": "w = 4\n"})
    assert doc.text.endswith("z = 3\nw = 4\n")
    doc.apply(codec, {"text": "new\n"})
    assert doc.text == "new\n" and doc.lines == ["new\n"]


def test_notebook_cells_added_removed_and_edited():
    ws = Workspace()
    ws.open_notebook({
        "notebookDocument": {"uri": "file:///nb.ipynb", "notebookType": "jupyter-notebook", "version": 1,
                             "cells": [{"kind": 2, "document": "cell:a"}, {"kind": 2, "document": "cell:b"}]},
        "cellTextDocuments": [{"uri": "cell:a", "languageId": "python", "version": 1, "text": "a = 1"},
                              {"uri": "cell:b", "languageId": "python", "version": 1, "text": "b = 2"}],
    })
    nb = ws.change_notebook({
        "notebookDocument": {"uri": "file:///nb.ipynb", "version": 2},
        "change": {"cells": {
            "structure": {"array": {"start": 1, "deleteCount": 1, "cells": [{"kind": 1, "document": "cell:m"},
                                                                          {"kind": 2, "document": "cell:c"}]},
                          "didOpen": [{"uri": "cell:m", "languageId": "markdown", "version": 1, "text": "# hi"},
                                      {"uri": "cell:c", "languageId": "python", "version": 1, "text": "c = 3"}],
                          "didClose": [{"uri": "cell:b"}]},
            "textContent": [{"document": {"uri": "cell:a", "version": 2}, "changes": [{"text": "a = 10"}]}],
        }},
    })
    assert [c.document for c in nb.cells] == ["cell:a", "cell:m", "cell:c"] and nb.version == 2
    assert ws.get_text_document("cell:a").text == "a = 10"
    assert "cell:b" not in ws.documents
    assert ws.get_notebook_document(cell_uri="cell:c") is nb
    ws.close_notebook({"notebookDocument": {"uri": "file:///nb.ipynb"}})
    assert not ws.notebooks and not ws.documents


@pytest.fixture
def client(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    env = dict(os.environ)
    env.pop("COMPILE_LINT_NO_CACHE", None)
    c = LspClient(tmp_path, env)
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
        c.proc.wait()


def test_jsonrpc_errors_and_exit_codes(tmp_path, client):
    with pytest.raises(RuntimeError, match="-32002"):  # before initialize
        client.request("textDocument/hover", {"textDocument": {"uri": uri(tmp_path / "m.py")}, "position": {"line": 0, "character": 0}})
    client.initialize(tmp_path, {"debounceMs": 0})
    with pytest.raises(RuntimeError, match="-32601"):
        client.request("textDocument/completion", {"textDocument": {"uri": uri(tmp_path / "m.py")}, "position": {"line": 0, "character": 0}})
    client.notify("$/cancelRequest", {"id": 99})  # ignored
    client.notify("workspace/didChangeConfiguration", {"settings": None})  # not read
    doc = client.open(tmp_path / "m.py", "import torch\nx = '😀'; torch.compile(m)\n")
    _, params = client.diagnostics_for(doc, lambda d: bool(d))
    (diag,) = params["diagnostics"]
    # UTF-16 columns: the emoji counts twice
    assert diag["code"] == "CL503" and diag["range"]["start"] == {"line": 1, "character": 10}
    assert client.close() == 0


def test_exit_without_shutdown_is_an_error(tmp_path, client):
    client.initialize(tmp_path, {})
    client.notify("exit", None)
    assert client.proc.wait(timeout=30) == 1
