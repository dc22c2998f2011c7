#!/usr/bin/env python3
"""Run the oracle bench: every entry of a models file under Dynamo, one process each.

    python bench/oracle/run.py --venv /work/oracle-venv --out bench/.work/oracle/
    python bench/oracle/run.py --venv /work/oracle-venv --out /tmp/o --only 'timm/*' --only kornia/canny

Each entry runs in `VENV/bin/python bench/oracle/child.py` (see there for what it
records) in its own process group, with a timeout; the group is killed on timeout, and
every child dies with this process (prctl PDEATHSIG, or a watcher thread). SIGTERM or
Ctrl-C stops the run, kills the running children and keeps what is written: one
`OUT/models/<entry>.json` per finished entry and `OUT/run.json` (the summary; rewritten
after every entry). `--resume` skips entries whose JSON is already there.

Standard library only: run it with any Python 3.9+ (the models' venv runs the children).
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import catalog  # noqa: E402

DEFAULT_MODELS = os.path.join(HERE, "models.py")
CHILD = os.path.join(HERE, "child.py")


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "__", name)


class Runner:
    def __init__(self, models: catalog.Models, models_path: str, python: str, out: str, timeout: float,
                 passes: str = "eval,train,eval:float16"):
        self.models = models
        self.passes = passes
        self.models_path = models_path
        self.python = python
        self.out = out
        self.timeout = timeout
        self.live: dict[int, subprocess.Popen] = {}
        self.lock = threading.Lock()
        self.stopping = False
        os.makedirs(os.path.join(out, "models"), exist_ok=True)
        os.makedirs(os.path.join(out, "logs"), exist_ok=True)

    def result_path(self, entry) -> str:
        return os.path.join(self.out, "models", safe_name(entry.name) + ".json")

    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TORCH", "PYTORCH"))}
        env.update(
            COMPILE_LINT_PARENT_PID=str(os.getpid()),
            ORACLE_APPS=self.models.apps,
            OMP_NUM_THREADS="1",
            MKL_NUM_THREADS="1",
            TOKENIZERS_PARALLELISM="false",
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            HF_HUB_DISABLE_TELEMETRY="1",
            TRANSFORMERS_VERBOSITY="error",
            DIFFUSERS_VERBOSITY="error",
            PYTHONHASHSEED="0",
            PYTHONDONTWRITEBYTECODE="1",
        )
        return env

    def run_one(self, entry) -> dict:
        if self.stopping:
            return {"name": entry.name, "status": "not_run"}
        path = self.result_path(entry)
        log = os.path.join(self.out, "logs", safe_name(entry.name) + ".log")
        if os.path.exists(path):  # an earlier run's: a crash must not pass it off as this one's
            os.remove(path)
        t0 = time.perf_counter()
        with open(log, "wb") as logf:
            proc = subprocess.Popen(
                [self.python, CHILD, "--models", self.models_path, "--entry", entry.name, "--out", path,
                 "--passes", self.passes],
                stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self.env(), start_new_session=True,
            )
            with self.lock:
                self.live[proc.pid] = proc
            try:
                rc = proc.wait(timeout=self.timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                self.kill(proc)
                rc = proc.wait()
                timed_out = True
            finally:
                with self.lock:
                    self.live.pop(proc.pid, None)
        wall = round(time.perf_counter() - t0, 1)
        if timed_out:
            return self._failed(entry, path, "timeout", f"killed after {self.timeout:.0f} s", wall)
        if rc != 0 or not os.path.exists(path):
            return self._failed(entry, path, "crashed", f"exit {rc}: " + _tail(log), wall)
        with open(path, encoding="utf-8") as f:
            result = json.load(f)
        result["wall_s"] = wall
        return result

    def _failed(self, entry, path, status, error, wall) -> dict:
        partial = None
        if os.path.exists(path):  # the passes that finished before the timeout or crash
            try:
                with open(path, encoding="utf-8") as f:
                    partial = json.load(f)
            except (OSError, ValueError):
                partial = None
        if partial and partial.get("passes") and not partial.get("complete"):
            partial.update(incomplete=f"{status}: {error}", wall_s=wall)
            if not self.stopping:
                _write_json(path, partial)
            return partial
        result = {"name": entry.name, "source": entry.source, "mode": entry.mode, "status": status,
                  "error": error, "wall_s": wall}
        if not self.stopping:
            _write_json(path, result)
        return result

    @staticmethod
    def kill(proc: subprocess.Popen) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self, *_args) -> None:
        self.stopping = True
        with self.lock:
            for proc in list(self.live.values()):
                self.kill(proc)


def finished(path: str) -> bool:
    """A result that --resume keeps: written, and not cut short by a stop (a child
    killed by SIGTERM or Ctrl-C leaves the passes it finished, `complete` false)."""
    try:
        with open(path, encoding="utf-8") as f:
            result = json.load(f)
    except (OSError, ValueError):
        return False
    return result.get("complete", True) or bool(result.get("incomplete"))


def _tail(path: str, n: int = 1200) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - n))
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _write_json(path: str, data) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def summarize(results: list[dict]) -> dict:
    by_status: dict[str, int] = {}
    for r in results:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    breaking = [r for r in results if r.get("breaks")]
    return {"entries": len(results), "by_status": by_status, "with_breaks": len(breaking),
            "breaks": sum(len(r.get("breaks", [])) for r in results)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Run the oracle bench (see the module docstring).")
    parser.add_argument("--venv", required=True, help="the models' venv (see bench/oracle/README.md)")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--python", help="the interpreter that runs the models (default: VENV/bin/python)")
    parser.add_argument("--models", default=DEFAULT_MODELS, help="models file (default: bench/oracle/models.py)")
    parser.add_argument("--apps", default=None, help=f"development apps folder (default: $ORACLE_APPS or {catalog.DEFAULT_APPS})")
    parser.add_argument("--only", action="append", default=[], help="entry name or glob (repeatable)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per entry, all passes (default 600)")
    parser.add_argument("--passes", default="eval,train,eval:float16",
                        help="the judge's passes, comma-separated: eval, train, declared (the entry's own mode: "
                             "the first judge's single pass), each optionally :DTYPE (eval:float16); "
                             "default eval,train,eval:float16 (README.md, \"The judge\")")
    parser.add_argument("--jobs", type=int, default=1, help="entries at once (default 1)")
    parser.add_argument("--resume", action="store_true", help="skip entries that already have a result")
    parser.add_argument("--list", action="store_true", help="list the entries and exit")
    ns = parser.parse_args(argv)

    venv = os.path.abspath(ns.venv)
    python = ns.python or os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        parser.error(f"{python}: not found (the models' venv, see bench/oracle/README.md)")
    models_path = os.path.abspath(ns.models)
    try:
        models = catalog.load_models(models_path, venv=venv, apps=ns.apps)
    except (OSError, ValueError, SyntaxError) as exc:
        print(f"run.py: cannot read {ns.models}: {exc}", file=sys.stderr)
        return 2
    entries = [e for e in models.entries if not ns.only or any(fnmatch.fnmatchcase(e.name, p) for p in ns.only)]
    if ns.list:
        for e in entries:
            print(f"{e.name}\t{e.source}\t{e.mode}")
        return 0
    if not entries:
        print("run.py: no entry matches", file=sys.stderr)
        return 2

    out = os.path.abspath(ns.out)
    runner = Runner(models, models_path, python, out, ns.timeout, ns.passes)
    signal.signal(signal.SIGTERM, lambda *a: (runner.stop(), _exit_soon(143)))
    todo = [e for e in entries if not (ns.resume and finished(runner.result_path(e)))]
    # run.json covers every entry of the models file with a result in OUT, so that a run
    # of a few entries (--only) adds to an earlier full run instead of hiding it
    results: dict[str, dict] = {}
    for e in models.entries:
        if e not in todo and os.path.exists(runner.result_path(e)):
            with open(runner.result_path(e), encoding="utf-8") as f:
                results[e.name] = json.load(f)
    covered = [e for e in models.entries if e in todo or e.name in results]
    sources = {s: {"roots": models.source_roots(s), "base": models.base(s), "version": models.sources[s].version}
               for s in sorted({e.source for e in covered})}

    def write_summary(done: bool) -> None:
        ordered = [results[e.name] for e in covered if e.name in results]
        _write_json(os.path.join(out, "run.json"), {
            "models": models_path, "venv": venv, "apps": models.apps, "timeout_s": ns.timeout, "passes": ns.passes,
            "complete": done and len(ordered) == len(covered), "sources": sources,
            "summary": summarize(ordered),
            "entries": [{"name": r["name"], "status": r["status"], "breaks": len(r.get("breaks", [])),
                         "wall_s": r.get("wall_s")} for r in ordered],
        })

    t0 = time.perf_counter()
    try:
        with ThreadPoolExecutor(max_workers=max(1, ns.jobs)) as pool:
            for entry, result in zip(todo, pool.map(runner.run_one, todo)):
                if result["status"] == "not_run":
                    continue
                results[entry.name] = result
                n = len(result.get("breaks", []))
                print(f"{entry.name}: {result['status']}, {n} break(s), {result.get('wall_s')} s", flush=True)
                write_summary(False)
    except KeyboardInterrupt:
        runner.stop()
        write_summary(False)
        print("run.py: interrupted; results so far are in", out, file=sys.stderr)
        return 130
    write_summary(True)
    s = summarize([results[e.name] for e in covered if e.name in results])
    print(f"{s['entries']} entries {s['by_status']}; {s['with_breaks']} with breaks, {s['breaks']} breaks; "
          f"{time.perf_counter() - t0:.0f} s; {os.path.join(out, 'run.json')}")
    return 0


def _exit_soon(code: int) -> None:
    # from the SIGTERM handler: the children are killed; leave without waiting for the pool
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
