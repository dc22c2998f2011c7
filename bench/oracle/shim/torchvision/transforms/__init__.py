"""Placeholders for `torchvision.transforms` (oracle bench shim, see torchvision/__init__.py)."""

from torchvision._absent import InterpolationMode, module_getattr  # noqa: F401

__getattr__ = module_getattr(__name__)
