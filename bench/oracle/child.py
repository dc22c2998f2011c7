"""Run one oracle-bench entry in this interpreter (the models' venv) and write its JSON.

    VENV/bin/python bench/oracle/child.py --models bench/oracle/models.py --entry NAME --out FILE

run.py starts one of these per entry, in its own process group, and kills the group on
timeout. What it does, in order:

1. builds the entry (random weights, tiny config) and sets eval or train mode;
2. runs it eagerly under `sys.settrace`, keeping the lines executed in the entry's source
   folders: the lines the compiled run asks Dynamo to trace (the same call, the same
   inputs), against which precision is judged;
3. `torch.compile(target, backend="eager")` and one call, after `torch.compiler.reset()`
   and clearing Dynamo's counters, with two hooks on Dynamo's translator that see every
   graph break it takes, with its exception (`gb_type`) and user stack
   (compile_lint/record/break_hooks.py, shared with `compile-lint record` and `verify`):
   - `InstructionTranslatorBase.log_graph_break`: every break Dynamo resumes after,
     data-dependent jumps included (those reach `graph_break_reasons` but not
     `counters["graph_break"]`);
   - `InstructionTranslatorBase.raise_loop_graph_break`: a break inside a loop of the
     frame being compiled; Dynamo gives up on the whole frame, which runs eagerly
     ("graph break in loop", GB7000), and the cause is in the exception it wraps.
   Both are private APIs of torch 2.13 (symbolic_convert.py); the child refuses to run
   when they are missing rather than report no breaks.
4. writes: the breaks (gb_type, the registry's ID, the stack inside the source folders,
   the innermost frame anywhere, whether the frame ran eagerly), Dynamo's own counts
   (`counters["graph_break"]`, `graph_break_reasons`, frames total/ok, graphs), the
   executed lines, and the compiled target's file and qualified name (the scorer
   declares it compiled).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def _load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _die_with_parent() -> None:
    # compile_lint/children.py is stdlib only; loaded by path so that the repository root
    # never lands on sys.path of the models' interpreter
    children = _load(os.path.join(REPO, "compile_lint", "children.py"), "_oracle_children")
    children.die_with_parent()


class LineRecorder:
    """`sys.settrace` hook keeping (file, line) for files under the given folders."""

    def __init__(self, roots: list[str]):
        self.roots = tuple(os.path.join(os.path.realpath(r), "") for r in roots)
        self.lines: dict[str, set[int]] = {}
        self._wanted: dict[str, bool] = {}

    def _want(self, filename: str) -> bool:
        hit = self._wanted.get(filename)
        if hit is None:
            real = os.path.realpath(filename)
            hit = self._wanted[filename] = real.startswith(self.roots)
        return hit

    def global_trace(self, frame, event, arg):
        if event != "call" or not self._want(frame.f_code.co_filename):
            return None
        lines = self.lines.setdefault(os.path.realpath(frame.f_code.co_filename), set())
        lines.add(frame.f_lineno)

        def local_trace(frame, event, arg):
            if event == "line":
                lines.add(frame.f_lineno)
            return local_trace

        return local_trace

    def __enter__(self):
        sys.settrace(self.global_trace)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)


def _break_hooks():
    # compile_lint/record/break_hooks.py is stdlib only and shared with `compile-lint
    # record` and `verify`; loaded by path like children.py
    return _load(os.path.join(REPO, "compile_lint", "record", "break_hooks.py"), "_oracle_break_hooks")


def _call(target, args, kwargs):
    out = target(*args, **kwargs)
    return out


def run_entry(entry, builder, source_roots: list[str]) -> dict:
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    result: dict = {"name": entry.name, "source": entry.source, "mode": entry.mode, "torch": torch.__version__}
    t0 = time.perf_counter()
    try:
        target, args, kwargs = builder(**entry.args)
    except Exception as exc:  # an entry that cannot be built says so and is counted apart
        result.update(status="build_error", error=_short(exc))
        return result
    if isinstance(target, torch.nn.Module):
        target.train(entry.mode == "train")
        obj = type(target)
        result["target"] = {"kind": "class", "file": _file_of(obj), "qualname": obj.__qualname__, "module": obj.__module__}
    else:
        import inspect

        func = inspect.unwrap(getattr(target, "__func__", target))
        result["target"] = {"kind": "function", "file": os.path.realpath(func.__code__.co_filename),
                            "qualname": func.__qualname__, "module": func.__module__}
    result["build_s"] = round(time.perf_counter() - t0, 2)

    grad = torch.enable_grad() if entry.mode == "train" else torch.no_grad()
    t0 = time.perf_counter()
    try:
        with grad, LineRecorder(source_roots) as lines:
            _call(target, args, kwargs)
    except Exception as exc:
        result.update(status="eager_error", error=_short(exc))
        return result
    result["eager_s"] = round(time.perf_counter() - t0, 2)
    result["executed"] = {path: sorted(rows) for path, rows in sorted(lines.lines.items())}

    from torch._dynamo.utils import counters, graph_break_reasons

    torch.compiler.reset()
    counters.clear()
    graph_break_reasons.clear()
    compiled = torch.compile(target, backend="eager")
    break_hooks = _break_hooks()
    absent = break_hooks.missing(torch)
    if absent:  # refuse rather than report no breaks
        raise RuntimeError(f"torch {torch.__version__}: {', '.join(absent)} missing")
    hooks = break_hooks.BreakHooks(torch, break_hooks.under(source_roots))
    t0 = time.perf_counter()
    try:
        with grad, hooks:
            torch.manual_seed(0)
            _call(compiled, args, kwargs)
        status = "ok"
        error = None
    except Exception as exc:  # a compile that raises: keep what the hooks saw
        status, error = "compile_error", _short(exc)
    result["compile_s"] = round(time.perf_counter() - t0, 2)
    result["status"] = status
    if error:
        result["error"] = error
    result["breaks"] = hooks.breaks
    result["dynamo"] = {
        "graph_break_counter": sum(counters["graph_break"].values()),
        "graph_break_reasons": len(graph_break_reasons),
        "frames_total": counters["frames"]["total"],
        "frames_ok": counters["frames"]["ok"],
        "graphs": counters["stats"]["unique_graphs"],
        "loop_breaks_logged": hooks.loop_logged,
        "unimplemented": {k.split("\n", 1)[0]: v for k, v in counters["unimplemented"].items()},
    }
    return result


def _raiser(exc):
    def build(**_kwargs):
        raise exc

    return build


def _file_of(obj) -> str | None:
    module = sys.modules.get(obj.__module__)
    path = getattr(module, "__file__", None)
    return os.path.realpath(path) if path else None


def _short(exc: BaseException) -> str:
    lines = traceback.format_exception_only(type(exc), exc)
    return "".join(lines).strip()[:1500]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", required=True, help="the models file (models.py or a slice)")
    parser.add_argument("--entry", required=True)
    parser.add_argument("--out", required=True)
    ns = parser.parse_args(argv)
    _die_with_parent()
    # this script's folder (sys.path[0]) holds models.py, builders.py...: an app's own
    # `models` package (a namespace folder) must not resolve to them
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != HERE]
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    catalog = _load(os.path.join(HERE, "catalog.py"), "oracle_catalog")
    models = catalog.load_models(ns.models)
    entry = models.entry(ns.entry)
    roots = models.source_roots(entry.source)
    for path in reversed(models.sys_path(entry)):
        sys.path.insert(0, path)
    try:
        builder = models.builder(entry)
    except Exception as exc:
        builder = _raiser(exc)
    result = run_entry(entry, builder, roots)
    result["roots"] = [os.path.realpath(r) for r in roots]
    tmp = ns.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    os.replace(tmp, ns.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
