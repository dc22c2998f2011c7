"""`compile-lint regions`: every compile/trace site, what it resolved to or why not.

Users debug silence with it (a rule that says nothing because the model it should
look at was never found), and the region-resolution benchmark reads its JSON
(bench/region_resolution.py). The JSON keys are a contract: add, never rename.
"""
from __future__ import annotations

import json
import os
from typing import Optional

from .analysis.reach.regions import COMPILE, PARTIAL, ProjectIndex, RegionInfo, Site, site_key


def build_index(files: list[str], settings_for, stdin: Optional[tuple[str, bytes]] = None, store=None) -> tuple[ProjectIndex, list]:
    """The region index over `files` (and stdin), and the files that could not be read.
    With `store` (the results cache), a file whose summary `check` already made under
    the same key (its bytes, module name and wrappers) is not parsed again, and the
    summaries made here are kept for `check`."""
    from . import cache as cache_mod
    from .analysis.semantic.names import module_name_for
    from .engine import parse_file
    from .lint_file import summary_blob
    from .source import SourceFile

    summaries, errors = [], []
    inputs = [(p, None) for p in files] + ([stdin] if stdin else [])
    for path, data in inputs:
        from_disk = data is None
        if from_disk:
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError as exc:
                errors.append((path, f"cannot read: {exc.strerror or exc}"))
                continue
        settings = settings_for(path)
        key = None
        if store is not None and from_disk:
            module, is_package = module_name_for(path)
            key = cache_mod.key(cache_mod.digest(data), module, is_package, settings.compile_wrappers, settings.trace_wrappers)
            found = store.load_summary(path, key)
            if found is not None:
                try:
                    summary = cache_mod.loads(found[0]) if found[0] is not None else None
                except Exception:
                    summary = False  # not a summary this version loads: made afresh
                if summary is not False:
                    if summary is not None:
                        summaries.append(summary)
                    continue
        parsed = parse_file(SourceFile(path, data), settings)
        if parsed.summary is not None:
            summaries.append(parsed.summary)
        if key is not None and parsed.failure is None:
            store.store_summary(path, key, summary_blob(parsed.summary) if parsed.summary is not None else None)
    declared = _declared(inputs, settings_for)
    return ProjectIndex(summaries, declared.regions, declared.configured), errors


def _declared(inputs, settings_for):
    """Config-declared and recorded regions (analysis/reach/declared.py) for these files."""
    from .analysis.reach.declared import DeclarationError, declarations_for
    from .config import ConfigError

    seen: dict = {}
    for path, _data in inputs:
        settings = settings_for(path)
        seen.setdefault(id(settings), (settings, path))
    try:
        return declarations_for(seen.values(), [path for path, _data in inputs])
    except DeclarationError as exc:
        raise ConfigError(str(exc)) from None


def _rel(path: str, root: str) -> str:
    rel = os.path.relpath(os.path.abspath(path), root)
    return path if rel.startswith("..") else rel


def report(index: ProjectIndex, root: str) -> dict:
    regions = index.regions()
    by_site: dict[tuple, list[str]] = {}
    for dotted, region in regions.items():
        for site in region.sites:
            by_site.setdefault(_site_key(site), []).append(dotted)
    sites = []
    resolved = list(index.resolved_sites())
    for site, _code in (index.resolved_declared.entries if index.resolved_declared else ()):
        resolved.append((site, index._entry_defs(site.target), None))
    for site, entries, why in resolved:
        targets, seen = [], set()
        named = index.site_targets.get(site_key(site))
        if named is None or not entries:  # declared and recorded regions: their entries
            named = []
            for dotted, summary, info in entries:
                # the class a forward belongs to is the target people name
                owner = index.defs.get(dotted.rsplit(".", 1)[0]) if info.qualname.endswith((".forward", ".__call__")) else None
                named.append(owner if owner is not None and owner[1].kind == "class" else (summary, info))
        for summary, info in named:
            key = (summary.path, info.qualname)
            if key in seen:
                continue
            seen.add(key)
            targets.append({"path": _rel(summary.path, root), "qualname": info.qualname, "row": info.row,
                            "kind": "class" if info.kind == "class" else "function", "module": summary.module})
        sites.append({
            "path": _rel(site.path, root),
            "row": site.row,
            "col": site.col,
            "kind": site.kind,
            "api": site.api,
            "origin": site.origin,
            "mode": site.mode,
            "dynamic": site.dynamic,
            "fullgraph": site.fullgraph,
            "targets": targets,
            # resolved: every value the site may compile is the project's; partial: some
            # are not seen (a loader's other branch, a parameter of unknown callers)
            "resolution": "unresolved" if not targets else ("partial" if why else "resolved"),
            "unresolved": (why[len(PARTIAL):] if why.startswith(PARTIAL) else why) if why else (None if targets else "not resolved"),
            "reached": sorted(set(by_site.get(_site_key(site), ()))),
        })
    sites.sort(key=lambda s: (s["path"], s["row"], s["col"]))
    region_rows = []
    for dotted, region in sorted(regions.items()):
        found = index.defs.get(dotted)
        region_rows.append({
            "def": dotted,
            "path": _rel(found[0].path, root) if found else None,
            "row": found[1].row if found else None,
            "kinds": sorted(region.kinds),
            "via": region.via,
        })
    return {"root": root, "sites": sites, "regions": region_rows}


def _site_key(site: Site) -> tuple:
    return (site.path, site.row, site.api, site.kind)


def render_text(data: dict) -> str:
    lines = []
    for site in data["sites"]:
        opts = [f"{name}={site[name]!r}" for name in ("mode", "dynamic", "fullgraph") if site[name] is not None]
        api = site["api"] + f"({', '.join(opts)})"
        head = f"{site['path']}:{site['row']}:{site['col']} {api}"
        if site["targets"]:
            names = ", ".join(f"{t['path']}:{t['row']} {t['qualname']}" for t in site["targets"])
            partial = f" (partial: {site['unresolved']})" if site["resolution"] == "partial" else ""
            lines.append(f"{head} -> {names}{partial}")
        else:
            lines.append(f"{head} -> unresolved: {site['unresolved']}")
        for dotted in site["reached"]:
            lines.append(f"    {dotted}")
    counts = {kind: sum(1 for s in data["sites"] if s["resolution"] == kind) for kind in ("resolved", "partial", "unresolved")}
    lines.append(f"{len(data['sites'])} site(s): {counts['resolved']} resolved, {counts['partial']} partial, "
                 f"{counts['unresolved']} unresolved; {len(data['regions'])} def(s) in regions")
    return "\n".join(lines) + "\n"


def render(data: dict, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    return render_text(data)
