"""Run a function again where Python's default recursion limit was too small.

The analysis and libcst's visitors recurse along the nesting of an expression: a chain
of 500 attributes (generated code, a long `a.b.c...`) is ~1,000 frames deep and
overflows the default limit of 1,000. Raising the limit for the whole process would
risk the C stack of the main thread (8 MB); instead the one call that overflowed is
run again in a thread with a large stack and a high limit, and only when it did.
"""
from __future__ import annotations

import sys
import threading
from typing import Callable, TypeVar

T = TypeVar("T")

STACK_BYTES = 256 * 1024 * 1024  # reserved, not committed: pages are touched as used
LIMIT = 50_000


def call(func: Callable[..., T], *args, **kwargs) -> T:
    """`func(*args, **kwargs)`; on RecursionError, once more with a deep stack (the
    error of that second call, if any, is raised)."""
    try:
        return func(*args, **kwargs)
    except RecursionError:
        pass
    return call_deep(func, *args, **kwargs)


_lock = threading.Lock()  # the limit and the stack size are the process's, not a thread's


def call_deep(func: Callable[..., T], *args, **kwargs) -> T:
    outcome: dict = {}

    def target() -> None:
        try:
            outcome["value"] = func(*args, **kwargs)
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    with _lock:
        old_limit = sys.getrecursionlimit()
        old_size = threading.stack_size()
        try:
            threading.stack_size(STACK_BYTES)
            thread = threading.Thread(target=target, name="compile-lint-deep-stack", daemon=True)
            sys.setrecursionlimit(max(old_limit, LIMIT))
            thread.start()
        finally:
            threading.stack_size(old_size)
        try:
            thread.join()
        finally:
            sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
