"""A stand-in for torchvision, written for the oracle bench (not torchvision's code).

torchvision does not load with the CPU torch 2.13 wheel this project pins, and timm
1.0.31 imports a few of its names at import time (``torchvision.ops.misc.FrozenBatchNorm2d``
in ``timm/layers``, the transforms and datasets in ``timm/data``). The oracle bench only
builds timm models and runs their ``forward``, so this package provides:

- ``ops.misc.FrozenBatchNorm2d``: a small batch norm with fixed statistics, written here;
- every other name timm imports (transforms, datasets, ``InterpolationMode``): a
  placeholder (``_absent.py``) that imports fine and raises when used;
- any other submodule (``torchvision.models.segmentation.deeplabv3``, which two apps
  import at module level): a module of placeholders, made by the finder below.

It is put on ``sys.path`` only for the bench entries that ask for it (``shim = true`` in
models.toml), and it has no ``*.dist-info``, so libraries that test for torchvision
through package metadata (transformers, diffusers) still find it absent.
"""

import importlib.abc
import importlib.machinery
import sys
import types

from torchvision._absent import module_getattr

__version__ = "0.0.0+oracle-shim"


class _PlaceholderModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `torchvision.X.Y` that has no file here as a module of placeholders."""

    def find_spec(self, name, path=None, target=None):
        if not name.startswith(__name__ + "."):
            return None
        if importlib.machinery.PathFinder.find_spec(name, path) is not None:
            return None  # one of the files of this shim
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = module_getattr(spec.name)
        return module

    def exec_module(self, module):
        pass


if not any(isinstance(f, _PlaceholderModules) for f in sys.meta_path):
    sys.meta_path.append(_PlaceholderModules())
