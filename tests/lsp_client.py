"""A small LSP client over a subprocess's stdio (JSON-RPC with Content-Length framing),
for the server's tests and bench/lsp_latency.py. No editor library: the bytes on the
pipe are what an editor sends and reads.

`profile` makes it speak as a given editor does (its capabilities, how it sends changes,
what it accepts from the server):
- "generic": whole-text changes, dynamic file watching, notebook documents;
- "eglot": Emacs eglot 1.9: incremental changes, dynamic file watching, and a
  `client/registerCapability` whose glob it cannot parse (eglot 1.9 takes `*`, `**`, `?`
  and literal text, not `{a,b}` nor `[...]`) answered with an error, as eglot does;
- "neovim": Neovim 0.7's built-in client: incremental changes, no file watching, no
  notebooks, code actions with `isPreferred` and `data`."""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path


def uri(path) -> str:
    return Path(path).resolve().as_uri()


EGLOT_GLOB = __import__("re").compile(r"[^{}\[\]]*")  # what eglot 1.9's glob parser takes


class LspClient:
    def __init__(self, cwd, env=None, profile: str = "generic"):
        assert profile in ("generic", "eglot", "neovim")
        self.profile = profile
        self.started = time.perf_counter()
        self.server_requests: list[dict] = []  # requests from the server, as answered: {"method", "params", "error"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "compile_lint", "server"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=str(cwd), env=env or os.environ.copy(),
        )
        self.next_id = 0
        self.responses: dict[int, dict] = {}
        self.notifications: "queue.Queue[tuple[float, dict]]" = queue.Queue()
        self.seen: list[tuple[float, dict]] = []
        self.lock = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.stderr_lines: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # -- wire ---------------------------------------------------------------------------
    def _send(self, message: dict) -> float:
        body = json.dumps(message).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return time.perf_counter()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value.strip())
            body = out.read(length)
            message = json.loads(body)
            now = time.perf_counter()
            if "id" in message and "method" not in message:
                with self.lock:
                    self.responses[message["id"]] = message
                    self.lock.notify_all()
            elif "id" in message:  # a request from the server (e.g. registerCapability)
                error = self._refuse(message)
                self.server_requests.append({"method": message["method"], "params": message.get("params"), "error": error})
                if error is not None:
                    self._send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": error}})
                else:
                    self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            else:
                self.notifications.put((now, message))

    def _refuse(self, message: dict):
        """Why this editor would answer a server request with an error (None: it takes it)."""
        if self.profile == "eglot" and message["method"] == "client/registerCapability":
            for reg in message["params"]["registrations"]:
                for watcher in (reg.get("registerOptions") or {}).get("watchers", ()):
                    glob = watcher["globPattern"]
                    if not isinstance(glob, str) or not EGLOT_GLOB.fullmatch(glob):
                        return f"eglot--glob-parse: Invalid glob {glob!r}"
        return None

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr_lines.append(line.decode("utf-8", errors="replace"))

    # -- API ----------------------------------------------------------------------------
    def request(self, method: str, params, timeout: float = 120):
        self.next_id += 1
        rid = self.next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.time() + timeout
        with self.lock:
            while rid not in self.responses:
                left = deadline - time.time()
                if left <= 0:
                    raise TimeoutError(f"no answer to {method}; server stderr:\n{''.join(self.stderr_lines)}")
                self.lock.wait(left)
            message = self.responses.pop(rid)
        if "error" in message:
            raise RuntimeError(f"{method}: {message['error']}")
        return message.get("result")

    def notify(self, method: str, params) -> float:
        return self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(self, method: str, predicate=lambda params: True, timeout: float = 120):
        """The next notification `method` whose params satisfy `predicate`: (time, params)."""
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError(f"no {method} matching; server stderr:\n{''.join(self.stderr_lines)}")
            try:
                at, message = self.notifications.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append((at, message))
            if message.get("method") == method and predicate(message.get("params")):
                return at, message["params"]

    def diagnostics_for(self, doc_uri: str, predicate=lambda diags: True, timeout: float = 120):
        return self.wait_for(
            "textDocument/publishDiagnostics",
            lambda p: p["uri"] == doc_uri and predicate(p["diagnostics"]),
            timeout,
        )

    def capabilities(self, notebooks: bool) -> dict:
        if self.profile == "eglot":  # eglot 1.9's eglot-client-capabilities
            return {
                "workspace": {"applyEdit": True, "executeCommand": {"dynamicRegistration": False},
                              "workspaceEdit": {"documentChanges": True},
                              "didChangeWatchedFiles": {"dynamicRegistration": True},
                              "symbol": {"dynamicRegistration": False}, "configuration": True, "workspaceFolders": True},
                "textDocument": {
                    "synchronization": {"dynamicRegistration": False, "willSave": True, "willSaveWaitUntil": True, "didSave": True},
                    "hover": {"dynamicRegistration": False, "contentFormat": ["markdown", "plaintext"]},
                    "codeAction": {"dynamicRegistration": False, "isPreferredSupport": True, "codeActionLiteralSupport": {
                        "codeActionKind": {"valueSet": ["quickfix", "refactor", "refactor.extract", "refactor.inline",
                                                        "refactor.rewrite", "source", "source.organizeImports"]}}},
                    "publishDiagnostics": {"relatedInformation": False, "codeDescriptionSupport": False,
                                           "tagSupport": {"valueSet": [1, 2]}}},
                "experimental": {},
            }
        if self.profile == "neovim":  # Neovim 0.7's make_client_capabilities(), the parts that matter here
            return {
                "workspace": {"applyEdit": True, "workspaceFolders": True, "configuration": True,
                              "workspaceEdit": {"resourceOperations": ["rename", "create", "delete"]}},
                "textDocument": {
                    "synchronization": {"dynamicRegistration": False, "willSave": False, "willSaveWaitUntil": False, "didSave": True},
                    "hover": {"dynamicRegistration": False, "contentFormat": ["markdown", "plaintext"]},
                    "codeAction": {"dynamicRegistration": False, "isPreferredSupport": True, "dataSupport": True,
                                   "resolveSupport": {"properties": ["edit"]}, "codeActionLiteralSupport": {
                                       "codeActionKind": {"valueSet": ["", "quickfix", "refactor", "refactor.extract",
                                                                       "refactor.inline", "refactor.rewrite", "source",
                                                                       "source.organizeImports"]}}},
                    "publishDiagnostics": {"relatedInformation": True, "tagSupport": {"valueSet": [1, 2]}}},
                "window": {"workDoneProgress": True, "showMessage": {"messageActionItem": {"additionalPropertiesSupport": False}}},
            }
        caps = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}},
                "textDocument": {"publishDiagnostics": {"versionSupport": True}, "codeAction": {
            "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source.fixAll"]}}},
            "hover": {"contentFormat": ["markdown"]}}}
        if notebooks:
            caps["notebookDocument"] = {"synchronization": {}}
        return caps

    def initialize(self, root, options=None, notebooks=True):
        result = self.request("initialize", {
            "processId": os.getpid(), "rootUri": uri(root), "capabilities": self.capabilities(notebooks),
            "initializationOptions": options or {}, "workspaceFolders": [{"uri": uri(root), "name": "project"}],
        })
        self.notify("initialized", {})
        if self.profile == "eglot":  # eglot sends its (empty) settings right after
            self.notify("workspace/didChangeConfiguration", {"settings": None})
        return result

    def open(self, path, text: str, version: int = 1) -> str:
        doc = uri(path)
        self.notify("textDocument/didOpen", {"textDocument": {"uri": doc, "languageId": "python", "version": version, "text": text}})
        return doc

    def change(self, doc: str, text: str, version: int) -> float:
        return self.notify("textDocument/didChange", {
            "textDocument": {"uri": doc, "version": version}, "contentChanges": [{"text": text}]})

    def change_range(self, doc: str, start: tuple[int, int], end: tuple[int, int], text: str, version: int) -> float:
        """An incremental change, as eglot and Neovim send them: (line, UTF-16 character)
        of the replaced range, and the text put there."""
        return self.notify("textDocument/didChange", {
            "textDocument": {"uri": doc, "version": version}, "contentChanges": [{
                "range": {"start": {"line": start[0], "character": start[1]}, "end": {"line": end[0], "character": end[1]}},
                "text": text}]})

    def close(self) -> int:
        """shutdown + exit, as an editor ends a session; the server's exit code."""
        try:
            self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
