"""Merging the recorder's partial files (one per process) into `compile-lint-regions.json`.

The file is meant to be committed: paths relative to its folder, sites and everything
in them in a stable order, so re-recording the same run gives the same bytes. Counts
(graphs, recompiles, graph breaks) keep the largest seen by any process or earlier
recording: ranks of one job see the same compiles, and re-recording must not inflate
them; shapes, call sites, break reasons and compiled code are unions (shapes bounded).
"""
from __future__ import annotations

import json
import os
import re
from typing import Iterable

from ..analysis.reach.declared import FORMAT_VERSION, DeclarationError, parse_recorded

COUNTS = ("graphs", "recompiles", "graph_breaks")


def site_key(site: dict) -> str:
    target = site["target"]
    return json.dumps([target["path"], target["qualname"], site["kind"], site.get("api"), site.get("options") or {}], sort_keys=True)


def _sort_key(site: dict):
    target = site["target"]
    return (target["path"], target["qualname"], site["kind"], str(site.get("api")), json.dumps(site.get("options") or {}, sort_keys=True))


def _shape_key(sig: list):
    return (len(sig), [(t.get("dtype", ""), t.get("shape", [])) for t in sig if isinstance(t, dict)])


def merge_sites(groups: Iterable[list[dict]], max_shapes: int = 16) -> list[dict]:
    merged: dict[str, dict] = {}
    for sites in groups:
        for site in sites:
            key = site_key(site)
            seen = site.get("seen") or {}
            into = merged.get(key)
            if into is None:
                into = merged[key] = {
                    "target": dict(site["target"]), "kind": site["kind"], "api": site.get("api"),
                    "options": site.get("options") or {}, "calls": [],
                    "seen": {"inputs": [], **{c: 0 for c in COUNTS}, "graph_break_reasons": [], "code": [], "breaks": []},
                }
            into["target"]["row"] = site["target"].get("row") or into["target"].get("row")
            for call in site.get("calls") or ():
                if call and call not in into["calls"]:
                    into["calls"].append(call)
            mine = into["seen"]
            for sig in seen.get("inputs") or ():
                if sig not in mine["inputs"] and len(mine["inputs"]) < max_shapes:
                    mine["inputs"].append(sig)
            for count in COUNTS:
                mine[count] = max(mine[count], int(seen.get(count) or 0))
            for reason in seen.get("graph_break_reasons") or ():
                if reason not in mine["graph_break_reasons"]:
                    mine["graph_break_reasons"].append(reason)
            for code in seen.get("code") or ():
                if code not in mine["code"]:
                    mine["code"].append(code)
            for brk in seen.get("breaks") or ():
                if isinstance(brk, dict) and brk not in mine["breaks"]:
                    mine["breaks"].append(brk)
    out = sorted(merged.values(), key=_sort_key)
    for site in out:
        site["calls"].sort(key=lambda c: (c["path"], c["row"]))
        seen = site["seen"]
        seen["inputs"].sort(key=_shape_key)
        seen["graph_break_reasons"].sort()
        seen["code"].sort(key=lambda c: (c["path"], c["qualname"]))
        seen["breaks"].sort(key=lambda b: (str(b.get("path")), int(b.get("row") or 0), str(b.get("id"))))
        if site["kind"] == "traced":  # counts are about Dynamo compiles only
            for count in COUNTS:
                seen.pop(count, None)
            seen.pop("graph_break_reasons", None)
            seen.pop("code", None)
            seen.pop("breaks", None)
    return out


def read_partials(folder: str) -> tuple[list[list[dict]], int]:
    """The sites of every partial file, and the recorder errors they counted."""
    groups, errors = [], 0
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
        if not (name.startswith("partial-") and name.endswith(".json")):
            continue
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            errors += 1
            continue
        groups.append([s for s in data.get("sites") or () if isinstance(s, dict) and isinstance(s.get("target"), dict)])
        errors += int(data.get("errors") or 0)
    return groups, errors


def rebase(sites: list[dict], from_root: str, to_folder: str) -> list[dict]:
    """Paths relative to `from_root` (the recorder's) made relative to the output's folder."""
    if os.path.realpath(from_root) == os.path.realpath(to_folder):
        return sites

    def move(rel: str) -> str:
        return os.path.relpath(os.path.join(from_root, rel), to_folder).replace(os.sep, "/")

    for site in sites:
        site["target"]["path"] = move(site["target"]["path"])
        for call in site.get("calls") or ():
            call["path"] = move(call["path"])
        for code in (site.get("seen") or {}).get("code") or ():
            code["path"] = move(code["path"])
        for brk in (site.get("seen") or {}).get("breaks") or ():
            if brk.get("path"):
                brk["path"] = move(brk["path"])
    return sites


_NUMBER_LIST = re.compile(r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]")


def _compact_numbers(text: str) -> str:
    """Shapes on one line (`[1, 3, 64, 64]`): a reviewable diff when the file changes."""
    return _NUMBER_LIST.sub(lambda m: "[" + ", ".join(p.strip() for p in m.group(1).split(",")) + "]", text)


def write_recording(output: str, new_groups: list[list[dict]], fresh: bool, max_shapes: int = 16) -> list[dict]:
    """Merge into `output` (unless `fresh`) and write it atomically. A malformed earlier
    file is an error (DeclarationError), never silently replaced."""
    groups = []
    if not fresh and os.path.exists(output):
        try:
            with open(output, encoding="utf-8") as fh:
                old = json.load(fh)
        except (OSError, ValueError) as exc:
            raise DeclarationError(f"{output}: cannot merge into it ({exc}); use --fresh to replace it") from None
        parse_recorded(old, output)  # validates
        groups.append(old["sites"])
    groups.extend(new_groups)
    sites = merge_sites(groups, max_shapes)
    data = {"version": FORMAT_VERSION, "generator": "compile-lint record", "sites": sites}
    text = _compact_numbers(json.dumps(data, indent=2, sort_keys=False)) + "\n"
    folder = os.path.dirname(os.path.abspath(output))
    tmp = os.path.join(folder, f".{os.path.basename(output)}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    os.replace(tmp, output)
    return sites
