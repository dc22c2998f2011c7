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


def _trace(session: Session, tracer: str, args: list, kwargs: dict):
    """A traced program of the target, made at the shapes of `args`."""
    target = session.target
    if tracer == "jit.trace":
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            traced = torch.jit.trace(target, tuple(args), check_trace=False, strict=False) if not kwargs else \
                torch.jit.trace(target, example_kwarg_inputs=kwargs, check_trace=False, strict=False)
        tracer_warnings = [str(w.message).splitlines()[0] for w in caught
                           if w.category.__name__ == "TracerWarning"]
        return traced, tracer_warnings
    from torch.export import Dim, export

    module = target if session.is_module else _FunctionModule(target)
    # Let H and W vary, as someone fixing CL104 would: what still fails is CL101.
    dynamic_shapes = tuple(_auto_dims(spec, Dim) for spec in session.input_specs if spec.name is None)
    program = export(module, tuple(args), kwargs or None, dynamic_shapes=None if kwargs else dynamic_shapes)
    return program.module(), []


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


def tracers_for(session: Session) -> list[str]:
    return ["jit.trace"] if session.options.get("quick") else ["jit.trace", "export"]


def traced_check(session: Session, baselines: Baselines, emit: Emit) -> None:
    if len(session.resolutions) < 2 or session.resolutions[0] is None:
        emit(CheckResult(name="traced", status=SKIPPED, verdict="fixed-shape",
                         message="inputs have one fixed shape: nothing to run at a second resolution"))
        return
    trace_at, run_at = session.resolutions[0], session.resolutions[1]
    first, second = baselines.get(trace_at), baselines.get(run_at)
    if first is None or second is None:
        return
    for tracer in tracers_for(session):
        result = CheckResult(name="traced", status=PASS, verdict="", mode=tracer, dtype="float32",
                             shape=input_shapes(second[0], second[1]))
        try:
            program, tracer_warnings = _trace(session, tracer, first[0], first[1])
        except Exception as exc:
            result.status, result.verdict = COULD_NOT_CHECK, "trace-fails"
            result.message = f"{tracer} at {shape_label(trace_at)} raised {with_type(exc, first_line(exc))}"[:800]
            emit(result)
            continue
        warned = (f" ({len(tracer_warnings)} TracerWarning at trace time: {tracer_warnings[0][:160]})"
                  if tracer_warnings else "")
        try:
            outputs = session.call(program, second[0], second[1])
        except Exception as exc:
            result.status, result.verdict = DIVERGED, "fails-at-other-resolution"
            result.confirms = codes_for(session, "CL101", "CL104")
            result.message = (f"traced at {shape_label(trace_at)}, run at {shape_label(run_at)}: "
                              f"{with_type(exc, last_line(exc))}")[:800] + warned
            emit(result)
            continue
        judgement = judge_outputs(second[2], outputs, second[3], session, second[4])
        fill(result, judgement)
        result.verdict = judgement.verdict
        if judgement.passed:
            result.clears = codes_for(session, "CL101", "CL104")
            result.message = f"traced at {shape_label(trace_at)}, matches eager at {shape_label(run_at)}"
        else:
            result.status = DIVERGED
            result.confirms = codes_for(session, "CL101")
            got = "x".join(str(d) for d in outputs[0].shape) if outputs else "nothing"
            want = "x".join(str(d) for d in second[2][0].shape) if second[2] else "nothing"
            result.message = (f"traced at {shape_label(trace_at)}, run at {shape_label(run_at)}: "
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
    for tracer in tracers_for(session):
        try:
            program, _ = _trace(session, tracer, args, kwargs)
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


def _short(value) -> str:
    if isinstance(value, torch.nn.Module):
        return "[" + ", ".join(type(m).__name__ for m in value) + "]"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
