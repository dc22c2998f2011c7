"""A fork server for CPU workers: import torch and warm up Inductor once, then fork a
fresh child per target.

Why: on a 2-core machine a fresh worker spends ~5 s importing torch and Dynamo and
~10 s on Inductor's first compile (loading its modules, probing the CPU's vector ISA,
building headers); a child forked after that compiles a small graph in ~0.3 s. Each
child is still its own process in its own process group: a crash, a hang or an
out-of-memory kill costs that target alone.

CPU only: CUDA state does not survive fork, so CUDA workers are started afresh
(runner.SpawnLauncher). Linux only (fork after importing torch is unsafe on macOS).

No compile thread or pool may exist in the server when it forks: a child forked from
a server whose Inductor compile pool held threads waited forever on a future that only
those threads could complete (`CppCodeCache.load_async` -> `Future.result`, default
`--jobs 1`, cold Inductor cache). So the server is started with
TORCHINDUCTOR_COMPILE_THREADS=1 (Inductor then compiles in the calling thread and starts
no pool) and one intra-op thread, and it counts its threads (/proc/self/task) after the
warm-up and before every fork: more than one, and it refuses to fork (the parent then
starts a fresh interpreter per target instead).

Lifetimes: the server and every child die with their parent (children.py), so killing
verify, even with SIGKILL, leaves nothing behind.

Protocol, one JSON object per line. Parent -> server: {"id", "job", "events", "stderr"}.
Server -> parent: {"ready": true} or {"ready": false, "why"} after the warm-up; {"id",
"pid"} when forked or {"id", "error"} when it will not fork; {"pid", "status"} when
reaped (status as os.waitstatus_to_exitcode gives it: negative for a signal).
"""
from __future__ import annotations

import json
import os
import select
import signal
import sys

from ..children import die_with_parent


def thread_count() -> int:
    """Threads of this process, native ones (OpenMP, Inductor's pool) included."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def _warm_up() -> int:
    """Import and compile once; returns the thread count the children should use.

    The warm-up runs on one thread: an OpenMP thread pool started here would not
    survive fork (children ran conv compiles ~10x slower), and with one thread none is
    started."""
    import torch

    from . import checks  # noqa: F401  (imports torch._dynamo, torch._inductor paths)

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.compile(lambda x: (x * 2 + 1).relu())(torch.rand(4, 4))
    torch.compiler.reset()
    return threads


def _run_child(request: dict, threads: int, server: int) -> None:
    """In the forked child: a new session, stdio to the stderr file, run the worker."""
    import torch

    die_with_parent(server)
    torch.set_num_threads(threads)
    os.setsid()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    log = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    code = 1
    try:
        from .worker import main

        code = main([request["job"], request["events"]])
    except BaseException:  # noqa: B036  (report anything, then leave without cleanup)
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve() -> None:
    die_with_parent()
    threads = _warm_up()
    out = sys.stdout
    running = thread_count()
    if running > 1:
        out.write(json.dumps({"ready": False, "why": f"{running} threads after the warm-up"}) + "\n")
        out.flush()
        return
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    server = os.getpid()
    stdin = sys.stdin.fileno()
    buffer = b""
    children: set[int] = set()
    open_input = True
    while open_input or children:
        readable, _, _ = select.select([stdin] if open_input else [], [], [], 0.05)
        if readable:
            chunk = os.read(stdin, 65536)
            if not chunk:
                open_input = False
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                request = json.loads(line)
                running = thread_count()
                if running > 1:  # forking now could copy a lock held by a thread that will not exist
                    out.write(json.dumps({"id": request["id"], "error": f"{running} threads in the fork server"})
                              + "\n")
                    out.flush()
                    continue
                pid = os.fork()
                if pid == 0:
                    _run_child(request, threads, server)
                children.add(pid)
                out.write(json.dumps({"id": request["id"], "pid": pid}) + "\n")
                out.flush()
        for pid in list(children):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                children.discard(pid)
                out.write(json.dumps({"pid": pid, "status": os.waitstatus_to_exitcode(status)}) + "\n")
                out.flush()


if __name__ == "__main__":
    serve()
