"""Placeholders for `torchvision.ops.boxes` (oracle bench shim, see torchvision/__init__.py)."""

from torchvision._absent import module_getattr

__getattr__ = module_getattr(__name__)
