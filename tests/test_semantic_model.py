"""The semantic model's scopes (analysis/semantic/model.py): what a name stands for where it
is used. Python's own rules decide each case."""
import ast
import textwrap

import pytest

from compile_lint.analysis.semantic.facts import ModuleFacts
from compile_lint.analysis.semantic.names import NameTable
from compile_lint.source import SourceFile

SOURCE = '''
import torch
import torch._inductor.config as config
from torch import compile as tc

config.max_autotune = True                       # 6: the module's config

def train(config):
    return config.block_size                     # 9: the parameter

def local():
    config = load()
    return config.n_embd                         # 13: a local

def declared():
    global config
    return config.triton                         # 17: the module's, declared global

def imported_here():
    import numpy as config
    return config.zeros                          # 21: what this import names

def outer(config):
    def inner():
        return config.vocab                      # 25: the enclosing function's parameter
    return inner

def defaults(x=config.debug, *, f=tc):           # 28: defaults run in the module scope
    return x

class Model:
    config = make()
    size = config.hidden                         # 33: the class attribute
    def forward(self):
        return config.cpp                        # 35: methods do not see class names

sizes = [config.rows for config in configs]      # 37: the comprehension's target
first = [c for c in config.items]                # 38: the first iterable is outside
fn = lambda config: config.width                 # 39: the lambda's parameter
uses = (config.size, tc)                          # 40
'''


@pytest.fixture(scope="module")
def facts():
    tree = ast.parse(SOURCE)
    return ModuleFacts(SourceFile("m.py", SOURCE.encode()), tree, NameTable.build(tree, "m"))


def at(facts, row, text):
    """The resolution of the first `text` attribute or name at line `row`."""
    for node in ast.walk(facts.tree):
        if getattr(node, "lineno", None) == row and isinstance(node, (ast.Attribute, ast.Name)):
            if ast.unparse(node) == text:
                return facts.resolve(node)
    raise AssertionError(f"no {text} at line {row}")


@pytest.mark.parametrize(
    "row, text, want",
    [
        (6, "config.max_autotune", "torch._inductor.config.max_autotune"),
        (9, "config.block_size", None),
        (13, "config.n_embd", None),
        (17, "config.triton", "torch._inductor.config.triton"),
        (21, "config.zeros", "numpy.zeros"),
        (25, "config.vocab", None),
        (28, "config.debug", "torch._inductor.config.debug"),
        (28, "tc", "torch.compile"),
        (33, "config.hidden", None),
        (35, "config.cpp", "torch._inductor.config.cpp"),
        (37, "config.rows", None),
        (38, "config.items", "torch._inductor.config.items"),
        (39, "config.width", None),
        (40, "config.size", "torch._inductor.config.size"),
        (40, "tc", "torch.compile"),
    ],
)
def test_names_resolve_by_scope(facts, row, text, want):
    assert at(facts, row, text) == want


def test_a_parameter_shadowing_a_config_import_is_not_reported_by_cl501(tmp_path):
    """The defect of issue 19: 84 false CL501 findings in one public app, every
    attribute read on a `config` parameter taken for torch._inductor.config."""
    from compile_lint.config import Settings
    from compile_lint.engine import Linter, Selection

    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent('''
        import torch._inductor.config as config

        config.coordinate_descent_tuning = True
        config.not_a_key = 1

        class GPT:
            def __init__(self, config):
                self.n = config.block_size
                self.m = config.n_embd
    '''))
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection(select=("CL501",)))
    found = [(f.code, f.row) for r in linter.lint([str(path)]) for f in r.findings]
    assert found == [("CL501", 5)]


REBOUND = '''
import a, b, c, d, e, f, g, h
import torch

def uses():
    with open() as a:
        a.x                                      # 7
    try:
        pass
    except E as b:
        b.x                                      # 11
    for c in []:
        c.x                                      # 13
    if (d := 1):
        d.x                                      # 15
    match v:
        case {"k": e, **f}:
            e.x, f.x                             # 18
    import os as g
    g.x                                          # 20
    h.x, torch.x                                 # 21: nothing rebinds them
'''


@pytest.mark.parametrize("row, text, want", [
    (7, "a.x", None), (11, "b.x", None), (13, "c.x", None), (15, "d.x", None), (18, "e.x", None),
    (18, "f.x", None), (20, "g.x", "os.x"), (21, "h.x", "h.x"), (21, "torch.x", "torch.x"),
])
def test_every_binding_form_shadows_a_module_import(row, text, want):
    # the model reads the names some scope may bind once from the file's nodes by type
    # (SemanticModel.rebound) and asks the scopes only about those: each form must be in it
    tree = ast.parse(REBOUND)
    facts = ModuleFacts(SourceFile("m.py", REBOUND.encode()), tree, NameTable.build(tree, "m"))
    assert "torch" not in facts.semantic.rebound
    assert at(facts, row, text) == want
