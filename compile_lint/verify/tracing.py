"""Checks of traced code (CL1xx): trace or export at one resolution and run at another;
change Python attributes after tracing and see whether the traced program follows.

Imported only in the worker (imports torch).
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Optional

import torch

from .checks import Baselines, Emit, codes_for, fill, first_line, judge_outputs, last_line, save_artifact, shape_label, with_type
from .inputs import input_shapes
from .results import COULD_NOT_CHECK, DIVERGED, PASS, SKIPPED, CheckResult
from .session import Session


# ---------------------------------------------------------------------------
# traced targets (CL1xx): trace at one resolution, run at another


def _trace(session: Session, tracer: str, args: list, kwargs: dict, dynamic: bool = True):
    """A traced program of the target, made at the shapes of `args`. `dynamic`: export
    with H and W free (Dim.AUTO), as a site with dynamic_shapes does; else fixed."""
    target = session.target
    if tracer == "jit.trace":
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            traced = torch.jit.trace(target, tuple(args), check_trace=False, strict=False) if not kwargs else \
                torch.jit.trace(target, example_kwarg_inputs=kwargs, check_trace=False, strict=False)
        tracer_warnings = [str(w.message).splitlines()[0] for w in caught
                           if w.category.__name__ == "TracerWarning"]
        return traced, tracer_warnings
    if tracer == "onnx":
        return _onnx_program(session, args, kwargs, dynamic), []
    from torch.export import Dim, export

    module = target if session.is_module else _FunctionModule(target)
    dynamic_shapes = None
    if dynamic and not kwargs:
        dynamic_shapes = tuple(_auto_dims(spec, Dim) for spec in session.input_specs if spec.name is None)
        if not session.is_module:
            dynamic_shapes = (dynamic_shapes,)  # the wrapper's forward(*args) takes them as one argument
    program = export(module, tuple(args), kwargs or None, dynamic_shapes=dynamic_shapes)
    return program.module(), []


class ToolMissing(Exception):
    """An exporter's runtime is not installed: the check could not run (could-not-check)."""


def _onnx_program(session: Session, args: list, kwargs: dict, dynamic: bool):
    """torch.onnx.export to memory, run by ONNX Runtime on CPU (offline, no download)."""
    import importlib.util
    import io

    missing = [name for name in ("onnx", "onnxscript", "onnxruntime") if importlib.util.find_spec(name) is None]
    if missing:
        raise ToolMissing(f"torch.onnx.export needs {', '.join(missing)} (pip install {' '.join(missing)})")
    import onnxruntime

    module = session.target if session.is_module else _FunctionModule(session.target)
    names = [f"input{i}" for i in range(len(args))]
    axes = {name: {i: f"{name}_{d}" for i, d in enumerate(spec.shape) if d in ("H", "W")}
            for name, spec in zip(names, [s for s in session.input_specs if s.name is None]) if spec.shape}
    buffer = io.BytesIO()
    torch.onnx.export(module, tuple(args), buffer, input_names=names, dynamic_axes=axes if dynamic else None,
                      kwargs=kwargs or None)
    runtime = onnxruntime.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])

    def run(*call_args, **_):
        feeds = {n: a.detach().cpu().numpy() for n, a in zip(names, call_args)}
        return [torch.from_numpy(o) for o in runtime.run(None, feeds)]

    return run


class _FunctionModule(torch.nn.Module):
    def __init__(self, fn: Callable) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


def _auto_dims(spec, Dim) -> Optional[dict]:
    if spec.shape is None:
        return None
    dims = {i: Dim.AUTO for i, d in enumerate(spec.shape) if d in ("H", "W")}
    return dims or None


def tracers_for(session: Session) -> list[tuple[str, bool]]:
    """(tracer, dynamic) pairs: the code's own trace/export sites as they trace (the
    site's dynamic shapes, none meaning fixed); without sites, jit.trace and an export
    with H and W free."""
    sites = session.spec.get("trace_sites") or []
    if sites:  # a jit.trace program takes any size; whether it should is CL101's question
        return sorted({(site["api"], site["api"] == "jit.trace" or bool(site["dynamic"])) for site in sites})
    return every_tracer(session)


def every_tracer(session: Session) -> list[tuple[str, bool]]:
    return [("jit.trace", True)] if session.options.get("quick") else [("jit.trace", True), ("export", True)]


def traced_check(session: Session, baselines: Baselines, emit: Emit) -> None:
    """Trace at the first resolution. A dynamic tracer (jit.trace's program is run at any
    size; an export with dynamic shapes) is run at the second resolution: CL101 shows
    there. A fixed-size export, as the code's own site makes it, is run at the size it
    was made for, and at the second only when CL104 asks whether other sizes fail."""
    if session.resolutions[0] is None:
        emit(CheckResult(name="traced", status=SKIPPED, verdict="fixed-shape",
                         message="inputs have one fixed shape: nothing to run at a second resolution"))
        return
    trace_at = session.resolutions[0]
    run_at = session.resolutions[1] if len(session.resolutions) > 1 else trace_at
    first = baselines.get(trace_at)
    if first is None:
        return
    for tracer, dynamic in tracers_for(session):
        other_size = dynamic or "CL104" in session.codes
        at = run_at if other_size else trace_at
        second = baselines.get(at)
        if second is None:
            continue
        label = tracer if tracer == "jit.trace" else f"{tracer} {'dynamic' if dynamic else 'fixed'}"
        result = CheckResult(name="traced", status=PASS, verdict="", mode=label, dtype="float32",
                             shape=input_shapes(second[0], second[1]),
                             detail={"tracer": tracer, "dynamic": dynamic, "trace_at": trace_at, "run_at": at})
        try:
            program, tracer_warnings = _trace(session, tracer, first[0], first[1], dynamic)
        except ToolMissing as exc:
            result.status, result.verdict, result.message = COULD_NOT_CHECK, "tool-missing", str(exc)
            emit(result)
            continue
        except Exception as exc:
            result.verdict = "trace-fails"
            if session.spec.get("trace_sites"):
                # the code's own trace/export, as its site asks for it, fails where eager works
                result.status = DIVERGED
                result.confirms = codes_for(session, "CL101", "CL104")
            else:  # verify's own choice of tracer: a limit of the check, not of the code
                result.status = COULD_NOT_CHECK
            result.message = f"{label} at {shape_label(trace_at)} raised {with_type(exc, first_line(exc))}"[:800]
            emit(result)
            continue
        warned = (f" ({len(tracer_warnings)} TracerWarning at trace time: {tracer_warnings[0][:160]})"
                  if tracer_warnings else "")
        try:
            outputs = session.call(program, second[0], second[1])
        except Exception as exc:
            result.status, result.verdict = DIVERGED, "fails-at-other-resolution"
            result.confirms = codes_for(session, "CL101", "CL104")
            result.message = (f"traced at {shape_label(trace_at)}, run at {shape_label(at)}: "
                              f"{with_type(exc, last_line(exc))}")[:800] + warned
            emit(result)
            continue
        judgement = judge_outputs(second[2], outputs, second[3], session, second[4])
        fill(result, judgement)
        result.verdict = judgement.verdict
        if judgement.passed:
            if at != trace_at:
                result.clears = codes_for(session, "CL101", "CL104")
            result.message = f"traced at {shape_label(trace_at)}, matches eager at {shape_label(at)}"
        else:
            result.status = DIVERGED
            result.confirms = codes_for(session, "CL101")
            got = "x".join(str(d) for d in outputs[0].shape) if outputs else "nothing"
            want = "x".join(str(d) for d in second[2][0].shape) if second[2] else "nothing"
            result.message = (f"traced at {shape_label(trace_at)}, run at {shape_label(at)}: "
                              + (f"silently returns shape {got} instead of {want}" if got != want else
                                 f"differs from eager by {judgement.max_abs_diff:.3g}"))
            if got == want:
                save_artifact(session, result, second[2], outputs)
        result.message += warned
        emit(result)


# ---------------------------------------------------------------------------
# frozen Python state (CL102): change an attribute after tracing


_SKIP_ATTRIBUTES = {"training", "dump_patches", "call_super_init"}


def perturbations(module: torch.nn.Module, configured: dict) -> list[tuple[str, Any]]:
    """(attribute, new value) pairs: the config's `mutate`, else every public Python
    scalar or sequence attribute, changed the way code that reassigns it would."""
    if configured:
        return list(configured.items())
    changes = []
    for name, value in vars(module).items():
        if name.startswith("_") or name in _SKIP_ATTRIBUTES:
            continue
        if isinstance(value, bool):
            changes.append((name, not value))
        elif isinstance(value, float):
            changes.append((name, value * 0.5 if value else 0.5))
        elif isinstance(value, int):
            changes.append((name, value + 1))
        elif isinstance(value, (list, tuple)) and len(value) > 1 and len(set(map(repr, value))) > 1:
            changes.append((name, type(value)(reversed(value))))
    for name, child in module.named_children():
        if isinstance(child, (torch.nn.ModuleList, torch.nn.Sequential)) and len(child) > 1:
            changes.append((name, type(child)(list(child)[::-1])))
    return changes


def frozen_state_check(session: Session, baselines: Baselines, emit: Emit) -> None:
    if not session.is_module:
        emit(CheckResult(name="frozen-state", status=SKIPPED, verdict="function",
                         message="a function holds no attributes to change after tracing"))
        return
    resolution = session.resolutions[0]
    base = baselines.get(resolution)
    if base is None:
        return
    args, kwargs, eager_before, _, compute_dtype = base
    module = session.target
    changes = perturbations(module, session.spec.get("mutate") or {})
    mattered = 0
    for tracer, dynamic in every_tracer(session):  # CL102 is a question for every tracer
        try:
            program, _ = _trace(session, tracer, args, kwargs, dynamic)
        except Exception as exc:
            emit(CheckResult(name="frozen-state", status=COULD_NOT_CHECK, verdict="trace-fails", mode=tracer,
                             message=f"{tracer} raised {type(exc).__name__}: {exc}"[:800]))
            continue
        for attribute, new_value in changes:
            old_value = getattr(module, attribute)
            try:
                setattr(module, attribute, new_value)
                eager_after = session.call(module, args, kwargs)
            except Exception:
                continue  # this change breaks eager too: not a value the code can take
            finally:
                setattr(module, attribute, old_value)
            if judge_outputs(eager_before, eager_after, None, session, compute_dtype).passed:
                continue  # the attribute does not reach the output
            mattered += 1
            setattr(module, attribute, new_value)
            try:
                traced_after = session.call(program, args, kwargs)
            finally:
                setattr(module, attribute, old_value)
            judgement = judge_outputs(eager_after, traced_after, None, session, compute_dtype)
            result = fill(CheckResult(name="frozen-state", status=PASS, verdict=judgement.verdict, mode=tracer,
                                       dtype="float32", shape=input_shapes(args, kwargs)), judgement)
            result.detail = _change_detail(attribute, old_value, new_value)
            change = f"self.{attribute}: {_short(old_value)} -> {_short(new_value)}"
            if judgement.passed:
                result.clears = codes_for(session, "CL102")
                result.message = f"{change} after {tracer}: the traced program follows"
            else:
                result.status, result.verdict = DIVERGED, "frozen"
                result.confirms = codes_for(session, "CL102")
                result.message = (f"{change} after {tracer}: the traced program kept the old value; differs "
                                  f"from eager by {judgement.max_abs_diff:.3g}")
                save_artifact(session, result, eager_after, traced_after)
            emit(result)
    if not mattered:
        emit(CheckResult(name="frozen-state", status=PASS, verdict="no-state", clears=codes_for(session, "CL102"),
                         message=f"changing {len(changes)} Python attribute(s) ({', '.join(n for n, _ in changes) or 'none'}) "
                                 f"did not change eager output"))


def _change_detail(attribute: str, old_value, new_value) -> dict:
    """The change as a repro can redo it: a JSON value, or reversing a layer list."""
    import json

    if isinstance(new_value, torch.nn.Module):
        return {"attribute": attribute, "reverse_modules": True}
    try:
        json.dumps(new_value)
    except (TypeError, ValueError):
        return {"attribute": attribute}
    return {"attribute": attribute, "value": list(new_value) if isinstance(new_value, tuple) else new_value,
            "tuple": isinstance(new_value, tuple)}


def _short(value) -> str:
    if isinstance(value, torch.nn.Module):
        return "[" + ", ".join(type(m).__name__ for m in value) + "]"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
