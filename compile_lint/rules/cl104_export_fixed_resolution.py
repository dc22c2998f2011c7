from __future__ import annotations

import ast
import os
from typing import Optional

from ..analysis.classes import labelled, methods
from ..analysis.project import path_for_module
from ..analysis.torch_api import EXPORTERS
from ..analysis.walk import walk as _walk
from ..analysis.walk import walk_scope as _walk_scope
from ..analysis.shapes import is_shape_value, shape_names, sink_of
from ..analysis.region_queries import stmt_text
from .base import Case, Related, Rule
from ..analysis.facts import RegionsFact

# export function -> (position of the example args, keywords that make it dynamic)
_EXPORTS = {api: how for api, how in EXPORTERS.items() if how[1] is not None}
# `transform(img).unsqueeze(0)`: an image made into a batch of one (4-D) by the code
_IMAGE_WORDS = ("transform", "to_tensor", "totensor", "preprocess", "img", "image", "frame", "photo")
_RESIZE = frozenset(
    {
        "torch.nn.functional.interpolate", "torch.nn.functional.upsample", "torch.nn.functional.upsample_nearest",
        "torch.nn.functional.upsample_bilinear", "torch.nn.Upsample", "torch.nn.UpsamplingNearest2d",
        "torch.nn.UpsamplingBilinear2d", "torch.nn.modules.upsampling.Upsample",
    }
)
_FACTORIES = frozenset({"torch.rand", "torch.randn", "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.randint"})
_TENSOR_CHAIN = frozenset({"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "contiguous", "requires_grad_"})


def _assigned_value(facts, name: ast.Name) -> Optional[ast.AST]:
    """The value a name was last given before `name`, in its function or at module level."""
    scope = facts.enclosing_function(name)
    body = scope.body if scope is not None and not isinstance(scope, ast.Lambda) else facts.tree.body
    found = None
    for node in _walk_scope(body):
        if isinstance(node, ast.Assign) and node.lineno < name.lineno:
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name.id:
                    found = node.value
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    for t, v in zip(target.elts, node.value.elts):
                        if isinstance(t, ast.Name) and t.id == name.id:
                            found = v
    return found


def example_dims(facts, expr, _depth: int = 0) -> Optional[list[ast.AST]]:
    """The size arguments of the first example input, when it is built by a torch
    factory in view (`torch.randn(1, 3, 64, 64)`, `(x,)`, a name bound to either)."""
    if expr is None or _depth > 4:
        return None
    if isinstance(expr, ast.Name):
        return example_dims(facts, _assigned_value(facts, expr), _depth + 1)
    if isinstance(expr, (ast.Tuple, ast.List)) and expr.elts:
        return example_dims(facts, expr.elts[0], _depth + 1)
    while (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in _TENSOR_CHAIN
        and facts.resolve(expr.func) is None
    ):
        expr = expr.func.value
    if _batched_image(facts, expr):
        return [ast.Constant(value=None)] * 4
    if isinstance(expr, ast.Call) and facts.resolve(expr.func) in _FACTORIES:
        args = list(expr.args)
        if facts.resolve(expr.func) == "torch.randint":
            args = args[2:] if len(args) >= 3 else args[1:]
        for kw in expr.keywords:
            if kw.arg == "size":
                args = [kw.value]
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = list(args[0].elts)
        if any(isinstance(a, ast.Starred) for a in args):
            return None
        return args
    return None


def _batched_image(facts, expr) -> bool:
    """`transform(img).unsqueeze(0)`, `to_tensor(image)[None]`: one image made a batch."""
    inner = None
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in ("unsqueeze", "unsqueeze_"):
        if expr.args and isinstance(expr.args[0], ast.Constant) and expr.args[0].value == 0:
            inner = expr.func.value
    elif isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and expr.slice.value is None:
        inner = expr.value
    if inner is None:
        return False
    if isinstance(inner, ast.Name):
        value = _assigned_value(facts, inner)
        inner = value if value is not None else inner
    text = facts.text(inner).lower()
    return any(word in text for word in _IMAGE_WORDS)


class ExportFixedResolution(Rule):
    """
    ## What it does
    Finds `torch.export.export(...)`, `torch.onnx.export(...)` and `torch.onnx._export(...)` of an image model
    (one that resizes: `F.interpolate`, `nn.Upsample`, or sizes computed from the
    input's shape) with a 4-D example input and no `dynamic_shapes` /
    `dynamic_axes`. The model's code is followed from the export call through
    `forward`, its submodules and the functions it calls in the same file.

    ## Why is this bad?
    Without dynamic shapes, an export specializes every dimension to the example:
    the exported program (or ONNX graph) works at that one resolution only. A
    second resolution fails with `Guard failed: x.size()[2] == 16`, or, in a
    runtime that does not check, computes resize targets for the wrong size. Image
    models are run at many resolutions; real cases: fast_neural_style's ONNX export,
    Real-ESRGAN's pytorch2onnx at 64x64.

    ## Example
    ```python
    model = SuperResolution().eval()
    example = torch.randn(1, 3, 64, 64)
    ep = torch.export.export(model, (example,))
    ```

    ## Use instead
    ```python
    from torch.export import Dim
    ep = torch.export.export(model, (example,), dynamic_shapes=({2: Dim.AUTO, 3: Dim.AUTO},))
    # ONNX: torch.onnx.export(model, (example,), "m.onnx", input_names=["image"],
    #                         dynamic_axes={"image": {2: "height", 3: "width"}})
    ```

    ## Fix safety
    No fix: the dynamic dimensions, their names and bounds are the author's choice.

    Not reported: exports with `dynamic_shapes` or `dynamic_axes`, example inputs that
    are not 4-D (or not built in view), models that do not resize (a classifier
    exported at its one input size). The model's code is followed into other files of
    the project; example inputs count when built by a torch factory
    (`torch.rand(1, 3, h, w)`) or made from one image (`transform(img).unsqueeze(0)`).

    ## References
    - `scripts/measure/cl104_static_export.py` (torch 2.13 CPU): a static export of a 2x
      upscaler at 16x16 run at 24x32 fails with `Guard failed: x.size()[2] == 16`; with
      `Dim.AUTO` on H/W it runs. `fixtures/rules/CL104/` shows the shapes
    - https://pytorch.org/docs/stable/export.html (dynamic shapes, `Dim.AUTO`)
    - https://pytorch.org/docs/stable/onnx_torchscript.html (`dynamic_axes`)
    """

    needs = (RegionsFact,)
    code = "CL104"
    name = "export-fixed-resolution"
    summary = "Static export of an image model that resizes: other resolutions fail"
    fix_safety = "none"
    requires = (b"export",)

    valid = [
        Case(
            """\
            import torch
            from model import Classifier

            net = Classifier().eval()
            image = preprocess(img).unsqueeze(0)
            torch.onnx.export(net, image, "c.onnx")
            """,
            files={
                "model.py": (
                    "import torch.nn as nn\n"
                    "class Classifier(nn.Module):\n"
                    "    def __init__(self):\n"
                    "        super().__init__()\n"
                    "        self.fc = nn.Linear(3 * 224 * 224, 10)\n"
                    "    def forward(self, x):\n"
                    "        return self.fc(x.flatten(1))\n"
                ),
            },
            path="export.py",
            note="the model in another file does not resize",
        ),
        Case(
            """\
            import torch
            from torch import nn
            import torch.nn.functional as F
            from torch.export import Dim
            class SR(nn.Module):
                def forward(self, x):
                    return F.interpolate(x, scale_factor=2, mode="bicubic")
            ep = torch.export.export(SR(), (torch.randn(1, 3, 64, 64),), dynamic_shapes=({2: Dim.AUTO, 3: Dim.AUTO},))
            """,
            note="dynamic_shapes given",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class SR(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.up = nn.Upsample(scale_factor=2, mode="bilinear")
                def forward(self, x):
                    return self.up(x)
            dummy = torch.randn(1, 3, 256, 256)
            torch.onnx.export(SR(), dummy, "sr.onnx", input_names=["image"], dynamic_axes={"image": {2: "h", 3: "w"}})
            """,
            note="dynamic_axes given",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Classifier(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 8, 3)
                    self.fc = nn.Linear(8, 10)
                def forward(self, x):
                    return self.fc(self.conv(x).mean((2, 3)))
            ep = torch.export.export(Classifier(), (torch.randn(1, 3, 224, 224),))
            """,
            note="no resizing: a fixed input size is the contract",
        ),
        Case(
            """\
            import torch
            from torch import nn
            import torch.nn.functional as F
            class Tokens(nn.Module):
                def forward(self, x):
                    return F.interpolate(x, scale_factor=2)
            ep = torch.export.export(Tokens(), (torch.randn(1, 16, 64),))
            """,
            note="3-D example: not an image",
        ),
    ]
    invalid = [
        Case(
            """\
            import torch
            from PIL import Image
            from torchvision import transforms
            from nets.style import TransformerNet

            def export(path, content):
                model = TransformerNet()
                content_transform = transforms.Compose([transforms.ToTensor()])
                image = content_transform(Image.open(content)).unsqueeze(0)
                torch.onnx._export(model, image, path, opset_version=11)
            """,
            files={
                "nets/__init__.py": "",
                "nets/style.py": (
                    "import torch.nn as nn\n"
                    "class TransformerNet(nn.Module):\n"
                    "    def __init__(self):\n"
                    "        super().__init__()\n"
                    "        self.up = nn.Upsample(scale_factor=2, mode='nearest')\n"
                    "    def forward(self, x):\n"
                    "        return self.up(x)\n"
                ),
            },
            path="export.py",
            at=[(10, 5)], note="model class in another file, torch.onnx._export, an image made a batch",
        ),
        Case(
            """\
            import torch
            from model import Upscaler

            h, w = 480, 640
            net = Upscaler().eval()
            torch.export.export(net, (torch.rand(1, 3, h, w),))
            """,
            files={
                "model.py": (
                    "import torch.nn as nn\nimport torch.nn.functional as F\n"
                    "class Upscaler(nn.Module):\n"
                    "    def forward(self, x):\n"
                    "        return F.interpolate(x, size=(x.shape[-2] * 2, x.shape[-1] * 2))\n"
                ),
            },
            path="export.py",
            at=[(6, 1)], note="sizes from names; the model in another file",
        ),
        Case(
            """\
            import torch
            import torch.nn as nn
            import torch.nn.functional as F
            class SR(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 3, 3, padding=1)
                def forward(self, x):
                    return self.conv(F.interpolate(x, scale_factor=4, mode="bicubic"))
            model = SR().eval()
            example = torch.randn(1, 3, 64, 64)
            ep = torch.export.export(model, (example,))
            """,
            at=[(12, 6)],
        ),
        Case(
            """\
            import torch
            from torch import nn
            class TransformerNet(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.up = nn.Upsample(scale_factor=2, mode="nearest")
                    self.conv = nn.Conv2d(3, 3, 3, padding=1)
                def forward(self, x):
                    return self.conv(self.up(x))
            def export_onnx(path):
                net = TransformerNet()
                dummy = torch.randn(1, 3, 256, 256).cuda()
                torch.onnx.export(net, dummy, path, opset_version=17, input_names=["input"])
            """,
            at=[(13, 5)],
            note="fast_neural_style-like ONNX export; Upsample built in __init__",
        ),
        Case(
            """\
            import torch
            from torch import nn
            def pad_to_multiple(x, m=8):
                h, w = x.shape[-2:]
                return x.new_zeros(x.shape[0], x.shape[1], (h + m - 1) // m * m, (w + m - 1) // m * m)
            class Restorer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Conv2d(3, 3, 3, padding=1)
                def forward(self, x):
                    return self.body(pad_to_multiple(x))
            ep = torch.export.export(Restorer(), args=(torch.rand((1, 3, 120, 200)),))
            """,
            at=[(12, 6)],
            note="sizes computed from the input's shape, in a helper forward calls",
        ),
    ]

    def check(self, facts):
        for call in facts.calls_to(*_EXPORTS):
            api = facts.resolve(call.func)
            pos, dynamic_kws = _EXPORTS[api]
            if any(kw.arg is None for kw in call.keywords):
                continue
            if any(kw.arg in dynamic_kws and not (isinstance(kw.value, ast.Constant) and kw.value.value is None) for kw in call.keywords):
                continue
            example = next((kw.value for kw in call.keywords if kw.arg == "args"), None)
            if example is None and len(call.args) > pos:
                example = call.args[pos]
            dims = example_dims(facts, example)
            if dims is None or len(dims) != 4 or not call.args:
                continue
            found = self._resizes(facts, call)
            if found is None:
                continue
            node, region, node_facts = found
            hw = ""
            if all(isinstance(d, ast.Constant) and isinstance(d.value, int) for d in dims[2:]):
                hw = f" {dims[2].value}x{dims[3].value}"
            message = (
                f"`{facts.text(call.func)}` exports `{stmt_text(facts, call.args[0], 30)}` at a fixed{hw or ' size'} "
                "without dynamic shapes, but the model resizes by its input"
            )
            kw = {"region": labelled(region, "traced")} if region is not None else {}
            resize = Related(node_facts.path, node.lineno, node.col_offset + 1, f"resizes by the input: `{stmt_text(node_facts, node, 50)}`")
            yield self.finding(facts, call, message, related=[resize], **kw)

    def _resizes(self, facts, call):
        """A node of the exported model, in this file, that resizes by the input."""
        row = call.lineno
        for func in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            region = facts.in_region(func, "traced")
            if region is None or not any(s.row == row and s.path == facts.path for s in region.sites):
                continue
            node = self._resize_in(facts, func)
            if node is None and func.name in ("forward", "__call__"):
                cls = facts.parent(func)
                if isinstance(cls, ast.ClassDef):
                    for method in methods(cls).values():
                        node = node or self._module_resize_in(facts, method)
            if node is not None:
                return node, region, facts
        found = self._resizes_elsewhere(facts, call)
        if found is not None:
            return found
        # a built-in container: `head = nn.Sequential(..., nn.Upsample(...))` exported in the same scope
        target = call.args[0]
        if isinstance(target, ast.Name):
            value = _assigned_value(facts, target)
            if value is not None:
                for sub in _walk(value):
                    if isinstance(sub, ast.Call) and facts.resolve(sub.func) in _RESIZE:
                        return sub, None, facts
        return None

    def _resizes_elsewhere(self, facts, call):
        """The same, for a model whose code is in another file of the project."""
        here = os.path.abspath(facts.path)
        for dotted, region in facts.get(RegionsFact).everything().items():
            if "traced" not in region.kinds or not any(
                s.row == call.lineno and os.path.abspath(s.path) == here for s in region.sites
            ):
                continue
            parts = dotted.split(".")
            for cut in range(len(parts) - 1, 0, -1):
                path = path_for_module(facts, ".".join(parts[:cut]))
                other = facts.project.facts_for_path(facts, path) if path else None
                if other is None or other is facts:
                    continue
                qualname = ".".join(parts[cut:])
                for func in other.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
                    if other.qualname_of(func) != qualname:
                        continue
                    node = self._resize_in(other, func)
                    if node is None and func.name in ("forward", "__call__"):
                        cls = other.parent(func)
                        if isinstance(cls, ast.ClassDef):
                            for method in methods(cls).values():
                                node = node or self._module_resize_in(other, method)
                    if node is not None:
                        return node, region, other
                break
        return None

    @staticmethod
    def _module_resize_in(facts, func):
        for node in _walk(func):
            if isinstance(node, ast.Call) and facts.resolve(node.func) in _RESIZE:
                return node
        return None

    @staticmethod
    def _resize_in(facts, func):
        names = shape_names(facts, func)
        for node in _walk(func):
            if isinstance(node, ast.Call) and facts.resolve(node.func) in _RESIZE:
                return node
        for node in _walk(func):
            if isinstance(node, (ast.Subscript, ast.Attribute, ast.Call, ast.Name)) and is_shape_value(facts, node, names):
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    continue
                parent = facts.parent(node)
                if _batch_or_channel(node) or (isinstance(parent, ast.Subscript) and parent.value is node):
                    continue
                if sink_of(facts, node, func) is not None:
                    return node
        return None


def _batch_or_channel(node) -> bool:
    """`x.shape[0]`, `x.size(1)`: batch and channel counts, not the resolution."""
    index = None
    if isinstance(node, ast.Subscript):
        index = node.slice
    elif isinstance(node, ast.Call) and node.args:
        index = node.args[0]
    return isinstance(index, ast.Constant) and index.value in (0, 1)
