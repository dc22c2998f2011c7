"""Evidence that compiled code changes its inputs in place, for CUDA graphs.

CUDA graphs need inputs the graph does not write: when a compiled graph mutates an input
that is not a parameter, buffer or an earlier CUDA-graph output, Inductor runs it without
CUDA graphs ("skipping cudagraphs due to mutated inputs", `check_for_mutation` in
`torch/_inductor/cudagraph_utils.py`).

`InputMutations(facts).of(func, params)` lists, in source order, each statement or call
of `func` that changes one of `params` (or a view of it) in place: `*_` tensor methods,
stores through a subscript, `+=` on a tensor, `out=`, `inplace=True`, `torch.relu_(x)`,
an `nn.ReLU(inplace=True)`-like submodule applied to it, and a helper of the same file
that does one of these to the argument it is passed (followed one level). Rebinding the
name (`x = x * 2`) ends the alias; views (`x[0]`, `x.view()`, `x.detach()`) continue it.

Whether a parameter is a tensor (a subscript store into a dict is not a mutation of a
tensor) is read from its uses: an annotation, tensor-only methods and attributes, a
multi-axis index (`x[:, 3:4]`), being passed first to a torch op or a `torch.nn` layer.
"""
from __future__ import annotations

import ast
import re
from typing import Optional

from ...analysis.compiled.values import literal
from ...analysis.semantic.facts import Fact, ModuleFacts
from ...analysis.compiled.output_lifetimes import ALIAS_METHODS
from ...analysis.reach.queries import class_attrs
from ...analysis.tensors.kinds import NON_TENSOR_ATTRS, TENSOR_ANNOTATIONS, TENSOR_METHODS

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


class InputMutationsFact(Fact):
    """In-place changes of parameters (InputMutations), per file."""

    name = "input mutations"

    @classmethod
    def compute(cls, facts: ModuleFacts) -> "InputMutations":
        return InputMutations(facts)


class InputMutations:
    """In-place changes of a def's parameters in one file (needs `ClassAttrsFact`)."""

    def __init__(self, facts: ModuleFacts):
        self.facts = facts
        self._tensor_cache: dict = {}

    def of(self, func, params) -> list[tuple[ast.AST, str, str]]:
        """(node, parameter, how) for each in-place change of a parameter, in source
        order; `how` is a message with `{name}` for the parameter."""
        return self._mutations(func, set(params), depth=0)

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
