"""The byte probes a rule asks of other files instead of parsing them
(analysis/project/context.py PROBES): a probe may let through a file without the call, never
drop one with it."""
import os
import re

import pytest

from compile_lint.analysis.project.context import Project, Sources, may_call_name


def _pattern(data: bytes, name: str) -> bool:
    """What may_call_name promises, as the regular expression it stands for."""
    return re.search(rb"(?<!def )\b" + re.escape(name.encode()) + rb"\s*\(", data) is not None


@pytest.mark.parametrize("data, expected", [
    (b"model.reset(3)", True),
    (b"reset(3)", True),
    (b"x = reset (3)", True),
    (b"x = reset\n    (3)", True),
    (b"\treset\t(3)", True),
    (b"def reset(self):\n    pass", False),
    (b"def  reset(self): pass", True),  # two spaces: not the `def ` the filter skips
    (b"class A:\n    def reset(self): return 1\nA().reset()", True),
    (b"preset(3)", False),
    (b"_reset(3)", False),
    (b"reset_all(3)", False),
    (b"reset = 3", False),
    (b"reset", False),
    (b"# calls reset() later", True),  # a filter: a comment lets the file through
    (b"", False),
])
def test_may_call_name_is_the_pattern_it_stands_for(data, expected):
    assert may_call_name(data, "reset") is expected
    assert _pattern(data, "reset") is expected


def test_may_call_name_agrees_with_the_pattern_on_every_occurrence():
    data = b"def reset(x):\n    y.reset (x)\n" * 3 + b"preset(1)\n_reset(2)\ndef reset(z): pass\n"
    for name in ("reset", "set", "x", "def", "pass", "y"):
        assert may_call_name(data, name) == _pattern(data, name), name


def test_a_question_asked_of_every_file_is_recorded_for_each_of_them(tmp_path):
    """Project.files_that_may_call answers for a whole listing at once; each file's
    answer is still a probe of the linted file (the cache depends on every answer)."""
    paths = []
    for name, text in {"a.py": "m.reset(1)\n", "b.py": "def reset(self): pass\n", "c.py": "x = 1\n"}.items():
        path = tmp_path / name
        path.write_text(text)
        paths.append(str(path))
    sources = Sources(snapshot=True)
    first, second = Project(sources=sources), Project(sources=sources)
    assert first.files_that_may_call(paths, "reset") == [paths[0]]
    assert second.files_that_may_call(paths, "reset") == [paths[0]]
    for project in (first, second):
        assert project.probes == {(paths[0], "may_call", "reset"): True, (paths[1], "may_call", "reset"): False,
                                  (paths[2], "may_call", "reset"): False}


# -- calls_named with `mentioning`: the files that spell the token, and the asking file ----
def _calls_named_in(tmp_path, files, asking, name, mentioning):
    from compile_lint.analysis.project.calls import calls_named
    from compile_lint.analysis.project.context import Sources
    from compile_lint.analysis.semantic.facts import ModuleFacts
    from compile_lint.analysis.semantic.names import NameTable
    from compile_lint.config import Settings
    from compile_lint.lint_file import project_for
    from compile_lint.source import SourceFile

    (tmp_path / "pyproject.toml").write_text("")
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    path = str(tmp_path / asking)
    source = SourceFile(path, (tmp_path / asking).read_bytes())
    tree = source.parse()
    project = project_for(Settings(), {}, None, Sources(snapshot=True))
    facts = ModuleFacts(source, tree, NameTable.build(tree, asking[:-3]), project=project)
    return sorted((os.path.basename(other.path), call.lineno) for other, call in calls_named(facts, name, mentioning))


def test_calls_named_reads_the_asking_file_whatever_it_spells(tmp_path):
    files = {
        "helpers.py": "def ready(m):\n    return m\n\nready(1)\n",
        "train.py": "# compile\nfrom helpers import ready\nready(2)\n",
        "other.py": "from helpers import ready\nready(3)\n",
    }
    assert _calls_named_in(tmp_path, files, "helpers.py", "ready", b"compile") == [("helpers.py", 4), ("train.py", 3)]
    assert _calls_named_in(tmp_path, files, "helpers.py", "ready", None) == [("helpers.py", 4), ("other.py", 2), ("train.py", 3)]


def test_probes_read_each_file_once_and_keep_what_the_byte_budget_holds(tmp_path, monkeypatch):
    """A rule asks dozens of questions of each of a package's files: the bytes are read
    once and kept (up to MAX_PROBE_BYTES), and an edited file is read again."""
    import builtins

    from compile_lint.analysis.project import context

    paths = []
    for i in range(4):
        path = tmp_path / f"m{i}.py"
        path.write_text(f"x{i} = torch.compile(net)\n" + "#" * 100 + "\n")
        paths.append(str(path))
    opened = []
    real_open = builtins.open

    def counting_open(file, *args, **kwargs):
        if str(file) in paths:
            opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    sources = Sources(snapshot=False)
    for token in (b"torch.compile", b"x1", b"net", b"missing"):
        assert [sources.mentions(p, token) for p in paths] == [token in open(p, "rb").read() for p in paths]
    assert sorted(set(opened)) == sorted(paths)
    assert len([p for p in opened if p == paths[0]]) == 1 + 4  # the probe's one read, and the test's four

    # a budget of two files: the least recently used ones are read again, answers unchanged
    monkeypatch.setattr(context, "MAX_PROBE_BYTES", 2 * os.path.getsize(paths[0]))
    sources, opened[:] = Sources(snapshot=False), []
    for token in (b"x0", b"x3"):
        assert [sources.mentions(p, token) for p in paths] == [token.decode() in p_text for p_text in
                                                              (open(p).read() for p in paths)]
    assert len([p for p in opened if p == paths[0]]) == 2 + 2
    assert sources._probe_bytes_size <= context.MAX_PROBE_BYTES

    # a file over the whole budget is read for its answer and not kept
    monkeypatch.setattr(context, "MAX_PROBE_BYTES", 10)
    sources = Sources(snapshot=False)
    assert sources.mentions(paths[2], b"x2") is True and sources._probe_bytes == {}

    # an edited file is another version: read again
    sources, opened[:] = Sources(snapshot=False), []
    assert sources.mentions(paths[1], b"x1") is True
    with real_open(paths[1], "w") as fh:
        fh.write("y = 2  # longer than before, so its size moves\n" * 3)
    assert sources.mentions(paths[1], b"x1") is False
