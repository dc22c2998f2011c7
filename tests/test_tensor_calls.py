"""analysis/tensors/calls.py: what crosses a call (returns, callers' arguments, buffers,
generators), and where it stays unknown."""
import ast
import textwrap

from compile_lint.analysis.semantic.facts import ModuleFacts
from compile_lint.analysis.semantic.names import NameTable
from compile_lint.analysis.tensors.calls import GENERATOR, MASK, TENSOR, flow_for
from compile_lint.source import SourceFile


def flow_of(code: str):
    code = textwrap.dedent(code)
    tree = ast.parse(code)
    facts = ModuleFacts(SourceFile("m.py", code.encode()), tree, NameTable.build(tree, "m"))
    defs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    return flow_for(facts), defs


def test_a_parameter_is_known_only_when_every_caller_fills_it_alike():
    flow, defs = flow_of(
        """
        import torch
        def pad(x, n, m, k=None, *, w):
            return x
        def a(x: torch.Tensor):
            return pad(x, x.sum(), x > 0, w=x.mean())
        def b(x: torch.Tensor):
            return pad(x, 3, x < 0, x.sum(), w=x.sum())
        """
    )
    pad = defs["pad"]
    assert flow.param_kind(pad, "x") == TENSOR
    assert flow.param_kind(pad, "n") is None  # a tensor here, an int there
    assert flow.param_kind(pad, "m") == MASK
    assert flow.param_kind(pad, "k") is None  # one call leaves it to its default
    assert flow.param_kind(pad, "w") == TENSOR


def test_returns_by_annotation_and_by_body_and_recursion_is_unknown():
    flow, defs = flow_of(
        """
        import torch
        from typing import Tuple
        def split(x: torch.Tensor) -> Tuple[torch.Tensor, int]:
            return x * 2, x.shape[0]
        def keep(x: torch.Tensor):
            if x.dim() > 2:
                return keep(x[0])
            return x > 0
        def mixed(x: torch.Tensor):
            if x.dim() > 2:
                return None
            return x
        def gen(x: torch.Tensor):
            yield x
        """
    )
    assert flow.def_returns(defs["split"]) == (TENSOR, None)
    assert flow.def_returns(defs["keep"]) is None  # its own call is unknown while it is worked out
    assert flow.def_returns(defs["mixed"]) is None
    assert flow.def_returns(defs["gen"]) is None


def test_attributes_and_generators():
    flow, defs = flow_of(
        """
        import torch
        from torch import nn
        from typing import Optional
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = nn.Buffer(torch.ones(1))
                self.register_buffer("shift", torch.zeros(1))
                self.steps = nn.Buffer(torch.ones(1))
                self.gen = torch.Generator().manual_seed(0)
            def reset(self):
                self.steps = 0
            def forward(self, x, g: Optional[torch.Generator] = None, h: torch.Generator = None):
                local = torch.Generator()
                return self.scale, self.shift, self.steps, self.gen, g, h, local
        """
    )
    forward = defs["forward"]
    ret = forward.body[-1].value.elts
    assert [flow.attr_kind(a) for a in ret[:4]] == [TENSOR, TENSOR, None, GENERATOR]
    assert not flow.is_generator(forward, ret[4])  # optional: None is fine for an op
    assert flow.is_generator(forward, ret[4], receiver=True)  # a method call on None would raise
    assert flow.is_generator(forward, ret[5]) and flow.is_generator(forward, ret[6])
