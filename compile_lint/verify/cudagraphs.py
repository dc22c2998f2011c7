"""CUDA-graph checks (CL401-CL403), run only with --device cuda.

Imported only in the worker on a CUDA machine. Each check compiles with
mode="reduce-overhead" (CUDA graph trees) and watches what PyTorch does, by the same
signals PyTorch itself uses:
  - held outputs: cudagraph_trees.py raises "accessing tensor output of CUDAGraphs that
    has been overwritten by a subsequent run" or the kept tensor's values change;
  - one CUDA graph per distinct input size: counted as torch.cuda.CUDAGraph captures;
  - mutated inputs: counters["inductor"]["cudagraph_skips"], bumped by
    cudagraph_utils.log_cudagraph_skip_and_bump_counter ("skipping cudagraphs due to
    mutated inputs").
"""
from __future__ import annotations

import contextlib

import torch
from torch._dynamo.utils import counters

from .inputs import input_shapes
from .results import DIVERGED, PASS, SKIPPED, CheckResult

WARMUP_CALLS = 3  # cudagraph trees: warm up, record, then replay
DISTINCT_SIZES = 10  # more than cudagraph_dynamic_shape_warn_limit (8)


@contextlib.contextmanager
def counting_graph_captures():
    """Count torch.cuda.CUDAGraph captures while the block runs."""
    graph_class = torch.cuda.CUDAGraph
    original = graph_class.capture_begin
    box = {"captures": 0}

    def capture_begin(self, *args, **kwargs):
        box["captures"] += 1
        return original(self, *args, **kwargs)

    graph_class.capture_begin = capture_begin
    try:
        yield box
    finally:
        graph_class.capture_begin = original


def held_outputs(session, baselines, emit, codes: list) -> None:
    """Keep the output of call N, run call N+1 on another input, compare the kept one
    with its eager copy."""
    base = baselines.get(session.resolutions[0])
    if base is None:
        return
    args, kwargs, *_ = base
    other_args, other_kwargs = session.inputs(session.resolutions[0], seed_offset=1)
    compiled = session.compile(session.target, "reduce-overhead", False)
    result = CheckResult(name="held-outputs", status=PASS, verdict="kept-output-intact", mode="reduce-overhead",
                         dynamic=False, dtype="float32", shape=input_shapes(args, kwargs))
    for _ in range(WARMUP_CALLS):
        session.call(compiled.fn, args, kwargs)
    kept = session.call(compiled.fn, args, kwargs)
    expected = [t.clone() for t in session.call(session.target, args, kwargs)]
    session.call(compiled.fn, other_args, other_kwargs)  # call N+1
    session.synchronize()
    try:
        diff = max(((k.double() - e.double()).abs().max().item() for k, e in zip(kept, expected)), default=0.0)
    except RuntimeError as exc:
        result.status, result.verdict, result.confirms = DIVERGED, "overwritten", codes
        result.message = f"the output of call N is unusable after call N+1: {str(exc).splitlines()[0][:300]}"
        emit(result)
        return
    result.max_abs_diff = diff
    if diff > session.tolerance.atol:
        result.status, result.verdict, result.confirms = DIVERGED, "overwritten", codes
        result.message = (f"the output of call N changed by {diff:.3g} when call N+1 ran: CUDA graphs reuse "
                          f"output memory; .clone() what you keep")
    else:
        result.clears = codes
        result.message = "the output of call N is intact after call N+1"
    emit(result)


def cudagraph_sizes(session, baselines, emit, codes: list) -> None:
    """Call at DISTINCT_SIZES sizes with dynamic=True and count CUDA graphs recorded."""
    if session.resolutions == [None]:
        emit(CheckResult(name="cudagraph-sizes", status=SKIPPED, verdict="fixed-shape",
                         message="inputs have one fixed shape"))
        return
    height, width = session.resolutions[0]
    sizes = [[height + i, width + 2 * i] for i in range(DISTINCT_SIZES)]
    compiled = session.compile(session.target, "reduce-overhead", True)
    with counting_graph_captures() as box:
        for size in sizes:
            args, kwargs = session.inputs(size)
            for _ in range(WARMUP_CALLS):
                session.call(compiled.fn, args, kwargs)
    session.synchronize()
    result = CheckResult(name="cudagraph-sizes", status=PASS, verdict="", mode="reduce-overhead", dynamic=True,
                         dtype="float32", shape=[[*session.input_specs[0].shape[:-2], *s] for s in sizes[:1]])
    result.graphs = box["captures"]
    if box["captures"] >= len(sizes):
        result.status, result.verdict, result.confirms = DIVERGED, "graph-per-size", codes
        result.message = (f"{box['captures']} CUDA graph captures for {len(sizes)} input sizes: one graph (and its "
                          f"memory pool share) per size; past cudagraph_dynamic_shape_warn_limit PyTorch warns")
    else:
        result.verdict, result.clears = "shared-graphs", codes
        result.message = f"{box['captures']} CUDA graph captures for {len(sizes)} input sizes"
    emit(result)


def input_mutation(session, baselines, emit, codes: list) -> None:
    base = baselines.get(session.resolutions[0])
    if base is None:
        return
    args, kwargs, *_ = base
    compiled = session.compile(session.target, "reduce-overhead", False)
    for _ in range(WARMUP_CALLS):
        fresh_args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        fresh_kwargs = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
        session.call(compiled.fn, fresh_args, fresh_kwargs)
    skips = counters["inductor"]["cudagraph_skips"]
    result = CheckResult(name="input-mutation", status=PASS, verdict="", mode="reduce-overhead", dynamic=False,
                         dtype="float32", shape=input_shapes(args, kwargs))
    if skips:
        # Like a fallback to eager: asked for CUDA graphs, got none. Never a pass.
        result.status, result.verdict, result.confirms, result.fell_back = DIVERGED, "cudagraphs-skipped", codes, True
        result.message = f"cudagraphs skipped {skips} time(s): the compiled code mutates an input in place"
    else:
        result.verdict, result.clears = "cudagraphs-used", codes
        result.message = "no cudagraph skips"
    emit(result)
