"""The shared class facts of analysis/modules/classes.py (CL1xx/CL2xx rules ask them): kinds of
`__init__` attributes, writes in methods, what counts as a module class."""
import ast
import textwrap

import pytest

from compile_lint.analysis.modules import classes
from compile_lint.analysis.semantic.facts import ModuleFacts
from compile_lint.analysis.semantic.names import NameTable
from compile_lint.source import SourceFile


def facts_of(code: str) -> ModuleFacts:
    code = textwrap.dedent(code)
    tree = ast.parse(code)
    return ModuleFacts(SourceFile("m.py", code.encode()), tree, NameTable.build(tree, "m"))


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


def test_another_frameworks_module_is_no_torch_module(tmp_path):
    """MegEngine's `M.Module` defines `forward` and holds layers, as a torch module
    does: CL201 fired on it and its unsafe fix would import torch (issue 19). A base of
    a package known to build on torch still counts."""
    from compile_lint.config import Settings
    from compile_lint.engine import Linter, Selection

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "base.py").write_text("import torch\nclass Backbone(torch.nn.Module):\n    pass\nclass Plain:\n    pass\n")
    (tmp_path / "nets.py").write_text(textwrap.dedent('''
        import megengine.module as M
        import pytorch_lightning as pl
        import torch
        from base import Backbone, Plain

        class MegBlock(M.Module):
            def forward(self, x):
                return x

        class MegNet(M.Module):
            def __init__(self):
                super().__init__()
                self.layers = [MegBlock() for _ in range(2)]
            def forward(self, x):
                return x

        class LitNet(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.layers = [torch.nn.Conv2d(3, 3, 1) for _ in range(2)]
            def forward(self, x):
                return x

        class Own(Backbone):
            def __init__(self):
                super().__init__()
                self.layers = [torch.nn.Conv2d(3, 3, 1) for _ in range(2)]

        class NotTorch(Plain):  # a pix2pix-style model: `forward`, on a base that is no module
            def __init__(self):
                super().__init__()
                self.layers = [torch.nn.Conv2d(3, 3, 1) for _ in range(2)]
            def forward(self, x):
                return x
    '''))
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection(select=("CL201",)))
    rows = sorted(f.row for r in linter.lint([str(tmp_path / "nets.py")]) for f in r.findings)
    # NotTorch defines forward, so its base is read in base.py: no module (joliGAN's
    # CUTModel(BaseModel(ABC)), bench/fresh_reads batch 14); Own defines no forward and its
    # project base is not read (a miss, as before: reading every class's base cost ~0.5 s
    # on corpus M)
    assert rows == [21]
