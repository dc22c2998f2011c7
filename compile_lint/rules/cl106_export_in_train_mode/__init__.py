from __future__ import annotations

import ast
from typing import Optional

from ...analysis.semantic.bindings import BindingsFact, bindings_for
from .module_modes import built_in_train_mode, mode_layer, untouched
from ...analysis.project.calls import ProjectFilesFact, arguments_of
from ...model import Related
from ..base import Case, Rule

# exporter or tracer -> position of the module argument
CAPTURES = {"torch.export.export": 0, "torch.jit.trace": 0, "torch.jit.trace_module": 0, "torch.onnx.export": 0,
            "torch.onnx.utils.export": 0}


class ExportInTrainMode(Rule):
    """
    ## What it does
    Finds `torch.export.export`, `torch.jit.trace`, `torch.jit.trace_module` and
    `torch.onnx.export` of a module that is still in train mode: built right there
    or bound in the same scope to a constructor (a class, or a torchvision model
    builder), never switched with `.eval()` / `.train(False)` and not handed to other
    code on the way, and holding a layer that behaves differently in train mode
    (`nn.Dropout` with a rate that is not 0, `nn.BatchNorm*`, `nn.RReLU`,
    `F.dropout`/`F.batch_norm` with `training=self.training`, a read of
    `self.training`), followed through project classes in any file, containers and
    the children of another module. The module may come in through a parameter of a
    project function: the callers' arguments are looked at. A model from a loader or
    factory function is not reported (it may be put in eval mode inside), nor
    `torch.onnx.export(..., dynamo=False)` or with `training=`, where the exporter
    sets the mode itself. A child the class's own `__init__` puts in eval mode after
    building it (`self.flownet.eval()`, `self.norm.train(False)`; `self.eval()` for the
    whole module) is no longer in train mode when the fresh module is exported, and a
    module built only to keep one of its attributes (`self.model = Model(args,
    ckp).model`) is not part of the class that keeps it. In `bench/fresh_reads/` batch 46
    both were reported and judged false: GMFupSS-TensorRT's frame interpolator evaluates
    its three networks in `__init__`, and EDSR-PyTorch's ONNX wrapper keeps the EDSR that
    its training `Model` holds (2 exports). Those 3 findings went and no other moved among
    the 9 that `bench/fresh_reads/` and `bench/apps/` give (256 app folders, 7 with a finding;
    the two changes only remove a layer, so no other folder can move).

    ## Why is this bad?
    A module is in train mode from its constructor until `.eval()`, and exporting or
    tracing records the mode it runs in. Measured on torch 2.13 CPU
    (`scripts/measure/export_train_mode.py`, output in
    `scripts/measure/out/export_train_mode.txt`): BatchNorm + Dropout exported by
    `torch.export.export` without `.eval()` differs from eager eval by 2.06 (half the
    outputs zeroed, batch statistics instead of running ones, the running statistics
    updated on every call), and `ep.module().eval()` raises NotImplementedError
    "Calling eval() is not supported yet."; traced with `torch.jit.trace` it differs
    by 2.08, and `traced.eval()` afterwards does not help (2.12). With `.eval()`
    first, both give 0. torch 2.13-2.15's ONNX exporter warns "Exporting a model
    while it is in training mode" and exports it so (read in
    `torch/onnx/_internal/exporter/_compat.py`). For a BatchNorm model traced with a
    batch of one, train mode normalises each output by its own statistics.

    On real code (`bench/judged/`: corpus L and the 24 apps, each run alone): 2
    findings, 2 true: Swift-SRGAN's `optimize-graph.py` traces its Generator (BatchNorm
    in every block) through a helper after loading the weights, and pytorch/examples'
    `cpp/transfer-learning/convert.py` traces the children of a torchvision ResNet-18
    never put in eval mode. The other export and trace calls there call `.eval()`
    first, take a model from a loader, or export a wrapper without such layers.

    ## Example
    ```python
    model = Generator()
    model.load_state_dict(torch.load(ckpt))
    traced = torch.jit.trace(model, torch.rand(1, 3, 96, 96))
    ```

    ## Use instead
    ```python
    model = Generator()
    model.load_state_dict(torch.load(ckpt))
    model.eval()
    traced = torch.jit.trace(model, torch.rand(1, 3, 96, 96))
    ```

    ## Fix safety
    No fix: exporting for training (`torch.export.export_for_training`, or a
    deliberate train-mode trace) exists; `.eval()` is the usual answer, and the page
    says so.

    ## References
    - `scripts/measure/export_train_mode.py`, `scripts/measure/out/export_train_mode.txt`
    - `torch/export/exported_program.py` (`module()` replaces `train`/`eval` with
      NotImplementedError); pytorch#151726, pytorch#103681
    - `docs/hazards-measured.md`
    """

    code = "CL106"
    name = "export-in-train-mode"
    summary = "Exported or traced module is still in train mode: dropout and batch statistics are baked in"
    requires = (b"export", b"trace")
    needs = (BindingsFact, ProjectFilesFact)
    verify_target = False  # nothing an eager-vs-compiled run of the function shows

    valid = [
        Case("import torch\nfrom torch import nn\nm = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8)).eval()\n"
             "ep = torch.export.export(m, (x,))\n"),
        Case("import torch\nfrom torch import nn\nm = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))\nm.eval()\n"
             "ep = torch.export.export(m, (x,))\n"),
        Case("import torch\nfrom torch import nn\nm = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU())\n"
             "ep = torch.export.export(m, (x,))\n", note="no layer depends on the mode"),
        Case("import torch\nfrom torch import nn\nm = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.0))\n"
             "t = torch.jit.trace(m, x)\n", note="a zero dropout rate is the identity"),
        Case("import torch\nmodel = load_model(path)\nep = torch.export.export(model, (x,))\n", note="a loader may call eval()"),
        Case("import torch\nfrom torch import nn\nm = nn.Sequential(nn.BatchNorm2d(8))\nprepare(m)\n"
             "ep = torch.export.export(m, (x,))\n", note="handed to other code first"),
        Case("import torch\nfrom torch import nn\nm = nn.Sequential(nn.BatchNorm2d(8))\n"
             "torch.onnx.export(m, x, 'm.onnx', dynamo=False)\n", note="the TorchScript exporter exports in eval mode"),
        Case("import torch\nfrom torch import nn\nm = nn.Sequential(nn.BatchNorm2d(8))\nm.train(False)\n"
             "t = torch.jit.trace(m, x)\n"),
        Case(
            "import torch\nfrom torch import nn\nclass Flow(nn.Module):\n    def forward(self, x):\n"
            "        return x if self.training else -x\nclass Model(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.flow = Flow()\n        self.norm = nn.BatchNorm1d(4)\n"
            "        self.flow.eval()\n        self.norm.train(False)\n    def forward(self, x):\n"
            "        return self.norm(self.flow(x))\ntorch.onnx.export(Model(), torch.rand(2, 4), 'm.onnx')\n",
            note="`__init__` puts the children in eval mode (GMFupSS-TensorRT, bench/fresh_reads batch 46)",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Model(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.model = nn.Linear(4, 4)\n    def forward(self, x):\n"
            "        return self.model(x) if self.training else x\nclass Wrapper(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.model = Model().model\n    def forward(self, x):\n"
            "        return self.model(x)\ntorch.onnx.export(Wrapper(), torch.rand(2, 4), 'm.onnx')\n",
            note="only the network `Model` holds is kept, not `Model` (EDSR-PyTorch's wrapper, bench/fresh_reads batch 46)",
        ),
    ]
    invalid = [
        Case(
            "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.norm = nn.BatchNorm1d(4)\n        self.drop = nn.Dropout(0.5)\n    def forward(self, x):\n"
            "        return self.drop(self.norm(x))\nnet = Net()\nnet.load_state_dict(torch.load('w.pt'))\n"
            "ep = torch.export.export(net, (torch.randn(8, 4),))\n",
            at=[(12, 6)],
        ),
        Case(
            "import torch\nimport torchvision\nmodel = torchvision.models.resnet18(weights='DEFAULT')\n"
            "trunk = torch.nn.Sequential(*list(model.children())[:-1])\nts = torch.jit.trace(trunk, torch.rand(1, 3, 224, 224))\n",
            at=[(5, 6)], note="the children of a torchvision model that was never put in eval mode",
        ),
        Case(
            "import torch\ndef trace(model):\n    return torch.jit.trace(model, torch.rand(1, 3, 96, 96))\n",
            files={"export.py": "import torch\nfrom models import Generator\nfrom tracing import trace\n"
                   "g = Generator().to('cuda')\ng.load_state_dict(torch.load('g.pt'))\ntraced = trace(g)\n",
                   "models.py": "from torch import nn\nclass Block(nn.Module):\n    def __init__(self, c, bn=True):\n"
                   "        super().__init__()\n        self.bn = nn.BatchNorm2d(c) if bn else nn.Identity()\n"
                   "class Generator(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                   "        self.blocks = nn.Sequential(*[Block(64) for _ in range(4)])\n"},
            path="tracing.py", at=[(3, 12)], note="a parameter; the caller and the class are in other files",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Model(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.norm = nn.BatchNorm1d(4)\n        self.drop = nn.Dropout(0.5)\n"
            "        self.norm.eval()\n    def forward(self, x):\n        return self.drop(self.norm(x))\n"
            "torch.onnx.export(Model(), torch.rand(2, 4), 'm.onnx')\n",
            at=[(11, 1)], note="`__init__` evaluates the norm, not the dropout",
        ),
    ]

    def check(self, facts):
        for call in facts.nodes(ast.Call):
            dotted = facts.resolve(call.func)
            if dotted not in CAPTURES or not call.args or _exporter_sets_mode(call):
                continue
            found = self._train_mode(facts, call.args[CAPTURES[dotted]], call)
            if found is None:
                continue
            built_facts, built, layer = found
            verb = "traced" if dotted.startswith("torch.jit.") else "exported"
            yield self.finding(
                facts, call,
                f"`{facts.text(call.args[0])}` is {verb} in train mode: its {layer} runs as in training; call `.eval()` first",
                related=[Related(built_facts.path, built.lineno, built.col_offset + 1, "built here, never put in eval mode")],
            )

    def _train_mode(self, facts, module: ast.AST, at: ast.AST, depth: int = 0) -> Optional[tuple]:
        """(facts, constructor, layer) when `module` is built in train mode and holds a
        mode-dependent layer; for a parameter of a module-level def left untouched
        before `at`, the first caller whose argument is."""
        built = built_in_train_mode(facts, module, at)
        if built is not None:
            layer = mode_layer(facts, built)
            return (facts, built, layer) if layer else None
        if depth > 2 or not isinstance(module, ast.Name):
            return None
        reaching = bindings_for(facts).reaching(module)
        if len(reaching) != 1 or reaching[0].kind != "param":
            return None
        func = reaching[0].stmt
        if facts.parent(func) is not facts.tree or not _param_untouched(facts, func, module):
            return None
        for other, arg in arguments_of(facts, func, module.id):
            found = self._train_mode(other, arg, other.statement_of(arg), depth + 1)
            if found is not None:
                return found
        return None


def _exporter_sets_mode(call: ast.Call) -> bool:
    """`torch.onnx.export(..., dynamo=False)` (its TorchScript exporter puts the model in
    eval mode for the export) or any explicit `training=`."""
    for keyword in call.keywords:
        if keyword.arg == "training":
            return True
        if keyword.arg == "dynamo" and isinstance(keyword.value, ast.Constant) and keyword.value.value is False:
            return True
    return False


def _param_untouched(facts, func, name: ast.Name) -> bool:
    """The parameter keeps its mode from the def's first statement to `name`."""
    first = func.body[0]
    return untouched(facts, name.id, func, (first.lineno, first.col_offset), name)
