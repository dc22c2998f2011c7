"""The Language Server Protocol's plumbing, written for this server: JSON-RPC 2.0 over
stdio with Content-Length framing, the open text and notebook documents, and position
encodings. Messages are the protocol's JSON (dicts), never classes.

Why not pygls + lsprotocol: importing them took ~0.5 s of CPU (lsprotocol.types builds
~900 attrs classes, compiling their methods), about three quarters of the time from
spawn to first diagnostics, and publishing went through cattrs for every diagnostic.
What this server uses of the protocol is small: text document sync (full and
incremental), notebook document sync, publishDiagnostics, codeAction, hover, file
watching, showMessage.

One thread reads stdin and queues messages; the server's loop takes them in order and
runs the callbacks it scheduled (debounced lints, the index build's completion) when
they are due. Nothing here imports asyncio.
"""
from __future__ import annotations

import json
import logging
import queue
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..fix_edits import split_lines

log = logging.getLogger("compile_lint.lsp")

# JSON-RPC error codes
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
SERVER_NOT_INITIALIZED, REQUEST_CANCELLED = -32002, -32800

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


class ResponseError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


# -- positions ------------------------------------------------------------------------
class PositionCodec:
    """Columns in the client's code units (UTF-16 unless negotiated) <-> Python string
    indices (code points), per line of text."""

    def __init__(self, encoding: str = UTF16):
        self.encoding = encoding

    def _units(self, text: str) -> int:
        if self.encoding == UTF32 or text.isascii():
            return len(text)
        if self.encoding == UTF16:
            return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
        return len(text.encode("utf-8", errors="surrogatepass"))

    def to_client(self, line_text: str, character: int) -> int:
        """The client column of a code point index in a line."""
        if self.encoding == UTF32 or line_text.isascii():
            return character
        return self._units(line_text[:character])

    def from_client(self, line_text: str, units: int) -> int:
        """The code point index of a client column in a line (past the end: its end)."""
        if self.encoding == UTF32 or line_text.isascii():
            return min(units, len(line_text))
        count = 0
        for index, ch in enumerate(line_text):
            if count >= units:
                return index
            if self.encoding == UTF16:
                count += 2 if ord(ch) > 0xFFFF else 1
            else:
                count += len(ch.encode("utf-8", errors="surrogatepass"))
        return len(line_text)

    # the forms documents.py uses: a position dict against a document's lines
    def position_to_client_units(self, lines: list[str], line: int, character: int) -> dict:
        text = lines[line].rstrip("\r\n") if line < len(lines) else ""
        return {"line": line, "character": self.to_client(text, character)}

    def position_from_client_units(self, lines: list[str], position: dict) -> dict:
        line = position["line"]
        text = lines[line].rstrip("\r\n") if 0 <= line < len(lines) else ""
        return {"line": line, "character": self.from_client(text, position["character"])}


def choose_encoding(capabilities: dict) -> str:
    """The client's first preference among the encodings supported; UTF-16 when it
    names none (the protocol's default, which every client supports)."""
    offered = ((capabilities or {}).get("general") or {}).get("positionEncodings") or []
    for encoding in offered:
        if encoding in (UTF8, UTF16, UTF32):
            return encoding
    return UTF16


# -- documents -------------------------------------------------------------------------
@dataclass
class TextDocument:
    uri: str
    text: str
    version: Optional[int] = None
    language_id: Optional[str] = None
    _lines: Optional[tuple] = field(default=None, repr=False)  # (text they split, lines)
    _starts: Optional[tuple] = field(default=None, repr=False)  # (text, offset of each line)

    @property
    def lines(self) -> list[str]:
        """Lines with their endings, split at \\n, \\r\\n and \\r (the protocol's line ends)."""
        if self._lines is None or self._lines[0] is not self.text:
            self._lines = (self.text, split_lines(self.text))
        return self._lines[1]

    def offset(self, codec: PositionCodec, position: dict) -> int:
        """The string index of a protocol position (clamped to the text)."""
        lines = self.lines
        line = position.get("line", 0)
        if line < 0:
            return 0
        if line >= len(lines):
            return len(self.text)
        body = lines[line].rstrip("\r\n")
        return self._line_start(line) + codec.from_client(body, max(0, position.get("character", 0)))

    def _line_start(self, line: int) -> int:
        if self._starts is None or self._starts[0] is not self.text:
            at, out = 0, []
            for text in self.lines:
                out.append(at)
                at += len(text)
            self._starts = (self.text, out)
        return self._starts[1][line]

    def apply(self, codec: PositionCodec, change: dict) -> None:
        """One TextDocumentContentChangeEvent: the whole text, or a range replaced."""
        rng = change.get("range")
        if rng is None:
            self.text = change["text"]
            return
        start, end = self.offset(codec, rng["start"]), self.offset(codec, rng["end"])
        if end < start:
            start, end = end, start
        self.text = self.text[:start] + change["text"] + self.text[end:]


@dataclass
class NotebookCell:
    kind: int  # 1 markup, 2 code
    document: str  # the cell's text document uri


@dataclass
class NotebookDocument:
    uri: str
    notebook_type: str
    version: Optional[int]
    cells: list[NotebookCell]


class Workspace:
    """The open documents, as the client has them."""

    def __init__(self):
        self.codec = PositionCodec(UTF16)
        self.documents: dict[str, TextDocument] = {}
        self.notebooks: dict[str, NotebookDocument] = {}

    @property
    def position_codec(self) -> PositionCodec:
        return self.codec

    def get_text_document(self, uri: str) -> TextDocument:
        found = self.documents.get(uri)
        return found if found is not None else TextDocument(uri, "")

    def open_text(self, item: dict) -> TextDocument:
        doc = TextDocument(item["uri"], item.get("text", ""), item.get("version"), item.get("languageId"))
        self.documents[doc.uri] = doc
        return doc

    def change_text(self, identifier: dict, changes: list) -> Optional[TextDocument]:
        doc = self.documents.get(identifier["uri"])
        if doc is None:
            return None
        for change in changes or ():
            doc.apply(self.codec, change)
        doc.version = identifier.get("version", doc.version)
        return doc

    def close_text(self, uri: str) -> None:
        self.documents.pop(uri, None)

    # notebooks
    def get_notebook_document(self, notebook_uri: Optional[str] = None, cell_uri: Optional[str] = None) -> Optional[NotebookDocument]:
        if notebook_uri is not None:
            return self.notebooks.get(notebook_uri)
        for notebook in self.notebooks.values():
            if any(cell.document == cell_uri for cell in notebook.cells):
                return notebook
        return None

    def open_notebook(self, params: dict) -> NotebookDocument:
        nb = params["notebookDocument"]
        notebook = NotebookDocument(nb["uri"], nb.get("notebookType", ""), nb.get("version"),
                                    [NotebookCell(c.get("kind", 2), c["document"]) for c in nb.get("cells", [])])
        self.notebooks[notebook.uri] = notebook
        for item in params.get("cellTextDocuments", []):
            self.open_text(item)
        return notebook

    def change_notebook(self, params: dict) -> Optional[NotebookDocument]:
        notebook = self.notebooks.get(params["notebookDocument"]["uri"])
        if notebook is None:
            return None
        notebook.version = params["notebookDocument"].get("version", notebook.version)
        cells = ((params.get("change") or {}).get("cells")) or {}
        structure = cells.get("structure")
        if structure:
            array = structure.get("array") or {}
            start, delete = array.get("start", 0), array.get("deleteCount", 0)
            new = [NotebookCell(c.get("kind", 2), c["document"]) for c in array.get("cells") or []]
            notebook.cells[start:start + delete] = new
            for item in structure.get("didOpen") or []:
                self.open_text(item)
            for item in structure.get("didClose") or []:
                self.close_text(item["uri"])
        for data in cells.get("data") or []:
            for cell in notebook.cells:
                if cell.document == data["document"]:
                    cell.kind = data.get("kind", cell.kind)
        for content in cells.get("textContent") or []:
            self.change_text(content["document"], content.get("changes") or [])
        return notebook

    def close_notebook(self, params: dict) -> None:
        notebook = self.notebooks.pop(params["notebookDocument"]["uri"], None)
        for item in params.get("cellTextDocuments") or []:
            self.close_text(item["uri"])
        if notebook is not None:
            for cell in notebook.cells:
                self.close_text(cell.document)


# -- the connection ---------------------------------------------------------------------
_EOF = object()


class Connection:
    """Messages in (a reader thread, queued) and out (written whole, under a lock)."""

    def __init__(self, rfile=None, wfile=None):
        self.rfile = rfile if rfile is not None else sys.stdin.buffer
        self.wfile = wfile if wfile is not None else sys.stdout.buffer
        self.inbox: "queue.Queue" = queue.Queue()
        self._write = threading.Lock()
        self._next_id = 0
        self.pending: dict = {}  # id of a request we sent -> its method (answers are logged)

    def start(self) -> None:
        threading.Thread(target=self._read, name="lsp-reader", daemon=True).start()

    def _read(self) -> None:
        read, readline = self.rfile.read, self.rfile.readline
        try:
            while True:
                length = None
                while True:
                    line = readline()
                    if not line:
                        self.inbox.put(_EOF)
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode("ascii", errors="replace").partition(":")
                    if name.strip().lower() == "content-length":
                        try:
                            length = int(value.strip())
                        except ValueError:
                            length = None
                if length is None:
                    continue  # a header block without a length: nothing to read
                body = read(length)
                if len(body) < length:
                    self.inbox.put(_EOF)
                    return
                try:
                    message = json.loads(body)
                except ValueError:
                    self.send({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "not JSON"}})
                    continue
                self.inbox.put(message)
        except (OSError, ValueError):
            self.inbox.put(_EOF)

    def send(self, message: dict) -> None:
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8", errors="surrogatepass")
        with self._write:
            self.wfile.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.wfile.flush()

    def notify(self, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params) -> None:
        """A request to the client; its answer is only logged when it is an error."""
        self._next_id += 1
        rid = f"compile-lint-{self._next_id}"
        self.pending[rid] = method
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


class Loop:
    """The server's one thread: messages in order, and callbacks when they are due."""

    def __init__(self, connection: Connection, handle: Callable[[dict], None]):
        self.connection = connection
        self.handle = handle
        self._timers: list = []  # [when, seq, callback, cancelled] sorted by when
        self._seq = 0
        self.running = True

    def call_later(self, delay: float, callback: Callable[[], None]) -> list:
        self._seq += 1
        timer = [time.monotonic() + delay, self._seq, callback, False]
        self._timers.append(timer)
        self._timers.sort(key=lambda t: (t[0], t[1]))
        return timer

    def call_soon_threadsafe(self, callback: Callable[[], None]) -> None:
        """From another thread: run `callback` on the loop's thread."""
        self.connection.inbox.put(("call", callback))

    @staticmethod
    def cancel(timer: list) -> None:
        timer[3] = True

    def run(self) -> None:
        inbox = self.connection.inbox
        while self.running:
            self._timers = [t for t in self._timers if not t[3]]
            timeout = max(0.0, self._timers[0][0] - time.monotonic()) if self._timers else None
            try:
                item = inbox.get(timeout=timeout)
            except queue.Empty:
                item = None
            while item is not None:
                if item is _EOF:
                    self.running = False
                    return
                if isinstance(item, tuple):
                    self._guard(item[1])
                else:
                    self.handle(item)
                if not self.running:
                    return
                try:  # everything already queued comes before a due lint: a burst of keystrokes is one lint
                    item = inbox.get_nowait()
                except queue.Empty:
                    item = None
            now = time.monotonic()
            while self._timers and self._timers[0][0] <= now:
                timer = self._timers.pop(0)
                if not timer[3]:
                    self._guard(timer[2])

    @staticmethod
    def _guard(callback) -> None:
        try:
            callback()
        except Exception:
            log.exception("compile-lint server: a scheduled task failed")
