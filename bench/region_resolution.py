#!/usr/bin/env python3
"""Region resolution on real applications: does the region index find what each
compile/trace/export site compiles?

    python bench/region_resolution.py APPS_DIR            # APPS_DIR from bench/apps/materialize.sh
    python bench/region_resolution.py APPS_DIR --json out.json --misses

The hand-read truth is bench/apps/sites.toml (one entry per site: the repo's own
class/function it compiles, or why the model comes from elsewhere). For each app the
script asks the region index for its sites:
- `compile-lint regions APP --output-format json` when that command exists;
- otherwise the Python API the engine uses (analysis.reach.regions.summarize over every
  file `check` would lint, then ProjectIndex.all_sites()).
It then compares, site by site:
- resolved correctly: the index names targets, at least one labelled and all of them
  labelled or `also_ok` (a class and its `forward` count as the same target);
- partial: the right targets (or only `also_ok` ones), and the index says the value may
  also be something it cannot see (a loader's other branch): not counted as resolved, nor
  as wrong (the label has `partial = true` when the code really has such a branch: then
  naming an expected target counts as correct);
- resolved wrongly: the index names a target that is not the labelled one, or names
  only `also_ok` branches without saying the value may be something else;
- unresolved: the index has no target, or no site at that line.
The headline is correct / sites whose model is defined in the repo. Sites labelled
`external` are reported apart (resolving them to a repo def is a wrong region), and so
are `non_site` labels: calls that compile nothing (a project's own `.compile()`), where
a recorded site with a target is a wrong region.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Optional

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SITES = os.path.join(HERE, "apps", "sites.toml")
# a decorator site may be recorded at the decorator or at the `def` below it
ROW_SLACK = 3


@dataclass
class Found:
    """One site as the region index reports it."""

    path: str  # relative to the app folder, "/" separated
    row: int
    api: str
    targets: list[str]  # "path.py:Qualname"
    unresolved: Optional[str] = None
    partial: bool = False  # some value the site may compile is not seen (never a resolved target)


@dataclass
class Outcome:
    label: dict
    verdict: str  # correct | wrong | unresolved | external-ok | external-wrong
    targets: list[str] = field(default_factory=list)
    reason: Optional[str] = None


def norm_target(target: str) -> str:
    """`a.py:C.forward` and `a.py:C` are the same code; `f.<locals>.g` is `f.g`."""
    path, _, qual = target.partition(":")
    qual = qual.replace("<locals>.", "")
    for method in (".forward", ".__call__"):
        if qual.endswith(method):
            qual = qual[: -len(method)]
    return f"{os.path.normpath(path).replace(os.sep, '/')}:{qual}"


# -- the index, through the command ------------------------------------------------
def regions_command_available(python: str) -> bool:
    proc = subprocess.run(
        [python, "-m", "compile_lint", "regions", "--help"],
        cwd=CODE, capture_output=True, text=True, env=_env(),
    )
    return proc.returncode == 0


CODE = ROOT  # the checkout whose compile_lint answers (--code)


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = CODE + os.pathsep + env.get("PYTHONPATH", "")
    return env


def sites_by_command(python: str, app_dir: str) -> list[Found]:
    proc = subprocess.run(
        [python, "-m", "compile_lint", "regions", app_dir, "--output-format", "json"],
        cwd=CODE, capture_output=True, text=True, env=_env(),
    )
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"compile-lint regions {app_dir} exited {proc.returncode}: {proc.stderr[-2000:]}")
    data = json.loads(proc.stdout)
    root = data.get("root") or app_dir
    out = []
    for site in data["sites"]:
        path = _rel(os.path.join(root, site["path"]), app_dir)
        targets = [
            f"{_rel(os.path.join(root, t['path']), app_dir)}:{t['qualname']}" for t in site.get("targets") or []
        ]
        out.append(Found(path, site["row"], site.get("api", ""), targets, site.get("unresolved"),
                         site.get("resolution") == "partial"))
    return out


def _rel(path: str, app_dir: str) -> str:
    return os.path.relpath(os.path.abspath(path), os.path.abspath(app_dir)).replace(os.sep, "/")


# -- the index, through the Python API (what engine.py does) ------------------------
def sites_by_api(app_dir: str) -> list[Found]:
    sys.path.insert(0, ROOT)
    from compile_lint.analysis.semantic.names import NameTable, module_name_for
    from compile_lint.analysis.reach.regions import ProjectIndex, summarize
    from compile_lint.analysis.semantic.walk import walk
    from compile_lint.config import load_config_for
    from compile_lint.discovery import find_files

    files = find_files([app_dir], load_config_for).files
    summaries = []
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        try:
            tree = ast.parse(data, filename=path)
        except (SyntaxError, ValueError):
            continue
        settings = load_config_for(path)
        module, is_package = module_name_for(path)
        nodes = walk(tree)
        names = NameTable.build(tree, module, is_package, nodes)
        summaries.append(summarize(tree, names, path, settings.compile_wrappers, settings.trace_wrappers))
    index = ProjectIndex(summaries)
    out = []
    for site in index.all_sites():
        targets = []
        if site.target is not None:
            for _, summary, info in index._entry_defs(site.target) or []:
                owner = info.qualname
                for method in (".forward", ".__call__"):
                    if owner.endswith(method):
                        owner = owner[: -len(method)]
                targets.append(f"{_rel(summary.path, app_dir)}:{owner}")
            if not targets:
                found = index.lookup(site.target.dotted)
                if found is not None:
                    targets.append(f"{_rel(found[0].path, app_dir)}:{found[1].qualname}")
        reason = None if targets else ("no target" if site.target is None else f"{site.target.dotted} not in the project")
        out.append(Found(_rel(site.path, app_dir), site.row, site.api, sorted(set(targets)), reason))
    return out


# -- comparison ------------------------------------------------------------------------
def judge(label: dict, found: list[Found], other_lines: frozenset = frozenset()) -> tuple[Outcome, list[Found]]:
    """The outcome of one labelled site, and the index sites it used.

    An index site counts for the label on its line or up to ROW_SLACK lines below (a
    decorator recorded at its `def`), unless another label sits on that line
    (`other_lines`: the labelled lines of the same file); one with a target wins.
    """
    near = [
        f for f in found
        if f.path == label["path"] and label["line"] <= f.row <= label["line"] + ROW_SLACK
        and (f.row == label["line"] or f.row not in other_lines)
    ]
    near.sort(key=lambda f: (not f.targets, f.row - label["line"]))
    used = near[:1]
    for where in label.get("via", []):
        path, _, row = where.rpartition(":")
        used += [f for f in found if f.path == path and f.row == int(row)]
    targets = sorted({t for f in used for t in f.targets})
    reason = "; ".join(f.unresolved for f in used if f.unresolved) or (None if used else "no site recorded")
    got = {norm_target(t) for t in targets}
    partial = any(f.partial for f in used)
    also_ok = {norm_target(t) for t in label.get("also_ok", [])}
    if "external" in label:
        # a partial site claims no target: it only names the project's code among the
        # values it may compile, which must be branches the label allows
        verdict = "external-wrong" if got - also_ok else "external-ok"
        return Outcome(label, verdict, targets, reason), used
    want = {norm_target(t) for t in label["expected"]}
    if not got:
        verdict = "unresolved"
    elif not got <= want | also_ok:
        verdict = "wrong"
    elif not got & want:
        # Only branches the label allows, none it expects: as a resolved claim that leaves
        # the labelled target out, wrong; as a partial one ("this, or a value I cannot
        # see": yolov5's attempt_load gives its Ensemble or an unpickled model) it is true
        # and incomplete, like any partial answer.
        verdict = "partial" if partial else "wrong"
    elif partial and not label.get("partial"):
        verdict = "partial"  # right targets, and says it may be something else: not a resolved target
    else:
        verdict = "correct"
    return Outcome(label, verdict, targets, reason), used


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("apps_dir", help="folder with one sub-folder per app (bench/apps/materialize.sh)")
    parser.add_argument("--sites", default=SITES, help="hand-read labels (default: bench/apps/sites.toml)")
    parser.add_argument("--via", choices=["auto", "command", "api"], default="auto",
                        help="ask `compile-lint regions` (command) or the Python API (api); auto: command if it exists")
    parser.add_argument("--python", default=sys.executable, help="interpreter for `compile-lint regions`")
    parser.add_argument("--code", default=ROOT, help="checkout whose compile_lint answers (default: this one)")
    parser.add_argument("--misses", action="store_true", help="list every site not resolved correctly")
    parser.add_argument("--json", help="write per-site outcomes here")
    args = parser.parse_args(argv)
    global CODE
    CODE = os.path.abspath(args.code)

    with open(args.sites, "rb") as fh:
        truth = tomllib.load(fh)
    labels = truth["site"]
    non_sites = truth.get("non_site", [])
    via = args.via
    if via == "auto":
        via = "command" if regions_command_available(args.python) else "api"
    print(f"region index via: {'compile-lint regions --output-format json' if via == 'command' else 'Python API (summarize + ProjectIndex)'}")

    apps = sorted({label["app"] for label in labels})
    outcomes: list[Outcome] = []
    extra: list[tuple[str, Found]] = []
    spurious: list[tuple[dict, Found]] = []  # index sites at calls that compile nothing
    for app in apps:
        app_dir = os.path.join(args.apps_dir, app)
        if not os.path.isdir(app_dir):
            print(f"error: {app_dir} missing; run bench/apps/materialize.sh {args.apps_dir}", file=sys.stderr)
            return 2
        found = sites_by_command(args.python, app_dir) if via == "command" else sites_by_api(app_dir)
        used_ids: set[int] = set()
        mine = [lab for lab in labels if lab["app"] == app]
        for label in mine:
            lines = frozenset(lab["line"] for lab in mine if lab["path"] == label["path"])
            outcome, used = judge(label, found, lines)
            outcomes.append(outcome)
            used_ids |= {id(f) for f in used}
        for non_site in (n for n in non_sites if n["app"] == app):
            hits = [f for f in found if f.path == non_site["path"] and f.row == non_site["line"]]
            # a site there with a target marks code compiled that is not; without one it is
            # only a line of the report (e.g. "the project's own method")
            spurious += [(non_site, f) for f in hits if f.targets]
            used_ids |= {id(f) for f in hits}
        extra += [(app, f) for f in found if id(f) not in used_ids]

    header = f"{'app':44} {'sites':>5} {'in-repo':>7} {'correct':>7} {'partial':>7} {'wrong':>5} {'unres':>5} {'ext->repo':>9}"
    print(header)
    print("-" * len(header))
    totals = [0, 0, 0, 0, 0, 0]
    for app in apps + ["TOTAL"]:
        mine = [o for o in outcomes if app == "TOTAL" or o.label["app"] == app]
        row = [
            len(mine),
            sum("expected" in o.label for o in mine),
            sum(o.verdict == "correct" for o in mine),
            sum(o.verdict == "partial" for o in mine),
            sum(o.verdict == "wrong" for o in mine),
            sum(o.verdict == "unresolved" for o in mine),
            sum(o.verdict == "external-wrong" for o in mine),
        ]
        if app == "TOTAL":
            print("-" * len(header))
        print(f"{app:44} {row[0]:5d} {row[1]:7d} {row[2]:7d} {row[3]:7d} {row[4]:5d} {row[5]:5d} {row[6]:9d}")
    in_repo = sum("expected" in o.label for o in outcomes)
    correct = sum(o.verdict == "correct" for o in outcomes)
    partial = sum(o.verdict == "partial" for o in outcomes)
    wrong = sum(o.verdict in ("wrong", "external-wrong") for o in outcomes)
    print(f"\nresolved correctly: {correct}/{in_repo} = {100 * correct / max(in_repo, 1):.0f}% of the sites whose model is in the repo"
          f" ({partial} more partial: right targets, said to be incomplete); wrong targets: {wrong}")
    print(f"index sites with no hand-read label (wrapper calls, duplicates): {len(extra)}")
    print(f"calls that compile nothing given a target (non_site labels): {len(spurious)}/{len(non_sites)}")

    if args.misses:
        print("\nmisses (label -> what the index said):")
        for o in outcomes:
            if o.verdict in ("correct", "external-ok"):
                continue
            lab = o.label
            want = lab.get("expected") or f"external: {lab['external']}"
            got = o.targets or f"unresolved ({o.reason})"
            print(f"  [{o.verdict}] {lab['app']}/{lab['path']}:{lab['line']} {lab['api']}")
            print(f"      want {want}")
            print(f"      got  {got}")
            if lab.get("why"):
                print(f"      why  {lab['why']}")
        for non_site, f in spurious:
            print(f"  [not a site] {non_site['app']}/{f.path}:{f.row} {f.api} -> {f.targets or f.unresolved}")
            print(f"      why  {non_site['why']}")
        if extra:
            print("\nindex sites with no label:")
            for app, f in extra:
                print(f"  {app}/{f.path}:{f.row} {f.api} -> {f.targets or f.unresolved}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                [{"app": o.label["app"], "path": o.label["path"], "line": o.label["line"], "verdict": o.verdict,
                  "targets": o.targets, "reason": o.reason} for o in outcomes],
                fh, indent=1,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
