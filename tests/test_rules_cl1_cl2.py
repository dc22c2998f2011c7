"""CL1xx/CL2xx checks that a rule's `valid`/`invalid` cases cannot express: the
shared class facts, fix tiers, region labels, codemod layouts, pages, robustness."""
import ast
import subprocess
import sys
import textwrap

import libcst as cst
import pytest

from compile_lint.analysis import classes
from compile_lint.analysis.facts import ModuleFacts
from compile_lint.analysis.names import NameTable
from compile_lint.model import SAFE, UNSAFE
from compile_lint.rules import get_rule
from compile_lint.rules.base import Case
from compile_lint.source import SourceFile
from compile_lint.testing import run_case

from conftest import ROOT

MINE = ["CL101", "CL102", "CL103", "CL104", "CL201", "CL202", "CL203", "CL204"]


def facts_of(code: str) -> ModuleFacts:
    code = textwrap.dedent(code)
    tree = ast.parse(code)
    return ModuleFacts(SourceFile("m.py", code.encode()), tree, NameTable.build(tree, "m"))


def run(code, source, tmp_path, **kw):
    return run_case(get_rule(code), Case(textwrap.dedent(source), **kw), str(tmp_path))


# -- shared class facts --------------------------------------------------------------
def test_init_attr_kinds_from_literals_parameters_and_arithmetic():
    facts = facts_of(
        """
        from torch import nn
        class Grade(nn.Module):
            def __init__(self, gamma: float = 2.2, steps=4, names=("a",), mode="fast", scale=None):
                super().__init__()
                self.gamma = gamma
                self.steps = steps * 2
                self.names = list(names)
                self.mode = mode
                self.scale = scale
                self.order = [0, 1, 2]
                self.inv = 1 / gamma
                self.conv = nn.Conv2d(3, 3, 1)
                self._setup()
            def _setup(self):
                self.flag = True
        """
    )
    cls = next(facts.nodes(ast.ClassDef))
    kinds = {k: v[0] for k, v in classes.init_attr_kinds(facts, cls).items()}
    assert kinds == {
        "gamma": "float", "steps": "int", "names": "list", "mode": "str", "order": "list",
        "inv": "float", "flag": "bool",
    }
    assert classes.init_time_methods(cls) == {"__init__", "_setup"}
    assert classes.is_module_class(facts, cls)


def test_method_writes_cover_assignments_mutators_and_setattr():
    facts = facts_of(
        """
        import torch.nn as nn
        class Pipe(nn.Module):
            def __init__(self):
                super().__init__()
                self.order = [0, 1]
                self.n = 0
                self.alpha = 0.5
            def shuffle(self):
                self.order.reverse()
            def forward(self, x):
                self.n += 1
                return x
            def configure(me, a):
                setattr(me, "alpha", a)
        """
    )
    cls = next(facts.nodes(ast.ClassDef))
    writes = classes.method_attr_writes(facts, cls)
    assert {k: [w.where for w in v] for k, v in writes.items()} == {
        "order": ["Pipe.shuffle"], "n": ["Pipe.forward"], "alpha": ["Pipe.configure"],
    }
    assert "mutated with `.reverse()`" == writes["order"][0].how


def test_module_class_detection_is_conservative():
    facts = facts_of(
        """
        import torch
        from .base import Backbone
        class A(torch.nn.Module): pass
        class B(A): pass
        class C(Backbone):
            def forward(self, x): return x
        class D(Backbone): pass
        class E: pass
        class F(torch.nn.Parameter): pass
        """
    )
    verdict = {c.name: classes.is_module_class(facts, c) for c in facts.nodes(ast.ClassDef)}
    assert verdict == {"A": True, "B": True, "C": True, "D": False, "E": False, "F": False}


@pytest.mark.parametrize(
    "expr,kind",
    [("3", "int"), ("True", "bool"), ("2.2", "float"), ("'x'", "str"), ("[1]", "list"), ("(1, 2)", "tuple"),
     ("len(x)", "int"), ("-1", "int"), ("1 / 3", "float"), ("a if c else b", None), ("torch.tensor(1.0)", None),
     ("not x", "bool"), ("f'{x}'", "str")],
)
def test_python_kind(expr, kind):
    facts = facts_of(f"import torch\nv = {expr}\n")
    value = next(facts.nodes(ast.Assign)).value
    assert classes.python_kind(facts, value, {}) == kind


# -- fix tiers and region labels --------------------------------------------------------
def test_fix_tiers(tmp_path):
    cl101 = run("CL101", """\
        import torch
        def f(x, ref):
            return x.view(int(ref.shape[0]), -1)
        t = torch.jit.trace(f, (torch.rand(2, 4), torch.rand(2, 4)))
        """, tmp_path / "a")
    assert [f.fix.applicability for f in cl101.findings] == [SAFE]
    cl103 = run("CL103", """\
        import torch
        import torch.nn.functional as F
        @torch.compile
        def f(x):
            return F.interpolate(x, scale_factor=1.25)
        """, tmp_path / "b")
    assert [f.fix.applicability for f in cl103.findings] == [UNSAFE]
    cl201 = run("CL201", """\
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.b = [nn.Conv2d(3, 3, 1)]  # nn.ReLU() holds nothing: not reported
        """, tmp_path / "c")
    assert [f.fix.applicability for f in cl201.findings] == [UNSAFE]
    assert "state_dict" in cl201.findings[0].fix.message


def test_traced_finding_is_labelled_traced_even_when_also_compiled(tmp_path):
    result = run("CL101", """\
        import torch
        import torch.nn.functional as F
        def up(x, ref):
            return F.interpolate(x, size=(int(ref.shape[2]), ref.shape[3]))
        fast = torch.compile(up)
        traced = torch.jit.trace(up, (torch.rand(1, 3, 4, 4), torch.rand(1, 3, 8, 8)))
        """, tmp_path)
    assert [f.region_kind for f in result.findings] == ["traced"]
    message = result.findings[0].message
    assert "traced by" in message and ":6" in message and "compiled by" not in message


def test_region_description_names_the_path_through_submodules(tmp_path):
    result = run("CL102", """\
        import torch
        from torch import nn
        class Inner(nn.Module):
            def __init__(self):
                super().__init__()
                self.k = 2
            def set_k(self, k):
                self.k = k
            def forward(self, x):
                return x * self.k
        class Outer(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()
            def forward(self, x):
                return self.inner(x)
        t = torch.jit.trace(Outer(), torch.rand(2))
        """, tmp_path)
    (finding,) = result.findings
    assert "reached from Outer.forward" in finding.message and "set_k" in finding.message


# -- codemod layouts --------------------------------------------------------------------
@pytest.mark.parametrize(
    "before,after",
    [
        ("f(x)", "f(x, recompute_scale_factor=True)"),
        ("f()", "f(recompute_scale_factor=True)"),
        ("f(\n    x,\n)", "f(\n    x,\n    recompute_scale_factor=True,\n)"),
        ("f(x, s,\n  )", "f(x, s, recompute_scale_factor=True,\n  )"),
    ],
)
def test_append_keyword_keeps_layout(before, after):
    from codemods.recompute_scale_factor import append_keyword

    call = cst.parse_expression(before)
    new = append_keyword(call, "recompute_scale_factor", cst.Name("True"))
    assert cst.Module([]).code_for_node(new) == after


# -- pages ------------------------------------------------------------------------------
@pytest.mark.parametrize("code", MINE)
def test_page_cites_hazards_and_sections(code):
    page = get_rule(code).page()
    assert "hazards.md" not in page, "pages cite nothing outside the repository"
    refs = page[page.index("## References"):]
    assert any(where in refs for where in ("scripts/", "fixtures/", "tests/", "bench/", "torch/", "pytorch#"))
    assert page.index("## What it does") < page.index("## Why is this bad?") < page.index("## References")


def test_cl201_page_says_it_adds_state_dict_keys():
    proc = subprocess.run([sys.executable, "-m", "compile_lint", "rule", "CL201"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "adds `state_dict` keys" in proc.stdout and "strict=False" in proc.stdout


# -- robustness -------------------------------------------------------------------------
ODD = [
    "",
    "x = 1\n",
    "class A:\n    pass\n",
    "import torch\nclass M(torch.nn.Module):\n    @staticmethod\n    def forward(x):\n        return x\n",
    "import torch\nf = torch.compile(lambda x: x)\nfor i in range(3):\n    g = torch.compile(lambda: i)\n",
    "import torch\nasync def f(x):\n    async for i in x:\n        torch.compile(lambda: i)\n",
    "import torch\ndef f(x):\n    match x.shape:\n        case (a, b):\n            return x.view(int(a), b)\nt = torch.jit.trace(f, torch.rand(2, 2))\n",
    "import torch\nclass M(torch.nn.Module):\n    def __init__(self, *a, **k):\n        super().__init__()\n        self.x, self.y = [], {}\n        self.x += (yield)\n",
    "import torch\ntorch._dynamo.config.recompile_limit = 10 ** 10 ** 10\n",
    "import torch\ntorch.onnx.export(*args)\ntorch.export.export(m, **kw)\n",
    "import torch.nn.functional as F\nimport torch\n@torch.compile\ndef f(x, **kw):\n    return F.interpolate(x, scale_factor=1.2, **kw)\n",
]


@pytest.mark.parametrize("source", ODD)
@pytest.mark.parametrize("code", MINE)
def test_odd_code_does_not_crash(code, source, tmp_path):
    run(code, source, tmp_path)
