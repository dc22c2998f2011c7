"""When a linting process runs the cyclic GC by hand (lint_file.HandCollector): less
often while collections find only live caches, back to the start once they find garbage."""
import gc
import os

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


def _project(tmp_path):
    (tmp_path / "a.py").write_text("import torch\nfrom b import Net\nmodel = torch.compile(Net())\n")
    (tmp_path / "b.py").write_text("import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n")
    return [str(tmp_path / "a.py"), str(tmp_path / "b.py")]


def _lint_serially(files, monkeypatch):
    from compile_lint import engine
    from compile_lint.config import Settings

    freezes = []
    real_freeze = gc.freeze
    monkeypatch.setattr(engine.gc, "freeze", lambda: (freezes.append(1), real_freeze())[1])
    settings = Settings(root=os.path.dirname(files[0]))
    engine.Linter(lambda _p: settings, jobs=1).lint(files)
    return len(freezes)


def test_a_serial_run_keeps_its_summaries_out_of_the_sweeps_and_thaws_them(tmp_path, monkeypatch):
    # the summaries a serial run decodes as files are done live until the index: each
    # hand collection would walk them again (2.6 s of a serial corpus M run, 1.1 s so)
    gc.unfreeze()
    assert _lint_serially(_project(tmp_path), monkeypatch) == 2
    assert gc.get_freeze_count() == 0  # thawed: a caller's later collections see them


def test_a_run_leaves_what_its_caller_froze_frozen(tmp_path, monkeypatch):
    # the language server freezes its project's summaries; a run inside it must not
    # thaw them, so it freezes nothing of its own
    kept = [[] for _ in range(100)]
    gc.freeze()
    try:
        assert _lint_serially(_project(tmp_path), monkeypatch) == 0
        young = {id(o) for g in range(3) for o in gc.get_objects(generation=g)}
        assert not any(id(o) in young for o in kept)  # still in the permanent generation
    finally:
        gc.unfreeze()
    del kept
