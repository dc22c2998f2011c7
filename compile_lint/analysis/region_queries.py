"""Helpers shared by the CL3xx/CL4xx rules: region code, compile-site options, config flags."""
from __future__ import annotations

import ast
from typing import Iterator, Optional

from .compiled_values import chain_text, literal, NOT_LITERAL, site_call, facts_for_path
from .facts import FUNCTION_NODES, Fact, ModuleFacts
from .regions import RegionInfo
from .torch_api import INDUCTOR_CONFIG

NOT_INDUCTOR = frozenset({"eager", "aot_eager", "aot_eager_decomp_partition", "cudagraphs", "onnxrt", "tvm", "openxla"})


def region_nodes(facts: ModuleFacts, types: tuple, kind: str = "compiled") -> Iterator[tuple[ast.AST, RegionInfo]]:
    """Nodes of `types` whose code runs in a region of `kind`, with the region."""
    if not facts.has_region(kind):
        return
    cache: dict[int, Optional[RegionInfo]] = {}
    for node in facts.nodes(*types):
        func = facts.enclosing_function(node)
        if func is None:
            continue
        key = id(func)
        if key not in cache:
            cache[key] = facts.in_region(node, kind)
        region = cache[key]
        if region is not None:
            yield node, region


def site_calls(facts: ModuleFacts, region: RegionInfo):
    for site in region.sites:
        found = site_call(facts, site)
        yield site, found


def runs_inductor(facts: ModuleFacts, region: RegionInfo) -> bool:
    """False when every compile site of the region names a non-Inductor backend
    (`backend="aot_eager"` runs eager kernels: no fusion, eager's numerics)."""
    backends = []
    for site, found in site_calls(facts, region):
        if site.kind != "compiled":
            continue
        backends.append(found[1].backend if found else None)
    return not backends or any(b is None or b not in NOT_INDUCTOR for b in backends)


def _config_key(facts: ModuleFacts, node: ast.AST) -> Optional[str]:
    dotted = facts.resolve(node)
    if dotted and dotted.startswith(INDUCTOR_CONFIG + "."):
        return dotted[len(INDUCTOR_CONFIG) + 1 :]
    return None


def file_sets_config(facts: ModuleFacts, key: str, value=True) -> Optional[ast.AST]:
    """Where this file sets `torch._inductor.config.<key> = value` (assignment, `setattr`,
    `patch(...)` as a context manager or decorator, or `options={key: value}` of a compile)."""
    for node in facts.nodes(ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Attribute) and _config_key(facts, target) == key and literal(node.value) == value:
                return node
    for call in facts.nodes(ast.Call):
        dotted = facts.resolve(call.func) or ""
        if dotted == INDUCTOR_CONFIG + ".patch":
            args = call.args
            if args and isinstance(args[0], ast.Constant) and args[0].value == key and len(args) > 1 and literal(args[1]) == value:
                return call
            if args and isinstance(args[0], ast.Dict) and literal(args[0]) is not NOT_LITERAL and literal(args[0]).get(key) == value:
                return call
            if any(k.arg == key and literal(k.value) == value for k in call.keywords):
                return call
        elif dotted == "builtins.setattr" and len(call.args) == 3:
            if facts.resolve(call.args[0]) == INDUCTOR_CONFIG and literal(call.args[1]) == key and literal(call.args[2]) == value:
                return call
        for kw in call.keywords:
            if kw.arg == "options" and isinstance(kw.value, ast.Dict):
                lit = literal(kw.value)
                if isinstance(lit, dict) and lit.get(key) == value:
                    return call
    return None


def region_sets_config(facts: ModuleFacts, region: Optional[RegionInfo], key: str, value=True) -> bool:
    """The config is set in this file, or in the file of every compile site of the region,
    or in the options of every compile site."""
    if file_sets_config(facts, key, value) is not None:
        return True
    if region is None or not region.sites:
        return False
    for site, found in site_calls(facts, region):
        if found is None:
            return False
        other, cc = found
        if cc.options.get(key) == value:
            continue
        if file_sets_config(other, key, value) is None:
            return False
    return True


def def_name(func: ast.AST) -> ast.AST:
    """A node spanning the name of a def or class (`def forward`), to report at."""
    keyword = "class " if isinstance(func, ast.ClassDef) else "async def " if isinstance(func, ast.AsyncFunctionDef) else "def "
    col = func.col_offset + len(keyword)
    node = ast.Name(id=func.name, ctx=ast.Load(), lineno=func.lineno, col_offset=col,
                    end_lineno=func.lineno, end_col_offset=col + len(func.name))
    node._cl_parent = func
    return node


def stmt_text(facts: ModuleFacts, node: ast.AST, limit: int = 60) -> str:
    text = " ".join(facts.text(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_number(expr: ast.AST) -> bool:
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return is_number(expr.operand)
    if isinstance(expr, ast.BinOp):
        return is_number(expr.left) and is_number(expr.right)
    return False


def number_value(expr: ast.AST) -> Optional[float]:
    """The value of a constant arithmetic expression (`1/2.2`, `-0.5`)."""
    if not is_number(expr):
        return None
    try:
        value = eval(compile(ast.Expression(expr), "<const>", "eval"), {"__builtins__": {}}, {})  # noqa: S307 - numbers only
    except Exception:
        return None
    return float(value) if isinstance(value, (int, float)) else None


class ClassAttrsFact(Fact):
    """Per class of a file (by id of its ClassDef): its `self.<attr> = Ctor(...)`
    assignments by attribute, filled in as classes are asked about."""

    name = "class attributes"

    @classmethod
    def compute(cls, facts: ModuleFacts) -> dict[int, dict[str, list[tuple[ast.Assign, ast.Call]]]]:
        return {}


def class_attrs(facts: ModuleFacts, node: ast.AST) -> dict[str, list[tuple[ast.Assign, ast.Call]]]:
    """`self.<attr> = Ctor(...)` assignments anywhere in the class around `node`, by
    attribute (computed once per class)."""
    cls = next((a for a in facts.ancestors(node) if isinstance(a, ast.ClassDef)), None)
    if cls is None:
        return {}
    cache = facts.get(ClassAttrsFact)
    table = cache.get(id(cls))
    if table is None:
        table = {}
        for sub in ast.walk(cls):
            if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call):
                for t in sub.targets:
                    text = chain_text(t)
                    if text and text.startswith("self.") and text.count(".") == 1:
                        table.setdefault(text[5:], []).append((sub, sub.value))
        cache[id(cls)] = table
    return table


ELEMENTWISE = frozenset(
    {
        "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "lerp", "pow",
        "where", "clamp", "clip", "sigmoid", "addcmul", "addcdiv", "sqrt", "rsqrt", "exp", "log",
        "neg", "reciprocal", "square", "abs", "minimum", "maximum", "normalize",
    }
)

def call_name(facts, call: ast.Call) -> Optional[str]:
    """`pow` for `torch.pow(...)` and `x.pow(...)`: the op a call runs, if known."""
    dotted = facts.resolve(call.func) or ""
    if dotted.startswith("torch."):
        return dotted.rsplit(".", 1)[-1]
    if isinstance(call.func, ast.Attribute) and not dotted:
        return call.func.attr
    return None


def same(facts: ModuleFacts, a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


__all__ = [
    "ClassAttrsFact", "ELEMENTWISE", "FUNCTION_NODES", "call_name", "chain_text", "class_attrs", "def_name", "facts_for_path", "file_sets_config", "is_number", "number_value",
    "region_nodes", "region_sets_config", "runs_inductor", "same", "stmt_text",
]
