"""The checks. Each emits named CheckResults saying which lint codes it confirms or clears.

Imported only in the worker (imports torch). Hazard numbers quoted below are from
hazards.md; the checks measure, they never assume.
"""
from __future__ import annotations

import os
import statistics
import time
from typing import Any, Callable, Optional

import torch

from ..analysis.torch_api import CUDAGRAPH_MODES
from . import artifacts
from .compare import DIVERGENCE, FLIP, ROUNDING, ROUNDING_ULPS, Judgement, judge, worst
from .inputs import input_shapes, torch_dtype
from .results import COULD_NOT_CHECK, DIVERGED, ERROR, PASS, SKIPPED, CheckResult
from .session import CounterSnapshot, Session, flat_tensors, inductor_config, reset_compiler

Emit = Callable[[CheckResult], None]

LOW_PRECISION = ("float16", "bfloat16")
# A threshold flip touches 0.1-0.4% of pixels (hazards.md CL302): it needs thousands of
# pixels to show at all, so CL302 targets are also checked at this size.
RARE_EVENT_RESOLUTION = [64, 64]
LATENCY_RUNS = 9


def last_line(exc: Exception) -> str:
    """TorchScript and export put the useful part of an error last."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else ""


def first_line(exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else ""


def percent(fraction: float) -> str:
    return f"{fraction:.1%}" if fraction >= 0.01 or fraction == 0 else f"{fraction * 100:.2g}%"


def with_type(exc: Exception, text: str) -> str:
    name = type(exc).__name__
    return text if text.startswith(name) else f"{name}: {text}"


def codes_for(session: Session, *codes: str) -> list[str]:
    return sorted(set(codes) & session.codes)


def shape_label(resolution) -> str:
    return "fixed" if resolution is None else f"{resolution[0]}x{resolution[1]}"


def judge_outputs(eager: list, compiled: list, fp64: Optional[list], session: Session,
                   compute_dtype, tolerance=None) -> Judgement:
    tolerance = tolerance or session.tolerance
    if len(eager) != len(compiled):
        return Judgement(DIVERGENCE, float("inf"), 1.0)
    if not eager:
        return Judgement("bit-identical", 0.0, 0.0)
    refs = fp64 if fp64 is not None and len(fp64) == len(eager) else [None] * len(eager)
    return worst([judge(e, c, r, tolerance, compute_dtype) for e, c, r in zip(eager, compiled, refs)])


def fill(result: CheckResult, judgement: Judgement) -> CheckResult:
    result.max_abs_diff = judgement.max_abs_diff
    result.mismatch_fraction = judgement.mismatch_fraction
    result.max_diff_vs_fp64 = judgement.max_diff_vs_fp64
    result.eager_max_diff_vs_fp64 = judgement.eager_max_diff_vs_fp64
    result.compiled_rmse_vs_fp64 = judgement.compiled_rmse_vs_fp64
    result.eager_rmse_vs_fp64 = judgement.eager_rmse_vs_fp64
    return result


def save_artifact(session: Session, result: CheckResult, eager: list, compiled: list) -> None:
    folder = session.options.get("artifacts")
    if not folder or not eager or not compiled:
        return
    stem = os.path.splitext(os.path.basename(session.spec.get("file") or session.spec.get("module") or ""))[0]
    name = "-".join(str(part) for part in (
        f"{stem}.{session.spec['qualname']}", result.name, result.mode or "", "dynamic" if result.dynamic else "static",
        result.dtype or "", shape_label(result.shape and result.shape[0][-2:] if result.shape else None)))
    index = artifacts.most_different(eager, compiled)
    if index is None:
        return
    if len(eager) > 1:
        name += f"-output{index}"
    result.artifact = artifacts.save_comparison(folder, name, eager[index], compiled[index])


# ---------------------------------------------------------------------------
# Eager baselines, shared by the checks (eager runs are cheap; compiles are not).


class Baselines:
    """Eager and fp64 outputs per (resolution, dtype), and the resolutions where eager
    itself fails (nothing to compare there: reported once, not blamed on the compiler)."""

    def __init__(self, session: Session, emit: Emit) -> None:
        self.session = session
        self.emit = emit
        self._cache: dict = {}

    def get(self, resolution, dtype: str = "float32"):
        key = (tuple(resolution) if resolution else None, dtype)
        if key not in self._cache:
            args, kwargs = self.session.inputs(resolution, dtype)
            target = self.session.target_in(dtype)
            try:
                eager = self.session.call(target, args, kwargs)
            except Exception as exc:  # eager itself fails: skip this resolution, say why
                self.emit(CheckResult(
                    name="forward", status=SKIPPED, verdict="eager-fails", dtype=dtype,
                    shape=input_shapes(args, kwargs),
                    message=f"eager {type(exc).__name__} at {shape_label(resolution)}: {exc}"[:500]))
                self._cache[key] = None
                return None
            try:
                fp64, compute_dtype = self.session.fp64_reference(args, kwargs)
            except Exception:  # some ops have no float64 kernel: judge without the reference
                fp64, compute_dtype = None, torch_dtype(dtype)
            self._cache[key] = (args, kwargs, eager, fp64, compute_dtype)
        return self._cache[key]


# ---------------------------------------------------------------------------
# forward and low-precision: eager vs compiled in each mode


def _classify(session: Session, judgement: Judgement, compute_dtype, rerun: Callable[..., list],
              eager: list, fp64: list, result: CheckResult) -> None:
    """Set status, verdict, message and codes of a compiled-vs-eager comparison.

    `rerun(**inductor_changes)` compiles afresh under changed inductor config and returns
    the outputs, for the two confirmations hazards.md prescribes."""
    low_precision = compute_dtype in (torch.float16, torch.bfloat16)
    result.verdict = judgement.verdict
    if judgement.passed and judgement.verdict != ROUNDING:
        result.status = PASS
        result.clears = codes_for(session, "CL103", "CL303", *(("CL301", "CL302") if low_precision else ()))
        return
    if low_precision:
        # Rounding or a flipped threshold: does it vanish when Inductor rounds every
        # intermediate like eager does (hazards.md CL301)?
        emulated = judge_outputs(eager, rerun(emulate_precision_casts=True), fp64, session, compute_dtype)
        result.emulated_max_abs_diff = emulated.max_abs_diff
    if judgement.verdict == ROUNDING:
        result.status = PASS
        result.confirms = codes_for(session, "CL301")
        result.clears = codes_for(session, "CL302", "CL103")
        confirmed = (" emulate_precision_casts = True brings it to "
                     f"{result.emulated_max_abs_diff:.3g}: Inductor skipped an intermediate down-cast."
                     if result.emulated_max_abs_diff is not None else "")
        result.message = rounding_message(judgement) + confirmed
        return
    # A divergence: first rule out expected randomness (hazards.md CL303).
    random_free = judge_outputs(eager, rerun(fallback_random=True), fp64, session, compute_dtype)
    result.fallback_random_max_abs_diff = random_free.max_abs_diff
    if random_free.passed:
        result.status = PASS
        result.verdict = "expected-randomness"
        result.confirms = codes_for(session, "CL303")
        result.message = (f"differs by {judgement.max_abs_diff:.3g} on {percent(judgement.mismatch_fraction)} of elements "
                          f"and not at all with fallback_random = True: the compiled code draws its own random "
                          f"numbers (expected, pytorch#118735)")
        return
    result.status = DIVERGED
    result.confirms = codes_for(session, *(("CL302",) if low_precision else ("CL103",)))
    if judgement.verdict == FLIP:
        result.message = (f"compiled flips {percent(judgement.mismatch_fraction)} of elements vs eager by up to "
                          f"{judgement.max_abs_diff:.3g} (a threshold on a rounded {str(compute_dtype)[6:]} value "
                          f"takes the other side), although its RMSE vs fp64 is {judgement.compiled_rmse_vs_fp64:.3g} "
                          f"against eager's {judgement.eager_rmse_vs_fp64:.3g}"
                          + (f"; with emulate_precision_casts = True: {result.emulated_max_abs_diff:.3g}"
                             if result.emulated_max_abs_diff is not None else ""))
        return
    fp64_note = ""
    if judgement.max_diff_vs_fp64 is not None:
        fp64_note = (f"; vs fp64: compiled {judgement.max_diff_vs_fp64:.3g}, eager "
                     f"{judgement.eager_max_diff_vs_fp64:.3g}")
    emulate_note = ""
    if result.emulated_max_abs_diff is not None:
        emulate_note = (f"; with emulate_precision_casts = True: {result.emulated_max_abs_diff:.3g}"
                        + (" (it comes from rounding an intermediate)" if result.emulated_max_abs_diff == 0 else ""))
    result.message = (f"compiled differs from eager by {judgement.max_abs_diff:.3g} on "
                      f"{percent(judgement.mismatch_fraction)} of elements{fp64_note}{emulate_note}")


def rounding_message(judgement: Judgement) -> str:
    if judgement.compiled_rmse_vs_fp64 is None:
        return (f"rounding, not a bug: compiled differs by {judgement.max_abs_diff:.3g}, within "
                f"{ROUNDING_ULPS} ULPs (no fp64 reference could be computed).")
    closer = judgement.compiled_rmse_vs_fp64 <= judgement.eager_rmse_vs_fp64
    return (f"rounding, not a bug: compiled differs from eager by {judgement.max_abs_diff:.3g} and is "
            f"{'closer to' if closer else 'within the harness multiplier of'} the fp64 reference "
            f"(RMSE {judgement.compiled_rmse_vs_fp64:.3g} vs eager's {judgement.eager_rmse_vs_fp64:.3g}; "
            f"the rule of torch._dynamo.utils.same).")


def forward_check(session: Session, baselines: Baselines, emit: Emit, modes: list, dynamics: list,
                  resolutions: list, dtype: str = "float32", name: str = "forward", backend: Any = "inductor",
                  backend_name: str = "inductor") -> None:
    target = session.target_in(dtype)
    for mode in modes:
        for dynamic in dynamics:
            usable = [r for r in resolutions if baselines.get(r, dtype) is not None]
            if not usable:
                continue
            compiled = session.compile(target, mode, dynamic, backend)
            called_at: list = []  # the sizes this compiled function ran at before (a repro calls it at them too)
            for resolution in usable:
                args, kwargs, eager, fp64, compute_dtype = baselines.get(resolution, dtype)
                result = CheckResult(name=name, status=PASS, verdict="", mode=mode, dynamic=dynamic, dtype=dtype,
                                     shape=input_shapes(args, kwargs), backend=backend_name,
                                     detail={"resolution": resolution, "sizes_before": called_at[:]})
                called_at.append(resolution)
                try:
                    outputs, stats = session.call_compiled(compiled, args, kwargs)
                except Exception as exc:
                    result.status, result.verdict = ERROR, "compile-error"
                    result.message = f"compiled call raised {with_type(exc, first_line(exc))}"[:800]
                    emit(result)
                    continue
                if session.device == "cuda" and mode in CUDAGRAPH_MODES:
                    # the reruns below replay CUDA graphs, which overwrite these outputs
                    # (measured on an H200: bench/results.md, "GPU run"); the artifact
                    # must show what this call returned
                    outputs = [o.clone() for o in outputs]
                result.graphs, result.breaks, result.recompiles = stats["graphs"], stats["breaks"], stats["recompiles"]
                result.fell_back = stats["fell_back"]
                if stats["compiled_this_call"]:
                    result.times["compile_s"] = round(stats["call_s"], 4)
                judgement = judge_outputs(eager, outputs, fp64, session, compute_dtype)
                fill(result, judgement)

                def rerun(**changes) -> list:
                    with inductor_config(**changes):
                        fresh = session.compile(target, mode, dynamic, backend)
                        return session.call(fresh.fn, args, kwargs)

                _classify(session, judgement, compute_dtype, rerun, eager, fp64, result)
                _note_breaks_and_fallbacks(session, result, target, args, kwargs)
                if result.status == DIVERGED:
                    save_artifact(session, result, eager, outputs)
                emit(result)
                if not judgement.passed and result.verdict != "expected-randomness" or session.compiler_was_reset:
                    # the reruns (or explaining a graph break) reset Dynamo: start this (mode, dynamic) afresh
                    session.compiler_was_reset = False
                    compiled = session.compile(target, mode, dynamic, backend)
                    called_at = []


def dynamo_check(session: Session, baselines: Baselines, emit: Emit, dynamic: bool, resolutions: list,
                 backend: str = "aot_eager") -> None:
    """Dynamo without Inductor (`backend="aot_eager"`: Dynamo's trace and AOTAutograd,
    run by eager kernels): graph breaks, recompiles at the other sizes (a guard that
    failed), frames that fell back to eager and errors Dynamo raises, in seconds, before
    any Inductor compile. The graphs' node count sizes the Inductor compiles to come."""
    from torch._dynamo.backends.registry import lookup_backend

    inner = lookup_backend(backend)
    seen = {"nodes": 0}

    def counting(gm, example_inputs):
        seen["nodes"] += sum(1 for node in gm.graph.nodes if node.op in ("call_function", "call_method", "call_module"))
        return inner(gm, example_inputs)

    results: list = []
    forward_check(session, baselines, results.append, ["default"], [dynamic], resolutions, name="dynamo",
                  backend=counting, backend_name=backend)
    for result in results:
        result.mode = None
        result.graph_nodes = seen["nodes"]
        # Dynamo alone proves graph breaks, and a difference it already shows (a
        # decomposition: nearest resizing, CL103); passing, it clears no numeric hazard
        # (Inductor's code generation is what CL301-CL303 are about)
        result.clears = [c for c in result.clears if c == "CL508"]
        extra = []
        if result.recompiles:
            extra.append(f"{result.recompiles} recompile(s) at this size: a guard failed")
        if result.status == PASS and not result.message:
            result.message = (f"Dynamo ({backend}): {result.graphs} graph(s), {seen['nodes']} ops, "
                              f"{result.breaks or 0} graph break(s)")
        if extra:
            result.message = "; ".join([result.message] + extra) if result.message else "; ".join(extra)
        emit(result)


def break_reasons(session: Session, target: Any, args: list, kwargs: dict, limit: int = 3) -> list[str]:
    """Dynamo's own explanation of each graph break, with the user source line that
    caused it (torch._dynamo.explain: one more trace, no Inductor compile). Asked once
    per target, only when breaks were counted."""
    if session.break_reasons is None:
        session.break_reasons = []
        try:
            import torch._dynamo

            args, kwargs = session_copies(args, kwargs)
            explained = torch._dynamo.explain(target)(*args, **kwargs)
            for reason in explained.break_reasons:
                frame = reason.user_stack[-1] if reason.user_stack else None
                where = f" at {os.path.relpath(frame.filename)}:{frame.lineno}" if frame else ""
                text = " ".join(str(reason.reason).split())[:200]
                entry = f"{text}{where}"
                if entry not in session.break_reasons:
                    session.break_reasons.append(entry)
        except Exception as exc:  # explaining is a courtesy: never fail the check over it
            session.break_reasons.append(f"(Dynamo could not explain: {type(exc).__name__})")
        finally:
            reset_compiler()
            session.compiler_was_reset = True
    return session.break_reasons[:limit]


def session_copies(args: list, kwargs: dict) -> tuple[list, dict]:
    from .session import fresh_copies

    return fresh_copies(args, kwargs)


def _note_breaks_and_fallbacks(session: Session, result: CheckResult, target: Any = None, args=(),
                               kwargs=None) -> None:
    if result.breaks:
        result.confirms = sorted(set(result.confirms) | set(codes_for(session, "CL508")))
        # each break by ID and line when the hooks saw them, else Dynamo's explain()
        reasons = session.runtime_breaks[:5] or (
            break_reasons(session, target, list(args), kwargs or {}) if target is not None else [])
        result.break_reasons = reasons
        why = f": {'; '.join(reasons)}" if reasons else ""
        result.message = (result.message + f"; {result.breaks} graph break(s){why}").lstrip("; ")
    elif result.breaks == 0:
        result.clears = sorted(set(result.clears) | set(codes_for(session, "CL508")))
    if result.fell_back:
        # Never a pass: this frame ran eagerly (hazards.md, notes for verify).
        result.status = DIVERGED if result.status == PASS else result.status
        result.verdict = "fell-back-to-eager"
        result.message = (result.message + "; a frame fell back to eager (recompile limit or a swallowed "
                          "error): its numbers are eager's").lstrip("; ")


def low_precision_check(session: Session, baselines: Baselines, emit: Emit, dtypes: list, resolutions: list) -> None:
    """fp16 / bf16 in the default mode, statically: Inductor's C++ and Triton backends keep
    low-precision intermediates in fp32 the same way in every mode."""
    sizes = list(resolutions)
    if "CL302" in session.codes and session.resolutions != [None] and RARE_EVENT_RESOLUTION not in sizes:
        sizes.append(RARE_EVENT_RESOLUTION)
    for dtype in dtypes:
        forward_check(session, baselines, emit, ["default"], [False], sizes, dtype=dtype, name="low-precision")


# ---------------------------------------------------------------------------
# gradients


def gradients_check(session: Session, baselines: Baselines, emit: Emit, resolution) -> None:
    base = baselines.get(resolution)
    if base is None:
        return
    args, kwargs, *_ = base
    result = CheckResult(name="gradients", status=PASS, verdict="", mode="default", dynamic=False, dtype="float32",
                         shape=input_shapes(args, kwargs), backend="inductor", detail={"resolution": resolution})

    def grads(fn: Callable, target: Any, cast: Callable) -> Optional[list]:
        leaf_args = [cast(a).requires_grad_(True) if _is_float(a) else a for a in args]
        leaf_kwargs = {k: cast(v).requires_grad_(True) if _is_float(v) else v for k, v in kwargs.items()}
        params = [p for p in target.parameters() if p.requires_grad] if isinstance(target, torch.nn.Module) else []
        torch.manual_seed(session.seed)
        outputs = [o for o in flat_tensors(fn(*leaf_args, **leaf_kwargs)) if o.requires_grad]
        if not outputs:
            return None
        # Weight each output element differently so the gradient is not all ones.
        generator = torch.Generator().manual_seed(session.seed + 7)
        loss = sum((o * torch.rand(o.shape, generator=generator, dtype=torch.float64).to(o.device, o.dtype)).sum()
                   for o in outputs)
        wrt = [t for t in list(leaf_args) + list(leaf_kwargs.values()) if isinstance(t, torch.Tensor) and t.requires_grad]
        found = torch.autograd.grad(loss, wrt + params, allow_unused=True)
        return [torch.zeros_like(t) if g is None else g.detach() for t, g in zip(wrt + params, found)]

    try:
        eager = grads(session.target, session.target, lambda t: t.detach().clone())
    except Exception as exc:
        result.status, result.verdict = SKIPPED, "eager-fails"
        result.message = f"eager backward raised {type(exc).__name__}: {last_line(exc)}"[:500]
        emit(result)
        return
    if eager is None:
        result.status, result.verdict = SKIPPED, "not-differentiable"
        result.message = "no output requires grad: nothing to differentiate"
        emit(result)
        return
    from .reference import Float64Everywhere, coarsest, to_float64

    fp64_target = to_float64(session.target) if session.is_module else session.target
    mode = Float64Everywhere()
    with mode:
        fp64 = grads(fp64_target, fp64_target, lambda t: t.detach().double())
    compute_dtype = coarsest(torch.float32, *mode.requested)

    def compiled_grads(**changes) -> list:
        with inductor_config(**changes):
            compiled = session.compile(session.target, "default", False)
            return grads(compiled.fn, session.target, lambda t: t.detach().clone())

    start = time.perf_counter()
    try:
        outputs = compiled_grads()
    except Exception as exc:  # eager differentiates, compiled does not: the compiler's failure
        result.status, result.verdict = ERROR, "compile-error"
        result.message = f"compiled backward raised {type(exc).__name__}: {first_line(exc)}"[:800]
        emit(result)
        return
    result.times["compile_s"] = round(time.perf_counter() - start, 4)
    snapshot = CounterSnapshot.now()
    result.graphs, result.breaks, result.fell_back = snapshot.graphs, snapshot.breaks, snapshot.fell_back
    judgement = judge_outputs(eager, outputs, fp64, session, compute_dtype, session.gradient_tolerance)
    fill(result, judgement)
    _classify(session, judgement, compute_dtype, lambda **c: compiled_grads(**c), eager, fp64, result)
    # CL103 is a forward hazard, seen only at some sizes: gradients neither prove nor clear it.
    result.confirms = [c for c in result.confirms if c != "CL103"]
    result.clears = [c for c in result.clears if c != "CL103"]
    result.message = f"gradients of {len(eager)} inputs and parameters: " + (result.message or judgement.verdict)
    _note_breaks_and_fallbacks(session, result)
    emit(result)


def _is_float(value) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point()


# ---------------------------------------------------------------------------
# recompiles driven by Python attributes (CL202)


def recompile_sweep_check(session: Session, baselines: Baselines, emit: Emit, backend: str = "eager") -> None:
    """Recompiles are Dynamo's: its guards on Python attributes decide them, so the sweep
    compiles with `backend="eager"` (no code generation), as fast as Dynamo can trace."""
    if not session.is_module:
        emit(CheckResult(name="recompile-sweep", status=SKIPPED, verdict="function",
                         message="a function holds no attributes to sweep"))
        return
    resolution = session.resolutions[0]
    base = baselines.get(resolution)
    if base is None:
        return
    args, kwargs, *_ = base
    module = session.target
    limit = int(torch._dynamo.config.recompile_limit)
    candidates = [(n, v) for n, v in vars(module).items()
                  if isinstance(v, int) and not isinstance(v, bool) and not n.startswith("_")]
    if not candidates:
        emit(CheckResult(name="recompile-sweep", status=PASS, verdict="no-int-attributes",
                         clears=codes_for(session, "CL202"), message="no int attributes to sweep"))
    for attribute, original in candidates:
        compiled = session.compile(module, "default", False, backend)
        result = CheckResult(name="recompile-sweep", status=PASS, verdict="", mode="default", dynamic=False,
                             dtype="float32", shape=input_shapes(args, kwargs), backend=backend)
        worst_diff, tried, fell_back_at = 0.0, [], None
        try:
            for value in range(original, original + limit + 2):
                setattr(module, attribute, value)
                try:
                    eager = session.call(module, args, kwargs)
                except Exception:
                    break  # the module does not accept this value
                outputs, stats = session.call_compiled(compiled, args, kwargs)
                tried.append(value)
                worst_diff = max(worst_diff, judge_outputs(eager, outputs, None, session, torch.float32).max_abs_diff)
                if stats["fell_back"] and fell_back_at is None:
                    fell_back_at = value
                result.recompiles, result.graphs, result.breaks = stats["recompiles"], stats["graphs"], stats["breaks"]
        finally:
            setattr(module, attribute, original)
        result.max_abs_diff = worst_diff
        values = f"self.{attribute} = {tried[0]}..{tried[-1]}" if tried else f"self.{attribute}"
        if fell_back_at is not None:
            result.status, result.verdict, result.fell_back = DIVERGED, "fell-back-to-eager", True
            result.confirms = codes_for(session, "CL202")
            result.message = (f"{values}: {result.graphs} graphs ({result.recompiles} recompiles), then "
                              f"self.{attribute} = {fell_back_at} hit recompile_limit ({limit}) and the frame runs "
                              f"eagerly from then on")
        elif result.recompiles:
            result.verdict = "recompiles"
            result.confirms = codes_for(session, "CL202")
            result.message = f"{values}: one recompile per value ({result.recompiles}), limit not reached"
        else:
            result.verdict = "no-recompile"
            result.clears = codes_for(session, "CL202")
            result.message = f"{values}: no recompile"
        emit(result)


# ---------------------------------------------------------------------------
# CUDA graphs (CL401-CL403): CUDA only


CUDA_CHECKS = {
    "held-outputs": "CL401",
    "cudagraph-sizes": "CL402",
    "input-mutation": "CL403",
}


def cuda_graph_checks(session: Session, baselines: Baselines, emit: Emit, names: list) -> None:
    for name in names:
        code = CUDA_CHECKS[name]
        if session.device != "cuda":
            emit(CheckResult(name=name, status=SKIPPED, verdict="cuda-only", mode="reduce-overhead",
                             message=f"not checkable on cpu: CUDA graphs exist only on CUDA; on cpu "
                                     f"reduce-overhead runs without them, so {code} cannot show"))
            continue
        from . import cudagraphs

        getattr(cudagraphs, name.replace("-", "_"))(session, baselines, emit, codes_for(session, code))


# ---------------------------------------------------------------------------
# latency: does compiling pay off?


def latency_check(session: Session, baselines: Baselines, emit: Emit, resolution) -> None:
    base = baselines.get(resolution)
    if base is None:
        return
    args, kwargs, *_ = base

    def median_ms(fn: Callable) -> float:
        samples = []
        for _ in range(LATENCY_RUNS):
            start = time.perf_counter()
            session.call(fn, args, kwargs)
            session.synchronize()
            samples.append((time.perf_counter() - start) * 1000)
        return statistics.median(samples)

    reset_compiler()
    compiled = session.compile(session.target, "default", False)
    start = time.perf_counter()
    session.call(compiled.fn, args, kwargs)
    session.synchronize()
    compile_s = time.perf_counter() - start
    session.call(session.target, args, kwargs)  # warm eager's caches too
    eager_ms, compiled_ms = median_ms(session.target), median_ms(compiled.fn)
    saved_ms = eager_ms - compiled_ms
    result = CheckResult(name="latency", status=PASS, verdict="pays-off" if saved_ms > 0 else "slower",
                         mode="default", dynamic=False, dtype="float32", shape=input_shapes(args, kwargs))
    result.times = {"compile_s": round(compile_s, 3), "eager_ms": round(eager_ms, 4),
                    "compiled_ms": round(compiled_ms, 4), "speedup": round(eager_ms / compiled_ms, 3)}
    if saved_ms > 0:
        calls = compile_s * 1000 / saved_ms
        result.times["break_even_calls"] = round(calls)
        result.message = (f"compiled {eager_ms / compiled_ms:.2f}x faster ({compiled_ms:.3f} vs {eager_ms:.3f} ms, "
                          f"median of {LATENCY_RUNS}); the {compile_s:.1f} s compile pays off after ~{calls:.0f} calls")
    else:
        result.message = (f"compiled is not faster at this size ({compiled_ms:.3f} vs {eager_ms:.3f} ms eager, "
                          f"median of {LATENCY_RUNS}); the {compile_s:.1f} s compile does not pay off here")
    emit(result)
