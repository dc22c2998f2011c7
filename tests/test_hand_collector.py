"""When a linting process runs the cyclic GC by hand (lint_file.HandCollector): less
often while collections find only live caches, back to the start once they find garbage."""
import gc

import pytest

from compile_lint import lint_file
from compile_lint.lint_file import GC_EVERY, GC_EVERY_MAX, GC_GROWTH, HandCollector


class Cycle:
    def __init__(self):
        self.me = self


@pytest.fixture
def gc_off():
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    if was:
        gc.enable()


def test_collections_that_find_no_garbage_come_less_often(gc_off):
    collector = HandCollector()
    kept = [[] for _ in range(2000)]  # live, tracked: a cache, not garbage
    assert collector.collect() < len(kept) * lint_file.LOW_YIELD
    assert collector.threshold == GC_EVERY * GC_GROWTH
    for _ in range(10):
        kept.append([[] for _ in range(2000)])
        collector.collect()
    assert collector.threshold == GC_EVERY_MAX
    del kept


def test_a_collection_that_finds_garbage_goes_back_to_the_start(gc_off):
    collector = HandCollector()
    collector.threshold = GC_EVERY_MAX
    for _ in range(2000):
        Cycle()  # unreachable, freed only by the cyclic GC
    assert collector.collect() >= 2000
    assert collector.threshold == GC_EVERY


def test_due_counts_the_young_objects(gc_off):
    collector = HandCollector()
    collector.threshold = 1000
    gc.collect()
    assert not collector.due()
    kept = [[] for _ in range(2000)]
    assert collector.due()
    del kept
