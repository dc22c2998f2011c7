"""Each class breaks Dynamo's graph in one known way (torch 2.13, backend="eager").

tests/test_oracle_bench.py runs them through bench/oracle/run.py and score.py and pins
the IDs and lines recorded here; keep the marked lines where they are or update it.
"""
import threading
import warnings

import torch
from torch import nn


class Nonzero(nn.Module):
    """A dynamic-shape operator: the output size depends on the data."""

    def forward(self, x):
        y = x * 2
        idx = y.nonzero()  # break: nonzero
        return idx.sum() + y.sum()


class Item(nn.Module):
    def forward(self, x):
        scale = x.abs().max().item()  # break: item
        return x / (scale + 1)


class Branch(nn.Module):
    """A Python `if` on a tensor: only graph_break_reasons sees it, not counters."""

    def forward(self, x):
        if x.sum() > 0:  # break: branch
            return x + 1
        return x - 1


class PrintInLoop(nn.Module):
    """A break in a loop of the compiled frame: the whole frame runs eagerly."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
            print("step")  # break: print in loop
        return x


class Clean(nn.Module):
    """No break; its lines are executed, so a finding here is a false alarm."""

    def forward(self, x):
        y = torch.relu(x)
        if y.shape[0] > 1:  # a shape, not data: no break
            y = y * 2
        return y.mean(dim=-1)


def rescale(x):
    """A function target: `.tolist()` turns tensor data into Python values."""
    values = x.flatten().tolist()  # break: tolist
    return x * len(values)


class LayerDrop(nn.Module):
    """Breaks only in train mode (transformers' LayerDrop): Dynamo reads `self.training`
    as a constant, so in eval mode the tensor test is never traced."""

    def forward(self, x):
        if self.training and torch.rand([]) < 0.5:  # break: layerdrop
            return x
        return x * 2


class SwitchOnce(nn.Module):
    """Warns and switches its own state on its first call (transformers' big_bird falls
    back to full attention on a short input): whoever calls it first takes the break."""

    def __init__(self):
        super().__init__()
        self.kind = "sparse"

    def forward(self, x):
        if self.kind == "sparse":
            warnings.warn("falling back to full attention")  # break: first call
            self.kind = "full"
        return x * 2


class ShortCircuit(nn.Module):
    """`.item()` that never runs on these inputs (the left operand of `and` is False for a
    batch of 2): the line runs, the read does not. No break; a finding there is neither
    confirmed nor refuted by this run."""

    def forward(self, x):
        if x.shape[0] > 100 and x.sum().item() > 0:  # never read: short-circuit
            x = x * 2
        return x + 1


class HalfClamp(nn.Module):
    """Breaks only on float16 inputs (T5's overflow clamp): Dynamo reads the dtype test as
    a constant, so in float32 the tensor test is never traced."""

    def forward(self, x):
        if x.dtype == torch.float16 and torch.isinf(x).any():  # break: float16
            x = x.clamp(-1000, 1000)
        return x * 2


class MakesGenerator(nn.Module):
    """A `torch.Generator` made in compiled code: an opaque object Dynamo cannot make."""

    def forward(self, x):
        gen = torch.Generator()  # break: generator made
        return x + 1


class SeedsGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = torch.Generator().manual_seed(0)

    def forward(self, x):
        self.gen.manual_seed(1)  # break: generator method
        return x + 1


class DrawsWithGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = torch.Generator().manual_seed(0)

    def forward(self, x):
        return x + torch.rand(x.shape, generator=self.gen).to(x.dtype)  # break: generator given


class ListIndex(nn.Module):
    """A tensor as a Python list's index: Python needs an int."""

    def forward(self, x):
        levels = [1.0, 2.0, 3.0]
        return x * levels[(x > 0).sum() % 3]  # break: list index


class RangeOfTensor(nn.Module):
    def forward(self, x):
        count = (x > 0).sum()
        for _ in range(count):  # break: range
            x = x * 1
        return x


class PadThroughCall(nn.Module):
    """transformers' encodec: a buffer and a method's tensor return reach a static method
    through a tuple argument."""

    def __init__(self):
        super().__init__()
        self.total = nn.Buffer(torch.tensor(3))

    def _extra(self, x) -> torch.Tensor:
        return (x.shape[-1] - self.total).clamp(min=0)

    @staticmethod
    def _pad(x, paddings):
        left, right = paddings
        if x.shape[-1] <= max(left, right):  # break: tuple parameter
            x = x + 1
        return x

    def forward(self, x):
        return self._pad(x, (self.total, self._extra(x)))


def _split(x: torch.Tensor):
    return x * 2, x > 0


class MaskFromReturn(nn.Module):
    def forward(self, x):
        values, keep = _split(x)
        return values[keep]  # break: returned mask


class CausalEncoder(nn.Transformer):
    """pytorch/examples' word_language_model: a mask and no is_causal (torch reads its
    causality test)."""

    def __init__(self):
        super().__init__(d_model=4, nhead=2, dim_feedforward=8, num_encoder_layers=1, num_decoder_layers=1)

    def forward(self, x):
        mask = torch.log(torch.tril(torch.ones(len(x), len(x), dtype=x.dtype)))
        return self.encoder(x, mask=mask)  # break: causal mask


class ResetsBuffer(nn.Module):
    """transformers' ctrl: a conversion that changes nothing returns the nn.Buffer itself,
    and setting it again registers it (not in float16: `.to(float16)` of the module
    leaves plain tensors, and the conversion is real)."""

    def __init__(self):
        super().__init__()
        self.table = nn.Buffer(torch.ones(4), persistent=False)

    def forward(self, x):
        self.table = self.table.to(dtype=x.dtype)  # break: buffer set
        return x + self.table


_LOCK = threading.Lock()


class TakesLock(nn.Module):
    """transformers' output capturing installs its hooks under a threading lock."""

    def forward(self, x):
        with _LOCK:  # break: lock
            y = x + 1
        return y * 2


class HooksOnce(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        self.lin.register_forward_hook(lambda module, args, out: None)  # break: hook
        return self.lin(x)


class SetsRequiresGrad(nn.Module):
    """transformers' wav2vec2 feature encoder, for gradient checkpointing."""

    def forward(self, x):
        y = x * 2
        y.requires_grad = True  # break: requires_grad
        return y + 1


class BuildsLayer(nn.Module):
    """transformers' big_bird builds its full-attention layers inside forward."""

    def forward(self, x):
        norm = nn.LayerNorm(x.shape[-1], dtype=x.dtype)  # break: layer built
        return norm(x)


class ConvertsLayer(nn.Module):
    """transformers' switch_transformers router converts its classifier to float32 on
    every call: new parameters when the model runs in float16 (a no-op in float32)."""

    def __init__(self):
        super().__init__()
        self.classifier = nn.Linear(4, 4)
        self.compute_dtype = torch.float32

    def forward(self, x):
        self.classifier = self.classifier.to(self.compute_dtype)  # break: layer converted
        return self.classifier(x.to(self.compute_dtype))
