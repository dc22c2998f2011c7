"""Why the inputs of a CUDA-graph compiled call take several shapes.

A CUDA graph is recorded for fixed shapes; each new input size records another graph
(CL402). `VaryingShapes(facts)` answers, at a call of such a callable or inside its
region:

- `marked(call)`: a `torch._dynamo.mark_dynamic(x, ...)` (or `maybe_mark_dynamic`,
  `mark_unbacked`) earlier in the same scope on a name the call passes;
- `varying(call)`: a loop variable or a parameter of the calling def that sets the
  input's shape: passed straight in when its name says size (`scale`, `height`, `res`),
  as a size keyword of the call (`height=h`), or flowing into a size position of a
  tensor factory, a resize op, a `.view()`/`.reshape()` or a slice bound that builds an
  argument (through assignments in the scope, not through `.shape` / `.size()` /
  `len()`, which only pass an existing size on);
- `size_use(node, params)`: inside the region, a parameter used in such a size position;
- `recorded_shapes()`: entry defs whose recorded run (`compile-lint record`) saw more
  than one input shape at a CUDA-graph site.
"""
from __future__ import annotations

import ast
import re
from typing import Optional

from ...analysis.semantic.facts import Fact, ModuleFacts
from ...analysis.reach.entries import input_params
from ...analysis.reach.queries import is_number, stmt_text
from ...analysis.torch_api import MARK_DYNAMIC_FUNCS

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


# "scale" and "factor" name a weight as often as a size: with one of these words beside
# them (`cfg_scale`, `guidance_scale`, `cond_scale`, `lora_scale`, `noise_scale`) they are
# a multiplier, which sets no shape (nari-labs/dia's `cfg_scale` passed to a max-autotune
# step, judged false in bench/fresh_reads/)
AMBIGUOUS_SIZE_WORDS = frozenset({"scale", "scales", "factor", "factors"})
WEIGHT_WORDS = frozenset(
    {"cfg", "guidance", "cond", "uncond", "lora", "noise", "logit", "logits", "loss", "grad", "lr", "ema", "weight",
     "weights", "attn", "attention", "temperature", "temp", "sigma", "strength", "style", "prompt", "text"}
)


def size_like(name: str) -> bool:
    parts = [p for p in re.split(r"[_\d]+", name.lower()) if p]
    sizes = [p for p in parts if p in SIZE_WORDS]
    if sizes and all(p in AMBIGUOUS_SIZE_WORDS for p in sizes) and any(p in WEIGHT_WORDS for p in parts):
        return False
    return bool(sizes)


class VaryingShapesFact(Fact):
    """Size and shape flow around CUDA-graph compiled calls (VaryingShapes), per file."""

    name = "varying shapes"

    @classmethod
    def compute(cls, facts: ModuleFacts) -> "VaryingShapes":
        return VaryingShapes(facts)


class VaryingShapes:
    def __init__(self, facts: ModuleFacts):
        self.facts = facts

    def recorded_shapes(self):
        """(entry def, recorded site) for CUDA-graph sites whose recording saw >1 input shape."""
        facts = self.facts
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

    def size_use(self, node, params) -> Optional[str]:
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
                if isinstance(sl, ast.Slice) and not _fixed_width(sl):
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

    def marked(self, call) -> Optional[ast.Call]:
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

    def varying(self, call, parameters: bool = True) -> Optional[str]:
        """Why the inputs of `call` take several shapes, or None. `parameters` False: the
        parameters of the calling def hold one value for the callable called (it is
        compiled afresh on each call of the def), only loops vary the shapes."""
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
        if func is not None and not isinstance(func, ast.Lambda) and parameters:
            for name in input_params(func):
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


def _fixed_width(sl: ast.Slice) -> bool:
    """A slice whose bounds are the same value plus constants (`toks[:, i:i + 1]`,
    `pos[i - 1:i]`): as wide on every step whatever that value is (WhisperSpeech's
    one-token decoding step, judged false in bench/dev_findings)."""
    if sl.lower is None or sl.upper is None or sl.step is not None:
        return False
    low, high = _offset(sl.lower), _offset(sl.upper)
    return low is not None and high is not None and low[0] == high[0]


def _offset(expr) -> Optional[tuple]:
    """(the dump of `x`, c) for `x`, `x + c`, `x - c`, `c + x` with `c` an int literal."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        for base, const, sign in ((expr.left, expr.right, 1 if isinstance(expr.op, ast.Add) else -1),
                                  (expr.right, expr.left, 1 if isinstance(expr.op, ast.Add) else None)):
            if sign is not None and isinstance(const, ast.Constant) and type(const.value) is int:
                return ast.dump(base), sign * const.value
        return None
    if isinstance(expr, ast.Constant):
        return None
    return ast.dump(expr), 0
