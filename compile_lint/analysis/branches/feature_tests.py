"""Branches that only run on an older torch than the one a test asks for.

`if hasattr(F, "scaled_dot_product_attention"): ... else: <manual attention>` and
`if version.parse(torch.__version__) >= version.parse("2.0"): ... else: ...` pick a
spelling per torch release. The `else` branch runs only on a torch without the
feature; when that torch cannot have `torch.compile` either (it arrived in 2.0), the
branch never runs compiled, and code in it is a compat fallback, not a hazard.
"""
from __future__ import annotations

import ast
import re
from typing import Optional

# Public torch names that every release with `torch.compile` (2.0 and later) has.
IN_TORCH_2_0 = frozenset({
    "torch.compile", "torch._dynamo", "torch.func", "torch.autocast", "torch.amp.autocast",
    "torch.inference_mode", "torch.nn.functional.scaled_dot_product_attention",
    "torch.backends.mps", "torch.backends.cuda.sdp_kernel", "torch.backends.cuda.enable_flash_sdp",
    "torch.nn.utils.parametrizations", "torch.fft", "torch.special", "torch.linalg",
    "torch.nn.functional.gelu", "torch.nn.functional.silu", "torch.nn.functional.mish",
    "torch.vmap",
    "torch.set_float32_matmul_precision", "torch.use_deterministic_algorithms",
    # since 1.8: the vendored BigVGAN / alias-free-torch `filter.py` defines its own `sinc`
    # only `if "sinc" not in dir(torch)` (bench/dev_findings: 15 CL304 findings in it)
    "torch.sinc",
})
COMPILE_SINCE = (2, 0)

_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)")
# a requirement string a version helper takes: `check_version(torch.__version__, ">=2.4.0")`
_REQUIREMENT = re.compile(r"^\s*(>=|>|<=|<|==)?\s*v?(\d+)\.(\d+)")


def _version_literal(node: ast.AST) -> Optional[tuple[int, int]]:
    """`"2.0"`, `"2.1.0"`, `(2, 0)`, `version.parse("2.0")`, `Version("2.0")`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        m = _VERSION.match(node.value)
        return (int(m.group(1)), int(m.group(2))) if m else None
    if isinstance(node, ast.Tuple) and len(node.elts) >= 2 and all(
        isinstance(e, ast.Constant) and isinstance(e.value, int) for e in node.elts[:2]
    ):
        return (node.elts[0].value, node.elts[1].value)
    if isinstance(node, ast.Call) and len(node.args) == 1:
        return _version_literal(node.args[0])
    return None


def _mentions_torch_version(facts, node: ast.AST) -> bool:
    text = facts.text(node)
    return "__version__" in text or "torch_version" in text.lower() or "TORCH_VERSION" in text


def feature_test(facts, test: ast.AST) -> Optional[tuple[bool, Optional[tuple[int, int]], Optional[str]]]:
    """When `test` asks about the running torch: (true_on_newer, version, feature).

    `true_on_newer`: the test is true on releases at or after the boundary (True) or
    before it (False). `version`: the boundary when the test states one; `feature`: the
    dotted torch name a `hasattr` test asks about.
    """
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = feature_test(facts, test.operand)
        return None if inner is None else (not inner[0], inner[1], inner[2])
    held = _held_test(facts, test)
    if held is not None:
        return feature_test(*held)
    if isinstance(test, ast.Call) and facts.resolve(test.func) == "builtins.hasattr" and len(test.args) == 2:
        owner, name = test.args
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            dotted = facts.resolve(owner)
            if dotted and (dotted == "torch" or dotted.startswith("torch.")):
                return (True, None, f"{dotted}.{name.value}")
        return None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        listed = _listed_name(facts, left, right)  # `"sinc" in dir(torch)`
        if listed is not None:
            if not isinstance(op, (ast.In, ast.NotIn)):
                return None
            return (isinstance(op, ast.In), None, listed)
        for subject, bound, flipped in ((left, right, False), (right, left, True)):
            version = _version_literal(bound)
            if version is not None and _mentions_torch_version(facts, subject):
                newer = isinstance(op, (ast.GtE, ast.Gt))
                if isinstance(op, (ast.Lt, ast.LtE)):
                    newer = False
                elif not isinstance(op, (ast.GtE, ast.Gt)):
                    return None
                return (newer != flipped, version, None)
        return None
    if isinstance(test, ast.Call):  # is_torch_version(">=", "2.0"), torch_version_at_least("2.0")
        name = (facts.text(test.func) or "").lower()
        # or a project's helper told which package: `compare_version("torch", operator.ge,
        # "2.4.0")` (VILA's old-torch fallback to torch.cuda.amp, bench/fresh_reads batch 22)
        names_torch = any(isinstance(a, ast.Constant) and a.value == "torch" for a in test.args)
        if "version" in name and ("torch" in name or names_torch):
            ops = [a.value for a in test.args if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value in ("<", "<=", ">", ">=")]
            ops += [_OPERATORS[d] for d in (facts.resolve(a) for a in test.args if isinstance(a, ast.Attribute)) if d in _OPERATORS]
            versions = [v for v in (_version_literal(a) for a in test.args) if v is not None]
            if versions:
                newer = not ops or ops[0] in (">", ">=")
                return (newer, versions[-1], None)
        if "version" in name and len(test.args) >= 2 and _mentions_torch_version(facts, test.args[0]):
            # `check_version(torch.__version__, "2.4.0")`: the running version against a
            # minimum (">=2.4.0" spells the operator), ultralytics' TORCH_2_4 and TORCH_1_13,
            # which pick torch.amp over torch.cuda.amp (bench/fresh_reads batch 35: yoloe)
            required = test.args[1]
            if isinstance(required, ast.Constant) and isinstance(required.value, str):
                m = _REQUIREMENT.match(required.value)
                if m and m.group(1) != "==":
                    return (m.group(1) in (None, ">=", ">"), (int(m.group(2)), int(m.group(3))), None)
    return None


_OPERATORS = {"operator.ge": ">=", "operator.gt": ">", "operator.le": "<=", "operator.lt": "<"}


def _listed_name(facts, left: ast.AST, right: ast.AST) -> Optional[str]:
    """`"sinc"` and `dir(torch)` (of a torch module): the dotted name a membership test
    asks about, as `hasattr(torch, "sinc")` does."""
    if not (isinstance(left, ast.Constant) and isinstance(left.value, str)):
        return None
    if not (isinstance(right, ast.Call) and len(right.args) == 1 and not right.keywords):
        return None
    if facts.resolve(right.func) != "builtins.dir":
        return None
    dotted = facts.resolve(right.args[0])
    if dotted and (dotted == "torch" or dotted.startswith("torch.")):
        return f"{dotted}.{left.value}"
    return None


def _held_test(facts, test: ast.AST) -> Optional[tuple]:
    """(facts, test) of the test a name holds: `self.flash` where the class sets
    `self.flash = hasattr(F, "scaled_dot_product_attention")` once, a module-level name
    bound once to such a test, or one a project module binds so and this file imports
    (`from ultralytics.utils.torch_utils import TORCH_2_4`: the facts are that file's)."""
    values: list = []
    if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) and test.value.id == "self":
        cls = next((a for a in facts.ancestors(test) if isinstance(a, ast.ClassDef)), None)
        if cls is None:
            return None
        for node in ast.walk(cls):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self" and target.attr == test.attr:
                        values.append(node.value)
    elif isinstance(test, ast.Name):
        values = _module_bindings(facts.tree, test.id)
        if not values:
            return _imported_test(facts, test)
    return _one_test(facts, values)


def _module_bindings(tree: ast.Module, name: str) -> list:
    """The values a module's top-level assignments give `name`."""
    return [node.value for node in tree.body if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]


def _one_test(facts, values: list) -> Optional[tuple]:
    """(facts, the test) when a name is bound once, to something a test can be."""
    if len(values) == 1 and isinstance(values[0], (ast.Call, ast.Compare, ast.UnaryOp)):
        return facts, values[0]
    return None


def _imported_test(facts, name: ast.Name) -> Optional[tuple]:
    """(facts, test) for a name imported from a project module that binds it once, at
    its top level, to a test (the module's own names are `_held_test`'s)."""
    if facts.project is None:
        return None
    dotted = facts.resolve(name)
    module, _, attr = (dotted or "").rpartition(".")
    if not module or module == facts.names.module or module.split(".", 1)[0] == "torch":
        return None
    from ..project.context import path_for_module

    path = path_for_module(facts, module)
    owner = facts.project.facts_for_path(facts, path) if path else None
    return _one_test(owner, _module_bindings(owner.tree, attr)) if owner is not None else None


def old_torch_branch(facts, node: ast.AST) -> Optional[tuple[Optional[tuple[int, int]], Optional[str]]]:
    """(version, feature) of the innermost test whose failing branch holds `node`,
    i.e. `node` runs only on a torch older than `version` / without `feature`."""
    child = node
    for anc in facts.ancestors(node):
        early = _after_early_exit(facts, anc, child)
        if early is not None:
            return early
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            # a def made only in a fallback branch exists only on that torch
            defined_in = next(iter(facts.ancestors(anc)), None)
            if not isinstance(defined_in, (ast.If, ast.ExceptHandler, ast.Try)) or anc is node:
                return None
        if isinstance(anc, ast.Try) and child in anc.handlers:
            feature = _import_fallback(facts, anc, child)
            if feature is not None:
                return None, feature
        if isinstance(anc, (ast.If, ast.IfExp)):
            found = feature_test(facts, anc.test)
            if found is not None and child is not anc.test:
                true_on_newer, version, feature = found
                body = anc.body if isinstance(anc.body, list) else [anc.body]
                in_body = child in body
                if in_body != true_on_newer:
                    return version, feature
        child = anc
    return None


IMPORT_ERRORS = frozenset({"builtins.ImportError", "builtins.ModuleNotFoundError", "builtins.AttributeError"})


def _import_fallback(facts, try_node: ast.Try, handler: ast.ExceptHandler) -> Optional[str]:
    """`try: from torch.nn.functional import scaled_dot_product_attention` / `except
    ImportError: <fallback>`: the torch feature whose absence the handler stands for."""
    caught = handler.type
    types = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    if caught is not None and not any(facts.resolve(t) in IMPORT_ERRORS for t in types):
        return None
    features = []
    for stmt in try_node.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 0:
            features += [f"{stmt.module}.{alias.name}" for alias in stmt.names]
        elif isinstance(stmt, ast.Import):
            features += [alias.name for alias in stmt.names]
        else:
            return None
    if features and all(f in IN_TORCH_2_0 for f in features):
        return features[0]
    return None


def _exits(body: list) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _after_early_exit(facts, block_owner: ast.AST, child: ast.AST):
    """`if hasattr(F, "sdpa"): return F.sdpa(...)` earlier in the same block as `child`:
    `child` runs only when that test is false."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(block_owner, field, None)
        if not isinstance(block, list) or child not in block:
            continue
        for stmt in block[: block.index(child)]:
            if isinstance(stmt, ast.If) and not stmt.orelse and _exits(stmt.body):
                found = feature_test(facts, stmt.test)
                if found is not None and found[0]:
                    return found[1], found[2]
    return None


def never_runs_compiled(facts, node: ast.AST) -> bool:
    """`node` runs only on a torch that has no `torch.compile` (older than 2.0): on no
    torch this linter's users run."""
    found = old_torch_branch(facts, node)
    if found is None:
        return False
    version, feature = found
    if version is not None:
        return version <= COMPILE_SINCE
    return feature in IN_TORCH_2_0
