"""Run one oracle-bench entry in this interpreter (the models' venv) and write its JSON.

    VENV/bin/python bench/oracle/child.py --models bench/oracle/models.py --entry NAME --out FILE

run.py starts one of these per entry, in its own process group, and kills the group on
timeout. The entry runs in each pass of `--passes` (default: eval, then train; see
README.md "The judge"); in each pass, in order:

1. builds the entry (random weights, tiny config), sets the pass's mode on the module
   (the target, or the owner of a bound-method target) and its dtype;
2. runs it eagerly under `sys.settrace`, keeping the lines executed in the entry's source
   folders: the lines the compiled run asks Dynamo to trace (the same call, the same
   inputs), against which precision is judged;
3. builds the entry again (same seed: same weights and inputs; the eager run may have
   changed the first build's state) and calls `torch.compile(target, backend="eager")`
   once, after `torch.compiler.reset()` and clearing Dynamo's counters, with two hooks on
   Dynamo's translator that see every graph break it takes, with its exception
   (`gb_type`) and user stack (compile_lint/record/break_hooks.py, shared with
   `compile-lint record` and `verify`):
   - `InstructionTranslatorBase.log_graph_break`: every break Dynamo resumes after,
     data-dependent jumps included (those reach `graph_break_reasons` but not
     `counters["graph_break"]`);
   - `InstructionTranslatorBase.raise_loop_graph_break`: a break inside a loop of the
     frame being compiled; Dynamo gives up on the whole frame, which runs eagerly
     ("graph break in loop", GB7000), and the cause is in the exception it wraps.
   Both are private APIs of torch 2.13 (symbolic_convert.py); the child refuses to run
   when they are missing rather than report no breaks.
4. writes (after every pass, so a timeout keeps the passes that finished): per pass its
   status, breaks, executed lines and Dynamo's own counts (`counters["graph_break"]`,
   `graph_break_reasons`, frames total/ok, graphs); at the top, over the passes, every
   break (gb_type, the registry's ID, the stack inside the source folders, the innermost
   frame anywhere, whether the frame ran eagerly, its pass), the union of executed lines,
   the best status, and the compiled target's file and qualified name (the scorer
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
    """`sys.settrace` hook keeping, for files under the given folders, the lines executed
    and the start (line, column) of every bytecode instruction executed (opcode events,
    mapped through `co_positions`): what ran inside a line. A line holds code that may not
    run when the line does: the right operand of `and`, a generator expression's body over
    an empty iterable, one arm of a conditional expression."""

    def __init__(self, roots: list[str]):
        self.roots = tuple(os.path.join(os.path.realpath(r), "") for r in roots)
        self.lines: dict[str, set[int]] = {}
        self._offsets: dict = {}  # code object -> bytecode offsets executed
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
        offsets = self._offsets.setdefault(frame.f_code, set())
        frame.f_trace_opcodes = True

        def local_trace(frame, event, arg):
            if event == "opcode":
                offsets.add(frame.f_lasti)
            elif event == "line":
                lines.add(frame.f_lineno)
            return local_trace

        return local_trace

    def columns(self) -> dict[str, dict[str, list[int]]]:
        """path -> {line: [columns]}: where the executed instructions start (0-based
        columns, as `ast` gives them)."""
        out: dict[str, dict[int, set[int]]] = {}
        for code, offsets in self._offsets.items():
            positions = list(code.co_positions())
            per_line = out.setdefault(os.path.realpath(code.co_filename), {})
            for offset in offsets:
                index = offset // 2
                if index >= len(positions):
                    continue
                line, _end_line, col, _end_col = positions[index]
                if line is not None and col is not None:
                    per_line.setdefault(line, set()).add(col)
        return {path: {str(line): sorted(cols) for line, cols in sorted(rows.items())}
                for path, rows in sorted(out.items())}

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


# The judge's passes (run.py --passes): every entry runs in each, on a model built afresh
# for each run. "eval" and "train" are nn.Module modes (train: dropout, LayerDrop and
# `if self.training:` code, gradients on); ":float16" after a mode casts the model and
# its floating-point inputs to that dtype. "declared" is the entry's own mode alone (the
# first judge's single pass).
DEFAULT_PASSES = ("eval", "train", "eval:float16")
STATUS_ORDER = ("ok", "compile_error", "eager_error", "no_mode", "build_error")


def parse_pass(spec: str, declared_mode: str) -> tuple[str, str]:
    mode, _, dtype = spec.partition(":")
    if mode == "declared":
        mode = declared_mode
    if mode not in ("eval", "train"):
        raise ValueError(f"pass {spec!r}: the mode is eval, train or declared")
    return mode, dtype


def _module_of(target):
    """The nn.Module whose mode a pass sets: the target, or the owner of a bound method
    (kornia and diffusers entries compile `module.method`)."""
    import torch

    if isinstance(target, torch.nn.Module):
        return target
    owner = getattr(target, "__self__", None)
    return owner if isinstance(owner, torch.nn.Module) else None


def _cast(value, dtype):
    """Floating-point tensors inside `value` (tuples, lists, dicts) cast to `dtype`."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value


def _fresh(builder, entry, mode: str, dtype: str):
    """Build the entry again (same seed: same weights, same inputs) and put it in `mode`
    and `dtype`. Each run gets its own build: an eager run may change a model's state
    (transformers' big_bird switches its attention type on a short input and logs it),
    and the compiled run must see the model as built."""
    import torch

    torch.manual_seed(0)
    target, args, kwargs = builder(**entry.args)
    module = _module_of(target)
    if module is not None:
        module.train(mode == "train")
        if dtype:
            module.to(getattr(torch, dtype))
    if dtype:
        args, kwargs = _cast(args, getattr(torch, dtype)), _cast(kwargs, getattr(torch, dtype))
    return target, args, kwargs


def _target_info(target) -> dict:
    import torch

    if isinstance(target, torch.nn.Module):
        obj = type(target)
        return {"kind": "class", "file": _file_of(obj), "qualname": obj.__qualname__, "module": obj.__module__}
    import inspect

    func = inspect.unwrap(getattr(target, "__func__", target))
    return {"kind": "function", "file": os.path.realpath(func.__code__.co_filename),
            "qualname": func.__qualname__, "module": func.__module__}


def run_entry(entry, builder, source_roots: list[str], passes=("declared",), on_pass=None) -> dict:
    """Run `entry` in each pass; `on_pass(result)` after each (the child writes what it
    has, so a timeout keeps the passes that finished)."""
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    result: dict = {"name": entry.name, "source": entry.source, "mode": entry.mode, "torch": torch.__version__,
                    "passes": []}
    t0 = time.perf_counter()
    try:
        target, _args, _kwargs = builder(**entry.args)
    except Exception as exc:  # an entry that cannot be built says so and is counted apart
        result.update(status="build_error", error=_short(exc))
        return result
    result["target"] = _target_info(target)
    result["build_s"] = round(time.perf_counter() - t0, 2)
    has_mode = _module_of(target) is not None
    del target, _args, _kwargs
    for spec in passes:
        mode, dtype = parse_pass(spec, entry.mode)
        name = mode + (":" + dtype if dtype else "")
        if mode == "train" and not has_mode and spec != "declared":
            # a plain function has no train mode (gradients alone change no traced branch)
            one = {"pass": name, "status": "no_mode"}
        else:
            one = _run_pass(entry, builder, source_roots, mode, dtype)
            one["pass"] = name
        result["passes"].append(one)
        _merge(result)
        if on_pass is not None:
            on_pass(result)
    return result


def _merge(result: dict) -> None:
    """The entry's top-level fields, over its passes: every break (tagged with its pass),
    the union of executed lines, Dynamo's counts summed, the best status."""
    passes = result["passes"]
    statuses = [p["status"] for p in passes]
    result["status"] = min(statuses, key=STATUS_ORDER.index)
    errors = [f"{p['pass']}: {p['error']}" for p in passes if p.get("error")]
    if errors:
        result["error"] = "\n".join(errors)[:3000]
    result["breaks"] = [dict(b, **{"pass": p["pass"]}) for p in passes for b in p.get("breaks", ())]
    executed: dict[str, set] = {}
    for p in passes:
        for path, rows in (p.get("executed") or {}).items():
            executed.setdefault(path, set()).update(rows)
    result["executed"] = {path: sorted(rows) for path, rows in sorted(executed.items())}
    dynamo: dict = {}
    for p in passes:
        for key, value in (p.get("dynamo") or {}).items():
            if isinstance(value, dict):
                merged = dynamo.setdefault(key, {})
                for k, v in value.items():
                    merged[k] = merged.get(k, 0) + v
            else:
                dynamo[key] = dynamo.get(key, 0) + value
    result["dynamo"] = dynamo


def _run_pass(entry, builder, source_roots: list[str], mode: str, dtype: str) -> dict:
    import torch

    one: dict = {"mode": mode}
    grad = torch.enable_grad if mode == "train" else torch.no_grad
    try:
        target, args, kwargs = _fresh(builder, entry, mode, dtype)
    except Exception as exc:
        return dict(one, status="build_error", error=_short(exc))
    t0 = time.perf_counter()
    try:
        with grad(), LineRecorder(source_roots) as lines:
            torch.manual_seed(0)
            _call(target, args, kwargs)
    except Exception as exc:
        return dict(one, status="eager_error", error=_short(exc))
    one["eager_s"] = round(time.perf_counter() - t0, 2)
    one["executed"] = {path: sorted(rows) for path, rows in sorted(lines.lines.items())}
    one["executed_columns"] = lines.columns()
    del target, args, kwargs

    from torch._dynamo.utils import counters, graph_break_reasons

    try:  # the compiled run on a model built afresh (see _fresh)
        target, args, kwargs = _fresh(builder, entry, mode, dtype)
    except Exception as exc:
        return dict(one, status="build_error", error=_short(exc))
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
        with grad(), hooks:
            torch.manual_seed(0)
            _call(compiled, args, kwargs)
        status, error = "ok", None
    except Exception as exc:  # a compile that raises: keep what the hooks saw
        status, error = "compile_error", _short(exc)
    one["compile_s"] = round(time.perf_counter() - t0, 2)
    one["status"] = status
    if error:
        one["error"] = error
    one["breaks"] = hooks.breaks
    one["dynamo"] = {
        "graph_break_counter": sum(counters["graph_break"].values()),
        "graph_break_reasons": len(graph_break_reasons),
        "frames_total": counters["frames"]["total"],
        "frames_ok": counters["frames"]["ok"],
        "graphs": counters["stats"]["unique_graphs"],
        "loop_breaks_logged": hooks.loop_logged,
        "unimplemented": {k.split("\n", 1)[0]: v for k, v in counters["unimplemented"].items()},
    }
    return one


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
    parser.add_argument("--passes", default=",".join(DEFAULT_PASSES),
                        help="comma-separated passes: eval, train, declared (the entry's mode), each optionally "
                             f":DTYPE (eval:float16); default {','.join(DEFAULT_PASSES)}")
    ns = parser.parse_args(argv)
    _die_with_parent()
    # this script's folder (sys.path[0]) holds models.py, builders.py...: an app's own
    # `models` package (a namespace folder) must not resolve to them
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != HERE]
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    catalog = _load(os.path.join(HERE, "catalog.py"), "oracle_catalog")
    models = catalog.load_models(ns.models)
    entry = models.entry(ns.entry)
    passes = [p.strip() for p in ns.passes.split(",") if p.strip()]
    for spec in passes:
        parse_pass(spec, entry.mode)  # a bad pass fails before anything runs
    roots = models.source_roots(entry.source)
    for path in reversed(models.sys_path(entry)):
        sys.path.insert(0, path)
    try:
        builder = models.builder(entry)
    except Exception as exc:
        builder = _raiser(exc)
    real_roots = [os.path.realpath(r) for r in roots]

    def write(result: dict, complete: bool) -> None:
        result["roots"] = real_roots
        result["complete"] = complete
        tmp = ns.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, ns.out)

    result = run_entry(entry, builder, roots, passes, on_pass=lambda r: write(r, False))
    write(result, True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
