"""Relinting one file after an edit inside one top-level def or class, reusing what the
edit cannot change (the language server does this on every keystroke).

A full lint of a 4,000-line file costs ~170 ms of CPU: the parse, the walk, the region
summary and the rules, each over the whole file. An edit that stays inside one
top-level `def` or `class` S and keeps the number of lines leaves every other statement
as it was, node for node and position for position. Then:

- the tree: S's lines alone are parsed and put in S's place. A file is a sequence of
  top-level statements, each starting at a line start with nothing open; the lines
  before S and after it are unchanged, so when S's new lines parse alone to one
  statement the whole file parses to the old statements with that one in between;
- the names table: made from the imports (anywhere) and the module-level statements;
  S holds no import, `global` or `nonlocal` before or after, so it is the old one;
- the summary (what the region index knows of the file): the module-level bindings,
  then each top-level statement's visit, each writing only its own entries and reading
  only the module context (regions.statement_part). When S's part is the same before
  and after, so is the summary, and so the index: the old summary is kept. When it is
  not, the edit changes the index and the full lint runs;
- the rules: a rule that is statement-local (`Rule.local`, each audited) gives the same
  findings as before in the statements the edit cannot reach: those that neither are S
  nor reach S by name through other statements (`reaching`), and the module-level
  statements, which are always relinted. Such a rule runs on the reached statements
  only (`facts.primary`), everything it reads of the rest of the file being the whole
  file's; its old findings elsewhere are kept. The other rules run on the whole file.
  Suppression comments are applied afresh to the result.

Anything else (another line count, an edit across statements or outside one, a module
level statement edited, S renamed, a new syntax error, a changed index, settings,
codes or a file the rules read) takes the full lint. tests/test_incremental.py compares
the two on random edits of real files.
"""
from __future__ import annotations

import ast
import os
import re
import warnings
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from .analysis.semantic.facts import ModuleFacts, declared_facts
from .analysis.project.context import TreeShape
from .analysis.reach.regions import def_qualnames, statement_part
from .analysis.semantic.walk import _plan
from .lint_file import ParsedFile, parse_file
from .model import Finding
from .rules import all_rules
from .source import SourceFile
from .suppression import filter_suppressed

_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=]")
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# nodes in S that could change what the rest of the file means: the names table
# (imports anywhere), module bindings made from inside a def (global, nonlocal)
_MODULE_CHANGING = (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)


@dataclass
class Unit:
    """One top-level statement (those sharing a line merged into one unit)."""

    first: int
    last: int
    stmts: list  # the statements (one, unless merged)
    words: frozenset  # identifier-like words of its lines (a name it mentions is one)
    binds: frozenset  # names it binds at module level
    _walk: Optional[tuple] = field(default=None, repr=False)  # (levels, parents, singletons, qualnames)

    @property
    def is_def(self) -> bool:
        return len(self.stmts) == 1 and isinstance(self.stmts[0], DEFS)


@dataclass
class Snapshot:
    """What a lint of one version of a file leaves for relinting the next."""

    path: str
    data: bytes
    lines: list  # its lines (bytes, with their endings)
    settings: object
    codes: tuple
    regions: object  # the index it was linted against (identity)
    parsed: ParsedFile
    units: list
    raw: dict  # rule code -> its findings before suppression
    deps: dict  # path -> (size, mtime) of the other files the rules read
    walrus: int  # `:=` in the file (the semantic model binds them only if there is one)
    parts: dict = field(default_factory=dict)  # id(def node) -> (node, regions.statement_part)
    _mentions: Optional[dict] = None  # word -> indices of the units whose lines hold it
    declined: Optional[str] = None  # why the last relint from this snapshot took the full lint

    def mentions(self) -> dict:
        if self._mentions is None:
            index: dict = {}
            for i, unit in enumerate(self.units):
                for word in unit.words:
                    index.setdefault(word, []).append(i)
            self._mentions = index
        return self._mentions

    def part(self, node) -> tuple:
        found = self.parts.get(id(node))
        if found is None or found[0] is not node:
            parsed, settings = self.parsed, self.settings
            found = self.parts[id(node)] = (node, statement_part(node, parsed.context, parsed.names, self.path,
                                                                 settings.compile_wrappers, settings.trace_wrappers))
        return found[1]


@dataclass
class Result:
    parsed: ParsedFile
    findings: list  # after suppression, sorted
    snapshot: Optional[Snapshot]
    project: object  # the Project the rules ran in (its `read`: files read)
    incremental: bool = False
    relinted: int = 0  # top-level statements the local rules ran on (incremental)


# -- full lint ----------------------------------------------------------------------------
def full(path: str, data: bytes, settings, codes, make_project: Callable) -> Result:
    """The whole pipeline (lint_file.parse_file + run_rules), keeping what a later
    incremental relint needs. `make_project(parsed)`: (the Project to lint in, the
    region index it holds)."""
    from .lint_file import run_rules

    source = SourceFile(path, data)
    parsed = parse_file(source, settings, with_context=True)
    project, regions = make_project(parsed)
    raw: dict = {}
    findings = run_rules(parsed, project, codes, raw=raw)
    snapshot = None
    if parsed.failure is None and parsed.context is not None and _plain(data):
        lines = data.splitlines(keepends=True)
        snapshot = Snapshot(path, data, lines, settings, tuple(codes), regions, parsed, _units(parsed.tree, lines),
                            raw, _deps(project), len(parsed.shape.by_type.get(ast.NamedExpr, ())))
    return Result(parsed, findings, snapshot, project)


def _plain(data: bytes) -> bool:
    """No coding declaration (the lines would be decoded otherwise than as UTF-8) and
    no `barry_as_FLUFL` (it changes how `<>` parses)."""
    head = data.split(b"\n", 2)[:2]
    return not any(_CODING.match(line) for line in head) and b"barry_as_FLUFL" not in data


def _units(tree: ast.Module, lines: list) -> list:
    units: list = []
    for stmt in tree.body:
        first, last = _first_line(stmt), stmt.end_lineno or stmt.lineno
        if units and first <= units[-1].last:
            prev = units[-1]
            units[-1] = _unit(prev.first, max(prev.last, last), prev.stmts + [stmt], lines)
        else:
            units.append(_unit(first, last, [stmt], lines))
    return units


def _unit(first: int, last: int, stmts: list, lines: list) -> Unit:
    text = b"".join(lines[first - 1:last])
    words = frozenset(m.decode("ascii") for m in _WORD.findall(text))
    if not text.isascii():
        # a name may be spelled outside ASCII: take every word of the decoded text too
        words |= frozenset(re.findall(r"\w+", text.decode("utf-8", errors="replace")))
    return Unit(first, last, stmts, words, frozenset(_bound(stmts)))


def _bound(stmts: list) -> set:
    """Names the statements may bind at module level (over-approximated: every name
    stored anywhere in a module-level statement, every def and class name in it, every
    import's name)."""
    out: set = set()
    for stmt in stmts:
        if isinstance(stmt, DEFS):
            out.add(stmt.name)
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                out.add(node.id)
            elif isinstance(node, DEFS):
                out.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    out.add((alias.asname or alias.name).split(".", 1)[0])
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                out.update(node.names)
            elif isinstance(node, ast.arg):
                out.add(node.arg)
            elif isinstance(node, ast.alias):
                out.add((node.asname or node.name).split(".", 1)[0])
            elif hasattr(ast, "MatchAs") and isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                out.add(node.name)
    return out


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None)
    return min([stmt.lineno] + [d.lineno for d in decorators]) if decorators else stmt.lineno


def _deps(project) -> Optional[dict]:
    """(size, mtime) of the files the rules read or probed; None when they searched a
    folder's listing (a file added there would not be seen)."""
    if project.listings:
        return None
    out = {}
    for path in list(project.read) + [p for p, _kind, _arg in project.probes]:
        out[path] = _stat(path)
    return out


def _stat(path: str):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


# -- incremental relint -------------------------------------------------------------------
def relint(old: Snapshot, data: bytes, settings, codes, regions, make_project: Callable) -> Optional[Result]:
    """The lint of `data`, the next version of `old`'s file, when it can reuse `old`;
    None when the full lint must run. `regions`: the project's index now (the same
    object as `old.regions` unless it changed since)."""
    if settings is not old.settings or tuple(codes) != old.codes or regions is not old.regions or old.deps is None:
        return _declined(old, "settings, codes, index or a listing the rules read")
    lines = data.splitlines(keepends=True)
    if len(lines) != len(old.lines) or not _plain(data):
        return _declined(old, "line count")
    first = next((i for i, (a, b) in enumerate(zip(old.lines, lines)) if a != b), None)
    if first is None:
        return _declined(old, "same text")  # nothing to save, and no reason to be clever
    last = next(i for i in range(len(lines) - 1, -1, -1) if old.lines[i] != lines[i])
    row, end_row = first + 1, last + 1
    index = next((i for i, u in enumerate(old.units) if u.first <= row and end_row <= u.last), None)
    if index is None or not old.units[index].is_def:
        return _declined(old, "not inside one top-level def or class")
    if any(_stat(path) != stat for path, stat in old.deps.items()):
        return _declined(old, "a file the rules read changed")
    unit = old.units[index]
    old_stmt = unit.stmts[0]
    new_stmt = _parse_unit(lines, unit, old_stmt)
    if new_stmt is None:
        return _declined(old, "the statement does not parse alone to one def or class of that name")
    old_text, new_text = b"".join(old.lines[unit.first - 1:unit.last]), b"".join(lines[unit.first - 1:unit.last])
    if b"compile-lint:" in old_text or b"compile-lint:" in new_text:
        return _declined(old, "region marker")  # a region marker (analysis/reach/declared.py): the summary's `declared`
    new_walrus = _count_changing(old_stmt, new_stmt)
    if new_walrus is None:
        return _declined(old, "import, global or nonlocal")
    walrus = old.walrus + new_walrus
    if (walrus > 0) != (old.walrus > 0):
        return _declined(old, "first or last :=")
    if old.part(old_stmt) != old.part(new_stmt):
        return _declined(old, "summary")  # the summary changes: so may the index

    # the new file: the tree with S's statement in place, walked; the old names and summary
    old_parsed = old.parsed
    body = list(old_parsed.tree.body)
    at = body.index(old_stmt)
    body[at] = new_stmt
    tree = ast.Module(body=body, type_ignores=old_parsed.tree.type_ignores)
    units = list(old.units)
    units[index] = _unit(unit.first, unit.last, [new_stmt], lines)
    shape = _shape(tree, units)
    nodes, parents = shape.nodes, shape.parents
    source = SourceFile(old.path, data)
    parsed = ParsedFile(source, tree, old_parsed.names, old_parsed.summary, nodes=nodes, parents=parents,
                        shape=shape, context=old_parsed.context)

    # the statements the local rules run on: the module level, S, and what reaches S
    reached = _reaching(old, units, index)
    rerun = [u for i, u in enumerate(units) if i in reached or not u.is_def]
    focus: dict = {}
    for u in rerun:
        for level in _walked(u)[0]:
            for node in level:
                focus.setdefault(node.__class__, []).append(node)
    rows = [(u.first, u.last) for u in rerun]

    def inside(f: Finding) -> bool:
        return any(a <= f.start.row <= b for a, b in rows)

    project, now = make_project(parsed)
    if now is not regions:
        return _declined(old, "index")  # (cannot be: the summary is the one the index was made with)
    facts = ModuleFacts(source, tree, parsed.names, nodes=nodes, parents=parents, project=project,
                        summary=parsed.summary, shape=parsed.shape)
    rules = all_rules()
    raw: dict = {}
    try:
        for code in sorted(codes):
            rule = rules[code]
            if rule.requires and not any(token in data for token in rule.requires):
                raw[code] = []
                continue
            project.allowed = declared_facts(rule.needs)
            if rule.local:
                facts.focus = focus
                try:
                    found = [f for f in type(rule)().check(facts) if inside(f)]
                finally:
                    facts.focus = None
                kept = [_without_edits(f) for f in old.raw.get(code, ()) if not inside(f)]
                raw[code] = kept + found
            else:
                raw[code] = list(type(rule)().check(facts))
    finally:
        project.allowed = None
        facts.release()
    findings = filter_suppressed([f for code in sorted(raw) for f in raw[code]], source)
    findings.sort(key=Finding.sort_key)
    deps = _deps(project)
    snapshot = Snapshot(old.path, data, lines, settings, old.codes, regions, parsed, units, raw,
                        None if deps is None else {**old.deps, **deps}, walrus, parts=old.parts,
                        _mentions=_moved(old.mentions(), index, unit.words, units[index].words))
    snapshot.parts.pop(id(old_stmt), None)
    return Result(parsed, findings, snapshot, project, incremental=True, relinted=len(rerun))


_SHARED = (ast.operator, ast.boolop, ast.unaryop, ast.cmpop, ast.expr_context)  # one object each, in every tree


def _walked(unit: Unit) -> tuple:
    """The unit's part of walk_by_type: its nodes level by level (breadth-first), their
    parents within it, the parent walk_by_type would record for each shared node (an
    operator object: the last one met, at the deepest level), its defs' qualnames."""
    if unit._walk is None:
        levels, parents, shared = [], {}, {}
        current = list(unit.stmts)
        depth = 0
        AST = ast.AST
        while current:
            levels.append(current)
            depth += 1
            below = []
            for node in current:
                for name, mixed in _plan(node.__class__):
                    value = getattr(node, name, None)
                    if value.__class__ is list:
                        for item in value:
                            if not mixed or isinstance(item, AST):
                                parents[item] = node
                                below.append(item)
                                if isinstance(item, _SHARED):
                                    shared[item] = (depth, node)
                    elif isinstance(value, AST):
                        parents[value] = node
                        below.append(value)
                        if isinstance(value, _SHARED):
                            shared[value] = (depth, node)
            current = below
        qualnames = def_qualnames(ast.Module(body=unit.stmts, type_ignores=[]))
        unit._walk = (levels, parents, shared, qualnames)
    return unit._walk


def _shape(tree: ast.Module, units: list) -> TreeShape:
    """walk_by_type(tree) and the qualnames of its defs, from the units' own walks: the
    breadth-first order is the units' first levels in order, then their second levels,
    and so on."""
    walks = [_walked(u) for u in units]
    nodes = [tree]
    parents: dict = {}
    qualnames: dict = {}
    for levels, own, _shared, names in walks:
        parents.update(own)
        qualnames.update(names)
    for stmt in tree.body:
        parents[stmt] = tree
    deepest = max((len(w[0]) for w in walks), default=0)
    for depth in range(deepest):
        for levels, _own, _shared, _names in walks:
            if depth < len(levels):
                nodes.extend(levels[depth])
    last: dict = {}
    for i, (_levels, _own, shared, _names) in enumerate(walks):
        for node, (depth, parent) in shared.items():
            key = (depth, i)
            if node not in last or key > last[node][0]:
                last[node] = (key, parent)
    for node, (_key, parent) in last.items():
        parents[node] = parent
    by_type: dict = {}
    for node in nodes:
        same = by_type.get(node.__class__)
        if same is None:
            by_type[node.__class__] = [node]
        else:
            same.append(node)
    qualnames[None] = None  # (filled: ModuleFacts._qualnames does not walk again)
    return TreeShape(nodes, parents, by_type, {}, qualnames, {})


def _declined(old: Snapshot, reason: str) -> None:
    old.declined = reason  # (for the server's timings and the tests' counts)
    return None


def _parse_unit(lines: list, unit: Unit, old_stmt: ast.stmt) -> Optional[ast.stmt]:
    """S's new lines parsed alone: one statement of the same kind and name starting on
    the same line, its positions those of the file; None otherwise."""
    text = b"".join(lines[unit.first - 1:unit.last])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = ast.parse(text, type_comments=False)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if len(module.body) != 1:
        return None
    stmt = module.body[0]
    if type(stmt) is not type(old_stmt) or stmt.name != old_stmt.name:
        return None
    ast.increment_lineno(module, unit.first - 1)
    if _first_line(stmt) != unit.first:
        return None
    return stmt


def _count_changing(old_stmt: ast.stmt, new_stmt: ast.stmt) -> Optional[int]:
    """The change in the number of `:=` the edit makes; None when S holds (or held) a
    statement that changes what the rest of the file means."""
    count = 0
    for sign, stmt in ((-1, old_stmt), (1, new_stmt)):
        for node in ast.walk(stmt):
            if isinstance(node, _MODULE_CHANGING):
                return None
            if isinstance(node, ast.NamedExpr):
                count += sign
    return count


def _reaching(old: Snapshot, units: list, index: int) -> set:
    """Indices of the units that reach unit `index` by name: it, the units mentioning a
    name it binds, those mentioning a name one of those binds, and so on."""
    mentions = old.mentions()
    found = {index}
    todo = [index]
    while todo:
        unit = units[todo.pop()]
        for name in unit.binds:
            for i in mentions.get(name, ()):
                if i not in found and name in units[i].words:  # (the index is the old units')
                    found.add(i)
                    todo.append(i)
    # the edited unit's own new words do not matter here (it is relinted): the others'
    # words are unchanged, so the old index holds for them
    return found


def _moved(mentions: dict, index: int, old_words: frozenset, new_words: frozenset) -> dict:
    """The word index with unit `index`'s words replaced (updated in place: the old
    snapshot is not used again)."""
    for word in old_words - new_words:
        holders = mentions.get(word)
        if holders is not None and index in holders:
            holders.remove(index)
    for word in new_words - old_words:
        mentions.setdefault(word, []).append(index)
    return mentions


def _without_edits(f: Finding) -> Finding:
    """A kept finding, its fix's edits (computed for the old text) dropped: computed again
    when asked for."""
    if f.fix is not None and f.fix.edits is not None:
        return replace(f, fix=replace(f.fix, edits=None))
    return f

