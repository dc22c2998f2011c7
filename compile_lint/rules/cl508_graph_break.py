from __future__ import annotations

import ast
from typing import Optional

from ..analysis.tensors import TensorGuess
from ..analysis.declared import recorded_counts
from ..analysis.torch_api import CAPTURE_SCALAR_OUTPUTS, IS_COMPILING_FUNCS
from ..analysis.facts import RegionsFact
from ..analysis.project import path_for_module
from .base import Case, Rule

IS_COMPILING = IS_COMPILING_FUNCS
SCALAR_CONFIG = CAPTURE_SCALAR_OUTPUTS
REORDERABLE = "reorderable_logging_functions"
CASTS = frozenset({"builtins.float", "builtins.int", "builtins.bool"})


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
    `if isinstance(x, (int, float)):` (a Python number), and so is `print` in a
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
        """Inside a branch that only runs eagerly (`if not is_compiling():`, also through
        the project's own `is_compiling()` wrapper), or, for `float(x)`/`int(x)`/`bool(x)`,
        where `if isinstance(x, (int, float)):` says `x` is a Python number."""
        child = node
        for anc in facts.ancestors(node):
            if isinstance(anc, (ast.If, ast.IfExp)):
                test = anc.test
                negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
                inner = test.operand if negated else test
                in_body = child in anc.body if isinstance(anc, ast.If) else child is anc.body
                if isinstance(inner, ast.Call) and in_body == negated and is_compiling_test(facts, inner):
                    return True
                if in_body and not negated and isinstance(node, ast.Call) and facts.resolve(node.func) in CASTS \
                        and python_number_test(facts, inner, node.args[0]):
                    return True
            if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return False
            child = anc
        return False


NUMBERS = frozenset({"builtins.int", "builtins.float", "builtins.bool", "builtins.complex", "numbers.Number", "numbers.Real"})


def python_number_test(facts, test, value) -> bool:
    """`isinstance(x, (int, float))` about the name `value`: true only for Python numbers."""
    if not (isinstance(test, ast.Call) and facts.resolve(test.func) == "builtins.isinstance" and len(test.args) == 2):
        return False
    subject, kinds = test.args
    if not (isinstance(subject, ast.Name) and isinstance(value, ast.Name) and subject.id == value.id):
        return False
    kinds = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return bool(kinds) and all(facts.resolve(k) in NUMBERS for k in kinds)


def is_compiling_test(facts, call: ast.Call) -> bool:
    """A call of `torch.compiler.is_compiling()` (or its kin), or of a project function
    whose one `return` reads such a helper (`def is_compiling(): return bool(_torch_is_compiling())`,
    with `_torch_is_compiling = getattr(torch.compiler, "is_compiling", None)`), in this file
    or in the module it is imported from."""
    dotted = facts.resolve(call.func)
    if dotted in IS_COMPILING:
        return True
    if not dotted or "." not in dotted or dotted.startswith(("torch.", "builtins.")):
        return False
    module, name = dotted.rsplit(".", 1)
    owner = facts
    if module != facts.names.module:
        path = path_for_module(facts, module)
        owner = facts.project.facts_for_path(facts, path) if path else None
    if owner is None:
        return False
    for stmt in owner.tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            body = [s for s in stmt.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
                return False
            names = {n.id for n in ast.walk(body[0].value) if isinstance(n, ast.Name)}
            helpers = [s.value for s in owner.tree.body if isinstance(s, ast.Assign)
                       and any(isinstance(t, ast.Name) and t.id in names for t in s.targets)]
            return any(_names_is_compiling(owner, expr) for expr in [body[0].value, *helpers])
    return False


def _names_is_compiling(facts, expr) -> bool:
    """`expr` reads `torch.compiler.is_compiling` (or kin), directly or as
    `getattr(torch.compiler, "is_compiling", None)`."""
    return any(
        (isinstance(n, (ast.Name, ast.Attribute)) and facts.resolve(n) in IS_COMPILING)
        or (isinstance(n, ast.Constant) and n.value in ("is_compiling", "is_dynamo_compiling"))
        for n in ast.walk(expr)
    )
