"""The process that verifies one target: `python -m compile_lint.verify.worker JOB RESULTS`.

Runs in its own subprocess (runner.py) so that a crash, a hang or an out-of-memory in
the user's code costs only this target. Results are appended to RESULTS as JSON lines as
soon as each check ends, so a target killed for its timeout keeps what it had measured.
"""
from __future__ import annotations

import contextlib
import json
import signal
import sys
import traceback
from typing import Callable

from .config import CUDA_ONLY_MODES, InputSpec, default_modes
from .results import COULD_NOT_CHECK, ERROR, SKIPPED, CheckResult


class CheckTimeout(BaseException):
    """A check ran past its --check-timeout. A BaseException, so that the `except
    Exception` of Dynamo, Inductor and the checks themselves do not turn it into a
    compile error."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise CheckTimeout in this (the main) thread after `seconds`. SIGALRM interrupts
    Python code and the waits on Inductor's compiler subprocesses; a C call that never
    returns is left to the per-target timeout, which kills the worker."""
    if not seconds or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum, frame):
        raise CheckTimeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Events:
    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")

    def write(self, event: dict) -> None:
        self._file.write(json.dumps(event) + "\n")
        self._file.flush()

    def check(self, result: CheckResult) -> None:
        self.write({"event": "check", "result": result.to_json()})


def plan_checks(spec: dict, options: dict) -> list[str]:
    """The checks that apply to this target, in the order they run."""
    chosen = spec.get("checks") or options.get("checks")
    if chosen:
        return list(chosen)
    codes = set(spec.get("codes") or [])
    kinds = set(spec.get("region_kinds") or [])
    checks = ["forward"]
    if low_precision_dtypes(spec, options):
        checks.append("low-precision")
    if not options.get("quick"):
        checks.append("gradients")
    if codes & {"CL101", "CL104"} or "traced" in kinds:
        checks.append("traced")
    if "CL102" in codes or spec.get("mutate"):
        checks.append("frozen-state")
    if "CL202" in codes:
        checks.append("recompile-sweep")
    for name, code in (("held-outputs", "CL401"), ("cudagraph-sizes", "CL402"), ("input-mutation", "CL403")):
        if code in codes or "cudagraph" in kinds:
            checks.append(name)
    if options.get("full") and not options.get("quick"):
        checks.append("latency")
    return checks


def low_precision_dtypes(spec: dict, options: dict) -> list[str]:
    asked = spec.get("dtypes") or options.get("dtypes") or []
    if not asked and set(spec.get("codes") or []) & {"CL301", "CL302"}:
        asked = ["float16", "bfloat16"]
    return [d for d in asked if d in ("float16", "bfloat16", "float64")]


def forward_plan(session, baselines, emit, modes: list, dynamics: list, full: bool) -> None:
    """The forward comparisons. With --full, or for a target with findings (CL103 shows
    at some sizes only), every mode x dynamic x resolution. Otherwise one static compile
    at the first resolution and one dynamic compile run at every resolution: two
    compiles instead of one per resolution, the same sizes seen."""
    from . import checks

    resolutions = session.resolutions
    if full or session.codes or len(resolutions) < 2 or dynamics != [False, True]:
        checks.forward_check(session, baselines, emit, modes, dynamics, resolutions)
        return
    checks.forward_check(session, baselines, emit, modes, [False], resolutions[:1])
    # First a size with H != W: traced at 16x16, Dynamo ties H to W (duck sizing) and
    # recompiles at the next non-square size.
    checks.forward_check(session, baselines, emit, modes, [True], sorted(resolutions, key=lambda r: r[0] == r[1]))


def run(job: dict, events: Events) -> None:
    import torch

    from . import checks, tracing
    from .inputs import synthesise
    from .loader import TargetProblem, construct, import_target
    from .session import Session

    spec, options = job["target"], job["options"]
    device = options["device"]
    name = spec["qualname"]
    try:
        loaded = import_target(spec)
        torch.manual_seed(options.get("seed", 0))  # the same weights in every run
        target = construct(loaded, spec.get("args") or [], spec.get("kwargs") or {}, name, options, spec["ref"])
        if spec.get("inputs") is not None:
            input_specs, synthesised = [InputSpec(**i) for i in spec["inputs"]], False
        else:
            input_specs, synthesised = synthesise(target, spec["ref"], name, options), True
            if spec.get("value_range"):  # from config, or from what the code compares against
                for input_spec in input_specs:
                    if input_spec.shape is not None and input_spec.dtype.startswith(("float", "bfloat")):
                        input_spec.range = tuple(spec["value_range"])
    except TargetProblem as problem:
        events.check(CheckResult(name="inputs" if problem.skipped else "load",
                                 status=SKIPPED if problem.skipped else ERROR,
                                 verdict="cannot-call" if problem.skipped else "cannot-load",
                                 message=str(problem)))
        return
    described = [i.describe() for i in input_specs]
    if synthesised and spec.get("range_reason"):
        described = [f"{d} ({spec['range_reason']})" if "[" in d else d for d in described]
    events.write({"event": "inputs", "synthesised": synthesised, "inputs": described})
    if isinstance(target, torch.nn.Module):
        target.to(device)
        train = spec.get("train")
        if train is None:
            train = "CL303" in (spec.get("codes") or [])  # dropout draws random numbers only in train mode
        target.train(train)

    session = Session(target, input_specs, options, spec, synthesised)
    baselines = checks.Baselines(session, events.check)
    events.write({"event": "start", "check": "eager baseline"})
    if all(baselines.get(r) is None for r in session.resolutions):
        hint = ("the synthesised inputs do not fit it; add inputs = [...] to its [[verify.targets]] entry"
                if synthesised else "the configured inputs do not fit it")
        events.check(CheckResult(name="inputs", status=SKIPPED if synthesised else ERROR, verdict="eager-fails",
                                 message=f"eager fails at every resolution: {hint}"))
        return

    modes = spec.get("modes") or options.get("modes") or default_modes(device, bool(options.get("full")))
    if device != "cuda":
        for mode in [m for m in modes if m in CUDA_ONLY_MODES]:
            events.check(CheckResult(name="forward", status=SKIPPED, verdict="cuda-only", mode=mode,
                                     message=f"not checkable on cpu: {mode} uses CUDA graphs"))
        modes = [m for m in modes if m not in CUDA_ONLY_MODES]
    dynamics = [bool(d) for d in options.get("dynamic", [False, True])]
    if options.get("quick"):
        modes, dynamics = modes[:1], dynamics[:1]
    first = session.resolutions[0]
    runners: dict[str, Callable[[], None]] = {
        "forward": lambda: forward_plan(session, baselines, events.check, modes, dynamics, bool(options.get("full"))),
        "low-precision": lambda: checks.low_precision_check(session, baselines, events.check,
                                                            low_precision_dtypes(spec, options) or ["float16", "bfloat16"],
                                                            session.resolutions),
        "gradients": lambda: checks.gradients_check(session, baselines, events.check, first),
        "traced": lambda: tracing.traced_check(session, baselines, events.check),
        "frozen-state": lambda: tracing.frozen_state_check(session, baselines, events.check),
        "recompile-sweep": lambda: checks.recompile_sweep_check(session, baselines, events.check),
        "latency": lambda: checks.latency_check(session, baselines, events.check, first),
    }
    for check in plan_checks(spec, options):
        events.write({"event": "start", "check": check})
        limit = float(options.get("check_timeout") or 0)
        try:
            with time_limit(limit):
                if check in checks.CUDA_CHECKS:
                    checks.cuda_graph_checks(session, baselines, events.check, [check])
                else:
                    runners[check]()
        except CheckTimeout:
            events.check(CheckResult(name=check, status=COULD_NOT_CHECK, verdict="timeout",
                                     message=f"the {check} check ran past --check-timeout {limit:g} s; "
                                             "the results before it are kept"))
            session.reset_after_timeout()
        except Exception as exc:  # a failing check is reported; the other checks still run
            where = traceback.extract_tb(exc.__traceback__)[-1]
            events.check(CheckResult(
                name=check, status=ERROR, verdict="check-failed",
                message=f"{type(exc).__name__}: {str(exc)[:600]} (at {where.filename}:{where.lineno})"))


def main(argv: list[str]) -> int:
    job_path, results_path = argv
    with open(job_path, encoding="utf-8") as fh:
        job = json.load(fh)
    events = Events(results_path)
    run(job, events)
    events.write({"event": "done"})
    return 0


if __name__ == "__main__":
    from ..children import die_with_parent

    die_with_parent()  # a fresh interpreter started by runner.SpawnLauncher
    sys.exit(main(sys.argv[1:]))
