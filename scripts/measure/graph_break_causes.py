"""Which constructs break the graph on this torch, and under which official ID.

Run: python scripts/measure/graph_break_causes.py   (torch 2.13 CPU, backend="eager")

Each case below is a small function (or module) compiled alone with `backend="eager"`
and called once, after `torch.compiler.reset()`, with compile-lint's own hooks on
Dynamo's translator (compile_lint/record/break_hooks.py: every break, data-dependent
jumps included, with its registry ID and user line). Printed per case: the IDs of the
breaks, each with its line relative to the case's `def` (`+2` = two lines below it),
`eager` when the whole frame ran eagerly (a break in a loop, GB7000), and whether the
result is what the CL508 family assumes (`want`: the IDs the linter reports there, or
`-` for no break). A case whose result differs from its `want` is marked `DIFFERS`.

The cases are the family's evidence: each construct the linter reports as a break,
and each look-alike it keeps quiet about (a bare tensor `assert`, masked assignment,
`torch.where` with three arguments, `repeat_interleave` with `output_size`, ...).
"""
from __future__ import annotations

import contextlib
import copy
import functools
import importlib.util
import inspect
import io
import logging
import os
import sys
import threading
import warnings

import torch
import torch._dynamo
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from compile_lint.record import break_hooks  # noqa: E402
from measure_env import header, verdict  # noqa: E402

warnings.filterwarnings("ignore")
logger = logging.getLogger("graph_break_causes")
logger.setLevel(logging.CRITICAL)  # a disabled level still breaks (GB0291)
logging.Logger.warning_once = functools.lru_cache(None)(logging.Logger.warning)  # as transformers.utils.logging does

CASES: list[tuple[str, object, tuple, str]] = []  # (name, callable, args, want)


def case(want: str, *args):
    def register(fn):
        CASES.append((fn.__name__, fn, args or (torch.arange(6.0),), want))
        return fn

    return register


# -- data-dependent branching and Python values read from tensors ----------------------
@case("GB0170")
def if_tensor(x):
    if x.sum() > 0:
        x = x + 1
    return x


@case("GB0170")
def if_named_tensor(x):
    total = x.sum()
    if total > 0:
        x = x + 1
    return x


@case("GB0170")
def if_bool_op_tensor(x, tol=1.0):
    shift = x.sum()
    if tol is not None and shift ** 2 <= tol:
        x = x + 1
    return x


@case("GB0170")
def while_tensor(x):
    while (x > 0).any():
        x = x - 10
    return x


@case("GB0170")
def ifexp_tensor(x):
    return x + 1 if x.mean() > 0 else x - 1


class _LayerDrop(nn.Module):
    def __init__(self, training):
        super().__init__()
        self.train(training)

    def forward(self, x):
        if self.training and (torch.rand([]) < 0.5):  # transformers' LayerDrop
            return x
        return x + 1


@case("GB0170")
def layerdrop_training(x, mod=_LayerDrop(True)):
    return mod(x)


@case("-")
def layerdrop_eval(x, mod=_LayerDrop(False)):
    return mod(x)


@case("-")
def assert_bare_tensor(x):
    assert (x > -10).all(), "negative"
    return x + 1


@case("GB0124")
def assert_bool_tensor(x):
    assert bool((x > -10).all())
    return x + 1


@case("GB0124")
def bool_of_tensor(x):
    return x * bool(x.any())


@case("GB0124")
def int_of_tensor(x):
    return x[: int(x.max())]


@case("GB0124")
def float_of_tensor(x):
    return x * float(x.mean())


@case("GB0124")
def item(x):
    return x / x.amax().item()


@case("-")
def item_behind_none_test(x, mask=None):
    if mask is not None and mask.sum().item() > 0:
        x = x + 1
    return x


@case("GB0033")
def tolist_int(x):
    n = x.long().tolist()
    return x + len(n)


@case("GB0109")
def tolist_float(x):
    n = x.tolist()
    return x + len(n)


@case("GB0033")
def tensor_as_size(x):
    n = x.long()[-1] + 1
    return torch.zeros(n)


@case("GB0124")
def tensor_as_slice_bound(x):
    n = x.long()[-1]
    return x[:n]


@case("GB0033")
def tensor_as_view_size(x):
    n = x.long()[-1] // 5 + 2
    return x.view(2, n)


@case("GB0033")
def tensor_as_pad(x):
    n = x.long()[-1]
    return torch.nn.functional.pad(x, (0, n))


@case("-")
def shape_as_size(x):
    return torch.zeros(x.shape[0] + 1) + x.new_ones(x.size(0)).sum()


@case("-")
def torch_div_of_ints_as_size(x, w=3):
    chunks = torch.div(x.size(0), w, rounding_mode="trunc")  # transformers' longformer
    return x.view(chunks, -1)


@case("-")
def shape_branch(x):
    if x.shape[-1] > 3:
        x = x + 1
    return x


@case("GB0124")
def list_indexed_by_tensor(x):
    table = [1.0, 2.0, 3.0]
    return x * table[(x > 2).sum() // 3]


@case("GB0124")
def tuple_indexed_by_tensor(x, pair=(torch.ones(6), torch.zeros(6))):
    return x * pair[x.long()[1]]


@case("GB0059")
def range_of_tensor(x):
    n = x.long()[2]
    total = 0
    for i in range(n):
        total = total + i
    return x + total


@case("-")
def max_of_tensors(x):
    return x * max(x.sum(), x.mean())  # Dynamo: torch.maximum


@case("GB0170")
def if_on_max_of_tensors(x):
    longest = max(x.long()[1], x.long()[2])
    if 3 <= longest:
        x = x + 1
    return x


class _Pads(nn.Module):
    """transformers' encodec: a buffer and a method's tensor return reach a static
    method through a tuple argument."""

    def __init__(self):
        super().__init__()
        self.padding_total = nn.Buffer(torch.tensor(3), persistent=False)

    def _extra(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ceil((x.shape[-1] - self.padding_total) / 2.0).to(torch.int64)

    @staticmethod
    def _pad1d(x: torch.Tensor, paddings: tuple[int, int]):
        left, right = paddings
        widest = max(left, right)
        if x.shape[-1] <= widest:
            x = x + 1
        return x

    def forward(self, x):
        return self._pad1d(x, (self.padding_total, self._extra(x)))


@case("GB0170")
def tensor_through_a_tuple_parameter(x, mod=_Pads()):
    return mod(x)


class _Buffered(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.tensor(2.0))

    def forward(self, x):
        if self.scale > 1:
            x = x * self.scale
        return x


@case("GB0170")
def if_on_a_buffer(x, mod=_Buffered()):
    return mod(x)


def _split(x):
    return x * 2, x > 2


def _take(x, keep):
    return x[keep]


@case("GB0036")
def mask_from_a_return(x):
    values, keep = _split(x)
    return values[keep]


@case("GB0036")
def mask_through_a_parameter(x):
    return _take(x, x > 2)


def _can_stop_early(x) -> bool:
    if torch.jit.is_tracing() or torch.compiler.is_compiling():
        return False
    return not x.requires_grad


@case("-")
def guard_emptied_in_another_def(x):
    stop_checks = (1, 2) if _can_stop_early(x) else ()  # kornia's distance transform
    for i in range(3):
        if i + 1 in stop_checks and not bool((x > 100).any()):
            break
        x = x + 1
    return x


class _Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(6, 6) for _ in range(3)])

    def forward(self, x):
        return self.heads[(x > 2).sum() // 3](x)


@case("GB0124")
def module_list_indexed_by_tensor(x, mod=_Heads()):
    return mod(x)


# -- data-dependent output shapes ---------------------------------------------------
@case("GB0036")
def nonzero(x):
    return torch.nonzero(x > 2)


@case("GB0036")
def nonzero_method(x):
    return (x > 2).nonzero(as_tuple=True)[0]


@case("GB0036")
def where_one_argument(x):
    return torch.where(x > 2)[0]


@case("-")
def where_three_arguments(x):
    return torch.where(x > 2, x, -x)


@case("GB0036")
def argwhere(x):
    return torch.argwhere(x > 2)


@case("GB0036")
def masked_select(x):
    return torch.masked_select(x, x > 2)


@case("GB0036")
def unique(x):
    return torch.unique(x.long() // 2)


@case("GB0036")
def unique_method(x):
    return (x.long() // 2).unique()


@case("GB0036")
def unique_consecutive(x):
    return torch.unique_consecutive(x.long() // 2)


@case("GB0036")
def mask_index_inline(x):
    return x[x > 2]


@case("GB0036")
def mask_index_named(x):
    keep = (x > 2) & (x < 5)
    return x[keep]


@case("GB0036")
def mask_index_augmented(x):
    y = x.clone()
    y[x > 2] += 1
    return y


@case("-")
def mask_assign(x):
    y = x.clone()
    y[x > 2] = 0
    return y


@case("GB0036")
def repeat_interleave_tensor(x):
    return torch.repeat_interleave(x, torch.tensor([1, 2, 1, 2, 1, 2]))


@case("-")
def repeat_interleave_int(x):
    return torch.repeat_interleave(x, 2)


@case("-")
def repeat_interleave_output_size(x):
    return torch.repeat_interleave(x, torch.tensor([1, 2, 1, 2, 1, 2]), output_size=9)


@case("GB0036")
def bincount(x):
    return torch.bincount(x.long())


# -- Python calls Dynamo does not trace -----------------------------------------------
@case("GB0291")
def logger_warning(x):
    logger.warning("a message")
    return x + 1


@case("GB0291")
def logger_info(x):
    logger.info("step %d", 3)
    return x + 1


@case("GB4841")
def logging_module_function(x):
    logging.debug("a message")
    return x + 1


@case("GB0007")
def warnings_warn(x):
    warnings.warn("a message")
    return x + 1


@case("GB0059")
def print_call(x):
    print("", end="")
    return x + 1


@case("GB4198")
def deepcopy_tensor(x):
    y = copy.deepcopy(x)
    return y + 1


@case("-")
def deepcopy_dict(x):
    d = copy.deepcopy({"a": 1})
    return x + d["a"]


class _Config:
    def __init__(self):
        self.hidden = 4


_CONFIG = _Config()


@case("-")
def deepcopy_object(x):
    cfg = copy.deepcopy(_CONFIG)
    return x + cfg.hidden


@case("GB4198")
def deepcopy_module(x, lin=nn.Linear(6, 6)):
    twin = copy.deepcopy(lin)
    return twin(x)


@case("GB0291")
def logger_method_added(x):
    logger.warning_once("a message")  # transformers adds warning_once to logging.Logger
    return x + 1


@case("GB0007")
def warnings_warn_in_branch(x, training=True):
    if training:
        warnings.warn("only in training")
    return x + 1


@case("-")
def find_spec(x):
    if importlib.util.find_spec("json") is not None:
        x = x + 1
    return x


@case("-")
def inspect_signature(x):
    n = len(inspect.signature(if_tensor).parameters)
    return x + n


@case("GB0007")
def time_time(x):
    import time

    t = time.time()
    return x + (t > 0)


@case("-")
def os_environ_get(x):
    if os.environ.get("GRAPH_BREAK_CAUSES_UNSET") == "1":
        x = x + 1
    return x


# -- tensors and modules Dynamo cannot trace ----------------------------------------------
@case("GB0014")
def lstm_module(x, lstm=nn.LSTM(6, 4)):
    out, _ = lstm(x[None, None])
    return out


@case("GB0014")
def gru_module(x, gru=nn.GRU(6, 4)):
    out, _ = gru(x[None, None])
    return out


class _Encoder(nn.Transformer):
    """pytorch/examples' word_language_model: the encoder nn.Transformer builds, called with
    a causal mask and no is_causal (torch's _detect_is_causal_mask reads the comparison)."""

    def __init__(self, is_causal=None):
        super().__init__(d_model=6, nhead=2, dim_feedforward=8, num_encoder_layers=1, num_decoder_layers=1)
        self.is_causal = is_causal

    def forward(self, x):
        mask = torch.log(torch.tril(torch.ones(len(x), len(x))))
        return self.encoder(x, mask=mask, is_causal=self.is_causal)


@case("GB0124")
def transformer_encoder_mask(x, mod=_Encoder().eval()):
    return mod(x[None, None].expand(3, 1, 6))


@case("-")
def transformer_encoder_mask_is_causal(x, mod=_Encoder(is_causal=True).eval()):
    return mod(x[None, None].expand(3, 1, 6))


class _PositionTable(nn.Module):
    """transformers' ctrl: `self.pos_encoding = self.pos_encoding.to(device=..., dtype=...)`."""

    def __init__(self, register=False, convert=False):
        super().__init__()
        if register:
            self.register_buffer("table", torch.ones(6), persistent=False)
        else:
            self.table = nn.Buffer(torch.ones(6), persistent=False)
        self.convert = convert

    def forward(self, x):
        self.table = self.table.to(torch.float16) if self.convert else self.table.to(dtype=x.dtype)
        return x + self.table


@case("GB4841")
def buffer_set_to_itself(x, mod=_PositionTable()):
    return mod(x)


@case("-")
def registered_buffer_set_to_itself(x, mod=_PositionTable(register=True)):
    return mod(x)


@case("-")
def buffer_set_to_a_conversion(x, mod=_PositionTable(convert=True)):
    return mod(x)


@case("GB0264")
def parameter_made(x):
    return x * nn.Parameter(torch.ones(6))


@case("GB0007,GB0142")
def config_patch_inside_compiled_code(x):
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):  # not traced; its block runs eagerly
        return x.nonzero()


_LOCK = threading.Lock()


@case("GB0142")
def lock_entered(x):
    with _LOCK:
        y = x + 1
    return y * 2


class _HookOnce(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)

    def forward(self, x):
        self.lin.register_forward_hook(lambda module, args, out: None)
        return self.lin(x)


@case("GB0467")
def forward_hook_registered(x, mod=_HookOnce()):
    return mod(x)


@case("GB0206")
def requires_grad_attribute_set(x):
    y = x * 2
    y.requires_grad = True
    return y + 1


@case("GB0264")
def layer_built(x):
    return nn.LayerNorm(6)(x)


@case("-")
def layer_without_parameters_built(x):
    return nn.ReLU()(x)


@case("GB0170")
def if_not_tensor(x):
    if not (x > 0).all():
        x = x + 1
    return x


class _Router(nn.Module):
    """transformers' switch_transformers router: `self.classifier = self.classifier.to(self.dtype)`."""

    def __init__(self, dtype):
        super().__init__()
        self.classifier = nn.Linear(6, 6)
        self.dtype = dtype

    def forward(self, x):
        self.classifier = self.classifier.to(self.dtype)
        return self.classifier(x.to(self.dtype))


@case("GB0264")
def layer_converted(x, mod=_Router(torch.float16)):
    return mod(x)


@case("-")
def layer_converted_to_its_own_dtype(x, mod=_Router(torch.float32)):
    return mod(x)


@case("-")
def requires_grad_read(x):
    return x + 1 if x.requires_grad else x - 1


@case("GB8985")
def requires_grad_set(x):
    y = x * 2
    y.requires_grad_(True)
    return y + 1


@case("GB0055,GB0363,GB7650")
def generator_created(x):
    g = torch.Generator()
    g.manual_seed(0)
    return x + torch.rand(6, generator=g)


_SEEDED = torch.Generator()
_SEEDED.manual_seed(0)


@case("GB0055")
def generator_passed_to_op(x, g=_SEEDED):
    return x + torch.rand(6, generator=g)


@case("GB0055")
def generator_passed_to_method(x, g=_SEEDED):
    y = torch.empty(6)
    y.normal_(generator=g)
    return x + y


@case("GB7650")
def generator_method(x, g=_SEEDED):
    return x + g.initial_seed()


@case("-")
def generator_device_attribute(x, g=_SEEDED):
    return x.to(g.device)


@case("-")
def generator_none(x, g=None):
    return x + torch.rand(6, generator=g)


class _KeepsGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = torch.Generator().manual_seed(0)

    def forward(self, x):
        return x + torch.randn(6, generator=self.gen)


@case("GB0055")
def generator_attribute_passed(x, mod=_KeepsGenerator()):
    return mod(x)


@case("GB0055,GB0363,GB7650")
def generator_made_under_a_test(x, seed=3):
    g = None
    if seed is not None:
        g = torch.Generator()
        g.manual_seed(seed)
    return x + torch.rand(6, generator=g)


@case("-")
def user_generator_consumed(x):
    def squares(n):
        for i in range(n):
            yield i * i

    return x + sum(squares(3))


@case("GB0059,GB0142")
def unsupported_context_manager(x):
    with open(os.devnull) as fh:
        fh.read()
    return x + 1


@case("-")
def no_grad_context_manager(x):
    with torch.no_grad():
        y = x * 2
    return y + 1


@case("-")
def exception_control_flow(x):
    try:
        {}["missing"]
    except KeyError:
        x = x + 1
    return x


if importlib.util.find_spec("numpy") is not None:  # the oracle bench's venv has NumPy; the dev venv does not
    import numpy as np

    @case("GB0033")
    def numpy_random_choice(x):
        picked = np.random.choice(np.arange(6), 2, replace=False)  # transformers' _compute_mask_indices
        return x + torch.from_numpy(picked).sum()

    @case("GB0033")
    def numpy_item(x):
        return x + np.random.rand(1).item()

    @case("-")
    def numpy_random_rand(x):
        return x + torch.from_numpy(np.random.rand(6))


def _breaks(fn, args):
    torch.compiler.reset()
    first = fn.__code__.co_firstlineno
    here = os.path.realpath(__file__)
    with break_hooks.BreakHooks(torch, lambda path: path == here) as hooks:
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                torch.compile(fn, backend="eager")(*args)
            error = None
        except Exception as exc:  # a compile error is a result too
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
    rows = []
    for b in hooks.breaks:
        line = f"+{b['site']['line'] - first}" if b["site"] else "?"
        rows.append((b["gb_id"] or b["gb_type"], line, b["frame_to_eager"]))
    return rows, error


def main() -> None:
    header("constructs that break the graph, by official ID")
    differs = []
    for name, fn, args, want in CASES:
        rows, error = _breaks(fn, args)
        ids = sorted({r[0] for r in rows})
        got = ",".join(ids) or "-"
        ok = got == want
        if not ok:
            differs.append(name)
        detail = " ".join(f"{gid}@{line}{' eager' if eager else ''}" for gid, line, eager in rows) or "no break"
        print(f"{name:32} want {want:8} got {got:16} {detail}{'  (' + error + ')' if error else ''}"
              f"{'' if ok else '  DIFFERS'}")
    verdict(not differs, f"{len(CASES) - len(differs)} of {len(CASES)} cases as assumed"
            + (f"; differ: {', '.join(differs)}" if differs else ""))


if __name__ == "__main__":
    main()
