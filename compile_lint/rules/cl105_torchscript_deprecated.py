from __future__ import annotations

import ast

from .base import Case, Rule

# the TorchScript entry points torch 2.13 warns about, with what the warning says to use
# instead (torch/jit/_trace.py, _script.py, _serialization.py, _freeze.py, _async.py)
DEPRECATED = {
    "torch.jit.trace": "`torch.export.export` or `torch.compile`",
    "torch.jit.trace_module": "`torch.export.export` or `torch.compile`",
    "torch.jit.script": "`torch.compile` or `torch.export.export`",
    "torch.jit.script_method": "`torch.compile` or `torch.export.export`",
    "torch.jit.interface": "`torch.compile`",
    "torch.jit.freeze": "`torch.compile`",
    "torch.jit.optimize_for_inference": "`torch.compile`",
    "torch.jit.fork": "`torch.compile`",
    "torch.jit.wait": "`torch.compile`",
    "torch.jit.save": "`torch.export.save`",
    "torch.jit.load": "`torch.export.load`",
}
LAST_NAMES = frozenset(dotted.rpartition(".")[2] for dotted in DEPRECATED)


class TorchscriptDeprecated(Rule):
    """
    ## What it does
    Finds calls and decorators of the TorchScript API that torch deprecates:
    `torch.jit.trace`, `trace_module`, `script` (also `@torch.jit.script`),
    `script_method`, `interface`, `freeze`, `optimize_for_inference`, `fork`, `wait`,
    `save` and `load`, however imported (`from torch.jit import trace`,
    `import torch.jit as jit`, `from torch.jit import load as load_scripted`, and from the
    modules that define them: `from torch.jit._script import script`, the spellings
    `compile_lint/data/torch_spellings.json` lists). A call inside `with warnings.catch_warnings():` that
    ignores FutureWarning or DeprecationWarning is left alone: kept on purpose.

    ## Why is this bad?
    TorchScript is deprecated in favour of `torch.compile` and `torch.export`, and
    each of these calls says so, but where nobody sees it. Measured on torch 2.13 CPU
    (`scripts/measure/torchscript_deprecated.py`, output in
    `scripts/measure/out/torchscript_deprecated.txt`): `torch.jit.trace` warns
    "`torch.jit.trace` is deprecated. Please switch to `torch.compile` or
    `torch.export`." (and "`torch.jit.trace_method` is deprecated..." twice),
    `torch.jit.script` the same for script, `torch.jit.save`/`load` "... Please switch
    to `torch.export`.", `torch.jit.freeze` "... Please use `torch.compile` instead."
    On 2.13 these are DeprecationWarnings attributed to torch's own files, so
    Python's default filters hide them: a plain script that traces and scripts prints
    nothing (3 lines with `-W default::DeprecationWarning`). torch 2.14.1 and 2.15.0
    raise the same texts as FutureWarning, shown to every user, and on Python 3.14+
    they say "is not supported in Python 3.14+ and may break".

    On real code (`bench/judged/`: corpus L and the 24 apps, each run alone): 29
    findings, all true (8 in corpus L, mostly `torch.jit.load` of released TorchScript
    files and `@torch.jit.script` helpers; 21 in 9 of the apps, their export and
    deployment scripts). kornia's `canny.py`, which scripts under
    `warnings.catch_warnings()` with the warning ignored, is not reported; timm's
    `create_norm_act.py` is missed (its `torch` comes from a star import). The aliases and
    torch's own module spellings added 5 findings on bench/fresh_reads' voicesmith (its
    TorchScript export and the server that loads it, all judged true) and nothing else
    on the development apps and fresh reads (bench/results.md, session 65).

    ## Example
    ```python
    traced = torch.jit.trace(model.eval(), example)
    traced.save("model.pt")
    ```

    ## Use instead
    ```python
    program = torch.export.export(model.eval(), (example,))
    torch.export.save(program, "model.pt2")
    ```
    or, to run faster in Python, `torch.compile(model)`.

    ## Fix safety
    No fix: `torch.export` has other rules (dynamic shapes are declared, control flow
    on tensor data needs `torch.cond`) and writes another file format; moving is a
    decision, not a rewrite.

    ## References
    - `scripts/measure/torchscript_deprecated.py`, `scripts/measure/out/torchscript_deprecated.txt`
    - `torch/jit/_trace.py`, `torch/jit/_script.py` (the warnings); pytorch#70511
    - `docs/hazards-measured.md`
    """

    code = "CL105"
    name = "torchscript-deprecated"
    summary = "TorchScript (`torch.jit.trace`, `torch.jit.script`, ...) is deprecated: torch 2.14+ warns"
    requires = (b"jit",)
    verify_target = False  # nothing an eager-vs-compiled run of the function shows

    valid = [
        Case("import torch\nprogram = torch.export.export(model, (x,))\n"),
        Case("import torch\nif torch.jit.is_scripting():\n    pass\n", note="not deprecated"),
        Case("import torch\n@torch.jit.ignore\ndef helper(x):\n    return x\n", note="not deprecated"),
        Case("import torch\ndef f(x):\n    '''Works under torch.jit.trace.'''\n    return x\n", note="a mention in text"),
        Case("import torch\nkinds = (torch.jit.ScriptModule,)\n"),
        Case(
            "import torch, warnings\ndef loop():\n    with warnings.catch_warnings():\n"
            "        warnings.simplefilter('ignore', FutureWarning)\n        return torch.jit.script(_step)\n",
            note="silenced on purpose: the author knows",
        ),
    ]
    invalid = [
        Case("import torch\ntraced = torch.jit.trace(model.eval(), example)\n", at=[(2, 10)]),
        Case("import torch\n@torch.jit.script\ndef swish(x):\n    return x * torch.sigmoid(x)\n", at=[(2, 2)]),
        Case("from torch.jit import script, save\nm = script(Net())\nsave(m, 'm.pt')\n", at=[(2, 5), (3, 1)]),
        Case("import torch.jit as jit\nm = jit.load('legacy.pt')\n", at=[(2, 5)]),
        Case("from torch.jit import load as load_scripted\nm = load_scripted('legacy.pt')\n", at=[(2, 5)],
             note="an alias of the import"),
        Case("from torch.jit._script import script\nm = script(Net())\n", at=[(2, 5)],
             note="torch's own module for the function (voicesmith's export, bench/fresh_reads batch 11)"),
    ]

    def check(self, facts):
        for node in facts.nodes(ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                candidate = func.attr in LAST_NAMES
            else:  # an imported name may be an alias (`from torch.jit import load as load_scripted`)
                candidate = isinstance(func, ast.Name) and (func.id in LAST_NAMES or func.id in facts.names.bindings)
            if candidate and facts.resolve(func) in DEPRECATED and not _silenced(facts, node):
                yield self._finding(facts, node, facts.resolve(func))
        for node in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            for deco in node.decorator_list:
                if not isinstance(deco, ast.Call) and facts.resolve(deco) in DEPRECATED:
                    yield self._finding(facts, deco, facts.resolve(deco))

    def _finding(self, facts, node, dotted):
        return self.finding(
            facts, node,
            f"`{dotted}` is deprecated (FutureWarning from torch 2.14; hidden on 2.13): move to {DEPRECATED[dotted]}",
        )


def _silenced(facts, node) -> bool:
    """Inside `with warnings.catch_warnings():` whose block ignores FutureWarning or
    DeprecationWarning: the author knows and chose to keep TorchScript there."""
    for anc in facts.ancestors(node):
        if not isinstance(anc, ast.With):
            continue
        if not any(isinstance(i.context_expr, ast.Call) and facts.resolve(i.context_expr.func) == "warnings.catch_warnings"
                   for i in anc.items):
            continue
        for stmt in ast.walk(anc):
            if isinstance(stmt, ast.Call) and facts.resolve(stmt.func) in ("warnings.simplefilter", "warnings.filterwarnings"):
                words = {facts.text(a) for a in [*stmt.args, *(k.value for k in stmt.keywords)]}
                if any(w.endswith(("FutureWarning", "DeprecationWarning")) for w in words) or words == {'"ignore"'} or words == {"'ignore'"}:
                    return True
    return False
