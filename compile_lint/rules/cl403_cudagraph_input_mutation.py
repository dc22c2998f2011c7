from __future__ import annotations

import ast
import re
from textwrap import dedent
from typing import Optional

from ..analysis.compiled_values import literal
from ..analysis.tensors import NON_TENSOR_ATTRS, TENSOR_ANNOTATIONS, TENSOR_METHODS
from ..analysis.region_queries import ClassAttrsFact, class_attrs, stmt_text
from ..analysis.facts import RegionsFact
from ..analysis.compiled_values import CompiledValuesFact
from .base import Case, Rule
from .cl401_cudagraph_output_retained import ALIAS_METHODS

TORCH_OP_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.special.", "torch.fft.", "torch._C._nn.")
INPLACE_METHOD = re.compile(r"^[a-z][a-z0-9_]*[a-z0-9]_$")
NOT_MUTATING = frozenset({"requires_grad_", "retain_grad_", "share_memory_", "record_stream_", "pin_memory_"})
INPLACE_MODULES = frozenset({"ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "Hardtanh", "Hardswish", "Hardsigmoid", "SiLU", "Mish", "Threshold", "Dropout", "Dropout2d", "Dropout3d", "AlphaDropout", "RReLU"})
VIEW_ALIASES = ALIAS_METHODS - {"to", "float", "half", "bfloat16", "type_as", "cuda", "get", "values", "__getitem__"}
# attributes only tensors have (not dicts or lists): evidence that a parameter is a tensor
TENSOR_ONLY = frozenset(
    {"view", "view_as", "reshape", "permute", "transpose", "unsqueeze", "squeeze", "flatten", "expand", "expand_as",
     "contiguous", "detach", "clone", "to", "float", "half", "size", "dim", "numel", "cuda", "narrow", "unbind", "chunk",
     "masked_fill", "new_zeros", "new_ones", "new_empty", "type_as", "mT", "T"}
)


class CudagraphInputMutation(Rule):
    """
    ## What it does
    Finds in-place changes to a parameter of a function (or `forward`) compiled with
    CUDA graphs (`mode="reduce-overhead"`, `mode="max-autotune"`,
    `options={"triton.cudagraphs": True}`): `x.add_(...)`, `x.copy_(...)`,
    `x.clamp_(...)`, any other `*_` tensor method, `x[...] = v`, `x[...] += v`,
    `x += v` on a tensor, `out=x`, `F.relu(x, inplace=True)`, `torch.relu_(x)`, and an
    `nn.ReLU(inplace=True)`-like submodule applied to `x`. Views of the parameter
    (`x[0]`, `x.view(...)`, `x.detach()`) count as the parameter; rebinding the name
    (`x = x * 2`, `x = x.clone()`) ends it. A helper of the same file called with the
    parameter is followed one level.

    ## Why is this bad?
    CUDA graphs need inputs that the graph does not write. When the compiled graph
    mutates one of its inputs, Inductor logs "skipping cudagraphs due to mutated
    inputs" and runs that graph without CUDA graphs (`torch/_inductor/cudagraph_utils.py`):
    the `mode="reduce-overhead"` speed-up silently disappears.

    ## Example
    ```python
    @torch.compile(mode="reduce-overhead")
    def denormalize(img, mean, std):
        img.mul_(std).add_(mean)
        return img.clamp_(0, 1)
    ```

    ## Use instead
    ```python
    @torch.compile(mode="reduce-overhead")
    def denormalize(img, mean, std):
        return (img * std + mean).clamp(0, 1)
    ```

    ## Fix safety
    No fix: callers may rely on the input being changed in place.

    ## References
    - `torch/_inductor/cudagraph_utils.py`: "skipping cudagraphs due to mutated inputs".
      `fixtures/verify/cuda_inplace_normalize.py` is the GPU check
    - pytorch#117281, pytorch#121861
    """

    code = "CL403"
    name = "cudagraph-input-mutation"
    summary = "In-place change of an input of CUDA-graph compiled code disables CUDA graphs"
    requires = ()
    needs = (RegionsFact, ClassAttrsFact, CompiledValuesFact,)  # fires only inside compiled regions

    valid = [
        Case(
            """
            import torch

            @torch.compile(mode="reduce-overhead")
            def denormalize(img, mean, std):
                return (img * std + mean).clamp(0, 1)
            """,
            note="out of place",
        ),
        Case(
            """
            import torch

            @torch.compile(mode="reduce-overhead")
            def denormalize(img, mean, std):
                img = img.clone()
                img.mul_(std).add_(mean)
                return img
            """,
            note="works on a copy",
        ),
        Case(
            """
            import torch

            @torch.compile(mode="max-autotune-no-cudagraphs")
            def denormalize(img, mean, std):
                img.mul_(std).add_(mean)
                return img
            """,
            note="no CUDA graphs",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 3, 3)
                    self.act = nn.ReLU(inplace=True)

                def forward(self, x, cache: dict, step: int):
                    y = self.act(self.conv(x))
                    y += 1
                    cache["last"] = step
                    step += 1
                    return y

            model = torch.compile(Block(), mode="reduce-overhead")
            """,
            note="in-place on intermediates; a dict and an int parameter",
        ),        Case(
            """
            import torch

            @torch.compile(mode="reduce-overhead")
            def f(x, table: dict, key):
                out = x.clone()
                out[:, 3:4] = 0
                table[key, 1] = out
                return out
            """,
            note="writes into a clone and a dict keyed by a tuple",
        ),
    ]
    invalid = [
        Case(
            """
            import torch

            @torch.compile(mode="reduce-overhead")
            def denormalize(img, mean, std):
                img.mul_(std).add_(mean)
                return img.clamp_(0, 1)
            """,
            at=[(6, 5), (7, 12)],
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Inpaint(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.act = nn.ReLU(inplace=True)

                def forward(self, image: torch.Tensor, mask):
                    hole = image[:, :3]
                    hole[mask > 0.5] = 0
                    image += 1
                    return self.act(image)

            model = torch.compile(Inpaint(), mode="max-autotune")
            """,
            at=[(12, 9), (13, 9), (14, 16)],
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            def _norm(t):
                t.sub_(t.mean())

            def step(x, buf):
                _norm(x)
                torch.add(x, 1, out=buf)
                return F.relu(x, inplace=True)

            fast = torch.compile(step, options={"triton.cudagraphs": True})
            """,
            at=[(9, 5), (10, 5), (11, 12)],
            note="through a helper, out=, inplace=True",
        ),
        Case(
            files={
                "train.py": dedent("""
                    import torch
                    from blocks import Shift

                    model = torch.compile(Shift(), mode="reduce-overhead")
                """),
            },
            path="blocks.py",
            code="""
            import torch.nn as nn

            class Shift(nn.Module):
                def forward(self, x):
                    x.copy_(x.roll(1, -1))
                    return x
            """,
            at=[(6, 9)],
            note="cross-file",
        ),        Case(
            """
            import torch

            @torch.compile(mode="reduce-overhead")
            def composite(x, alpha):
                x[:, 3:4] = alpha
                return x
            """,
            at=[(6, 5)], note="subscript assignment into a parameter; the multi-axis index says it is a tensor",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Paste(nn.Module):
                def forward(self, canvas, patch, top: int, left: int):
                    h, w = patch.shape[-2:]
                    canvas[..., top:top + h, left:left + w] = patch
                    return canvas

            paste = torch.compile(Paste(), mode="max-autotune")
            """,
            at=[(8, 9)], note="slices on two axes into a parameter",
        ),
    ]

    def check(self, facts):
        if not facts.has_region("cudagraph"):
            return
        self.facts = facts
        self._attrs_cache = {}
        self._tensor_cache = {}
        for func in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            region = facts.in_region(func, "cudagraph")
            if region is None or not self._entry(facts, func, region):
                continue
            params = self._params(func)
            if not params:
                continue
            for node, name, how in self._mutations(func, set(params), depth=0):
                yield self.finding(
                    facts, node,
                    f"{how.format(name=name)}: CUDA graphs are skipped for this compiled code",
                    region=region,
                )

    @staticmethod
    def _entry(facts, func, region) -> bool:
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

    def _tensorish(self, func, name: str) -> bool:
        key = (id(func), name)
        if key not in self._tensor_cache:
            self._tensor_cache[key] = self._tensorish_uncached(func, name)
        return self._tensor_cache[key]

    def _tensorish_uncached(self, func, name: str) -> bool:
        """The parameter is used as a tensor (annotation, tensor methods/attributes, torch ops)."""
        facts = self.facts
        for arg in func.args.posonlyargs + func.args.args + func.args.kwonlyargs:
            if arg.arg == name and arg.annotation is not None:
                dotted = facts.resolve(arg.annotation) or ""
                if dotted in TENSOR_ANNOTATIONS or (isinstance(arg.annotation, ast.Constant) and "Tensor" in str(arg.annotation.value)):
                    return True
                return False
        for node in ast.walk(func):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name:
                if multi_axis(node.slice):
                    return True
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
                attr = node.attr
                if attr in TENSOR_METHODS or attr in NON_TENSOR_ATTRS or attr in TENSOR_ONLY or INPLACE_METHOD.match(attr):
                    return True
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == name:
                dotted = facts.resolve(node.func) or ""
                if dotted.startswith("torch."):
                    return True
                if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.value.id == "self":
                    if self._torch_submodule(node, node.func.attr):
                        return True
        return False

    def _class_attrs(self, node) -> dict[str, list[ast.Call]]:
        return {attr: [call for _, call in pairs] for attr, pairs in class_attrs(self.facts, node).items()}

    def _torch_submodule(self, call, attr) -> bool:
        """`self.<attr>` is built from a `torch.nn` layer in its class."""
        return any((self.facts.resolve(c.func) or "").startswith("torch.nn.") for c in self._class_attrs(call).get(attr, ()))

    def _view_alias(self, alias: str, name: str, func) -> bool:
        """`alias` holds the parameter itself or a view of it (not an int copy of it)."""
        return alias == name or self._tensorish(func, name)

    def _inplace_module(self, call: ast.Call) -> bool:
        """`self.act(x)` where `self.act = nn.ReLU(inplace=True)` (or `nn.ReLU(True)`)."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
            return False
        for value in self._class_attrs(call).get(func.attr, ()):
            dotted = self.facts.resolve(value.func) or ""
            short = dotted.rsplit(".", 1)[-1]
            if not (dotted.startswith("torch.nn.") and short in INPLACE_MODULES):
                continue
            if any(k.arg == "inplace" and literal(k.value) is True for k in value.keywords):
                return True
            index = 0 if short in ("ReLU", "ReLU6", "SELU", "Hardswish", "Hardsigmoid", "SiLU", "Mish") else 1
            if len(value.args) > index and literal(value.args[index]) is True:
                return True
        return False

    def _alias_of(self, expr, aliases: dict[str, str]) -> Optional[str]:
        """The parameter `expr` is (a view of), if any."""
        while True:
            if isinstance(expr, ast.Name):
                return aliases.get(expr.id)
            if isinstance(expr, ast.Subscript):
                expr = expr.value
            elif isinstance(expr, ast.Attribute) and expr.attr in ("data", "T", "mT", "real", "imag"):
                expr = expr.value
            elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in VIEW_ALIASES:
                expr = expr.func.value
            else:
                return None

    def _mutations(self, func, params: set[str], depth: int):
        """(node, parameter, how) for each in-place change of a parameter, in source order."""
        facts = self.facts
        aliases = {p: p for p in params}
        tensor = {p: self._tensorish(func, p) for p in params}
        found = []
        for stmt in _statements(func.body):
            # calls inside the statement
            for node in _own_nodes(stmt):
                if isinstance(node, ast.Call):
                    hit = self._call_mutation(node, aliases, depth)
                    if hit is not None:
                        found.append(hit)
            # loop and with targets rebind names
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                source = self._alias_of(stmt.iter, aliases)
                for t in ast.walk(stmt.target):
                    if isinstance(t, ast.Name):
                        if source is not None and isinstance(stmt.target, ast.Name) and tensor.get(source):
                            aliases[t.id] = source  # rows of a tensor are views of it
                        else:
                            aliases.pop(t.id, None)
            if isinstance(stmt, (ast.With, ast.AsyncWith)):
                for item in stmt.items:
                    for t in ast.walk(item.optional_vars) if item.optional_vars is not None else ():
                        if isinstance(t, ast.Name):
                            aliases.pop(t.id, None)
            # stores
            if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Subscript):
                        name = self._alias_of(target.value, aliases)
                        if name is not None and (tensor.get(name) or name not in params):
                            found.append((stmt, name, "writes into the input `{name}`"))
                    elif isinstance(stmt, ast.AugAssign) and isinstance(target, ast.Name):
                        name = aliases.get(target.id)
                        if name is not None and tensor.get(name) and self._view_alias(target.id, name, func):
                            found.append((stmt, name, "updates the input `{name}` in place"))
                if isinstance(stmt, ast.Assign) or (isinstance(stmt, ast.AnnAssign) and stmt.value is not None):
                    value = stmt.value
                    source = self._alias_of(value, aliases)
                    for target in targets:
                        if isinstance(target, ast.Name):
                            if source is not None:
                                aliases[target.id] = source
                            else:
                                aliases.pop(target.id, None)
        seen = set()
        out = []
        for node, name, how in found:
            if id(node) not in seen:
                seen.add(id(node))
                out.append((node, name, how))
        return sorted(out, key=lambda item: (item[0].lineno, item[0].col_offset))

    def _call_mutation(self, call: ast.Call, aliases, depth):
        facts = self.facts
        func = call.func
        dotted = facts.resolve(func) or ""
        if isinstance(func, ast.Attribute) and not dotted.startswith("torch."):
            attr = func.attr
            if INPLACE_METHOD.match(attr) and attr not in NOT_MUTATING:
                name = self._alias_of(func.value, aliases)
                if name is not None:
                    return call, name, f"changes the input `{{name}}` in place (`.{attr}`)"
        torch_op = dotted.startswith(TORCH_OP_NAMESPACES) or (dotted.startswith("torch.") and dotted.count(".") == 1)
        for kw in call.keywords if torch_op else ():
            if kw.arg == "out":
                name = self._alias_of(kw.value, aliases)
                if name is not None:
                    return call, name, "writes into the input `{name}` (`out=`)"
            if kw.arg == "inplace" and literal(kw.value) is True and call.args and (dotted.startswith("torch.nn.functional.") or dotted.count(".") == 1):
                name = self._alias_of(call.args[0], aliases)
                if name is not None:
                    return call, name, "changes the input `{name}` in place (`inplace=True`)"
        if (torch_op or dotted.startswith("torch.nn.init.")) and INPLACE_METHOD.match(dotted.rsplit(".", 1)[-1]) and call.args:
            name = self._alias_of(call.args[0], aliases)
            if name is not None and dotted.rsplit(".", 1)[-1] not in NOT_MUTATING:
                return call, name, f"changes the input `{{name}}` in place (`{dotted.rsplit('.', 1)[-1]}`)"
        if call.args and self._inplace_module(call):
            name = self._alias_of(call.args[0], aliases)
            if name is not None:
                return call, name, "changes the input `{name}` in place (an `inplace=True` layer)"
        if depth == 0:
            target = self._local_def(call)
            if target is not None:
                params = [a.arg for a in target.args.posonlyargs + target.args.args]
                if params and params[0] in ("self", "cls") and isinstance(func, ast.Attribute):
                    params = params[1:]
                for index, arg in enumerate(call.args):
                    name = self._alias_of(arg, aliases)
                    if name is None or index >= len(params):
                        continue
                    inner = self._mutations(target, {params[index]}, depth + 1)
                    if inner:
                        return call, name, f"passes the input `{{name}}` to `{target.name}`, which changes it in place (line {inner[0][0].lineno})"
        return None

    def _local_def(self, call: ast.Call):
        func = call.func
        facts = self.facts
        if isinstance(func, ast.Name):
            for node in facts.tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func.id:
                    return node
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            cls = next((a for a in facts.ancestors(call) if isinstance(a, ast.ClassDef)), None)
            if cls is not None:
                for node in cls.body:
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func.attr:
                        return node
        return None


def multi_axis(index) -> bool:
    """`[:, 3:4]`, `[..., 0]`, `[None, :]`: a tuple index with a slice, `...` or `None`
    in it indexes several axes, which lists and dicts do not support: a tensor (or array)."""
    if not isinstance(index, ast.Tuple) or len(index.elts) < 2:
        return False
    return any(
        isinstance(e, ast.Slice) or (isinstance(e, ast.Constant) and (e.value is Ellipsis or e.value is None))
        for e in index.elts
    )


def _statements(body):
    """Statements in source order, through compound statements, not into nested defs."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield stmt
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                if field == "handlers":
                    for handler in inner:
                        yield from _statements(handler.body)
                else:
                    yield from _statements(inner)


def _own_nodes(stmt):
    """The nodes a statement evaluates itself: the header of a compound statement
    (its body statements are visited on their own), not nested defs or lambdas."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        roots = [stmt.iter]
    elif isinstance(stmt, (ast.While, ast.If)):
        roots = [stmt.test]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        roots = [item.context_expr for item in stmt.items]
    elif isinstance(stmt, ast.Try) or type(stmt).__name__ in ("TryStar", "Match"):
        roots = [stmt.subject] if hasattr(stmt, "subject") else []
    else:
        roots = [stmt]
    stack = list(roots)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))
