"""`compile-lint server`: the Language Server Protocol on stdio (lsp/protocol.py).

- diagnostics for open files and notebooks: on open and save at once, on change
  (the unsaved text) after a short debounce; each with its rule code, a link to the
  rule page and a severity (CL000 an error, the rest warnings)
- code actions: each finding's fix (safe: a preferred quick fix; unsafe: marked so in
  its title), "fix all safe" (also as `source.fixAll.compile-lint`), "add noqa"
- hover on a rule code (a diagnostic, or `CL503` in a `# noqa` comment): its summary
- the project's configuration (the closest compile-lint.toml / pyproject.toml) and
  results cache; the buffer is linted against the region index of its whole project
  (lsp/project.py), and when an edit changes that index the other open buffers whose
  findings read the changed facts are linted again

initializationOptions (all optional): {"debounceMs": 250, "cache": true}.

Start-up is what an editor waits for: `initialize` is answered before the linting
machinery is imported (documents.py, project.py: on the first lint), and the project's
index is built in the background only after the first buffer's diagnostics are out, so
that the first lint does not share the interpreter with the build.
"""
from __future__ import annotations

import gc
import logging
import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Callable, Optional
from urllib.parse import unquote, urlparse

from .. import __version__
from ..config import ConfigError
from .. import deep_stack
from ..notebook import from_cells
from ..project_root import find_project_root
from . import FIX_ALL_KIND
from .protocol import (INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, SERVER_NOT_INITIALIZED, Connection, Loop,
                       PositionCodec, ResponseError, Workspace, choose_encoding)

if TYPE_CHECKING:
    from .documents import Linted
    from .project import ProjectContext

log = logging.getLogger("compile_lint.lsp")
STARTED = time.perf_counter()  # (the server's own start, for compile-lint/timings)

ERROR, WARNING = 1, 2  # MessageType
CODE_CELL = 2  # NotebookCellKind.Code
QUICK_FIX = "quickfix"


def _docs():
    """lsp/documents.py, imported on first use (it imports the linting machinery)."""
    from . import documents

    return documents


def path_of(uri: str) -> Optional[str]:
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        return None
    return os.path.abspath(unquote(parsed.path))


class CompileLintServer:
    def __init__(self):
        self.workspace = Workspace()
        self.connection: Optional[Connection] = None
        self.loop: Optional[Loop] = None
        self.client_capabilities: dict = {}
        self.initialized = False
        self.shutdown_requested = False
        self.exit_code: Optional[int] = None
        self.debounce = 0.25
        self.jobs = 1  # see ProjectContext.jobs
        self.use_cache = not os.environ.get("COMPILE_LINT_NO_CACHE")
        self.projects: dict[Optional[str], ProjectContext] = {}
        self.linted: dict[str, Linted] = {}  # text or notebook document uri -> its last lint
        self.pending: dict[str, list] = {}  # uri -> the loop's timer of its debounced lint
        self.timings: list[dict] = []  # per lint: wall and CPU seconds (compile-lint/timings)
        self.first_publish: Optional[dict] = None  # when the first diagnostics went out

    # -- the protocol ---------------------------------------------------------------------
    def start(self, connection: Connection) -> int:
        self.connection = connection
        self.loop = Loop(connection, self.handle)
        connection.start()
        self.loop.run()
        return self.exit_code if self.exit_code is not None else (0 if self.shutdown_requested else 1)

    def handle(self, message: dict) -> None:
        method, mid = message.get("method"), message.get("id")
        if method is None:  # the client's answer to a request of ours
            asked = self.connection.pending.pop(mid, None)
            if "error" in message:
                log.warning("the client refused %s: %s", asked, message["error"].get("message"))
            return
        params = message.get("params")
        if mid is None:
            self._notification(method, params)
            return
        try:
            if method != "initialize" and not self.initialized:
                raise ResponseError(SERVER_NOT_INITIALIZED, "initialize first")
            if self.shutdown_requested and method != "shutdown":
                raise ResponseError(INVALID_REQUEST, "the server is shutting down")
            handler = REQUESTS.get(method)
            if handler is None:
                raise ResponseError(METHOD_NOT_FOUND, f"unknown method {method}")
            result = handler(self, params)
            self.connection.send({"jsonrpc": "2.0", "id": mid, "result": result})
        except ResponseError as exc:
            self.connection.send({"jsonrpc": "2.0", "id": mid, "error": {"code": exc.code, "message": str(exc)}})
        except Exception as exc:
            log.exception("%s failed", method)
            self.connection.send({"jsonrpc": "2.0", "id": mid, "error": {
                "code": INTERNAL_ERROR, "message": f"{type(exc).__name__}: {exc}"}})

    def _notification(self, method: str, params) -> None:
        if method == "exit":
            self.exit_code = 0 if self.shutdown_requested else 1
            self.loop.running = False
            return
        handler = NOTIFICATIONS.get(method)
        if handler is None or not self.initialized:
            return  # `$/cancelRequest`, `$/setTrace`, settings we do not read: nothing to do
        try:
            handler(self, params)
        except Exception:
            log.exception("%s failed", method)

    @property
    def codec(self) -> PositionCodec:
        return self.workspace.codec

    def show_message(self, kind: int, message: str) -> None:
        self.connection.notify("window/showMessage", {"type": kind, "message": message})

    # -- projects -------------------------------------------------------------------------
    @staticmethod
    def root_of(path: str) -> Optional[str]:
        try:
            return find_project_root(path, _settings(path))
        except ConfigError:
            return find_project_root(path)

    def project_for(self, path: str) -> ProjectContext:
        """The project's context; its index is built (in the background) once a buffer of
        it has been linted and published (lint_and_publish)."""
        from .project import ProjectContext

        root = self.root_of(path)
        context = self.projects.get(root)
        if context is None:
            context = self.projects[root] = ProjectContext(root, use_cache=self.use_cache, jobs=self.jobs)
        return context

    def start_build(self, context: ProjectContext) -> None:
        if not getattr(context, "build_started", False):
            context.build_started = True
            threading.Thread(target=self._build, args=(context,), name="compile-lint-index", daemon=True).start()

    def _build(self, context: ProjectContext) -> None:
        """(in its own thread) The project's index; then, on the loop's thread, the open
        buffers of the project linted against it."""
        started = time.perf_counter()
        problem = None
        try:
            context.build()
        except Exception as exc:  # the buffers are still linted, each on its own
            log.exception("building the project index failed")
            problem = f"compile-lint: project index: {exc}"
            context.ready = True
        context.stats["build_s"] = round(time.perf_counter() - started, 3)
        log.info("project %s indexed in %.2fs: %s", context.root, context.stats["build_s"], context.stats)
        self.loop.call_soon_threadsafe(lambda: self._built(context, problem))

    def _built(self, context: ProjectContext, problem: Optional[str]) -> None:
        if problem is not None:
            self.show_message(WARNING, problem)
        gc.freeze()  # the summaries live as long as the server: keep them out of GC sweeps
        for linted in list(self.linted.values()):
            if context.contains(linted.path) or context.root is None:
                self.lint_and_publish(linted)

    # -- linting --------------------------------------------------------------------------
    def lint_and_publish(self, linted: Linted) -> None:
        context = self.project_for(linted.path)
        started, cpu = time.perf_counter(), time.thread_time()
        # no cyclic GC while linting: collections would walk the project's summaries
        # and the fresh trees (as the workers of `check` do, see parallel.GC_EVERY)
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            changed = deep_stack.call(_docs().lint, context, linted)  # (a deeply nested buffer: deep_stack.py)
        except ConfigError as exc:
            self.show_message(ERROR, f"compile-lint: {exc}")
            return
        finally:
            if gc_was_on:
                gc.enable()
        linted_at = time.perf_counter()
        self.publish(linted)
        if self.first_publish is None:
            self.first_publish = {"wall_s": round(time.perf_counter() - STARTED, 3), "cpu_s": round(time.process_time(), 3)}
        self.start_build(context)
        if changed:
            self.relint_dependants(linted, context)
        self.timings.append({
            "path": linted.path, "version": linted.version, "index_changed": changed,
            "lint_s": round(linted_at - started, 4), "total_s": round(time.perf_counter() - started, 4),
            "cpu_s": round(time.thread_time() - cpu, 4), **linted.how,
        })

    def publish(self, linted: Linted) -> None:
        for uri, diagnostics in _docs().diagnostics_by_uri(self.codec, linted).items():
            params = {"uri": uri, "diagnostics": diagnostics}
            if linted.notebook is None and linted.version is not None:
                params["version"] = linted.version
            self.connection.notify("textDocument/publishDiagnostics", params)

    def relint_dependants(self, changed: Linted, context: ProjectContext) -> None:
        """Other open buffers whose findings read region facts the edit changed."""
        digests = context.digests(context.regions)
        for other in list(self.linted.values()):
            if other is changed or not (context.contains(other.path) or context.root is None):
                continue
            if not _docs().still_holds(other, digests):
                _docs().lint(context, other)
                self.publish(other)

    def schedule(self, linted: Linted, delay: float) -> None:
        timer = self.pending.pop(linted.uri, None)
        if timer is not None:
            Loop.cancel(timer)
        if delay <= 0:
            self.lint_and_publish(linted)
            return

        def later():
            self.pending.pop(linted.uri, None)
            self.lint_and_publish(linted)

        self.pending[linted.uri] = self.loop.call_later(delay, later)

    # -- buffers ------------------------------------------------------------------------
    def text_buffer(self, uri: str) -> Optional[Linted]:
        path = path_of(uri)
        if path is None or not path.endswith((".py", ".pyi")):
            return None
        doc = self.workspace.get_text_document(uri)
        linted = self.linted.get(uri)
        if linted is None:
            linted = self.linted[uri] = _docs().Linted(uri, path, b"", doc.version)
        linted.code = doc.text.encode("utf-8", errors="surrogatepass")
        linted.version = doc.version
        return linted

    def notebook_buffer(self, uri: str) -> Optional[Linted]:
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        path = path_of(uri)
        if notebook is None or path is None:
            return None
        cells, uris = [], []
        for index, cell in enumerate(notebook.cells):
            if cell.kind != CODE_CELL:
                continue
            doc = self.workspace.get_text_document(cell.document)
            if doc.language_id not in (None, "python"):
                continue
            cells.append((index, doc.text))
            uris.append(cell.document)
        nb = from_cells(path, cells)
        linted = self.linted.get(uri)
        if linted is None:
            linted = self.linted[uri] = _docs().Linted(uri, path, b"", notebook.version)
        linted.notebook, linted.cell_uris, linted.version = nb, uris, notebook.version
        linted.code = nb.code.encode("utf-8", errors="surrogatepass")
        return linted

    def linted_for(self, uri: str) -> Optional[Linted]:
        """The buffer a text or cell document belongs to."""
        if uri in self.linted:
            return self.linted[uri]
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return self.linted.get(notebook.uri) if notebook is not None else None

    def forget(self, uri: str) -> None:
        timer = self.pending.pop(uri, None)
        if timer is not None:
            Loop.cancel(timer)
        linted = self.linted.pop(uri, None)
        if linted is None:
            return
        for place in linted.places():
            self.connection.notify("textDocument/publishDiagnostics", {"uri": place.uri, "diagnostics": []})
        context = self.projects.get(self.root_of(linted.path))
        if context is not None and context.close(linted.path):
            self.relint_dependants(linted, context)


def _settings(path: str):
    from ..config import load_config_for

    return load_config_for(path)


REQUESTS: dict[str, Callable] = {}
NOTIFICATIONS: dict[str, Callable] = {}


def request(method: str):
    def register(func):
        REQUESTS[method] = func
        return func
    return register


def notification(method: str):
    def register(func):
        NOTIFICATIONS[method] = func
        return func
    return register


@request("initialize")
def initialize(ls: CompileLintServer, params: dict) -> dict:
    params = params or {}
    ls.client_capabilities = params.get("capabilities") or {}
    encoding = choose_encoding(ls.client_capabilities)
    ls.workspace.codec = PositionCodec(encoding)
    options = params.get("initializationOptions") or {}
    if isinstance(options, dict):
        if isinstance(options.get("debounceMs"), (int, float)) and not isinstance(options["debounceMs"], bool):
            ls.debounce = max(0.0, options["debounceMs"] / 1000)
        if options.get("cache") is False:
            ls.use_cache = False
    ls.initialized = True
    capabilities = {
        "positionEncoding": encoding,
        "textDocumentSync": {"openClose": True, "change": 2, "save": True},  # 2: incremental
        "hoverProvider": True,
        "codeActionProvider": {"codeActionKinds": [QUICK_FIX, FIX_ALL_KIND], "resolveProvider": False},
        "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}},
    }
    if ls.client_capabilities.get("notebookDocument") is not None:
        capabilities["notebookDocumentSync"] = {
            "notebookSelector": [{"notebook": "jupyter-notebook", "cells": [{"language": "python"}]}], "save": True}
    return {"capabilities": capabilities, "serverInfo": {"name": "compile-lint", "version": __version__}}


@request("shutdown")
def shutdown(ls: CompileLintServer, params) -> None:
    ls.shutdown_requested = True
    return None


@notification("textDocument/didOpen")
def did_open(ls: CompileLintServer, params: dict) -> None:
    doc = ls.workspace.open_text(params["textDocument"])
    linted = ls.text_buffer(doc.uri)
    if linted is not None:
        ls.schedule(linted, 0)


@notification("textDocument/didChange")
def did_change(ls: CompileLintServer, params: dict) -> None:
    uri = params["textDocument"]["uri"]
    ls.workspace.change_text(params["textDocument"], params.get("contentChanges") or [])
    notebook = ls.workspace.get_notebook_document(cell_uri=uri)
    linted = ls.notebook_buffer(notebook.uri) if notebook is not None else ls.text_buffer(uri)
    if linted is not None:
        ls.schedule(linted, ls.debounce)


@notification("textDocument/didSave")
def did_save(ls: CompileLintServer, params: dict) -> None:
    uri = params["textDocument"]["uri"]
    if params.get("text") is not None and uri in ls.workspace.documents:
        ls.workspace.documents[uri].text = params["text"]
    linted = ls.text_buffer(uri)
    if linted is not None:
        ls.schedule(linted, 0)


@notification("textDocument/didClose")
def did_close(ls: CompileLintServer, params: dict) -> None:
    uri = params["textDocument"]["uri"]
    ls.workspace.close_text(uri)
    ls.forget(uri)


@notification("notebookDocument/didOpen")
def notebook_open(ls: CompileLintServer, params: dict) -> None:
    notebook = ls.workspace.open_notebook(params)
    linted = ls.notebook_buffer(notebook.uri)
    if linted is not None:
        ls.schedule(linted, 0)


@notification("notebookDocument/didChange")
def notebook_change(ls: CompileLintServer, params: dict) -> None:
    notebook = ls.workspace.change_notebook(params)
    linted = ls.notebook_buffer(notebook.uri) if notebook is not None else None
    if linted is not None:
        ls.schedule(linted, ls.debounce)


@notification("notebookDocument/didSave")
def notebook_save(ls: CompileLintServer, params: dict) -> None:
    linted = ls.notebook_buffer(params["notebookDocument"]["uri"])
    if linted is not None:
        ls.schedule(linted, 0)


@notification("notebookDocument/didClose")
def notebook_close(ls: CompileLintServer, params: dict) -> None:
    uri = params["notebookDocument"]["uri"]
    ls.workspace.close_notebook(params)
    ls.forget(uri)


# One plain glob a watcher: clients differ in the glob syntax they take (eglot 1.9 rejects
# `{a,b}` alternatives, and an error there pops up on every connect), and every client
# takes `**/` and `*`.
WATCHED = ("**/*.py", "**/*.pyi", "**/*.ipynb", "**/pyproject.toml", "**/compile-lint.toml", "**/.compile-lint.toml",
           "**/compile-lint-regions.json", "**/*.yaml", "**/*.yml")


@notification("initialized")
def initialized(ls: CompileLintServer, params) -> None:
    """Ask the client for file events (files changed by git, other tools, config edits)."""
    watch = ((ls.client_capabilities.get("workspace") or {}).get("didChangeWatchedFiles") or {})
    if watch.get("dynamicRegistration"):
        ls.connection.request("client/registerCapability", {"registrations": [{
            "id": "compile-lint-files", "method": "workspace/didChangeWatchedFiles",
            "registerOptions": {"watchers": [{"globPattern": glob} for glob in WATCHED]}}]})


@notification("workspace/didChangeWatchedFiles")
def watched_files(ls: CompileLintServer, params: dict) -> None:
    from ..analysis.reach.declared import REGIONS_FILE
    from ..config import CONFIG_NAMES, clear_cache

    paths = [p for p in (path_of(change["uri"]) for change in params.get("changes") or []) if p is not None]
    if any(os.path.basename(p) in CONFIG_NAMES + (REGIONS_FILE,) for p in paths):
        # new settings or recorded regions: the declared regions, then every open buffer
        clear_cache()
        for context in list(ls.projects.values()):
            context.refresh_declarations()
        for linted in list(ls.linted.values()):
            ls.lint_and_publish(linted)
        return
    from ..analysis.reach.configured import SUFFIXES

    if any(p.endswith(SUFFIXES) for p in paths):
        # a YAML configuration names the models its entries build (analysis/reach/configured.py)
        changed = [context.refresh_declarations() for context in list(ls.projects.values())]
        if any(changed):
            for linted in list(ls.linted.values()):
                ls.lint_and_publish(linted)
        paths = [p for p in paths if not p.endswith(SUFFIXES)]
    for path in paths:
        for context in list(ls.projects.values()):
            if context.contains(path) and context.file_changed(path):
                ls.relint_dependants(_docs().Linted("", path, b"", None), context)


# -- code actions -----------------------------------------------------------------------
@request("textDocument/codeAction")
def code_action(ls: CompileLintServer, params: dict) -> list[dict]:
    from .actions import code_actions  # libcst: only when an action is asked for

    linted = ls.linted_for(params["textDocument"]["uri"])
    if linted is None:
        return []
    context = ls.project_for(linted.path)
    return code_actions(ls.codec, context, linted, params)


@request("compile-lint/timings")
def timings(ls: CompileLintServer, params) -> dict:
    """What each lint of this session took, and how each project's index was built
    (for bench/lsp_latency.py)."""
    return {"lints": ls.timings, "projects": {str(root): ctx.stats for root, ctx in ls.projects.items()},
            "first_publish": ls.first_publish}


@request("textDocument/hover")
def hover(ls: CompileLintServer, params: dict) -> Optional[dict]:
    uri = params["textDocument"]["uri"]
    linted = ls.linted_for(uri)
    if linted is None:
        return None
    lines = ls.workspace.get_text_document(uri).lines
    pos = params["position"]
    line = lines[pos["line"]].rstrip("\r\n") if 0 <= pos["line"] < len(lines) else ""
    character = ls.codec.position_from_client_units(lines, pos)["character"] if lines else pos["character"]
    docs = _docs()
    code = docs.code_at(line, character)
    hit_range = None
    if code is None:
        for place in linted.places():
            if place.uri != uri:
                continue
            for f in linted.findings:
                if linted.place_of(f.start.row) is None or linted.place_of(f.start.row).uri != place.uri:
                    continue
                rng = docs.lsp_range(ls.codec, place, f.start, f.end)
                if _contains(rng, pos):
                    code, hit_range = f.code, rng
                    break
    text = docs.hover_text(code) if code else None
    if text is None:
        return None
    answer = {"contents": {"kind": "markdown", "value": text}}
    if hit_range is not None:
        answer["range"] = hit_range
    return answer


def _contains(rng: dict, pos: dict) -> bool:
    start = (rng["start"]["line"], rng["start"]["character"])
    end = (rng["end"]["line"], rng["end"]["character"])
    return start <= (pos["line"], pos["character"]) <= end


def main() -> None:
    logging.basicConfig(level=os.environ.get("COMPILE_LINT_LOG", "WARNING"), format="compile-lint server: %(message)s")
    code = CompileLintServer().start(Connection())
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        # the index may still be building in its thread: end without waiting for it (the
        # results cache's writes are whole-file replacements, safe to cut off)
        os._exit(code)
