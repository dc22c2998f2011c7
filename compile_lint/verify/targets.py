"""Which functions and nn.Module classes to run: from lint findings, config and --target.

No torch here: targets are found by linting (libcst) and by path arithmetic; the
worker process imports them.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Iterable, Optional

from .config import TargetSpec, VerifyConfigError, parse_target_ref


@dataclass
class TargetPlan:
    targets: list  # TargetSpec, sorted by ref
    notes: list = field(default_factory=list)  # findings verify has nothing to run for
    sites: object = None  # sites.SiteTargets the targets were found with (attribution.py reads it)


def _display_path(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def targets_from_findings(findings: Iterable, sites=None) -> TargetPlan:
    """One target per top-level function or class holding a finding, with the codes
    found in it; module-level findings become notes (there is nothing to call).

    A finding about a compile/trace site (its own line, or a related location on the
    call that compiles or traces the code it is in) also gives its code to what that
    site compiles (`sites`: a sites.SiteTargets): a CL102 finding in `preview()`, which
    traces `Grade` and then changes `grade.gamma`, makes `Grade` get the frozen-state
    check, not only `preview`."""
    grouped: dict[tuple, TargetSpec] = {}
    module_level: dict[str, set] = {}
    notebooks: dict[str, set] = {}
    for finding in findings:
        if not _runs(finding.code):
            continue  # the rule's findings are nothing verify can check by running them
        path = os.path.abspath(finding.path)
        if path.endswith(".ipynb"):  # not importable: nothing verify can load
            notebooks.setdefault(path, set()).add(finding.code)
            continue
        if sites is not None:
            for where in [(finding.path, finding.row)] + [(r.path, r.row) for r in getattr(finding, "related", ())]:
                compiled = sites.spec_at(*where)
                if compiled is not None and finding.code not in compiled.codes:
                    compiled.codes = sorted(set(compiled.codes) | {finding.code})
        if not finding.scope:
            module_level.setdefault(path, set()).add(finding.code)
            continue
        key = (path, finding.scope)
        spec = grouped.get(key)
        if spec is None:
            spec = grouped[key] = TargetSpec(ref=f"{_display_path(path)}:{finding.scope}", qualname=finding.scope,
                                             file=path)
        if finding.code not in spec.codes:
            spec.codes.append(finding.code)
        kind = getattr(finding, "region_kind", None)
        if kind and kind not in spec.region_kinds:
            spec.region_kinds.append(kind)
    notes = [f"{_display_path(path)}: {', '.join(sorted(codes))} at module level: no function or class to run"
             for path, codes in sorted(module_level.items())]
    notes += [f"{_display_path(path)}: {', '.join(sorted(codes))} in a notebook: verify imports modules only; "
              "move the code into a .py file to verify it" for path, codes in sorted(notebooks.items())]
    for spec in grouped.values():
        spec.codes.sort()
    return TargetPlan(sorted(grouped.values(), key=lambda s: s.ref), notes)


def _runs(code: str) -> bool:
    """Whether a finding of rule `code` makes its function a target (Rule.verify_target)."""
    from compile_lint.rules import get_rule

    try:
        return get_rule(code).verify_target
    except KeyError:
        return True


def lint(paths: list[str]) -> list:
    """The linter's findings for `paths` as the run's configuration selects them, and
    those of the rules off by default that verify checks at run time
    (`Rule.verify_candidate`; an `ignore` still wins). Imported here so that `verify
    --target` alone does not need the rules."""
    from compile_lint.api import lint_paths
    from compile_lint.engine import Selection
    from compile_lint.rules import all_rules

    candidates = tuple(sorted(code for code, rule in all_rules().items()
                              if rule.verify_candidate and not rule.default_selected))
    return lint_paths(paths, Selection(extend_select=candidates))


def spec_from_cli(ref: str) -> TargetSpec:
    module, path, qualname = parse_target_ref(ref, f"--target {ref}")
    spec = TargetSpec(ref=ref, qualname=qualname, module=module, import_root=os.getcwd())
    if path is not None:
        spec.file = os.path.abspath(path)
        if not os.path.isfile(spec.file):
            raise VerifyConfigError(f"--target {ref}: no such file {path!r}")
    return spec


def module_file(module: str, roots: list[str]) -> Optional[str]:
    """The file a dotted module name would import from, found by path arithmetic alone
    (importing it could run a package's __init__, and with it torch)."""
    parts = module.split(".")
    for root in roots:
        base = os.path.join(root, *parts)
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(candidate):
                return os.path.abspath(candidate)
    return None


def resolve_file(spec: TargetSpec) -> Optional[str]:
    if spec.file:
        return spec.file
    roots = [spec.import_root] if spec.import_root else []
    return module_file(spec.module, roots + [p or os.getcwd() for p in sys.path])


def merge(discovered: list[TargetSpec], configured: list[TargetSpec]) -> list[TargetSpec]:
    """Config entries describe how to call a target; the linter says what was found in
    it. A configured target the linter also found keeps both (config's constructor
    arguments win over a site's literal ones)."""
    by_key = {(resolve_file(s), s.qualname): s for s in discovered}
    for spec in configured:
        key = (resolve_file(spec), spec.qualname)
        found = by_key.get(key)
        if found is not None:
            _take_found(spec, found)
        by_key[key] = spec
    return sorted(by_key.values(), key=lambda s: s.ref)


def _take_found(spec: TargetSpec, found: TargetSpec) -> None:
    spec.codes = sorted(set(spec.codes) | set(found.codes))
    spec.region_kinds = sorted(set(spec.region_kinds) | set(found.region_kinds))
    spec.trace_sites = spec.trace_sites or list(found.trace_sites)
    spec.where = spec.where or found.where
    spec.trained = spec.trained or found.trained
    if spec.value_range is None:
        spec.value_range, spec.range_reason = found.value_range, found.range_reason
    if not spec.args and not spec.kwargs and not spec.factory:
        spec.args, spec.kwargs, spec.factory = list(found.args), dict(found.kwargs), found.factory
        spec.built = spec.built or found.built
    elif spec.args or spec.kwargs:
        spec.built = spec.built or "its [[verify.targets]] entry"


def project_files(paths: list[str]) -> list[str]:
    """The Python files of the project around `paths` (its root: the config file's
    folder, else the nearest folder with pyproject.toml, setup.cfg or .git): where the
    project builds, compiles and trains what PATHS define."""
    from compile_lint.config import ConfigError, load_config_for
    from compile_lint.project_root import find_project_root

    roots = set()
    for path in paths:
        try:
            root = find_project_root(path, load_config_for(path))
        except ConfigError:
            root = None
        roots.add(root or (path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))))
    return python_files(sorted(roots))


def python_files(paths: list[str]) -> list[str]:
    from compile_lint.config import load_config_for
    from compile_lint.discovery import find_files

    return [f for f in find_files(list(paths), load_config_for).files if f.endswith(".py")]


def add_sites(specs: list[TargetSpec]) -> tuple:
    """Fill in explicit targets' compile/trace sites, how the project builds them (the
    arguments of a site anywhere in the project, or a factory it calls) and whether it
    trains them. A target that is itself a factory (a function returning a project
    module: `def ResNet18(): return ResNet(...)`) is called, and its result verified.
    Returns ({ref of a factory target: (file, qualname) of the class it makes}, the
    sites.SiteTargets of their project)."""
    from .sites import site_targets

    files = sorted({f for f in (resolve_file(s) for s in specs) if f})
    made_by: dict = {}  # ref of a factory target -> (file, qualname) of the class it returns
    if not files:
        return made_by, None
    found = site_targets(files, project_files(files))
    by_key = {(t.file, t.qualname): t for t in found.specs}
    project = found.project
    for spec in specs:
        file = resolve_file(spec)
        hit = by_key.get((file, spec.qualname))
        if hit is not None:
            _take_found(spec, hit)
        parsed = project.files.get(file) if file else None
        if parsed is None:
            continue
        dotted = parsed.summary.dotted(spec.qualname)
        spec.trained = spec.trained or project.trained().get(dotted)
        made = project.is_factory(dotted) if not spec.factory else None
        node = parsed.defs.get(spec.qualname)
        if made and not spec.args and not spec.kwargs and node is not None and _all_defaulted(node):
            spec.factory = {"qualname": spec.qualname, "file": file, "args": [], "kwargs": {}}
            spec.built = f"{spec.qualname} is a factory: it returns a {made.rsplit('.', 1)[-1]}"
            spec.trained = spec.trained or project.trained().get(made)
            returned = project.lookup(made)
            if returned is not None:
                made_by[spec.ref] = (returned[0].path, returned[1].qualname)
    return made_by, found


def _all_defaulted(node) -> bool:
    args = node.args
    positional = args.posonlyargs + args.args
    return len(args.defaults) == len(positional) and all(d is not None for d in args.kw_defaults)


def add_codes_from_lint(specs: list[TargetSpec], made_by: Optional[dict] = None) -> list[str]:
    """Fill in each explicit target's lint codes by linting its file (a factory target
    also gets those of the class it returns: `made_by`). Returns notes."""
    made_by = made_by or {}
    files = sorted({f for f in (resolve_file(s) for s in specs) if f} | {f for f, _q in made_by.values()})
    if not files:
        return []
    try:
        plan = targets_from_findings(lint(files))
    except ImportError as exc:  # the linter core is not installed alongside
        return [f"could not lint the targets' files ({exc}); checks run without lint codes"]
    found = {(t.file, t.qualname): t for t in plan.targets}
    for spec in specs:
        for key in ((resolve_file(spec), spec.qualname), made_by.get(spec.ref)):
            hit = found.get(key) if key else None
            if hit is not None:
                spec.codes = sorted(set(spec.codes) | set(hit.codes))
                spec.region_kinds = sorted(set(spec.region_kinds) | set(hit.region_kinds))
    return []


def shard(specs: list[TargetSpec], shard_spec: Optional[tuple[int, int]]) -> list[TargetSpec]:
    """--shard K/N: the K-th of N interleaved slices of the sorted targets (stable across
    CI jobs because the order is)."""
    if shard_spec is None:
        return specs
    k, n = shard_spec
    return [s for i, s in enumerate(specs) if i % n == k - 1]


def parse_shard(value: Optional[str]) -> Optional[tuple[int, int]]:
    if value is None:
        return None
    try:
        k, n = (int(part) for part in value.split("/"))
    except ValueError:
        raise VerifyConfigError(f"--shard {value!r}: expected K/N like 1/4") from None
    if not 1 <= k <= n:
        raise VerifyConfigError(f"--shard {value!r}: K must be between 1 and N")
    return k, n
