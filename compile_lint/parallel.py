"""The process pool the engine runs per-file jobs in (compile_lint/engine.py plans the
passes; compile_lint/lint_file.py is the job). Nothing here knows about linting.

`run_jobs(job, tasks, ...)` yields job(task) for every task: in this process for few
tasks or one job slot, else in forked worker processes, a few batches of tasks in
flight per worker; if a worker dies (killed, out of memory), the rest finish
here, one at a time.
"""
from __future__ import annotations

import gc
import os
import sys
from typing import Callable, Iterator, TypeVar

MIN_PARALLEL_FILES = 8  # fewer than this: run in-process (a pool costs more than it saves)
# Tasks go to workers in batches: one future per file cost the pool's queues and the
# workers' wake-ups CPU the workers could lint with (corpus M, 2 workers, alternating: pass 1
# 18.1 CPU s one by one, 16.9 in batches of 32; whether a batch holds neighbouring
# files or files of a size made no difference; bench/results.md). A batch is at most
# MAX_BATCH tasks and at most 1/BATCHES_PER_WORKER of a worker's share, so the last
# batches still balance the workers (the engine hands big files first).
MAX_BATCH = 32
BATCHES_PER_WORKER = 16

T = TypeVar("T")
R = TypeVar("R")


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _pool(jobs: int, initializer, initargs):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from .children import pool_initializer

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method), initializer=pool_initializer,
                               initargs=(os.getpid(), initializer, *initargs))  # workers die with this process


def _serial(job: Callable[[T], R], tasks, initializer, initargs) -> Iterator[R]:
    """In this process; the initializer is told (in_pool=False) so it leaves the GC be."""
    initializer(*initargs, in_pool=False)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for task in tasks:
            yield job(task)
    finally:
        if enabled:
            gc.enable()


def batch_size(tasks: int, jobs: int) -> int:
    return max(1, min(MAX_BATCH, tasks // (jobs * BATCHES_PER_WORKER)))


def _run_batch(job: Callable[[T], R], batch: list[T]) -> list[R]:
    return [job(task) for task in batch]


def run_jobs(job: Callable[[T], R], tasks: list[T], jobs: int, initializer, initargs: tuple, stats: dict, name: str) -> Iterator[R]:
    """Yield job(task) for every task (in completion order when parallel)."""
    if not tasks:
        return
    if jobs <= 1 or len(tasks) < MIN_PARALLEL_FILES:
        yield from _serial(job, tasks, initializer, initargs)
        return
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    stats[f"{name}_workers"] = jobs
    gc.freeze()  # forked workers: no copy-on-write of the parent's objects by the GC
    pool = _pool(jobs, initializer, initargs)
    pending = {}
    size = batch_size(len(tasks), jobs)
    queue = [tasks[i:i + size] for i in range(0, len(tasks), size)][::-1]
    batch = None
    try:
        # keep a few batches per worker in flight: balance without a future per file
        while queue or pending:
            while queue and len(pending) < jobs * 4:
                batch = queue.pop()
                pending[pool.submit(_run_batch, job, batch)] = batch
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                batch = pending.pop(future)
                results = future.result()
                batch = None
                yield from results
    except BrokenProcessPool:
        stats[f"{name}_broken_pool"] = True
        rest = [task for b in ([batch] if batch is not None else []) + list(pending.values()) + list(reversed(queue))
                for task in b]
        pending.clear()
        yield from _serial(job, rest, initializer, initargs)
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        gc.unfreeze()
