"""`compile-lint server`: the Language Server Protocol on stdio (pygls + lsprotocol).

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

import asyncio
import gc
import logging
import os
import time
from typing import TYPE_CHECKING, Optional
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..config import ConfigError
from .. import deep_stack
from ..notebook import from_cells
from ..project_root import find_project_root
from . import FIX_ALL_KIND

if TYPE_CHECKING:
    from .documents import Linted
    from .project import ProjectContext

log = logging.getLogger("compile_lint.lsp")
STARTED = time.perf_counter()  # (the server's own start, for compile-lint/timings)


def _docs():
    """lsp/documents.py, imported on first use (it imports the linting machinery)."""
    from . import documents

    return documents
NOTEBOOK_SELECTOR = types.NotebookDocumentFilterWithCells(
    notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")]
)


def path_of(uri: str) -> Optional[str]:
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        return None
    return os.path.abspath(unquote(parsed.path))


class CompileLintServer(LanguageServer):
    def __init__(self):
        super().__init__(
            "compile-lint", __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(notebook_selector=[NOTEBOOK_SELECTOR], save=True),
        )
        self.debounce = 0.25
        self.jobs = 1  # see ProjectContext.jobs
        self.use_cache = not os.environ.get("COMPILE_LINT_NO_CACHE")
        self.projects: dict[Optional[str], ProjectContext] = {}
        self.linted: dict[str, Linted] = {}  # text or notebook document uri -> its last lint
        self.pending: dict[str, asyncio.Task] = {}
        self.timings: list[dict] = []  # per lint: wall and CPU seconds (compile-lint/timings)
        self.first_publish: Optional[dict] = None  # when the first diagnostics went out

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
            asyncio.get_running_loop().create_task(self._build(context))

    async def _build(self, context: ProjectContext) -> None:
        started = time.perf_counter()
        try:
            await asyncio.get_running_loop().run_in_executor(None, context.build)
        except Exception as exc:  # the buffers are still linted, each on its own
            log.exception("building the project index failed")
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, f"compile-lint: project index: {exc}"))
            context.ready = True
        context.stats["build_s"] = round(time.perf_counter() - started, 3)
        log.info("project %s indexed in %.2fs: %s", context.root, context.stats["build_s"], context.stats)
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
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"compile-lint: {exc}"))
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
            "cpu_s": round(time.thread_time() - cpu, 4),
        })

    def publish(self, linted: Linted) -> None:
        for uri, diagnostics in _docs().diagnostics_by_uri(self.workspace.position_codec, linted).items():
            version = linted.version if linted.notebook is None else None
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

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
        task = self.pending.pop(linted.uri, None)
        if task is not None:
            task.cancel()
        if delay <= 0:
            self.lint_and_publish(linted)
            return

        async def later():
            await asyncio.sleep(delay)
            self.pending.pop(linted.uri, None)
            self.lint_and_publish(linted)

        self.pending[linted.uri] = asyncio.get_running_loop().create_task(later())

    # -- buffers ------------------------------------------------------------------------
    def text_buffer(self, uri: str) -> Optional[Linted]:
        path = path_of(uri)
        if path is None or not path.endswith((".py", ".pyi")):
            return None
        doc = self.workspace.get_text_document(uri)
        linted = self.linted.get(uri)
        if linted is None:
            linted = self.linted[uri] = _docs().Linted(uri, path, b"", doc.version)
        linted.code = doc.source.encode("utf-8", errors="surrogatepass")
        linted.version = doc.version
        return linted

    def notebook_buffer(self, uri: str) -> Optional[Linted]:
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        path = path_of(uri)
        if notebook is None or path is None:
            return None
        cells, uris = [], []
        for index, cell in enumerate(notebook.cells):
            if cell.kind != types.NotebookCellKind.Code:
                continue
            doc = self.workspace.get_text_document(cell.document)
            if doc.language_id not in (None, "python"):
                continue
            cells.append((index, doc.source))
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
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        linted = self.linted.pop(uri, None)
        if linted is None:
            return
        for place in linted.places():
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=place.uri, diagnostics=[]))
        context = self.projects.get(self.root_of(linted.path))
        if context is not None and context.close(linted.path):
            self.relint_dependants(linted, context)


def _settings(path: str):
    from ..config import load_config_for

    return load_config_for(path)


server = CompileLintServer()


@server.feature(types.INITIALIZE)
def initialize(ls: CompileLintServer, params: types.InitializeParams) -> None:
    options = params.initialization_options or {}
    if isinstance(options, dict):
        if isinstance(options.get("debounceMs"), (int, float)):
            ls.debounce = max(0.0, options["debounceMs"] / 1000)
        if options.get("cache") is False:
            ls.use_cache = False


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: CompileLintServer, params: types.DidOpenTextDocumentParams) -> None:
    linted = ls.text_buffer(params.text_document.uri)
    if linted is not None:
        ls.schedule(linted, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: CompileLintServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    notebook = ls.workspace.get_notebook_document(cell_uri=uri)
    linted = ls.notebook_buffer(notebook.uri) if notebook is not None else ls.text_buffer(uri)
    if linted is not None:
        ls.schedule(linted, ls.debounce)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: CompileLintServer, params: types.DidSaveTextDocumentParams) -> None:
    linted = ls.text_buffer(params.text_document.uri)
    if linted is not None:
        ls.schedule(linted, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: CompileLintServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.forget(params.text_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
async def notebook_open(ls: CompileLintServer, params: types.DidOpenNotebookDocumentParams) -> None:
    linted = ls.notebook_buffer(params.notebook_document.uri)
    if linted is not None:
        ls.schedule(linted, 0)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
async def notebook_change(ls: CompileLintServer, params: types.DidChangeNotebookDocumentParams) -> None:
    linted = ls.notebook_buffer(params.notebook_document.uri)
    if linted is not None:
        ls.schedule(linted, ls.debounce)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
async def notebook_save(ls: CompileLintServer, params: types.DidSaveNotebookDocumentParams) -> None:
    linted = ls.notebook_buffer(params.notebook_document.uri)
    if linted is not None:
        ls.schedule(linted, 0)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
async def notebook_close(ls: CompileLintServer, params: types.DidCloseNotebookDocumentParams) -> None:
    ls.forget(params.notebook_document.uri)


# One plain glob a watcher: clients differ in the glob syntax they take (eglot 1.9 rejects
# `{a,b}` alternatives, and an error there pops up on every connect), and every client
# takes `**/` and `*`.
WATCHED = ("**/*.py", "**/*.pyi", "**/*.ipynb", "**/pyproject.toml", "**/compile-lint.toml", "**/.compile-lint.toml",
           "**/compile-lint-regions.json")


@server.feature(types.INITIALIZED)
async def initialized(ls: CompileLintServer, params: types.InitializedParams) -> None:
    """Ask the client for file events (files changed by git, other tools, config edits)."""
    watch = ls.client_capabilities.workspace and ls.client_capabilities.workspace.did_change_watched_files
    if watch and watch.dynamic_registration:
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=glob) for glob in WATCHED])
        await ls.client_register_capability_async(types.RegistrationParams(registrations=[
            types.Registration(id="compile-lint-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)]))


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def watched_files(ls: CompileLintServer, params: types.DidChangeWatchedFilesParams) -> None:
    from ..analysis.declared import REGIONS_FILE
    from ..config import CONFIG_NAMES, clear_cache

    paths = [p for p in (path_of(change.uri) for change in params.changes) if p is not None]
    if any(os.path.basename(p) in CONFIG_NAMES + (REGIONS_FILE,) for p in paths):
        # new settings or recorded regions: the declared regions, then every open buffer
        clear_cache()
        for context in list(ls.projects.values()):
            context.refresh_declarations()
        for linted in list(ls.linted.values()):
            ls.lint_and_publish(linted)
        return
    for path in paths:
        for context in list(ls.projects.values()):
            if context.contains(path) and context.file_changed(path):
                ls.relint_dependants(_docs().Linted("", path, b"", None), context)


# -- code actions -----------------------------------------------------------------------
@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=False),
)
def code_action(ls: CompileLintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    from .actions import code_actions  # libcst: only when an action is asked for

    linted = ls.linted_for(params.text_document.uri)
    if linted is None:
        return []
    context = ls.project_for(linted.path)
    return code_actions(ls.workspace.position_codec, context, linted, params)


@server.feature("compile-lint/timings")
def timings(ls: CompileLintServer, params) -> dict:
    """What each lint of this session took, and how each project's index was built
    (for bench/lsp_latency.py)."""
    return {"lints": ls.timings, "projects": {str(root): ctx.stats for root, ctx in ls.projects.items()},
            "first_publish": ls.first_publish}


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: CompileLintServer, params: types.HoverParams) -> Optional[types.Hover]:
    linted = ls.linted_for(params.text_document.uri)
    if linted is None:
        return None
    doc = ls.workspace.get_text_document(params.text_document.uri)
    lines = doc.lines
    pos = params.position
    line = lines[pos.line].rstrip("\r\n") if pos.line < len(lines) else ""
    server_pos = ls.workspace.position_codec.position_from_client_units(lines, pos) if lines else pos
    docs = _docs()
    code = docs.code_at(line, server_pos.character)
    hit_range = None
    if code is None:
        for place in linted.places():
            if place.uri != params.text_document.uri:
                continue
            for f in linted.findings:
                if linted.place_of(f.start.row) is None or linted.place_of(f.start.row).uri != place.uri:
                    continue
                rng = docs.lsp_range(ls.workspace.position_codec, place, f.start, f.end)
                if _contains(rng, pos):
                    code, hit_range = f.code, rng
                    break
    text = docs.hover_text(code) if code else None
    if text is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text), range=hit_range)


def _contains(rng: types.Range, pos: types.Position) -> bool:
    start, end = (rng.start.line, rng.start.character), (rng.end.line, rng.end.character)
    return start <= (pos.line, pos.character) <= end


def main() -> None:
    logging.basicConfig(level=os.environ.get("COMPILE_LINT_LOG", "WARNING"), format="compile-lint server: %(message)s")
    server.start_io()
