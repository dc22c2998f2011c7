"""Subprocess isolation: each target runs in its own worker process with a timeout.

No torch here. A crash, a hang, an out-of-memory kill or an exception in one target
is reported with its message and the checks it finished; the other targets still run.
"""
from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import wait as wait_futures
from typing import Callable, Optional

from ..children import child_environment
from .config import TargetSpec
from .plan import DYNAMO, INDUCTOR, MORE, STAGE_NAMES, estimate, split_recompiling_sizes, stage_units
from .results import COULD_NOT_CHECK, ERROR, INTERRUPTED, NOT_RUN, CheckResult, TargetResult, finish

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STDERR_TAIL_LINES = 6


def worker_environment(jobs: int) -> dict:
    env = child_environment()  # the worker dies with this process (children.py)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    if jobs > 1:
        # Share the cores between the workers instead of each taking all of them.
        threads = str(max(1, (os.cpu_count() or 1) // jobs))
        env.setdefault("OMP_NUM_THREADS", threads)
        env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    return env


def probe_torch(python: str = sys.executable) -> dict:
    """Whether torch imports in the worker's interpreter, its version, and CUDA."""
    code = ("import json, torch; print(json.dumps({'version': torch.__version__, "
            "'cuda': bool(torch.cuda.is_available())}))")
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"ok": False, "error": str(exc)}
    if done.returncode != 0:
        return {"ok": False, "error": (done.stderr.strip().splitlines() or ["torch failed to import"])[-1]}
    lines = done.stdout.strip().splitlines()  # the last line: torch may print warnings first
    return {"ok": True, **json.loads(lines[-1])}


class Interrupted(BaseException):
    """SIGTERM or SIGINT reached verify: stop, and report what finished. A BaseException
    like KeyboardInterrupt, so that no `except Exception` on the way swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Runner:
    """Runs the plan's units (plan.py), each in a worker process, in the plan's order:
    every target's Dynamo stage, then the Inductor stage, then the rest. Later stages of
    a target take the inputs its first stage made. With a budget, a unit that cannot
    fit is not started and a worker still running at the deadline is stopped; what did
    not run is reported not-run (verdict "budget")."""

    def __init__(self, options: dict, jobs: int, timeout: float,
                 on_done: Optional[Callable[[TargetResult], None]] = None,
                 on_start: Optional[Callable[[TargetSpec], None]] = None, deadline: Optional[float] = None,
                 budget: float = 0.0, on_skip: Optional[Callable] = None,
                 on_added: Optional[Callable] = None) -> None:
        self.options = options
        self.jobs = max(1, jobs)
        self.timeout = timeout
        self.on_done = on_done
        self.on_start = on_start
        self.on_skip = on_skip
        self.on_added = on_added  # a target got a stage more after its Dynamo pass: called with 1
        self.deadline = deadline  # time.time() by which the run must be done (None: no budget)
        self.budget = budget
        self._live: dict = {}
        self._lock = threading.Lock()
        self.launcher = None
        self.stopping = False
        self.stopped_at: Optional[float] = None
        self.rates: dict = {}  # measured Inductor seconds per graph node, per step kind (plan.py)
        self._observed: dict = {}
        self.results: dict = {}  # ref -> TargetResult
        self.state: dict = {}  # ref -> what the target's earlier stages found (inputs, dropped)

    def run(self, plans: list) -> list[TargetResult]:
        """Every target's result, in the targets' order. On Interrupted (raised by the
        caller's signal handler in the main thread) the workers are killed at once;
        targets that had not finished are "not-run", and the exception's `results` holds
        the list."""
        if not plans:
            return []
        for plan in plans:
            self.results[plan.spec.ref] = TargetResult(target=plan.spec.ref, status=ERROR, codes=list(plan.spec.codes),
                                                       trained=plan.spec.trained, built=plan.spec.build_call())
            self.state[plan.spec.ref] = {"done": [], "plan": plan}
        pool = ThreadPoolExecutor(max_workers=self.jobs)
        futures = []
        try:
            self.launcher = make_launcher(self.options["device"], self.jobs)
            # stage by stage: each stage is ordered by the estimates the stages before it
            # refined (the Dynamo pass counts the graphs), cheapest first
            for stage in (DYNAMO, INDUCTOR, MORE):
                if stage != DYNAMO:
                    rates = self._rates()
                    for plan in plans:
                        if plan.nodes is not None:
                            estimate(plan, self.options["device"], rates)
                stage_futures = [pool.submit(self._run_unit, unit) for unit in stage_units(plans, stage)]
                futures.extend(stage_futures)
                for future in stage_futures:
                    while True:  # short waits: the main thread must stay responsive to signals
                        try:
                            future.result(timeout=0.2)
                            break
                        except FutureTimeout:
                            continue
            return [self._finished(plan, None) for plan in plans]
        except (KeyboardInterrupt, Interrupted) as exc:
            self.stopping = True
            self.stopped_at = time.time()
            self.kill_all()  # before anything waits for the threads, which wait for the workers
            wait_futures(futures, timeout=3)  # the killed targets' threads collect what they measured
            exc.results = [self._finished(plan, "interrupted before it finished") for plan in plans]
            raise
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
            if self.launcher is not None:
                self.launcher.close(kill=self.stopping)

    def _finished(self, plan, interrupted: Optional[str]) -> TargetResult:
        result = self.results[plan.spec.ref]
        state = self.state[plan.spec.ref]
        with self._lock:
            checks = list(result.checks)
            if interrupted and not state.get("complete"):
                if not any(c.status == NOT_RUN and c.verdict == INTERRUPTED for c in checks):
                    checks.append(CheckResult(name="worker", status=NOT_RUN, verdict=INTERRUPTED,
                                              message=interrupted if state["done"] else "interrupted before it started"))
            for check in plan.decided:
                if not any(c.name == check["name"] for c in checks):
                    checks.append(CheckResult(**check))
            result.checks = checks
        return finish(result)

    def kill_all(self) -> None:
        with self._lock:
            for handle in list(self._live.values()):
                handle.kill()

    def _run_unit(self, unit) -> None:
        try:
            self._unit(unit)
        except Exception as exc:  # never leave a target without a word: report it
            with self._lock:
                self.results[unit.ref].checks.append(CheckResult(
                    name="worker", status=ERROR, verdict="verify-failed", message=f"{type(exc).__name__}: {exc}"))

    def _unit(self, unit) -> None:
        state = self.state[unit.ref]
        result = self.results[unit.ref]
        if self.stopping or state.get("dropped"):
            if state.get("dropped") and self.on_skip:
                self.on_skip(unit, "not run (an earlier stage could not build, run or finish it)")
            return
        plan = unit.plan
        if unit.stage > 0 and plan.nodes is not None:
            estimate(plan, self.options["device"], self._rates())
        steps = list(unit.steps)
        remaining = None if self.deadline is None else self.deadline - time.time()
        if remaining is not None and steps and (remaining <= 0 or min(s.estimate_s for s in steps) > remaining):
            with self._lock:
                result.checks.extend(_left_out(step, remaining, self.budget) for step in steps)
            state["done"].append(unit.stage)
            self._maybe_complete(unit)
            if self.on_skip:
                self.on_skip(unit, "not run (budget)")
            return
        if self.on_start:
            self.on_start(unit)
        self.run_one(unit, steps, remaining)
        state["done"].append(unit.stage)
        self._maybe_complete(unit)
        if self.on_done:
            self.on_done(unit, result)

    def _maybe_complete(self, unit) -> None:
        state = self.state[unit.ref]
        stages = {s.stage for s in unit.plan.steps} or {0}
        if state.get("dropped") or stages <= set(state["done"]):
            state["complete"] = True

    def _rates(self) -> dict:
        with self._lock:
            return {kind: statistics.median(values) for kind, values in self._observed.items() if values}

    def _observe(self, unit, checks: list) -> None:
        """Learn Inductor seconds per graph node from this unit's compiles."""
        nodes = unit.plan.nodes
        if not nodes:
            return
        for check in checks:
            seconds = (check.times or {}).get("compile_s")
            if not seconds or check.backend != "inductor" or check.name not in ("forward", "gradients", "low-precision"):
                continue
            kind = "forward-static" if check.name == "forward" and check.dynamic is False else check.name
            with self._lock:
                self._observed.setdefault(kind, []).append(seconds / nodes)

    def job_spec(self, unit) -> dict:
        spec = unit.plan.spec.to_json()
        found = self.state[unit.ref].get("inputs")
        if found and spec.get("inputs") is None:
            spec["inputs"] = found["specs"]
            spec["synthesised_inputs"] = found["synthesised"]
            if found.get("resolutions"):
                spec["resolutions"] = found["resolutions"]
        return spec

    def run_one(self, unit, steps: list, remaining: Optional[float]) -> None:
        spec = unit.plan.spec
        timeout = spec.timeout or self.timeout
        by_budget = remaining is not None and remaining + BUDGET_GRACE_S < timeout
        if by_budget:
            timeout = max(1.0, remaining + BUDGET_GRACE_S)
        result = self.results[unit.ref]
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="compile-lint-verify-") as scratch:
            job_path = os.path.join(scratch, "job.json")
            events_path = os.path.join(scratch, "events.jsonl")
            stderr_path = os.path.join(scratch, "stderr.txt")
            with open(job_path, "w", encoding="utf-8") as fh:
                json.dump({"target": self.job_spec(unit), "options": self.options, "stage": unit.stage,
                           "steps": [s.to_json() for s in steps], "deadline": self.deadline}, fh)
            launched = time.time()  # the events' clock (worker.Events stamps time.time())
            try:
                handle = self.launcher.start(job_path, events_path, stderr_path)
            except (OSError, RuntimeError) as exc:
                with self._lock:
                    result.checks.append(CheckResult(name="worker", status=ERROR, verdict="cannot-start",
                                                     message=f"could not start a worker process: {exc}"))
                return
            with self._lock:
                self._live[handle.pid] = handle
                if self.stopping:
                    handle.kill()
            try:
                returncode = handle.wait(timeout)
                timed_out = returncode is None
                if timed_out:
                    handle.kill()
                    handle.wait(None)
            finally:
                with self._lock:
                    self._live.pop(handle.pid, None)
            events = _read_events(events_path)
            stderr_tail = _tail(stderr_path)
        wall_s = round(time.monotonic() - started, 2)
        self.collect(unit, steps, events, returncode, timed_out, by_budget, timeout, stderr_tail, wall_s, launched)

    def collect(self, unit, steps: list, events: list, returncode: Optional[int], timed_out: bool, by_budget: bool,
                timeout: float, stderr_tail: list, wall_s: float, launched: Optional[float] = None) -> None:
        """Turn one worker's events into the target's checks."""
        result = self.results[unit.ref]
        worker = worker_phases(unit, events, wall_s, launched)
        checks: list = []
        current_check, current_step = None, None
        finished, interrupted_itself = False, False
        state = self.state[unit.ref]
        started_labels = set()
        for event in events:
            kind = event.get("event")
            # what ended after verify itself was signalled may be the signal's doing
            # (a compile cut short): not a result of the code
            after_stop = self.stopping and self.stopped_at is not None and event.get("t", 0) >= self.stopped_at
            if kind == "check":
                if not after_stop:
                    checks.append(CheckResult.from_json(event["result"]))
            elif kind == "inputs":
                state["inputs"] = {"specs": event.get("specs"), "synthesised": event.get("synthesised"),
                                   "resolutions": event.get("resolutions")}
                result.inputs = event["inputs"]
                result.inputs_config = event.get("config")
                result.resolutions = event.get("resolutions") or []
            elif kind == "usable" and state.get("inputs"):
                state["inputs"]["resolutions"] = event.get("resolutions")
            elif kind == "built":
                result.built = event.get("built")
                state["kind"] = event.get("kind")
            elif kind == "start":
                current_check, current_step = event["check"], event.get("step")
                started_labels.add(current_step)
            elif kind == "interrupted":
                interrupted_itself = True
            elif kind == "done":
                finished = not after_stop
        dynamo = [c for c in checks if c.name == "dynamo" and c.graph_nodes]
        if dynamo:
            compiles = max(1, sum(1 for c in dynamo if (c.times or {}).get("compile_s")))
            unit.plan.compiles = compiles
            unit.plan.nodes = max(1, max(c.graph_nodes for c in dynamo) // compiles)
            unit.plan.sizes = max(1, len(dynamo))
            shared, recompiled = _sizes_by_graph(dynamo)
            had_more = any(s.stage == MORE for s in unit.plan.steps)
            if split_recompiling_sizes(unit.plan, shared, recompiled) and not had_more and self.on_added:
                self.on_added(1)  # a worker more (progress counts it)
        if any(c.name in ("inputs", "load") for c in checks):
            state["dropped"] = True  # it could not be built, called or run eagerly: no later stage
        self._observe(unit, checks)
        if timed_out and by_budget:
            for step in steps:
                if step.label() == current_step or step.label() not in started_labels:
                    checks.append(_left_out(step, 0.0, self.budget, stopped=step.label() == current_step))
        elif timed_out:
            state["dropped"] = True  # its next stages would hang the same way
            where = f" during {_step(current_check)}" if current_check else ""
            checks.append(CheckResult(
                name="worker", status=COULD_NOT_CHECK, verdict="timeout",
                message=f"timed out after {timeout:g} s{where}; the checks before it are kept"))
        elif self.stopping and not finished or interrupted_itself:
            checks.append(CheckResult(name="worker", status=NOT_RUN, verdict=INTERRUPTED,
                                      message=f"interrupted{where_of(current_check)}"))
        elif not finished or returncode != 0:
            state["dropped"] = True  # a crash costs this target alone: its next stages would crash too
            checks.append(CheckResult(
                name="worker", status=ERROR, verdict="crash",
                message=_crash_message(returncode, current_check, stderr_tail)))
        with self._lock:
            result.checks.extend(checks)
            result.wall_s = round((result.wall_s or 0.0) + wall_s, 2)
            result.workers.append(worker)


def worker_phases(unit, events: list, wall_s: float, launched: Optional[float]) -> dict:
    """Where one worker's seconds went, from its events' timestamps: `ready_s` from its
    launch to the target built (interpreter start or fork, imports, CUDA where it is
    used, the target's module and constructor), `baselines_s` for the eager and float64
    baselines, `checks_s` for the steps. On an H200 each unit took 17-24 s beyond its
    compiles, unsplit (bench/results.md, "GPU run"): this says where."""
    times: dict = {}
    for event in events:
        kind = event.get("event")
        if kind == "start":  # the baselines start first, then each step
            kind = "baselines" if event.get("check") == "eager baseline" else "steps"
        if kind in ("built", "baselines", "steps", "done") and "t" in event:
            times.setdefault(kind, event["t"])
    phases = {"stage": STAGE_NAMES[unit.stage], "wall_s": wall_s}

    def span(start: Optional[float], end: Optional[float]) -> Optional[float]:
        return round(end - start, 2) if start is not None and end is not None else None

    phases["ready_s"] = span(launched, times.get("built"))
    phases["baselines_s"] = span(times.get("baselines"), times.get("steps"))
    phases["checks_s"] = span(times.get("steps"), times.get("done"))
    return phases


BUDGET_GRACE_S = 3.0  # a worker past the deadline gets this long to stop by itself


def _left_out(step, remaining: Optional[float], budget: float, stopped: bool = False) -> CheckResult:
    from .worker import budget_left_out

    if stopped:
        return budget_left_out(step, "(stopped when the budget ran out; the results before it are kept)")
    left = f"{max(remaining or 0.0, 0.0):.0f} s of the {budget:.0f} s budget left" if budget else "no time left"
    return budget_left_out(step, f"(~{step.estimate_s:.0f} s; {left})")


def not_run(spec: TargetSpec, why: str) -> TargetResult:
    return finish(TargetResult(target=spec.ref, status=NOT_RUN, codes=list(spec.codes),
                               checks=[CheckResult(name="worker", status=NOT_RUN, verdict=INTERRUPTED,
                                                   message=why)]))


def where_of(check: Optional[str]) -> str:
    return f" during {_step(check)}" if check else ""


def _kill_group(pid: int) -> None:
    """SIGKILL a worker and its process group (Inductor's helpers), or the worker alone
    when it has not made its own group yet."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


# ---- launchers: how a worker process comes to be ----

class SpawnedWorker:
    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.pid = proc.pid

    def wait(self, timeout: Optional[float]) -> Optional[int]:
        """The exit status (negative: killed by that signal), or None on timeout."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        _kill_group(self.pid)


class SpawnLauncher:
    """A fresh interpreter per target (CUDA, and where fork is not safe)."""

    def __init__(self, jobs: int) -> None:
        self.env = worker_environment(jobs)

    def start(self, job_path: str, events_path: str, stderr_path: str) -> SpawnedWorker:
        with open(stderr_path, "wb") as stderr:
            proc = subprocess.Popen(
                [sys.executable, "-m", "compile_lint.verify.worker", job_path, events_path],
                stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr, env=self.env,
                start_new_session=True,  # its own process group: a timeout kills inductor's helpers too
            )
        return SpawnedWorker(proc)

    def close(self, kill: bool = False) -> None:
        pass


class ForkedWorker:
    def __init__(self, pid: int, server: "ForkServerLauncher") -> None:
        self.pid = pid
        self.server = server

    def wait(self, timeout: Optional[float]) -> Optional[int]:
        return self.server.wait_for(self.pid, timeout)

    def kill(self) -> None:
        _kill_group(self.pid)  # the child called setsid(): its pid is its group


class ForkServerLauncher:
    """Workers forked from a server that imported torch and warmed up Inductor once
    (forkserver.py says why, and when it refuses to fork). Where the server refuses or
    has died, targets get a fresh interpreter instead (SpawnLauncher)."""

    def __init__(self, jobs: int) -> None:
        self._log = tempfile.TemporaryFile()
        env = worker_environment(jobs)
        # No Inductor compile pool in the server: a forked child would wait forever on
        # futures that only the pool's threads (absent in the child) could complete.
        env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "compile_lint.verify.forkserver"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._log, env=env, start_new_session=True)
        ready = self.proc.stdout.readline()
        message = json.loads(ready) if ready.strip() else {}
        if not message.get("ready"):
            self._log.seek(0)
            lines = self._log.read().decode("utf-8", "replace").strip().splitlines()
            self.close(kill=True)
            raise RuntimeError(message.get("why") or (lines[-1] if lines else "fork server exited"))
        self._cond = threading.Condition()
        self._pids: dict[int, int] = {}  # request id -> pid
        self._refused: dict[int, str] = {}  # request id -> why the server did not fork
        self._status: dict[int, int] = {}  # pid -> exit status
        self._next_id = 0
        self.server_gone = False
        self._fallback: Optional[SpawnLauncher] = None
        self._jobs = jobs
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for line in self.proc.stdout:
                message = json.loads(line)
                with self._cond:
                    if "error" in message:
                        self._refused[message["id"]] = message["error"]
                    elif "id" in message:
                        self._pids[message["id"]] = message["pid"]
                    else:
                        self._status[message["pid"]] = message["status"]
                    self._cond.notify_all()
        except (OSError, ValueError):
            pass
        with self._cond:  # the server died (watchdog): nothing more will be forked or reaped
            self.server_gone = True
            self._cond.notify_all()

    def _spawn(self, job_path: str, events_path: str, stderr_path: str) -> SpawnedWorker:
        if self._fallback is None:
            self._fallback = SpawnLauncher(self._jobs)
        return self._fallback.start(job_path, events_path, stderr_path)

    def start(self, job_path: str, events_path: str, stderr_path: str):
        with self._cond:
            if self.server_gone:
                return self._spawn(job_path, events_path, stderr_path)
            request_id = self._next_id
            self._next_id += 1
            try:
                self.proc.stdin.write((json.dumps({"id": request_id, "job": job_path, "events": events_path,
                                                   "stderr": stderr_path}) + "\n").encode())
                self.proc.stdin.flush()
            except (OSError, ValueError):
                return self._spawn(job_path, events_path, stderr_path)
            while request_id not in self._pids:
                if request_id in self._refused or self.server_gone:
                    self._refused.pop(request_id, None)
                    return self._spawn(job_path, events_path, stderr_path)
                self._cond.wait(timeout=5)
            return ForkedWorker(self._pids.pop(request_id), self)

    def wait_for(self, pid: int, timeout: Optional[float]) -> Optional[int]:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while pid not in self._status:
                if self.server_gone:  # its children died with it (children.py)
                    _kill_group(pid)
                    return -signal.SIGKILL
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._cond.wait(timeout=min(remaining, 5.0) if remaining is not None else 5.0)
            return self._status.pop(pid)

    def close(self, kill: bool = False) -> None:
        if kill:
            _kill_group(self.proc.pid)
        try:
            self.proc.stdin.close()  # the server exits once its children are reaped
            self.proc.wait(timeout=30)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            _kill_group(self.proc.pid)
            self.proc.wait()
        self._log.close()


def make_launcher(device: str, jobs: int):
    if device == "cpu" and sys.platform.startswith("linux") and os.environ.get("COMPILE_LINT_VERIFY_NO_FORK") != "1":
        try:
            return ForkServerLauncher(jobs)
        except (OSError, RuntimeError, ValueError):
            pass  # fall back to a fresh interpreter per target
    return SpawnLauncher(jobs)


def _sizes_by_graph(dynamo: list) -> tuple[list, list]:
    """The resolutions the Dynamo pass's dynamic graph covered, and those where a guard
    failed and it recompiled (the recompile count grew at that size). After a reset (a
    divergence is rerun) the count starts again: no size is counted twice."""
    shared, recompiled, before = [], [], 0
    for check in dynamo:
        resolution = (check.detail or {}).get("resolution")
        if not resolution or check.dynamic is not True:
            continue
        count = check.recompiles or 0
        (recompiled if count > before else shared).append(list(resolution))
        before = count
    return shared, recompiled


def _read_events(path: str) -> list[dict]:
    events = []
    if not os.path.exists(path):
        return events
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                break  # the worker died mid-line
    return events


def _tail(path: str) -> list[str]:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 16384))
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-STDERR_TAIL_LINES:]


def _step(check: str) -> str:
    return check if check == "eager baseline" else f"the {check} check"


def _crash_message(returncode: Optional[int], check: Optional[str], stderr_tail: list[str]) -> str:
    where = f" during {_step(check)}" if check else ""
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        why = " (out of memory?)" if name == "SIGKILL" else ""
        head = f"the worker was killed by {name}{why}{where}"
    else:
        head = f"the worker exited with status {returncode}{where}"
    last = stderr_tail[-1] if stderr_tail else ""
    return f"{head}: {last}" if last else head
