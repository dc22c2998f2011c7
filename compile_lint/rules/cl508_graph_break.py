from __future__ import annotations

import ast
from typing import Optional

from ..analysis.tensors import TensorGuess
from ..analysis.declared import recorded_counts
from ..analysis.facts import RegionsFact
from ..analysis.region_queries import CASTS, dynamo_flag_on, eager_only
from .base import Case, Rule

REORDERABLE = "reorderable_logging_functions"


class GraphBreak(Rule):
    """
    ## What it does
    Finds, in code that `torch.compile` traces, the constructs that force a graph
    break: `.item()`, `.tolist()`, `.numpy()`; `print(...)`; `float(t)`, `int(t)`,
    `bool(t)` of a tensor; `if`/`while`/`assert` on a tensor value; and boolean-mask
    indexing `x[x > 0]` (a data-dependent shape). Code under
    `if not torch.compiler.is_compiling():` is left alone (also when the test calls the
    project's own wrapper whose one `return` reads `is_compiling`, in this file or the
    module it is imported from), so is `float(x)`/`int(x)`/`bool(x)` under
    `if isinstance(x, (int, float)):` (a Python number); `.item()` and mask indexing are
    left alone when `torch._dynamo.config.capture_scalar_outputs` /
    `capture_dynamic_output_shape_ops` is turned on (assignment, `setattr`, `patch(...)`) in
    the file or in the file of every compile site of the region (Dynamo then keeps them in
    the graph); and so is `print` in a
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
    - `bench/judged/` (verdicts.jsonl): on corpus L, kornia guards its eager-only checks
      with its own `is_compiling()` wrapper and casts `float(sigma)` only after
      `isinstance(sigma, (int, float))`; both were false alarms, kept as the negative
      cases above and `fixtures/rules/CL508/clean_guards/`
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
        Case(
            "import torch\n@torch.compile\ndef f(x):\n    if torch.jit.is_tracing():\n        print(x.sum().item())\n    return x\n",
            note="torch.jit.is_tracing() is False under torch.compile: its body never runs compiled",
        ),
        Case("import torch\n@torch.compile\ndef f(x):\n    if x.shape[-1] > 64:\n        x = x[..., ::2]\n    return x\n"),
        Case(
            "import torch\nimport torch._dynamo\ntorch._dynamo.config.reorderable_logging_functions.add(print)\n"
            "@torch.compile\ndef f(x):\n    print('step', x.shape[0], f'{x.shape}', x)\n    return x * 2\n",
            note="print is reorderable: 0 graph breaks (scripts/measure/cl508_print_reorderable.py)",
        ),
        Case(
            "import torch\nfrom torch._dynamo import config as dc\ndc.reorderable_logging_functions.update({print, len})\n"
            "class M(torch.nn.Module):\n    def forward(self, x):\n        print(x.dtype, x)\n        return x\nm = torch.compile(M())\n",
        ),
        Case(
            "import torch\n@torch.compile\ndef blur(x, sigma: float | torch.Tensor):\n"
            "    if isinstance(sigma, (int, float)):\n        sigma = torch.full((1, 1), float(sigma))\n    return x * sigma\n",
            note="`float(sigma)` only runs on a Python number",
        ),
        Case(
            "import torch\nfrom imgkit.env import tracing\n@torch.compile\ndef blur(x, sigma):\n"
            "    if not tracing():\n        assert bool((sigma > 0).all())\n    return x * sigma\n",
            files={
                "imgkit/__init__.py": "",
                "imgkit/env.py": "import torch\n_check = getattr(torch.compiler, 'is_compiling', None)\n"
                "def tracing() -> bool:\n    \"\"\"Under torch.compile?\"\"\"\n    return bool(_check()) if _check is not None else False\n",
            },
            path="imgkit/blur.py",
            note="the project's own wrapper of is_compiling(), imported from another module",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
            "        keep = x[x > 0]\n        return keep.sum() / x.amax().item()\n",
            files={"train.py": "import torch\nimport torch._dynamo\nfrom models import Net\n"
                   "torch._dynamo.config.capture_scalar_outputs = True\nnet = torch.compile(Net())\n"
                   "with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):\n    y = net(torch.randn(4))\n"},
            path="models.py", note="the compiling file keeps .item() and the mask index in the graph",
        ),
    ]
    invalid = [
        Case(
            "import torch\n@torch.compile\ndef canny(x):\n    if torch.jit.is_scripting():\n        return x\n"
            "    else:\n        while bool((x > 0).any()):\n            x = x - 1\n    return x\n",
            at=[(7, 15)],
            note="the else of torch.jit.is_scripting() is what Dynamo compiles (kornia Canny's hysteresis loop: 2 breaks)",
        ),
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
            "import torch\n@torch.compile\ndef blur(x, sigma, n):\n"
            "    if isinstance(n, (int, float)):\n        x = x * float(x.mean())\n    if isinstance(n, int):\n        print(n)\n    return x\n",
            at=[(5, 17), (7, 9)], note="the isinstance test is about another value; print breaks whatever it prints",
        ),
        Case(
            "import torch\nfrom imgkit.env import debug\n@torch.compile\ndef blur(x):\n    if not debug():\n        x = x / x.amax().item()\n    return x\n",
            files={"imgkit/__init__.py": "", "imgkit/env.py": "import os\ndef debug():\n    return os.environ.get('DEBUG') == '1'\n"},
            path="imgkit/blur.py", at=[(6, 17)], note="a project predicate that is not about compiling",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
            "        keep = x[x > 0]\n        return keep.sum() / x.amax().item()\n",
            files={"train.py": "import torch\nfrom models import Net\ntorch._dynamo.config.capture_scalar_outputs = True\n"
                   "net = torch.compile(Net())\n", "bench.py": "import torch\nfrom models import Net\nfast = torch.compile(Net())\n"},
            path="models.py", at=[(5, 16), (6, 29)], note="one of two compiling files sets capture_scalar_outputs; neither captures the mask",
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
        print_reorderable = self._print_reorderable(facts)
        guesses: dict[int, TensorGuess] = {}

        def guess_for(node) -> Optional[TensorGuess]:
            func = facts.enclosing_function(node)
            if func is None:
                return None
            if id(func) not in guesses:
                guesses[id(func)] = TensorGuess(facts, func)
            return guesses[id(func)]

        def report(node, what, captured_by=None):
            """`captured_by`: the Dynamo flag that keeps the construct in the graph."""
            region = facts.in_region(node, "compiled")
            if region is None or eager_only(facts, node) or (captured_by and dynamo_flag_on(facts, region, captured_by)):
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
                receiver = func.value
                if isinstance(receiver, ast.Attribute) and receiver.attr == "shape":
                    continue
                found = report(call, f"`.{func.attr}()`", "capture_scalar_outputs" if func.attr == "item" else None)
            else:
                dotted = facts.resolve(func)
                if dotted == "builtins.print" and not (print_reorderable and not self._prints_size(call)):
                    found = report(call, "`print(...)`")
                elif dotted in CASTS and len(call.args) == 1:
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
                found = report(sub, "boolean-mask indexing (a data-dependent shape)", "capture_dynamic_output_shape_ops")
                if found is not None:
                    yield found

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
