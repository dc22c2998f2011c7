from __future__ import annotations

import ast
from typing import Optional

from ..analysis.reach.queries import stmt_text
from ..analysis.torch_api import DISABLE_FUNCS as DISABLE
from ..analysis.semantic.facts import RegionsFact
from .base import Case, Rule

DISABLE_LAST = frozenset(dotted.rpartition(".")[2] for dotted in DISABLE)


def _disable_call(facts, node) -> Optional[ast.Call]:
    """`disable(fn)` or `disable(**kw)` -> that call; else None."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr not in DISABLE_LAST:
        return None  # resolves to "<x>.<attr>": not a disable
    return node if facts.resolve(node.func) in DISABLE else None


class DisableMisuse(Rule):
    """
    ## What it does
    Finds `torch.compiler.disable(...)` / `torch._dynamo.disable(...)` built and called
    inline inside a compiled region (`disable(fn)(x)`, `disable()(lambda a, b: f(a, b))(a, b)`),
    and calls of them whose result is thrown away (`torch.compiler.disable(fn)` as a statement).

    ## Why is this bad?
    `disable` returns a new, wrapped function; it does not change `fn`. Built inline in
    a compiled region, it wraps a fresh object on every trace and costs extra graph
    breaks: the seed-style `torch.compiler.disable()(lambda a, b: overlay(a, b))(a, b)` adds
    3 graph breaks where a decorated function at module scope adds 1. As a statement
    it disables nothing at all.

    ## Example
    ```python
    @torch.compile
    def composite(a, b):
        return torch.compiler.disable(overlay)(a, b)
    ```

    ## Use instead
    ```python
    @torch.compiler.disable
    def overlay(a, b):
        ...

    @torch.compile
    def composite(a, b):
        return overlay(a, b)
    ```

    ## Fix safety
    Safe when the wrapped function is a module-level `def` in the same file (directly or
    through a lambda that just forwards its arguments) and the call's result is used:
    the fix decorates that `def` and calls it directly. Note that the decorator then
    applies to every caller of the function, which is what `disable` is for. A discarded
    `disable(fn)` statement has no fix: decide whether `fn` should be disabled.

    ## References
    - measured on torch 2.13 CPU: `torch.compiler.disable()(lambda a, b: overlay(a, b))(a, b)`
      inside a compiled function adds 3 graph breaks; decorating at module scope: 1
    - https://pytorch.org/docs/stable/generated/torch.compiler.disable.html
    """

    needs = (RegionsFact,)
    code = "CL505"
    name = "disable-misuse"
    summary = "`torch.compiler.disable` built inline in a compiled region, or its result discarded"
    fix_safety = "safe"
    codemod = "codemods.decorate_disabled_function:DecorateDisabledFunction"
    requires = (b"disable",)

    valid = [
        Case("import torch\n@torch.compiler.disable\ndef overlay(a, b):\n    return a\n@torch.compile\ndef f(a, b):\n    return overlay(a, b)\n"),
        Case("import torch\ndef eager(a, b):\n    return torch.compiler.disable(overlay)(a, b)\n", note="not in a compiled region"),
        Case("import torch\nslow_overlay = torch.compiler.disable(overlay)\n"),
    ]
    invalid = [
        Case(
            "import torch\n\ndef overlay(a, b):\n    return a * b\n\n@torch.compile\ndef composite(a, b):\n    return torch.compiler.disable()(lambda a, b: overlay(a, b))(a, b)\n",
            fixed="import torch\n\n@torch.compiler.disable\ndef overlay(a, b):\n    return a * b\n\n@torch.compile\ndef composite(a, b):\n    return overlay(a, b)\n",
            at=[(8, 12)],
        ),
        Case(
            "import torch._dynamo as dynamo\nimport torch\n\ndef screen(a, b):\n    return 1 - (1 - a) * (1 - b)\n\nclass Blend(torch.nn.Module):\n    def forward(self, a, b):\n        return dynamo.disable(screen)(a, b)\n\nblend = torch.compile(Blend())\n",
            fixed="import torch._dynamo as dynamo\nimport torch\n\n@dynamo.disable\ndef screen(a, b):\n    return 1 - (1 - a) * (1 - b)\n\nclass Blend(torch.nn.Module):\n    def forward(self, a, b):\n        return screen(a, b)\n\nblend = torch.compile(Blend())\n",
            at=[(9, 16)],
        ),
        Case("import torch\ntorch.compiler.disable(overlay)\n", at=[(2, 1)]),
        Case(
            "import torch\n@torch.compile\ndef f(x, fn):\n    return torch.compiler.disable(fn)(x)\n",
            note="fn is a parameter: no fix",
            at=[(4, 12)],
        ),
    ]

    def check(self, facts):
        for call in facts.nodes(ast.Call):
            inner = call.func
            disable = _disable_call(facts, inner)
            wrapped = None
            if disable is not None and disable.args:
                wrapped = disable.args[0]  # disable(fn)(x)
            elif isinstance(inner, ast.Call) and _disable_call(facts, inner.func) is not None and not _disable_call(facts, inner.func).args:
                disable = inner.func  # disable()(fn)(x)
                wrapped = inner.args[0] if inner.args else None
            if disable is not None and wrapped is not None:
                region = facts.in_region(call, "compiled")
                if region is None:
                    continue
                message = (
                    f"`{facts.text(disable.func)}` built and called inline in compiled code adds graph breaks"
                )
                data = self._fix_data(facts, disable, wrapped)
                if data:
                    yield self.finding(facts, call, message, fix=f"decorate `{data['function']}` and call it directly", data=data, region=region)
                else:
                    yield self.finding(facts, call, message, region=region)
        for stmt in facts.nodes(ast.Expr):
            disable = _disable_call(facts, stmt.value)
            if disable is not None and disable.args:
                yield self.finding(
                    facts, disable,
                    f"`{stmt_text(facts, disable, 50)}` returns a disabled wrapper that is thrown away: "
                    f"`{stmt_text(facts, disable.args[0], 30)}` stays enabled",
                )

    @staticmethod
    def _fix_data(facts, disable: ast.Call, wrapped: ast.AST):
        target = wrapped
        if isinstance(wrapped, ast.Lambda):
            body = wrapped.body
            params = [a.arg for a in wrapped.args.args]
            if not (
                isinstance(body, ast.Call)
                and not body.keywords
                and [a.id if isinstance(a, ast.Name) else None for a in body.args] == params
                and not wrapped.args.vararg and not wrapped.args.kwarg and not wrapped.args.kwonlyargs
            ):
                return None
            target = body.func
        if not isinstance(target, ast.Name):
            return None
        defs = [s for s in facts.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == target.id]
        if len(defs) != 1:
            return None
        decorator = facts.text(disable.func)
        extra = [facts.text(k) for k in disable.keywords]
        if extra:
            decorator += f"({', '.join(extra)})"
        already = any(facts.resolve(d.func if isinstance(d, ast.Call) else d) in DISABLE for d in defs[0].decorator_list)
        return {"function": target.id, "decorator": decorator, "decorate": not already, "def_row": defs[0].lineno}
