"""The recorder loaded into every Python process of `compile-lint record` (stdlib only).

`compile-lint record` copies this file into a bootstrap folder (as
`_compile_lint_recorder.py`, next to a `sitecustomize.py` that calls `install()`) and
prepends the folder to PYTHONPATH, so every Python process the command starts loads it
before user code: children, `multiprocessing` workers, torchrun ranks, pytest workers.

It never imports torch itself: an import hook patches torch when the program imports it.
It wraps `torch.compile`, `nn.Module.compile`, `torch.jit.trace` / `trace_module`,
`torch.fx.symbolic_trace`, `torch.export.export` and `torch.onnx.export`, and records per
site: the target (file relative to the project root, qualified name, line), the call
site, the options, and for compiled callables the distinct input shapes and dtypes
(bounded), the graphs compiled, recompiles, graph breaks and the code Dynamo put in its
graphs (read from the graphs' stack traces, so inlined functions count). Each process
writes its own partial JSON file; the parent merges them.

Anything going wrong in here is swallowed (and counted): the program must run as it
would without the recorder.
"""
from __future__ import annotations

import ast
import atexit
import functools
import json
import os
import re
import sys
import threading
import uuid

ENV_DIR = "COMPILE_LINT_RECORD_DIR"  # where partial files go (set by `compile-lint record`)
ENV_ROOT = "COMPILE_LINT_RECORD_ROOT"  # the project root: recorded paths are relative to it
ENV_EAGER = "COMPILE_LINT_RECORD_EAGER"  # "1": compile with backend="eager"
ENV_MAX_SHAPES = "COMPILE_LINT_RECORD_MAX_SHAPES"
MAX_CODE = 200  # code entries per site
MAX_REASONS = 20  # graph-break reasons per site
MAX_BREAKS = 50  # graph breaks (ID and user line) per site
FRAME_RE = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
INSIDE = threading.local()  # .api: set while nn.Module.compile runs; .stack: compiled calls in flight

_state: dict = {}


def _config():
    return {
        "dir": os.environ.get(ENV_DIR),
        "root": os.path.realpath(os.environ.get(ENV_ROOT) or os.getcwd()),
        "eager": os.environ.get(ENV_EAGER) == "1",
        "max_shapes": int(os.environ.get(ENV_MAX_SHAPES) or 16),
    }


def _reset() -> None:
    _state.clear()
    _state.update(_config(), sites={}, errors=0, file=None, lock=threading.RLock())


# -- where things are ---------------------------------------------------------------
def _relative(path) -> str | None:
    """`path` relative to the project root, or None outside it (site-packages, <string>)."""
    if not path or path.startswith("<"):
        return None
    real = os.path.realpath(path)
    root = _state["root"]
    if not real.startswith(root + os.sep):
        return None
    rel = os.path.relpath(real, root)
    parts = rel.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts or any(p.startswith(".venv") or p == "venv" for p in parts):
        return None
    return rel.replace(os.sep, "/")


@functools.lru_cache(maxsize=512)
def _defs(path: str) -> tuple:
    """((first_line, last_line, name, qualname, def_line), ...) for every def and class."""
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return ()
    out = []

    def walk(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = prefix + node.name
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out.append((first, node.end_lineno or node.lineno, node.name, qual, node.lineno))
                walk(node.body, qual + ".")
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        walk([n for n in inner if isinstance(n, ast.AST)], prefix)
                for case in getattr(node, "cases", ()) or ():
                    walk(case.body, prefix)

    walk(tree.body, "")
    return tuple(out)


def _qualname_at(path: str, line: int, name: str):
    """The innermost def named `name` whose lines hold `line`: (qualname, def line)."""
    best = None
    for first, last, def_name, qual, row in _defs(path):
        if def_name == name and first <= line <= last and (best is None or first >= best[0]):
            best = (first, qual, row)
    return (best[1], best[2]) if best else None


def _def_row(path: str, qualname: str):
    for _first, _last, _name, qual, row in _defs(path):
        if qual == qualname:
            return row
    return None


def _target(obj):
    """{"path", "qualname", "row", "kind"} of what is compiled or traced, or None."""
    import types

    seen = 0
    while seen < 8:
        seen += 1
        orig = getattr(obj, "_orig_mod", None)  # an OptimizedModule compiled again
        if orig is not None and not isinstance(obj, type):
            obj = orig
            continue
        if isinstance(obj, functools.partial):
            obj = obj.func
            continue
        if isinstance(obj, types.MethodType):
            owner = obj.__self__
            func = obj.__func__
            if func.__name__ in ("_call_impl", "__call__") and _relative(getattr(func.__code__, "co_filename", None)) is None:
                obj = type(owner)  # Module.compile: compiles `self._call_impl`
                continue
            obj = func
            continue
        break
    if isinstance(obj, type):
        cls = obj
    elif hasattr(obj, "__code__"):
        code = obj.__code__
        rel = _relative(code.co_filename)
        if rel is None or obj.__name__ == "<lambda>":
            return None
        qual = obj.__qualname__.replace(".<locals>", "")
        return {"path": rel, "qualname": qual, "row": _def_row(code.co_filename, qual) or code.co_firstlineno, "kind": "function"}
    else:
        cls = type(obj)  # an instance: a module
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    rel = _relative(path)
    if rel is None:
        return None
    qual = cls.__qualname__.replace(".<locals>", "")
    return {"path": rel, "qualname": qual, "row": _def_row(path, qual) or 0, "kind": "class"}


def _call_site():
    """The innermost frame in project code outside torch and this recorder."""
    frame = sys._getframe(2)
    while frame is not None:
        rel = _relative(frame.f_code.co_filename)
        if rel is not None and frame.f_code.co_filename != __file__:
            return {"path": rel, "row": frame.f_lineno}
        frame = frame.f_back
    return None


def _plain(value):
    """A JSON-safe form of an option value."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or type(value).__name__
    return f"<{name}>"


# -- the records ------------------------------------------------------------------------
def _site(static: dict) -> dict:
    """This process's record of a site (created on first use)."""
    key = json.dumps([static["target"], static["kind"], static["api"], static["options"]], sort_keys=True)
    sites = _state["sites"]
    record = sites.get(key)
    if record is None:
        record = sites[key] = dict(static, calls=[], seen={"inputs": [], "graphs": 0, "recompiles": 0,
                                                         "graph_breaks": 0, "graph_break_reasons": [], "code": [],
                                                         "breaks": []})
    return record


def _changed() -> None:
    """Write this process's partial file (changes are rare: new sites, shapes, graphs)."""
    folder = _state.get("dir")
    if not folder:
        return
    if _state["file"] is None:
        _state["file"] = os.path.join(folder, f"partial-{os.getpid()}-{uuid.uuid4().hex[:8]}.json")
    data = {"pid": os.getpid(), "errors": _state["errors"], "sites": list(_state["sites"].values())}
    tmp = _state["file"] + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, _state["file"])
    except OSError:
        pass


def _guarded(func):
    """Recorder bookkeeping never breaks the program: errors are counted, not raised."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            with _state["lock"]:
                return func(*args, **kwargs)
        except Exception:
            _state["errors"] = _state.get("errors", 0) + 1
            return None

    return wrapper


@_guarded
def _note_site(static: dict) -> None:
    record = _site(static)
    call = static.get("call")
    if call and call not in record["calls"]:
        record["calls"].append(call)
    _changed()


def _signature(args, kwargs, torch) -> list:
    out = []
    for value in list(args) + [kwargs[k] for k in sorted(kwargs)]:
        items = value if isinstance(value, (list, tuple)) and len(value) <= 8 else [value]
        for item in items:
            if isinstance(item, torch.Tensor):
                out.append({"shape": list(item.shape), "dtype": str(item.dtype).replace("torch.", "")})
    return out


@_guarded
def _note_inputs(static: dict, args, kwargs) -> None:
    torch = sys.modules.get("torch")
    if torch is None:
        return
    sig = _signature(args, kwargs, torch)
    record = _site(static)
    inputs = record["seen"]["inputs"]
    if sig and sig not in inputs and len(inputs) < _state["max_shapes"]:
        inputs.append(sig)
        _changed()


def _counters():
    try:
        from torch._dynamo.utils import counters

        return counters["stats"].get("unique_graphs", 0), sum(counters["graph_break"].values()), counters["graph_break"]
    except Exception:
        return 0, 0, {}


def _break_hooks():
    """compile_lint/record/break_hooks.py: copied next to this file by `record`."""
    try:
        import _compile_lint_break_hooks as hooks
    except ImportError:
        from compile_lint.record import break_hooks as hooks
    return hooks


def _user_file(path: str) -> bool:
    rel = _relative(path)
    return rel is not None and "site-packages" not in rel.split("/")


@_guarded
def _ensure_break_hooks(torch) -> None:
    """Wrap Dynamo's translator once (on the first compiled call): every graph break,
    data-dependent jumps included, with its official ID and user line."""
    if "break_hooks" in _state:
        return
    _state["break_hooks"] = None
    hooks = _break_hooks()
    if hooks.missing(torch):
        return  # counts from Dynamo's counters only
    _state["break_hooks"] = hooks.install(torch, _note_break, _user_file)


def _note_break(record: dict) -> None:
    """One graph break, seen by the translator hooks, for the compiled call in flight."""
    try:
        stack = getattr(INSIDE, "stack", None)
        if not stack:
            return
        static = stack[-1]
        INSIDE.hook_breaks = getattr(INSIDE, "hook_breaks", 0) + 1
        site = record.get("site")
        if site is None:
            return
        rel = _relative(site["file"])
        entry = {"id": record.get("gb_id"), "gb_type": str(record.get("gb_type"))[:160], "path": rel,
                 "row": int(site["line"]), "frame_to_eager": bool(record.get("frame_to_eager"))}
        with _state["lock"]:
            breaks = _site(static)["seen"].setdefault("breaks", [])
            if entry not in breaks and len(breaks) < MAX_BREAKS:
                breaks.append(entry)
                _changed()
    except Exception:
        _state["errors"] = _state.get("errors", 0) + 1


@_guarded
def _note_call_end(static: dict, before: tuple, first_call: bool) -> None:
    graphs, breaks, reasons = _counters()
    new_graphs, new_breaks = graphs - before[0], breaks - before[1]
    # the hooks see the breaks Dynamo's counter leaves out (an `if tensor:` reaches only
    # graph_break_reasons): the larger count
    new_breaks = max(new_breaks, getattr(INSIDE, "hook_breaks", 0) - before[3])
    if new_graphs <= 0 and new_breaks <= 0:
        return
    seen = _site(static)["seen"]
    seen["graphs"] += max(new_graphs, 0)
    if not first_call:
        seen["recompiles"] += max(new_graphs, 0)
    if new_breaks > 0:
        seen["graph_breaks"] += new_breaks
        for reason, count in reasons.items():
            if count > before[2].get(reason, 0) and len(seen["graph_break_reasons"]) < MAX_REASONS:
                line = str(reason).strip().splitlines()[0][:160] if str(reason).strip() else "graph break"
                if line not in seen["graph_break_reasons"]:
                    seen["graph_break_reasons"].append(line)
    _changed()


@_guarded
def _note_graph(gm) -> None:
    """A graph reaches the backend: the functions its nodes came from are region code."""
    stack = getattr(INSIDE, "stack", None)
    if not stack:
        return
    static = stack[-1]
    seen = _site(static)["seen"]
    code = seen["code"]
    found = False
    for node in gm.graph.nodes:
        trace = node.meta.get("stack_trace") if hasattr(node, "meta") else None
        if not trace:
            continue
        for path, line, name in FRAME_RE.findall(trace):
            rel = _relative(path)
            if rel is None:
                continue
            hit = _qualname_at(path, int(line), name)
            if hit is None:
                continue
            entry = {"path": rel, "qualname": hit[0], "row": hit[1]}
            if entry not in code and len(code) < MAX_CODE:
                code.append(entry)
                found = True
    if found:
        _changed()


# -- wrappers ---------------------------------------------------------------------------
def _static(kind: str, api: str, target, options: dict) -> dict:
    return {"kind": kind, "api": api, "target": target, "options": options, "call": _call_site()}


def _recording_call(static: dict, func):
    """`func` called as before, its inputs and compile counters noted."""
    calls = {"n": 0}

    @functools.wraps(func)
    def recorded(*args, **kwargs):
        _note_inputs(static, args, kwargs)
        stack = getattr(INSIDE, "stack", None)
        if stack is None:
            stack = INSIDE.stack = []
        _ensure_break_hooks(sys.modules.get("torch"))
        before = _counters()
        before = (before[0], before[1], dict(before[2]), getattr(INSIDE, "hook_breaks", 0))
        calls["n"] += 1
        first = calls["n"] == 1
        stack.append(static)
        try:
            return func(*args, **kwargs)
        finally:
            stack.pop()
            _note_call_end(static, before, first)

    return recorded


def _patch_torch(torch) -> None:
    original = torch.compile
    if getattr(original, "_compile_lint_recorded", False):
        return

    def compile(model=None, **kwargs):
        if model is None:  # `@torch.compile(mode=...)`
            return lambda fn: compile(fn, **kwargs)
        static = None
        try:
            api = getattr(INSIDE, "api", None) or "torch.compile"
            INSIDE.api = None
            target = _target(model)
            if target is not None and not kwargs.get("disable"):
                backend = kwargs.get("backend")
                options = {
                    "mode": kwargs.get("mode"),
                    "dynamic": kwargs.get("dynamic"),
                    "fullgraph": kwargs.get("fullgraph", False),
                    "backend": backend if isinstance(backend, str) or backend is None else _plain(backend),
                    "options": _plain(kwargs.get("options")),
                }
                static = _static("compiled", api, target, options)
                _note_site(static)
                if _state["eager"]:
                    kwargs = {k: v for k, v in kwargs.items() if k not in ("mode", "options", "backend")}
                    kwargs["backend"] = "eager"
        except Exception:
            _state["errors"] = _state.get("errors", 0) + 1
            static = None
        result = original(model, **kwargs)
        if static is None:
            return result
        try:
            if isinstance(result, torch.nn.Module):
                result.forward = _recording_call(static, result.forward)
                return result
            if callable(result) and not isinstance(result, type):
                return _recording_call(static, result)
        except Exception:
            _state["errors"] = _state.get("errors", 0) + 1
        return result

    functools.update_wrapper(compile, original)
    compile._compile_lint_recorded = True
    torch.compile = compile

    module_cls = torch.nn.Module
    module_compile = module_cls.compile

    @functools.wraps(module_compile)
    def module_compile_recorded(self, *args, **kwargs):
        INSIDE.api = "Module.compile"
        try:
            return module_compile(self, *args, **kwargs)
        finally:
            INSIDE.api = None

    module_cls.compile = module_compile_recorded
    _patch_backends(torch)
    _patch_tracers(torch)


def _patch_backends(torch) -> None:
    """Every graph handed to a backend passes `_note_graph` first (class-level, so the
    backend torch.compile builds from mode/options is the one that runs)."""
    for name in ("_TorchCompileInductorWrapper", "_TorchCompileWrapper"):
        cls = getattr(torch, name, None)
        call = getattr(cls, "__call__", None)
        if call is None or getattr(call, "_compile_lint_recorded", False):
            continue

        def make(call):
            @functools.wraps(call)
            def recorded_call(self, model_, inputs_, *args, **kwargs):
                _note_graph(model_)
                return call(self, model_, inputs_, *args, **kwargs)

            recorded_call._compile_lint_recorded = True
            return recorded_call

        cls.__call__ = make(call)


TRACERS = (
    ("torch.jit", "trace", "torch.jit.trace"),
    ("torch.jit", "trace_module", "torch.jit.trace_module"),
    ("torch.fx", "symbolic_trace", "torch.fx.symbolic_trace"),
    ("torch.export", "export", "torch.export.export"),
    ("torch.onnx", "export", "torch.onnx.export"),
)


def _patch_tracers(torch) -> None:
    for module_name, attr, api in TRACERS:
        module = sys.modules.get(module_name)
        if module is not None:
            _patch_tracer(module, attr, api)


def _patch_tracer(module, attr: str, api: str) -> None:
    original = getattr(module, attr, None)
    if original is None or getattr(original, "_compile_lint_recorded", False):
        return

    torch_dir = os.path.dirname(getattr(sys.modules.get("torch"), "__file__", "") or "") + os.sep

    @functools.wraps(original)
    def traced(*args, **kwargs):
        if sys._getframe(1).f_code.co_filename.startswith(torch_dir):
            return original(*args, **kwargs)  # torch tracing on its own behalf
        try:
            obj = args[0] if args else kwargs.get("mod") or kwargs.get("model") or kwargs.get("func") or kwargs.get("root")
            target = _target(obj) if obj is not None else None
            if target is not None:
                options = {k: _plain(v) for k, v in kwargs.items() if k in ("strict", "check_trace", "dynamo", "opset_version", "dynamic_shapes")}
                static = _static("traced", api, target, options)
                _note_site(static)
                example = args[1] if len(args) > 1 else kwargs.get("example_inputs") or kwargs.get("args")
                if example is not None:
                    example = example if isinstance(example, tuple) else (example,)
                    _note_inputs(static, example, {})
        except Exception:
            _state["errors"] = _state.get("errors", 0) + 1
        return original(*args, **kwargs)

    traced._compile_lint_recorded = True
    setattr(module, attr, traced)


# -- loading --------------------------------------------------------------------------
class _TorchImportHook:
    """Patches torch (and torch.onnx / torch.export, imported lazily) right after they load."""

    names = {"torch", "torch.onnx", "torch.export"}

    def find_spec(self, name, path=None, target=None):
        if name not in self.names:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec

        def exec_and_patch(module):
            exec_module(module)
            _after_import(name)

        try:
            loader.exec_module = exec_and_patch
        except (AttributeError, TypeError):
            pass
        return spec

    def invalidate_caches(self):
        pass


def _after_import(name: str) -> None:
    try:
        torch = sys.modules.get("torch")
        if torch is None:
            return
        if name == "torch":
            _patch_torch(torch)
        else:
            _patch_tracers(torch)
    except Exception:
        _state["errors"] = _state.get("errors", 0) + 1


def install() -> None:
    """Called by the bootstrap sitecustomize.py; a no-op outside `compile-lint record`."""
    if not os.environ.get(ENV_DIR) or _state:
        return
    _reset()
    sys.meta_path.insert(0, _TorchImportHook())
    if "torch" in sys.modules:
        _after_import("torch")
    atexit.register(_changed_if_any)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork)


def _changed_if_any() -> None:
    if _state.get("sites"):
        with _state["lock"]:
            _changed()


def _after_fork() -> None:
    """A forked child records only what it sees, into its own file."""
    lock = threading.RLock()
    _state.update(sites={}, errors=0, file=None, lock=lock)
