"""Child processes die with their parent.

`check` and `fix` lint in a process pool, `verify` runs a fork server and a worker per
target. When the parent is killed (a CI `timeout` sends SIGTERM, Ctrl-C sends SIGINT, an
out-of-memory killer sends SIGKILL), none of these may live on.

Two mechanisms, called at the start of the child:
- Linux: `prctl(PR_SET_PDEATHSIG, SIGKILL)` (prctl(2)); the kernel kills the child when
  the thread that created it exits, whatever signal ended the parent, SIGKILL included.
  Callers create their children from a thread that outlives them (the main thread, or
  the thread that waits for that child).
- Elsewhere (or when prctl is unavailable): a daemon thread that polls the parent's pid
  and leaves with `os._exit` once the child has been re-parented.

Both check once, right after arming, that the parent is still the one expected: a
parent that died between fork and prctl would otherwise go unnoticed.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Callable, Optional

PARENT_ENV = "COMPILE_LINT_PARENT_PID"  # set by a parent for the interpreters it starts
POLL_S = 0.5
_PR_SET_PDEATHSIG = 1


def _prctl_pdeathsig(signum: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(POLL_S)
        if os.getppid() != parent:
            os._exit(1)


def die_with_parent(parent: Optional[int] = None) -> str:
    """Arm this process to end when its parent does; returns the mechanism used.

    `parent` is the pid the caller expects as parent (default: the current parent, or
    $COMPILE_LINT_PARENT_PID when set)."""
    if parent is None:
        from_env = os.environ.get(PARENT_ENV)
        parent = int(from_env) if from_env and from_env.isdigit() else os.getppid()
    mechanism = "pdeathsig" if _prctl_pdeathsig(signal.SIGKILL) else "watcher"
    if os.getppid() != parent:  # the parent died before we were armed
        os._exit(1)
    if mechanism == "watcher":
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="parent-watch").start()
    return mechanism


def pool_initializer(parent: int, init: Optional[Callable] = None, *args) -> None:
    """`initializer` for a ProcessPoolExecutor: `initializer=pool_initializer,
    initargs=(os.getpid(), real_init, *real_args)` (picklable, so spawn works too)."""
    die_with_parent(parent)
    if init is not None:
        init(*args)


def child_environment(env: Optional[dict] = None) -> dict:
    """`env` (default os.environ) with this process recorded as the parent, for an
    interpreter started with subprocess that calls die_with_parent() first thing."""
    env = dict(os.environ if env is None else env)
    env[PARENT_ENV] = str(os.getpid())
    return env
