#!/usr/bin/env python3
"""Score a compile-lint checkout against an oracle-bench run (bench/oracle/run.py).

    PYTHONPATH=/work/base python bench/oracle/score.py --results bench/.work/oracle/ --code /work/base

For each source of the run (a library's folder in the models' venv, an app's folder)
the scorer makes a lint project in a temporary folder (`--lint-dir DIR` keeps them:
DIR/<source>/; never inside a git work tree, whose .gitignore compile-lint respects by
default): the source's packages
(hard links, or copies), a `pyproject.toml` marking the root and a `compile-lint.toml`
declaring the class (or function) of every entry that ran as compiled
(`compiled = ["pkg.module:Class", ...]`, README "Regions static analysis cannot see");
nothing else is configured. It runs `python -m compile_lint check PACKAGES
--output-format json --exit-zero --no-cache` with `PYTHONPATH=CHECKOUT` and judges the
findings of the counted codes (default: every code starting with `CL5`):

- a break site is the innermost frame inside the source folders of a graph break the
  run recorded (file, line); its statement is the simple statement holding that line,
  or the header of a compound one (`if ...:`);
- recall: break sites with a counted finding whose line lies in the site's statement,
  overall and per graph-break ID (a site with two IDs counts under each);
- precision: a counted finding on a break site's statement is true; one whose code some
  model executed (an executed instruction starts inside the finding's span, when the run
  recorded columns; else its line ran: `--executed line`), in a frame Dynamo traced
  (lines of a frame Dynamo gave up on after a break in a loop are left out), is false;
  one whose code no model executed, unknown;
- `--passes` judges by some of the run's passes (eval, train, eval:float16; a run of the
  first judge is one pass, its entries' declared mode); `--findings FILE` keeps the
  lint's findings per source and reuses them while the declared targets are the same.

Writes RESULTS/score.json (or --score-file), with every counted finding and its verdict
in `finding_list`, and prints Markdown tables (--markdown FILE writes them too).
`--sources GLOB` scores a slice of the sources (development: its figures are not the
bench's).
Standard library only; compile-lint runs in a subprocess with --python (default: this
interpreter, which needs compile-lint's dependencies).
"""
from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Optional

GB_ID_RE = re.compile(r"\bGB\d{4}\b")
UNKNOWN_NAME_RE = re.compile(r"'compiled': '([^']+)' names no class or function")
LOOP_ID = "GB7000"  # "graph break in loop": the frame runs eagerly


# -- statements ----------------------------------------------------------------------
def statement_spans(source: str) -> dict[int, tuple[int, int]]:
    """line -> (first, last) line of the statement holding it: a simple statement's
    lines, or a compound statement's header (up to the line before its body)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    spans: dict[int, tuple[int, int]] = {}
    stack = [tree]
    while stack:  # outer statements first, so inner ones override them
        node = stack.pop(0)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.stmt):
                stack.append(child)
                continue
            body = getattr(child, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                first = min([child.lineno] + [d.lineno for d in getattr(child, "decorator_list", [])])
                span = (first, max(child.lineno, body[0].lineno - 1))
            else:
                span = (child.lineno, child.end_lineno or child.lineno)
            for line in range(span[0], span[1] + 1):
                spans[line] = span
            stack.append(child)
    return spans


class Spans:
    def __init__(self):
        self._files: dict[str, dict[int, tuple[int, int]]] = {}

    def of(self, path: str, line: int) -> tuple[int, int]:
        spans = self._files.get(path)
        if spans is None:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    spans = statement_spans(f.read())
            except OSError:
                spans = {}
            self._files[path] = spans
        return spans.get(line, (line, line))


# -- the run's facts ---------------------------------------------------------------------
@dataclass
class Site:
    source: str
    rel: str
    line: int
    ids: set = field(default_factory=set)
    gb_types: set = field(default_factory=set)
    models: set = field(default_factory=set)
    to_eager: bool = False
    span: tuple = (0, 0)
    found_by: set = field(default_factory=set)
    passes: set = field(default_factory=set)  # the judge's passes that broke here ("eval", "train")


@dataclass
class RunFacts:
    sites: dict  # (source, rel, line) -> Site
    executed: dict  # (source, rel) -> set of lines
    untraced: dict  # (source, rel) -> lines of frames Dynamo gave up on (not judged)
    outside: dict  # gb_id -> breaks with no frame in the sources
    targets: dict  # source -> set of declared names
    undeclarable: list  # entries whose target is outside their source
    models: list  # per-model summaries
    id_names: dict = field(default_factory=lambda: defaultdict(set))  # gb_id -> its Gb_type strings seen
    # (source, rel) -> {line: columns where executed instructions start}; runs that
    # recorded them (child.py's opcode events) are judged by expression, not by line
    columns: dict = field(default_factory=dict)


def _rel(path: str, base: str) -> Optional[str]:
    rel = os.path.relpath(path, base)
    return None if rel.startswith("..") else rel.replace(os.sep, "/")


def declared_name(rel: str, qualname: str) -> Optional[str]:
    """`pkg/mod.py` + `Class` -> `pkg.mod:Class` (an import name from the lint root)."""
    if "<" in qualname or not rel.endswith(".py"):
        return None
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    parts = [p.replace(".", "_") for p in parts]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts) + ":" + qualname


def read_run(results_dir: str) -> tuple[dict, list[dict]]:
    with open(os.path.join(results_dir, "run.json"), encoding="utf-8") as f:
        run = json.load(f)
    models = []
    for item in run["entries"]:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "__", item["name"])
        with open(os.path.join(results_dir, "models", name + ".json"), encoding="utf-8") as f:
            models.append(json.load(f))
    return run, models


def in_passes(m: dict, passes: Optional[set]) -> dict:
    """The entry `m` as its passes in `passes` saw it (None: all): status, breaks, executed
    lines and Dynamo's counts over those passes. A run of the first judge (no `passes`)
    is one pass, its entry's declared mode."""
    if "passes" not in m:
        if passes is not None and m.get("mode") not in passes:
            return dict(m, status="not_in_passes", breaks=[], executed={})
        return m
    chosen = [p for p in m["passes"] if passes is None or p["pass"] in passes]
    if not chosen:
        return dict(m, status="not_in_passes", breaks=[], executed={})
    order = ("ok", "compile_error", "eager_error", "no_mode", "build_error")
    executed: dict = defaultdict(set)
    columns: dict = defaultdict(lambda: defaultdict(set))
    dynamo: dict = defaultdict(int)
    for p in chosen:
        for path, rows in (p.get("executed") or {}).items():
            executed[path].update(rows)
        for path, rows in (p.get("executed_columns") or {}).items():
            for line, cols in rows.items():
                columns[path][int(line)].update(cols)
        for key, value in (p.get("dynamo") or {}).items():
            if not isinstance(value, dict):
                dynamo[key] += value
    return dict(m, status=min((p["status"] for p in chosen), key=order.index),
                breaks=[dict(b, **{"pass": p["pass"]}) for p in chosen for b in p.get("breaks", ())],
                executed={k: sorted(v) for k, v in executed.items()}, dynamo=dict(dynamo),
                executed_columns={k: dict(v) for k, v in columns.items()})


def collect(run: dict, models: list[dict], spans: Spans, passes: Optional[set] = None) -> RunFacts:
    sources = run["sources"]
    facts = RunFacts({}, defaultdict(set), defaultdict(set), defaultdict(int), defaultdict(set), [], [])
    for m in models:
        m = in_passes(m, passes)
        src = sources.get(m.get("source"), {})
        base = src.get("base")
        dyn = m.get("dynamo") or {}
        summary = {"name": m["name"], "source": m.get("source"), "status": m["status"], "sites": 0,
                   "breaks": len(m.get("breaks", [])),
                   "frames_to_eager": dyn.get("frames_total", 0) - dyn.get("frames_ok", 0),
                   "hooks_vs_reasons": (len(m.get("breaks", [])), dyn.get("graph_break_reasons", 0),
                                        dyn.get("graph_break_counter", 0))}
        facts.models.append(summary)
        if base is None or m["status"] not in ("ok", "compile_error"):
            continue
        target = m.get("target") or {}
        rel = _rel(target["file"], base) if target.get("file") else None
        name = declared_name(rel, target.get("qualname", "")) if rel else None
        if name:
            facts.targets[m["source"]].add(name)
        else:
            facts.undeclarable.append(m["name"])
        for path, lines in (m.get("executed") or {}).items():
            rel = _rel(path, base)
            if rel:
                facts.executed[(m["source"], rel)].update(lines)
        for path, rows in (m.get("executed_columns") or {}).items():
            rel = _rel(path, base)
            if rel:
                have = facts.columns.setdefault((m["source"], rel), {})
                for line, cols in rows.items():
                    have.setdefault(int(line), set()).update(cols)
        seen = set()
        for b in m.get("breaks", []):
            gb_id = b.get("gb_id") or "unregistered"
            site = b.get("site")
            rel = _rel(site["file"], base) if site else None
            if rel is None:
                facts.outside[gb_id] += 1
                continue
            key = (m["source"], rel, site["line"])
            s = facts.sites.get(key)
            if s is None:
                s = facts.sites[key] = Site(*key, span=spans.of(site["file"], site["line"]))
            s.ids.add(gb_id)
            s.gb_types.add(b.get("gb_type"))
            facts.id_names[gb_id].add(b.get("gb_type"))
            s.models.add(m["name"])
            s.passes.add(b.get("pass") or m.get("mode") or "")
            s.to_eager = s.to_eager or bool(b.get("frame_to_eager"))
            seen.add(key)
            frame = b.get("frame")
            if b.get("frame_to_eager") and frame:
                frel = _rel(frame["file"], base)
                if frel:
                    facts.untraced[(m["source"], frel)].update(range(frame["first"], frame["last"] + 1))
        summary["sites"] = len(seen)
    return facts


# -- compile-lint ---------------------------------------------------------------------
def make_project(lint_dir: str, base: str, roots: list[str], names: Iterable[str]) -> list[str]:
    """The lint project for one source; returns the paths to check."""
    if os.path.isdir(lint_dir):
        shutil.rmtree(lint_dir)
    os.makedirs(lint_dir)
    paths = []
    for root in roots:
        dest = os.path.join(lint_dir, os.path.relpath(root, base))
        _link_tree(root, dest)
        paths.append(dest)
    _write_config(lint_dir, names)
    return paths


def make_whole_project(lint_dir: str, base: str, names: Iterable[str]) -> list[str]:
    if os.path.isdir(lint_dir):
        shutil.rmtree(lint_dir)
    _link_tree(base, lint_dir)
    _write_config(lint_dir, names)
    return [lint_dir]


def _write_config(lint_dir: str, names: Iterable[str]) -> None:
    marker = os.path.join(lint_dir, "pyproject.toml")
    if not os.path.exists(marker):
        with open(marker, "w", encoding="utf-8") as f:
            f.write("# project root marker for the oracle bench's lint run\n")
    with open(os.path.join(lint_dir, "compile-lint.toml"), "w", encoding="utf-8") as f:
        f.write("# written by bench/oracle/score.py: the oracle's compiled targets, nothing else\n")
        f.write("compiled = [\n" + "".join(f"  {json.dumps(n)},\n" for n in sorted(names)) + "]\n")


def _link_tree(src: str, dest: str) -> None:
    def link(a, b):
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    if os.path.isfile(src):
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        link(src, dest)
        return
    shutil.copytree(src, dest, copy_function=link, symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.dylib"))


def run_lint(python: str, code: str, lint_dir: str, paths: list[str], names: set) -> tuple[list[dict], list[str]]:
    """Findings (JSON) of `compile-lint check`; drops declared names the checkout cannot
    find (a configuration error) and says which."""
    dropped: list[str] = []
    env = dict(os.environ, PYTHONPATH=code)
    where = subprocess.run([python, "-c", "import compile_lint; print(compile_lint.__file__)"], env=env,
                           cwd=lint_dir, capture_output=True, text=True).stdout.strip()
    if not os.path.realpath(where).startswith(os.path.join(os.path.realpath(code), "")):
        raise RuntimeError(f"{python} imports compile_lint from {where or 'nowhere'}, not from {code}")
    while True:
        proc = subprocess.run([python, "-m", "compile_lint", "check", *paths, "--output-format", "json",
                               "--exit-zero", "--no-cache"], cwd=lint_dir, env=env, capture_output=True, text=True)
        if proc.returncode == 0:
            return json.loads(proc.stdout or "[]"), dropped
        miss = UNKNOWN_NAME_RE.search(proc.stderr)
        if proc.returncode == 2 and miss and miss.group(1) in names:
            names.discard(miss.group(1))
            dropped.append(miss.group(1))
            _write_config(lint_dir, names)
            continue
        raise RuntimeError(f"compile-lint check failed in {lint_dir} (exit {proc.returncode}): {proc.stderr[-2000:]}")


# -- scoring --------------------------------------------------------------------------
def ran(facts: RunFacts, key: tuple, row: int, end_row: int, col: Optional[int], end_col: Optional[int],
        by: str = "expression") -> bool:
    """Whether a finding's code ran in some pass Dynamo traced. By "expression" (a run
    with instruction columns): an executed instruction starts inside the finding's span
    (1-based columns, end exclusive, as compile-lint's JSON gives them); by "line" (the
    first judge; runs without columns): its first line ran."""
    if row in facts.untraced.get(key, ()):
        return False
    columns = facts.columns.get(key) if by == "expression" and col is not None and end_col is not None else None
    if columns is None:
        return row in facts.executed.get(key, ())
    start, end = (row, col - 1), (end_row, end_col - 1)
    for line in range(row, end_row + 1):
        for c in columns.get(line, ()):
            if start <= (line, c) < end:
                return True
    return False


def judge(facts: RunFacts, findings: dict, counted: tuple[str, ...], spans_of, by: str = "expression") -> dict:
    """findings: source -> list of (rel, row, end_row, code, message[, column, end_column]).
    spans_of(source, rel, row) -> (first, last) statement lines. `by`: how a finding's
    code counts as executed (see ran). Returns the score."""
    site_lines = defaultdict(set)  # (source, rel) -> break lines
    for s in facts.sites.values():
        site_lines[(s.source, s.rel)].add(s.line)
    verdicts = []  # (code, verdict, ids) per counted finding
    listed = []  # every counted finding with its verdict (score.json "finding_list")
    by_code = defaultdict(lambda: {"findings": 0, "executed": 0, "true": 0, "false": 0, "unknown": 0})
    for source, items in findings.items():
        for rel, row, end_row, code, message, *cols in items:
            col, end_col = (cols + [None, None])[:2]
            counted_code = code.startswith(counted)
            key = (source, rel)
            first, last = spans_of(source, rel, row)
            hits = [line for line in site_lines.get(key, ()) if first <= line <= last or row <= line <= end_row]
            executed = ran(facts, key, row, end_row, col, end_col, by)
            verdict = "true" if hits else ("false" if executed else "unknown")
            c = by_code[code]
            c["findings"] += 1
            c["executed"] += executed or bool(hits)
            c[verdict] += 1
            if not counted_code:
                continue
            ids = set()
            for line in hits:
                site = facts.sites[(source, rel, line)]
                site.found_by.add(code)
                ids |= site.ids
            declared = set(GB_ID_RE.findall(message)[:1])  # the break's own ID (a GB7000 after it is its consequence)
            verdicts.append((code, verdict, ids or declared or {"(no ID)"}))
            listed.append({"source": source, "file": rel, "line": row, "column": col, "code": code, "verdict": verdict,
                           "site_ids": sorted(ids), "message_ids": sorted(declared), "message": message[:300]})
    per_id = defaultdict(lambda: {"sites": 0, "found": 0, "to_eager": 0, "true": 0, "false": 0, "unknown": 0})
    for s in facts.sites.values():
        for gb in s.ids:
            per_id[gb]["sites"] += 1
            per_id[gb]["found"] += bool(s.found_by)
            per_id[gb]["to_eager"] += s.to_eager
        if s.to_eager:
            per_id[LOOP_ID + " (frame to eager)"]["sites"] += 1
            per_id[LOOP_ID + " (frame to eager)"]["found"] += bool(s.found_by)
    for code, verdict, ids in verdicts:
        for gb in ids:
            per_id[gb][verdict] += 1
    total = {v: sum(1 for _, x, _ in verdicts if x == v) for v in ("true", "false", "unknown")}
    found = sum(1 for s in facts.sites.values() if s.found_by)
    return {
        "counted_codes": list(counted),
        "sites": len(facts.sites),
        "found": found,
        "recall": _ratio(found, len(facts.sites)),
        "precision": _ratio(total["true"], total["true"] + total["false"]),
        "findings": total,
        "per_id": {k: dict(v, recall=_ratio(v["found"], v["sites"]),
                           precision=_ratio(v["true"], v["true"] + v["false"])) for k, v in sorted(per_id.items())},
        "by_code": {k: dict(v) for k, v in sorted(by_code.items())},
        "outside_sources": dict(sorted(facts.outside.items())),
        "finding_list": sorted(listed, key=lambda f: (f["verdict"], f["source"], f["file"], f["line"])),
    }


def _ratio(a: int, b: int) -> Optional[float]:
    return round(a / b, 3) if b else None


def markdown(score: dict, facts: RunFacts, run: dict, code_label: str) -> str:
    def pct(x):
        return "-" if x is None else f"{100 * x:.0f}%"

    passes = score.get("passes")
    judged = ", ".join(passes) if isinstance(passes, list) else passes or "declared"
    out = [f"Checkout: {code_label}; counted codes: {', '.join(score['counted_codes'])}*; passes: {judged}", ""]
    out += ["| source | entries | ran | with breaks | frames run eagerly | breaks (hooks) | graph_break_reasons | counters | break sites |",
            "|---|---|---|---|---|---|---|---|---|"]
    by_source = defaultdict(lambda: [0, 0, 0, 0, 0, 0, 0])
    for m in facts.models:
        row = by_source[m["source"]]
        row[0] += 1
        row[1] += m["status"] in ("ok", "compile_error")
        row[2] += m["sites"] > 0
        row[3] += m["frames_to_eager"] > 0
        for i, n in enumerate(m["hooks_vs_reasons"]):
            row[4 + i] += n
    sites_by_source = defaultdict(int)
    for s in facts.sites.values():
        sites_by_source[s.source] += 1
    for source in sorted(by_source):
        label = run["sources"].get(source, {}).get("version") or source
        out.append(f"| {label} | " + " | ".join(map(str, by_source[source])) + f" | {sites_by_source[source]} |")
    totals = [sum(r[i] for r in by_source.values()) for i in range(7)]
    out.append("| **all** | " + " | ".join(map(str, totals)) + f" | {len(facts.sites)} |")
    f = score["findings"]
    out += ["", f"Recall: {score['found']}/{score['sites']} sites ({pct(score['recall'])}). "
            f"Precision on executed code (by {score.get('executed_by', 'line')}): {f['true']} true, {f['false']} false "
            f"({pct(score['precision'])}); {f['unknown']} on code never executed (unknown).", ""]
    out += ["| ID | Gb_type | sites | found | recall | frame to eager | true | false | unknown |",
            "|---|---|---|---|---|---|---|---|---|"]
    names = facts.id_names
    for gb, row in score["per_id"].items():
        label = "; ".join(sorted(t for t in names.get(gb, ()) if t))[:60]
        out.append(f"| {gb} | {label} | {row['sites']} | {row['found']} | {pct(row['recall'])} | "
                   f"{row['to_eager']} | {row['true']} | {row['false']} | {row['unknown']} |")
    out += ["", "| code | findings | on executed code | true | false | unknown |", "|---|---|---|---|---|---|"]
    for code, row in score["by_code"].items():
        out.append(f"| {code} | {row['findings']} | {row['executed']} | {row['true']} | {row['false']} | {row['unknown']} |")
    if score["outside_sources"]:
        out += ["", "Breaks with no frame in the sources (not scored): "
                + ", ".join(f"{k} {v}" for k, v in score["outside_sources"].items())]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Score a compile-lint checkout on an oracle-bench run.")
    parser.add_argument("--results", required=True, help="the run's output folder (run.py --out)")
    parser.add_argument("--code", required=True, help="the compile-lint checkout to score (its folder)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with compile-lint's dependencies")
    parser.add_argument("--codes", default="CL5", help="comma-separated code prefixes counted (default CL5)")
    parser.add_argument("--markdown", help="also write the tables to this file")
    parser.add_argument("--score-file", help="where the score goes (default RESULTS/score.json)")
    parser.add_argument("--lint-dir", help="keep the lint projects here (default: a temporary folder, removed)")
    parser.add_argument("--passes", help="comma-separated passes of the run to judge by (eval, train, eval:float16); "
                        "default: every pass the run made (README.md, \"The judge\")")
    parser.add_argument("--executed", choices=("expression", "line"), default="expression",
                        help="when a finding's code counts as executed: an instruction inside its span ran "
                             "(expression, default; runs that recorded columns) or its line ran (line: the first judge)")
    parser.add_argument("--findings", metavar="FILE",
                        help="the lint's findings per source, kept here and reused by a later scoring of the same "
                             "checkout (another run, other passes) where a source's declared targets are the same")
    parser.add_argument("--sources", action="append", metavar="GLOB",
                        help="score only the sources matching GLOB (repeatable; e.g. 'app:*', kornia): a slice "
                             "for development, its figures are not the bench's")
    ns = parser.parse_args(argv)
    results = os.path.abspath(ns.results)
    code = os.path.abspath(ns.code)
    if not os.path.isdir(os.path.join(code, "compile_lint")):
        parser.error(f"{ns.code}: not a compile-lint checkout (no compile_lint/)")
    try:
        run, models = read_run(results)
    except (OSError, ValueError, KeyError) as exc:
        print(f"score.py: cannot read the run in {ns.results}: {exc}", file=sys.stderr)
        return 2
    if ns.sources:
        models = [m for m in models if any(fnmatch.fnmatchcase(m.get("source") or "", g) for g in ns.sources)]
        if not models:
            parser.error(f"--sources {ns.sources}: no entry of the run comes from such a source")
    spans = Spans()
    passes = {p.strip() for p in ns.passes.split(",") if p.strip()} if ns.passes else None
    facts = collect(run, models, spans, passes)
    # the lint projects live outside any git work tree: inside one (bench/.work/ of this
    # repository) compile-lint's default respect-gitignore would skip the whole project
    lint_root = os.path.abspath(ns.lint_dir) if ns.lint_dir else tempfile.mkdtemp(prefix="oracle-lint-")
    try:
        return _score_sources(ns, results, code, run, models, facts, spans, lint_root)
    finally:
        if not ns.lint_dir:
            shutil.rmtree(lint_root, ignore_errors=True)


def _read_cache(path: Optional[str], code: str) -> dict:
    """The findings kept by an earlier scoring of this same checkout (--findings)."""
    empty = {"code": code, "sources": {}}
    if not path or not os.path.exists(path):
        return empty
    with open(path, encoding="utf-8") as f:
        cache = json.load(f)
    if cache.get("code") != code:
        raise SystemExit(f"score.py: {path} holds the findings of {cache.get('code')}, not of {code}")
    return cache


def _score_sources(ns, results, code, run, models, facts, spans, lint_root) -> int:
    counted = tuple(c.strip() for c in ns.codes.split(",") if c.strip())
    findings: dict[str, list] = {}
    dropped: dict[str, list] = {}
    cache = _read_cache(ns.findings, code)
    for source, names in sorted(facts.targets.items()):
        kept = cache["sources"].get(source)
        if kept is not None and kept["declared"] == sorted(names):
            findings[source] = [tuple(item) for item in kept["items"]]
            dropped[source] = kept["dropped"]
            continue
        info = run["sources"][source]
        base, roots = info["base"], info["roots"]
        lint_dir = os.path.join(lint_root, re.sub(r"[^A-Za-z0-9_.-]+", "_", source))
        if roots == [base]:
            paths = make_whole_project(lint_dir, base, names)
        else:
            paths = make_project(lint_dir, base, roots, names)
        try:
            raw, dropped[source] = run_lint(ns.python, code, lint_dir, paths, set(names))
        except RuntimeError as exc:
            print(f"score.py: {exc}", file=sys.stderr)
            return 2
        items = []
        for item in raw:
            rel = _rel(os.path.abspath(item["filename"]), lint_dir)
            if rel is None or item.get("cell") is not None:
                continue
            end = item.get("end_location") or item["location"]
            items.append((rel, item["location"]["row"], end["row"], item["code"], item.get("message", ""),
                          item["location"]["column"], end["column"]))
        findings[source] = items
        cache["sources"][source] = {"declared": sorted(names), "items": items, "dropped": dropped[source]}
        if ns.findings:
            with open(ns.findings, "w", encoding="utf-8") as f:
                json.dump(cache, f)

    def spans_of(source, rel, row):
        return spans.of(os.path.join(run["sources"][source]["base"], rel), row)

    score = judge(facts, findings, counted, spans_of, ns.executed)
    score["executed_by"] = ns.executed if facts.columns else "line"
    score["code"] = code
    score["passes"] = sorted((ns.passes or run.get("passes") or "declared").split(","))
    score["declared"] = {s: sorted(n) for s, n in sorted(facts.targets.items())}
    score["declared_unknown_to_checkout"] = {s: d for s, d in dropped.items() if d}
    score["undeclarable"] = facts.undeclarable
    score["site_list"] = [
        {"source": s.source, "file": s.rel, "line": s.line, "ids": sorted(s.ids), "gb_types": sorted(s.gb_types),
         "models": sorted(s.models), "passes": sorted(s.passes), "to_eager": s.to_eager, "statement": list(s.span), "found_by": sorted(s.found_by)}
        for s in sorted(facts.sites.values(), key=lambda s: (s.source, s.rel, s.line))
    ]
    with open(ns.score_file or os.path.join(results, "score.json"), "w", encoding="utf-8") as f:
        json.dump(score, f, indent=1)
    text = markdown(score, facts, run, code)
    if ns.markdown:
        with open(ns.markdown, "w", encoding="utf-8") as f:
            f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
