"""Is `isinstance(size, torch.Tensor)` ever true under torch.compile when `size` is an
element of `x.shape`? StyleGAN's `misc.assert_shape` (copied into eg3d, Real3DPortrait
and many image apps) keeps a branch for `torch.jit.trace`, where shape entries are
tensors, and calls `torch.equal` there: a graph break only if Dynamo enters it.

Run: python scripts/measure/shape_element_isinstance.py   (torch 2.13 CPU)
Counts graph breaks (torch._dynamo.explain) of the guarded function with static and
dynamic shapes, and of the same `torch.equal` call unguarded, as a control.
"""
import warnings

import torch

warnings.filterwarnings("ignore")


def assert_shape(tensor, ref_shape):
    for idx, (size, ref_size) in enumerate(zip(tensor.shape, ref_shape)):
        if ref_size is None:
            pass
        elif isinstance(size, torch.Tensor):
            assert torch.equal(size, torch.as_tensor(ref_size)), f"Wrong size for dimension {idx}"
        elif size != ref_size:
            raise AssertionError(f"Wrong size for dimension {idx}: got {size}, expected {ref_size}")


def guarded(x):
    assert_shape(x, [None, 3])
    h = x.shape[-1]
    if isinstance(h, torch.Tensor):
        print("a tensor size")
    return x * 2


def unguarded(x):
    if not torch.equal(x, x + 0):
        print("differs")
    return x * 2


if __name__ == "__main__":
    print("torch", torch.__version__)
    for name, fn in (("guarded by isinstance(shape entry, Tensor)", guarded), ("torch.equal unguarded (control)", unguarded)):
        torch.compiler.reset()
        static = torch._dynamo.explain(fn)(torch.rand(4, 3, 5)).graph_break_count
        torch.compiler.reset()
        torch._dynamo.config.assume_static_by_default = False
        dynamic = torch._dynamo.explain(fn)(torch.rand(4, 3, 5)).graph_break_count
        torch._dynamo.config.assume_static_by_default = True
        print(f"{name:45} graph breaks: static {static}, dynamic shapes {dynamic}")
