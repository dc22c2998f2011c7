"""The process that verifies one target: `python -m compile_lint.verify.worker JOB RESULTS`.

Runs in its own subprocess (runner.py) so that a crash, a hang or an out-of-memory in
the user's code costs only this target. A job is one stage of the target's plan
(plan.py): the steps to run, in order, and the run's deadline. Results are appended to
RESULTS as JSON lines as soon as each check ends, so a target killed for its timeout
keeps what it had measured.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
import traceback
from typing import Optional

from .config import CUDA_ONLY_MODES, InputSpec
from .plan import CUDA_CHECKS, Step
from .results import BUDGET, COULD_NOT_CHECK, ERROR, NOT_RUN, SKIPPED, CheckResult


class CheckTimeout(BaseException):
    """A check ran past its --check-timeout (or the run's deadline). A BaseException, so
    that the `except Exception` of Dynamo, Inductor and the checks themselves do not turn
    it into a compile error."""

    def __init__(self, budget: bool = False) -> None:
        super().__init__("budget" if budget else "check-timeout")
        self.budget = budget


@contextlib.contextmanager
def time_limit(seconds: float, budget: bool = False):
    """Raise CheckTimeout in this (the main) thread after `seconds`. SIGALRM interrupts
    Python code and the waits on Inductor's compiler subprocesses; a C call that never
    returns is left to the per-target timeout, which kills the worker."""
    if not seconds or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum, frame):
        raise CheckTimeout(budget)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.01))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Events:
    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")

    def write(self, event: dict) -> None:
        # the time lets the parent tell what happened before and after it was signalled
        self._file.write(json.dumps({**event, "t": time.time()}) + "\n")
        self._file.flush()

    def check(self, result: CheckResult) -> None:
        self.write({"event": "check", "result": result.to_json()})


def stop_on_signals(events: Events) -> None:
    """SIGINT/SIGTERM reaching this worker (a Ctrl-C of the whole process group, the
    run's own signal): leave at once, saying so, instead of letting the signal surface
    inside a compile as an error of the code (Inductor wraps what a compile raises)."""

    def leave(signum, frame):
        try:
            events.write({"event": "interrupted", "signal": signum})
        finally:
            os._exit(128 + signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, leave)


def budget_left_out(step: Step, why: str) -> CheckResult:
    return CheckResult(name=step.check, status=NOT_RUN, verdict=BUDGET, mode=step.mode if step.check == "forward" else None,
                       dynamic=step.dynamic if step.check in ("forward", "dynamo") else None,
                       backend=step.backend if step.backend in ("inductor", "aot_eager", "eager") else None,
                       message=f"not run (budget): {step.label()} {why}")


def _load(spec: dict, options: dict, events: Events):
    """The target built as the project builds it, and its inputs; None when it cannot be."""
    import torch

    from .inputs import synthesise
    from .loader import TargetProblem, build, import_target

    name = spec["qualname"]
    try:
        loaded = import_target(spec)
        torch.manual_seed(options.get("seed", 0))  # the same weights in every run
        target, built = build(loaded, spec, options)
        if isinstance(target, torch.nn.Module):
            target.to(options["device"])
            train = spec.get("train")
            if train is None:
                train = "CL303" in (spec.get("codes") or [])  # dropout draws random numbers only in train mode
            target.train(train)  # before inputs are tried: batch norm takes one sample only in eval mode
        if spec.get("inputs") is not None:
            input_specs = [InputSpec.from_json(i) for i in spec["inputs"]]
            synthesised = bool(spec.get("synthesised_inputs"))
            resolutions = spec.get("resolutions")
        else:
            input_specs, resolutions = synthesise(target, spec["ref"], name, options)
            synthesised = True
            if spec.get("value_range"):  # from config, or from what the code compares against
                for input_spec in input_specs:
                    if input_spec.shape is not None and input_spec.dtype.startswith(("float", "bfloat")):
                        input_spec.range = tuple(spec["value_range"])
    except TargetProblem as problem:
        events.check(CheckResult(name="inputs" if problem.skipped else "load",
                                 status=SKIPPED if problem.skipped else ERROR,
                                 verdict="cannot-call" if problem.skipped else "cannot-load",
                                 message=str(problem)))
        return None
    kind = "factory" if spec.get("factory") else "class" if loaded.is_module_class else "function"
    return target, built, kind, input_specs, synthesised, resolutions


def _describe_inputs(input_specs: list, synthesised: bool, spec: dict) -> list:
    described = [i.describe() for i in input_specs]
    if synthesised and spec.get("range_reason"):
        described = [f"{d} ({spec['range_reason']})" if "[" in d else d for d in described]
    return described


def run(job: dict, events: Events) -> None:
    import torch

    from . import checks, tracing
    from .inputs import inputs_entry
    from .session import Session

    spec, options = job["target"], job["options"]
    steps = [Step.from_json(s) for s in job.get("steps") or []]
    deadline: Optional[float] = job.get("deadline")
    device = options["device"]
    loaded = _load(spec, options, events)
    if loaded is None:
        return
    target, built, kind, input_specs, synthesised, resolutions = loaded
    if resolutions:
        spec = dict(spec, resolutions=resolutions)
    events.write({"event": "built", "built": built, "kind": kind})

    session = Session(target, input_specs, options, spec, synthesised)
    events.write({"event": "inputs", "synthesised": synthesised, "inputs": _describe_inputs(input_specs, synthesised, spec),
                  "specs": [i.to_json() for i in input_specs], "config": inputs_entry(input_specs),
                  "resolutions": session.resolutions if session.resolutions != [None] else []})
    baselines = checks.Baselines(session, events.check)
    events.write({"event": "start", "check": "eager baseline"})
    if all(baselines.get(r) is None for r in session.resolutions):
        if synthesised:
            from .inputs import target_entry, toml_value

            sizes = [f"{r[0]}x{r[1]}" for r in session.resolutions if r]
            entry = target_entry(spec["ref"], options, [
                inputs_entry(input_specs) + "  # what verify tried: give the shapes it takes"]
                + ([f"resolutions = {toml_value(sizes)}  # sizes it takes"] if sizes else []))
            hint = (f"the synthesised inputs do not fit it; add to {options.get('config_file') or 'compile-lint.toml'}:"
                    f"\n{entry}")
        else:
            hint = "the configured inputs do not fit it"
        events.check(CheckResult(name="inputs", status=SKIPPED if synthesised else ERROR, verdict="eager-fails",
                                 message=f"eager fails at every resolution: {hint}"))
        return

    usable = [r for r in session.resolutions if baselines.get(r) is not None]
    if usable != session.resolutions:
        # later stages run only where eager works here (said once, by this stage)
        events.write({"event": "usable", "resolutions": usable})
    first = session.resolutions[0]

    def every_size(dynamic: bool) -> list:
        # First a size with H != W: traced at 16x16, Dynamo ties H to W (duck sizing)
        # and recompiles at the next non-square size.
        sizes = list(session.resolutions)
        return sorted(sizes, key=lambda r: r is not None and r[0] == r[1]) if dynamic else sizes

    def run_step(step: Step) -> None:
        if step.check == "forward":
            if step.mode in CUDA_ONLY_MODES and device != "cuda":
                events.check(CheckResult(name="forward", status=SKIPPED, verdict="cuda-only", mode=step.mode,
                                         message=f"not checkable on cpu: {step.mode} uses CUDA graphs"))
                return
            if step.at:  # the sizes the Dynamo pass says one dynamic graph covers, or those it did not
                sizes = [r for r in every_size(bool(step.dynamic)) if r is not None and list(r) in step.at]
            else:
                sizes = [first] if step.sizes == "first" else every_size(bool(step.dynamic))
            checks.forward_check(session, baselines, events.check, [step.mode], [bool(step.dynamic)], sizes)
        elif step.check == "dynamo":
            sizes = [first] if step.sizes == "first" else every_size(bool(step.dynamic))
            checks.dynamo_check(session, baselines, events.check, bool(step.dynamic), sizes, step.backend)
        elif step.check == "low-precision":
            checks.low_precision_check(session, baselines, events.check, step.dtypes, session.resolutions)
        elif step.check == "gradients":
            checks.gradients_check(session, baselines, events.check, first)
        elif step.check == "traced":
            tracing.traced_check(session, baselines, events.check)
        elif step.check == "frozen-state":
            tracing.frozen_state_check(session, baselines, events.check)
        elif step.check == "recompile-sweep":
            checks.recompile_sweep_check(session, baselines, events.check, backend=step.backend)
        elif step.check in CUDA_CHECKS:
            checks.cuda_graph_checks(session, baselines, events.check, [step.check])
        elif step.check == "latency":
            checks.latency_check(session, baselines, events.check, first)

    for step in steps:
        limit = float(options.get("check_timeout") or 0)
        by_budget = False
        if deadline:
            remaining = deadline - time.time()
            if remaining <= 0 or step.estimate_s > remaining:
                events.write({"event": "start", "check": step.check, "step": step.label()})
                events.check(budget_left_out(step, f"(~{step.estimate_s:.0f} s; {max(remaining, 0):.0f} s of the "
                                                   f"budget left)"))
                continue
            if not limit or remaining < limit:
                limit, by_budget = remaining, True
        events.write({"event": "start", "check": step.check, "step": step.label()})
        try:
            with time_limit(limit, budget=by_budget):
                run_step(step)
        except CheckTimeout as stop:
            if stop.budget:
                events.check(budget_left_out(step, "(stopped when the budget ran out; the results before it are "
                                                   "kept)"))
            else:
                events.check(CheckResult(name=step.check, status=COULD_NOT_CHECK, verdict="timeout",
                                         message=f"the {step.check} check ran past --check-timeout {limit:g} s; "
                                                 "the results before it are kept"))
            session.reset_after_timeout()
        except Exception as exc:  # a failing check is reported; the other checks still run
            where = traceback.extract_tb(exc.__traceback__)[-1]
            events.check(CheckResult(
                name=step.check, status=ERROR, verdict="check-failed",
                message=f"{type(exc).__name__}: {str(exc)[:600]} (at {where.filename}:{where.lineno})"))


def main(argv: list[str]) -> int:
    job_path, results_path = argv
    with open(job_path, encoding="utf-8") as fh:
        job = json.load(fh)
    events = Events(results_path)
    stop_on_signals(events)
    run(job, events)
    events.write({"event": "done"})
    return 0


if __name__ == "__main__":
    from ..children import die_with_parent

    die_with_parent()  # a fresh interpreter started by runner.SpawnLauncher
    sys.exit(main(sys.argv[1:]))
