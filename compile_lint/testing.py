"""Run a rule's `Case` through the real pipeline (used by the test suite)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from .config import Settings, parse_table
from .engine import Linter, Selection
from .fixer import fix_source
from .model import Finding


@dataclass
class CaseRun:
    findings: list[Finding]  # of the case's rule, in the case's file
    fixed: Optional[str]  # the file after `fix` (with --unsafe-fixes), None if unchanged
    refixed: Optional[str]  # the file after a second `fix` of the fixed text


def run_case(rule, case, folder: str) -> CaseRun:
    files = case.all_files()
    for rel, text in files.items():
        path = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    settings = parse_table(dict(case.settings), "case", folder) if case.settings else Settings(root=folder)
    settings_for = lambda _p: settings  # noqa: E731
    linter = Linter(settings_for, Selection(select=(rule.code,)))
    paths = [os.path.join(folder, rel) for rel in files]
    results = {r.path: r for r in linter.lint(paths)}
    target = os.path.join(folder, case.path)
    findings = [f for f in results[target].findings if f.code == rule.code]
    data = files[case.path].encode("utf-8")
    outcome = fix_source(linter, target, data, results[target].findings, unsafe=True)
    assert outcome.error is None, outcome.error
    fixed = outcome.fixed.decode("utf-8") if outcome.changed else None
    refixed = None
    if fixed is not None:
        _, again = linter.relint(target, outcome.fixed, linter.regions)
        second = fix_source(linter, target, outcome.fixed, again, unsafe=True)
        refixed = second.fixed.decode("utf-8") if second.changed else None
    return CaseRun(findings, fixed, refixed)
