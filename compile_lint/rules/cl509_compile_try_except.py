from __future__ import annotations

import ast

from ._compile import is_compile_call
from .base import Case, Rule


def _calls_name(nodes, names: set[str], skip: ast.Call) -> bool:
    """Does any call in `nodes` (other than `skip`) call one of `names`?"""
    for stmt in nodes:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and node is not skip:
                func = node.func
                while isinstance(func, ast.Attribute):
                    func = func.value
                target = node.func
                text = ast.unparse(target) if not isinstance(target, ast.Name) else target.id
                if text in names or (isinstance(func, ast.Name) and func.id in names):
                    return True
    return False


class CompileTryExcept(Rule):
    """
    ## What it does
    Finds `torch.compile(...)` (or `module.compile()`) inside a `try` block whose
    `except` is meant to catch compilation failures, when nothing in the `try` calls
    the compiled result.

    ## Why is this bad?
    Compilation is lazy: `torch.compile` only wraps its argument, and tracing and code
    generation happen at the first call. Errors surface there, outside the `try`, so
    the handler (a fallback to eager, a warning) never runs. Real cases: k-diffusion's
    `flags.py`, ccrestoration's `base_model.py`.

    ## Example
    ```python
    try:
        model = torch.compile(model)
    except Exception:
        print("compile failed, running eagerly")
    ```

    ## Use instead
    ```python
    model = torch.compile(model)
    try:
        model(example_input)  # compilation happens here
    except Exception:
        model = model._orig_mod  # or torch._dynamo.reset() and fall back
    ```

    ## Fix safety
    No fix: where to warm up, and with what input, is the author's decision.

    ## References
    - hazards.md CL509
    - https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html
    """

    needs = ()
    code = "CL509"
    name = "compile-try-except"
    summary = "`try: torch.compile(...) except:` never catches compile errors"
    requires = (b"try",)

    valid = [
        Case("import torch\ntry:\n    model = torch.compile(model)\n    model(example)\nexcept Exception:\n    model = eager\n"),
        Case("import torch\ntry:\n    fast = torch.compile(model)\nfinally:\n    log()\n", note="no handler"),
        Case("import torch\ntry:\n    import triton\nexcept ImportError:\n    triton = None\n"),
    ]
    invalid = [
        Case("import torch\ntry:\n    model = torch.compile(model)\nexcept Exception:\n    print('eager')\n", at=[(3, 13)]),
        Case("import torch as T\ndef setup(self):\n    try:\n        self.unet = T.compile(self.unet, mode='max-autotune')\n    except RuntimeError:\n        pass\n", at=[(4, 21)]),
        Case("import torch\ntry:\n    net.compile()\nexcept Exception:\n    pass\n", at=[(3, 5)]),
    ]

    def check(self, facts):
        for node in facts.nodes(ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ())):
            if not node.handlers:
                continue
            for stmt in node.body:
                for call, names in self._compiles(facts, stmt):
                    if names and _calls_name(node.body, names, call):
                        continue
                    yield self.finding(
                        facts, call,
                        "compile errors surface at the first call, outside this `try`: the `except` never catches them",
                    )

    @staticmethod
    def _compiles(facts, stmt):
        """(compile call, names bound to its result) in one statement of the try body."""
        if isinstance(stmt, ast.Assign) and is_compile_call(facts, stmt.value):
            yield stmt.value, {ast.unparse(t) for t in stmt.targets}
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            if is_compile_call(facts, call):
                yield call, set()
            elif isinstance(call.func, ast.Attribute) and call.func.attr == "compile" and facts.resolve(call.func) is None:
                yield call, {ast.unparse(call.func.value)}
