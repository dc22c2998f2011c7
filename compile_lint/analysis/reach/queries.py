"""Helpers shared by the CL3xx/CL4xx rules: region code, compile-site options, config flags."""
from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..compiled.values import chain_text, literal, NOT_LITERAL, site_call, facts_for_path
from ..project.context import module_def
from ..semantic.facts import FUNCTION_NODES, Fact, ModuleFacts
from .regions import RegionInfo
from ..torch_api import DYNAMO_CONFIG, INDUCTOR_CONFIG, IS_COMPILING_FUNCS, JIT_ONLY_FUNCS

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
    if key.rpartition(".")[2].encode() not in facts.source.data:
        return None  # every form above spells the key's last name in the file
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
    or in the options of every compile site (a trace or export reaching the region
    compiles nothing: its file need not set it)."""
    if file_sets_config(facts, key, value) is not None:
        return True
    if region is None or not any(site.kind == "compiled" for site in region.sites):
        return False
    for site, found in site_calls(facts, region):
        if site.kind != "compiled":
            continue
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
    assignments by attribute, an outer class holding those of the classes nested in it."""

    name = "class attributes"

    @classmethod
    def compute(cls, facts: ModuleFacts) -> dict[int, dict[str, list[tuple[ast.Assign, ast.Call]]]]:
        # one pass over the file's assignments (in the walk's breadth-first order, the
        # order a walk of each class would meet them), not a walk of each class asked about
        tables: dict[int, dict[str, list[tuple[ast.Assign, ast.Call]]]] = {}
        for sub in facts.nodes(ast.Assign):
            if not isinstance(sub.value, ast.Call):
                continue
            for t in sub.targets:
                text = chain_text(t)
                if text and text.startswith("self.") and text.count(".") == 1:
                    for owner in facts.ancestors(sub):
                        if isinstance(owner, ast.ClassDef):
                            tables.setdefault(id(owner), {}).setdefault(text[5:], []).append((sub, sub.value))
        return tables


def class_attrs(facts: ModuleFacts, node: ast.AST) -> dict[str, list[tuple[ast.Assign, ast.Call]]]:
    """`self.<attr> = Ctor(...)` assignments anywhere in the class around `node`, by
    attribute."""
    cls = next((a for a in facts.ancestors(node) if isinstance(a, ast.ClassDef)), None)
    if cls is None:
        return {}
    return facts.get(ClassAttrsFact).get(id(cls), {})


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


# -- code that compiled code does not run, and Dynamo flags around a region (CL508) ------

CASTS = frozenset({"builtins.float", "builtins.int", "builtins.bool"})
NUMBERS = frozenset({"builtins.int", "builtins.float", "builtins.bool", "builtins.complex", "numbers.Number", "numbers.Real"})


def eager_only(facts: ModuleFacts, node: ast.AST) -> bool:
    """`node` never runs while Dynamo traces (compiling_branches.eager_only: the eager side
    of `is_compiling()` tests, also through a name, an `and`/`or` operand or an early
    exit; the `if` of `torch.jit.is_tracing()`, which is False under torch.compile, so its
    `else` is compiled code), or is a cast `float(x)`/`int(x)`/`bool(x)` under
    `if isinstance(x, (int, float)):`, where `x` is a Python number."""
    from ..branches.compiling import eager_only as never_traced

    if never_traced(facts, node):
        return True
    if not (isinstance(node, ast.Call) and facts.resolve(node.func) in CASTS and node.args):
        return False
    child = node
    for anc in facts.ancestors(node):
        if isinstance(anc, ast.If) and child in anc.body and python_number_test(facts, anc.test, node.args[0]):
            return True
        if isinstance(anc, FUNCTION_NODES):
            return False
        child = anc
    return False


def python_number_test(facts: ModuleFacts, test: ast.AST, value: ast.AST) -> bool:
    """`isinstance(x, (int, float))` about the name `value`: true only for Python numbers."""
    if not (isinstance(test, ast.Call) and facts.resolve(test.func) == "builtins.isinstance" and len(test.args) == 2):
        return False
    subject, kinds = test.args
    if not (isinstance(subject, ast.Name) and isinstance(value, ast.Name) and subject.id == value.id):
        return False
    kinds = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return bool(kinds) and all(facts.resolve(k) in NUMBERS for k in kinds)


def is_compiling_test(facts: ModuleFacts, call: ast.Call) -> bool:
    """A call of `torch.compiler.is_compiling()` (or its kin), or of a project function
    whose one `return` reads such a helper (`def is_compiling(): return bool(_check())` with
    `_check = getattr(torch.compiler, "is_compiling", None)`), in this file or in the module
    it is imported from."""
    dotted = facts.resolve(call.func)
    if dotted in IS_COMPILING_FUNCS:
        return True
    if not dotted or "." not in dotted or dotted.startswith(("torch.", "builtins.")):
        return False
    found = module_def(facts, dotted)
    if found is None or not isinstance(found[1], ast.FunctionDef):
        return False
    owner, func = found
    body = [s for s in func.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return _returns_is_compiling(owner, func)
    names = {n.id for n in ast.walk(body[0].value) if isinstance(n, ast.Name)}
    helpers = [s.value for s in owner.tree.body if isinstance(s, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id in names for t in s.targets)]
    return any(_reads_is_compiling(owner, expr) for expr in [body[0].value, *helpers])


def _returns_is_compiling(facts: ModuleFacts, func: ast.FunctionDef) -> bool:
    """`func` returns True whenever Dynamo traces: one `return` gives `is_compiling()` (or
    an `or` holding it, or a name bound to one and only `|=`-ed after), and every other
    `return` is a fallback for a torch without it (`return False` in an `except` or under
    `if not is_torch_available():`). transformers' `is_torchdynamo_compiling` (4.44.2:
    `try: return torch.compiler.is_compiling() except: ... return False`) and `is_tracing`
    (5.x: `_is_tracing = is_torchdynamo_compiling() or ...; _is_tracing |= ...`)."""
    from ..branches.compiling import compiling_value

    returns, stack = [], [(s, False) for s in func.body]
    while stack:
        node, fallback = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return):
            returns.append((node.value, fallback))
        inner = fallback or isinstance(node, ast.ExceptHandler) or (
            isinstance(node, ast.If) and isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
            and isinstance(node.test.operand, ast.Call) and "available" in (facts.text(node.test.operand.func) or ""))
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    true = [v for v, _ in returns if v is not None and _true_when_compiling(facts, func, v, compiling_value)]
    fallbacks = [v for v, fb in returns if fb and isinstance(v, ast.Constant) and v.value is False]
    return bool(true) and len(true) + len(fallbacks) == len(returns)


def _true_when_compiling(facts: ModuleFacts, func: ast.FunctionDef, value: ast.AST, compiling_value) -> bool:
    if isinstance(value, ast.Call) and facts.resolve(value.func) in IS_COMPILING_FUNCS:
        return True
    if not isinstance(value, ast.Name):
        return compiling_value(facts, value) is True
    plain, others = [], 0
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == value.id for t in node.targets):
            plain.append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name) \
                and node.target.id == value.id:
            if isinstance(node, ast.AnnAssign) and node.value is not None:
                plain.append(node.value)
            elif not (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.BitOr)):
                others += 1
    return len(plain) == 1 and not others and compiling_value(facts, plain[0]) is True


def _reads_is_compiling(facts: ModuleFacts, expr: ast.AST) -> bool:
    """`expr` reads `torch.compiler.is_compiling` (or kin), directly or as
    `getattr(torch.compiler, "is_compiling", None)`."""
    return any(
        (isinstance(n, (ast.Name, ast.Attribute)) and facts.resolve(n) in IS_COMPILING_FUNCS)
        or (isinstance(n, ast.Constant) and n.value in ("is_compiling", "is_dynamo_compiling"))
        for n in ast.walk(expr)
    )


def dynamo_flag_on(facts: ModuleFacts, region: Optional[RegionInfo], key: str) -> bool:
    """`torch._dynamo.config.<key>` is turned on (assignment, `setattr`, `patch(...)`) in this
    file, or in the file of every compile site of the region: Dynamo reads it when the call
    compiles, wherever the compiled code lives. A `with patch(...)` counts for a compile
    site only outside the code that site compiles: inside it, Dynamo does not trace the
    patch (measured: GB0007 and GB0142 at the `with`), and kornia's ScaleSpaceDetector,
    compiled whole, calls its `with self._dynamo_config_patch(...)` (a `nullcontext()`
    unless its submodules are compiled) from inside the compiled code: its GB0036 breaks
    in spatial_soft_argmax.py happen (the oracle bench)."""
    sites = region.sites if region is not None else []
    if _file_sets_dynamo(facts, key, sites):
        return True
    if not sites:
        return False
    for site in sites:
        other = facts.project.facts_for_path(facts, site.path)
        if other is None or not _file_sets_dynamo(other, key, [site]):
            return False
    return True


def _applied_in_place(facts: ModuleFacts, call: ast.Call, sites=()) -> bool:
    """A `patch(...)` used where it is made (a `with` item or a decorator), or returned by
    a def of this file that a `with` of this file calls (kornia's ScaleSpaceDetector:
    `with self._dynamo_config_patch(("subpix",)):` around its compiled submodules' calls,
    the method returning `torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True)`),
    and, for compile `sites`, a `with` outside the code every one of them compiles."""
    parent = facts.parent(call)
    if isinstance(parent, ast.withitem):
        return _outside(facts, parent, sites)
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and call in parent.decorator_list:
        return True
    if not isinstance(parent, ast.Return):
        return False
    func = facts.enclosing_function(call)
    if func is None:
        return False
    for item in facts.nodes(ast.withitem):
        made = item.context_expr
        if isinstance(made, ast.Call):
            callee = made.func
            name = callee.attr if isinstance(callee, ast.Attribute) else callee.id if isinstance(callee, ast.Name) else None
            if name == func.name and _outside(facts, item, sites):
                return True
    return False


def _outside(facts: ModuleFacts, item: ast.withitem, sites) -> bool:
    """The `with` of `item` runs outside the code each of the compile `sites` compiles."""
    if not sites:
        return True
    region = facts.in_region(item, "compiled")
    return region is None or not any(site in region.sites for site in sites)


def _file_sets_dynamo(facts: ModuleFacts, key: str, sites=()) -> bool:
    flag = f"{DYNAMO_CONFIG}.{key}"
    for node in facts.nodes(ast.Assign):
        if any(facts.resolve(t) == flag for t in node.targets) and literal(node.value) is True:
            return True
    for call in facts.nodes(ast.Call):
        dotted = facts.resolve(call.func)
        if dotted == DYNAMO_CONFIG + ".patch":
            if not _applied_in_place(facts, call, sites):
                continue  # a patch built and returned or stored: where it applies is unknown
            pairs = [(k.arg, k.value) for k in call.keywords] + ([tuple(call.args[:2])] if len(call.args) == 2 else [])
            if isinstance(call.args[0] if call.args else None, ast.Dict):
                pairs += list(zip(call.args[0].keys, call.args[0].values))
            if any((k == key or literal(k) == key) and literal(v) is True for k, v in pairs if k is not None):
                return True
        elif dotted == "builtins.setattr" and len(call.args) == 3 and facts.resolve(call.args[0]) == DYNAMO_CONFIG:
            if literal(call.args[1]) == key and literal(call.args[2]) is True:
                return True
    return False
