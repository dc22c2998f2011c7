from __future__ import annotations

import ast

from ..analysis.torch_api import DYNAMO_CONFIG, SUPPRESS_ERRORS
from .base import Case, Rule

FLAG = SUPPRESS_ERRORS
ENV = "TORCHDYNAMO_SUPPRESS_ERRORS"
ENVIRON = frozenset({"os.environ"})


def _truthy(node) -> bool:
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, str):
            return value.strip().lower() not in ("", "0", "false", "no", "off")
        return bool(value)
    return True  # not a literal: could be on


class SuppressErrors(Rule):
    """
    ## What it does
    Finds `torch._dynamo.config.suppress_errors = True` (through any alias of the
    config module, `setattr`, or `config.patch(suppress_errors=True)`) and setting the
    `TORCHDYNAMO_SUPPRESS_ERRORS` environment variable from Python.

    ## Why is this bad?
    With the flag on, a backend that fails to compile a frame is silently skipped and
    the frame runs eagerly: the model "works", but slower, with no sign in the
    output. Set at import time in a library (k-diffusion does), it changes every
    user's process.

    ## Example
    ```python
    import torch._dynamo
    torch._dynamo.config.suppress_errors = True
    ```

    ## Use instead
    Let compile errors surface, and fix or report them; to skip one troublesome
    function on purpose, decorate it with `@torch.compiler.disable`.

    ## Fix safety
    Unsafe: removing the setting turns silent eager fallbacks into errors, which is the
    point, but may break a run that relied on the fallback.

    ## References
    - `torch/_dynamo/config.py` (`suppress_errors`): a failing backend falls back to eager
      silently. Real case: k-diffusion sets it on import (`bench/judged/`)
    - https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html
    """

    needs = ()
    code = "CL506"
    name = "suppress-errors"
    summary = "`suppress_errors = True` makes compile failures silently run eagerly"
    fix_safety = "unsafe"
    codemod = "codemods.remove_statement:RemoveStatement"
    requires = (b"suppress_errors", b"SUPPRESS_ERRORS")

    valid = [
        Case("import torch._dynamo\ntorch._dynamo.config.suppress_errors = False\n"),
        Case("import os\nos.environ['TORCHDYNAMO_SUPPRESS_ERRORS'] = '0'\n"),
        Case("suppress_errors = True\n", note="a plain variable"),
        Case("import torch._dynamo\nprint(torch._dynamo.config.suppress_errors)\n", note="reading it is fine"),
    ]
    invalid = [
        Case(
            "import torch._dynamo\n\n# keep going when inductor fails\ntorch._dynamo.config.suppress_errors = True\nx = 1\n",
            fixed="import torch._dynamo\n\n# keep going when inductor fails\nx = 1\n",
            at=[(4, 1)],
        ),
        Case(
            "import torch._dynamo.config as dc\nif fast:\n    dc.suppress_errors = True\n",
            fixed="import torch._dynamo.config as dc\nif fast:\n    pass\n",
            at=[(3, 5)],
        ),
        Case(
            "import os\nos.environ['TORCHDYNAMO_SUPPRESS_ERRORS'] = '1'\n",
            fixed="import os\n",
            at=[(2, 1)],
        ),
        Case("import os\nos.environ.setdefault('TORCHDYNAMO_SUPPRESS_ERRORS', '1')\n", fixed="import os\n", at=[(2, 1)]),
        Case("from torch._dynamo import config\nwith config.patch(suppress_errors=True):\n    run()\n", at=[(2, 19)]),
    ]

    def check(self, facts):
        message = (
            "`suppress_errors` on: a frame that fails to compile silently runs eagerly"
        )
        for stmt in facts.nodes(ast.Assign):
            for target in stmt.targets:
                dotted = facts.resolve(target)
                if dotted == FLAG and _truthy(stmt.value):
                    yield self._report(facts, stmt, message)
                elif isinstance(target, ast.Subscript) and facts.resolve(target.value) in ENVIRON:
                    key = target.slice
                    if isinstance(key, ast.Constant) and key.value == ENV and _truthy(stmt.value):
                        yield self._report(facts, stmt, f"setting {ENV}: " + message)
        for call in facts.nodes(ast.Call):
            dotted = facts.resolve(call.func)
            if dotted == "builtins.setattr" and len(call.args) == 3:
                if facts.resolve(call.args[0]) == DYNAMO_CONFIG and isinstance(call.args[1], ast.Constant) and call.args[1].value == "suppress_errors" and _truthy(call.args[2]):
                    yield self._report(facts, call, message)
            elif dotted in ("os.environ.setdefault", "os.putenv") and len(call.args) == 2:
                if isinstance(call.args[0], ast.Constant) and call.args[0].value == ENV and _truthy(call.args[1]):
                    yield self._report(facts, call, f"setting {ENV}: " + message)
            elif dotted == "torch._dynamo.config.patch":
                for kw in call.keywords:
                    if kw.arg == "suppress_errors" and _truthy(kw.value):
                        yield self.finding(facts, kw, message)

    def _report(self, facts, node, message):
        stmt = facts.statement_of(node)
        if isinstance(stmt, (ast.Assign, ast.Expr)):
            return self.finding(facts, stmt, message, fix="remove this line", unsafe=True)
        return self.finding(facts, node, message)
