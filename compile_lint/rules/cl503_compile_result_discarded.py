from __future__ import annotations

import ast

from ..analysis.compiled.calls import is_compile_call, target_text
from ..analysis.compiled.rebinding import later_observer
from ..analysis.reach.queries import stmt_text
from .base import Case, Rule


class CompileResultDiscarded(Rule):
    """
    ## What it does
    Finds `torch.compile(x)` used as a statement, its result thrown away.

    ## Why is this bad?
    `torch.compile` does not change its argument: it returns a new, compiled callable.
    Called as a statement it compiles nothing (0 graphs), and the model keeps running
    eagerly while its author believes it is compiled.

    ## Example
    ```python
    model = UNet()
    torch.compile(model, mode="max-autotune")
    ```

    ## Use instead
    ```python
    model = UNet()
    model = torch.compile(model, mode="max-autotune")
    ```
    or, to compile in place and keep `state_dict` keys, `model.compile(...)` on a
    module of your own.

    ## Fix safety
    Safe, when the argument is a name or an attribute (`model`, `self.unet`) and no later
    use of it can tell the difference: the fix assigns the result back to it, which is
    what the call was written for, and from there on the name holds the compiled wrapper.
    Calls, `.eval()`, `.to()`, `.parameters()` and `torch.export.export` behave the same
    on the wrapper; these do not (measured on torch 2.13 CPU,
    `scripts/measure/rebinding_fix_observers.py`), so where the name is later passed to
    one of them the fix is unsafe, and its title says which line:
    `torch.jit.trace`, `torch.fx.symbolic_trace`, `torch.jit.script` and `torch.onnx.export`
    raise on the wrapper ("torch.jit.trace a dynamo-optimized function"); `pickle` and
    `torch.save` save the wrapper (a compiled function does not pickle at all); `is`,
    `id`, `type`, `isinstance` and `copy.deepcopy` see another object;
    `state_dict()`, `named_parameters()` and friends gain an `_orig_mod.` prefix and
    `load_state_dict` of the original's keys fails. A use in another function the name
    is passed to is not followed.

    Not reported: `torch.compile(..., disable=True)` (the literal), which returns its
    argument itself (`torch._dynamo.optimize` gives a `_NullDecorator`): nothing is
    compiled to lose (`analysis/compiled/calls.is_compile_call`, shared with CL509 and
    CL510; on frame A and the fresh reads no finding of this rule moved).

    ## References
    - measured on torch 2.13 CPU: 0 graphs compiled (the wrapper is dropped; counters
      of `torch._dynamo.utils` stay empty). `fixtures/rules/CL503/` holds the shapes
    - https://pytorch.org/docs/stable/generated/torch.compile.html
    """

    needs = ()
    code = "CL503"
    name = "compile-result-discarded"
    summary = "`torch.compile(x)` as a statement compiles nothing"
    fix_safety = "safe"
    codemod = "codemods.assign_compile_result:AssignCompileResult"
    requires = (b"compile",)

    valid = [
        Case("import torch\nmodel = torch.compile(model)\n"),
        Case("import torch\ndef build(m):\n    return torch.compile(m)\n"),
        Case("import re\nre.compile('a+')\n", note="not torch's compile"),
        Case("compile('x = 1', 'f', 'exec')\n", note="the builtin"),
        Case("import torch\nnet = Net()\nnet.compile()\n", note="in place, not discarded"),
        Case("import torch\nmodel = Net()\ntorch.compile(model, disable=True)\n",
             note="`disable=True` returns the model itself: nothing is compiled to lose"),
    ]
    invalid = [
        Case(
            "import torch\nmodel = Net()\ntorch.compile(model)\n",
            fixed="import torch\nmodel = Net()\nmodel = torch.compile(model)\n",
            at=[(3, 1)],
        ),
        Case(
            "import torch as T\nclass Runner:\n    def setup(self):\n        T.compile(self.unet, mode='max-autotune')  # speed\n",
            fixed="import torch as T\nclass Runner:\n    def setup(self):\n        self.unet = T.compile(self.unet, mode='max-autotune')  # speed\n",
            at=[(4, 9)],
        ),
        Case("from torch import compile as tc\ntc(model)\n", fixed="from torch import compile as tc\nmodel = tc(model)\n", at=[(2, 1)]),
        Case(
            "import functools, torch\nfast = functools.partial(torch.compile, mode='reduce-overhead')\nfast(model)\n",
            fixed="import functools, torch\nfast = functools.partial(torch.compile, mode='reduce-overhead')\nmodel = fast(model)\n",
            at=[(3, 1)],
        ),
        Case("import torch\ntorch.compile(make_model())\n", note="no fix: nothing to assign to", at=[(2, 1)]),
        Case(
            "import torch\nup = Up()\ntorch.compile(up)\ntraced = torch.jit.trace(up, torch.rand(1, 3, 8, 8))\n",
            fixed="import torch\nup = Up()\nup = torch.compile(up)\ntraced = torch.jit.trace(up, torch.rand(1, 3, 8, 8))\n",
            at=[(3, 1)],
            note="unsafe fix: line 4 would trace the compiled wrapper, which raises",
        ),
    ]

    def check(self, facts):
        for stmt in facts.nodes(ast.Expr):
            call = stmt.value
            if not is_compile_call(facts, call):
                continue
            target = target_text(facts, call.args[0]) if call.args else None
            message = (
                f"`{facts.text(call.func)}({stmt_text(facts, call.args[0], 30) if call.args else ''})` "
                "returns the compiled code, and this statement throws it away"
            )
            if target:
                fix = f"assign the result: `{target} = {facts.text(call.func)}(...)`"
                seen = later_observer(facts, stmt, target)
                if seen:
                    fix += f" (unsafe: {seen})"
                yield self.finding(facts, call, message, fix=fix, unsafe=seen is not None, data={"target": target})
            else:
                yield self.finding(facts, call, message)
