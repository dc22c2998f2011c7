"""A stand-in for torchvision, written for the oracle bench (not torchvision's code).

torchvision does not load with the CPU torch 2.13 wheel this project pins, and timm
1.0.31 imports a few of its names at import time (``torchvision.ops.misc.FrozenBatchNorm2d``
in ``timm/layers``, the transforms and datasets in ``timm/data``). The oracle bench only
builds timm models and runs their ``forward``, so this package provides:

- ``ops.misc.FrozenBatchNorm2d``: a small batch norm with fixed statistics, written here;
- every other name timm imports (transforms, datasets, ``InterpolationMode``): a
  placeholder (``_absent.py``) that imports fine and raises when used.

It is put on ``sys.path`` only for the bench entries that ask for it (``shim = true`` in
models.toml), and it has no ``*.dist-info``, so libraries that test for torchvision
through package metadata (transformers, diffusers) still find it absent.
"""

__version__ = "0.0.0+oracle-shim"
