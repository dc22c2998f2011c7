from __future__ import annotations

import ast
from typing import Optional

from ..analysis.reach.regions import RETURNS_SELF
from ..analysis.compiled.calls import target_text
from ..analysis.semantic.facts import RegionsFact
from ..analysis.compiled.rebinding import later_observer
from ..analysis.semantic.walk import walk
from .base import Case, Rule

NOT_LAYERS = frozenset({"Module", "Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"})


def builtin_module_class(facts, expr: ast.AST, scope: Optional[ast.AST]) -> Optional[str]:
    """The `torch.nn` class `expr` is an instance of, as far as this file shows."""
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in RETURNS_SELF and isinstance(expr.func.value, ast.Call):
            return builtin_module_class(facts, expr.func.value, scope)
        dotted = facts.resolve(expr.func)
        if dotted and dotted.startswith("torch.nn.") and dotted.rsplit(".", 1)[-1][:1].isupper():
            if dotted.rsplit(".", 1)[-1] not in NOT_LAYERS:
                return dotted
        return None
    if isinstance(expr, ast.Name):
        found = _assigned_values(facts, scope, lambda t: isinstance(t, ast.Name) and t.id == expr.id)
    elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        cls = next((a for a in facts.ancestors(expr) if isinstance(a, ast.ClassDef)), None)
        found = _assigned_values(
            facts, cls,
            lambda t: isinstance(t, ast.Attribute) and t.attr == expr.attr and isinstance(t.value, ast.Name) and t.value.id == "self",
        )
    else:
        return None
    kinds = {builtin_module_class(facts, v, scope) for v in found}
    # every assignment must agree: one unknown or user-defined value and we stay quiet
    if len(kinds) == 1:
        return kinds.pop()
    return None


def _assigned_values(facts, scope, matches):
    # the same nodes as ast.walk(root) would visit (the order does not matter: a set is made)
    nodes = facts.nodes(ast.Assign, ast.AnnAssign) if scope is None else walk(scope)
    out = []
    for node in nodes:
        if isinstance(node, ast.Assign) and any(matches(t) for t in node.targets):
            out.append(node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None and matches(node.target):
            out.append(node.value)
    return out


def runs_inside_compiled_parent(facts, target: ast.AST, compile_call: ast.Call) -> bool:
    """`self.<attr>` is used by its class only in code a compile region covers (the
    class's `forward`, compiled with the module): Dynamo traces the built-in module into
    the parent's graph there, so it does not run eagerly whatever its own `.compile()`
    did (measured: `scripts/measure/cl504_nested_compile.py`)."""
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
        return False
    cls = next((a for a in facts.ancestors(target) if isinstance(a, ast.ClassDef)), None)
    if cls is None:
        return False
    uses = []
    for node in walk(cls):
        if not (isinstance(node, ast.Attribute) and node.attr == target.attr and isinstance(node.value, ast.Name)
                and node.value.id == "self" and isinstance(node.ctx, ast.Load)) or node is target:
            continue
        if facts.parent(node) is compile_call.func:
            continue
        uses.append(node)
    if not uses or not facts.has_region("compiled"):
        return False  # not used by its class: whoever uses it may run it eagerly
    return all(facts.in_region(use, "compiled") is not None for use in uses)


class BuiltinModuleCompileNoop(Rule):
    """
    ## What it does
    Finds `.compile()` called on an instance of a built-in `torch.nn` module:
    a container (`nn.Sequential`, `nn.ModuleList`) or a layer (`nn.Linear`,
    `nn.Conv2d`, ...), built in the same file.

    ## Why is this bad?
    On torch 2.13, `nn.Module.compile()` on a built-in module compiles nothing (0
    graphs: "frame is in the Dynamo skipfiles list"), so a `nn.Sequential` head
    stays eager while its author believes it is compiled. `.compile()` on your own
    module classes does work and is not flagged.

    Not reported either: a built-in module kept as `self.<attr>` that its class uses only
    in code a compile region covers (the `forward` of a parent compiled with
    `m.compile()` or `torch.compile(m)`). Dynamo traces the parent's `forward` and
    inlines the module into the parent's graph, so it does not run eagerly
    (`scripts/measure/cl504_nested_compile.py`: 0 graphs for the trunk alone or under an
    eager parent, its ops in the one graph of the compiled parent). Such a call is
    redundant, and sometimes deliberate: lingua's `probe.py` compiles a toy model's trunk
    so that its probe finds `_compiled_call_impl` set (judged false on bench/dev2, where
    the fix would break that probe). A use of the module outside compiled code (another
    method run eagerly) keeps the finding.

    ## Example
    ```python
    head = nn.Sequential(nn.Conv2d(64, 3, 3, padding=1), nn.Sigmoid())
    head.compile()
    ```

    ## Use instead
    ```python
    head = nn.Sequential(nn.Conv2d(64, 3, 3, padding=1), nn.Sigmoid())
    head = torch.compile(head)
    ```

    ## Fix safety
    Safe where no later use of `m` can tell: `m.compile(**kw)` becomes
    `m = torch.compile(m, **kw)` (adding `import torch` when the file has none), so from
    there on `m` is the compiled wrapper. Where `m` is later traced, scripted, exported
    to ONNX, pickled or saved, compared with `is`, its type asked, or its `state_dict()`
    keys read or loaded (they gain an `_orig_mod.` prefix), the fix is unsafe and its
    title says which line (measured on torch 2.13 CPU:
    `scripts/measure/rebinding_fix_observers.py`; CL503's page lists what each does).

    ## References
    - measured on torch 2.13 CPU: 0 graphs compiled ("frame is in the Dynamo skipfiles
      list"); user-defined modules do compile. pytorch#150915 (open)
    - `scripts/measure/cl504_nested_compile.py`: a built-in module inside a compiled parent
    """

    needs = (RegionsFact,)  # whether the module only runs inside a compiled parent
    code = "CL504"
    name = "builtin-module-compile-noop"
    summary = "`.compile()` on a built-in nn module compiles nothing"
    fix_safety = "safe"
    codemod = "codemods.module_compile_to_torch_compile:ModuleCompileToTorchCompile"
    requires = (b".compile(",)

    valid = [
        Case("import torch\nfrom torch import nn\nclass Net(nn.Module):\n    pass\nnet = Net()\nnet.compile()\n"),
        Case("import re\npattern = re.compile('x')\n"),
        Case("import torch\nfrom torch import nn\nm = nn.Sequential()\nm = torch.compile(m)\n"),
        Case("from torch import nn\nm = nn.Linear(2, 2) if cond else MyNet()\nm.compile()\n", note="not known to be built-in"),
        Case(
            """
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Linear(512, 16)
                    self.trunk = nn.Sequential(nn.Linear(512, 512), nn.Linear(512, 512))
                    self.trunk.compile()

                def forward(self, x):
                    return self.head(self.trunk(x))

            def test_toy_model():
                m = Model()
                m.compile()
                return m(torch.randn(2, 512))
            """,
            note="the trunk runs only in the forward of a compiled parent, traced into its graph "
                 "(lingua probe.py; scripts/measure/cl504_nested_compile.py)",
        ),
    ]
    invalid = [
        Case(
            "import torch\nfrom torch import nn\nhead = nn.Linear(8, 8)\nhead.compile()\ntorch.save(head.state_dict(), 'head.pt')\n",
            fixed="import torch\nfrom torch import nn\nhead = nn.Linear(8, 8)\nhead = torch.compile(head)\ntorch.save(head.state_dict(), 'head.pt')\n",
            at=[(4, 1)],
            note="unsafe fix: the checkpoint's keys would gain `_orig_mod.`",
        ),
        Case(
            "import torch\nfrom torch import nn\nhead = nn.Sequential(nn.Conv2d(64, 3, 3), nn.Sigmoid())\nhead.compile(mode='max-autotune')\n",
            fixed="import torch\nfrom torch import nn\nhead = nn.Sequential(nn.Conv2d(64, 3, 3), nn.Sigmoid())\nhead = torch.compile(head, mode='max-autotune')\n",
            at=[(4, 1)],
        ),
        Case(
            "import torch.nn as nn\nclass SR(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.up = nn.PixelShuffle(2).to('cuda')\n        self.up.compile()\n",
            fixed="import torch.nn as nn\nimport torch\n\nclass SR(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.up = nn.PixelShuffle(2).to('cuda')\n        self.up = torch.compile(self.up)\n",
            at=[(6, 9)],
        ),
        Case(
            "import torch as T\nT.nn.Linear(4, 4).compile()\n",
            at=[(2, 1)],
        ),
        Case(
            """
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Linear(512, 16)
                    self.trunk = nn.Sequential(nn.Linear(512, 512), nn.Linear(512, 512))
                    self.trunk.compile()

                def forward(self, x):
                    return self.head(self.trunk(x))

                def features(self, x):
                    return self.trunk(x)

            m = Model()
            m.compile()
            feats = m.features(torch.randn(2, 512))
            """,
            fixed="""
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Linear(512, 16)
                    self.trunk = nn.Sequential(nn.Linear(512, 512), nn.Linear(512, 512))
                    self.trunk = torch.compile(self.trunk)

                def forward(self, x):
                    return self.head(self.trunk(x))

                def features(self, x):
                    return self.trunk(x)

            m = Model()
            m.compile()
            feats = m.features(torch.randn(2, 512))
            """,
            at=[(10, 9)],
            note="the compiled parent's forward runs it compiled, but `features` (not compiled) runs it eagerly",
        ),
    ]

    def check(self, facts):
        for call in facts.nodes(ast.Call):
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "compile"):
                continue
            scope = facts.enclosing_function(call)
            cls = builtin_module_class(facts, func.value, scope)
            if cls is None or runs_inside_compiled_parent(facts, func.value, call):
                continue
            short = cls.rsplit(".", 1)[-1]
            message = (
                f"`.compile()` on a built-in `nn.{short}` compiles nothing: it keeps running eagerly"
            )
            stmt = facts.parent(call)
            target = target_text(facts, func.value)
            if isinstance(stmt, ast.Expr) and target:
                torch_name = facts.torch_alias()
                data = {"target": target, "torch": torch_name or "torch", "add_import": torch_name is None}
                seen = later_observer(facts, stmt, target)
                fix = f"use `{target} = torch.compile({target})`" + (f" (unsafe: {seen})" if seen else "")
                yield self.finding(facts, call, message, fix=fix, unsafe=seen is not None, data=data)
            else:
                yield self.finding(facts, call, message)
