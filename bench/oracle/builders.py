"""Build the oracle bench's entries (bench/oracle/models.py): random weights, tiny configs.

Each builder returns (callable, args, kwargs) for one call. Inputs and constructor
arguments are written in models.py as small specs that `value()` turns into objects:

    ["randn", [1, 3, 64, 64]]        torch.randn(1, 3, 64, 64)  (also "rand", "ones", "zeros")
    ["randint", 100, [1, 16]]         torch.randint(0, 100, (1, 16))
    ["new", "pkg.mod:Name", {...}]    pkg.mod.Name(**{...}) (specs inside are built too)
    ["padmask", [2, 16], 3]           an attention mask of ones with 3 padded positions per row
    ["obj", "torch.nn:GELU"]          the object itself (a class passed as an argument)
    ["dtype", "float16"]              torch.float16
    anything else                     itself (lists and dicts element by element)

Only run in the models' venv (child.py imports this file there).
"""
from __future__ import annotations

import importlib


def _obj(path: str):
    module, _, name = path.partition(":")
    obj = importlib.import_module(module)
    for part in name.split(".") if name else ():
        obj = getattr(obj, part)
    return obj


def value(spec):
    import torch

    if isinstance(spec, list) and spec and isinstance(spec[0], str):
        head = spec[0]
        if head in ("randn", "rand", "ones", "zeros"):
            return getattr(torch, head)(*spec[1])
        if head == "randint":
            return torch.randint(0, spec[1], tuple(spec[2]))
        if head == "new":
            args = value(spec[2]) if len(spec) > 2 else {}
            return _obj(spec[1])(**args)
        if head == "padmask":  # ones, the first spec[2] positions of each row 0 (left padding)
            mask = torch.ones(*spec[1], dtype=torch.long)
            mask[..., : spec[2]] = 0
            return mask
        if head == "obj":
            return _obj(spec[1])
        if head == "dtype":
            return getattr(torch, spec[1])
    if isinstance(spec, list):
        return [value(v) for v in spec]
    if isinstance(spec, tuple):
        return tuple(value(v) for v in spec)
    if isinstance(spec, dict):
        return {k: value(v) for k, v in spec.items()}
    return spec


def module(target: str, init=None, args=(), kwargs=None, method: str = "", setup=None, random_weights=False):
    """Any class by import path (`pkg.mod:Class`), built with `init` (dict of specs),
    called with `args`/`kwargs` specs. `method` calls a bound method instead of
    `__call__` (the module is still what is declared compiled). `setup` is a list of
    [method, kwargs] called once after building (gpt-fast's setup_caches).
    `random_weights`: a constructor that loads a checkpoint (a URL, a file) gets an empty
    state dict and its `load_state_dict` does nothing, while it is built (no network)."""
    import torch

    torch.manual_seed(0)
    cls = _obj(target)
    if random_weights:
        with _no_checkpoints(torch):
            m = cls(**value(init or {}))
    else:
        m = cls(**value(init or {}))
    for name, kw in setup or ():
        getattr(m, name)(**value(kw))
    fn = getattr(m, method) if method else m
    return fn, tuple(value(list(args))), value(kwargs or {})


class _no_checkpoints:
    def __init__(self, torch):
        self.torch = torch

    def __enter__(self):
        torch = self.torch
        self.saved = (torch.hub.load_state_dict_from_url, torch.load, torch.nn.Module.load_state_dict)
        torch.hub.load_state_dict_from_url = lambda *a, **k: {}
        torch.load = lambda *a, **k: {}
        torch.nn.Module.load_state_dict = lambda self, *a, **k: None
        return self

    def __exit__(self, *exc):
        torch = self.torch
        torch.hub.load_state_dict_from_url, torch.load, torch.nn.Module.load_state_dict = self.saved


def function(target: str, args=(), kwargs=None):
    """A plain function (`kornia.filters:canny`): compiled as is."""
    return _obj(target), tuple(value(list(args))), value(kwargs or {})


def timm_model(name: str, size=64, batch=1, **kwargs):
    import timm
    import torch

    torch.manual_seed(0)
    m = timm.create_model(name, pretrained=False, num_classes=10, **kwargs)
    return m, (torch.randn(batch, 3, size, size),), {}


# Small sizes most transformers configs understand (directly or through attribute_map).
HF_TINY = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
    vocab_size=128, max_position_embeddings=64, head_dim=8,
)


def hf_model(config: str, model: str, inputs: dict, tiny: bool = True, config_kwargs=None):
    """transformers `model` class built from `config(**HF_TINY, **config_kwargs)`; the
    transformers on sys.path decides the release (an overlay for the older one)."""
    import torch
    import transformers

    torch.manual_seed(0)
    kwargs = dict(HF_TINY) if tiny else {}
    kwargs.update(value(config_kwargs or {}))
    cfg = getattr(transformers, config)(**kwargs)
    m = getattr(transformers, model)(cfg)
    return m, (), value(inputs)


def diffusers_model(model: str, init: dict, inputs: dict, method: str = ""):
    import diffusers
    import torch

    torch.manual_seed(0)
    m = getattr(diffusers, model)(**value(init))
    fn = getattr(m, method) if method else m
    return fn, (), value(inputs)
