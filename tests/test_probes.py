"""The byte probes a rule asks of other files instead of parsing them
(analysis/project/context.py PROBES): a probe may let through a file without the call, never
drop one with it."""
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
