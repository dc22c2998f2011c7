"""The process pool of `check` and `fix` (compile_lint/parallel.py): every task's result
exactly once, neighbouring tasks in one worker, and a dying worker costing no task."""
from __future__ import annotations

import os

import pytest

from compile_lint import parallel

PARENT = os.getpid()  # forked workers inherit it: a job can tell it runs in one


def _init(in_pool: bool = True) -> None:
    pass


def where(task: int) -> tuple[int, int]:
    return task, os.getpid()


def dies_once_in_a_worker(task: int) -> tuple[int, int]:
    """Task 37 kills the worker that runs it (as the OOM killer would); run again in the
    parent (the fallback), it succeeds."""
    if task == 37 and os.getpid() != PARENT:
        os._exit(1)
    return task, os.getpid()


@pytest.mark.parametrize("tasks,jobs,expected", [(2101, 2, 32), (228, 2, 7), (40, 2, 1), (10, 4, 1), (100000, 16, 32)])
def test_batches_are_small_enough_to_balance_the_workers(tasks, jobs, expected):
    assert parallel.batch_size(tasks, jobs) == expected


def test_every_result_once_and_each_batch_in_one_worker():
    tasks = list(range(640))
    stats: dict = {}
    results = list(parallel.run_jobs(where, tasks, 2, _init, (), stats, "pass1"))
    assert sorted(t for t, _ in results) == tasks
    assert stats["pass1_workers"] == 2
    pid_of = dict(results)
    assert PARENT not in pid_of.values() and len(set(pid_of.values())) <= 2
    size = parallel.batch_size(len(tasks), 2)
    assert size == 20
    # each batch ran in one worker
    for start in range(0, len(tasks), size):
        assert len({pid_of[t] for t in tasks[start:start + size]}) == 1


def test_a_worker_that_dies_costs_no_task():
    tasks = list(range(300))
    stats: dict = {}
    results = list(parallel.run_jobs(dies_once_in_a_worker, tasks, 2, _init, (), stats, "pass1"))
    assert sorted(t for t, _ in results) == tasks  # none lost, none twice
    assert stats["pass1_broken_pool"] is True
    assert dict(results)[37] == PARENT  # finished here, after the pool broke


def test_few_tasks_run_in_this_process():
    results = list(parallel.run_jobs(where, list(range(5)), 2, _init, (), {}, "pass1"))
    assert results == [(t, PARENT) for t in range(5)]
