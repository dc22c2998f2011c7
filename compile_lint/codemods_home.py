"""Where the fix codemods live: the top-level `codemods/` folder of a checkout (the
layout libcst's own runner uses, see .libcst.codemod.yaml), installed by the wheel as
the package `compile_lint_codemods` (never as a generic top-level `codemods`).

Rules name their codemod as "codemods.<module>:<Class>"; `codemod_class` resolves the
name against whichever of the two this compile_lint runs next to.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
from functools import lru_cache

SPEC_PACKAGE = "codemods"  # the package name rule specs use
INSTALLED_PACKAGE = "compile_lint_codemods"  # its name in an installed wheel

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@lru_cache(maxsize=1)
def package_name() -> str:
    """The importable name of the codemods next to this compile_lint: in a checkout run
    from its root `codemods` is on sys.path; an install (a wheel, or `pip install -e .`,
    where the console script does not put the checkout on sys.path) has
    `compile_lint_codemods`. The copy beside this compile_lint wins when both import."""
    beside = os.path.join(_REPO, SPEC_PACKAGE)
    found = []
    for name in (SPEC_PACKAGE, INSTALLED_PACKAGE):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin:
            found.append((name, os.path.dirname(os.path.abspath(spec.origin))))
    for name, where in found:
        if where == beside:
            return name
    return found[0][0] if found else INSTALLED_PACKAGE


def folder() -> str:
    return os.path.dirname(os.path.abspath(importlib.import_module(package_name()).__file__))


def codemod_class(spec: str):
    """The codemod class a rule names ("codemods.module:Class")."""
    module, _, name = spec.partition(":")
    if module == SPEC_PACKAGE or module.startswith(SPEC_PACKAGE + "."):
        module = package_name() + module[len(SPEC_PACKAGE):]
    return getattr(importlib.import_module(module), name)
