from __future__ import annotations

import ast
import re
from textwrap import dedent
from typing import Optional

from ..analysis.torch_api import MARK_DYNAMIC_FUNCS
from ..analysis.compiled_values import CompileCall, chain_text, compiled_values, site_call
from ..analysis.region_queries import def_name, file_sets_config, is_number, region_nodes, stmt_text
from ..analysis.facts import RegionsFact
from ..analysis.compiled_values import CompiledValuesFact
from .base import Case, Rule

MARK_DYNAMIC = MARK_DYNAMIC_FUNCS
SKIP_DYNAMIC = "triton.cudagraph_skip_dynamic_graphs"
FACTORIES = frozenset({"zeros", "ones", "empty", "rand", "randn", "full", "randint", "zeros_like", "ones_like"})
# keywords of the compiled call itself that set its input size (`pipe(..., height=h)`)
SIZE_KEYWORDS = frozenset({"size", "scale_factor", "output_size", "shape", "height", "width", "resolution", "upscale", "target_size", "new_size", "dsize"})
# keywords of a resize op that set its output size
RESIZE_KEYWORDS = frozenset({"size", "scale_factor", "output_size", "dsize", "new_size", "target_size"})
SHAPE_METHODS = frozenset({"view", "reshape", "expand", "new_zeros", "new_ones", "new_empty", "new_full", "resize", "resize_", "repeat", "tile", "unflatten"})
RESIZE_FUNCS = frozenset({"interpolate", "upsample", "resize", "Resize", "pad", "adaptive_avg_pool2d", "adaptive_max_pool2d", "pixel_shuffle", "center_crop", "crop", "resized_crop"})
SIZE_WORDS = frozenset(
    {"size", "sizes", "scale", "scales", "height", "width", "h", "w", "res", "resolution", "resolutions", "factor",
     "factors", "shape", "shapes", "side", "upscale", "zoom", "hw", "dims", "long", "short", "tile", "crop"}
)
PASSTHROUGH = ("shape", "size", "dtype", "device", "ndim", "numel", "dim", "nelement")


def size_like(name: str) -> bool:
    parts = [p for p in re.split(r"[_\d]+", name.lower()) if p]
    return any(p in SIZE_WORDS for p in parts)


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
      sr(img, scale)`);
    - inside a CUDA-graph region, a parameter of the compiled function used as a size
      (`F.interpolate(x, size=size)`);
    - a run recorded by `compile-lint record` (`compile-lint-regions.json`, docs/record.md)
      called a CUDA-graph compiled callable at more than one input shape: reported at its
      `forward` (or function), with the shapes (tests/test_record.py, tests/test_declared.py).

    Quiet: modes without CUDA graphs (`"default"`, `"max-autotune-no-cudagraphs"`),
    calls whose shapes are not known to vary (`for img in images: model(img)`), and,
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
    needs = (RegionsFact, CompiledValuesFact,)  # call sites anywhere, and sizes inside CUDA-graph regions

    valid = [
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
    ]
    invalid = [
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
    ]

    def check(self, facts):
        values = compiled_values(facts)
        self.facts, self.values = facts, values
        may_call = values.may_call_compiled(cudagraphs=True)
        reported: set[int] = set()
        out = []
        skip_file = file_sets_config(facts, SKIP_DYNAMIC, True) is not None

        def emit(node, cc: Optional[CompileCall], message, region=None):
            if id(node) in reported:
                return
            reported.add(id(node))
            region = region or (cc.region() if cc else None)
            if cc is not None and cc.mode_node is not None and cc.path == facts.path and cc.mode in ("reduce-overhead", "max-autotune"):
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
            marked = self._marked(call)
            if marked is not None and not skipped(cc):
                emit(marked, cc, f"`{stmt_text(facts, marked, 40)}` makes an input of a CUDA-graph callable dynamic: "
                     "one graph per distinct size")
                continue
            reason = self._varying(call)
            if reason is not None and not skipped(cc):
                emit(call, cc, f"`{stmt_text(facts, call, 40)}` calls a CUDA-graph callable at varying shapes: "
                     "one graph per distinct size")

        # (d) a parameter used as a size inside a CUDA-graph region (once per statement)
        seen_statements: set[int] = set()
        for node, region in region_nodes(facts, (ast.Call, ast.Subscript), kind="cudagraph"):
            func = facts.enclosing_function(node)
            if not self._entry(facts, func, region):
                continue
            params = self._params(func)
            used = self._size_uses(node, params)
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
            emit(node, site_cc, f"parameter `{used}` sets a shape in CUDA-graph compiled code: each distinct value "
                 "records another graph", region=region)
        # (e) a recorded run saw a CUDA-graph compiled callable at several input shapes
        for func, site in self._recorded_shapes(facts):
            shapes = site.recording.shapes
            shown = "; ".join(shapes[:3]) + ("; ..." if len(shapes) > 3 else "")
            out.append(self.finding(
                facts, def_name(func),
                f"CUDA-graph compiled `{facts.qualname_of(func)}` ran at {len(shapes)} input shapes ({shown}) "
                "in a recorded run: one graph per shape",
                region=facts.region_of(func),
            ))
        yield from out

    # -- helpers -----------------------------------------------------------------------
    @staticmethod
    def _recorded_shapes(facts):
        """(entry def, recorded site) for CUDA-graph sites whose recording saw >1 input shape."""
        if not facts.has_region("cudagraph"):
            return
        for func in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            region = facts.region_of(func)
            if region is None or region.via is not None or "cudagraph" not in region.kinds:
                continue
            qual = facts.qualname_of(func)
            dotted = f"{facts.names.module}.{qual}" if facts.names.module else qual
            for site in region.sites:
                rec = site.recording
                target = site.target.dotted if site.target else None
                if target not in (dotted, dotted.rsplit(".", 1)[0]):
                    continue  # not this site's entry
                if rec is not None and site.cudagraphs and len(rec.shapes) > 1:
                    yield func, site
                    break

    @staticmethod
    def _entry(facts, func, region) -> bool:
        if func is None or isinstance(func, ast.Lambda):
            return False
        if region.via is None:
            return True
        qual = facts.qualname_of(func)
        dotted = f"{facts.names.module}.{qual}" if facts.names.module else qual
        for site in region.sites:
            target = site.target.dotted if site.target else None
            if target == dotted or (target and dotted in (target + ".forward", target + ".__call__")):
                return True
        return False

    @staticmethod
    def _params(func) -> list[str]:
        args = func.args
        names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        return [n for n in names if n not in ("self", "cls")]

    def _size_uses(self, node, params) -> Optional[str]:
        """A size-like parameter (`size`, `scale`, `height`, ...) used directly in a size
        position of this call/slice; any parameter as a resize op's size."""
        facts = self.facts
        dotted = facts.resolve(node.func) if isinstance(node, ast.Call) else None
        tail = (dotted or "").rsplit(".", 1)[-1] if dotted else (node.func.attr if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else "")
        resize = isinstance(node, ast.Call) and tail in RESIZE_FUNCS
        for expr in self._size_positions(node):
            for sub in ast.walk(expr):
                if isinstance(sub, ast.Name) and sub.id in params:
                    if self._through_shape(expr, sub) or not (resize or size_like(sub.id)):
                        continue
                    return sub.id
        return None

    @staticmethod
    def _through_shape(expr, name) -> bool:
        """`x.shape[2] * 2`, `x.size(-1)`: a size taken from a tensor, not a value."""
        for sub in ast.walk(expr):
            if isinstance(sub, ast.Attribute) and sub.attr in PASSTHROUGH and any(n is name for n in ast.walk(sub.value)):
                return True
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in PASSTHROUGH and any(n is name for n in ast.walk(sub.func.value)):
                return True
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "len" and any(n is name for n in ast.walk(sub)):
                return True
        return False

    def _size_positions(self, node) -> list:
        facts = self.facts
        out = []
        if isinstance(node, ast.Subscript):
            for sl in ast.walk(node.slice):
                if isinstance(sl, ast.Slice):
                    out += [e for e in (sl.lower, sl.upper) if e is not None]
            return out
        if not isinstance(node, ast.Call):
            return out
        dotted = facts.resolve(node.func) or ""
        tail = dotted.rsplit(".", 1)[-1] if dotted else (node.func.attr if isinstance(node.func, ast.Attribute) else "")
        if dotted.startswith("torch.") and dotted.count(".") == 1 and tail in FACTORIES and not tail.endswith("_like"):
            out += [a for a in node.args if not isinstance(a, ast.Constant)]
        if tail in RESIZE_FUNCS:
            out += list(node.args[1:2]) + [k.value for k in node.keywords if k.arg in RESIZE_KEYWORDS]
        if isinstance(node.func, ast.Attribute) and not dotted and tail in SHAPE_METHODS:
            out += list(node.args)
        return out

    def _marked(self, call) -> Optional[ast.Call]:
        """A `mark_dynamic(x, ...)` before `call`, in its scope, on an argument of it."""
        facts = self.facts
        scope = facts.enclosing_function(call) or facts.tree
        names = {a.id for a in call.args if isinstance(a, ast.Name)} | {k.value.id for k in call.keywords if isinstance(k.value, ast.Name)}
        if not names:
            return None
        for node in ast.walk(scope):
            if isinstance(node, ast.Call) and facts.resolve(node.func) in MARK_DYNAMIC and node.args:
                if isinstance(node.args[0], ast.Name) and node.args[0].id in names and node.lineno <= call.lineno:
                    if facts.enclosing_function(node) is facts.enclosing_function(call):
                        return node
        return None

    def _varying(self, call) -> Optional[str]:
        """Why the inputs of `call` take several shapes, or None."""
        facts = self.facts
        func = facts.enclosing_function(call)
        sources: dict[str, str] = {}
        loops = []
        for anc in facts.ancestors(call):
            if anc is func:
                break
            if isinstance(anc, (ast.For, ast.AsyncFor)):
                loops.append(anc)
                for name in ast.walk(anc.target):
                    if isinstance(name, ast.Name):
                        numeric = self._numeric_iter(anc.iter)
                        sources[name.id] = f"loop variable `{name.id}`" + (" over several sizes" if numeric else "")
                        if size_like(name.id):
                            sources[name.id] += "\u0000direct"
            elif isinstance(anc, ast.comprehension):
                pass
        if func is not None and not isinstance(func, ast.Lambda):
            for name in self._params(func):
                sources.setdefault(name, f"parameter `{name}` of `{func.name}`" + ("\u0000direct" if size_like(name) else ""))
        if not sources:
            return None
        scope = func or facts.tree
        tainted = self._taint(scope, dict(sources), call)
        # arguments passed straight in
        for arg in list(call.args) + [k.value for k in call.keywords]:
            if isinstance(arg, ast.Name) and arg.id in tainted and tainted[arg.id].endswith("\u0000direct"):
                return tainted[arg.id].split("\u0000")[0] + " passed in"
        for kw in call.keywords:
            if kw.arg in SIZE_KEYWORDS and not is_number(kw.value):
                for sub in ast.walk(kw.value):
                    if isinstance(sub, ast.Name) and sub.id in tainted:
                        return f"`{kw.arg}=` from " + tainted[sub.id].split("\u0000")[0]
        # shapes built from a tainted value
        for arg in list(call.args) + [k.value for k in call.keywords]:
            found = self._shaped_by(arg, tainted, scope, call, 0)
            if found:
                return found
        return None

    @staticmethod
    def _numeric_iter(expr) -> bool:
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            return len(expr.elts) > 1 and all(is_number(e) or (isinstance(e, ast.Tuple) and all(is_number(x) for x in e.elts)) for e in expr.elts)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "range":
            return True
        return False

    def _taint(self, scope, tainted: dict[str, str], before) -> dict[str, str]:
        """Names whose value is computed from a source (not through `.shape`/`.size()`)."""
        assigns = [n for n in ast.walk(scope) if isinstance(n, ast.Assign) and n.lineno <= before.lineno]
        for _ in range(3):
            for node in assigns:
                if self.facts.enclosing_function(node) is not (scope if scope is not self.facts.tree else None):
                    continue
                for sub in ast.walk(node.value):
                    if isinstance(sub, ast.Name) and sub.id in tainted and not self._through_shape(node.value, sub):
                        for target in node.targets:
                            for t in ast.walk(target):
                                if isinstance(t, ast.Name) and t.id not in tainted:
                                    tainted[t.id] = tainted[sub.id]
                        break
        return tainted

    def _shaped_by(self, expr, tainted, scope, call, depth) -> Optional[str]:
        """A size position inside `expr` (or the values of names it uses) holding a tainted value."""
        if depth > 3:
            return None
        for node in ast.walk(expr):
            if isinstance(node, (ast.Call, ast.Subscript)):
                for pos in self._size_positions(node):
                    for sub in ast.walk(pos):
                        if isinstance(sub, ast.Name) and sub.id in tainted and not self._through_shape(pos, sub):
                            return f"`{stmt_text(self.facts, node, 40)}` takes its size from " + tainted[sub.id].split("\u0000")[0]
            if isinstance(node, ast.Name) and node is not expr or (isinstance(node, ast.Name) and depth == 0):
                value = self._binding(node, scope, call)
                if value is not None:
                    found = self._shaped_by(value, tainted, scope, call, depth + 1)
                    if found:
                        return found
        return None

    def _binding(self, name, scope, call) -> Optional[ast.AST]:
        best = None
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and node.lineno < call.lineno and any(isinstance(t, ast.Name) and t.id == name.id for t in node.targets):
                if self.facts.enclosing_function(node) is self.facts.enclosing_function(call):
                    if best is None or node.lineno > best.lineno:
                        best = node
        return best.value if best is not None else None
