from __future__ import annotations

from .module_containers import ContainerAttr, ModuleContainersFact
from .module_values import FileValuesFact
from ..base import Case, Rule


class ModuleListNotRegistered(Rule):
    """
    ## What it does
    Finds `nn.Module` classes that keep submodules in a plain Python `list`, `tuple`
    or `dict` attribute: a display or comprehension of modules
    (`self.blocks = [Block(c) for _ in range(4)]`), concatenation
    (`self.layers = self.layers + [Layer(...)]`, `+=`), `.append`/`.extend`/item
    assignment of modules, or a local list of modules assigned to `self.x` - when
    the class never wraps that attribute in `nn.ModuleList`, `nn.Sequential` or
    `nn.ModuleDict` (nor registers its items with `add_module`).

    Elements count as modules when they are built from `torch.nn` classes or module
    classes of the same file (also through `.to(...)`/`.cuda()` and `copy.deepcopy`), or
    returned by a factory function of the file (`make_block(c)` returning
    `nn.Sequential(...)`: the value model, `compile_lint/analysis/reach/values.py`, says what
    it returns through its branches). An attribute given the list a factory of the file
    returns (`self.blocks = build_blocks(n)`) is reported too, without a fix: the
    container is built in the factory;
    an element of a class defined elsewhere counts when the class calls the items
    (`for layer in self.layers: x = layer(x)`), unless it comes from a transforms
    library (`torchvision.transforms`, `albumentations`, `kornia.augmentation`, ...) or
    is a class of another project file that shows it is no module (the file is read for
    it: AnySat's `MaskCollator(object)` kept in a dict and called, judged false in
    `bench/fresh_reads/` batch 24).

    Only torch modules are looked at: a class whose bases reach `torch.nn.Module`
    through classes of the file or of a package known to build on torch (Lightning,
    diffusers, transformers, timm, ...), or that defines `forward` on a base of another
    project file that does not show it is no module (the file is read for it). Another
    framework's module (`megengine.module.Module` also has `forward` and holds layers)
    is not one, and the fix never wraps its layers in torch containers
    (tests/test_class_facts.py, from a public detection app); nor is a pix2pix-style
    model class (`CUTModel(BaseModel)` with a `forward`, `BaseModel(ABC)` in another file):
    joliGAN's three, judged false in `bench/fresh_reads/`, went when the base's file was
    read, and nothing else moved on frame A and the fresh reads (bench/results.md,
    session 65).

    ## Why is this bad?
    `nn.Module` registers submodules assigned to attributes, not those inside Python
    containers. The layers in the list are invisible to the module: `parameters()`
    and `state_dict()` are empty of them (the optimizer never trains them and
    checkpoints lose them), `.to(torch.float64)` / `.cuda()` / `.half()` leave them
    behind, `model.eval()` leaves them in training mode (a dropout in the list keeps
    dropping at inference), `torch.jit.trace` fails ("Cannot insert a Tensor that requires grad as a
    constant") and `torch.fx` fails ("module is not installed as a submodule").
    Real case: pytorch/examples `mnist_forward_forward` builds
    `self.layers = self.layers + [Layer(...)]`.

    ## Example
    ```python
    class Refiner(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.blocks = [ResBlock(64) for _ in range(n)]

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return x
    ```

    ## Use instead
    ```python
            self.blocks = nn.ModuleList([ResBlock(64) for _ in range(n)])
    ```

    ## Fix safety
    Unsafe: the fix wraps the first assignment in `nn.ModuleList(...)` (a list or
    tuple) or `nn.ModuleDict(...)` (a dict with string keys). That registers the
    layers, which is what the code meant, but it **adds `state_dict` keys**
    (`blocks.0.weight`, `blocks.0.bias`, ...): checkpoints saved before the fix lack
    them, so loading one needs `load_state_dict(..., strict=False)` or a key map,
    and the optimizer now sees parameters it did not see before. No fix is offered
    when an element is not a module, when a dict key is not a string, or when the
    class uses the attribute in a way the container does not support
    (`.sort()`, `.reverse()`, `.get()`, `[...] + self.x`). An appended tuple of modules
    (`self.pairs.append((a, b))`) is one element that is not a module: still reported
    (its modules are unregistered), without a fix, since `nn.ModuleList.append` raises
    `TypeError: tuple is not a Module subclass` (before session 61 the fix was offered).

    Not reported: containers wrapped later in the same class
    (`self.blocks = nn.ModuleList(self.blocks)`, `nn.Sequential(*layers)`), or handed
    whole to another module (`self.blocks = EmbedSequential(*self.blocks)` with a
    project subclass of `nn.Sequential`, `Stage(layers=layers)` of another file, a
    factory of the file returning a module): the modules are that module's to register
    (a public GAN app, judged false on bench/dev2, 4 findings). Handing one item over
    (`Residual(self.blocks[0])`) registers only that one, and is still reported.
    Nor a container the method that made it deletes afterwards (`del self.x_proj` once
    VMamba's SS2D has stacked the layers' weights into one `nn.Parameter`): nothing
    unregistered stays on the module (Swin-UMamba, bench/dev45: its two findings judged
    false in `bench/dev_findings/`; on the 476 development apps held, the rule's only
    change). A `del` in another method still leaves the modules unregistered until then.
    Not reported either: lists of
    functions or numbers, classes that are not modules (a trainer holding models),
    modules registered one by one (`self.register_module(name, m)`,
    `self.add_module(name, m)`, `setattr(self, name, m)`) before they go into the list,
    or as they go in (`self.heads.append(h)` then `self.add_module(name, self.heads[-1])`
    in one loop: yolov7_d2's semantic-segmentation head, judged false in
    `bench/dev_findings/`, the one finding this took on the 476 development apps held;
    `self.linears += [block]` and `.extend([block])` append one item the same way:
    ClimSim's baselines, 3 findings judged false in `bench/fresh_reads/` batch 42, the only
    CL201 findings that went on the 385 app folders of the benchmarks, corpus M unchanged;
    each element of an appended tuple registered the same way, `self.register_module(n,
    self.pairs[-1][0])` and `[-1][1]`: kohya-ss sd-scripts' `finetune/hypernetwork_nai.py`
    at 48d368f, a false finding read in session 61 on a repository no set holds; the 476
    development apps 7 -> 7 and corpus M unchanged),
    and built-in modules that a plain list loses nothing of: no parameters, no buffers,
    and a `forward` that does not read `self.training` (loss functions, activations,
    pooling, padding, `Flatten`/`Unflatten`: 91 classes, plus 7 losses unless given a
    `weight`/`pos_weight`), measured on torch 2.13 by
    `scripts/measure/cl201_stateless_modules.py` (it writes
    `compile_lint/rules/cl201_module_list_not_registered/stateless_modules.py`); its
    `--demo` builds an owner with a plain dict of `Unflatten`/`Flatten` and one with
    an `nn.ModuleDict` of them: the same parameters (0), `state_dict` keys (0) and
    outputs after `eval()` and `.to(torch.float64)`. Dropout (6 classes) and `RReLU`
    hold nothing either but read `self.training`: `--demo` shows a plain list of
    `nn.Dropout(0.5)` still dropping after the owner's `eval()`, so they are reported
    (unless built with a literal rate of 0), and so is a class of the file that reads
    `self.training` (a `DropPath`).

    ## References
    - the invalid cases of this rule: `parameters()` and `state_dict()` of the module
      miss the listed layers; `fixtures/rules/CL201/` reproduces it end to end
    - `scripts/measure/cl201_stateless_modules.py` (which built-in modules hold state
      or read `self.training`; `--demo`: what an owner loses of each)
    - `bench/dev2/verdicts_b.jsonl`: the 5 false findings in joliGEN this page's
      exceptions remove (`python bench/dev2/score.py /work/dev2`)
    - https://pytorch.org/docs/stable/generated/torch.nn.ModuleList.html
    """

    needs = (ModuleContainersFact, FileValuesFact)
    code = "CL201"
    name = "module-list-not-registered"
    summary = "Submodules kept in a plain list/dict are not registered with the module"
    fix_safety = "unsafe"
    codemod = "codemods.wrap_module_container:WrapModuleContainer"
    requires = (b"self.",)

    valid = [
        Case(
            """\
            import torch.nn as nn
            from torchvision.datasets.vision import VisionDataset

            class Pairs(VisionDataset):
                def __init__(self, root):
                    super().__init__(root)
                    self.augment = [nn.Dropout(0.1), nn.Identity()]

                def __getitem__(self, i):
                    x = self.load(i)
                    for step in self.augment:
                        x = step(x)
                    return x
            """,
            note="a dataset of torchvision is no module, whatever it keeps (LCT's `LSUN(VisionDataset)`, "
                 "judged false in bench/fresh_reads batch 55)",
        ),
        Case(
            """\
            import torch
            import torch.nn as nn

            class SS2D(nn.Module):
                def __init__(self, d_inner, rank):
                    super().__init__()
                    self.x_proj = (nn.Linear(d_inner, rank, bias=False), nn.Linear(d_inner, rank, bias=False))
                    self.x_proj_weight = nn.Parameter(torch.stack([t.weight for t in self.x_proj], dim=0))
                    del self.x_proj

                def forward(self, x):
                    return torch.einsum("bkdl,kcd->bkcl", x, self.x_proj_weight)
            """,
            note="VMamba's SS2D (Swin-UMamba, bench/dev45): the tuple is deleted once its weights are "
                 "stacked into a registered Parameter",
        ),
        Case(
            """\
            import torch.nn as nn
            class Refiner(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    blocks = [nn.Conv2d(8, 8, 3, padding=1) for _ in range(n)]
                    self.blocks = blocks
                    self.body = nn.Sequential(*blocks)
                def forward(self, x):
                    return self.body(x)
            """,
            note="the same modules registered through nn.Sequential",
        ),
        Case(
            """\
            import torch.nn as nn
            class Refiner(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.blocks = []
                    for _ in range(n):
                        self.blocks.append(nn.Conv2d(8, 8, 3, padding=1))
                    self.blocks = nn.ModuleList(self.blocks)
                def forward(self, x):
                    for b in self.blocks:
                        x = b(x)
                    return x
            """,
            note="wrapped later in the same class",
        ),
        Case(
            """\
            import torch
            import torch.nn.functional as F
            from torch import nn
            class Blend(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.acts = [F.relu, torch.sigmoid]
                    self.weights = [0.5, 0.25, 0.25]
                    self.heads = nn.ModuleDict({"rgb": nn.Conv2d(8, 3, 1)})
                def forward(self, x):
                    return sum(w * a(x) for w, a in zip(self.weights, self.acts))
            """,
            note="functions and numbers; a ModuleDict",
        ),
        Case(
            """\
            from torch import nn
            class Trainer:
                def __init__(self):
                    self.models = [nn.Linear(4, 4), nn.Linear(4, 4)]
            """,
            note="not a module: holding models in a list is fine",
        ),
        Case(
            """\
            import torch.nn as nn
            class Pyramid(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.levels = [nn.Conv2d(3, 3, 3) for _ in range(3)]
                    for i, level in enumerate(self.levels):
                        self.add_module(f"level{i}", level)
                def forward(self, x):
                    return [level(x) for level in self.levels]
            """,
            note="registered one by one with add_module",
        ),
        Case(
            """\
            import torch.nn as nn
            class SemSegHead(nn.Module):
                def __init__(self, features):
                    super().__init__()
                    self.scale_heads = []
                    for name in features:
                        self.scale_heads.append(nn.Sequential(nn.Conv2d(3, 3, 3), nn.ReLU()))
                        self.add_module(name, self.scale_heads[-1])
                def forward(self, xs):
                    return [head(x) for head, x in zip(self.scale_heads, xs)]
            """,
            note="each item registered as it is appended (yolov7_d2, bench/dev_findings)",
        ),
        Case(
            """\
            import torch
            class MLP(torch.nn.Module):
                def __init__(self, in_dims, out_dims, hidden_dims=512, layers=1):
                    super().__init__()
                    self.linears = []
                    for i in range(layers):
                        self.linears += [torch.nn.Sequential(torch.nn.Linear(in_dims, hidden_dims), torch.nn.LayerNorm(hidden_dims))]
                        self.add_module('linear%d' % i, self.linears[-1])
                    self.final_linear = torch.nn.Linear(hidden_dims, out_dims)
                def forward(self, x):
                    for linear in self.linears:
                        x = linear(x)
                    return self.final_linear(x)
            """,
            note="`+= [item]` appends one item, registered as it goes in (ClimSim's baselines, bench/fresh_reads batch 42)",
        ),
        Case(
            """\
            import torch.nn as nn
            class Hypernetwork(nn.Module):
                def __init__(self, sizes):
                    super().__init__()
                    self.pairs = []
                    for size in sizes:
                        self.pairs.append((nn.Linear(size, size), nn.Linear(size, size)))
                        self.register_module(f"{size}_0", self.pairs[-1][0])
                        self.register_module(f"{size}_1", self.pairs[-1][1])
                def forward(self, x, i):
                    a, b = self.pairs[i]
                    return b(a(x))
            """,
            note="both modules of each appended pair registered as they go in (kohya-ss sd-scripts' "
                 "hypernetwork_nai.py, read in session 61)",
        ),
        Case(
            """\
            import torchvision.transforms as T
            from torch import nn
            class Augment(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.ops = [T.RandomHorizontalFlip(), T.ColorJitter(0.2, 0.2)]
                def forward(self, x):
                    for op in self.ops:
                        x = op(x)
                    return x
            """,
            note="image transforms: callables without state to register",
        ),
        Case(
            """\
            import torch.nn as nn
            class Criterion(nn.Module):
                def __init__(self, weights):
                    super().__init__()
                    self.losses = [nn.L1Loss(), nn.MSELoss(reduction="sum"), nn.SmoothL1Loss(beta=0.5)]
                    self.weights = weights
                def forward(self, pred, target):
                    return sum(w * loss(pred, target) for w, loss in zip(self.weights, self.losses))
            """,
            note="loss functions hold no parameters or buffers (scripts/measure/cl201_stateless_modules.py)",
        ),
        Case(
            """\
            from torch import nn
            class Acts(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.acts = {"relu": nn.ReLU(inplace=True), "gelu": nn.GELU(), "id": nn.Identity()}
                    self.pools = []
                    for k in (2, 4):
                        self.pools.append(nn.AvgPool2d(k))
                    self.ce = [nn.CrossEntropyLoss(label_smoothing=0.1)]
                def forward(self, x, kind):
                    return [p(self.acts[kind](x)) for p in self.pools]
            """,
            note="activations, pooling, a loss without a weight",
        ),
        Case(
            """\
            import torch.nn as nn
            class Tower(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.convs = []
                    for i in range(n):
                        conv = nn.Conv2d(8, 8, 3, padding=1)
                        self.register_module(f"conv{i}", conv)
                        self.convs.append(conv)
                    self.heads = []
                    for i in range(2):
                        head = nn.Conv2d(8, 3, 1)
                        self.add_module("head%d" % i, head)
                        self.heads += [head]
                    self.extra = []
                    norm = nn.BatchNorm2d(8)
                    setattr(self, "norm", norm)
                    self.extra.append(norm)
                def forward(self, x):
                    for c in self.convs:
                        x = c(x)
                    return [h(x) for h in self.heads]
            """,
            note="each module registered by hand (register_module / add_module / setattr)",
        ),
        Case(
            """\
            import torch
            import torch.nn as nn
            def make_window(size):
                return torch.ones(1, 1, size, size) / size ** 2
            class IoULoss(nn.Module):
                def forward(self, pred, target):
                    inter = (pred * target).sum()
                    return 1 - inter / (pred + target - pred * target).sum()
            class PatchIoULoss(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.iou = IoULoss()
                def forward(self, pred, target):
                    return self.iou(pred, target)
            class SSIMLoss(nn.Module):
                def __init__(self, size=11):
                    super().__init__()
                    self.window = make_window(size)
                def forward(self, a, b):
                    return (a - b).abs().mean()
            class PixLoss(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.criterions = {}
                    self.criterions["iou"] = IoULoss()
                    self.criterions["patch"] = PatchIoULoss()
                    self.criterions["ssim"] = SSIMLoss()
                    self.criterions["bce"] = nn.BCELoss()
                def forward(self, pred, gt):
                    return sum(c(pred, gt) for c in self.criterions.values())
            """,
            note="loss classes of this file that hold no parameters or buffers",
        ),
        Case(
            """\
            import torch
            import torch.nn as nn
            def make_scale(i):
                return 2.0 ** i
            def make_act(kind):
                return torch.relu if kind == "relu" else torch.sigmoid
            class Pyramid(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.scales = [make_scale(i) for i in range(3)]
                    self.acts = [make_act("relu"), make_act("sigmoid")]
                def forward(self, x):
                    return [a(x * s) for a, s in zip(self.acts, self.scales)]
            """,
            note="factories returning numbers and functions, not modules",
        ),
        Case(
            """\
            import torch.nn as nn
            from .stages import Stage
            class EmbedSequential(nn.Sequential):
                def forward(self, x, emb):
                    for layer in self:
                        x = layer(x) + emb
                    return x
            class Generator(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.encoder = [nn.Conv2d(3, 64, 7), nn.Conv2d(64, 64, 3)]
                    self.encoder = EmbedSequential(*self.encoder)
                    self.blocks = []
                    for _ in range(n):
                        self.blocks.append(nn.Conv2d(64, 64, 3, padding=1))
                    self.body = EmbedSequential(*self.blocks)
                    layers = [nn.Conv2d(64, 3, 1)]
                    self.head = Stage(layers=layers)
                def forward(self, x, emb):
                    return self.head(self.body(self.encoder(x, emb), emb))
            """,
            files={"gan/__init__.py": "", "gan/stages.py": "import torch.nn as nn\nclass Stage(nn.Sequential):\n    pass\n"},
            path="gan/generator.py",
            note="handed whole to a module: a project subclass of nn.Sequential (joliGEN "
                 "resnet_generator_diff.py), a module class of another file",
        ),
        Case(
            """\
            import torch.nn as nn
            class MultiScale(nn.Module):
                def __init__(self, sizes):
                    super().__init__()
                    self.unflatten = {}
                    for i, size in enumerate(sizes):
                        self.unflatten[str(i)] = nn.Unflatten(1, (size, size))
                    self.heads = [nn.Dropout(0.0), nn.Flatten()]
                def forward(self, feats):
                    return [self.unflatten[str(i)](f) for i, f in enumerate(feats)]
            """,
            note="modules without parameters, buffers or train/eval behaviour (joliGEN "
                 "projected_d/discriminator.py): scripts/measure/cl201_stateless_modules.py --demo",
        ),
        Case(
            """\
            import torch.nn as nn
            from utils.masks import MaskCollator
            class Module(nn.Module):
                def __init__(self, scales):
                    super().__init__()
                    self.collators = {}
                    for scale in scales:
                        self.collators[str(scale)] = MaskCollator(scale)
                def forward(self, x, scale):
                    return self.collators[str(scale)](x)
            """,
            files={"utils/__init__.py": "", "utils/masks.py": "class MaskCollator(object):\n"
                   "    def __init__(self, scale):\n        self.scale = scale\n"
                   "    def __call__(self, x):\n        return x[:, :: self.scale]\n"},
            path="model.py",
            note="the items are called, but their class, of another file, is no module (AnySat's "
                 "mask collators, judged false in bench/fresh_reads batch 24): that file is read for it",
        ),
    ]
    invalid = [
        Case(
            """\
            import torch.nn as nn
            class SemSegHead(nn.Module):
                def __init__(self, features):
                    super().__init__()
                    self.scale_heads = []
                    for name in features:
                        self.scale_heads.append(nn.Sequential(nn.Conv2d(3, 3, 3), nn.ReLU()))
                        self.add_module(name, self.scale_heads[0])
                def forward(self, xs):
                    return [head(x) for head, x in zip(self.scale_heads, xs)]
            """,
            fixed="""\
            import torch.nn as nn
            class SemSegHead(nn.Module):
                def __init__(self, features):
                    super().__init__()
                    self.scale_heads = nn.ModuleList()
                    for name in features:
                        self.scale_heads.append(nn.Sequential(nn.Conv2d(3, 3, 3), nn.ReLU()))
                        self.add_module(name, self.scale_heads[0])
                def forward(self, xs):
                    return [head(x) for head, x in zip(self.scale_heads, xs)]
            """,
            at=[(5, 9)],
            note="only the first item is registered, again and again",
        ),
        Case(
            """\
            import torch.nn as nn

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.branches = [nn.Linear(4, 4), nn.Linear(4, 4)]

                def forward(self, x):
                    return sum(b(x) for b in self.branches)

                def fuse(self):
                    del self.branches
            """,
            fixed="""\
            import torch.nn as nn

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.branches = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])

                def forward(self, x):
                    return sum(b(x) for b in self.branches)

                def fuse(self):
                    del self.branches
            """,
            at=[(6, 9)], note="deleted only by a later call: until then the modules are unregistered",
        ),
        Case(
            """\
            import torch
            class Layer(torch.nn.Linear):
                pass
            class Net(torch.nn.Module):
                def __init__(self, dims):
                    super().__init__()
                    self.layers = []
                    for d in range(len(dims) - 1):
                        self.layers = self.layers + [Layer(dims[d], dims[d + 1]).cuda()]
                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return x
            """,
            fixed="""\
            import torch
            class Layer(torch.nn.Linear):
                pass
            class Net(torch.nn.Module):
                def __init__(self, dims):
                    super().__init__()
                    self.layers = torch.nn.ModuleList()
                    for d in range(len(dims) - 1):
                        self.layers = self.layers + [Layer(dims[d], dims[d + 1]).cuda()]
                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return x
            """,
            at=[(7, 9)],
            note="pytorch/examples mnist_forward_forward",
        ),
        Case(
            """\
            from torch import nn
            class Refiner(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.blocks = [nn.Conv2d(8, 8, 3, padding=1) for _ in range(n)]
                    self.skips = (nn.Identity(), nn.Conv2d(8, 8, 1))
                def forward(self, x):
                    for block, skip in zip(self.blocks, self.skips):
                        x = block(x) + skip(x)
                    return x
            """,
            fixed="""\
            from torch import nn
            class Refiner(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.blocks = nn.ModuleList([nn.Conv2d(8, 8, 3, padding=1) for _ in range(n)])
                    self.skips = nn.ModuleList((nn.Identity(), nn.Conv2d(8, 8, 1)))
                def forward(self, x):
                    for block, skip in zip(self.blocks, self.skips):
                        x = block(x) + skip(x)
                    return x
            """,
            at=[(5, 9), (6, 9)],
        ),
        Case(
            """\
            import torch.nn as nn
            class MultiHead(nn.Module):
                def __init__(self, names):
                    super().__init__()
                    self.heads = {}
                    for name in names:
                        self.heads[f"{name}_head"] = nn.Conv2d(16, 3, 1)
                def forward(self, x):
                    return {k: h(x) for k, h in self.heads.items()}
            """,
            fixed="""\
            import torch.nn as nn
            class MultiHead(nn.Module):
                def __init__(self, names):
                    super().__init__()
                    self.heads = nn.ModuleDict()
                    for name in names:
                        self.heads[f"{name}_head"] = nn.Conv2d(16, 3, 1)
                def forward(self, x):
                    return {k: h(x) for k, h in self.heads.items()}
            """,
            note="a dict filled by item assignment",
            at=[(5, 9)],
        ),
        Case(
            """\
            import torch.nn as nn
            from .blocks import ResBlock
            class Generator(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    layers = []
                    for _ in range(n):
                        layers.append(ResBlock(64))
                    self.layers = layers
                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return x
            """,
            fixed="""\
            import torch.nn as nn
            from .blocks import ResBlock
            class Generator(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    layers = []
                    for _ in range(n):
                        layers.append(ResBlock(64))
                    self.layers = nn.ModuleList(layers)
                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return x
            """,
            files={"gan/__init__.py": "", "gan/blocks.py": "import torch.nn as nn\nclass ResBlock(nn.Module):\n    pass\n"},
            path="gan/generator.py",
            note="a local list; the element class is in another file, and the items are called",
            at=[(9, 9)],
        ),
        Case(
            """\
            import torch.nn as nn
            from detlib.layers import ConvModule
            class Neck(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.convs = [ConvModule(8, 8, 3) for _ in range(n)]
                def forward(self, x):
                    for conv in self.convs:
                        x = conv(x)
                    return x
            """,
            fixed="""\
            import torch.nn as nn
            from detlib.layers import ConvModule
            class Neck(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.convs = nn.ModuleList([ConvModule(8, 8, 3) for _ in range(n)])
                def forward(self, x):
                    for conv in self.convs:
                        x = conv(x)
                    return x
            """,
            at=[(6, 9)],
            note="the element class is another package's, and the items are called: only a class of a "
                 "project file is read for whether it is a module",
        ),
        Case(
            """\
            from torch import nn
            class Stages(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.stages = [nn.Conv2d(3, 3, 1), nn.GELU()]
                    self.stages.sort(key=lambda m: type(m).__name__)
                def forward(self, x):
                    for s in self.stages:
                        x = s(x)
                    return x
            """,
            at=[(5, 9)],
            note="no fix: nn.ModuleList has no .sort()",
        ),
        Case(
            """\
            from torch.nn import Conv2d, Module
            class Heads(Module):
                def __init__(self):
                    super().__init__()
                    self.heads = {"albedo": Conv2d(8, 3, 1), "normal": Conv2d(8, 3, 1)}
                def forward(self, x):
                    return {k: h(x) for k, h in self.heads.items()}
            """,
            fixed="""\
            from torch.nn import Conv2d, Module
            import torch

            class Heads(Module):
                def __init__(self):
                    super().__init__()
                    self.heads = torch.nn.ModuleDict({"albedo": Conv2d(8, 3, 1), "normal": Conv2d(8, 3, 1)})
                def forward(self, x):
                    return {k: h(x) for k, h in self.heads.items()}
            """,
            note="no `nn` in scope: the fix spells torch.nn.ModuleDict and imports torch",
            at=[(5, 9)],
        ),
        Case(
            """\
            import torch.nn as nn
            class Criterion(nn.Module):
                def __init__(self, class_weights):
                    super().__init__()
                    self.losses = [nn.CrossEntropyLoss(weight=class_weights), nn.L1Loss()]
                def forward(self, pred, target):
                    return sum(loss(pred, target) for loss in self.losses)
            """,
            fixed="""\
            import torch.nn as nn
            class Criterion(nn.Module):
                def __init__(self, class_weights):
                    super().__init__()
                    self.losses = nn.ModuleList([nn.CrossEntropyLoss(weight=class_weights), nn.L1Loss()])
                def forward(self, pred, target):
                    return sum(loss(pred, target) for loss in self.losses)
            """,
            at=[(5, 9)], note="a weighted loss holds a buffer: `.to()` leaves it behind",
        ),
        Case(
            """\
            import torch.nn as nn
            class Tower(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.convs = []
                    for i in range(n):
                        conv = nn.Conv2d(8, 8, 3, padding=1)
                        self.register_module(f"conv{i}", conv)
                        self.convs.append(conv)
                        self.convs.append(nn.Conv2d(8, 8, 1))
                def forward(self, x):
                    for c in self.convs:
                        x = c(x)
                    return x
            """,
            fixed="""\
            import torch.nn as nn
            class Tower(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.convs = nn.ModuleList()
                    for i in range(n):
                        conv = nn.Conv2d(8, 8, 3, padding=1)
                        self.register_module(f"conv{i}", conv)
                        self.convs.append(conv)
                        self.convs.append(nn.Conv2d(8, 8, 1))
                def forward(self, x):
                    for c in self.convs:
                        x = c(x)
                    return x
            """,
            at=[(5, 9)], note="one module registered, the other not",
        ),
        Case(
            """\
            import torch.nn as nn
            class Hypernetwork(nn.Module):
                def __init__(self, sizes):
                    super().__init__()
                    self.pairs = []
                    for size in sizes:
                        self.pairs.append((nn.Linear(size, size), nn.Linear(size, size)))
                        self.register_module(f"{size}_0", self.pairs[-1][0])
                def forward(self, x, i):
                    a, b = self.pairs[i]
                    return b(a(x))
            """,
            at=[(5, 9)], note="only the first module of each pair is registered",
        ),
        Case(
            """\
            from torch import nn
            class Mixed(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.stages = [nn.ReLU(), nn.Conv2d(3, 3, 1), nn.Sigmoid()]
                def forward(self, x):
                    for s in self.stages:
                        x = s(x)
                    return x
            """,
            fixed="""\
            from torch import nn
            class Mixed(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.stages = nn.ModuleList([nn.ReLU(), nn.Conv2d(3, 3, 1), nn.Sigmoid()])
                def forward(self, x):
                    for s in self.stages:
                        x = s(x)
                    return x
            """,
            at=[(5, 9)], note="stateless and stateful mixed",
        ),
        Case(
            """\
            import torch.nn as nn
            def make_block(c, act=True):
                if act:
                    return nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
                return nn.Conv2d(c, c, 3, padding=1)
            class Refiner(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.blocks = [make_block(64) for _ in range(n)]
                def forward(self, x):
                    for b in self.blocks:
                        x = b(x)
                    return x
            """,
            fixed="""\
            import torch.nn as nn
            def make_block(c, act=True):
                if act:
                    return nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
                return nn.Conv2d(c, c, 3, padding=1)
            class Refiner(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.blocks = nn.ModuleList([make_block(64) for _ in range(n)])
                def forward(self, x):
                    for b in self.blocks:
                        x = b(x)
                    return x
            """,
            at=[(9, 9)], note="a factory function of the file returns the modules (the value model says what it returns)",
        ),
        Case(
            """\
            import torch.nn as nn
            class Block(nn.Module):
                def __init__(self, c):
                    super().__init__()
                    self.conv = nn.Conv2d(c, c, 3, padding=1)
                def forward(self, x):
                    return x + self.conv(x)
            def build_blocks(n, c=64):
                return [Block(c) for _ in range(n)]
            class Body(nn.Module):
                def __init__(self, n):
                    super().__init__()
                    self.blocks = build_blocks(n)
                def forward(self, x):
                    for block in self.blocks:
                        x = block(x)
                    return x
            """,
            at=[(13, 9)], note="a factory of the file returns the list of modules (the value model); no fix offered",
        ),
        Case(
            """\
            import torch
            import torch.nn as nn
            class DropPath(nn.Module):
                def __init__(self, p):
                    super().__init__()
                    self.p = p
                def forward(self, x):
                    if not self.training:
                        return x
                    return x * (torch.rand(x.shape[0], 1) > self.p) / (1 - self.p)
            class Head(nn.Module):
                def __init__(self, rates):
                    super().__init__()
                    self.drops = [nn.Dropout(p) for p in rates]
                    self.paths = [DropPath(p) for p in rates]
                def forward(self, x):
                    return [d(x) + q(x) for d, q in zip(self.drops, self.paths)]
            """,
            fixed="""\
            import torch
            import torch.nn as nn
            class DropPath(nn.Module):
                def __init__(self, p):
                    super().__init__()
                    self.p = p
                def forward(self, x):
                    if not self.training:
                        return x
                    return x * (torch.rand(x.shape[0], 1) > self.p) / (1 - self.p)
            class Head(nn.Module):
                def __init__(self, rates):
                    super().__init__()
                    self.drops = nn.ModuleList([nn.Dropout(p) for p in rates])
                    self.paths = nn.ModuleList([DropPath(p) for p in rates])
                def forward(self, x):
                    return [d(x) + q(x) for d, q in zip(self.drops, self.paths)]
            """,
            at=[(14, 9), (15, 9)],
            note="no state, but they read self.training: `model.eval()` never reaches them, "
                 "so they keep dropping (scripts/measure/cl201_stateless_modules.py --demo)",
        ),
        Case(
            """\
            import torch.nn as nn
            class Residual(nn.Module):
                def __init__(self, inner):
                    super().__init__()
                    self.inner = inner
                def forward(self, x):
                    return x + self.inner(x)
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.convs = [nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 1)]
                    self.first = Residual(self.convs[0])
                def forward(self, x):
                    return self.convs[1](self.first(x))
            """,
            fixed="""\
            import torch.nn as nn
            class Residual(nn.Module):
                def __init__(self, inner):
                    super().__init__()
                    self.inner = inner
                def forward(self, x):
                    return x + self.inner(x)
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.convs = nn.ModuleList([nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 1)])
                    self.first = Residual(self.convs[0])
                def forward(self, x):
                    return self.convs[1](self.first(x))
            """,
            at=[(11, 9)],
            note="one item handed to a module: the second conv is not registered",
        ),
    ]

    def check(self, facts):
        for attr in facts.get(ModuleContainersFact):
            yield self._finding(facts, attr)

    def _finding(self, facts, attr: ContainerAttr):
        wrapper = "ModuleDict" if attr.container == "dict" else "ModuleList"
        message = (
            f"`self.{attr.name}` in `{attr.cls.name}` keeps modules in a plain {attr.container}, not `nn.{wrapper}`: "
            "they are not registered"
        )
        if attr.blocker is not None:
            return self.finding(facts, attr.statement, message + f" (no automatic fix: {attr.blocker})")
        spelled = facts.names.alias_for(f"torch.nn.{wrapper}")
        key = "<key>" if attr.container == "dict" else "0"
        return self.finding(
            facts, attr.statement, message,
            fix=f"wrap in `nn.{wrapper}` (adds state_dict keys under `{attr.name}.{key}.`)",
            unsafe=True, data={"wrapper": spelled or f"torch.nn.{wrapper}", "add_import": spelled is None},
        )
