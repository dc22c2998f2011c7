from __future__ import annotations

import ast
from textwrap import dedent
from typing import Optional

from ...analysis.compiled.values import CompileCall, CompiledValuesFact, chain_text, compiled_values, site_call
from ...analysis.semantic.facts import RegionsFact
from ...analysis.reach.entries import input_params, is_entry
from ...analysis.reach.queries import def_name, file_sets_config, region_nodes, stmt_text
from ...analysis.semantic.signatures import call_argument
from ...analysis.compiled.output_lifetimes import MayCallCudagraphsFact
from ...analysis.torch_api import CUDAGRAPH_MODES
from .varying_shapes import SKIP_DYNAMIC, VaryingShapesFact
from ..base import Case, Rule


class CudagraphDynamicShapes(Rule):
    """
    ## What it does
    Finds CUDA-graph compiled code (`mode="reduce-overhead"`, `mode="max-autotune"`,
    `options={"triton.cudagraphs": True}`) that will see many input shapes:

    - the compile call has `dynamic=True`;
    - `torch._dynamo.mark_dynamic(x, ...)` (or `maybe_mark_dynamic`, `mark_unbacked`)
      on a tensor that is then passed to the compiled callable;
    - the callable is called at several resolutions: in a loop whose variable sets the
      input's shape (`torch.randn(1, 3, s, s)`, `F.interpolate(x, size=s)`,
      `x.view(...)`, a slice bound, a `height=`/`width=`/`scale=` argument), with a
      size or scale that is a parameter of the calling function (`def upscale(img,
      scale): return decoder(F.interpolate(img, scale_factor=scale))`), or with a loop
      variable or size-named parameter passed straight in (`for scale in (2, 3, 4):
      sr(img, scale)`). The message names the value the shape comes from. A slice as
      wide on every step (`toks[:, i - 1:i]`, `x[i:i + 1]`) is one shape, not a varying
      one (a valid case; nothing moved on the 476 development apps);
    - inside a CUDA-graph region, a parameter of the compiled function used as a size
      (`F.interpolate(x, size=size)`);
    - a run recorded by `compile-lint record` (`compile-lint-regions.json`, docs/record.md)
      called a CUDA-graph compiled callable at more than one input shape: reported at its
      `forward` (or function), with the shapes (tests/test_record.py, tests/test_declared.py).

    Quiet: modes without CUDA graphs (`"default"`, `"max-autotune-no-cudagraphs"`),
    calls whose shapes are not known to vary (`for img in images: model(img)`), a name
    whose only size word is `scale` or `factor` beside a weight's word (`cfg_scale`,
    `guidance_scale`, `cond_scale`, `lora_scale`, `noise_scale`: a multiplier, which sets
    no shape; nari-labs/dia's `cfg_scale` passed to its max-autotune decoder step was
    judged false in `bench/fresh_reads/`, and on the 346 app folders of the benchmarks
    it was the only CL402 finding that went, corpus M unchanged: `bench/results.md`,
    2026-12-07 12:03), a parameter set as a size inside the region that every call of
    the compiled callable in its file (one at least) passes a literal, an attribute of
    `self` only `__init__` sets or a module-level name bound once (one value for the run: RWKV-v7's
    `time_mixing(i, self.n_head, ...)`, its 7 findings judged false in
    `bench/fresh_reads/`; the 8 fresh-read repositories with a CL402 finding 21 -> 14,
    the 24 apps of `bench/apps/` unchanged: `bench/results.md`, session 72), a call
    whose sizes come from a parameter of a def that compiles the callable itself, outside
    any loop, into a local name (`model = torch.compile(model_, mode="max-autotune")`,
    then `model(batch)` with `batch` sized from `args`: each call of the def records its
    own graphs, for one value of the parameter: the 8 fresh-read repositories with a CL402 finding
    and the 24 apps of `bench/apps/`, `check --select CL402` each whole, 16 -> 12, the 4 gone
    LLM-from-scratch's benchmark loop (2) and flopping-for-flops' two complexity scripts, all
    judged false; `bench/results.md`, session 73), and,
    except with `dynamic=False`, `torch._inductor.config.triton.cudagraph_skip_dynamic_graphs = True`
    (dynamic-shape graphs then run without CUDA graphs).

    ## Why is this bad?
    A CUDA graph is recorded for fixed shapes: every distinct input size records
    another graph with its own static memory pool. Past
    `torch._inductor.config.triton.cudagraph_dynamic_shape_warn_limit` (8) distinct
    sizes PyTorch warns (`torch/_inductor/cudagraph_utils.py`); memory grows with each
    new size and the recording time is paid again. A real case: an upscaler that
    compiled `vae.decode` with `mode="reduce-overhead"` and served requests at
    arbitrary sizes.

    ## Example
    ```python
    decode = torch.compile(vae.decode, mode="reduce-overhead")

    def upscale(latents, scale):
        return decode(F.interpolate(latents, scale_factor=scale))
    ```

    ## Use instead
    Pad or bucket inputs to a few fixed sizes, or compile without CUDA graphs:
    ```python
    decode = torch.compile(vae.decode, mode="max-autotune-no-cudagraphs")
    ```

    ## Fix safety
    Unsafe: the fix changes the compile call's `mode` to `"max-autotune-no-cudagraphs"`
    (only when the mode is written as a literal on that call, in the same file). It
    gives up CUDA graphs, so per-call CPU launch overhead comes back, and from
    `"reduce-overhead"` it also turns on max-autotune's kernel tuning, which makes the
    first compile much slower (`mode="default"` is the alternative without tuning).
    Numerics do not change.

    Measured on a GPU (scripts/gpu_verify.sh; bench/results.md, "GPU run"): on an
    NVIDIA H200 with torch 2.11.0+cu130, `fixtures/verify/cuda_multi_size_upscaler.py` compiled with `dynamic=True` and
    `mode="reduce-overhead"` recorded 11 CUDA graphs for 10 input sizes.

    ## References
    - `torch/_inductor/cudagraph_utils.py`: one CUDA graph per distinct size, a warning past
      `cudagraph_dynamic_shape_warn_limit` (8). `fixtures/verify/cuda_multi_size_upscaler.py`
      is the GPU check
    - PyTorch docs, "CUDAGraph Trees" (dynamic shapes re-record)
    """

    code = "CL402"
    name = "cudagraph-dynamic-shapes"
    summary = "CUDA-graph compiled code called at many shapes records a graph per shape"
    fix_safety = "unsafe"
    codemod = "codemods.disable_cudagraphs_mode:DisableCudagraphsMode"
    requires = ()  # the compiled callable may be imported
    needs = (RegionsFact, CompiledValuesFact, MayCallCudagraphsFact, VaryingShapesFact)  # call sites anywhere, and sizes inside CUDA-graph regions

    valid = [
        Case(
            """\
            import torch

            def next_token(tok):
                return tok * 2

            step = torch.compile(next_token, mode="reduce-overhead")

            def decode(n):
                toks = torch.zeros(1, 64)
                for i in range(1, n):
                    toks[:, i:i + 1] = step(toks[:, i - 1:i])
                return toks
            """,
            note="a slice as wide on every step (`toks[:, i - 1:i]`): one shape, one graph "
                 "(WhisperSpeech's decoding step, bench/dev_findings)",
        ),
        Case(
            """
            import torch

            def decoder_step(tokens, cfg_scale: float):
                cond, uncond = tokens.chunk(2)
                return cond + cfg_scale * (cond - uncond)

            step = torch.compile(decoder_step, mode="max-autotune")

            def generate(tokens, max_tokens, cfg_scale=3.0):
                for _ in range(max_tokens):
                    tokens = step(tokens, cfg_scale)
                return tokens
            """,
            note="a guidance weight passed straight in sets no shape (nari-labs/dia, bench/fresh_reads)",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="max-autotune-no-cudagraphs", dynamic=True)
            for size in (256, 512, 1024):
                model(torch.randn(1, 3, size, size))
            """,
            note="no CUDA graphs",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="reduce-overhead")
            for img in images:
                model(img)
            """,
            note="sizes not known to vary",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, dynamic=True)
            torch._dynamo.mark_dynamic(x, 2)
            model(x)
            """,
            note="default mode: no CUDA graphs",
        ),
        Case(
            """
            import torch
            torch._inductor.config.triton.cudagraph_skip_dynamic_graphs = True
            model = torch.compile(model, mode="reduce-overhead", dynamic=True)
            """,
            note="dynamic graphs skip CUDA graphs",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="reduce-overhead")

            def run(batch, steps):
                x = torch.zeros(batch.shape[0], 3, 512, 512)
                for _ in range(steps):
                    x = model(x)
                return x
            """,
            note="fixed resolution; shapes taken from the input",
        ),
        Case(
            """
            import torch

            def mixing(x, H: int, N: int):
                return x.view(H, N).sum(dim=-1)

            mix = torch.compile(mixing, mode="max-autotune", dynamic=False)

            class RNN(torch.nn.Module):
                def __init__(self, n_head, head_size):
                    super().__init__()
                    self.n_head, self.head_size = n_head, head_size

                def forward(self, x):
                    for i in range(4):
                        x = mix(x, self.n_head, self.head_size)
                    return x
            """,
            note="every call passes the size a value fixed for the run (an attribute of the "
                 "model: RWKV-v7's head count, judged false 7 times in bench/fresh_reads/)",
        ),
        Case(
            """
            import torch

            def benchmark(model_, args):
                batch = torch.randint(0, 100, (args.batch_size, args.context_length))
                model = torch.compile(model_, mode="max-autotune")
                for _ in range(args.trials):
                    model(batch)
            """,
            note="compiled afresh in each call of the def whose parameter sets the size (LLM-from-scratch, "
                 "bench/fresh_reads)",
        ),
    ]
    invalid = [
        Case(
            """
            import torch

            def mixing(x, H: int, N: int):
                return x.view(H, N).sum(dim=-1)

            mix = torch.compile(mixing, mode="max-autotune", dynamic=False)

            class RNN(torch.nn.Module):
                def __init__(self, n_head):
                    super().__init__()
                    self.n_head = n_head

                def resize(self, n_head):
                    self.n_head = n_head

                def forward(self, x):
                    return mix(x, self.n_head, 64)
            """,
            at=[(5, 12)],
            fixed="""
            import torch

            def mixing(x, H: int, N: int):
                return x.view(H, N).sum(dim=-1)

            mix = torch.compile(mixing, mode="max-autotune-no-cudagraphs", dynamic=False)

            class RNN(torch.nn.Module):
                def __init__(self, n_head):
                    super().__init__()
                    self.n_head = n_head

                def resize(self, n_head):
                    self.n_head = n_head

                def forward(self, x):
                    return mix(x, self.n_head, 64)
            """,
            note="an attribute a method other than `__init__` resets: it may take several values",
        ),
        Case(
            """
            import torch

            def mixing(x, H: int, N: int):
                return x.view(H, N).sum(dim=-1)

            mix = torch.compile(mixing, mode="max-autotune", dynamic=False)

            def run(x):
                for heads in (4, 8):
                    x = mix(x, heads, 64)
                return x
            """,
            at=[(5, 12)],
            fixed="""
            import torch

            def mixing(x, H: int, N: int):
                return x.view(H, N).sum(dim=-1)

            mix = torch.compile(mixing, mode="max-autotune-no-cudagraphs", dynamic=False)

            def run(x):
                for heads in (4, 8):
                    x = mix(x, heads, 64)
                return x
            """,
            note="a call passing a loop variable: several values, several graphs",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="reduce-overhead", dynamic=True)
            """,
            at=[(3, 62)],
            fixed="""
            import torch
            model = torch.compile(model, mode="max-autotune-no-cudagraphs", dynamic=True)
            """,
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            decode = torch.compile(vae.decode, mode="reduce-overhead")

            def upscale(latents, scale):
                return decode(F.interpolate(latents, scale_factor=scale))
            """,
            at=[(8, 12)],
            fixed="""
            import torch
            import torch.nn.functional as F

            decode = torch.compile(vae.decode, mode="max-autotune-no-cudagraphs")

            def upscale(latents, scale):
                return decode(F.interpolate(latents, scale_factor=scale))
            """,
            note="an upscale factor",
        ),
        Case(
            """
            import torch
            net = torch.compile(net, options={"triton.cudagraphs": True})
            for size in (256, 512, 1024):
                x = torch.randn(1, 3, size, size, device="cuda")
                net(x)
            """,
            at=[(6, 5)],
            note="a loop over sizes; options: no fix",
        ),
        Case(
            """
            import torch

            @torch.compile(mode="max-autotune")
            def sr(img, scale):
                return img.repeat_interleave(scale, -1)

            for scale in (2, 3, 4):
                sr(img, scale)
            """,
            at=[(9, 5)],
            fixed="""
            import torch

            @torch.compile(mode="max-autotune-no-cudagraphs")
            def sr(img, scale):
                return img.repeat_interleave(scale, -1)

            for scale in (2, 3, 4):
                sr(img, scale)
            """,
            note="a loop variable passed straight in",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="reduce-overhead")
            x = load()
            torch._dynamo.mark_dynamic(x, 2)
            y = model(x)
            """,
            at=[(5, 1)],
            fixed="""
            import torch
            model = torch.compile(model, mode="max-autotune-no-cudagraphs")
            x = load()
            torch._dynamo.mark_dynamic(x, 2)
            y = model(x)
            """,
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            @torch.compile(mode="reduce-overhead")
            def fit(x, size):
                return F.interpolate(x, size=size, mode="bilinear")
            """,
            at=[(7, 12)],
            fixed="""
            import torch
            import torch.nn.functional as F

            @torch.compile(mode="max-autotune-no-cudagraphs")
            def fit(x, size):
                return F.interpolate(x, size=size, mode="bilinear")
            """,
            note="a size parameter inside the region",
        ),
        Case(
            files={
                "serve.py": dedent("""
                    import torch
                    from upscaler import Upscaler

                    model = torch.compile(Upscaler(), mode="reduce-overhead")
                """),
            },
            path="upscaler.py",
            code="""
            import torch.nn as nn
            import torch.nn.functional as F

            class Upscaler(nn.Module):
                def forward(self, x, factor):
                    return F.interpolate(x, scale_factor=factor)
            """,
            at=[(7, 16)],
            note="cross-file: the compile site is in serve.py (no fix here)",
        ),
        Case(
            files={
                "engine.py": dedent("""
                    import torch
                    from blocks import Decoder

                    if torch.cuda.is_available():
                        decode = torch.compile(Decoder(), mode="reduce-overhead")
                    else:
                        decode = Decoder()
                """),
            },
            path="serve.py",
            code="""
            import torch.nn.functional as F
            from engine import decode

            def upscale(latents, scale):
                return decode(F.interpolate(latents, scale_factor=scale))
            """,
            at=[(6, 12)],
            note="cross-file: a compiled value imported from another module, bound under a module-level `if`",
        ),
        Case(
            """
            import torch

            def benchmark(model_, args):
                model = torch.compile(model_, mode="max-autotune")
                for size in (256, 512):
                    model(torch.randn(1, 3, size, size))
                for n in args.batch_sizes:
                    model(torch.randn(n, 3, 64, 64))
            """,
            at=[(7, 9), (9, 9)],
            fixed="""
            import torch

            def benchmark(model_, args):
                model = torch.compile(model_, mode="max-autotune-no-cudagraphs")
                for size in (256, 512):
                    model(torch.randn(1, 3, size, size))
                for n in args.batch_sizes:
                    model(torch.randn(n, 3, 64, 64))
            """,
            note="compiled in the def, but its loops vary the sizes",
        ),
    ]

    def check(self, facts):
        values = compiled_values(facts)
        shapes = facts.get(VaryingShapesFact)
        may_call = facts.get(MayCallCudagraphsFact)
        reported: set[int] = set()
        out = []
        skip_file = file_sets_config(facts, SKIP_DYNAMIC, True) is not None

        def emit(node, cc: Optional[CompileCall], message, region=None):
            if id(node) in reported:
                return
            reported.add(id(node))
            region = region or (cc.region() if cc else None)
            if cc is not None and cc.mode_node is not None and cc.path == facts.path and cc.mode in CUDAGRAPH_MODES:
                start, _ = facts.source.node_range(cc.mode_node)
                out.append(self.finding(
                    facts, node, message,
                    fix='compile with `mode="max-autotune-no-cudagraphs"`', unsafe=True,
                    data={"mode_at": [start.row, start.column]}, region=region,
                ))
            else:
                out.append(self.finding(facts, node, message, region=region))

        def skipped(cc: CompileCall) -> bool:
            if cc.dynamic is False:
                return False
            return skip_file or cc.options.get(SKIP_DYNAMIC) is True

        # (a) dynamic=True on a CUDA-graph compile
        seen_cc = {}
        for binding in values.bindings:
            seen_cc[id(binding[4])] = binding[4]
        for call in facts.nodes(ast.Call) if may_call else ():
            cc = values.compile_call(call)
            if cc is not None:
                seen_cc[id(cc)] = cc
        for cc in seen_cc.values():
            if cc.cudagraphs and cc.dynamic is True and not skipped(cc):
                node = cc.dynamic_node or cc.node
                emit(node, cc, "`dynamic=True` on a CUDA-graph compile: every distinct input shape records another CUDA graph")

        # (b) mark_dynamic, (c) several resolutions, at calls of CUDA-graph callables
        for call in facts.nodes(ast.Call) if may_call else ():
            if chain_text(call.func) is None:
                continue
            cc = values.callee(call.func, call)
            if cc is None or not cc.cudagraphs:
                continue
            marked = shapes.marked(call)
            if marked is not None and not skipped(cc):
                emit(marked, cc, f"`{stmt_text(facts, marked, 40)}` makes an input of a CUDA-graph callable dynamic: "
                     "one graph per distinct size")
                continue
            reason = shapes.varying(call, parameters=not _compiled_per_call(facts, cc, call))
            if reason is not None and not skipped(cc):
                emit(call, cc, f"`{stmt_text(facts, call, 40)}` calls a CUDA-graph callable at varying shapes "
                     f"({reason}): one graph per distinct size")

        # (d) a parameter used as a size inside a CUDA-graph region (once per statement)
        seen_statements: set[int] = set()
        calls_of = None
        for node, region in region_nodes(facts, (ast.Call, ast.Subscript), kind="cudagraph"):
            func = facts.enclosing_function(node)
            if not is_entry(facts, func, region):
                continue
            used = shapes.size_use(node, input_params(func))
            if not used or id(facts.statement_of(node)) in seen_statements:
                continue
            seen_statements.add(id(facts.statement_of(node)))
            site_cc = None
            site = region.sites[0] if region.sites else None
            if site is not None and site.path == facts.path:
                found = site_call(facts, site)
                site_cc = found[1] if found else None
            if site_cc is not None and skipped(site_cc):
                continue
            if site_cc is None and skip_file:
                continue
            if site_cc is not None and calls_of is None:  # (once per file, when a size parameter is found)
                calls_of = _calls_by_compile(facts, values)
            if site_cc is not None and _every_call_passes_a_run_constant(facts, calls_of.get(id(site_cc), ()), func, used):
                continue
            emit(node, site_cc, f"parameter `{used}` sets a shape in CUDA-graph compiled code: each distinct value "
                 "records another graph", region=region)
        # (e) a recorded run saw a CUDA-graph compiled callable at several input shapes
        for func, site in shapes.recorded_shapes():
            shapes = site.recording.shapes
            shown = "; ".join(shapes[:3]) + ("; ..." if len(shapes) > 3 else "")
            out.append(self.finding(
                facts, def_name(func),
                f"CUDA-graph compiled `{facts.qualname_of(func)}` ran at {len(shapes)} input shapes ({shown}) "
                "in a recorded run: one graph per shape",
                region=facts.region_of(func),
            ))
        yield from out


def _compiled_per_call(facts, cc: CompileCall, call: ast.Call) -> bool:
    """The callable `call` calls is compiled in the same def, outside any loop, and kept
    in a local name: each call of the def records its own graphs, and the def's
    parameters hold one value for them (`model = torch.compile(model_, mode="max-autotune")`
    then `model(batch)` with `batch` sized from `args`: LLM-from-scratch's benchmark and
    flopping-for-flops' `compute_complexity`, judged false in bench/fresh_reads)."""
    func = facts.enclosing_function(call)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or cc.path != facts.path \
            or not isinstance(cc.node, ast.Call) or facts.enclosing_function(cc.node) is not func:
        return False
    if not isinstance(call.func, ast.Name):
        return False
    for anc in facts.ancestors(cc.node):
        if anc is func:
            break
        if isinstance(anc, (ast.For, ast.AsyncFor, ast.While)):
            return False
    stmt = facts.parent(cc.node)
    if not (isinstance(stmt, ast.Assign) and stmt.value is cc.node and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == call.func.id):
        return False
    return not any(isinstance(n, (ast.Global, ast.Nonlocal)) and call.func.id in n.names for n in ast.walk(func))


def _calls_by_compile(facts, values) -> dict:
    """id(CompileCall) -> the calls of this file of the callable it makes."""
    out: dict = {}
    for call in facts.nodes(ast.Call):
        if chain_text(call.func) is not None:
            cc = values.callee(call.func, call)
            if cc is not None:
                out.setdefault(id(cc), []).append(call)
    return out


def _every_call_passes_a_run_constant(facts, calls: list, func, param: str) -> bool:
    """Every call of the compiled callable in this file (`calls`, at least one) passes
    `param` a value that stays one value for a run: a literal, an attribute of `self` only
    `__init__` sets (RWKV-v7's `time_mixing(i, self.n_head, ...)`: one head count per loaded
    model), or a module-level name bound once. Then no second value, no second graph.
    Unknown callers (another file, none here) leave the finding."""
    args = func.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    index = positional.index(param) - (1 if positional[0] in ("self", "cls") else 0) if param in positional else None
    for call in calls:
        # (a `*` argument before the parameter's position hides which one it is)
        known = index is not None and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1])
        passed = call_argument(call, index if known else None, param)
        if passed is None or not _run_constant(facts, passed):
            return False
    return bool(calls)


def _run_constant(facts, expr) -> bool:
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        # set in `__init__` only: one value per instance (a method that resets it per
        # request makes it vary)
        stores = [n for n in facts.nodes(ast.Attribute) if n.attr == expr.attr and isinstance(n.ctx, ast.Store)
                  and isinstance(n.value, ast.Name) and n.value.id == "self"]
        return all(getattr(facts.enclosing_function(n), "name", None) == "__init__" for n in stores)
    if isinstance(expr, ast.Name):
        bound = [n for n in facts.nodes(ast.Name) if n.id == expr.id and isinstance(n.ctx, ast.Store)]
        return len(bound) == 1 and facts.enclosing_function(bound[0]) is None \
            and facts.enclosing_function(expr) is not None
    return False

