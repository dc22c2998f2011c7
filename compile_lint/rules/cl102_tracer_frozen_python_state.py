from __future__ import annotations

import ast

from ..analysis.modules.attr_changes import (
    ClassStateFact, changed_reads, escapes, instance_changes, maybe_python_value, read_in_region,
)
from ..analysis.modules.classes import every_trace, labelled, self_attr, site_of_kind
from ..analysis.semantic.facts import RegionsFact
from ..analysis.torch_api import FILE_EXPORTERS
from ..analysis.semantic.walk import walk
from .base import Case, Related, Rule

KINDS = frozenset({"int", "float", "bool", "list", "tuple"})


class TracerFrozenPythonState(Rule):
    """
    ## What it does
    Off by default (on real projects nearly every finding was false: see "Why it is off
    by default" below): select it with `--extend-select CL102` or `extend-select =
    ["CL102"]`. `compile-lint verify` uses its findings even so, to choose the targets
    it runs the frozen-state check on (change the attribute after tracing, compare the
    trace with the eager module), and reports the ones that check proves.

    Finds Python values (`int`, `float`, `bool`, `list`, `tuple` attributes set in
    `__init__`) that the `forward` of a traced module reads, when they are changed
    after `__init__`:
    - in a method of the class (`def set_alpha(self, a): self.alpha = a`,
      `self.order.reverse()`, `self.step += 1` in `forward` itself), reported at the
      read in the traced code;
    - on the instance after tracing it, when the traced module is then called
      (`traced = torch.jit.trace(model, x); model.alpha = 0.3; traced(y)`), or when the
      trace leaves the scope after the change: returned, saved (`traced.save(...)`,
      `torch.jit.save`), stored on an object (`self.blend = traced`), or a module global
      that a function reads; reported at the change. This works when the class is
      defined in another file too.

    Traced means passed to `torch.jit.trace`, `torch.fx.symbolic_trace`,
    `torch.export.export` or `torch.onnx.export`, or reached from such code. A read in
    the body of `if torch.jit.is_scripting():` is not traced by any of them and is not
    reported (torchmd-net, bench/dev8: one false finding before).

    ## Why is this bad?
    Tracers run `forward` once and record tensor operations; a Python value read on
    the way is folded into the graph as a constant. Changing the attribute later
    changes the eager module but not the trace, with no error: a float attribute
    changed after tracing left the output off by 0.643, and reordering a list of
    layers after tracing left it off by 3.0.

    ## Example
    ```python
    class Blend(nn.Module):
        def __init__(self):
            super().__init__()
            self.alpha = 0.5

        def set_alpha(self, alpha):
            self.alpha = alpha

        def forward(self, fg, bg):
            return fg * self.alpha + bg * (1 - self.alpha)

    traced = torch.jit.trace(Blend(), (fg, bg))
    ```

    ## Use instead
    Make the value an input of `forward` (a tensor, so it is traced), or a buffer
    updated in place, or trace again after every change:
    ```python
    class Blend(nn.Module):
        def forward(self, fg, bg, alpha):
            return fg * alpha + bg * (1 - alpha)

    traced = torch.jit.trace(Blend(), (fg, bg, torch.tensor(0.5)))
    ```

    ## Fix safety
    No fix: whether the value should become an input, a buffer, or a reason to trace
    again is a design decision.

    Not reported: attributes only `__init__` (and helpers only it calls) sets; a change
    made before tracing; a change after tracing when the traced module is not called
    afterwards (tracing for export, then going on with the eager module); tensors,
    parameters and buffers; `torch.jit.script` (it compiles attribute reads); a read that
    follows, in the method's own body, an assignment of the attribute from no old value
    of it (`self.num_classes = int(score.shape[2])` then `self.num_classes` passed on):
    each call reads what it wrote; a read on a training-only branch (`if self.training:`,
    `if training and self.iter > n:` with `training` a parameter callers give
    `self.training`): a trace or export is taken for inference, in eval mode
    (`torch.onnx.export` sets it by default; tracing in training mode is CL106's finding),
    and records the other branch. Measured on the development sets (`bench/results.md`,
    2026-12-05): with detectron2's `build_model(cfg)` followed (tried, not kept), ten
    findings appeared in yolov7_d2's detectors (bench/dev21), each a read of the training
    iteration counter under `if training and ...`, none true; this leaves them out, and
    changes no other finding of any development set. Measured on development set 2 (`python
    bench/dev2/score.py <apps>`): YOLOv6's ONNX_TRT7.forward, reached once the index
    followed the class chosen in End2End's `__init__`, was the one false CL102 finding;
    whether the written size is baked is CL101's question.

    Nor a change another method makes when every trace that reaches the read is an ONNX
    export (`torch.onnx.export`): the export writes its file when it runs and leaves
    nothing that runs the model later, so `merge_bn()`, `reparameterize()` or
    `OnnxExport()` called to pick the deployed branch (or a flag set for the export and
    reset after it) is what the file should hold; a change the traced code makes itself
    (`self.calls += 1` in `forward`) is still reported. Nor a read that every path
    through its method reaches only after setting the attribute from no old value
    (FasterViT's `if self.deploy: return ...` / `else: self.grid_exists = False` before
    `if not self.grid_exists:`). Nor a read in an `assert` or in the arguments of `print`,
    `warnings.warn` or `logging.*`: a tracer records no operation for them (torchmd-net's
    `assert self.dim_size > 0` and the warning after it, judged false, the one finding
    this took on the 476 apps). On the 476 development apps held (`bench/dev_findings/`,
    2026-12-06) the two took 21 findings and added none: CrazyAra's `merge_bn` (3),
    so-vits-svc's export switches (3), dlrm's embedding quantization (3), two MobileOne
    `reparameterize` blocks, LW-DETR's and retinanet-examples' `export()`, wekws' Kaldi
    loader (2), FasterViT (4 reads after the path sets the flag, 2 of `deploy`); the 12
    of them judged there were all false. Corpus M's check JSON is identical.

    Why it is off by default: judged on the development apps (`bench/dev_findings/`,
    2026-12-06, main fc9022c), 18 findings on the 476 apps held, 16 judged: none true,
    3 latent, 13 false; of every CL102 verdict there (28, counting findings earlier
    changes removed) none is true and 4 are latent. The false ones change a flag that
    picks a branch computing the same values (LLM2CLIP's gradient checkpointing,
    TabPFN's inference cache, dlrm's device placement, torchmd-net's precomputed table),
    change it where no trace is run afterwards (Adaconv-ONNX, FasterViT's
    `switch_to_deploy` that nothing calls, rf-detr's `export()` before every trace), or
    read it where the traced path never goes (a partial convolution always given a
    mask). Telling them apart takes running the model, which is what `verify` does: its
    frozen-state check keeps running on the findings of this rule (`fixtures/verify/`,
    `tests/test_verify_hazards.py`).

    ## References
    - measured on torch 2.13 CPU: jit.trace / export / fx bake the value (a reordered layer
      list: diff 3.0; a float attribute changed after tracing: 0.643). `tests/test_verify_hazards.py` runs `compile-lint verify` on `fixtures/verify/` and reproduces it (frozen_grade.py)
    - https://pytorch.org/docs/stable/generated/torch.jit.trace.html (traced functions
      record only tensor operations; Python values become constants)
    """

    needs = (RegionsFact, ClassStateFact)
    code = "CL102"
    name = "tracer-frozen-python-state"
    summary = "Traced module reads a Python attribute that is changed after tracing"
    fix_safety = "none"
    requires = ()
    default_selected = False  # judged false on real code: 0 of 16 true on the development apps
    verify_candidate = True  # verify's frozen-state check proves the real ones

    valid = [
        Case(
            """\
            import torch
            from torch import nn
            class ChargePredict(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.dim_size = 0
                def forward(self, x, batch):
                    if torch.jit.is_scripting():
                        if self.dim_size == 0:
                            self.dim_size = 4
                    return x.sum()
                def resize(self, n):
                    self.dim_size = n
            traced = torch.jit.trace(ChargePredict(), (torch.rand(2), torch.zeros(2)))
            """,
            note="torchmd-net (bench/dev8): `torch.jit.is_scripting()` is False while tracing: its branch is not traced",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Detector(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.iter = 0
                    self.use_l1 = False
                def update_iter(self, i):
                    self.iter = i
                def preprocess(self, x, training):
                    if training and self.iter > 100 and not self.use_l1:
                        self.use_l1 = True
                    if self.training:
                        x = x * (self.iter + 1)
                    return x
                def forward(self, x):
                    return self.preprocess(x, self.training)
            torch.onnx.export(Detector().eval(), torch.rand(1, 3, 8, 8), "det.onnx")
            """,
            note="yolov7_d2 (bench/dev21): a training step's counter, read only where `self.training` "
                 "(or a `training` parameter given it) is true: a trace for inference takes the other branch",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Blend(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.alpha = 0.5
                def forward(self, fg, bg):
                    return fg * self.alpha + bg * (1 - self.alpha)
            def build(example):
                model = Blend()
                model.alpha = 0.3
                traced = torch.jit.trace(model, example)
                return traced
            """,
            note="changed before tracing, then returned",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Blend(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.alpha = 0.5
                def forward(self, fg, bg):
                    return fg * self.alpha + bg * (1 - self.alpha)
            def check_trace(example):
                model = Blend()
                traced = torch.jit.trace(model, example)
                ok = torch.allclose(traced(*example), model(*example))
                model.alpha = 0.3
                return ok
            """,
            note="the trace is used and dropped before the change",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Blend(nn.Module):
                def __init__(self, alpha: float = 0.5):
                    super().__init__()
                    self.alpha = alpha
                def forward(self, fg, bg):
                    return fg * self.alpha + bg * (1 - self.alpha)
            traced = torch.jit.trace(Blend(), (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)))
            """,
            note="set only in __init__",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Blend(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.alpha = 0.5
                def set_alpha(self, a):
                    self.alpha = a
                def forward(self, fg, bg):
                    return fg * self.alpha + bg * (1 - self.alpha)
            """,
            note="never traced",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Nms(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.num_classes = 80
                def forward(self, x):
                    score = x[:, :, 5:]
                    self.num_classes = int(score.shape[2])
                    return score * self.num_classes
            traced = torch.jit.trace(Nms(), (torch.rand(1, 4, 85),))
            """,
            note="forward sets the attribute from no old value before reading it: each call reads its own",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Blend(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("alpha", torch.tensor(0.5))
                def set_alpha(self, a):
                    self.alpha.fill_(a)
                def forward(self, fg, bg):
                    return fg * self.alpha + bg * (1 - self.alpha)
            traced = torch.jit.trace(Blend(), (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)))
            """,
            note="a buffer is traced as a tensor, not baked",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Blend(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.alpha = 0.5
                def forward(self, fg, bg):
                    return fg * self.alpha + bg * (1 - self.alpha)
            model = Blend()
            model.alpha = 0.3
            traced = torch.jit.trace(model, (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)))
            out = traced(torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8))
            """,
            note="changed before tracing: the trace has the new value",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Blend(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.alpha = 0.5
                def forward(self, fg, bg):
                    return fg * self.alpha + bg * (1 - self.alpha)
            model = Blend()
            traced = torch.jit.trace(model, (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)))
            traced.save("blend.pt")
            model.alpha = 0.3
            preview = model(torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8))
            """,
            note="traced for export, then the eager module is used with the new value",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Stack(nn.Module):
                def __init__(self, n: int):
                    super().__init__()
                    self._build(n)
                def _build(self, n):
                    self.n = n
                    self.blocks = nn.ModuleList(nn.Conv2d(3, 3, 3, padding=1) for _ in range(n))
                def forward(self, x):
                    for i in range(self.n):
                        x = self.blocks[i](x)
                    return x
            traced = torch.jit.trace(Stack(3), torch.rand(1, 3, 8, 8))
            """,
            note="a helper only __init__ calls is part of construction",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Generator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.onnx = False
                def OnnxExport(self):
                    self.onnx = True
                def forward(self, x):
                    if not self.onnx:
                        x = x * 2
                    return x
            def export(path):
                model = Generator().eval()
                model.OnnxExport()
                torch.onnx.export(model, (torch.rand(1, 3, 8, 8),), path)
            """,
            note="so-vits-svc (bench/dev4): a method picks the deployed branch before an ONNX export, "
                 "which writes the file then: no trace is left to go stale",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Detector(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.exporting = False
                def forward(self, x):
                    if self.exporting:
                        return x.sigmoid()
                    return x
                def export(self, path):
                    self.exporting = True
                    torch.onnx.export(self, (torch.rand(1, 3, 8, 8),), path)
                    self.exporting = False
            """,
            note="retinanet-examples (bench/dev21): the flag set for an ONNX export and reset after it; "
                 "the file has the export branch, as meant",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Attention(nn.Module):
                def __init__(self, deploy: bool = False):
                    super().__init__()
                    self.grid_exists = False
                    self.deploy = deploy
                def forward(self, x):
                    if self.deploy:
                        return x + 1
                    else:
                        self.grid_exists = False
                    if not self.grid_exists:
                        self.grid_exists = True
                        x = x * 2
                    return x
            traced = torch.jit.trace(Attention().eval(), torch.rand(1, 4, 8))
            """,
            note="FasterViT (bench/dev6): every path that reaches the read set the flag first "
                 "(the other returns): each call reads what it wrote",
        ),
        Case(
            """\
            import warnings
            import torch
            from torch import nn
            class Pool(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.dim_size = 0
                def warm_up(self, n):
                    self.dim_size = n
                def forward(self, x):
                    assert self.dim_size >= 0, f"bad size {self.dim_size}"
                    warnings.warn("batch locked to {}".format(self.dim_size))
                    return x * 2
            traced = torch.jit.trace(Pool(), torch.rand(2))
            """,
            note="torchmd-net (bench/dev8): an assert and a warning record nothing in the trace",
        ),
    ]
    invalid = [
        Case(
            """\
            import torch
            from torch import nn
            class Decoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.steps = 4
                def set_steps(self, n):
                    self.steps = n
                def forward(self, x):
                    if not self.training:
                        for _ in range(self.steps):
                            x = x * 0.5
                    return x
            traced = torch.jit.trace(Decoder().eval(), torch.rand(2))
            """,
            at=[(11, 28)],
            note="the inference branch of a training test is what a trace for inference records",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Blend(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.alpha = 0.5
                def forward(self, fg, bg):
                    return fg * self.alpha + bg * (1 - self.alpha)
            def build(example):
                model = Blend()
                traced = torch.jit.trace(model, example)
                model.alpha = 0.3
                return traced
            """,
            at=[(12, 5)], note="the trace is returned: its callers get alpha 0.5",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Blend(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.alpha = 0.5
                def forward(self, fg, bg):
                    return fg * self.alpha + bg * (1 - self.alpha)
            model = Blend()
            traced = torch.jit.trace(model, (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)))
            model.alpha = 0.3
            traced.save("blend.pt")
            """,
            at=[(11, 1)], note="saved after the change: the file has alpha 0.5",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Blend(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.alpha = 0.5
                def forward(self, fg, bg):
                    return fg * self.alpha + bg * (1 - self.alpha)
            model = Blend()
            traced = torch.jit.trace(model, (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)))
            model.alpha = 0.3
            def composite(fg, bg):
                return traced(fg, bg)
            """,
            at=[(11, 1)], note="a module global that a function calls later",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Blend(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.alpha = 0.5
                def forward(self, fg, bg):
                    return fg * self.alpha + bg * (1 - self.alpha)
            class Renderer:
                def setup(self, example):
                    model = Blend()
                    traced = torch.jit.trace(model, example)
                    self.blend = traced
                    model.alpha = 0.3
            """,
            at=[(14, 9)], note="stored on self, then the attribute changes",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Blend(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.alpha = 0.5
                def set_alpha(self, a):
                    self.alpha = a
                def forward(self, fg, bg):
                    return fg * self.alpha + bg * (1 - self.alpha)
            traced = torch.jit.trace(Blend(), (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)))
            """,
            at=[(10, 21)],
        ),
        Case(
            """\
            import torch.fx as fx
            import torch.nn as nn
            class Pipeline(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.stages = nn.ModuleList([nn.Conv2d(3, 3, 1), nn.ReLU(), nn.Conv2d(3, 3, 1)])
                    self.order = [0, 1, 2]
                def reverse(self):
                    self.order.reverse()
                def forward(self, x):
                    for i in self.order:
                        x = self.stages[i](x)
                    return x
            gm = fx.symbolic_trace(Pipeline())
            """,
            at=[(11, 18)],
            note="a list mutated in place, fx",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Blend(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.alpha = 0.5
                def forward(self, fg, bg):
                    return fg * self.alpha + bg * (1 - self.alpha)
            model = Blend().eval()
            fg, bg = torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)
            traced = torch.jit.trace(model, (fg, bg))
            for a in (0.2, 0.4, 0.8):
                model.alpha = a
                out = traced(fg, bg)
            """,
            at=[(13, 5)],
            note="changed after tracing, traced module called after",
        ),
        Case(
            """\
            import torch
            from pkg.blocks import Grade
            def run(images):
                grade = Grade()
                exported = torch.jit.trace(grade, images[0])
                grade.gamma = 2.4
                return [exported(img) for img in images]
            """,
            files={
                "pkg/__init__.py": "",
                "pkg/blocks.py": (
                    "import torch.nn as nn\n"
                    "class Grade(nn.Module):\n"
                    "    def __init__(self):\n"
                    "        super().__init__()\n"
                    "        self.gamma = 2.2\n"
                    "    def forward(self, x):\n"
                    "        return x.clamp(0, 1) ** (1 / self.gamma)\n"
                ),
            },
            path="pkg/run.py",
            at=[(6, 5)],
            note="cross-file: the class in blocks.py, traced and changed in run.py",
        ),
        Case(
            """\
            import torch.nn as nn
            class Denoise(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.calls = 0
                    self.conv = nn.Conv2d(3, 3, 3, padding=1)
                def forward(self, x):
                    self.calls = self.calls + 1
                    return self.conv(x) if self.calls > 1 else x
            """,
            files={
                "pkg/__init__.py": "",
                "pkg/export.py": (
                    "import torch\n"
                    "from .blocks import Denoise\n"
                    "ep = torch.export.export(Denoise(), (torch.rand(1, 3, 8, 8),))\n"
                ),
            },
            path="pkg/blocks.py",
            at=[(8, 22)],
            note="cross-file: forward changes its own counter; exported from export.py",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Generator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.onnx = False
                def OnnxExport(self):
                    self.onnx = True
                def forward(self, x):
                    if not self.onnx:
                        x = x * 2
                    return x
            model = Generator().eval()
            torch.onnx.export(model, (torch.rand(1, 3, 8, 8),), "gen.onnx")
            traced = torch.jit.trace(model, (torch.rand(1, 3, 8, 8),))
            """,
            at=[(10, 16)],
            note="an ONNX export and a jit trace of one class: the trace lives on",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Denoise(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.calls = 0
                def forward(self, x):
                    self.calls = self.calls + 1
                    return x * 2 if self.calls > 1 else x
            torch.onnx.export(Denoise().eval(), (torch.rand(1, 3, 8, 8),), "denoise.onnx")
            """,
            at=[(8, 22)],
            note="forward changes its own counter: the ONNX file keeps the first call's branch",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Attention(nn.Module):
                def __init__(self, deploy: bool = False):
                    super().__init__()
                    self.grid_exists = False
                    self.deploy = deploy
                def forward(self, x):
                    if not self.deploy:
                        self.grid_exists = False
                    if not self.grid_exists:
                        self.grid_exists = True
                        x = x * 2
                    return x
            traced = torch.jit.trace(Attention().eval(), torch.rand(1, 4, 8))
            """,
            at=[(11, 16)],
            note="the deploy path reaches the read without setting the flag: it reads what the "
                 "last eager call left",
        ),
    ]

    # statement-local: a class's reads and writes are in the class (its bases reached
    # by name); an instance change is in the scope that traces it, its class reached by
    # name; only a module-level trace scans the functions for readers of its result
    # (`escapes`), and the module-level statements are always relinted
    local = True

    def check(self, facts):
        if facts.has_region("traced"):
            yield from self._class_side(facts)
        data = facts.source.data
        if b"trace" in data or b"export" in data:
            yield from self._instance_side(facts)

    # `self.x` read in traced code, changed in a method
    def _class_side(self, facts):
        done: set[tuple[int, str]] = set()
        for read in changed_reads(facts, "traced", KINDS):
            if read.augmented or (id(read.cls), read.attr) in done or _set_first(read) or _in_a_check_or_message(facts, read.node):
                continue
            if _exported_to_file_only(read.region) and not any(facts.in_region(w.node, "traced") for w in read.writes):
                continue
            done.add((id(read.cls), read.attr))
            write = read.write
            yield self.finding(
                facts, read.node,
                f"traced `{read.cls.name}.{read.method}` reads `{facts.text(read.node)}`, which `{write.where}` changes: "
                "the trace keeps the old value",
                region=labelled(read.region, "traced"),
                related=[Related(facts.path, write.node.lineno, write.node.col_offset + 1, f"{write.how} here")],
            )

    # `model.x = ...` after `traced = torch.jit.trace(model, ...)`, then `traced(...)` or the trace leaves the scope
    def _instance_side(self, facts):
        for change in instance_changes(facts, "traced"):
            wrap, node = change.wrap, change.node
            if change.cls is not None:
                if change.kind not in KINDS or change.attr not in read_in_region(facts, change.cls, "traced"):
                    continue
            elif change.kind not in KINDS and not (change.kind is None and maybe_python_value(facts, node)):
                continue
            later = [c for c in change.calls if c.lineno > wrap.call.lineno]
            call = next((c for c in later if c.lineno > node.lineno or any(c in walk(l) for l in change.loops)), None)
            escape = next((e for e in escapes(facts, change.owner, change.body, wrap.result, wrap.call.lineno)
                           if e[0] is None or e[0] > node.lineno), None)
            if call is None and escape is None:
                continue
            site = site_of_kind(change.region, "traced")
            api = site.api if site is not None and site.api.startswith("torch.") else "the tracer"
            yield self.finding(
                facts, node,
                f"`{wrap.instance}.{change.attr}` is {change.how} after `{api}` traced `{wrap.instance}`: "
                f"`{wrap.result}` keeps the old value" + (f"; it {escape[1]}" if call is None else ""),
                region=labelled(change.region, "traced"),
                related=[Related(facts.path, call.lineno, call.col_offset + 1, f"`{wrap.result}` is called here")] if call else [],
            )


# calls whose arguments only become text: a value read for them is in no graph
MESSAGE_CALLS = frozenset({"builtins.print", "warnings.warn"})


def _in_a_check_or_message(facts, node: ast.AST) -> bool:
    """The read is in an `assert`, or an argument of `print` / `warnings.warn` /
    `logging.*`: a tracer records no operation for either, so a stale value leaves
    nothing in the graph (torchmd-net's `assert self.dim_size > 0` and the warning that
    follows it, before a CUDA-graph capture)."""
    for anc in facts.ancestors(node):
        if isinstance(anc, ast.Assert):
            return True
        if isinstance(anc, ast.Call) and node is not anc.func:
            name = facts.resolve(anc.func)
            if name is not None and (name in MESSAGE_CALLS or name.startswith("logging.")):
                return True
        if isinstance(anc, (ast.stmt, ast.Lambda)):
            return False  # the statement around the read is no check
    return False


def _exported_to_file_only(region) -> bool:
    """Every trace that reaches the region is an ONNX export: it writes its graph to a
    file when it runs and leaves nothing that runs the model later, so a change another
    method makes (`merge_bn()`, `OnnxExport()` called before the export to pick the
    deployed branch; the same flag reset after it) cannot make a trace stale. A change
    the traced code makes itself (`self.calls += 1` in `forward`) is still frozen in the
    file: the caller keeps those."""
    return every_trace(region, lambda site: site.api in FILE_EXPORTERS)


def _set_first(read) -> bool:
    """The method sets `self.<attr>` in its own body, on every path to the read and from
    no old value of it (`self.numClasses = int(score.shape[2])` then a call that passes
    `self.numClasses`; FasterViT's `if self.deploy: return ...` / `else: self.grid_exists
    = False` before `if not self.grid_exists:`): the read sees what this call wrote, not
    state left by an earlier one (YOLOv6's ONNX_TRT7 on dev set 2; whether the written
    value is a traced size is CL101's question)."""
    method = read.method_node
    me = method.args.args[0].arg if method.args.args else None
    row = read.node.lineno
    for stmt in method.body:
        if stmt.end_lineno >= row:
            return False
        if _sets_fresh(stmt, read.attr, me):
            return True
    return False


def _sets_fresh(stmt: ast.stmt, attr: str, me) -> bool:
    """`stmt` assigns `me.<attr>` from no old value of it on every path that goes on
    past it (an `if` whose branches each assign it or return or raise)."""
    if isinstance(stmt, ast.Assign):
        return any(self_attr(t, me) == attr for t in stmt.targets) and not any(
            self_attr(n, me) == attr for n in walk(stmt.value)
        )
    if isinstance(stmt, ast.If):
        return _block_sets_fresh(stmt.body, attr, me) and _block_sets_fresh(stmt.orelse, attr, me)
    return False


def _block_sets_fresh(body: list, attr: str, me) -> bool:
    for stmt in body:
        if isinstance(stmt, (ast.Return, ast.Raise)) or _sets_fresh(stmt, attr, me):
            return True
    return False

