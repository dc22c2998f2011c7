"""Input synthesis: image-like tensors for the common cases, config specs for the rest.

Runs in the worker (imports torch). A target whose arguments cannot be guessed is not
guessed at: the problem names each argument and prints the config entry to add.
"""
from __future__ import annotations

import inspect
from typing import Any, Optional

import torch

from .config import InputSpec
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


def _looks_like_tensor(param: inspect.Parameter) -> bool:
    annotation = param.annotation
    if annotation is torch.Tensor or annotation == "torch.Tensor" or annotation == "Tensor":
        return True
    return param.name.lower() in IMAGE_NAMES or param.name.lower() in MASK_NAMES


def synthesise(target: Any, target_ref: str, display_name: str, syntax: Optional[dict] = None) -> list[InputSpec]:
    """Input specs for `target`'s call, or TargetProblem saying what to add to the config."""
    signature = call_signature(target)
    if signature is None:
        raise TargetProblem(f"cannot read the signature of {display_name}; add inputs = [...] to its "
                            f"[[verify.targets]] entry", skipped=True)
    channels, _ = channel_count(target)
    linear = _first_layer_is_linear(target)
    specs: list[InputSpec] = []
    missing: list[str] = []
    for param in signature.parameters.values():
        if param.name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.default is not inspect.Parameter.empty:
            continue  # the author's default is the most realistic value
        if not _looks_like_tensor(param):
            missing.append(param.name)
            specs.append(InputSpec(name=param.name))  # placeholder for the message
            continue
        keyword = param.name if param.kind == param.KEYWORD_ONLY else None
        if linear:
            specs.append(InputSpec(shape=[1, channels], name=keyword))
        elif param.name.lower() in MASK_NAMES:
            specs.append(InputSpec(shape=[1, 1, "H", "W"], name=keyword))
        else:
            specs.append(InputSpec(shape=[1, channels, "H", "W"], name=keyword))
    if missing:
        raise TargetProblem(_what_to_add(target_ref, display_name, specs, missing, syntax or {}), skipped=True)
    return _split_concatenated_channels(target, specs, channels)


def _split_concatenated_channels(target: Any, specs: list[InputSpec], channels: int) -> list[InputSpec]:
    """Several images whose first conv sees them concatenated (`conv(cat([img0, img1]))`,
    6 input channels for two RGB frames): when the target fails eagerly with `channels`
    per image and runs with `channels / k`, take that. One tiny eager call decides."""
    images = [s for s in specs if s.shape is not None and len(s.shape) == 4 and s.shape[1] == channels]
    k = len(images)
    if k < 2 or channels % k or channels // k not in (1, 3, 4) or not isinstance(target, torch.nn.Module):
        return specs
    if _runs(target, specs):
        return specs
    split = [InputSpec(shape=[1, channels // k, "H", "W"], name=s.name) if s in images else s for s in specs]
    return split if _runs(target, split) else specs


def _runs(target: Any, specs: list[InputSpec]) -> bool:
    device = next((p.device for p in target.parameters()), torch.device("cpu"))
    args, kwargs = make_inputs(specs, [16, 16], 0, str(device), None)
    try:
        with torch.no_grad():
            target(*args, **kwargs)
    except Exception:
        return False
    return True


def _what_to_add(target_ref: str, display_name: str, specs: list[InputSpec], missing: list[str],
                 syntax: dict) -> str:
    entries = []
    for spec in specs:
        if spec.shape is None:
            entries.append(f"    {{ shape = [...], range = [0, 1] }},  # {spec.name}: fill in")
        else:
            dims = ", ".join(f'"{d}"' if isinstance(d, str) else str(d) for d in spec.shape)
            entries.append(f"    {{ shape = [{dims}] }},")
    where = syntax.get("config_file") or "compile-lint.toml"
    table = syntax.get("targets_table") or "[[verify.targets]]"
    return (f"cannot synthesise {', '.join(repr(m) for m in missing)} for {display_name} (not an image-like "
            f"tensor argument); add to {where}:\n"
            f"{table}\ntarget = \"{target_ref}\"\ninputs = [\n" + "\n".join(entries) + "\n]")


_TORCH_DTYPES = {
    "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64,
    "int64": torch.int64, "int32": torch.int32, "uint8": torch.uint8, "bool": torch.bool,
}


def torch_dtype(name: str) -> torch.dtype:
    return _TORCH_DTYPES[name]


def uses_resolution(specs: list[InputSpec]) -> bool:
    return any(s.shape and ("H" in s.shape or "W" in s.shape) for s in specs)


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
        if spec.shape is None:
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
    return [list(v.shape) for v in list(args) + list(kwargs.values()) if isinstance(v, torch.Tensor)]
