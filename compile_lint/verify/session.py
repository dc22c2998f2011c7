"""One target inside the worker: how to call it eagerly, compiled and in float64, and
what Dynamo's counters said about a compiled call.

Imported only in the worker (imports torch).
"""
from __future__ import annotations

import contextlib
import copy
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import torch
from torch._dynamo.utils import counters
from torch.utils._pytree import tree_flatten

from ..record import break_hooks
from .compare import Tolerance
from .config import FORWARD_TOLERANCE, InputSpec
from .inputs import make_inputs, torch_dtype, uses_resolution
from .reference import Float64Everywhere, coarsest, to_float64

GRADIENT_TOLERANCE = 1e-3  # see Session.gradient_tolerance


def _user_file(path: str) -> bool:
    """Code of the project being verified, not torch's or an installed package's."""
    return "site-packages" not in path and not path.startswith(os.path.dirname(torch.__file__))


def flat_tensors(output: Any) -> list:
    leaves, _ = tree_flatten(output)
    return [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]


def fresh_copies(args: list, kwargs: dict) -> tuple[list, dict]:
    def copy_of(value):
        if isinstance(value, dict):
            return {k: copy_of(v) for k, v in value.items()}
        return value.clone() if isinstance(value, torch.Tensor) else value

    return [copy_of(a) for a in args], {k: copy_of(v) for k, v in kwargs.items()}


def compile_mode_argument(mode: str) -> Optional[str]:
    return None if mode == "default" else mode


@dataclass
class CounterSnapshot:
    """Dynamo's counters at one moment (hazards.md, notes for verify: count from
    torch._dynamo.utils.counters, reset between targets)."""

    graphs: int
    breaks: int
    frames_total: int
    frames_ok: int
    limit_hits: int

    @classmethod
    def now(cls) -> "CounterSnapshot":
        limit_hits = sum(n for reason, n in counters["unimplemented"].items() if "recompile limit" in reason.lower()
                         or "cache_size_limit" in reason)
        return cls(graphs=counters["stats"]["unique_graphs"], breaks=sum(counters["graph_break"].values()),
                   frames_total=counters["frames"]["total"], frames_ok=counters["frames"]["ok"],
                   limit_hits=limit_hits)

    @property
    def fell_back(self) -> bool:
        """A frame Dynamo started and did not finish ran eagerly."""
        return self.frames_total > self.frames_ok or self.limit_hits > 0


def reset_compiler() -> None:
    torch.compiler.reset()
    counters.clear()


@dataclass
class Compiled:
    """A fresh torch.compile of the target and what its calls cost and compiled."""

    fn: Callable
    mode: str
    dynamic: bool
    calls: int = 0
    hook_breaks: int = 0  # graph breaks the translator hooks saw (data-dependent jumps too)
    frames_ok_after_first_call: int = 0
    first_call_s: dict = field(default_factory=dict)


class Session:
    def __init__(self, target: Any, input_specs: list[InputSpec], options: dict, spec: dict,
                 synthesised: bool) -> None:
        self.target = target
        self.is_module = isinstance(target, torch.nn.Module)
        self.input_specs = input_specs
        self.synthesised = synthesised
        self.options = options
        self.spec = spec
        self.codes = set(spec.get("codes") or [])
        self.device = options["device"]
        self.seed = int(options.get("seed", 0))
        self.tolerance = Tolerance(
            atol=spec.get("atol") or options.get("atol", FORWARD_TOLERANCE),
            rtol=spec.get("rtol") or options.get("rtol", FORWARD_TOLERANCE),
            fp64_multiplier=spec.get("fp64_multiplier") or options.get("fp64_multiplier"),
        )
        # Gradients are judged at the training tolerance of PyTorch's accuracy harness
        # (benchmarks/dynamo/torchbench.py `get_tolerance_and_cosine_flag`: 1e-3 when
        # training, 1e-4 for inference; timm_models.py uses 1e-2 for training): a backward
        # pass sums many more terms than the forward, in another order once compiled.
        self.gradient_tolerance = Tolerance(
            atol=max(self.tolerance.atol, GRADIENT_TOLERANCE),
            rtol=max(self.tolerance.rtol, GRADIENT_TOLERANCE),
            fp64_multiplier=self.tolerance.fp64_multiplier,
        )
        resolutions = spec.get("resolutions") or options["resolutions"]
        self.resolutions = [list(r) for r in resolutions] if uses_resolution(input_specs) else [None]
        self._fp64_target = None
        self._cast_targets: dict = {}
        self.break_reasons: Optional[list] = None  # Dynamo's explanation of graph breaks, asked once
        # each graph break by official ID and user line ("GB0124 at models/net.py:15"), from
        # the translator hooks (compile_lint/record/break_hooks.py) around compiled calls
        self.runtime_breaks: list[str] = []
        self.compiler_was_reset = False  # Dynamo was reset behind a compiled function's back

    # ---- calling ----

    def inputs(self, resolution, dtype: str = "float32", seed_offset: int = 0) -> tuple[list, dict]:
        return make_inputs(self.input_specs, resolution, self.seed + seed_offset, self.device,
                           torch_dtype(dtype) if dtype != "float32" else None)

    def target_in(self, dtype: str) -> Any:
        """The target with its parameters in `dtype` (a copy; the original stays fp32)."""
        if dtype == "float32" or not self.is_module:
            return self.target
        if dtype not in self._cast_targets:
            self._cast_targets[dtype] = copy.deepcopy(self.target).to(torch_dtype(dtype))
        return self._cast_targets[dtype]

    def call(self, fn: Callable, args: list, kwargs: dict) -> list:
        """Outputs of one seeded call, so that eager and compiled draw the same random
        numbers wherever the compiler keeps PyTorch's generator."""
        args, kwargs = fresh_copies(args, kwargs)  # the target may write into its inputs
        torch.manual_seed(self.seed)
        with torch.no_grad():
            return flat_tensors(fn(*args, **kwargs))

    def fp64_reference(self, args: list, kwargs: dict) -> tuple[list, torch.dtype]:
        """Outputs in float64 and the coarsest precision the target computed in."""
        if self._fp64_target is None:
            self._fp64_target = to_float64(self.target) if self.is_module else self.target
        args, kwargs = fresh_copies(args, kwargs)
        args64 = [to_float64(a) for a in args]
        kwargs64 = {k: to_float64(v) for k, v in kwargs.items()}
        mode = Float64Everywhere()
        torch.manual_seed(self.seed)
        with torch.no_grad(), mode:
            outputs = flat_tensors(self._fp64_target(*args64, **kwargs64))
        input_dtypes = [a.dtype for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
        return outputs, coarsest(*input_dtypes, *mode.requested)

    # ---- compiling ----

    def compile(self, target: Any, mode: str, dynamic: bool, backend: Any = "inductor") -> Compiled:
        """A fresh torch.compile; `backend` other than "inductor" (a name such as
        "aot_eager", or a compiler function) runs Dynamo without Inductor's code generation."""
        reset_compiler()
        if backend == "inductor":
            fn = torch.compile(target, mode=compile_mode_argument(mode), dynamic=dynamic)
        else:
            fn = torch.compile(target, backend=backend, dynamic=dynamic)
        return Compiled(fn, mode, dynamic)

    def call_compiled(self, compiled: Compiled, args: list, kwargs: dict) -> tuple[list, dict]:
        """Outputs of one compiled call and what Dynamo did during it."""
        before = CounterSnapshot.now()
        hooks = None if break_hooks.missing(torch) else break_hooks.BreakHooks(torch, _user_file)
        start = time.perf_counter()
        with hooks if hooks is not None else contextlib.nullcontext():
            outputs = self.call(compiled.fn, args, kwargs)
        self.synchronize()
        elapsed = time.perf_counter() - start
        after = CounterSnapshot.now()
        for brk in hooks.breaks if hooks is not None else ():
            compiled.hook_breaks += 1
            site = brk.get("site") or brk.get("innermost")
            where = f" at {os.path.relpath(site['file'])}:{site['line']}" if site else ""
            entry = f"{brk.get('gb_id') or brk.get('gb_type')}{where}" + (" (frame ran eagerly)" if brk.get("frame_to_eager") else "")
            if entry not in self.runtime_breaks:
                self.runtime_breaks.append(entry)
        compiled.calls += 1
        if compiled.calls == 1:
            compiled.frames_ok_after_first_call = after.frames_ok
        stats = {
            "graphs": after.graphs,
            # the counter misses data-dependent jumps (`if tensor:`): the hooks see them
            "breaks": max(after.breaks, compiled.hook_breaks),
            # Frames compiled after the first call are recompiles: a guard failed.
            "recompiles": after.frames_ok - compiled.frames_ok_after_first_call,
            "fell_back": after.fell_back,
            "call_s": elapsed,
            "compiled_this_call": after.frames_total > before.frames_total,
        }
        return outputs, stats

    def reset_after_timeout(self) -> None:
        """A check abandoned midway may leave a half-built compile behind."""
        reset_compiler()

    def synchronize(self) -> None:
        if self.device == "cuda":
            torch.cuda.synchronize()


@contextlib.contextmanager
def inductor_config(**changes):
    """Patch torch._inductor.config for one compile (emulate_precision_casts, fallback_random)."""
    import torch._inductor.config as inductor

    with inductor.patch(**changes):
        yield
