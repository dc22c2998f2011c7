"""Exports with a fixed example input, and the code of the exported model that sizes
things by its input: the reasoning of CL104.

- `static_exports`: calls of `torch.onnx.export`, `torch.export.export`,
  `torch.jit.trace`, ... (analysis/torch_api.py EXPORTERS) that pass no dynamic-shape
  option, with the sizes of their first example input when the code shows them: a torch
  factory (`torch.randn(1, 3, 64, 64)`, `torch.rand(1, 3, h, w)`), a name or tuple
  holding one, or an image made a batch of one (`transform(img).unsqueeze(0)`).
- `resizing_node`: where the exported model resizes by its input (an interpolate or
  upsample, or a size read from the input's shape that reaches a size argument), in
  this file or, through the region index, in the file that defines the model.
"""
from __future__ import annotations

import ast
import os
from typing import Iterator, Optional

from ...analysis.modules.classes import methods
from ...analysis.semantic.facts import RegionsFact
from ...analysis.project.context import path_for_module
from ...analysis.reach.regions import static_export
from ...analysis.tensors.resize_calls import RESIZE
from ...analysis.tensors.shapes import is_shape_value, shape_names, sink_of, whole_shape_of
from ...analysis.torch_api import EXPORTERS
from ...analysis.semantic.walk import walk as _walk
from ...analysis.semantic.walk import walk_scope as _walk_scope

# export function -> (position of the example args, keywords that make it dynamic)
_EXPORTS = {api: how for api, how in EXPORTERS.items() if how[1] is not None}
# `transform(img).unsqueeze(0)`: an image made into a batch of one (4-D) by the code
_IMAGE_WORDS = ("transform", "to_tensor", "totensor", "preprocess", "img", "image", "frame", "photo")
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




def static_exports(facts) -> Iterator[tuple[ast.Call, list[ast.AST]]]:
    """(call, sizes of the 4-D example input) for exports without dynamic shapes."""
    for call in facts.calls_to(*_EXPORTS):
        api = facts.resolve(call.func)
        if not static_export(api, call):
            continue
        pos = _EXPORTS[api][0]
        example = next((kw.value for kw in call.keywords if kw.arg == "args"), None)
        if example is None and len(call.args) > pos:
            example = call.args[pos]
        dims = example_dims(facts, example)
        if dims is not None and len(dims) == 4 and call.args:
            yield call, dims


def _def_resize(facts, func) -> Optional[ast.AST]:
    """Where a def in the exported region resizes by its input; for a module's
    `forward`, a resizing layer built by any method of the class counts too."""
    node = _resize_in(facts, func)
    if node is None and func.name in ("forward", "__call__"):
        cls = facts.parent(func)
        if isinstance(cls, ast.ClassDef):
            for method in methods(cls).values():
                node = node or _module_resize_in(facts, method)
    return node


def resizing_node(facts, call) -> Optional[tuple]:
    """(node, region or None, the file's facts) where the model exported by `call`
    resizes by its input: in this file, in the file defining it, or a resizing layer of
    a container built in the exporting scope."""
    row = call.lineno
    for func in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
        region = facts.in_region(func, "traced")
        if region is None or not any(s.row == row and s.path == facts.path for s in region.sites):
            continue
        node = _def_resize(facts, func)
        if node is not None:
            return node, region, facts
    found = _resizes_elsewhere(facts, call)
    if found is not None:
        return found
    # a built-in container: `head = nn.Sequential(..., nn.Upsample(...))` exported in the same scope
    target = call.args[0]
    if isinstance(target, ast.Name):
        value = _assigned_value(facts, target)
        if value is not None:
            for sub in _walk(value):
                if isinstance(sub, ast.Call) and facts.resolve(sub.func) in RESIZE:
                    return sub, None, facts
    return None


def accepts_one_size(facts, call) -> bool:
    """The exported model asserts its input's height or width (`assert H == self.img_size[0]`,
    timm's `_assert(H == self.img_size[0], ...)` in a ViT's patch embedding): it runs at no
    other resolution, so an export at that one size loses nothing. Read in the defs of the
    exported region, in this file and in the files defining it."""
    return any(_asserts_size(other, func) for other, func, _region in _region_defs(facts, call, other_files_only=False))


def _asserts_size(facts, func) -> bool:
    """`func` asserts that a height or width of its input (a parameter) equals a size the
    model is configured with: an `assert` (or a call of an `_assert` helper) whose test
    holds `H == self.img_size[0]` (`B, C, H, W = x.shape`). A check between two computed
    sizes (`int(w0) == patch_pos_embed.shape[-2]` after resizing a position embedding)
    fixes nothing."""
    args = func.args
    params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    if not params:
        return False
    me = params[0] if isinstance(facts.parent(func), ast.ClassDef) else None
    inputs = set(params[1:] if me else params)
    names = None
    for node in _walk(func):
        if isinstance(node, ast.Assert):
            test = node.test
        elif isinstance(node, ast.Call) and node.args and (facts.text(node.func) or "").endswith("_assert"):
            test = node.args[0]
        else:
            continue
        names = _spatial_names(func, inputs) if names is None else names
        compares = [test] if isinstance(test, ast.Compare) else \
            [v for v in test.values if isinstance(v, ast.Compare)] if isinstance(test, ast.BoolOp) else []
        for compare in compares:
            if len(compare.ops) != 1 or not isinstance(compare.ops[0], ast.Eq):
                continue
            left, right = compare.left, compare.comparators[0]
            if any(_spatial_size(a, names) and _configured(b, me) for a, b in ((left, right), (right, left))):
                return True
    return False


def _configured(node, me: Optional[str]) -> bool:
    """A constant, or what the module holds (`self.img_size[0]`, `self.H`)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int)
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return me is not None and isinstance(node, ast.Name) and node.id == me


def _spatial_size(node, names: set[str]) -> bool:
    """A name unpacked as an input's height or width. (`x.size(2)` alone does not say
    which dimension it is: of a token tensor it is the feature count, CREStereo's
    `assert self.d_model == feat0.size(2)`.)"""
    return isinstance(node, ast.Name) and node.id in names


def _spatial_names(func, inputs: set[str]) -> set[str]:
    """The last two names of a four- or five-name unpack of an input's whole shape
    (`B, C, H, W = x.shape`)."""
    names: set[str] = set()
    for node in _walk(func):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
            base = whole_shape_of(node.value)
            elts = node.targets[0].elts
            if base is not None and base.id in inputs and len(elts) in (4, 5) \
                    and all(isinstance(e, ast.Name) for e in elts):
                names.update(e.id for e in elts[-2:])
    return names


def _resizes_elsewhere(facts, call):
    """The same, for a model whose code is in another file of the project."""
    for other, func, region in _region_defs(facts, call, other_files_only=True):
        node = _def_resize(other, func)
        if node is not None:
            return node, region, other
    return None


def _region_defs(facts, call, other_files_only: bool) -> Iterator[tuple]:
    """(the file's facts, def, region) for each def of the traced region of the export
    `call`, found by the region's dotted names in the files of the project that define
    them (only other files than this one with `other_files_only`)."""
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
            if other is None or other_files_only and other is facts:
                continue
            qualname = ".".join(parts[cut:])
            for func in other.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
                if other.qualname_of(func) == qualname:
                    yield other, func, region
            break


def _module_resize_in(facts, func):
    for node in _walk(func):
        if isinstance(node, ast.Call) and facts.resolve(node.func) in RESIZE:
            return node
    return None


def _resize_in(facts, func):
    names = shape_names(facts, func)
    for node in _walk(func):
        if isinstance(node, ast.Call) and facts.resolve(node.func) in RESIZE:
            return node
    batch = None
    for node in _walk(func):
        if isinstance(node, (ast.Subscript, ast.Attribute, ast.Call, ast.Name)) and is_shape_value(facts, node, names):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                continue
            parent = facts.parent(node)
            if _batch_or_channel(node) or (isinstance(parent, ast.Subscript) and parent.value is node):
                continue
            if isinstance(node, ast.Name):
                batch = _batch_names(facts, func, names) if batch is None else batch
                if node.id in batch:
                    continue
            if sink_of(facts, node, func) is not None:
                return node
    return None


def _batch_names(facts, func, names: set[str]) -> set[str]:
    """Names that only ever hold the batch or channel count, as `x.shape[0]` and
    `x.shape[1]` do for `_batch_or_channel`: the first two of a four-name unpack (`B, C, H,
    W = x.shape`), the first of any other (`b, n, c = x.shape`: the second is a token
    count), `B = x.shape[0]`. EfficientFormerV2's attention reshapes by `B` at its one
    resolution (bench/dev9): a batch size is no resize."""
    first: set[str] = set()
    other: set[str] = set()
    for node in _walk(func):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name):
                if _batch_or_channel(node.value) and is_shape_value(facts, node.value, names):
                    first.add(target.id)
                else:
                    other.add(target.id)
            elif isinstance(target, (ast.Tuple, ast.List)) and is_shape_value(facts, node.value, names) \
                    and _whole_shape(node.value):
                counts = 2 if len(target.elts) == 4 else 1
                for i, elt in enumerate(target.elts):
                    if isinstance(elt, ast.Name):
                        (first if i < counts else other).add(elt.id)
            else:
                other.update(n.id for n in _walk(target) if isinstance(n, ast.Name))
    return first - other  # (a name bound anything else anywhere in the def may be a size)


def _whole_shape(node) -> bool:
    """`x.shape`, `x.size()`, or a slice of it from the start (`x.shape[:2]`)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "shape"
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Attribute) and node.func.attr == "size" and not node.args
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        return node.slice.lower is None and _whole_shape(node.value)
    return False


def _batch_or_channel(node) -> bool:
    """`x.shape[0]`, `x.size(1)`: batch and channel counts, not the resolution."""
    index = None
    if isinstance(node, ast.Subscript):
        index = node.slice
    elif isinstance(node, ast.Call) and node.args:
        index = node.args[0]
    return isinstance(index, ast.Constant) and index.value in (0, 1)
