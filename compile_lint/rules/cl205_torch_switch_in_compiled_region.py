from __future__ import annotations

import ast

from ..analysis.semantic.facts import RegionsFact
from ..analysis.reach.queries import eager_only
from .base import Case, Rule

SWITCH_PREFIX = "torch.backends."  # torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.benchmark, ...
SWITCH_CALLS = frozenset({"torch.set_float32_matmul_precision"})


class TorchSwitchInCompiledRegion(Rule):
    """
    ## What it does
    Finds writes of torch's process-wide switches inside compiled code: assignments
    to a `torch.backends` flag (`torch.backends.cuda.matmul.allow_tf32 = False`,
    `torch.backends.cudnn.benchmark = True`, however imported) and calls of
    `torch.set_float32_matmul_precision(...)`, in a function that `torch.compile`
    reaches (directly or through the code it calls), also in the body of a context
    manager that saves and restores the switch around some math. Code under
    `if not torch.compiler.is_compiling():` is left alone.

    ## Why is this bad?
    Dynamo records such a write as a side effect of the frame, not as a step between
    the ops around it. Measured on torch 2.13 CPU (`scripts/measure/side_effects_replay.py`,
    output in `scripts/measure/out/side_effects_replay.txt`), with a custom op that reads
    the switch at run time inside the graph: `allow_tf32 = False` around an op, by
    hand or in a `@contextlib.contextmanager`, is not in effect for that op with
    aot_eager and inductor (the op saw 1.0 where eager saw 0.0); `cudnn.benchmark = True` before an op is not in
    effect for it with any backend (0.0 vs 1.0). After the call, with aot_eager and
    inductor, `set_float32_matmul_precision("high")` holds on the first call only (the
    2nd and 3rd calls leave `highest`), and `allow_tf32 = True` is not set again on
    cached calls (the first leaves the legacy and new TF32 states disagreeing, so
    reading the flag raises). Plain Python side effects (a list append, a counter,
    `self.calls += 1`) are replayed on every call. The switch meant for a
    numerically sensitive step (a Newton-Schulz iteration in full fp32) silently does
    not apply to it.

    On real code (`bench/judged/`: corpus L and the 24 apps): no finding (they set
    these switches at start-up); the hazard is reported upstream.

    ## Example
    ```python
    @torch.compile
    def orthogonalize(g):
        torch.backends.cuda.matmul.allow_tf32 = False
        x = newton_schulz(g)
        torch.backends.cuda.matmul.allow_tf32 = True
        return x
    ```

    ## Use instead
    ```python
    torch.backends.cuda.matmul.allow_tf32 = False   # set once, outside compiled code
    fast = torch.compile(newton_schulz)
    ```
    or set the switch around the call of the compiled function.

    ## Fix safety
    No fix: where the switch belongs (program start, around the call) is the author's choice.

    ## References
    - `scripts/measure/side_effects_replay.py`, `scripts/measure/out/side_effects_replay.txt`
    - pytorch#197896, pytorch#196173 (switches set in compiled code); `docs/hazards-measured.md`
    """

    code = "CL205"
    name = "torch-switch-in-compiled-region"
    summary = "A torch switch (`torch.backends...`, matmul precision) set in compiled code does not apply to its ops"
    requires = (b"backends", b"set_float32_matmul_precision")
    needs = (RegionsFact,)
    verify_target = False  # nothing an eager-vs-compiled run of the function shows

    valid = [
        Case("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n@torch.compile\ndef f(x):\n    return x @ x\n",
             note="set once, outside compiled code"),
        Case("import torch\n@torch.compile\ndef f(x):\n    flag = torch.backends.cudnn.benchmark\n    return x * 2\n", note="a read"),
        Case("import torch\n@torch.compile\ndef f(x):\n    if not torch.compiler.is_compiling():\n"
             "        torch.backends.cudnn.benchmark = True\n    return x * 2\n", note="runs only eagerly"),
        Case("import torch\ndef setup():\n    torch.set_float32_matmul_precision('high')\n"),
    ]
    invalid = [
        Case(
            "import torch\n@torch.compile\ndef orthogonalize(g):\n    torch.backends.cuda.matmul.allow_tf32 = False\n"
            "    x = g @ g.mT\n    torch.backends.cuda.matmul.allow_tf32 = True\n    return x\n",
            at=[(4, 5), (6, 5)],
        ),
        Case(
            "import torch\nfrom torch.backends import cudnn\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
            "        cudnn.benchmark = True\n        return x * 2\nnet = torch.compile(Net())\n",
            at=[(5, 9)], note="a compiled module's forward, imported flag module",
        ),
        Case(
            "import torch\ndef step(x):\n    torch.set_float32_matmul_precision('high')\n    return x @ x\n"
            "fast = torch.compile(step)\n",
            at=[(3, 5)],
        ),
    ]

    def check(self, facts):
        if not facts.has_region("compiled"):
            return
        for node in facts.nodes(ast.Assign, ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                dotted = facts.resolve(target) if isinstance(target, ast.Attribute) else None
                if dotted and dotted.startswith(SWITCH_PREFIX):
                    yield from self._report(facts, node, f"`{dotted}`")
        for call in facts.nodes(ast.Call):
            dotted = facts.resolve(call.func)
            if dotted in SWITCH_CALLS:
                yield from self._report(facts, call, f"`{dotted}(...)`")

    def _report(self, facts, node, what: str):
        region = facts.in_region(node, "compiled")
        if region is None or eager_only(facts, node):
            return
        yield self.finding(
            facts, node,
            f"{what} set in compiled code: the ops compiled with it do not see it, and later calls may not set it again",
            region=region,
        )
