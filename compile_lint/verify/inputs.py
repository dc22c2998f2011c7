"""Input synthesis: image-like tensors for the common cases, config specs for the rest.

Runs in the worker (imports torch). A target whose arguments cannot be guessed is not
guessed at: the problem names each argument and prints the config entry to add.
"""
from __future__ import annotations

import inspect
from typing import Any, Optional

import torch

from .config import InputSpec, input_table, inputs_entry, toml_value  # noqa: F401  (re-exported)
from .loader import TargetProblem, call_signature

# Argument names that are images in real compositing and restoration code.
IMAGE_NAMES = {
    "x", "img", "image", "images", "input", "inp", "inputs", "frame", "frames", "base", "layer", "top",
    "bottom", "fg", "bg", "foreground", "background", "src", "dst", "source", "pixels", "rgb", "rgba",
    "photo", "picture", "texture", "sprite", "canvas", "tile", "overlay", "a", "b", "lr", "hr", "low",
    "high", "feat", "features", "content", "style", "backdrop", "blend",
}
# Single-channel images.
MASK_NAMES = {"mask", "alpha", "matte", "opacity", "trimap", "key", "coverage", "weight_map"}
CHANNEL_PARAMS = ("in_channels", "channels", "num_channels", "in_ch", "c_in")
DEFAULT_CHANNELS = 3


def channel_count(target: Any) -> tuple[int, str]:
    """The input channel count and where it came from: the first conv or linear layer,
    else the constructor's default channel argument, else RGB."""
    if isinstance(target, torch.nn.Module):
        for layer in target.modules():
            if isinstance(layer, (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)):
                return layer.in_channels, f"{type(layer).__name__}.in_channels"
            if isinstance(layer, torch.nn.Linear):
                return layer.in_features, "Linear.in_features"
        for name in CHANNEL_PARAMS:
            value = getattr(target, name, None)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value, f"self.{name}"
        try:
            params = inspect.signature(type(target).__init__).parameters
        except (TypeError, ValueError):
            params = {}
        for name in CHANNEL_PARAMS:
            if name in params and isinstance(params[name].default, int):
                return params[name].default, f"__init__ default {name}"
    return DEFAULT_CHANNELS, "RGB default"


def _first_layer_is_linear(target: Any) -> bool:
    if not isinstance(target, torch.nn.Module):
        return False
    for layer in target.modules():
        if isinstance(layer, (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)):
            return False
        if isinstance(layer, torch.nn.Linear):
            return True
    return False


# Integer token ids (text and discrete-latent models); their vocabulary is the first
# embedding's size.
TOKEN_NAMES = {"tokens", "token_ids", "input_ids", "ids", "idx", "indices", "codes", "text", "labels", "captions"}
# Names that are images whatever the first layer is (a ViT's linear patch embedding
# still takes an image: `img` is not a feature vector).
STRONG_IMAGE_NAMES = {"img", "image", "images", "frame", "frames", "pixels", "pixel_values", "rgb", "rgba", "photo",
                      "picture", "lr", "hr", "content", "style"}
# Names of dict arguments (a batch from a data loader), when no annotation says so.
DICT_NAMES = {"batch", "sample", "data", "inputs", "example", "item", "feed"}
SEQUENCE_LENGTH = 16
MAX_TRIES = 24  # candidate input sets tried with one tiny eager call each
SIZE_ATTRIBUTES = ("image_size", "img_size", "input_size", "resolution", "sample_size")


def _annotation_text(param: inspect.Parameter) -> str:
    annotation = param.annotation
    if annotation is inspect.Parameter.empty:
        return ""
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))


def _looks_like_tensor(param: inspect.Parameter) -> bool:
    annotation = param.annotation
    if annotation is torch.Tensor or annotation == "torch.Tensor" or annotation == "Tensor":
        return True
    name = param.name.lower()
    return name in IMAGE_NAMES or name in MASK_NAMES or name in TOKEN_NAMES


def dict_keys(target: Any, param: str) -> list[str]:
    """The string keys the target's own code reads from a dict argument: `batch["image"]`,
    `batch.get("mask")` (its forward's source, parsed: nothing runs)."""
    import ast
    import textwrap

    fn = target.forward if isinstance(target, torch.nn.Module) else target
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return []
    keys: list[str] = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == param:
            index = node.slice
            if isinstance(index, ast.Constant) and isinstance(index.value, str):
                key = index.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == param and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            key = node.args[0].value
        if key is not None and key not in keys:
            keys.append(key)
    return keys


def _vocabulary(target: Any) -> Optional[int]:
    if isinstance(target, torch.nn.Module):
        for layer in target.modules():
            if isinstance(layer, torch.nn.Embedding):
                return layer.num_embeddings
    return None


def _tensor_candidates(name: str, keyword: Optional[str], target: Any, channels: int, linear: bool,
                       annotated: bool) -> list[InputSpec]:
    """Ways to make one tensor argument, most likely first (one eager call picks one)."""
    lowered = name.lower()
    vocabulary = _vocabulary(target)
    if lowered in TOKEN_NAMES and vocabulary:
        return [InputSpec(shape=[1, SEQUENCE_LENGTH], dtype="int64", range=(0.0, float(vocabulary - 1)), name=keyword)]
    if lowered in MASK_NAMES:
        return [InputSpec(shape=[1, 1, "H", "W"], name=keyword), InputSpec(shape=[1, "H", "W"], name=keyword)]
    image = InputSpec(shape=[1, channels if not linear else DEFAULT_CHANNELS, "H", "W"], name=keyword)
    candidates = [image]
    if linear:
        vector = InputSpec(shape=[1, channels], name=keyword)
        sequence = InputSpec(shape=[1, SEQUENCE_LENGTH, channels], name=keyword)
        # a linear first layer: features, unless the name says image (a ViT's patch embedding)
        candidates = [image, vector, sequence] if lowered in STRONG_IMAGE_NAMES else [vector, sequence, image]
    elif channels != DEFAULT_CHANNELS:
        candidates.append(InputSpec(shape=[1, DEFAULT_CHANNELS, "H", "W"], name=keyword))
    if vocabulary and lowered not in STRONG_IMAGE_NAMES:
        candidates.append(InputSpec(shape=[1, SEQUENCE_LENGTH], dtype="int64", range=(0.0, float(vocabulary - 1)),
                                    name=keyword))
    return candidates


def _channel_splits(specs: list[InputSpec], channels: int) -> list[list[InputSpec]]:
    """Image arguments that the first conv sees concatenated (`conv(cat([img, mask]))`:
    4 channels for an RGB image and a mask; 6 for two RGB frames): each image's share
    of `channels`, masks one each."""
    images = [n for n, s in enumerate(specs) if s.shape is not None and len(s.shape) == 4 and s.shape[1] == channels
              and s.dtype == "float32"]
    masks = [n for n, s in enumerate(specs) if s.shape is not None and len(s.shape) == 4 and s.shape[1] == 1]
    if len(images) + len(masks) < 2 or not images:
        return []
    out = []
    for share in sorted({(channels - len(masks)) // len(images), channels // len(images), DEFAULT_CHANNELS}):
        if share <= 0 or share == channels:
            continue
        split = [InputSpec(shape=[1, share, "H", "W"], name=s.name) if n in images else s for n, s in enumerate(specs)]
        out.append(split)
    return out


def synthesise(target: Any, target_ref: str, display_name: str,
               syntax: Optional[dict] = None) -> tuple[list[InputSpec], Optional[list]]:
    """Input specs for `target`'s call and the resolutions to run it at (None: the
    run's), or TargetProblem saying what to add to the config.

    Each argument gets the ways it could be made (an image with the first conv's
    channels, a mask, token ids for an embedding, a feature vector or a token sequence
    for a linear first layer, a dict of those for `batch["image"]`); tiny eager calls at
    16x16 pick the first combination that runs, with images that a conv sees
    concatenated sharing its channels. A model that takes only its own size (a ViT's
    fixed patch grid) is tried at that size. Arguments that are none of these are not
    guessed: the problem shows the entry to paste."""
    signature = call_signature(target)
    if signature is None:
        raise TargetProblem(f"cannot read the signature of {display_name}; add inputs = [...] to its "
                            f"[[verify.targets]] entry", skipped=True)
    channels, _ = channel_count(target)
    linear = _first_layer_is_linear(target)
    options: list[list[InputSpec]] = []
    missing: list[str] = []
    for param in signature.parameters.values():
        if param.name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.default is not inspect.Parameter.empty:
            continue  # the author's default is the most realistic value
        keyword = param.name if param.kind == param.KEYWORD_ONLY else None
        annotation = _annotation_text(param).lower()
        keys = dict_keys(target, param.name)
        if keys and (param.name.lower() in DICT_NAMES or "dict" in annotation or "mapping" in annotation
                     or not _looks_like_tensor(param)):
            per_key = {key: _tensor_candidates(key, None, target, channels, linear, False)[0] for key in keys}
            options.append([InputSpec(fields=per_key, name=keyword)])
            continue
        if not _looks_like_tensor(param):
            missing.append(param.name)
            options.append([InputSpec(name=param.name)])  # placeholder for the message
            continue
        options.append(_tensor_candidates(param.name, keyword, target, channels, linear, bool(annotation)))
    if missing:
        raise TargetProblem(_what_to_add(target_ref, display_name, [o[0] for o in options], missing, syntax or {}),
                            skipped=True)
    tries = _combinations(options)
    for split in _channel_splits(tries[0], channels) if tries else []:
        tries.insert(1, split)
    for specs in tries[:MAX_TRIES]:
        if _runs(target, specs, [16, 16]):
            return specs, None
    # nothing runs at 16x16: a model that takes only its own size (a ViT's patch grid)
    for size in _own_sizes(target):
        for specs in tries[:MAX_TRIES]:
            if _runs(target, specs, size):
                patch = _patch(target) or _linear_patch(target)
                other = [size[0], size[1] + patch] if patch else None
                sizes = [size] + ([other] if other and _runs(target, specs, other) else [])
                return specs, sizes
    return (tries[0] if tries else []), None


def _combinations(options: list[list[InputSpec]]) -> list[list[InputSpec]]:
    """Every way to make the arguments together, the first choices first (bounded)."""
    combos: list[list[InputSpec]] = [[]]
    for choices in options:
        combos = [c + [choice] for c in combos for choice in choices][:MAX_TRIES]
    return combos


def _patch(target: Any) -> Optional[int]:
    """The stride of a patch-embedding conv (kernel == stride > 1), if the first conv is one."""
    if isinstance(target, torch.nn.Module):
        for layer in target.modules():
            if isinstance(layer, torch.nn.Conv2d):
                stride = layer.stride[0]
                return stride if stride > 1 and layer.kernel_size[0] == stride else None
    return None


def _linear_patch(target: Any) -> Optional[int]:
    """The patch side of a linear patch embedding: its first Linear takes p * p * 3."""
    if _first_layer_is_linear(target):
        features = next(m for m in target.modules() if isinstance(m, torch.nn.Linear)).in_features
        side = round((features / DEFAULT_CHANNELS) ** 0.5)
        if side > 1 and side * side * DEFAULT_CHANNELS == features:
            return side
    return None


def _position_grid(target: Any) -> Optional[int]:
    """The side of the patch grid a learned position embedding is sized for (n or n + 1
    positions, n a square: a class token)."""
    if not isinstance(target, torch.nn.Module):
        return None
    for name, parameter in target.named_parameters():
        if "pos" in name.lower() and parameter.dim() >= 2:
            for count in (parameter.shape[-2], parameter.shape[-2] - 1):
                side = round(count ** 0.5)
                if side > 1 and side * side == count:
                    return side
    return None


def _own_sizes(target: Any) -> list[list[int]]:
    """Sizes the model says it takes: an `image_size` (or similar) attribute, else two or
    four patches of its patch-embedding conv."""
    sizes: list[list[int]] = []
    if isinstance(target, torch.nn.Module):
        for module in target.modules():
            for name in SIZE_ATTRIBUTES:
                value = getattr(module, name, None)
                if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 512:
                    sizes.append([value, value])
                elif isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, int) for v in value):
                    sizes.append([int(value[0]), int(value[1])])
    patch = _patch(target) or _linear_patch(target)
    grid = _position_grid(target)
    if patch and grid:
        sizes.append([grid * patch, grid * patch])
    if patch:
        sizes += [[2 * patch, 2 * patch], [4 * patch, 4 * patch]]
    out = []
    for size in sizes:
        if size not in out:
            out.append(size)
    return out[:4]


def _runs(target: Any, specs: list[InputSpec], size: list) -> bool:
    device = next((p.device for p in target.parameters()), torch.device("cpu")) if isinstance(
        target, torch.nn.Module) else torch.device("cpu")
    try:
        args, kwargs = make_inputs(specs, size, 0, str(device), None)
        with torch.no_grad():
            target(*args, **kwargs)
    except Exception:
        return False
    return True


def target_entry(target_ref: str, syntax: dict, lines: list[str]) -> str:
    """A [[verify.targets]] entry in the syntax of the project's config file (valid TOML:
    tests/test_verify_inputs.py pastes every suggestion back)."""
    table = syntax.get("targets_table") or "[[verify.targets]]"
    return "\n".join([table, f"target = {toml_value(target_ref)}"] + lines)


def _what_to_add(target_ref: str, display_name: str, specs: list[InputSpec], missing: list[str],
                 syntax: dict) -> str:
    entries = []
    for spec in specs:
        if spec.shape is None and spec.fields is None and spec.name in missing:
            entries.append(f"    {{ shape = [1, 3, \"H\", \"W\"] }},  # {spec.name}: fill in its shape, or "
                           f"{{ value = ... }} for a non-tensor")
        else:
            entries.append(f"    {toml_value(input_table(spec))},")
    where = syntax.get("config_file") or "compile-lint.toml"
    return (f"cannot synthesise {', '.join(repr(m) for m in missing)} for {display_name} (not an image-like "
            f"tensor argument); add to {where}:\n"
            + target_entry(target_ref, syntax, ["inputs = ["] + entries + ["]"]))


_TORCH_DTYPES = {
    "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64,
    "int64": torch.int64, "int32": torch.int32, "uint8": torch.uint8, "bool": torch.bool,
}


def torch_dtype(name: str) -> torch.dtype:
    return _TORCH_DTYPES[name]


def uses_resolution(specs: list[InputSpec]) -> bool:
    return any(s.uses_resolution() for s in specs)


def make_tensor(spec: InputSpec, resolution: Optional[list], seed: int, device: str,
                float_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    height, width = resolution or (16, 16)
    shape = [height if d == "H" else width if d == "W" else d for d in spec.shape]
    dtype = torch_dtype(spec.dtype)
    low, high = spec.range
    generator = torch.Generator().manual_seed(seed)
    if spec.fill == "zeros":
        values = torch.full(shape, low if low > 0 else 0.0, dtype=torch.float64)
    elif spec.fill == "ones":
        values = torch.full(shape, high, dtype=torch.float64)
    elif spec.fill == "ramp":
        count = 1
        for dim in shape:
            count *= dim
        values = torch.linspace(low, high, count, dtype=torch.float64).reshape(shape)
    elif spec.fill == "checker":
        rows = torch.arange(shape[-2] if len(shape) > 1 else 1).view(-1, 1)
        cols = torch.arange(shape[-1]).view(1, -1)
        pattern = ((rows + cols) % 2).to(torch.float64) * (high - low) + low
        values = pattern.expand(shape).clone()
    else:
        values = torch.rand(shape, generator=generator, dtype=torch.float64) * (high - low) + low
    if dtype == torch.bool:
        tensor = values > (low + high) / 2
    elif not dtype.is_floating_point:
        tensor = values.round().to(dtype)
    else:
        tensor = values.to(float_dtype if float_dtype is not None else dtype)
    return tensor.to(device)


def make_inputs(specs: list[InputSpec], resolution: Optional[list], seed: int, device: str,
                float_dtype: Optional[torch.dtype] = None) -> tuple[list, dict]:
    """Positional and keyword arguments for one call. Float tensors take `float_dtype`
    when given (the check's dtype); each input has its own seed so fg and bg differ."""
    args: list = []
    kwargs: dict = {}
    for index, spec in enumerate(specs):
        if spec.fields is not None:  # a dict argument: each entry its own seed, after the positional ones
            value = {key: make_inputs([sub], resolution, seed * 1000 + 100 * (index + 1) + n, device, float_dtype)[0][0]
                     for n, (key, sub) in enumerate(spec.fields.items())}
        elif spec.shape is None:
            value = spec.value
        else:
            cast = float_dtype if torch_dtype(spec.dtype).is_floating_point else None
            value = make_tensor(spec, resolution, seed * 1000 + index, device, cast)
        if spec.name:
            kwargs[spec.name] = value
        else:
            args.append(value)
    return args, kwargs


def input_shapes(args: list, kwargs: dict) -> list:
    values = []
    for v in list(args) + list(kwargs.values()):
        values.extend(v.values() if isinstance(v, dict) else [v])
    return [list(v.shape) for v in values if isinstance(v, torch.Tensor)]
