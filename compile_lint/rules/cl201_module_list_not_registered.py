from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from ..analysis.classes import (
    CONTAINERS,
    self_attr,
    is_module_class,
    methods,
    module_construction,
    self_name,
)
from ..analysis.stateless_modules import stateless_local_class
from ..analysis.walk import walk as _walk
from ..analysis.walk import walk_scope as _walk_scope
from .base import Case, Rule

# list and dict methods a ModuleList / ModuleDict lacks: a wrap would break these uses
_LIST_ONLY = frozenset({"sort", "reverse", "index", "count", "remove", "copy", "clear"})
_DICT_ONLY = frozenset({"get", "setdefault", "popitem", "copy", "fromkeys"})
_ADDERS = frozenset({"append", "extend", "insert"})


@dataclass
class _Attr:
    name: str
    first: Optional[ast.AST] = None  # the first `self.x = <container>` value
    container: str = ""  # "list" | "tuple" | "dict"
    modules: list[ast.AST] = field(default_factory=list)  # elements known to be modules
    unknown: list[ast.AST] = field(default_factory=list)  # elements of classes we cannot see
    others: list[ast.AST] = field(default_factory=list)  # elements that are not modules
    keys: list[ast.AST] = field(default_factory=list)  # dict keys seen
    how: str = ""  # "a list display", "`.append`", "`+` concatenation"
    local: Optional[str] = None  # the first value is a local list: `self.x = layers`


def _stringy(facts, key) -> bool:
    """A dict key that is a string: a literal, an f-string, `str(...)`, or a loop
    variable over literal strings or over a parameter defaulting to them."""
    if key is None:
        return False
    if (isinstance(key, ast.Constant) and isinstance(key.value, str)) or isinstance(key, ast.JoinedStr):
        return True
    if isinstance(key, ast.Call) and facts.resolve(key.func) == "builtins.str":
        return True
    if not isinstance(key, ast.Name):
        return False
    for anc in facts.ancestors(key):
        if isinstance(anc, (ast.For, ast.AsyncFor)) and isinstance(anc.target, ast.Name) and anc.target.id == key.id:
            it = anc.iter
            if isinstance(it, ast.Name):
                func = facts.enclosing_function(anc)
                if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    args = func.args.posonlyargs + func.args.args
                    defaults = dict(zip([a.arg for a in args][len(args) - len(func.args.defaults):], func.args.defaults))
                    it = defaults.get(it.id, it)
            return isinstance(it, (ast.Tuple, ast.List)) and bool(it.elts) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in it.elts
            )
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
    return False


def _container_kind(value: ast.AST) -> str:
    if isinstance(value, (ast.List, ast.ListComp)):
        return "list"
    if isinstance(value, ast.Tuple):
        return "tuple"
    if isinstance(value, (ast.Dict, ast.DictComp)):
        return "dict"
    return ""


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
    classes of the same file (also through `.to(...)`/`.cuda()` and `copy.deepcopy`);
    an element of a class defined elsewhere counts when the class calls the items
    (`for layer in self.layers: x = layer(x)`), unless it comes from a transforms
    library (`torchvision.transforms`, `albumentations`, `kornia.augmentation`, ...).

    ## Why is this bad?
    `nn.Module` registers submodules assigned to attributes, not those inside Python
    containers. The layers in the list are invisible to the module: `parameters()`
    and `state_dict()` are empty of them (the optimizer never trains them and
    checkpoints lose them), `.to(torch.float64)` / `.cuda()` / `.half()` leave them
    behind, `torch.jit.trace` fails ("Cannot insert a Tensor that requires grad as a
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
    (`.sort()`, `.reverse()`, `.get()`, `[...] + self.x`).

    Not reported: containers wrapped later in the same class
    (`self.blocks = nn.ModuleList(self.blocks)`, `nn.Sequential(*layers)`), lists of
    functions or numbers, classes that are not modules (a trainer holding models),
    modules registered one by one (`self.register_module(name, m)`,
    `self.add_module(name, m)`, `setattr(self, name, m)`) before they go into the list,
    and built-in modules that hold no parameters and no buffers (loss functions,
    activations, pooling, padding, dropout: 97 classes, plus 7 losses unless given a
    `weight`/`pos_weight`), measured on torch 2.13 by
    `scripts/measure/cl201_stateless_modules.py` (it writes
    `compile_lint/analysis/stateless_modules.py`). A list of those loses nothing in
    `parameters()`, `state_dict()` or `.to()`.

    ## References
    - the invalid cases of this rule: `parameters()` and `state_dict()` of the module
      miss the listed layers; `fixtures/rules/CL201/` reproduces it end to end
    - `scripts/measure/cl201_stateless_modules.py` (which built-in modules hold state)
    - https://pytorch.org/docs/stable/generated/torch.nn.ModuleList.html
    """

    needs = ()
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
    ]
    invalid = [
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
    ]

    def check(self, facts):
        for cls in self._candidate_classes(facts):
            if is_module_class(facts, cls):
                yield from self._check_class(facts, cls)

    @staticmethod
    def _candidate_classes(facts) -> list[ast.ClassDef]:
        """Cheap pre-check over the file's statements: the classes in which an
        attribute gets a container that could hold modules, in source order."""
        found: dict[int, ast.ClassDef] = {}

        def note(node):
            for anc in facts.ancestors(node):
                if isinstance(anc, ast.ClassDef):
                    found.setdefault(id(anc), anc)
                    return

        containers = ast.List, ast.Tuple, ast.Dict, ast.ListComp, ast.DictComp
        local_lists: set[tuple[int, str]] = set()  # (function, name) bound to a container
        for node in facts.nodes(ast.Assign):
            if isinstance(node.value, containers):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        local_lists.add((id(facts.enclosing_function(node)), target.id))
        for node in facts.nodes(ast.Assign, ast.AnnAssign):
            if node.value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets):
                continue
            value = node.value
            if isinstance(value, ast.Name):
                if (id(facts.enclosing_function(node)), value.id) in local_lists:
                    note(node)
            elif isinstance(value, ast.BinOp):
                if isinstance(value.left, ast.Attribute) and isinstance(value.right, containers):
                    note(node)
            elif isinstance(value, (ast.List, ast.Tuple, ast.Dict)) and not (
                value.values if isinstance(value, ast.Dict) else value.elts
            ):
                note(node)  # empty, filled later
            elif isinstance(value, (ast.List, ast.Tuple, ast.Dict, ast.ListComp, ast.DictComp)):
                if any(isinstance(sub, ast.Call) for sub in _walk(value)):
                    note(node)
        for node in facts.nodes(ast.AugAssign):
            if isinstance(node.target, ast.Attribute) and isinstance(node.value, (*containers, ast.Name)):
                note(node)
        for node in facts.nodes(ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _ADDERS and isinstance(func.value, ast.Attribute):
                note(node)
        return sorted(found.values(), key=lambda c: (c.lineno, c.col_offset))

    def _check_class(self, facts, cls):
        wrapped = self._wrapped(facts, cls)
        attrs: dict[str, _Attr] = {}
        for method in methods(cls).values():
            me = self_name(method)
            if me is None:
                continue
            local_items, local_wrapped, local_mods = self._locals(facts, method)
            for node in sorted(_walk_scope(method.body), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
                self._collect(facts, node, me, attrs, local_items, local_wrapped, local_mods)
        called = self._called_items(cls)
        for attr in sorted(attrs.values(), key=lambda a: (a.first.lineno, a.first.col_offset) if a.first else (0, 0)):
            if attr.first is None or attr.name in wrapped or not attr.container:
                continue
            if not attr.modules and not (attr.unknown and attr.name in called):
                continue
            yield self._finding(facts, cls, attr, called)

    # -- collection ------------------------------------------------------------------
    def _elements(self, facts, value, local_mods: dict[str, bool]):
        """(modules, unknown, others) among the items a container expression holds."""
        items: list[ast.AST] = []
        if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
            items = list(value.elts)
        elif isinstance(value, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            items = [value.elt]
        elif isinstance(value, ast.Dict):
            items = [v for v in value.values]
        elif isinstance(value, ast.DictComp):
            items = [value.value]
        else:
            items = [value]
        mods, unknown, others = [], [], []
        for item in items:
            if isinstance(item, ast.Starred):
                continue
            if isinstance(item, ast.Name) and item.id in local_mods:
                if local_mods[item.id]:  # False: registered with add_module/register_module/setattr
                    mods.append(item)
                continue
            if stateless_local_class(facts, item):
                continue  # nn.L1Loss(), nn.ReLU(), a loss class of this file holding nothing: nothing to register
            verdict = module_construction(facts, item)
            (mods if verdict else unknown if verdict is None else others).append(item)
        return mods, unknown, others

    def _locals(self, facts, method):
        """Local containers of one method (name -> their items), the locals wrapped in
        a container or registered, and the locals holding one module."""
        items: dict[str, dict] = {}
        local_mods: dict[str, bool] = {}  # name -> holds a module (False: one registered by hand)
        wrapped: set[str] = set()
        registered = self._registered_locals(facts, method)
        for node in _walk_scope(method.body):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                if name in registered:
                    local_mods[name] = False
                elif module_construction(facts, node.value):
                    local_mods[name] = True
                kind = _container_kind(node.value)
                if kind:
                    entry = items.setdefault(name, {"kind": kind, "mods": [], "unknown": [], "others": [], "keys": []})
                    m, u, o = self._elements(facts, node.value, local_mods)
                    entry["mods"] += m
                    entry["unknown"] += u
                    entry["others"] += o
                    if isinstance(node.value, ast.Dict):
                        entry["keys"] += node.value.keys
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
                name = node.func.value.id
                if name in items and node.func.attr in _ADDERS and node.args:
                    m, u, o = self._elements(facts, node.args[-1] if node.func.attr != "extend" else node.args[0], local_mods)
                    items[name]["mods"] += m
                    items[name]["unknown"] += u
                    items[name]["others"] += o
            if isinstance(node, ast.Call) and facts.resolve(node.func) in CONTAINERS:
                for sub in _walk(node):
                    if isinstance(sub, ast.Name):
                        wrapped.add(sub.id)
        wrapped |= self._registered_names(method)
        return items, wrapped, local_mods

    def _collect(self, facts, node, me, attrs, local_items, local_wrapped, local_mods):
        def get(name):
            return attrs.setdefault(name, _Attr(name))

        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            for target in targets:
                attr = self_attr(target, me)
                if attr is not None:
                    info = get(attr)
                    kind = _container_kind(value)
                    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and self_attr(value.left, me) == attr:
                        m, u, o = self._elements(facts, value.right, local_mods)
                        info.modules += m
                        info.unknown += u
                        info.others += o
                        info.how = info.how or "`+` concatenation"
                        continue
                    if info.first is None:
                        if isinstance(value, ast.Name) and value.id in local_items and value.id not in local_wrapped:
                            entry = local_items[value.id]
                            info.first, info.container, info.local = value, entry["kind"], value.id
                            info.modules += entry["mods"]
                            info.unknown += entry["unknown"]
                            info.others += entry["others"]
                            info.keys += entry["keys"]
                            info.how = "a local list"
                        elif kind:
                            info.first, info.container = value, kind
                            m, u, o = self._elements(facts, value, local_mods)
                            info.modules += m
                            info.unknown += u
                            info.others += o
                            if isinstance(value, ast.Dict):
                                info.keys += value.keys
                            info.how = "a literal"
                        else:
                            info.first = value  # something else first: not ours
                            info.container = ""
                elif isinstance(target, ast.Subscript):
                    attr = self_attr(target.value, me)
                    if attr is not None:
                        info = get(attr)
                        m, u, o = self._elements(facts, value, local_mods)
                        info.modules += m
                        info.unknown += u
                        info.others += o
                        info.keys.append(target.slice)
                        info.how = info.how or "item assignment"
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            attr = self_attr(node.target, me)
            if attr is not None:
                info = get(attr)
                m, u, o = self._elements(facts, node.value, local_mods)
                info.modules += m
                info.unknown += u
                info.others += o
                info.how = info.how or "`+=`"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _ADDERS:
            attr = self_attr(node.func.value, me)
            if attr is not None and node.args:
                info = get(attr)
                arg = node.args[0] if node.func.attr == "extend" else node.args[-1]
                m, u, o = self._elements(facts, arg, local_mods)
                info.modules += m
                info.unknown += u
                info.others += o
                info.how = info.how or f"`.{node.func.attr}()`"

    @staticmethod
    def _registered_locals(facts, method) -> set[str]:
        """Local names passed to `self.add_module(n, NAME)`, `self.register_module(n, NAME)`
        or `setattr(self, n, NAME)`: those modules are registered, whatever list also holds them."""
        out: set[str] = set()
        for node in _walk_scope(method.body):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            value = None
            if isinstance(func, ast.Attribute) and func.attr in ("add_module", "register_module") and len(node.args) >= 2:
                value = node.args[1]
            elif facts.resolve(func) == "builtins.setattr" and len(node.args) == 3:
                value = node.args[2]
            if isinstance(value, ast.Name):
                out.add(value.id)
        return out

    @staticmethod
    def _registered_names(func) -> set[str]:
        """Names (and `self.x` attributes, as "self.x") iterated by a loop that calls
        add_module / register_module / setattr(self, ...)."""
        out: set[str] = set()
        for loop in _walk(func):
            if not isinstance(loop, (ast.For, ast.AsyncFor)):
                continue
            registers = any(
                isinstance(n, ast.Call)
                and (
                    (isinstance(n.func, ast.Attribute) and n.func.attr in ("add_module", "register_module"))
                    or (isinstance(n.func, ast.Name) and n.func.id == "setattr")
                )
                for n in _walk(loop)
            )
            if not registers:
                continue
            for sub in _walk(loop.iter):
                if isinstance(sub, ast.Name):
                    out.add(sub.id)
                elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                    out.add(f"{sub.value.id}.{sub.attr}")
        return out

    def _wrapped(self, facts, cls) -> set[str]:
        """Attributes the class wraps in a container, assigns a container, or registers."""
        out: set[str] = set()
        for method in methods(cls).values():
            me = self_name(method)
            if me is None:
                continue
            for node in _walk(method):
                if isinstance(node, ast.Call) and facts.resolve(node.func) in CONTAINERS:
                    for sub in _walk(node):
                        attr = self_attr(sub, me)
                        if attr is not None:
                            out.add(attr)
                    parent = facts.parent(node)
                    if isinstance(parent, (ast.Assign, ast.AnnAssign)):
                        for target in parent.targets if isinstance(parent, ast.Assign) else [parent.target]:
                            attr = self_attr(target, me)
                            if attr is not None:
                                out.add(attr)
            for name in self._registered_names(method):
                if name.startswith(f"{me}."):
                    out.add(name.split(".", 1)[1])
        return out

    @staticmethod
    def _called_items(cls) -> set[str]:
        """Attributes whose items the class calls: `for l in self.x: l(y)`, `self.x[i](y)`."""
        out: set[str] = set()
        for method in methods(cls).values():
            me = self_name(method)
            for node in _walk(method):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
                    attr = self_attr(node.func.value, me)
                    if attr is not None:
                        out.add(attr)
                loops = []
                if isinstance(node, (ast.For, ast.AsyncFor)):
                    loops.append((node.target, node.iter, node))
                elif isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
                    loops += [(gen.target, gen.iter, node) for gen in node.generators]
                for target, it, scope in loops:
                    attrs = {a for a in (self_attr(s, me) for s in _walk(it)) if a}
                    if not attrs:
                        continue
                    bound = {n.id for n in _walk(target) if isinstance(n, ast.Name)}
                    if any(
                        isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in bound
                        for c in _walk(scope)
                    ):
                        out |= attrs
        return out

    # -- reporting ---------------------------------------------------------------------
    def _finding(self, facts, cls, attr: _Attr, called):
        example = (attr.modules or attr.unknown)[0]
        container = {"list": "list", "tuple": "tuple", "dict": "dict"}[attr.container]
        wrapper = "ModuleDict" if container == "dict" else "ModuleList"
        snippet = " ".join(facts.text(example).split())
        snippet = snippet if len(snippet) <= 50 else snippet[:47] + "..."
        key = "<key>" if container == "dict" else "0"
        message = (
            f"`self.{attr.name}` in `{cls.name}` keeps modules in a plain {container}, not `nn.{wrapper}`: "
            "they are not registered"
        )
        reason = self._no_fix_reason(facts, cls, attr, called)
        if reason is not None:
            return self.finding(facts, facts.parent(attr.first), message + f" (no automatic fix: {reason})")
        spelled = facts.names.alias_for(f"torch.nn.{wrapper}")
        data = {"wrapper": spelled or f"torch.nn.{wrapper}", "add_import": spelled is None}
        return self.finding(
            facts, facts.parent(attr.first), message,
            fix=f"wrap in `nn.{wrapper}` (adds state_dict keys under `{attr.name}.{key}.`)",
            unsafe=True, data=data,
        )

    def _no_fix_reason(self, facts, cls, attr: _Attr, called) -> Optional[str]:
        if attr.others:
            return f"`{facts.text(attr.others[0])[:40]}` is not a module"
        if attr.unknown and attr.name not in called:
            return "some items may not be modules"
        if attr.container == "dict":
            for key in attr.keys:
                if not _stringy(facts, key):
                    return "nn.ModuleDict needs string keys"
            if isinstance(attr.first, ast.DictComp):
                key = attr.first.key
                if not ((isinstance(key, ast.Constant) and isinstance(key.value, str)) or isinstance(key, ast.JoinedStr)):
                    return "nn.ModuleDict needs string keys"
        unsupported = _DICT_ONLY if attr.container == "dict" else _LIST_ONLY
        for method in methods(cls).values():
            me = self_name(method)
            for node in _walk(method):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in unsupported
                    and self_attr(node.func.value, me) == attr.name
                ):
                    return f"the class calls `.{node.func.attr}()` on it, which nn.{'ModuleDict' if attr.container == 'dict' else 'ModuleList'} lacks"
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and self_attr(node.right, me) == attr.name:
                    return "a list is added in front of it"
        if attr.local is not None:
            first_row = attr.first.lineno
            func = facts.enclosing_function(attr.first)
            for node in _walk(func):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == attr.local
                    and node.lineno > first_row
                ):
                    return f"`{attr.local}` is changed after it is assigned"
        return None
