"""Subprocess isolation: each target runs in its own worker process with a timeout.

No torch here. A crash, a hang, an out-of-memory kill or an exception in one target
is reported with its message and the checks it finished; the other targets still run.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Optional

from .config import TargetSpec
from .results import ERROR, CheckResult, TargetResult, finish

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STDERR_TAIL_LINES = 6


def worker_environment(jobs: int) -> dict:
    env = dict(os.environ)
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


class Runner:
    def __init__(self, options: dict, jobs: int, timeout: float,
                 on_done: Optional[Callable[[TargetResult], None]] = None,
                 on_start: Optional[Callable[[TargetSpec], None]] = None) -> None:
        self.options = options
        self.jobs = max(1, jobs)
        self.timeout = timeout
        self.on_done = on_done
        self.on_start = on_start
        self._live: dict = {}
        self._lock = threading.Lock()
        self.launcher = None

    def run(self, specs: list[TargetSpec]) -> list[TargetResult]:
        if not specs:
            return []
        self.launcher = make_launcher(self.options["device"], self.jobs)
        pool = ThreadPoolExecutor(max_workers=self.jobs)
        try:
            return list(pool.map(self._run_and_report, specs))
        except KeyboardInterrupt:
            self.kill_all()  # before waiting for the threads, which wait for the workers
            raise
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
            self.launcher.close()

    def kill_all(self) -> None:
        with self._lock:
            for handle in list(self._live.values()):
                handle.kill()

    def _run_and_report(self, spec: TargetSpec) -> TargetResult:
        if self.on_start:
            self.on_start(spec)
        result = self.run_one(spec)
        if self.on_done:
            self.on_done(result)
        return result

    def run_one(self, spec: TargetSpec) -> TargetResult:
        timeout = spec.timeout or self.timeout
        result = TargetResult(target=spec.ref, status=ERROR, codes=list(spec.codes))
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="compile-lint-verify-") as scratch:
            job_path = os.path.join(scratch, "job.json")
            events_path = os.path.join(scratch, "events.jsonl")
            stderr_path = os.path.join(scratch, "stderr.txt")
            with open(job_path, "w", encoding="utf-8") as fh:
                json.dump({"target": spec.to_json(), "options": self.options}, fh)
            try:
                handle = self.launcher.start(job_path, events_path, stderr_path)
            except (OSError, RuntimeError) as exc:
                result.checks.append(CheckResult(name="worker", status=ERROR, verdict="cannot-start",
                                                 message=f"could not start a worker process: {exc}"))
                return finish(result)
            with self._lock:
                self._live[handle.pid] = handle
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
        result.wall_s = round(time.monotonic() - started, 2)
        current_check = None
        finished = False
        for event in events:
            kind = event.get("event")
            if kind == "check":
                result.checks.append(CheckResult.from_json(event["result"]))
            elif kind == "inputs":
                result.inputs = event["inputs"]
            elif kind == "start":
                current_check = event["check"]
            elif kind == "done":
                finished = True
        if timed_out:
            where = f" during {_step(current_check)}" if current_check else ""
            result.checks.append(CheckResult(
                name="worker", status=ERROR, verdict="timeout",
                message=f"timed out after {timeout:g} s{where}; the checks before it are kept"))
        elif not finished or returncode != 0:
            result.checks.append(CheckResult(
                name="worker", status=ERROR, verdict="crash",
                message=_crash_message(returncode, current_check, stderr_tail)))
        return finish(result)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
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

    def close(self) -> None:
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
    (forkserver.py says why)."""

    def __init__(self, jobs: int) -> None:
        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "compile_lint.verify.forkserver"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._log, env=worker_environment(jobs), start_new_session=True)
        ready = self.proc.stdout.readline()
        if not ready:
            self._log.seek(0)
            lines = self._log.read().decode("utf-8", "replace").strip().splitlines()
            raise RuntimeError(lines[-1] if lines else "fork server exited")
        self._cond = threading.Condition()
        self._pids: dict[int, int] = {}  # request id -> pid
        self._status: dict[int, int] = {}  # pid -> exit status
        self._next_id = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            message = json.loads(line)
            with self._cond:
                if "id" in message:
                    self._pids[message["id"]] = message["pid"]
                else:
                    self._status[message["pid"]] = message["status"]
                self._cond.notify_all()
        with self._cond:  # the server died: nothing more will be reaped
            self._cond.notify_all()

    def start(self, job_path: str, events_path: str, stderr_path: str) -> ForkedWorker:
        with self._cond:
            request_id = self._next_id
            self._next_id += 1
            self.proc.stdin.write((json.dumps({"id": request_id, "job": job_path, "events": events_path,
                                               "stderr": stderr_path}) + "\n").encode())
            self.proc.stdin.flush()
            while request_id not in self._pids:
                if not self._cond.wait(timeout=60) and self.proc.poll() is not None:
                    raise RuntimeError("the fork server exited")
            return ForkedWorker(self._pids.pop(request_id), self)

    def wait_for(self, pid: int, timeout: Optional[float]) -> Optional[int]:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while pid not in self._status:
                if self.proc.poll() is not None and not self._reader.is_alive():
                    return -signal.SIGKILL
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._cond.wait(timeout=remaining if remaining is not None else 1.0)
            return self._status.pop(pid)

    def close(self) -> None:
        try:
            self.proc.stdin.close()  # the server exits once its children are reaped
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            _kill_group(self.proc.pid)
        self._log.close()


def make_launcher(device: str, jobs: int):
    if device == "cpu" and sys.platform.startswith("linux") and os.environ.get("COMPILE_LINT_VERIFY_NO_FORK") != "1":
        try:
            return ForkServerLauncher(jobs)
        except (OSError, RuntimeError, ValueError):
            pass  # fall back to a fresh interpreter per target
    return SpawnLauncher(jobs)


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
