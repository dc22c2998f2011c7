"""Inputs from a recorded run: a target without configured inputs is called with the first
input signature `compile-lint record` saw for it (shapes and dtypes), instead of guessed
image-like tensors. No torch here (parent side)."""
from __future__ import annotations

import json
import os
from typing import Optional

from ..analysis.reach.declared import REGIONS_FILE
from ..project_root import find_project_root
from .config import InputSpec


def _recorded_sites(root: str, memo: dict) -> list:
    if root not in memo:
        try:
            with open(os.path.join(root, REGIONS_FILE), encoding="utf-8") as fh:
                data = json.load(fh)
            memo[root] = [s for s in data.get("sites") or () if isinstance(s, dict)]
        except (OSError, ValueError, AttributeError):
            memo[root] = []  # none, or malformed (`check` reports that)
    return memo[root]


def recorded_signature(file: str, qualname: str, memo: Optional[dict] = None) -> Optional[list[InputSpec]]:
    """The first recorded input signature of `qualname` (or its forward) in `file`."""
    root = find_project_root(file)
    if root is None:
        return None
    rel = os.path.relpath(os.path.abspath(file), root).replace(os.sep, "/")
    wanted = {qualname, f"{qualname}.forward", f"{qualname}.__call__"}
    for site in _recorded_sites(root, memo if memo is not None else {}):
        target = site.get("target") or {}
        if target.get("path") != rel or target.get("qualname") not in wanted:
            continue
        for sig in (site.get("seen") or {}).get("inputs") or ():
            tensors = [t for t in sig if isinstance(t, dict) and isinstance(t.get("shape"), list)]
            if tensors and len(tensors) == len(sig):
                return [InputSpec(shape=list(t["shape"]), dtype=str(t.get("dtype") or "float32")) for t in tensors]
    return None


def use_recorded_inputs(specs: list) -> None:
    """Fill `inputs` of targets that have none from the recording, when there is one."""
    from .targets import resolve_file

    memo: dict = {}
    for spec in specs:
        if getattr(spec, "inputs", None) is not None:
            continue
        file = getattr(spec, "file", None) or resolve_file(spec)
        if file:
            found = recorded_signature(file, spec.qualname, memo)
            if found is not None:
                spec.inputs = found
