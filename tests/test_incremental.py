"""The language server's incremental relint (compile_lint/incremental.py) gives what a
full lint of the same text gives.

Random edits inside the top-level defs and classes of real files (the rule fixtures;
corpus M's files when bench/.work/corpus/M is there; a generated project of traced
modules like bench/lsp_start.py's), several in a row as typing makes them: each edit's
findings from the incremental relint are compared with a full lint of the same text
against the same project index. The tree walk it rebuilds from the top-level statements'
own walks is compared with walk_by_type; the summary it keeps is compared with the one
a full summarize makes.
"""
import ast
import os
import random
import re
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compile_lint import incremental
from compile_lint.analysis.reach.regions import def_qualnames
from compile_lint.analysis.semantic.walk import walk_by_type
from compile_lint.lsp import documents
from compile_lint.lsp.project import ProjectContext
from conftest import ROOT

FIXTURES = sorted(
    os.path.join(folder, name)
    for folder, _dirs, files in os.walk(os.path.join(ROOT, "fixtures", "rules"))
    for name in files if name.endswith(".py")
)
CORPUS = os.path.join(ROOT, "bench", ".work", "corpus", "M", "src")


def _corpus_files(limit=400):
    if not os.path.isdir(CORPUS):
        return []
    out = []
    for folder, _dirs, files in os.walk(CORPUS):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                if 2_000 < os.path.getsize(path) < 120_000:
                    out.append(path)
    rng = random.Random(7)
    rng.shuffle(out)
    return sorted(out[:limit])


STAGE = '''

class Stage{k}(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.gain = 0.5
        self.steps = 0

    def forward(self, x, ref):
        y = self.conv(x) * self.gain
        h = int(ref.shape[2])
        w = int(ref.shape[3])
        y = F.interpolate(y, size=(h, w), mode="bilinear")
        return y.clamp(0, 1) + helper{k}(y)

    def bump(self):
        self.gain = self.gain + 0.1


def helper{k}(x):
    scale = 1.0
    return x * scale
'''


@pytest.fixture(scope="module")
def traced_project(tmp_path_factory):
    root = tmp_path_factory.mktemp("traced")
    (root / "pyproject.toml").write_text('[project]\nname = "t"\n')
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    head = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\nSCALE = 2\n"
    (root / "pkg" / "big.py").write_text(head + "".join(STAGE.format(k=k) for k in range(12)))
    traces = "\n".join(f"t{k} = torch.jit.trace(big.Stage{k}(), example)" for k in range(0, 12, 2))
    (root / "pkg" / "train.py").write_text(
        "import torch\n\nfrom pkg import big\n\nexample = (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16))\n" + traces + "\n")
    context = ProjectContext(str(root), use_cache=False)
    context.build()
    return context, str(root / "pkg" / "big.py")


# -- edits ---------------------------------------------------------------------------------
SNIPPETS = ["h = int(x.shape[2])", "self.gain = 0.25", "y = torch.compile(y)", "return x", "pass",
            "z = F.interpolate(x, size=(int(x.shape[2]), 4))", "self.steps += 1", "x = x.view(int(x.size(0)), -1)",
            "for i in range(int(x.shape[1])):", "import math", "global SCALE", "q := 1", "if x:", "'''"]


def _def_units(text: str):
    tree = ast.parse(text)
    return [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def edit(text: str, rng: random.Random) -> str:
    """One keystroke-sized or line-sized change inside a top-level def or class, keeping
    the number of lines (what the incremental path takes; others fall back)."""
    lines = text.split("\n")
    try:
        units = _def_units(text)
    except SyntaxError:
        units = []
    if not units:
        return text
    unit = rng.choice(units)
    first = min([unit.lineno] + [d.lineno for d in unit.decorator_list])
    row = rng.randint(first, unit.end_lineno) - 1
    line = lines[row]
    indent = line[: len(line) - len(line.lstrip())]
    kind = rng.randrange(7)
    if kind == 0:  # a number changed
        numbers = list(re.finditer(r"\b\d+(\.\d+)?\b", line))
        if numbers:
            m = rng.choice(numbers)
            line = line[: m.start()] + str(rng.choice([0, 1, 2, 3, 0.5, 10])) + line[m.end():]
    elif kind == 1:  # a word typed somewhere
        words = re.findall(r"[A-Za-z_]\w*", text) or ["x"]
        at = rng.randint(0, len(line))
        line = line[:at] + rng.choice(words) + line[at:]
    elif kind == 2 and line:  # a character deleted
        at = rng.randrange(len(line))
        line = line[:at] + line[at + 1:]
    elif kind == 3:  # the line replaced by another line of the file, at this indentation
        other = rng.choice(lines).strip()
        line = indent + other
    elif kind == 4:  # a snippet
        line = indent + rng.choice(SNIPPETS)
    elif kind == 5:  # commented out
        line = indent + "# " + line.strip()
    else:  # a name renamed on this line
        names = re.findall(r"[A-Za-z_]\w*", line)
        if names:
            old = rng.choice(names)
            line = re.sub(rf"\b{re.escape(old)}\b", old + "2", line, count=1)
    lines[row] = line
    return "\n".join(lines)


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _session(context, path: str, text: str, seed: int, steps: int = 5):
    """Edits typed one after another; each incremental lint compared with a full one.
    An edit that breaks the syntax is linted, then typing goes on from the text before
    it (as a user fixes a typo)."""
    rng = random.Random(seed)
    uri = "file://" + path
    live = documents.Linted(uri, path, text.encode(), 1)
    documents.lint(context, live)
    taken = 0
    good = text
    for step in range(steps):
        for _try in range(5):
            text = edit(good, rng)
            if text != good:
                break
        if _parses(text):
            good = text
        live.code = text.encode()
        documents.lint(context, live)
        fresh = documents.Linted(uri, path, live.code, 1)
        documents.lint(context, fresh)
        assert live.findings == fresh.findings, (path, seed, step, live.how)
        if live.how.get("incremental"):
            taken += 1
            # the summary kept is the one a full lint makes of this text
            assert live.snapshot.parsed.summary == fresh.snapshot.parsed.summary
    context.close(path)
    return taken


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10 ** 6))
def test_traced_project_edits(traced_project, seed):
    context, path = traced_project
    with open(path) as fh:
        text = fh.read()
    _session(context, path, text, seed)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(index=st.integers(0, len(FIXTURES) - 1), seed=st.integers(0, 10 ** 6))
def test_rule_fixture_edits(index, seed):
    path = FIXTURES[index]
    with open(path) as fh:
        text = fh.read()
    context = ProjectContext(None, use_cache=False)
    context.build()
    _session(context, path, text, seed)


CORPUS_FILES = _corpus_files()


@pytest.mark.skipif(not CORPUS_FILES, reason="corpus M is not downloaded (bench/run_bench.py)")
@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(index=st.integers(0, max(0, len(CORPUS_FILES) - 1)), seed=st.integers(0, 10 ** 6))
def test_corpus_file_edits(index, seed):
    path = CORPUS_FILES[index]
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        text = fh.read()
    context = ProjectContext(None, use_cache=False)
    context.build()
    _session(context, path, text, seed, steps=4)


def test_the_incremental_path_is_taken(traced_project):
    """Not a test that cannot fail: plain body edits of the traced file are relinted
    incrementally, with the local rules on the edited class and the module level only."""
    context, path = traced_project
    with open(path) as fh:
        text = fh.read()
    live = documents.Linted("file://" + path, path, text.encode(), 1)
    documents.lint(context, live)
    for n in range(3):
        live.code = text.replace("self.gain = 0.5", f"self.gain = 0.{n + 6}", 1).encode()
        documents.lint(context, live)
        # Stage0 (nothing else names it) and the 4 module-level statements
        assert live.how == {"incremental": True, "relinted": 5}
    context.close(path)


NET = textwrap.dedent('''\
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.alpha = 0.5

        def forward(self, x):
            return x * self.alpha


    def run(x):
        model = Net()
        traced = torch.jit.trace(model, x)
        model.alpha = 0.3
        return traced(x)
    ''')


def _lint_twice(tmp_path, before: str, after: str):
    """(the incremental lint of `after` following `before`, a full lint of `after`)."""
    path = tmp_path / "m.py"
    path.write_text(before)
    context = ProjectContext(None, use_cache=False)
    context.build()
    live = documents.Linted("file://m", str(path), before.encode(), 1)
    documents.lint(context, live)
    live.code = after.encode()
    documents.lint(context, live)
    fresh = documents.Linted("file://m", str(path), after.encode(), 1)
    documents.lint(context, fresh)
    return live, fresh


def _select_cl102(root) -> None:
    """CL102 is off by default: the project selects it (these tests are about its facts)."""
    (root / "compile-lint.toml").write_text('extend-select = ["CL102"]\n')


def test_a_def_reached_by_name_is_relinted(tmp_path):
    """`run` names `Net`: whether its change of `model.alpha` is a finding (CL102) hangs
    on the kind `Net.__init__` gives `alpha`. An edit there that leaves the summary as
    it was relints `run` too."""
    _select_cl102(tmp_path)
    before_codes = {f.code for f in _lint_twice(tmp_path, NET, NET)[1].findings}
    assert "CL102" in before_codes
    live, fresh = _lint_twice(tmp_path, NET, NET.replace("self.alpha = 0.5", "self.alpha = None"))
    assert live.how["incremental"] and live.how["relinted"] == 4  # Net, run and the 2 imports
    assert live.findings == fresh.findings
    assert "CL102" not in {f.code for f in fresh.findings}


GLOBAL_TRACE = textwrap.dedent('''\
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.alpha = 0.5

        def forward(self, x):
            return x * self.alpha


    model = Net()
    traced = torch.jit.trace(model, torch.rand(2))
    model.alpha = 0.3


    def use():
        if traced:
            pass
    ''')


def test_module_level_statements_are_always_relinted(tmp_path):
    """A module-level trace whose result a function reads (CL102's `escapes`): the
    finding at module level goes when the function stops reading it, though nothing
    names the function."""
    _select_cl102(tmp_path)
    live, fresh = _lint_twice(tmp_path, GLOBAL_TRACE, GLOBAL_TRACE)
    assert "CL102" in {f.code for f in fresh.findings}
    live, fresh = _lint_twice(tmp_path, GLOBAL_TRACE, GLOBAL_TRACE.replace("if traced:", "if tracex:"))
    assert live.how["incremental"]
    assert live.findings == fresh.findings
    assert "CL102" not in {f.code for f in fresh.findings}


@pytest.mark.parametrize("source", ["traced", "fixtures", "corpus"])
def test_walk_from_statement_walks_is_walk_by_type(source, traced_project):
    if source == "traced":
        paths = [traced_project[1]]
    elif source == "fixtures":
        paths = FIXTURES
    else:
        paths = CORPUS_FILES[:80]
        if not paths:
            pytest.skip("corpus M is not downloaded")
    for path in paths:
        with open(path, "rb") as fh:
            data = fh.read()
        try:
            tree = ast.parse(data)
        except SyntaxError:
            continue
        units = incremental._units(tree, data.splitlines(keepends=True))
        shape = incremental._shape(tree, units)
        nodes, parents, by_type = walk_by_type(tree)
        assert len(shape.nodes) == len(nodes) and all(a is b for a, b in zip(shape.nodes, nodes)), path
        assert shape.parents == parents, path
        assert shape.by_type == by_type, path
        expected = def_qualnames(tree)
        expected[None] = None
        assert shape.qualnames == expected, path
