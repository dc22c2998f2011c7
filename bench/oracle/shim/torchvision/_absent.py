"""Placeholders for torchvision names the oracle bench never uses (see __init__.py)."""

from __future__ import annotations

import enum


class AbsentTorchvision(RuntimeError):
    pass


def placeholder(module: str, name: str) -> type:
    """A class named like the torchvision one; building or calling it raises."""

    def refuse(*_args, **_kwargs):
        raise AbsentTorchvision(f"{module}.{name}: torchvision is not installed (oracle bench shim)")

    return type(name, (), {"__init__": refuse, "__module__": module, "__call__": refuse})


class InterpolationMode(enum.Enum):
    """The names timm maps to PIL filters; values are the strings torchvision uses."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def module_getattr(module: str):
    """A module ``__getattr__`` that hands out placeholders for public names."""

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return placeholder(module, name)

    return __getattr__
