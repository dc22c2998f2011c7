from __future__ import annotations

import ast

from ...analysis.modules.classes import labelled
from .exports import accepts_one_size, resizing_node, static_exports
from ...analysis.semantic.facts import RegionsFact
from ...analysis.reach.queries import stmt_text
from ..base import Case, Related, Rule


class ExportFixedResolution(Rule):
    """
    ## What it does
    Off by default (most static exports are at the one size the project runs): select it
    with `--extend-select CL104` or `extend-select = ["CL104"]` when your exported model
    is meant to run at more than one resolution.

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
    models are run at many resolutions; real case: fast_neural_style's ONNX export
    (`torch.onnx._export` at the content image's size, later fed other sizes).

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
    exported at its one input size), models whose code is in another package (the
    rule must see the resize: Real-ESRGAN's `scripts/pytorch2onnx.py` exports basicsr's
    RRDBNet at 64x64 and is not reported). The model's code is followed into other
    files of the project (`compile_lint/rules/cl104_export_fixed_resolution/exports.py`); example inputs count
    when built by a torch factory (`torch.rand(1, 3, h, w)`) or made from one image
    (`transform(img).unsqueeze(0)`).

    Judged on the applications of `bench/apps/` (`bench/judged/verdicts.jsonl`):
    fast_neural_style's export at the content image's size is true. A placeholder of
    the network's own size (MiDaS `tf/make_onnx_model.py`, `np.zeros((3, 384, 384))`,
    whose ONNX consumer resizes every image to 384x384) reads the same in code and is
    reported: only the consumer of the exported file shows it is fixed by design.

    Nor a model that asserts its input's height or width (`assert H == self.img_size[0]`,
    timm's `_assert(...)` in a ViT's patch embedding), in any def of the exported region:
    it runs at no other resolution, so the fixed export loses nothing. On the development
    apps (`bench/dev_findings/`), the rule's findings were mostly exports at a model's one
    size (17 of 20 judged false); this removes three face ViTs' exports (CatFace, bench/dev48;
    facechain's TransFace and Real3DPortrait's copy of it, bench/dev28), nothing else of
    the 25 on the 476 development apps held. A size check of an unpacked shape counts
    only (`B, C, H, W = x.shape`): `x.size(2)` alone may be a token tensor's features.

    Batch and channel counts are no resize: `x.shape[0]` and `x.shape[1]` reaching a size
    argument were never reported, and now neither are names that only ever hold them (the
    first two of `B, C, H, W = x.shape`, the first of `B, N, C = x.shape`, whose second is
    a token count; `B = x.shape[0]`). Measured with `check --no-cache --select CL104
    --output-format json` before and after on corpora M and L, the apps, dev2-dev23 and the
    test set, nine findings went, each reading a batch or channel count as a resize:
    EfficientFormerV2 (bench/dev9), whose attention reshapes by `B` at its one resolution,
    reported once its export script's `eval(args.model)` resolved; six tiny test models of
    sleap-nn's `tests/inference/test_factory_export.py` (bench/dev15), exported at 16x16,
    that only `view(B, C, -1)` or `view(B, -1)`; TheAnimeScripter's FastLineDarken
    (`channels, _, _ = img.shape` as conv groups, exported once per resolution to a file
    named by it) and LiveTalking's PFLD (an SE block's `b, c, h, w = x.size()`, `view(-1,
    c, 1, 1)`) (bench/dev22). One finding (Chinese-CLIP's `pytorch_to_onnx.py:139`,
    bench/dev11) now names another resize line; nothing else changed.

    Why it is off by default: judged on the development apps (`bench/dev_findings/`,
    2026-12-06, main c23fa85), 21 distinct findings on the 476 apps held, 17 judged false,
    2 true, 2 not sampled; of every CL104 verdict there (22, counting findings earlier
    changes removed) 3 are true. The false ones export at the size every consumer in the repository feeds
    (MiDaS, DIS, FastestDet, openrtist, YOLO-World resize every image first), at a grid
    a config fixes (BEVFusion heads), or at a model's only size (GFPGAN's `Linear` over
    a flattened 4x4 map, face-recognition backbones): only the consumer of the exported
    file shows whether one size is enough, and the rule cannot see it. The true ones
    (fast_neural_style, CREStereo, DiffIR) feed or document other sizes. A static export
    also fails loudly at another size (a guard error, an ONNX runtime shape error), so the
    cost of a miss is a clear error at the first such run.

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
    default_selected = False  # judged mostly false on real code: exports at the size the project runs

    valid = [
        Case(
            """\
            import torch
            import torch.nn.functional as F
            from torch import nn

            class PatchEmbed(nn.Module):
                def __init__(self, img_size=112, patch=16):
                    super().__init__()
                    self.img_size = (img_size, img_size)
                    self.proj = nn.Conv2d(3, 8, patch, patch)
                def forward(self, x):
                    B, C, H, W = x.shape
                    assert H == self.img_size[0] and W == self.img_size[1], "input size"
                    return self.proj(x)

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.embed = PatchEmbed()
                def forward(self, x):
                    return F.interpolate(self.embed(x), size=x.shape[-2:], mode="bilinear")

            torch.onnx.export(Net().eval(), torch.randn(1, 3, 112, 112), "n.onnx")
            """,
            note="the model asserts its one input size (the face ViTs of bench/dev28 and bench/dev48, "
                 "judged false in bench/dev_findings): an export at that size loses nothing",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Attention(nn.Module):
                def __init__(self, dim=64, resolution=7):
                    super().__init__()
                    self.qkv = nn.Conv2d(dim, dim * 3, 1)
                    self.dim, self.resolution = dim, resolution
                def forward(self, x):
                    B, C, H, W = x.shape
                    q, k, v = self.qkv(x).flatten(2).reshape(B, 3, self.dim, -1).unbind(1)
                    attn = (q.transpose(1, 2) @ k).softmax(-1)
                    return (v @ attn).reshape(B, self.dim, self.resolution, self.resolution)
            torch.onnx.export(Attention().eval(), torch.randn(1, 64, 7, 7), "a.onnx")
            """,
            note="only the batch size is read from the input (EfficientFormerV2's attention, bench/dev9): "
                 "the model runs at its one resolution",
        ),
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
            import torch.nn.functional as F
            from torch import nn

            class PatchEmbed(nn.Module):
                def __init__(self, img_size=112, patch=16):
                    super().__init__()
                    self.img_size = (img_size, img_size)
                    self.proj = nn.Conv2d(3, 8, patch, patch)
                def forward(self, x):
                    B, C, H, W = x.shape
                    assert C == 3, "RGB input"
                    return self.proj(x)

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.embed = PatchEmbed()
                def forward(self, x):
                    return F.interpolate(self.embed(x), size=x.shape[-2:], mode="bilinear")

            torch.onnx.export(Net().eval(), torch.randn(1, 3, 112, 112), "n.onnx")
            """,
            at=[(22, 1)], note="a channel check does not fix the resolution",
        ),
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
        Case(
            """\
            import torch
            from torch import nn
            class Folder(nn.Module):
                def forward(self, x):
                    B, C, H, W = x.shape
                    return x.reshape(B, C, H // 2, W * 2)
            torch.onnx.export(Folder(), torch.randn(1, 3, 64, 64), "f.onnx")
            """,
            at=[(7, 1)],
            note="the height and width unpacked beside the batch size are sizes",
        ),
    ]

    def check(self, facts):
        for call, dims in static_exports(facts):
            found = resizing_node(facts, call)
            if found is None or accepts_one_size(facts, call):
                continue  # no resize by the input, or a model that runs at one size only
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
