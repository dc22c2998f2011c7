from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..analysis.compiled.wrappers import CompiledWrappersFact, compiled_wrappers
from ..model import Related
from .base import Case, Rule


class CompiledModuleTruthTest(Rule):
    """
    ## What it does
    Finds a truth test of a value that may hold the wrapper `torch.compile(module)`
    returns: `if model:`, `while model:`, `not model`, `model and ...`, `assert model`,
    `x if model else y`, `bool(model)`. What the value holds is followed as for CL511
    (names and attributes bound to the wrapper, aliases and picks, other files); the
    compiled thing must be known to be a module (built there, or a name bound to a
    module), not a function (`torch.compile(fn)` returns a function: its truth is
    fine) and not `model.compile()`, which compiles in place.

    ## Why is this bad?
    The wrapper (`OptimizedModule`) defines `__len__` (for compiled `nn.ModuleList`s,
    pytorch#159139) and no `__bool__`, so Python's truth test calls `len()`, which
    raises for every module that is not a container. Measured on torch 2.13 CPU
    (`scripts/measure/compiled_module_bool.py`, output in
    `scripts/measure/out/compiled_module_bool.txt`): `bool(torch.compile(Net()))` raises
    `TypeError: Net does not support len()` (also for `nn.Linear`), where
    `bool(Net())` is True; containers agree (an empty `ModuleList` is False either
    way); after `net.compile()` in place `bool(net)` is True. torch 2.14.1 and 2.15.0
    define the same `__len__` and still no `__bool__`. The typical spelling is a
    test for "is there a model" (`if self.ema_model:`), which works until compilation
    is switched on.

    On real code (`bench/judged/`: corpus L and the 24 apps): no finding; the
    rule is here for the reports upstream (pytorch#196253) and its cases.

    ## Example
    ```python
    self.ema = torch.compile(EMA(net)) if cfg.compile else None
    ...
    if self.ema:
        self.ema.update(net)
    ```

    ## Use instead
    ```python
    if self.ema is not None:
        self.ema.update(net)
    ```

    ## Fix safety
    Unsafe: `if m:` becomes `if m is not None:` and `not m` becomes `m is None`. The
    same in eager for a module or None; different for a value that may be another
    falsy object (`0`, an empty container module). `bool(m)` is reported without a
    fix.

    ## References
    - `scripts/measure/compiled_module_bool.py`, `scripts/measure/out/compiled_module_bool.txt`
    - `torch/_dynamo/eval_frame.py` (`OptimizedModule.__len__`); pytorch#159139, #159208
      (the `__len__` that made it raise), #196253 (the open report of this TypeError)
    - `docs/hazards-measured.md`
    """

    code = "CL512"
    name = "compiled-module-truth-test"
    summary = "Truth test of a `torch.compile`d module raises TypeError (`Net does not support len()`)"
    fix_safety = "unsafe"
    codemod = "codemods.none_test:NoneTest"
    requires = (b"compile",)
    needs = (CompiledWrappersFact,)
    verify_target = False  # nothing an eager-vs-compiled run of the function shows

    valid = [
        Case("import torch\nmodel = torch.compile(Net())\nif model is not None:\n    model(x)\n"),
        Case("import torch\nstep = torch.compile(train_step)\nif step:\n    step(x)\n", note="a compiled function is truthy"),
        Case("import torch\ndef f(x):\n    return x\nfast = torch.compile(f)\nassert fast\n"),
        Case("import torch\nmodel = Net()\nmodel.compile()\nif model:\n    model(x)\n", note="compiled in place"),
        Case("import torch\nm = torch.compile(Net())\nif m._orig_mod:\n    pass\n"),
        Case("import torch\nm = torch.compile(model)\nif m:\n    pass\n", note="what `model` is cannot be told here"),
        Case("import torch\nm = torch.compile(Net()) if flag else None\nother = fallback or m\n", note="`or` returns, does not test, its last operand"),
    ]
    invalid = [
        Case(
            "import torch\nmodel = torch.compile(Net())\nif model:\n    model(x)\n",
            fixed="import torch\nmodel = torch.compile(Net())\nif model is not None:\n    model(x)\n",
            at=[(3, 4)],
        ),
        Case(
            "import torch\nclass Trainer:\n    def __init__(self, cfg):\n"
            "        self.ema = torch.compile(EMA(cfg)) if cfg.compile else None\n"
            "    def step(self, net):\n        if not self.ema:\n            return\n        self.ema.update(net)\n",
            fixed="import torch\nclass Trainer:\n    def __init__(self, cfg):\n"
            "        self.ema = torch.compile(EMA(cfg)) if cfg.compile else None\n"
            "    def step(self, net):\n        if self.ema is None:\n            return\n        self.ema.update(net)\n",
            at=[(6, 12)], note="an attribute that holds the wrapper or None",
        ),
        Case(
            "import torch\nnet = Net()\nnet = torch.compile(net)\nready = bool(net)\n",
            at=[(4, 9)], note="bool(): reported without a fix",
        ),
        Case(
            "import torch\nfrom torch import nn\ndef step(model: nn.Module, flag: bool):\n"
            "    if model and flag:\n        model(1)\n"
            "step(torch.compile(Net()), True)\n",
            fixed="import torch\nfrom torch import nn\ndef step(model: nn.Module, flag: bool):\n"
            "    if model is not None and flag:\n        model(1)\n"
            "step(torch.compile(Net()), True)\n",
            at=[(4, 8)], note="a parameter its caller passes the wrapper (the `bool` one is not searched)",
        ),
        Case(
            "import torch\nmodel = torch.compile(Net())\nuse = model and enabled\n",
            fixed="import torch\nmodel = torch.compile(Net())\nuse = model is not None and enabled\n",
            at=[(3, 7)], note="a tested operand of `and`",
        ),
        Case(
            "import torch\nm = torch.compile(Net()) if flag else None\nnet = m or fallback\n",
            fixed="import torch\nm = torch.compile(Net()) if flag else None\nnet = m is not None or fallback\n",
            at=[(3, 7)], note="`m or fallback` tests `m`",
        ),
    ]

    def check(self, facts):
        wrappers = None
        for node in _tested(facts):
            if isinstance(node, (ast.Constant, ast.Compare, ast.BinOp)):
                continue
            if wrappers is None:
                wrappers = compiled_wrappers(facts)
            held = wrappers.wrapper(node)
            if held is None or held.target != "module":
                continue
            parent = facts.parent(node)
            negated = isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
            call = isinstance(parent, ast.Call) and facts.resolve(parent.func) == "builtins.bool"
            at = parent if negated or call else node
            yield self.finding(
                facts, at,
                f"truth test of `{facts.text(node)}`, which may hold a `torch.compile`d module: raises "
                f"`TypeError: ... does not support len()`",
                fix=None if call else ("test `is None`" if negated else "test `is not None`"),
                unsafe=True, data={"negated": negated, "text": facts.text(node)},
                related=[Related(held.call.path, held.call.row, held.call.node.col_offset + 1, "compiled here")],
            )


def _tested(facts) -> Iterator[ast.AST]:
    """Expressions whose truth Python tests: `if`/`while`/`assert`/ternary/comprehension
    tests, the operand of `not`, the operands of `and`/`or` but the last (unless the
    whole is tested), the argument of `bool(...)`."""
    for node in facts.nodes(ast.If, ast.While, ast.Assert, ast.IfExp):
        yield from _operands(facts, node.test, tested=True)
    for node in facts.nodes(ast.comprehension):
        for test in node.ifs:
            yield from _operands(facts, test, tested=True)
    for node in facts.nodes(ast.UnaryOp):
        if isinstance(node.op, ast.Not) and not _is_test(facts, node):
            yield from _operands(facts, node.operand, tested=True)
    for node in facts.nodes(ast.BoolOp):
        if not _is_test(facts, node) and not isinstance(facts.parent(node), (ast.BoolOp, ast.UnaryOp)):
            yield from _operands(facts, node, tested=False)
    for node in facts.nodes(ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "bool" and len(node.args) == 1 and facts.resolve(node.func) == "builtins.bool":
            yield node.args[0]


def _operands(facts, expr: ast.AST, tested: bool) -> Iterator[ast.AST]:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        yield from _operands(facts, expr.operand, tested=True)
    elif isinstance(expr, ast.BoolOp):
        last = len(expr.values) - 1
        for i, value in enumerate(expr.values):
            yield from _operands(facts, value, tested=tested or i < last)
    elif tested:
        yield expr


def _is_test(facts, node: ast.AST) -> Optional[bool]:
    """`node` is (under `not`/`and`/`or`) the test of an if/while/assert/ternary/comprehension."""
    child, parent = node, facts.parent(node)
    while isinstance(parent, (ast.BoolOp, ast.UnaryOp)):
        child, parent = parent, facts.parent(parent)
    if isinstance(parent, (ast.If, ast.While, ast.Assert, ast.IfExp)):
        return parent.test is child
    return isinstance(parent, ast.comprehension) and child in parent.ifs
