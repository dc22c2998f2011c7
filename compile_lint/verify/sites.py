"""Targets from the code's own compile and trace sites, without hand work.

The linter's region index (compile_lint.analysis.reach.regions) already knows every
`torch.compile(...)`, `@torch.compile`, `m.compile()`, `torch.jit.trace(...)`,
`torch.export.export(...)` and `torch.onnx.export(...)` in the linted files, and what
each one compiles or traces, followed through imports, aliases and wrappers, plus the
regions declared in config or markers and those a `compile-lint record` run saw
(compile_lint.analysis.reach.declared). Each such target that is a project function or class
becomes a verify target, however clean the linter found it. Callees reached from a target run inside it, so they are not targets
of their own.

Constructor arguments come, in this order, from config (`args` / `kwargs` of a
[[verify.targets]] entry), from how the project's sites build it (construction.py: the
class's literal call `torch.compile(StyleNet(width=8))`, names bound to literals, or a
factory the site calls, `torch.compile(build())`, which verify then calls itself), else
from the constructor's defaults; the worker says what to add when a required argument
is missing. A site anywhere in the project counts for a target defined in the files
verified (`--target models.py:Net` compiled in `train.py`).

A trace/export site records the exporter and whether the site asks for dynamic shapes
(`dynamic_shapes=` for torch.export, `dynamic_axes=` for torch.onnx.export; none means a
fixed-size program), so the traced check runs the program as the code makes it.

No torch here (ast only).
"""
from __future__ import annotations

import ast
import os
from typing import Iterable, Optional

from .config import TargetSpec

EXPORTERS = {
    "torch.jit.trace": "jit.trace",
    "torch.jit.trace_module": "jit.trace",
    "torch.export.export": "export",
    "torch.export.export_for_training": "export",
    "torch.onnx.export": "onnx",
    "torch.onnx.utils.export": "onnx",
    "torch.onnx.dynamo_export": "onnx",
}
DYNAMIC_KEYWORDS = ("dynamic_shapes", "dynamic_axes")


def _display(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _calls_at(tree: ast.Module, row: int) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno <= row <= (n.end_lineno or n.lineno)]


def _callee_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def literal_constructor(tree: ast.Module, row: int, class_name: str) -> Optional[tuple[list, dict]]:
    """Arguments of `ClassName(...)` on the site's line, when every one is a literal."""
    for call in _calls_at(tree, row):
        if _callee_name(call) != class_name:
            continue
        try:
            args = [ast.literal_eval(a) for a in call.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
        except ValueError:
            return None
        if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        return args, kwargs
    return None


def site_is_dynamic(tree: ast.Module, row: int) -> bool:
    """Whether the trace/export call on `row` passes dynamic shapes (a non-None value)."""
    for call in _calls_at(tree, row):
        for keyword in call.keywords:
            if keyword.arg in DYNAMIC_KEYWORDS and not (
                    isinstance(keyword.value, ast.Constant) and keyword.value.value is None):
                return True
    return False


def _is_number(node: ast.AST, value: float) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return isinstance(node.operand, ast.Constant) and node.operand.value == -value
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value == value


def signed_range_hint(tree: ast.Module, qualname: str) -> Optional[str]:
    """Where the target's own code treats its values as signed: a comparison with 0
    (`x > 0`, `torch.where(x < 0, ...)`) or a clamp to [-1, 1]. Inputs in [0, 1] would
    never take one side of such a branch, so verify draws them from [-1, 1] instead.
    Returns "line N: what", or None."""
    node = next((n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == qualname), None)
    if node is None:
        return None
    for sub in ast.walk(node):
        if isinstance(sub, ast.Compare) and len(sub.ops) == 1 and \
                isinstance(sub.ops[0], (ast.Gt, ast.GtE, ast.Lt, ast.LtE)) and _is_number(sub.comparators[0], 0) \
                and not isinstance(sub.left, ast.Constant):
            return f"line {sub.lineno}: compares with 0"
        if isinstance(sub, ast.Call) and _callee_name(sub) in ("clamp", "clip", "clamp_", "hardtanh"):
            bounds = list(sub.args[1:] if isinstance(sub.func, ast.Name) or _callee_name(sub) == "hardtanh"
                          and len(sub.args) > 2 else sub.args)
            bounds += [k.value for k in sub.keywords if k.arg in ("min", "max", "min_val", "max_val")]
            if any(_is_number(b, -1) for b in bounds):
                return f"line {sub.lineno}: clamps to [-1, ...]"
    return None


def index_files(files: Iterable[str]):
    """Parse `files` and build their region index (with declared and recorded regions):
    (the construction.Project over them, the parsed files by path)."""
    from compile_lint.analysis.reach.declared import DeclarationError, declarations_for
    from compile_lint.analysis.reach.regions import ProjectIndex
    from compile_lint.config import ConfigError, load_config_for
    from compile_lint.engine import parse_file, read_source

    from .construction import Project

    parsed = {}
    settings_of = {}
    for path in files:
        if not path.endswith(".py"):
            continue
        try:
            settings = load_config_for(path)
            item = parse_file(read_source(path), settings)
        except (OSError, ConfigError):
            continue
        if item.summary is not None:
            parsed[os.path.abspath(path)] = item
            settings_of[os.path.abspath(path)] = settings
    try:  # config-declared and recorded regions (`compile-lint record`) are entry sites too
        found = declarations_for(((settings, path) for path, settings in settings_of.items()), list(settings_of))
        declared, configured = found.regions, found.configured
    except DeclarationError:
        declared, configured = [], None  # `check` reports a malformed recording; verify goes on with the code's sites
    index = ProjectIndex((item.summary for item in parsed.values()), declared, configured)
    return Project(parsed, index), parsed


class SiteTargets:
    """Targets from compile/trace sites, and which site made which target."""

    def __init__(self, specs: list, at_site: dict, project) -> None:
        self.specs = specs  # TargetSpec, sorted by ref
        self.at_site = at_site  # (absolute path, row) of a site -> the key of the spec it made
        self.project = project

    def spec_at(self, path: str, row: int):
        key = self.at_site.get((os.path.abspath(path), row))
        return next((s for s in self.specs if (s.file, s.qualname) == key), None)


def targets_from_sites(files: Iterable[str], project_files: Optional[Iterable[str]] = None) -> list[TargetSpec]:
    return site_targets(files, project_files).specs


def site_targets(files: Iterable[str], project_files: Optional[Iterable[str]] = None) -> SiteTargets:
    """Targets of the sites in `files`, and of sites anywhere in `project_files` (the
    project around them) whose target is defined in `files`; built as the project's
    sites build them, trained where the project trains them."""
    from compile_lint.analysis.reach.declared import resolve
    from compile_lint.analysis.reach.regions import COMPILE, CUDAGRAPH, TRACED

    files = [os.path.abspath(f) for f in files if f.endswith(".py")]
    wanted = set(files)
    project, parsed = index_files(sorted(wanted | {os.path.abspath(f) for f in project_files or ()}))
    index = project.index
    sites = list(index.all_sites()) + [site for site, _ in resolve(index, index.declared).entries]
    trained = project.trained()
    found: dict[tuple, TargetSpec] = {}
    at_site: dict = {}
    recipes: dict[tuple, tuple] = {}  # key -> (rank, recipe, site) of the best way to build it
    for site in sites:
        if site.target is None:
            continue
        hit = index.lookup(site.target.dotted)
        if hit is None:
            continue  # torch's own module or something outside the run
        summary, info = hit
        if info.kind == "function" and info.qualname.endswith((".forward", ".__call__")):
            owner = summary.defs.get(info.qualname.rsplit(".", 1)[0])  # a recorded `Net.forward` is Net
            if owner is not None:
                info = owner
        if info.kind not in ("class", "function") or "." in info.qualname:
            continue  # lambdas, methods and nested defs cannot be imported by name
        path = os.path.abspath(summary.path)
        if path not in wanted and os.path.abspath(site.path) not in wanted:
            continue
        key = (path, info.qualname)
        at_site[(os.path.abspath(site.path), site.row)] = key
        spec = found.get(key)
        where = f"{_display(site.path)}:{site.row}"
        if spec is None:
            spec = found[key] = TargetSpec(ref=f"{_display(path)}:{info.qualname}", qualname=info.qualname,
                                           file=path, where=f"{site.api} at {where}")
            spec.trained = trained.get(summary.dotted(info.qualname))
        kinds = {site.kind} | ({CUDAGRAPH} if site.cudagraphs and site.kind == COMPILE else set())
        spec.region_kinds = sorted(set(spec.region_kinds) | kinds)
        if spec.value_range is None and path in parsed:
            hint = signed_range_hint(parsed[path].tree, info.qualname)
            if hint:
                spec.value_range, spec.range_reason = [-1.0, 1.0], f"{_display(path)} {hint}"
        site_tree = parsed.get(os.path.abspath(site.path))
        if site_tree is None:
            continue
        if info.kind == "class" and site.origin == "static":
            recipe = project.site_recipe(site)
            rank = _recipe_rank(recipe, summary.dotted(info.qualname))
            if rank and rank > recipes.get(key, (0,))[0]:
                recipes[key] = (rank, recipe, site)
        if site.kind == TRACED and site.api in EXPORTERS:
            entry = {"api": EXPORTERS[site.api], "dynamic": site_is_dynamic(site_tree.tree, site.row), "where": where}
            if entry not in spec.trace_sites:
                spec.trace_sites.append(entry)
    for key, (_rank, recipe, site) in recipes.items():
        apply_recipe(found[key], recipe, site, project)
    return SiteTargets(sorted(found.values(), key=lambda s: s.ref), at_site, project)


def _recipe_rank(recipe, class_dotted: str) -> int:
    """How well a recipe builds the class: a factory called with literals (3) or the
    class's own literal call (2) beat a call with arguments that are not literals (1)."""
    if recipe is None:
        return 0
    if recipe.kind == "factory":
        return 3 if recipe.literal else 0
    if recipe.dotted != class_dotted:
        return 0
    return 2 if recipe.literal else 1


def apply_recipe(spec: TargetSpec, recipe, site, project) -> None:
    """Build `spec` as `recipe` does, unless config already says how (config wins)."""
    if spec.args or spec.kwargs or spec.factory:
        return
    where = f"{_display(recipe.path)}:{recipe.row}"
    if recipe.kind == "factory":
        found = project.lookup(recipe.dotted)
        if found is None:
            return
        file, info, _dotted = found
        spec.factory = {"qualname": info.qualname, "file": file.path, "args": recipe.args, "kwargs": recipe.kwargs,
                        "where": where}
        made = recipe.returns
        spec.built = f"as {where} calls it" + (f"; it returns {made.text} ({_display(made.path)}:{made.row})"
                                               if made is not None else "")
        return
    if recipe.literal:
        spec.args, spec.kwargs = list(recipe.args), dict(recipe.kwargs)
        spec.built = f"the call at {where}"
    else:
        spec.built = (f"the call at {where} passes {', '.join(recipe.unknown)}, not literals: built from its "
                      f"defaults; give args/kwargs in its [[verify.targets]] entry to build it as the project does")
