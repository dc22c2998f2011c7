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


def test_what_the_plain_forms_rule_out_no_guess_calls_a_tensor_or_a_mask():
    """plainly_not_tensor / plainly_not_mask answer before any guess is built (CL508 asks
    them of every `if` test, size and index of compiled code): each form they rule out
    must be one the guesses never call a tensor or a mask, even where every name is one."""
    from compile_lint.analysis.tensors.kinds import plainly_not_mask, plainly_not_tensor

    flow, defs = flow_of(
        """
        import torch
        def f(x: torch.Tensor, m: torch.Tensor, n: int):
            mask = x > 0
            y = x * 2
            exprs = (x, x.shape, x.shape[0], x.size(1), x.dim(), x.sum(), x.T, x.dtype, not x, -x,
                     x is None, m in y, x > y, x.shape[0] > 2, 3, "s", n + 1, x + 1, x[0], x.shape[1:],
                     x.size(0) * 2, mask, mask & mask, ~mask, mask[0], x.bool(), (x, y), [x], x if n else y,
                     mask.any(), x.view(-1), len(x), torch.zeros(3), y.data, x.numel() > 1, x == y)
            return y
        """
    )
    func = defs["f"]
    guess, masks = flow.guess(func), flow.masks(func)
    exprs = next(n.value for n in ast.walk(func) if isinstance(n, ast.Assign) and n.targets[0].id == "exprs").elts
    ruled_out = [e for e in exprs if plainly_not_tensor(flow.facts, e)]
    assert ruled_out and not any(guess.is_tensor(e) for e in ruled_out)
    assert {ast.unparse(e) for e in ruled_out} >= {"x.shape", "x.shape[0]", "x.size(1)", "not x", "x is None", "3"}
    not_masks = [e for e in exprs if plainly_not_mask(e)]
    assert not_masks and not any(masks.is_mask(e, e) for e in not_masks)
