from __future__ import annotations

import ast
from typing import Optional

from ..analysis.tensors import TensorGuess
from ..analysis.declared import recorded_counts
from ..analysis.torch_api import CAPTURE_SCALAR_OUTPUTS, IS_COMPILING_FUNCS
from ..analysis.facts import RegionsFact
from .base import Case, Rule

IS_COMPILING = IS_COMPILING_FUNCS
SCALAR_CONFIG = CAPTURE_SCALAR_OUTPUTS
REORDERABLE = "reorderable_logging_functions"


class GraphBreak(Rule):
    """
    ## What it does
    Finds, in code that `torch.compile` traces, the constructs that force a graph
    break: `.item()`, `.tolist()`, `.numpy()`; `print(...)`; `float(t)`, `int(t)`,
    `bool(t)` of a tensor; `if`/`while`/`assert` on a tensor value; and boolean-mask
    indexing `x[x > 0]` (a data-dependent shape). Code under
    `if not torch.compiler.is_compiling():` is left alone, and so is `print` in a
    module that puts `print` into `torch._dynamo.config.reorderable_logging_functions`
    (Dynamo then runs it after the graph), unless it prints a bare `x.shape`/`x.size()`.

    When a recorded run (`compile-lint record`, docs/record.md) saw graph breaks at the
    region's compile site, the message says how many.

    ## Why is this bad?
    Each one splits the graph: Dynamo compiles the part before it, runs the construct
    in Python, and starts a new graph after it (1 graph break each, counted from
    `torch._dynamo.utils.counters["graph_break"]`). Fusion stops at the break,
    CUDA graphs cannot span it, and with `fullgraph=True` it is an error. Note that
    `torch._dynamo.explain(...).graph_break_count` under-counts these (it said 0 for
    1-3 real breaks).

    Measured on torch 2.13 CPU by `scripts/measure/cl508_print_reorderable.py`: a
    `print` in a compiled function gives 2 graph-break counts without
    `reorderable_logging_functions`, 0 with `print` in it (tensor, constant, f-string,
    `y.shape[0]`, `y.dtype` arguments), and still 2 for a bare `y.shape` / `y.size()`.

    ## Example
    ```python
    @torch.compile
    def tone_map(x):
        peak = x.amax().item()
        if x.mean() > 0.5:
            x = x * 0.8
        return x / peak
    ```

    ## Use instead
    ```python
    @torch.compile
    def tone_map(x):
        peak = x.amax()
        x = torch.where(x.mean() > 0.5, x * 0.8, x)
        return x / peak
    ```

    ## Fix safety
    No fix: the tensor form of the logic depends on what the code means.

    ## References
    - `scripts/measure/cl508_print_reorderable.py` (print and reorderable logging functions)
    - https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html#graph-breaks
    """

    needs = (RegionsFact,)
    code = "CL508"
    name = "graph-break"
    summary = "Construct that forces a graph break in compiled code"

    valid = [
        Case("import torch\ndef eager(x):\n    print(x.sum().item())\n", note="not compiled"),
        Case("import torch\n@torch.compile\ndef f(x, n: int):\n    if n > 2:\n        x = x * 2\n    return x * float(n)\n"),
        Case("import torch\n@torch.compile\ndef f(x):\n    if not torch.compiler.is_compiling():\n        print('eager')\n    return x\n"),
        Case("import torch\n@torch.compile\ndef f(x):\n    x[x > 1] = 1\n    return x\n", note="masked assignment is not a dynamic shape"),
        Case("import torch\n@torch.compile\ndef f(x):\n    if x.shape[-1] > 64:\n        x = x[..., ::2]\n    return x\n"),
    ]
    valid += [
        Case(
            "import torch\nimport torch._dynamo\ntorch._dynamo.config.reorderable_logging_functions.add(print)\n"
            "@torch.compile\ndef f(x):\n    print('step', x.shape[0], f'{x.shape}', x)\n    return x * 2\n",
            note="print is reorderable: 0 graph breaks (scripts/measure/cl508_print_reorderable.py)",
        ),
        Case(
            "import torch\nfrom torch._dynamo import config as dc\ndc.reorderable_logging_functions.update({print, len})\n"
            "class M(torch.nn.Module):\n    def forward(self, x):\n        print(x.dtype, x)\n        return x\nm = torch.compile(M())\n",
        ),
    ]
    invalid = [
        Case("import torch\n@torch.compile\ndef f(x):\n    return x / x.amax().item()\n", at=[(4, 16)]),
        Case(
            "import torch\nfrom torch import nn\nclass ToneMap(nn.Module):\n    def forward(self, x):\n        if x.mean() > 0.5:\n            x = x * 0.8\n        print('tone mapped')\n        return x\nmodel = torch.compile(ToneMap())\n",
            at=[(5, 12), (7, 9)],
        ),
        Case("import torch\n@torch.compile(mode='max-autotune')\ndef f(img):\n    luma = img.mean(1)\n    return img[luma > 0.5]\n", at=[(5, 12)]),
        Case("import torch\n@torch.compile\ndef f(x: torch.Tensor):\n    return x * bool(x.any())\n", at=[(4, 16)]),
        Case(
            "import torch\ndef helper(x):\n    return x.tolist()\n@torch.compile\ndef f(x):\n    return helper(x)\n",
            at=[(3, 12)], note="reached through a call",
        ),
        Case(
            "import torch\nimport logging\ntorch._dynamo.config.reorderable_logging_functions.add(logging.info)\n"
            "@torch.compile\ndef f(x):\n    print('step')\n    return x * 2\n",
            at=[(6, 5)], note="another function is reorderable, print is not",
        ),
        Case(
            "import torch\ntorch._dynamo.config.reorderable_logging_functions.add(print)\n"
            "@torch.compile\ndef f(x):\n    print(x.shape)\n    return x * 2\n",
            at=[(5, 5)], note="a bare torch.Size argument cannot be reordered: it still breaks",
        ),
    ]

    def check(self, facts):
        if not facts.has_region("compiled"):
            return
        capture_scalars = self._captures_scalars(facts)
        print_reorderable = self._print_reorderable(facts)
        guesses: dict[int, TensorGuess] = {}

        def guess_for(node) -> Optional[TensorGuess]:
            func = facts.enclosing_function(node)
            if func is None:
                return None
            if id(func) not in guesses:
                guesses[id(func)] = TensorGuess(facts, func)
            return guesses[id(func)]

        def report(node, what):
            region = facts.in_region(node, "compiled")
            if region is None or self._guarded(facts, node):
                return None
            return self.finding(
                facts, node,
                f"{what} in compiled code forces a graph break" + recorded_counts(region, "graph_breaks"),
                region=region,
            )

        for call in facts.nodes(ast.Call):
            func = call.func
            found = None
            if isinstance(func, ast.Attribute) and func.attr in ("item", "tolist", "numpy") and not call.args:
                if func.attr == "item" and capture_scalars:
                    continue
                receiver = func.value
                if isinstance(receiver, ast.Attribute) and receiver.attr == "shape":
                    continue
                found = report(call, f"`.{func.attr}()`")
            else:
                dotted = facts.resolve(func)
                if dotted == "builtins.print" and not (print_reorderable and not self._prints_size(call)):
                    found = report(call, "`print(...)`")
                elif dotted in ("builtins.float", "builtins.int", "builtins.bool") and len(call.args) == 1:
                    guess = guess_for(call) if facts.in_region(call, "compiled") else None
                    if guess is not None and guess.is_tensor(call.args[0]):
                        found = report(call, f"`{dotted[9:]}(tensor)`")
            if found is not None:
                yield found
        for node in facts.nodes(ast.If, ast.While, ast.Assert, ast.IfExp):
            guess = guess_for(node) if facts.in_region(node, "compiled") else None
            if guess is not None and guess.is_tensor(node.test):
                found = report(node.test, f"`{type(node).__name__.lower().replace('ifexp', 'if')}` on a tensor value")
                if found is not None:
                    yield found
        for sub in facts.nodes(ast.Subscript):
            if not isinstance(sub.ctx, ast.Load) or not isinstance(sub.slice, ast.Compare):
                continue
            guess = guess_for(sub) if facts.in_region(sub, "compiled") else None
            if guess is None:
                continue
            index = sub.slice
            if isinstance(index, ast.Compare) and guess.is_tensor(index):
                found = report(sub, "boolean-mask indexing (a data-dependent shape)")
                if found is not None:
                    yield found

    @staticmethod
    def _captures_scalars(facts) -> bool:
        for stmt in facts.nodes(ast.Assign):
            for target in stmt.targets:
                if facts.resolve(target) == SCALAR_CONFIG and isinstance(stmt.value, ast.Constant) and stmt.value.value:
                    return True
        return False

    @staticmethod
    def _prints_size(call: ast.Call) -> bool:
        """A bare `torch.Size` argument (`x.shape`, `x.size()`): Dynamo cannot reorder
        that print even when `print` is reorderable."""
        for arg in list(call.args) + [kw.value for kw in call.keywords]:
            if isinstance(arg, ast.Attribute) and arg.attr == "shape":
                return True
            if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "size" and not arg.args:
                return True
        return False

    @staticmethod
    def _print_reorderable(facts) -> bool:
        """The module puts `print` into Dynamo's `reorderable_logging_functions`
        (`.add(print)`, `.update({print})`, `= {print}`, `patch(reorderable_logging_functions=...)`):
        Dynamo then moves the call after the graph instead of breaking it."""
        for node in facts.nodes(ast.Attribute, ast.keyword):
            if isinstance(node, ast.keyword):
                if node.arg != REORDERABLE:
                    continue
            elif node.attr != REORDERABLE or not (facts.resolve(node) or "").startswith("torch."):
                continue
            stmt = facts.statement_of(node)
            if any(isinstance(n, ast.Name) and facts.resolve(n) == "builtins.print" for n in ast.walk(stmt)):
                return True
        return False

    @staticmethod
    def _guarded(facts, node) -> bool:
        """Inside a branch that only runs eagerly (`if not is_compiling():`)."""
        child = node
        for anc in facts.ancestors(node):
            if isinstance(anc, ast.If):
                test = anc.test
                negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
                inner = test.operand if negated else test
                if isinstance(inner, ast.Call) and facts.resolve(inner.func) in IS_COMPILING:
                    in_body = child in anc.body
                    if in_body == negated:
                        return True
            if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return False
            child = anc
        return False
