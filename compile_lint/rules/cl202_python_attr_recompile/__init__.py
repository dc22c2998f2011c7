from __future__ import annotations

from ...analysis.modules.classes import labelled
from .compiled_use import forward_may_run_compiled
from ...analysis.semantic.walk import walk
from ...analysis.modules.attr_changes import ClassStateFact, changed_reads, instance_changes, read_in_region, repeated_write
from ...analysis.reach.declared import recorded_counts
from .dynamo_guards import guarded_use, unspec_ints
from ...analysis.semantic.facts import RegionsFact
from ...analysis.project.calls import ProjectFilesFact
from ..base import Case, Related, Rule

# bool attributes too could recompile; a bool has two values, so alone it adds at most one
# graph and never reaches the limit (torch's own DDP flags `_lazy_init_ran` and
# `require_backward_grad_sync` were the only findings in torch/, both one-shot).
KINDS = frozenset({"int", "str"})


# FoundationVision/VAR's shape: a compiled autoencoder a trainer uses through `encode`
# (valid: `forward` never runs compiled) or through the wrapper itself (invalid); STEP is
# what `Trainer.step` returns
_AUTOENCODER_TRAINER = """\
            import torch
            from torch import nn
            class Quantizer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.record_hit = 0
                def forward(self, x):
                    if self.record_hit == 0:
                        x = x * 2
                    self.record_hit += 1
                    return x
                def lookup(self, x):
                    return x.argmax(1)
            class AutoEncoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.quantize = Quantizer()
                def forward(self, x):
                    return self.quantize(x)
                def encode(self, x):
                    return self.quantize.lookup(x)
            def compile_model(m):
                return torch.compile(m) if hasattr(torch, "compile") else m
            class Trainer:
                def __init__(self, vae):
                    self.vae = vae
                def step(self, x):
                    return STEP
            def main(x):
                vae = compile_model(AutoEncoder())
                print(vae.quantize)
                trainer = Trainer(vae)
                return trainer.step(x)
"""


class PythonAttrRecompile(Rule):
    """
    ## What it does
    Finds `int` and `str` attributes of a compiled module that steer control
    flow in its compiled code (`for _ in range(self.steps)`, `if self.mode == "fast"`,
    `while self.n`, `x if self.flag else y`) - for `int`s any read, `self.n += 1`
    included - and that change after `__init__`:
    - in a method of the class that runs again and again: compiled code itself
      (`self.step += 1` in `forward`), or a setter called inside a loop or from
      compiled code anywhere in the project (`for req in requests:
      model.configure(req.steps); model(x)`; a call whose arguments fit the setter
      and pass the value it writes, in a loop that calls it on the same object again),
      reported at the read in the compiled code;
    - on the instance inside a loop that also calls the compiled module
      (`for n in (10, 20, 50): model.steps = n; out = compiled(x)`), reported at the
      change; this works when the class is defined in another file too.

    Reads and writes on the eager side of a compile test (`if torch.compiler.is_compiling():
    ... else: <here>`) never run compiled and do not count (torchmd-net, bench/dev8: two
    false findings before), nor do those in a method the class calls only there
    (cog-flux's `quantize_input`, called in the `else` of `if self.initialized or
    is_compiling():`; bench/dev14, judged false in `bench/dev_findings/`).

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
    once outside a loop (one recompile); a method that reconfigures the module and
    that nothing in view calls in a loop or from compiled code (`reset_classifier(n,
    pool)`: one recompile at most; on corpus M, 29 such findings in timm-1.0.31, all
    judged false, went away, `python -m compile_lint check --select CL202 .` in
    `bench/.work/corpus/M/src`); modules that are not compiled; code reached
    from a compiled `forward` when the compiled wrapper is never called, only used
    through other methods (`vae = torch.compile(vae)` then only `vae.encode(x)`):
    `torch.compile(m)` compiles calls of the wrapper, and `vae.encode` runs eagerly
    (`scripts/measure/compile_other_method.py`: `m(x)` 1 graph, `m.generate(x)` 0).
    The wrapper is followed to its uses across the project's files
    (`compile_lint/rules/cl202_python_attr_recompile/compiled_use.py`); where it goes out of view, it may be
    called; a trace or export that also reaches the code recompiles nothing and does not
    count (a valid case; nothing moved on the 476 development apps). Judged on FoundationVision/VAR (`bench/apps/judged_region_findings.toml`,
    models/quant.py: false, the compiled VQVAE is only used through `img_to_idxBl`); the
    valid case "only used through `encode`" has that shape, and the invalid case
    beside it, where the wrapper is called, stays reported.

    ## References
    - measured on torch 2.13 CPU: one recompile per value; after 8, "hit
      config.recompile_limit (8)" and the frame silently runs eagerly. `tests/test_verify_hazards.py` runs `compile-lint verify` on `fixtures/verify/` and reproduces it (iterative_denoise.py)
    - pytorch#135458
    - https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html (recompilations)
    """

    needs = (RegionsFact, ClassStateFact, ProjectFilesFact)
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
            from torch.compiler import is_compiling
            class F8Linear(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.trial_index = 0
                    self.initialized = False
                    self.scale = nn.Parameter(torch.ones(()))
                def quantize_input(self, x):
                    if self.trial_index < 16:
                        self.trial_index += 1
                    return x * self.scale
                def forward(self, x):
                    if self.initialized or is_compiling():
                        x = x * self.scale
                    else:
                        x = self.quantize_input(x)
                    return x
            model = torch.compile(F8Linear())
            """,
            note="cog-flux's Float8Linear (bench/dev14, judged false in bench/dev_findings): the helper is "
                 "called only where Dynamo does not trace",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class ChargePredict(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.dim_size = 0
                    self.static_shapes = True
                def forward(self, x, batch):
                    if torch.compiler.is_compiling():
                        pass
                    elif torch.jit.is_scripting():
                        if not self.static_shapes or self.dim_size == 0:
                            self.dim_size = int(batch.max().item() + 1)
                    else:
                        self.dim_size = int(batch.max().item() + 1)
                    return x.sum() * self.dim_size
            model = torch.compile(ChargePredict())
            """,
            note="torchmd-net (bench/dev8): the reads and writes on the eager side of `is_compiling()` never run compiled",
        ),
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
        Case(
            _AUTOENCODER_TRAINER.replace("STEP", "self.vae.encode(x)"),
            note="the compiled wrapper is only used through `encode`: `forward` never runs compiled (FoundationVision/VAR)",
        ),
        Case(
            _AUTOENCODER_TRAINER.replace("STEP", "self.vae.encode(x)") + """\
            def export(x):
                torch.onnx.export(AutoEncoder().eval(), (x,), "ae.onnx")
            """,
            note="the same with an ONNX export of the model: a trace reaching `forward` recompiles nothing",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Quantizer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.record_hit = 0
                def forward(self, x):
                    if self.record_hit == 0:
                        x = x * 2
                    self.record_hit += 1
                    return x
            class AutoEncoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.quantize = Quantizer()
                def forward(self, x):
                    return self.quantize(x)
                def encode(self, x):
                    return self.quantize(x).argmax(1)
            class Generator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Linear(4, 4)
                def forward(self, x):
                    return self.head(x)
            """,
            files={
                "app/__init__.py": "",
                "app/util.py": "import torch\ndef compile_model(m):\n    return torch.compile(m)\n",
                "app/trainer.py": (
                    "class Trainer:\n"
                    "    def __init__(self, vae, gen):\n"
                    "        self.vae, self.gen = vae, gen\n"
                    "    def step(self, x):\n"
                    "        return self.gen(self.vae.encode(x))\n"
                ),
                "app/train.py": (
                    "from app.models import AutoEncoder, Generator\n"
                    "from app.util import compile_model\n"
                    "from app.trainer import Trainer\n"
                    "def main(x):\n"
                    "    vae, gen = AutoEncoder(), Generator()\n"
                    "    vae: AutoEncoder = compile_model(vae)\n"
                    "    gen: Generator = compile_model(gen)\n"
                    "    return Trainer(vae, gen).step(x)\n"
                ),
            },
            path="app/models.py",
            note="across files: one wrapper compiles both models; only the generator's wrapper is called",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Classifier(nn.Module):
                def __init__(self, num_classes=10, global_pool="avg"):
                    super().__init__()
                    self.global_pool = global_pool
                    self.num_classes = num_classes
                    self.head = nn.Linear(64, num_classes)
                def reset_classifier(self, num_classes, global_pool=None):
                    self.num_classes = num_classes
                    if global_pool is not None:
                        self.global_pool = global_pool
                    self.head = nn.Linear(64, num_classes)
                def forward(self, x):
                    if self.global_pool == "avg":
                        x = x.mean((2, 3))
                    else:
                        x = x.amax((2, 3))
                    return x if self.num_classes == 0 else self.head(x)
            model = Classifier()
            model.reset_classifier(5, "max")
            model = torch.compile(model)
            """,
            note="a reconfiguration method called once (timm's reset_classifier): one recompile at most, never the limit",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Head(nn.Module):
                def __init__(self, pool_type="avg"):
                    super().__init__()
                    self.pool_type = pool_type
                    self.fc = nn.Linear(8, 2)
                def reset(self, num_classes=None, pool_type=None):
                    if pool_type is not None:
                        self.pool_type = pool_type
                def forward(self, x):
                    if self.pool_type == "avg":
                        x = x.mean(-1)
                    return self.fc(x)
            class Meter:
                def reset(self):
                    self.total = 0
            model = torch.compile(Head())
            def evaluate(batches, meter):
                for batch in batches:
                    meter.reset()
                    model(batch)
            """,
            note="a call in a loop of another `reset` that passes no `pool_type`: the value cannot change",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class PatchEmbed(nn.Module):
                def __init__(self, size=224):
                    super().__init__()
                    self.size = size
                def set_input_size(self, size):
                    self.size = size
                def forward(self, x):
                    assert x.shape[-1] == self.size
                    return x
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.embeds = nn.ModuleList([PatchEmbed(), PatchEmbed()])
                def set_input_size(self, size):
                    for embed in self.embeds:
                        embed.set_input_size(size)
                def forward(self, x):
                    for embed in self.embeds:
                        x = embed(x)
                    return x
            model = torch.compile(Net())
            """,
            note="a loop over the modules calls each one's setter once (timm's set_input_size)",
        ),
    ]
    invalid = [
        Case(
            """\
            import torch
            from torch import nn
            from torch.compiler import is_compiling
            class F8Linear(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.trial_index = 0
                    self.initialized = False
                    self.scale = nn.Parameter(torch.ones(()))
                def quantize_input(self, x):
                    if self.trial_index < 16:
                        self.trial_index += 1
                    return x * self.scale
                def forward(self, x):
                    if self.initialized or is_compiling():
                        x = x * self.scale
                    else:
                        x = self.quantize_input(x)
                    x = self.quantize_input(x)
                    return x
            model = torch.compile(F8Linear())
            """,
            at=[(11, 12)], note="the helper is also called on the path Dynamo traces",
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
                def set_steps(self, n):
                    self.steps = n
                def forward(self, x):
                    for _ in range(self.steps):
                        x = x - self.conv(x)
                    return x
            model = torch.compile(Denoiser(), mode="reduce-overhead")
            def sweep(x):
                for n in (10, 20, 50):
                    model.set_steps(n)
                    yield model(x)
            """,
            at=[(11, 24)], note="the setter runs in a loop that calls the compiled module",
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
            at=[(10, 9)],
            note="cross-file: a counter in forward (the str mode, set once by `use_quality`, is one recompile at most)",
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
        Case(
            _AUTOENCODER_TRAINER.replace("STEP", "self.vae(x)"),
            at=[(8, 12)],
            note="the same, but the trainer calls the compiled wrapper: `forward` runs compiled",
        ),
    ]

    def check(self, facts):
        unspec = unspec_ints(facts)
        if facts.has_region("compiled"):
            yield from self._class_side(facts, unspec)
        if b"compile" in facts.source.data:
            yield from self._instance_side(facts, unspec)

    def _class_side(self, facts, unspec):
        done: set[tuple[int, str]] = set()
        for read in changed_reads(facts, "compiled", KINDS):
            found = guarded_use(facts, read.node, read.method_node, read.kind, unspec)
            if found is None or (id(read.cls), read.attr) in done:
                continue
            write = next((w for w in read.writes if repeated_write(facts, read.cls, w) is not None), None)
            if write is None:
                continue  # changed once at most (a reconfiguration): one recompile, not the limit
            if not forward_may_run_compiled(facts, read.region, f"{facts.names.module}.{facts.qualname_of(read.method_node)}"):
                continue  # the compiled wrapper is never called: this code runs eagerly
            done.add((id(read.cls), read.attr))
            yield self.finding(
                facts, read.node,
                f"`{facts.text(read.node)}` {found[0]} in compiled `{read.cls.name}.{read.method}`: each new value "
                f"(set in `{write.where}`) recompiles" + recorded_counts(read.region, "recompiles"),
                region=labelled(read.region, "compiled"),
                related=[Related(facts.path, write.node.lineno, write.node.col_offset + 1, f"{write.how} here")],
            )

    def _instance_side(self, facts, unspec):
        for change in instance_changes(facts, "compiled"):
            if change.kind not in KINDS:
                continue
            if change.cls is not None and not any(
                guarded_use(facts, node, method, change.kind, unspec)
                for method, node in read_in_region(facts, change.cls, "compiled").get(change.attr, ())
            ):
                continue  # compiled code does not guard on it
            loop = next((l for l in change.loops if any(c in walk(l) for c in change.calls)), None)
            if loop is None:
                continue  # changed once: one recompile
            article = "an" if change.kind == "int" else "a"
            yield self.finding(
                facts, change.node,
                f"`{change.holder}.{change.attr}` ({article} {change.kind}) changes on every pass of a loop that calls "
                f"compiled `{change.wrap.result}`: each new value recompiles" + recorded_counts(change.region, "recompiles"),
                region=labelled(change.region, "compiled"),
                related=[Related(facts.path, loop.lineno, loop.col_offset + 1, f"this loop calls `{change.wrap.result}`")],
            )
