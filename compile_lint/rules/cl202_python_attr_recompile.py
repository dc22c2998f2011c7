from __future__ import annotations

import ast
from typing import Optional

from ..analysis.classes import (
    local_class_region,
    calls_of_name,
    self_name,
    class_region,
    enclosing_loops,
    init_attr_kinds,
    instance_writes,
    is_module_class,
    is_write_target,
    labelled,
    local_class,
    loop_value_kind,
    method_attr_writes,
    methods,
    python_kind,
    scopes,
    self_reads,
    wraps_in,
)
from ..analysis.walk import walk as _walk
from ..analysis.declared import recorded_counts
from .base import Case, Related, Rule
from ..analysis.facts import RegionsFact

# bool attributes too could recompile; a bool has two values, so alone it adds at most one
# graph and never reaches the limit (torch's own DDP flags `_lazy_init_ran` and
# `require_backward_grad_sync` were the only findings in torch/, both one-shot).
KINDS = frozenset({"int", "str"})


def control_use(facts, node: ast.AST, stop: ast.AST) -> Optional[str]:
    """The control-flow construct whose condition or iterable holds `node`."""
    child = node
    for anc in facts.ancestors(node):
        if anc is stop:
            return None
        if isinstance(anc, ast.If) and child is anc.test:
            return "an `if`"
        if isinstance(anc, ast.While) and child is anc.test:
            return "a `while` loop"
        if isinstance(anc, ast.IfExp) and child is anc.test:
            return "a conditional expression"
        if isinstance(anc, (ast.For, ast.AsyncFor)) and child is anc.iter:
            return "a `for` loop"
        if isinstance(anc, ast.comprehension) and (child is anc.iter or child in anc.ifs):
            return "a comprehension"
        if isinstance(anc, ast.Match) and child is anc.subject:
            return "a `match`"
        child = anc
    return None


def _uses(facts, method):
    """(attr, node) for reads of `self.attr` in a method, and for `self.attr += ...`
    (a read too), in source order."""
    out = [(a, n) for a, n in self_reads(method) if not is_write_target(facts, n)]
    for node in _walk(method):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute):
            target = node.target
            if isinstance(target.value, ast.Name) and target.value.id == self_name(method):
                out.append((target.attr, target))
    return sorted(out, key=lambda r: (r[1].lineno, r[1].col_offset))


def guarded_use(facts, node: ast.AST, method: ast.AST, kind: str, unspec: bool = False) -> Optional[tuple[str, str]]:
    """How compiled code uses an attribute so that Dynamo guards on its value, and
    the kind of use ("loop", "branch", "value"): control flow for every kind, any
    read of an int (ints of modules are static unless `unspec`:
    `allow_unspec_int_on_nn_module = True` is set)."""
    use = control_use(facts, node, method)
    if use is not None:
        return f"steers {use}", ("loop" if "loop" in use or "comprehension" in use else "branch")
    if kind == "int" and not unspec:
        parent = facts.parent(node)
        incremented = isinstance(parent, ast.AugAssign) and parent.target is node
        return ("is incremented" if incremented else "is read"), "value"
    return None


UNSPEC_KEYS = frozenset(
    {"torch.compiler.config.allow_unspec_int_on_nn_module", "torch._dynamo.config.allow_unspec_int_on_nn_module"}
)


def unspec_ints(facts) -> bool:
    """This file sets `allow_unspec_int_on_nn_module = True`."""
    if b"allow_unspec_int_on_nn_module" not in facts.source.data:
        return False
    for node in facts.nodes(ast.Assign):
        if isinstance(node.value, ast.Constant) and node.value.value is True:
            if any(facts.resolve(t) in UNSPEC_KEYS for t in node.targets):
                return True
    return False


def _article(kind: str) -> str:
    return "an" if kind == "int" else "a"


class PythonAttrRecompile(Rule):
    """
    ## What it does
    Finds `int` and `str` attributes of a compiled module that steer control
    flow in its compiled code (`for _ in range(self.steps)`, `if self.mode == "fast"`,
    `while self.n`, `x if self.flag else y`) - for `int`s any read, `self.n += 1`
    included - and that change after `__init__`:
    - in a method of the class (a setter, or `forward` itself: `self.step += 1`),
      reported at the read in the compiled code;
    - on the instance inside a loop that also calls the compiled module
      (`for n in (10, 20, 50): model.steps = n; out = compiled(x)`), reported at the
      change; this works when the class is defined in another file too.

    When a recorded run (`compile-lint record`, docs/record.md) saw recompiles at the
    region's compile site, the message says how many.

    ## Why is this bad?
    Dynamo treats Python attributes of a module as constants of the graph and guards
    on their values. Each new value fails the guard and compiles a new graph; after
    8 graphs the frame hits `torch._dynamo.config.recompile_limit` (8) and silently
    runs eagerly from then on, so the speed-up is gone without an error
    (pytorch#135458). A counter in `forward` gets there after 8 calls.

    Ints are guarded wherever they are read, not only in control flow: on torch
    2.13, `return x * self.k` with `k` set to 1..10 and a counter `self.count += 1`
    in `forward` both compiled 8 graphs and then hit the limit. Floats become
    dynamic after one recompile (2 graphs) and are not reported.

    ## Example
    ```python
    class Denoiser(nn.Module):
        def __init__(self):
            super().__init__()
            self.steps = 10
            self.unet = UNet()

        def forward(self, x):
            for _ in range(self.steps):
                x = x - self.unet(x)
            return x

    model = torch.compile(Denoiser())
    for steps in (10, 20, 30, 40, 50, 60, 70, 80, 90):
        model.steps = steps
        out = model(image)
    ```

    ## Use instead
    Compile the per-step work, so that the loop count is plain Python again:
    ```python
    class Denoiser(nn.Module):
        def __init__(self):
            super().__init__()
            self.steps = 10
            self.unet = torch.compile(UNet())

        def forward(self, x):
            for _ in range(self.steps):
                x = x - self.unet(x)
            return x
    ```
    For an int used as a value (`x * self.k`, a counter), pass a tensor or set
    `torch.compiler.config.allow_unspec_int_on_nn_module = True` (measured: 2 graphs
    instead of 8 and the limit). That setting does not help loop counts (`range(self.n)`
    is unrolled per value: still 8 graphs and the limit), and branches are best
    expressed on tensors (`torch.where`, `torch.cond`).

    ## Fix safety
    No fix: moving a value into the signature changes the module's API.

    Not reported: attributes only `__init__` (or helpers only it calls) sets; ints
    used as plain values when the file sets `allow_unspec_int_on_nn_module = True`;
    `float` attributes (dynamic after one recompile); `bool` attributes (two values:
    at most one extra graph, never the limit by itself); strings that do not steer
    control flow; an instance changed
    once outside a loop (one recompile); modules that are not compiled.

    ## References
    - measured on torch 2.13 CPU: one recompile per value; after 8, "hit
      config.recompile_limit (8)" and the frame silently runs eagerly. `tests/test_verify_hazards.py` runs `compile-lint verify` on `fixtures/verify/` and reproduces it (iterative_denoise.py)
    - pytorch#135458
    - https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html (recompilations)
    """

    needs = (RegionsFact,)
    code = "CL202"
    name = "python-attr-recompile"
    summary = "Changing an int/str attribute that compiled code depends on recompiles, up to the limit"
    fix_safety = "none"
    requires = ()

    valid = [
        Case(
            """\
            import torch
            from torch import nn
            class Denoiser(nn.Module):
                def __init__(self, steps: int = 10):
                    super().__init__()
                    self.steps = steps
                    self.conv = nn.Conv2d(3, 3, 3, padding=1)
                def forward(self, x):
                    for _ in range(self.steps):
                        x = x - self.conv(x)
                    return x
            model = torch.compile(Denoiser())
            """,
            note="set only in __init__",
        ),
        Case(
            """\
            from torch import nn
            class Denoiser(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.steps = 10
                    self.conv = nn.Conv2d(3, 3, 3, padding=1)
                def set_steps(self, n):
                    self.steps = n
                def forward(self, x):
                    for _ in range(self.steps):
                        x = x - self.conv(x)
                    return x
            """,
            note="not compiled",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Mix(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.gain = 1.0
                    self.mirror = False
                def set_gain(self, g):
                    self.gain = g
                def toggle(self):
                    self.mirror = not self.mirror
                def forward(self, x):
                    if self.mirror:
                        x = x.flip(-1)
                    return x * self.gain
            model = torch.compile(Mix())
            """,
            note="a float (dynamic after one recompile), a bool (two graphs at most)",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Denoiser(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.steps = 10
                    self.conv = nn.Conv2d(3, 3, 3, padding=1)
                def forward(self, x):
                    for _ in range(self.steps):
                        x = x - self.conv(x)
                    return x
            model = Denoiser()
            compiled = torch.compile(model)
            model.steps = 20
            out = compiled(torch.rand(1, 3, 8, 8))
            """,
            note="changed once, not in a loop: one recompile",
        ),
        Case(
            """\
            import torch
            from torch import nn
            torch.compiler.config.allow_unspec_int_on_nn_module = True
            class Tiles(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.shift = 1
                def set_shift(self, s):
                    self.shift = s
                def forward(self, x):
                    return torch.roll(x, self.shift, -1) * self.shift
            model = torch.compile(Tiles())
            """,
            note="ints used as values, with allow_unspec_int_on_nn_module set",
        ),
    ]
    invalid = [
        Case(
            """\
            import torch
            from torch import nn
            class Denoiser(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.steps = 10
                    self.conv = nn.Conv2d(3, 3, 3, padding=1)
                def set_steps(self, n):
                    self.steps = n
                def forward(self, x):
                    for _ in range(self.steps):
                        x = x - self.conv(x)
                    return x
            model = torch.compile(Denoiser(), mode="reduce-overhead")
            """,
            at=[(11, 24)],
        ),
        Case(
            """\
            import torch.nn as nn
            class Stylize(nn.Module):
                def __init__(self, mode: str = "fast"):
                    super().__init__()
                    self.mode = mode
                    self.calls = 0
                    self.a = nn.Conv2d(3, 3, 1)
                    self.b = nn.Conv2d(3, 3, 3, padding=1)
                def forward(self, x):
                    self.calls += 1
                    if self.calls % 100 == 0:
                        x = x.clamp(0, 1)
                    return self.a(x) if self.mode == "fast" else self.b(x)
                def use_quality(self):
                    self.mode = "quality"
            """,
            files={
                "app/__init__.py": "",
                "app/serve.py": "import torch\nfrom app.style import Stylize\nnet = Stylize()\nnet.compile()\n",
            },
            path="app/style.py",
            at=[(10, 9), (13, 29)],
            note="cross-file: a counter in forward, a str mode; compiled in serve.py",
        ),
        Case(
            """\
            import torch
            from pkg.model import Denoiser
            model = Denoiser().eval()
            fast = torch.compile(model)
            image = torch.rand(1, 3, 64, 64)
            for steps in range(10, 100, 10):
                model.steps = steps
                out = fast(image)
            """,
            files={
                "pkg/__init__.py": "",
                "pkg/model.py": (
                    "import torch.nn as nn\n"
                    "class Denoiser(nn.Module):\n"
                    "    def __init__(self):\n"
                    "        super().__init__()\n"
                    "        self.steps = 10\n"
                    "    def forward(self, x):\n"
                    "        for _ in range(self.steps):\n"
                    "            x = x * 0.9\n"
                    "        return x\n"
                ),
            },
            path="pkg/sweep.py",
            at=[(7, 5)],
            note="cross-file: the class in model.py, changed in a loop in sweep.py",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Tiler(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.frame = 0
                    self.conv = nn.Conv2d(3, 3, 3, padding=1)
                def forward(self, x):
                    self.frame += 1
                    return self.conv(torch.roll(x, 1, -1))
            model = torch.compile(Tiler())
            """,
            at=[(9, 9)],
            note="an int counter in forward: a recompile per call, no control flow needed",
        ),
        Case(
            """\
            import torch
            import torch._dynamo.config as dc
            from torch import nn
            dc.allow_unspec_int_on_nn_module = True
            class Refine(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.iters = 2
                    self.conv = nn.Conv2d(3, 3, 3, padding=1)
                def forward(self, x):
                    for _ in range(self.iters):
                        x = x + self.conv(x)
                    return x
            model = Refine()
            compiled = torch.compile(model)
            for iters in (2, 4, 8, 16):
                model.iters = iters
                y = compiled(torch.rand(1, 3, 8, 8))
            """,
            at=[(17, 5)],
            note="a loop count: allow_unspec_int_on_nn_module does not help (unrolled per value)",
        ),
    ]

    def check(self, facts):
        if facts.has_region("compiled"):
            yield from self._class_side(facts)
        if b"compile" in facts.source.data:
            yield from self._instance_side(facts)

    def _class_side(self, facts):
        unspec = unspec_ints(facts)
        for cls in facts.nodes(ast.ClassDef):
            kinds = {a: k for a, k in init_attr_kinds(facts, cls).items() if k[0] in KINDS}
            if not kinds or not is_module_class(facts, cls):
                continue
            writes = method_attr_writes(facts, cls)
            done: set[str] = set()
            for name, method in methods(cls).items():
                region = facts.in_region(method, "compiled")
                if region is None:
                    continue
                for attr, node in _uses(facts, method):
                    if attr in done or attr not in kinds or attr not in writes:
                        continue
                    kind = kinds[attr][0]
                    found = guarded_use(facts, node, method, kind, unspec)
                    if found is None:
                        continue
                    use, category = found
                    done.add(attr)
                    write = writes[attr][0]
                    yield self.finding(
                        facts, node,
                        f"`{facts.text(node)}` {use} in compiled `{cls.name}.{name}`: each new value "
                        f"(set in `{write.where}`) recompiles" + recorded_counts(region, "recompiles"),
                        region=labelled(region, "compiled"),
                        related=[Related(facts.path, write.node.lineno, write.node.col_offset + 1, f"{write.how} here")],
                    )

    def _instance_side(self, facts):
        unspec = unspec_ints(facts)
        for owner, body in scopes(facts, "compiled"):
            wraps, _known = wraps_in(facts, body)
            for wrap in wraps:
                if wrap.kind != "compiled":
                    continue
                local = local_class(facts, wrap.cls)
                if local is not None:
                    kinds = init_attr_kinds(facts, local)
                    steering = self._guarded_attrs(facts, local, kinds, unspec)
                    region = local_class_region(facts, local, "compiled")
                else:
                    kinds, steering = {}, set()
                    region = class_region(facts, wrap.cls, "compiled")
                if region is None:
                    continue
                calls = calls_of_name(body, wrap.result)
                names = {wrap.instance, wrap.result}
                for holder, attr, node, how in instance_writes(body, names):
                    if node.lineno <= wrap.call.lineno:
                        continue
                    loops = enclosing_loops(facts, node)
                    in_loop = [l for l in loops if any(c in list(_walk(l)) for c in calls)]
                    if not in_loop:
                        continue
                    category = None
                    if local is not None:
                        if attr not in kinds or kinds[attr][0] not in KINDS or attr not in steering:
                            continue
                        kind = kinds[attr][0]
                        category = steering[attr]
                    else:
                        kind = self._value_kind(facts, node)
                        if kind not in KINDS:
                            continue
                    loop = in_loop[0]
                    yield self.finding(
                        facts, node,
                        f"`{holder}.{attr}` ({_article(kind)} {kind}) changes on every pass of a loop that calls "
                        f"compiled `{wrap.result}`: each new value recompiles" + recorded_counts(region, "recompiles"),
                        region=labelled(region, "compiled"),
                        related=[Related(facts.path, loop.lineno, loop.col_offset + 1, f"this loop calls `{wrap.result}`")],
                    )

    @staticmethod
    def _guarded_attrs(facts, cls, kinds, unspec) -> dict[str, str]:
        """attr -> the category of its first guarded use in compiled methods."""
        out: dict[str, str] = {}
        for method in methods(cls).values():
            if facts.in_region(method, "compiled"):
                for attr, node in _uses(facts, method):
                    if attr in kinds and attr not in out:
                        found = guarded_use(facts, node, method, kinds[attr][0], unspec)
                        if found is not None:
                            out[attr] = found[1]
        return out

    @staticmethod
    def _value_kind(facts, node):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            kind = python_kind(facts, node.value, {})
            if kind is None and isinstance(node.value, ast.Name):
                kind = loop_value_kind(facts, node.value.id, node)
            return kind
        return None
