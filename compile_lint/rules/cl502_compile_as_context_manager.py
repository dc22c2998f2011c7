from __future__ import annotations

import ast

from ..analysis.torch_api import COMPILE, COMPILERS, DISABLE_FUNCS
from ..analysis.compiled.calls import target_text
from ..analysis.compiled.rebinding import later_observer
from .base import Case, Rule

NOT_CONTEXT_MANAGERS = COMPILERS | DISABLE_FUNCS


class CompileAsContextManager(Rule):
    """
    ## What it does
    Finds `with torch.compile(...)`, `with torch.compiler.disable()`,
    `with torch._dynamo.disable()` and `with torch._dynamo.optimize(...)`.

    ## Why is this bad?
    None of them is a context manager. `with torch.compile(model):` raises
    `TypeError: 'OptimizedModule' object does not support the context manager protocol`;
    `with torch._dynamo.optimize(...)` raises `RuntimeError: torch._dynamo.optimize(...)
    is used with a context manager`. Code written this way never ran under compile.

    ## Example
    ```python
    with torch.compile(model) as fast:
        y = fast(x)

    def preview(x):
        with torch.compiler.disable():
            return overlay(x)
    ```

    ## Use instead
    ```python
    fast = torch.compile(model)
    y = fast(x)

    @torch.compiler.disable
    def preview(x):
        return overlay(x)
    ```

    ## Fix safety
    Safe where the meaning is plain: `with torch.compile(m) as name:` becomes
    `name = torch.compile(m)` followed by the block; `with torch.compile(m):` becomes
    `m = torch.compile(m)` when `m` is a name or attribute, unsafe when a later use of
    `m` can tell it now holds the compiled wrapper (traced, scripted, pickled, compared
    with `is`, its `state_dict()` keys read: CL503's page has the measurement); a
    `with torch.compiler.disable():` that is a function's whole body becomes a decorator
    on that function. Other shapes have no fix.

    ## References
    - measured on torch 2.13: `TypeError: 'OptimizedModule' object does not support the
      context manager protocol`; `RuntimeError: torch._dynamo.optimize(...) is used with a
      context manager`. `fixtures/rules/CL502/hazard.py` holds the shapes
    - https://pytorch.org/docs/stable/torch.compiler_api.html
    """

    needs = ()
    code = "CL502"
    name = "compile-as-context-manager"
    summary = "`torch.compile` / `torch.compiler.disable` used as a context manager"
    fix_safety = "safe"
    codemod = "codemods.context_manager_to_assignment:ContextManagerToAssignment"
    requires = (b"with",)

    valid = [
        Case("import torch\nwith torch.no_grad():\n    y = model(x)\n"),
        Case("import torch\nwith torch.autocast('cuda'):\n    y = model(x)\n"),
        Case("import torch\n@torch.compiler.disable\ndef f(x):\n    return x\n"),
        Case("import torch._dynamo\nwith torch._dynamo.config.patch(recompile_limit=4):\n    pass\n"),
    ]
    invalid = [
        Case(
            "import torch\nwith torch.compile(model) as fast:\n    y = fast(x)\n    z = fast(y)\n",
            fixed="import torch\nfast = torch.compile(model)\ny = fast(x)\nz = fast(y)\n",
            at=[(2, 6)],
        ),
        Case(
            "import torch\ndef run(self, x):\n    with torch.compile(self.unet, mode='max-autotune'):\n        return self.unet(x)\n",
            fixed="import torch\ndef run(self, x):\n    self.unet = torch.compile(self.unet, mode='max-autotune')\n    return self.unet(x)\n",
            at=[(3, 10)],
        ),
        Case(
            "import torch\ndef preview(a, b):\n    \"\"\"Eager preview.\"\"\"\n    with torch.compiler.disable():\n        return overlay(a, b)\n",
            fixed="import torch\n@torch.compiler.disable\ndef preview(a, b):\n    \"\"\"Eager preview.\"\"\"\n    return overlay(a, b)\n",
            at=[(4, 10)],
        ),
        Case("import torch._dynamo as dynamo\nwith dynamo.optimize('inductor'):\n    y = model(x)\n", at=[(2, 6)]),
        Case("import torch\ndef f(x):\n    y = x + 1\n    with torch.compiler.disable():\n        print(y)\n", note="not the whole body: no fix", at=[(4, 10)]),
    ]

    def check(self, facts):
        for stmt in facts.nodes(ast.With, ast.AsyncWith):
            for item in stmt.items:
                expr = item.context_expr
                func = expr.func if isinstance(expr, ast.Call) else expr
                dotted = facts.resolve(func)
                if dotted not in NOT_CONTEXT_MANAGERS:
                    continue
                short = facts.text(func)
                consequence = (
                    "raises TypeError: the compiled module is not a context manager"
                    if dotted == COMPILE
                    else "raises at run time: it is not a context manager"
                )
                message = f"`with {short}(...)` {consequence}"
                data = self._fix_data(facts, stmt, item, dotted)
                if data is None:
                    hint = "assign the compiled result" if dotted == COMPILE else "decorate a function with it"
                    yield self.finding(facts, expr, f"{message}; {hint}")
                else:
                    yield self.finding(facts, expr, message, fix=data.pop("_message"), unsafe=data.pop("_unsafe", False), data=data)

    @staticmethod
    def _fix_data(facts, stmt, item, dotted):
        if isinstance(stmt, ast.AsyncWith) or len(stmt.items) != 1:
            return None
        expr = item.context_expr
        if dotted == COMPILE:
            if not isinstance(expr, ast.Call):
                return None
            if item.optional_vars is not None:
                target = target_text(facts, item.optional_vars)
            else:
                target = target_text(facts, expr.args[0]) if expr.args else None
            if not target:
                return None
            message = f"assign it: `{target} = {facts.text(expr.func)}(...)` and dedent the block"
            # `with torch.compile(m):` rebinds `m` itself: later uses may tell (CL503's page)
            seen = later_observer(facts, stmt, target) if item.optional_vars is None else None
            if seen:
                message += f" (unsafe: {seen})"
            return {"kind": "assign", "target": target, "_message": message, "_unsafe": seen is not None}
        if dotted in DISABLE_FUNCS and item.optional_vars is None:
            func = facts.parent(stmt)
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return None
            body = func.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                body = body[1:]
            if body != [stmt]:
                return None
            if isinstance(expr, ast.Call) and expr.args:
                return None  # `disable(fn)` is something else again
            return {"kind": "decorate", "_message": f"decorate `{func.name}` with `@{facts.text(expr)}` instead"}
        return None
