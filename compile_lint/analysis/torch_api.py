"""The one table of torch API names compile-lint knows (dotted, as NameTable resolves).

Every analysis and rule takes its names from here, so a new spelling (a new tracer, a
renamed config module) is added once.
"""
from __future__ import annotations

# -- compiling ---------------------------------------------------------------------------
COMPILE = "torch.compile"
COMPILE_FUNCS = frozenset({COMPILE})  # compile their first argument: `torch.compile(fn, ...)`
# return a compiling decorator: `torch._dynamo.optimize("inductor")(fn)`, `@optimize(...)`
OPTIMIZE_FUNCS = frozenset({"torch._dynamo.optimize"})
COMPILERS = COMPILE_FUNCS | OPTIMIZE_FUNCS  # anything that makes a compiled region
DISABLE_FUNCS = frozenset({"torch.compiler.disable", "torch._dynamo.disable"})
# `torch.compiler.is_compiling()` and friends: true while Dynamo traces the code
IS_COMPILING_FUNCS = frozenset({"torch.compiler.is_compiling", "torch._dynamo.is_compiling", "torch.compiler.is_dynamo_compiling"})
# true only under torch.jit.trace / torch.jit.script, and False under torch.compile
# (measured, hazards.md "Measured in turn 3"): their `else` is what Dynamo compiles
JIT_ONLY_FUNCS = frozenset({"torch.jit.is_tracing", "torch.jit.is_scripting", "torch._C._get_tracing_state"})
MARK_DYNAMIC_FUNCS = frozenset(
    {"torch._dynamo.mark_dynamic", "torch._dynamo.maybe_mark_dynamic", "torch._dynamo.mark_unbacked", "torch._dynamo.decorators.mark_dynamic"}
)
CUDAGRAPH_MODES = frozenset({"reduce-overhead", "max-autotune"})  # torch.compile modes that use CUDA graphs

# -- tracing and exporting (the code runs once, on example inputs) ------------------------
TRACERS = frozenset({"torch.jit.trace", "torch.jit.trace_module", "torch.fx.symbolic_trace"})
# exporter -> (position of the example inputs, keywords that make sizes dynamic; None: made
# dynamic another way, `export_options=ExportOptions(dynamic_shapes=True)`)
EXPORTERS = {
    "torch.export.export": (1, ("dynamic_shapes",)),
    "torch.export.export_for_training": (1, ("dynamic_shapes",)),
    "torch.onnx.export": (1, ("dynamic_axes", "dynamic_shapes")),
    "torch.onnx._export": (1, ("dynamic_axes", "dynamic_shapes")),  # the private spelling some export scripts call
    # the TorchScript exporter, still `torch.onnx.utils.export` on torch 2.13 (samexporter's
    # seven exports, bench/fresh_reads batch 57, were listed nowhere)
    "torch.onnx.utils.export": (1, ("dynamic_axes",)),
    "torch.onnx.dynamo_export": (1, None),
}
TRACE_FUNCS = TRACERS | frozenset(EXPORTERS)  # anything that makes a traced region
# exporters that write their graph to a file at the call and hand back nothing that runs
# the model: what they record is fixed when they return, so a later change of the model
# cannot leave a live trace stale (CL102)
FILE_EXPORTERS = frozenset({"torch.onnx.export", "torch.onnx._export", "torch.onnx.utils.export"})
# TorchScript compiles the Python source of a module or function (no example inputs):
# a "scripted" region, which no tracing rule reads (`int(x.shape[0])` is dynamic there).
# `@torch.jit.script_if_tracing` scripts its function on the first call made while
# tracing (eager and compiled calls run it as Python): a script site as well (detectron2's
# mask and box helpers, bench/fresh_reads batches 4 and 5)
# `script_method` decorates a method of a `torch.jit.ScriptModule` subclass: TorchScript
# compiles it when the class is instantiated (RWKV-LM's `@MyFunction`, MASTER-pytorch's
# attention, ClimSim's kernels: bench/fresh_reads batches 53, 41 and 42, listed nowhere before)
# e3nn's `util.jit.script` / `util.jit.compile` script a module (each submodule as its
# `@compile_mode` says): MACE's, SevenNet's and nequip's exports (batches 63 and 51)
SCRIPT_FUNCS = frozenset({"torch.jit.script", "torch.jit.script_if_tracing", "torch.jit.script_method",
                          "e3nn.util.jit.script", "e3nn.util.jit.compile"})

# -- configuration modules ------------------------------------------------------------------
DYNAMO_CONFIG = "torch._dynamo.config"
INDUCTOR_CONFIG = "torch._inductor.config"
COMPILER_CONFIG = "torch.compiler.config"
FUNCTORCH_CONFIG = "torch._functorch.config"
FX_CONFIG = "torch.fx.experimental._config"
# the config modules whose keys are checked; the keys themselves, per torch release, are
# in compile_lint/data (compile_lint/torch_config.py)
CONFIG_MODULES = frozenset({DYNAMO_CONFIG, INDUCTOR_CONFIG, COMPILER_CONFIG, FUNCTORCH_CONFIG, FX_CONFIG})
SUPPRESS_ERRORS = f"{DYNAMO_CONFIG}.suppress_errors"
CAPTURE_SCALAR_OUTPUTS = f"{DYNAMO_CONFIG}.capture_scalar_outputs"
RECOMPILE_LIMITS = {
    f"{DYNAMO_CONFIG}.recompile_limit": "recompile_limit",
    f"{DYNAMO_CONFIG}.cache_size_limit": "cache_size_limit",
    f"{DYNAMO_CONFIG}.accumulated_recompile_limit": "accumulated_recompile_limit",
    f"{DYNAMO_CONFIG}.accumulated_cache_size_limit": "accumulated_cache_size_limit",
}

# -- CUDA graphs -------------------------------------------------------------------------------
# start a new generation of the cudagraph trees: outputs of earlier runs may be overwritten
MARK_STEP_FUNCS = frozenset(
    {"torch.compiler.cudagraph_mark_step_begin", "torch._inductor.cudagraph_trees.mark_step_begin"}
)
