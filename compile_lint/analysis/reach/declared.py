"""Declared and recorded regions: code compiled or traced where static analysis cannot see it.

Three sources, one meaning ("this def runs compiled/traced"):

- config: `compiled = ["pkg.mod:Class", "pkg.mod:func", "pkg.blocks.*"]` and `traced =
  [...]` under `[tool.compile-lint]`; an entry may be a table `{target = "...", mode =
  "reduce-overhead", dynamic = true}`. A name that matches nothing in the project is a
  configuration error.
- marker: a `# compile-lint: compiled` (or `traced`, optionally `mode=...`,
  `dynamic=true|false`) comment on the line of, or the line above, a `def` or `class`
  (or its first decorator).
- recorded: `compile-lint-regions.json`, written by `compile-lint record` from a real
  run: per site the target (file relative to the project root, qualified name), the
  options, and what the run saw (input shapes, graphs, recompiles, graph breaks, the
  code Dynamo compiled). An entry whose definition moved away or vanished is reported
  once as stale, never a crash; a malformed file is a configuration error.

`ProjectIndex` turns each of them into an entry Site (api "declared" or "recorded"), so
regions reached by calls, rules and messages work as for a `torch.compile(...)` call.
"""
from __future__ import annotations

import io
import json
import os
import re
import tokenize
from dataclasses import dataclass, field
from typing import Iterable, Optional

from .configured import ConfiguredTargets, configured_targets

COMPILED, TRACED = "compiled", "traced"
REGIONS_FILE = "compile-lint-regions.json"
FORMAT_VERSION = 1
MARKER_RE = re.compile(r"#\s*compile-lint:\s*(compiled|traced)\b([^#]*)")
_OPTION_RE = re.compile(r"^(mode|dynamic)=(\S+)$")


class DeclarationError(Exception):
    """A malformed declaration (config entry, recorded file): a configuration error."""


@dataclass(frozen=True)
class Recording:
    """What one run saw at one compile/trace site (all hashable: it lives in a Site)."""

    api: str  # "torch.compile", "Module.compile", "torch.jit.trace", ...
    backend: Optional[str] = None
    fullgraph: Optional[bool] = None
    calls: tuple[tuple[str, int], ...] = ()  # call sites (path relative to the root, row)
    shapes: tuple[str, ...] = ()  # distinct input signatures, e.g. "(1, 3, 32, 32) float32"
    graphs: int = 0
    recompiles: int = 0
    graph_breaks: int = 0
    break_reasons: tuple[str, ...] = ()
    code: tuple[tuple[str, str], ...] = ()  # (path, qualname) of code Dynamo put in a graph
    # each graph break the translator hooks saw (compile_lint/record/break_hooks.py): (path,
    # row, official ID or Gb_type, whether its frame ran eagerly); None: an older recording
    breaks: Optional[tuple[tuple[str, int, str, bool], ...]] = None


@dataclass(frozen=True)
class DeclaredRegion:
    """A def declared (or recorded) as compiled or traced."""

    target: str  # "pkg.mod:Class", "pkg.blocks.*" (config, marker) or "rel/path.py:Qual.name" (recorded)
    kind: str = COMPILED  # COMPILED or TRACED
    mode: Optional[str] = None
    dynamic: Optional[bool] = None
    origin: str = "config"  # "config" | "marker" | "recorded"
    where: str = ""  # the config file, the marker's file, the recorded file
    row: int = 0  # marker: its line; recorded: the target's recorded line
    recording: Optional[Recording] = None
    options: tuple = ()  # recorded: other compile options as sorted (key, value) pairs

    @property
    def module(self) -> str:
        return self.target.split(":", 1)[0] if ":" in self.target else self.target.rsplit(".", 1)[0]

    @property
    def qualname(self) -> str:
        return self.target.split(":", 1)[1] if ":" in self.target else self.target.rsplit(".", 1)[-1]


# -- config ---------------------------------------------------------------------------
def _check_name(where: str, key: str, name) -> str:
    if not isinstance(name, str) or not name:
        raise DeclarationError(f"{where}: {key!r}: expected a name like 'pkg.module:Class', got {name!r}")
    module, _, qual = name.partition(":")
    parts = module.split(".")
    if qual:
        ok = all(p.isidentifier() for p in parts) and all(p.isidentifier() for p in qual.split("."))
    else:
        ok = len(parts) >= 2 and all(p.isidentifier() for p in parts[:-1]) and (parts[-1].isidentifier() or parts[-1] == "*")
    if not ok:
        raise DeclarationError(
            f"{where}: {key!r}: {name!r} is not a def name like 'pkg.module:Class', 'pkg.module:func' or 'pkg.blocks.*'"
        )
    return name


def parse_config_list(value, key: str, where: str) -> tuple[DeclaredRegion, ...]:
    """`compiled = [...]` / `traced = [...]`: names, or tables {target, mode, dynamic}."""
    kind = COMPILED if key == "compiled" else TRACED
    if not isinstance(value, list):
        raise DeclarationError(f"{where}: {key!r} must be a list of names like 'pkg.module:Class', got {value!r}")
    out = []
    for entry in value:
        if isinstance(entry, dict):
            unknown = set(entry) - {"target", "mode", "dynamic"}
            if unknown:
                raise DeclarationError(f"{where}: {key!r}: unknown key {sorted(unknown)[0]!r} in {entry!r} (allowed: target, mode, dynamic)")
            if "target" not in entry:
                raise DeclarationError(f"{where}: {key!r}: {entry!r} has no 'target'")
            mode, dynamic = entry.get("mode"), entry.get("dynamic")
            if mode is not None and not isinstance(mode, str):
                raise DeclarationError(f"{where}: {key!r}: 'mode' must be a string in {entry!r}")
            if dynamic is not None and not isinstance(dynamic, bool):
                raise DeclarationError(f"{where}: {key!r}: 'dynamic' must be true or false in {entry!r}")
            if kind == TRACED and (mode is not None or dynamic is not None):
                raise DeclarationError(f"{where}: {key!r}: 'mode' and 'dynamic' apply to compiled entries only ({entry!r})")
            out.append(DeclaredRegion(_check_name(where, key, entry["target"]), kind, mode, dynamic, "config", where))
        else:
            out.append(DeclaredRegion(_check_name(where, key, entry), kind, origin="config", where=where))
    return tuple(out)


# -- markers --------------------------------------------------------------------------
def find_markers(data: bytes, tree, qualnames: dict[int, str], path: str) -> list[DeclaredRegion]:
    """`# compile-lint: compiled|traced [mode=...] [dynamic=...]` comments on the line of,
    or the line above, a def or class (or its first decorator)."""
    if b"compile-lint:" not in data:
        return []
    comments: dict[int, str] = {}
    try:
        text = data.decode("utf-8-sig", errors="replace")
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and "compile-lint:" in tok.string:
                comments[tok.start[0]] = tok.string
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    if not comments:
        return []
    import ast

    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or id(node) not in qualnames:
            continue
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        for line in (node.lineno, first, first - 1):
            match = MARKER_RE.search(comments.get(line, ""))
            if match is None:
                continue
            mode = dynamic = None
            for word in match.group(2).replace(",", " ").split():
                opt = _OPTION_RE.match(word)
                if opt and opt.group(1) == "mode":
                    mode = opt.group(2).strip("'\"")
                elif opt and opt.group(2).lower() in ("true", "false"):
                    dynamic = opt.group(2).lower() == "true"
            out.append(DeclaredRegion(qualnames[id(node)], match.group(1), mode, dynamic, "marker", path, line))
            break
    return out


# -- the recorded file ----------------------------------------------------------------
def _opt(value, types, what: str, where: str):
    if value is not None and not isinstance(value, types):
        raise DeclarationError(f"{where}: {what} has the wrong type: {value!r}")
    return value


def read_recorded(path: str) -> tuple[DeclaredRegion, ...]:
    """The regions of a `compile-lint-regions.json`; DeclarationError when malformed."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise DeclarationError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise DeclarationError(f"{path}: not valid JSON ({exc}); re-run `compile-lint record --fresh`") from None
    return parse_recorded(data, path)


def parse_recorded(data, where: str) -> tuple[DeclaredRegion, ...]:
    if not isinstance(data, dict) or not isinstance(data.get("sites"), list):
        raise DeclarationError(f"{where}: not a compile-lint recording (expected an object with a 'sites' list)")
    version = data.get("version")
    if version != FORMAT_VERSION:
        raise DeclarationError(f"{where}: unsupported recording version {version!r} (this compile-lint reads {FORMAT_VERSION})")
    out = []
    for i, site in enumerate(data["sites"]):
        at = f"{where}: sites[{i}]"
        if not isinstance(site, dict) or not isinstance(site.get("target"), dict):
            raise DeclarationError(f"{at}: expected an object with a 'target'")
        target = site["target"]
        rel, qual = target.get("path"), target.get("qualname")
        if not isinstance(rel, str) or not isinstance(qual, str) or not rel or not qual:
            raise DeclarationError(f"{at}: 'target' needs a 'path' and a 'qualname'")
        kind = site.get("kind")
        if kind not in (COMPILED, TRACED):
            raise DeclarationError(f"{at}: 'kind' must be 'compiled' or 'traced', got {kind!r}")
        options = site.get("options") or {}
        if not isinstance(options, dict):
            raise DeclarationError(f"{at}: 'options' must be an object")
        mode = _opt(options.get("mode"), str, "options.mode", at)
        dynamic = _opt(options.get("dynamic"), bool, "options.dynamic", at)
        seen = site.get("seen") or {}
        if not isinstance(seen, dict):
            raise DeclarationError(f"{at}: 'seen' must be an object")
        calls = []
        for call in site.get("calls") or ():
            if not isinstance(call, dict) or not isinstance(call.get("path"), str) or not isinstance(call.get("row"), int):
                raise DeclarationError(f"{at}: each of 'calls' needs a 'path' and a 'row'")
            calls.append((call["path"], call["row"]))
        shapes = []
        for sig in seen.get("inputs") or ():
            if not isinstance(sig, list):
                raise DeclarationError(f"{at}: each of 'seen.inputs' must be a list of tensors")
            shapes.append(render_signature(sig))
        code = []
        for entry in seen.get("code") or ():
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or not isinstance(entry.get("qualname"), str):
                raise DeclarationError(f"{at}: each of 'seen.code' needs a 'path' and a 'qualname'")
            code.append((entry["path"], entry["qualname"]))
        counts = {}
        for name in ("graphs", "recompiles", "graph_breaks"):
            value = seen.get(name) or 0
            if not isinstance(value, int):
                raise DeclarationError(f"{at}: 'seen.{name}' must be a number")
            counts[name] = value
        reasons = seen.get("graph_break_reasons") or []
        if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
            raise DeclarationError(f"{at}: 'seen.graph_break_reasons' must be a list of strings")
        breaks = None
        if "breaks" in seen:
            breaks = []
            for entry in seen.get("breaks") or ():
                if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or not isinstance(entry.get("row"), int):
                    raise DeclarationError(f"{at}: each of 'seen.breaks' needs a 'path' and a 'row'")
                breaks.append((entry["path"], entry["row"], str(entry.get("id") or entry.get("gb_type") or "?"),
                               bool(entry.get("frame_to_eager"))))
            breaks = tuple(breaks)
        recording = Recording(
            api=str(site.get("api") or "torch.compile"),
            backend=_opt(options.get("backend"), str, "options.backend", at),
            fullgraph=_opt(options.get("fullgraph"), bool, "options.fullgraph", at),
            calls=tuple(calls),
            shapes=tuple(shapes),
            break_reasons=tuple(reasons),
            code=tuple(code),
            breaks=breaks,
            **counts,
        )
        row = target.get("row") if isinstance(target.get("row"), int) else 0
        extra = tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in options.items() if k not in ("mode", "dynamic")))
        out.append(DeclaredRegion(f"{rel}:{qual}", kind, mode, dynamic, "recorded", where, row, recording, extra))
    return tuple(out)


def render_signature(sig: list) -> str:
    """[{"shape": [1, 3, 32, 32], "dtype": "float32"}, ...] -> "(1, 3, 32, 32) float32"."""
    parts = []
    for tensor in sig:
        if isinstance(tensor, dict) and isinstance(tensor.get("shape"), list):
            shape = "(" + ", ".join(str(d) for d in tensor["shape"]) + ("," if len(tensor["shape"]) == 1 else "") + ")"
            parts.append(f"{shape} {tensor.get('dtype', '')}".strip())
        else:
            parts.append(str(tensor))
    return ", ".join(parts) if parts else "()"


# -- where a run finds them -----------------------------------------------------------
@dataclass
class Declarations:
    """The config and recorded regions that apply to one run, and the project roots."""

    regions: list[DeclaredRegion] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)  # recorded paths are relative to these
    files: list[str] = field(default_factory=list)  # recorded files read
    # the classes the projects' YAML configurations name (configured.py)
    configured: ConfiguredTargets = field(default_factory=ConfiguredTargets)

    def key(self) -> str:
        """What the region index depends on besides the summaries (its cache key)."""
        return repr((sorted(self.roots), self.regions, self.configured.key()))


def declarations_for(settings_and_paths: Iterable[tuple[object, str]], paths: Iterable[str] = ()) -> Declarations:
    """Config lists of every settings in use, the recorded file of each project root, and
    the classes the YAML files of each project name (configured.py); for the files of
    `paths` (the run's) that lie under no project root, the YAML under the folder that
    holds them all. Raises DeclarationError for a malformed recorded file."""
    from ...project_root import find_project_root

    out = Declarations()
    seen_settings: set[int] = set()
    seen_files: set[str] = set()
    yaml_folders: set[str] = set()
    for settings, path in settings_and_paths:
        if id(settings) in seen_settings:
            continue
        seen_settings.add(id(settings))
        out.regions.extend(getattr(settings, "compiled", ()) or ())
        out.regions.extend(getattr(settings, "traced", ()) or ())
        root = find_project_root(path if path != "-" else os.getcwd(), settings)
        if root is None:
            continue
        yaml_folders.add(root)
        chosen = getattr(settings, "regions_file", None)
        recorded = os.path.join(settings.root, chosen) if chosen else os.path.join(root, REGIONS_FILE)
        recorded = os.path.abspath(recorded)
        if recorded in seen_files:
            continue
        seen_files.add(recorded)
        if not os.path.isfile(recorded):
            if chosen:
                raise DeclarationError(f"{settings.source}: 'regions-file': {chosen!r} does not exist")
            continue
        regions = read_recorded(recorded)
        base = os.path.dirname(recorded)
        out.files.append(recorded)
        out.roots.append(base)
        # recorded paths are relative to the recording's folder: make them absolute here
        for region in regions:
            rel, _, qual = region.target.partition(":")
            out.regions.append(_rebase(region, os.path.normpath(os.path.join(base, rel)), qual))
    # files outside every project root (none found, or a `--config` kept elsewhere): the
    # YAML next to them, under the folder that holds them all
    roots = tuple(f + os.sep for f in yaml_folders)
    outside = [p for p in paths if p != "-" and not os.path.abspath(p).startswith(roots)]
    folder = _common_folder(outside)
    if folder is not None:
        yaml_folders.add(folder)
    out.configured = configured_targets(yaml_folders)
    return out


def _common_folder(paths: Iterable[str]) -> Optional[str]:
    """The deepest folder holding every one of the files `paths`, or None without paths
    (or when that is the file system's root: no project there to read)."""
    folders = {os.path.dirname(p) for p in paths}
    if not folders:
        return None
    common = os.path.commonpath([os.path.abspath(f) for f in folders])
    return None if os.path.dirname(common) == common else common


def _rebase(region: DeclaredRegion, path: str, qual: str) -> DeclaredRegion:
    from dataclasses import replace

    base = os.path.dirname(region.where)
    rec = region.recording
    if rec is not None:
        rec = replace(
            rec,
            calls=tuple((os.path.normpath(os.path.join(base, p)), row) for p, row in rec.calls),
            code=tuple((os.path.normpath(os.path.join(base, p)), q) for p, q in rec.code),
            breaks=None if rec.breaks is None else tuple(
                (os.path.normpath(os.path.join(base, p)), row, gb, eager) for p, row, gb, eager in rec.breaks),
        )
    return replace(region, target=f"{path}:{qual}", recording=rec)


# -- declared regions -> entry sites -----------------------------------------------------
@dataclass
class Resolved:
    """Declared regions as the region index sees them."""

    entries: list = field(default_factory=list)  # (Site, [dotted of code Dynamo compiled])
    unknown: list[DeclaredRegion] = field(default_factory=list)  # config names matching nothing
    stale: list[DeclaredRegion] = field(default_factory=list)  # recorded defs that moved or vanished


def resolve(index, declared: Iterable[DeclaredRegion]) -> Resolved:
    """Entry sites for declared regions (`index` is a ProjectIndex). Config names are
    looked up as dotted names (re-exports followed); recorded ones by file and
    qualified name; markers in their own file."""
    from .regions import CUDAGRAPH_MODES, COMPILE, Ref, Site

    out = Resolved()
    by_path = {os.path.abspath(s.path): s for s in index.summaries}
    markers = [(s, d) for s in index.summaries for d in (getattr(s, "declared", ()) or ())]

    def site_for(region, summary, info, path, row, api):
        kind = COMPILE if region.kind == COMPILED else "traced"
        cudagraphs = kind == COMPILE and region.mode in CUDAGRAPH_MODES
        dotted = summary.dotted(info.qualname)
        return Site(kind, Ref(dotted, instance=info.kind == "class"), path, row, api, region.mode, region.dynamic,
                    cudagraphs, summary.module, origin=region.origin, recording=region.recording)

    def code_of(region):
        dotted = []
        for path, qual in region.recording.code if region.recording else ():
            summary = by_path.get(path)
            if summary is not None and qual in summary.defs:
                dotted.append(summary.dotted(qual))
        return dotted

    for summary, region in markers:
        info = summary.defs.get(region.target)
        if info is not None:
            out.entries.append((site_for(region, summary, info, summary.path, region.row or info.row, "declared"), []))
    for region in declared:
        if region.origin == "recorded":
            path, _, qual = region.target.partition(":")
            summary = by_path.get(path)
            if summary is None:
                if not os.path.exists(path):
                    out.stale.append(region)
                continue  # a file outside this run: nothing to say about it
            info = summary.defs.get(qual)
            if info is None:
                out.stale.append(region)
                continue
            calls = region.recording.calls if region.recording else ()
            call = next(((p, r) for p, r in calls if p in by_path), None)
            where, row = (by_path[call[0]].path, call[1]) if call else (summary.path, info.row)
            out.entries.append((site_for(region, summary, info, where, row, "recorded"), code_of(region)))
            continue
        found = _config_defs(index, region)
        if found is None:
            continue  # its module is not in this run (a partial run): cannot tell
        if not found:
            out.unknown.append(region)
        for summary, info in found:
            out.entries.append((site_for(region, summary, info, summary.path, info.row, "declared"), []))
    return out


def _config_defs(index, region: DeclaredRegion):
    """The defs a config name matches; [] when none; None when its module is not part of
    this run but may exist (a partial run)."""
    if region.target.endswith(".*"):
        module = region.target[:-2]
        found = [
            (summary, info)
            for summary in index.summaries
            if summary.module == module or summary.module.startswith(module + ".")
            for info in summary.defs.values()
            if "." not in info.qualname and info.kind in ("class", "function")
        ]
        if found:
            return found
        return [] if _whole_project(index, module) else None
    dotted = region.target.replace(":", ".")
    hit = index.lookup(dotted)
    if hit is not None:
        return [hit]
    return [] if _whole_project(index, region.module) else None


def _whole_project(index, module: str) -> bool:
    """Is `module` summarized in this run, or nowhere on disk? Then a miss is a typo."""
    return module in index.modules or not _exists_on_disk(index, module.split("."))


def _exists_on_disk(index, parts: list[str]) -> bool:
    """A file for the module under a folder of this run (a partial run may not include it)."""
    roots = {os.path.dirname(os.path.abspath(s.path)) for s in index.summaries}
    rel = os.path.join(*parts)
    for root in roots:
        folder = root
        for _ in range(4):
            if os.path.exists(os.path.join(folder, rel + ".py")) or os.path.isdir(os.path.join(folder, rel)):
                return True
            folder = os.path.dirname(folder)
    return False


def _declared_text(site, where: str = "") -> str:
    opts = []
    if site.mode:
        opts.append(f"mode={site.mode!r}")
    if site.dynamic is not None:
        opts.append(f"dynamic={site.dynamic}")
    how = f" with {', '.join(opts)}" if opts else ""
    if site.origin == "recorded":
        api = site.recording.api if site.recording else "torch.compile"
        api = "Module.compile()" if api == "Module.compile" else f"{api}()"
        return f"{site.kind} by {api}{how}{where}, recorded at run time"
    if site.origin == "marker":
        return f"declared {site.kind}{how} by a `# compile-lint: {site.kind}` comment{where}"
    return f"declared {site.kind}{how} in the configuration"


def declared_note(site) -> str:
    """The note on a declared or recorded site's related location (the location says where)."""
    return _declared_text(site)


def describe_declared(site) -> str:
    """How a declared or recorded Site reads in findings, with where it was declared."""
    from .regions import _display

    return _declared_text(site, f" at {_display(site.path)}:{site.row}")


def recorded_breaks(region, path: str, rows: range, qualname: Optional[str]) -> Optional[str]:
    """What a recorded run (with break hooks) saw of a predicted graph break on `rows` of
    `path` in the def `qualname`: "confirmed" (a break on those rows; with its IDs),
    "compiled" (the def went into a graph and did not break there), "not reached", or
    None when no recording of the region has break hooks."""
    recordings = [s.recording for s in getattr(region, "sites", ()) or () if getattr(s, "recording", None)]
    recordings = [r for r in recordings if r.breaks is not None]
    if not recordings:
        return None
    where = os.path.normpath(os.path.abspath(path))
    ids = sorted({gb for r in recordings for p, row, gb, _ in r.breaks if row in rows and p == where})
    if ids:
        return "confirmed " + ", ".join(ids)
    if any(p == where and q == qualname for r in recordings for p, q in r.code):
        return "compiled"
    return "not reached"


def recorded_counts(region, what: str) -> str:
    """" (a recorded run saw 3 recompiles)" for what = "recompiles" or "graph_breaks", when
    a recorded site of the region saw any; else ""."""
    best = 0
    for site in getattr(region, "sites", ()) or ():
        rec = getattr(site, "recording", None)
        if rec is not None:
            best = max(best, getattr(rec, what, 0))
    if not best:
        return ""
    label = {"recompiles": "recompile", "graph_breaks": "graph break"}[what]
    return f" (a recorded run saw {best} {label}{'s' * (best != 1)})"
