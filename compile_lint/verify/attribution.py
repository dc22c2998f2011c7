"""Which lines and rules can explain a divergence, selected or not.

A check that diverged names the findings that could cause what it saw: in the target
itself, in code its compile/trace site reaches (the finding's related location is that
site), with every rule enabled, those off by default (CL103) and those the config
ignores included; the ones the run's selection leaves out say so ("not selected"). A
divergence no rule explains says that too: it may be a compiler defect, and the repro
shows it on plain torch. No torch here (the linter is ast-only).
"""
from __future__ import annotations

import os
from typing import Optional

from .results import DIVERGED, TargetResult

# What each check can show, by the rules whose hazards it measures (docs/verify.md).
EXPLAINS = {
    "forward": ("CL103", "CL303", "CL301", "CL302", "CL201", "CL202", "CL203", "CL204", "CL506", "CL508"),
    "dynamo": ("CL103", "CL303", "CL508", "CL202", "CL203", "CL204", "CL506"),
    "low-precision": ("CL301", "CL302"),
    "gradients": ("CL304", "CL303", "CL301", "CL302", "CL201"),
    "traced": ("CL101", "CL104", "CL102"),
    "frozen-state": ("CL102",),
    "recompile-sweep": ("CL202", "CL203", "CL204"),
    "held-outputs": ("CL401",),
    "cudagraph-sizes": ("CL402",),
    "input-mutation": ("CL403",),
}


def _display(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def every_finding(paths: list) -> list:
    """The findings of `paths` with every rule enabled."""
    from compile_lint.api import lint_paths
    from compile_lint.engine import Selection
    from compile_lint.rules import all_rules

    # every code by name: the rules that are off by default (CL103) are selected too
    return lint_paths(paths, Selection(select=tuple(sorted(all_rules()))))


def selected(code: str, path: str, memo: dict) -> bool:
    """Whether the run's own configuration selects `code` for `path`."""
    from compile_lint.config import ConfigError, load_config_for
    from compile_lint.engine import Selection, enabled_codes

    if path not in memo:
        try:
            memo[path] = enabled_codes(load_config_for(path), Selection(), path)
        except ConfigError:
            memo[path] = frozenset()
    return code in memo[path]


def findings_of(result: TargetResult, spec, findings: list, sites) -> list:
    """The findings that belong to a target: in its def, or about the site that compiles
    or traces it (so in the code that site reaches)."""
    file = os.path.abspath(spec.file) if getattr(spec, "file", None) else None
    out = []
    for finding in findings:
        path = os.path.abspath(finding.path)
        if file and path == file and finding.scope == spec.qualname:
            out.append(finding)
            continue
        if sites is None:
            continue
        for where in [(finding.path, finding.row)] + [(r.path, r.row) for r in getattr(finding, "related", ())]:
            compiled = sites.spec_at(*where)
            if compiled is not None and (compiled.file, compiled.qualname) == (file, spec.qualname):
                out.append(finding)
                break
    return out


def attribute(results: list, specs_by_ref: dict, sites, paths: Optional[list] = None) -> None:
    """Fill `explained_by` of every diverged check."""
    diverged = [r for r in results if any(c.status == DIVERGED for c in r.checks)]
    if not diverged:
        return
    files = {os.path.abspath(specs_by_ref[r.target].file) for r in diverged
             if r.target in specs_by_ref and getattr(specs_by_ref[r.target], "file", None)}
    files = sorted(files | {os.path.abspath(p) for p in paths or ()})
    try:
        findings = every_finding(files)
    except Exception:  # attribution is a courtesy: a linter failure must not lose the report
        return
    memo: dict = {}
    for result in diverged:
        spec = specs_by_ref.get(result.target)
        if spec is None:
            continue
        mine = findings_of(result, spec, findings, sites)
        for check in result.checks:
            if check.status != DIVERGED:
                continue
            codes = EXPLAINS.get(check.name, ())
            for finding in sorted(mine, key=lambda f: (codes.index(f.code) if f.code in codes else 99, f.path, f.row)):
                if finding.code not in codes:
                    continue
                note = "" if selected(finding.code, finding.path, memo) else " (not selected)"
                entry = f"{finding.code} at {_display(finding.path)}:{finding.row}{note}: {finding.message}"
                if entry not in check.explained_by:
                    check.explained_by.append(entry[:300])
