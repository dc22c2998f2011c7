"""Code actions: a finding's fix, "fix all safe" and "add noqa", as workspace edits.

Fixes are the same libcst codemods `compile-lint fix` runs (fixer.fill_edits for the
findings' own edits, fixer.fix_source for all safe ones), so an editor never applies anything the
command line would not. In a notebook an edit goes to the cell it falls in; a fix that
would span cells is not offered.
"""
from __future__ import annotations

from typing import Optional

from ..fixer import changed_span, fill_edits, fix_source
from ..model import SAFE, Finding, Position
from ..notebook import NotebookError
from .documents import Linted, Place, Relinter, lsp_position, lsp_range, noqa_line

from . import FIX_ALL_KIND  # noqa: E402 (server.py uses it before importing this module)

QUICK_FIX = "quickfix"
UNSAFE_KIND = QUICK_FIX + ".unsafe"


def code_actions(codec, context, linted: Linted, params: dict) -> list[dict]:
    only = (params.get("context") or {}).get("only")
    want_quickfix = not only or any(QUICK_FIX.startswith(k) or k.startswith(QUICK_FIX) for k in only)
    want_fix_all = not only or any(FIX_ALL_KIND.startswith(k) for k in only)
    actions: list[dict] = []
    in_range = [f for f in linted.findings if _overlaps(codec, linted, f, params)]
    if want_quickfix:
        for f in in_range:
            fix = _fix_action(codec, linted, f)
            if fix is not None:
                actions.append(fix)
        for f in in_range:
            noqa = _noqa_action(codec, linted, f)
            if noqa is not None:
                actions.append(noqa)
    if want_fix_all and any(f.fix is not None and f.fix.applicability == SAFE for f in linted.findings):
        fix_all = _fix_all_action(codec, context, linted)
        if fix_all is not None:
            actions.append(fix_all)
    return actions


def _overlaps(codec, linted: Linted, f: Finding, params: dict) -> bool:
    place = linted.place_of(f.start.row)
    if place is None or place.uri != params["textDocument"]["uri"]:
        return False
    rng = lsp_range(codec, place, f.start, f.end)
    req = params["range"]
    return (rng["start"]["line"], rng["start"]["character"]) <= (req["end"]["line"], req["end"]["character"]) and (
        req["start"]["line"], req["start"]["character"]) <= (rng["end"]["line"], rng["end"]["character"])


def _diagnostic_for(codec, linted: Linted, f: Finding) -> Optional[dict]:
    from .documents import diagnostic

    place = linted.place_of(f.start.row)
    return diagnostic(codec, place, f, linted) if place is not None else None


def _fix_action(codec, linted: Linted, f: Finding) -> Optional[dict]:
    if f.fix is None:
        return None
    if f.fix.edits is None:  # computed once per lint of the buffer, kept with its findings
        fill_edits(linted.path, linted.code, [g for g in linted.findings if g.fix is not None])
    changes = _text_edits(codec, linted, f.fix.edits or [])
    if not changes:
        return None
    safe = f.fix.applicability == SAFE
    title = f"{f.code}: {f.fix.message}" + ("" if safe else " (unsafe fix: read the rule page first)")
    return {
        "title": title,
        "kind": QUICK_FIX if safe else UNSAFE_KIND,
        "diagnostics": [d for d in [_diagnostic_for(codec, linted, f)] if d is not None],
        "isPreferred": safe,
        "edit": {"changes": changes},
    }


def _text_edits(codec, linted: Linted, edits) -> dict[str, list[dict]]:
    changes: dict[str, list[dict]] = {}
    for e in edits:
        place = linted.place_of(e.location.row)
        end_place = linted.place_of(e.end_location.row)
        if place is None or end_place is None or place.uri != end_place.uri:
            return {}  # spans cells: not offered
        rng = lsp_range(codec, place, e.location, e.end_location)
        changes.setdefault(place.uri, []).append({"range": rng, "newText": e.content})
    return changes


def _noqa_action(codec, linted: Linted, f: Finding) -> Optional[dict]:
    place = linted.place_of(f.start.row)
    if place is None:
        return None
    index = f.start.row - 1 - place.row_offset
    if not 0 <= index < len(place.lines):
        return None
    line = place.lines[index]
    new = noqa_line(line, f.code)
    if new is None:
        return None
    rng = {"start": {"line": index, "character": 0}, "end": lsp_position(codec, place, f.start.row, len(line) + 1)}
    return {
        "title": f"{f.code}: add `# noqa: {f.code}` to this line",
        "kind": QUICK_FIX,
        "diagnostics": [d for d in [_diagnostic_for(codec, linted, f)] if d is not None],
        "edit": {"changes": {place.uri: [{"range": rng, "newText": new}]}},
    }


def _fix_all_action(codec, context, linted: Linted) -> Optional[dict]:
    outcome = fix_source(Relinter(context, context.regions), linted.path, linted.code, linted.findings, unsafe=False)
    if outcome.error is not None or not outcome.changed:
        return None
    new_code = outcome.fixed.decode("utf-8", errors="surrogatepass")
    changes: dict[str, list[dict]] = {}
    if linted.notebook is None:
        place = linted.places()[0]
        changes[place.uri] = [_replace_changed(codec, place, linted.code.decode("utf-8", errors="surrogatepass"), new_code)]
    else:
        try:
            texts = linted.notebook.cell_texts(new_code)
        except NotebookError:
            return None
        for place, cell, new in zip(linted.places(), linted.notebook.cells, texts):
            if new != cell.text:
                changes[place.uri] = [_replace_changed(codec, Place(place.uri, place.lines, 0), cell.text, new)]
    return {"title": f"compile-lint: fix all safe ({outcome.applied})", "kind": FIX_ALL_KIND, "edit": {"changes": changes}}


def _replace_changed(codec, place: Place, old: str, new: str) -> dict:
    """One edit replacing the part of `old` that differs from `new`."""
    start, end_old, end_new = changed_span(old, new)
    return {"range": {"start": _at(codec, place, old, start), "end": _at(codec, place, old, end_old)}, "newText": new[start:end_new]}


def _at(codec, place: Place, text: str, offset: int) -> dict:
    row = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return lsp_position(codec, place, row, column) if row - 1 < len(place.lines) else {"line": row - 1, "character": 0}
