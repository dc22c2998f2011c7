"""SARIF 2.1.0, with a `rules` array so GitHub code scanning shows the rule pages."""
from __future__ import annotations

import json
import os

from .. import __version__
from ..rules import all_rules
from ..model import DOC_URL
from . import graph_break_dict

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str, cwd: str) -> str:
    """The artifact's URI: relative to the folder of the run (as code scanning wants),
    else a `file` URI; percent-encoded either way (RFC 3986: `my model.py` is
    `my%20model.py`, and `x:y.py` must not read as a URI of scheme `x`)."""
    from urllib.parse import quote

    if path == "-":
        return "stdin"
    rel = os.path.relpath(path, cwd) if os.path.isabs(path) else path
    if rel.startswith(".."):
        from pathlib import Path

        return Path(os.path.abspath(path)).as_uri()
    return quote(rel.replace(os.sep, "/"), safe="/")


def _related(index: int, rel, cwd: str) -> dict:
    region = {"startLine": getattr(rel, "file_row", rel.row)}  # a notebook: the .ipynb line
    if rel.column and getattr(rel, "cell", None) is None:
        region["startColumn"] = rel.column
    return {
        "id": index,
        "physicalLocation": {"artifactLocation": {"uri": _uri(rel.path, cwd)}, "region": region},
        "message": {"text": rel.message},
    }


def render_sarif(findings, *, cwd) -> str:
    rules = all_rules()
    used = sorted({f.code for f in findings} | set(rules))
    descriptors = []
    index = {}
    for code in used:
        rule = rules.get(code)
        index[code] = len(descriptors)
        page = rule.page() if rule else ""
        descriptors.append(
            {
                "id": code,
                "name": rule.name if rule else code,
                "shortDescription": {"text": rule.summary if rule else code},
                "fullDescription": {"text": page.split("## Why is this bad?")[0].replace("## What it does", "").strip() or code},
                "help": {"text": page, "markdown": page},
                "helpUri": DOC_URL.format(code=code),
                "properties": {"fix": rule.fix_safety if rule else "none"},
            }
        )
    results = []
    for f in findings:
        result = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": "error",
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(f.path, cwd)},
                        "region": _notebook_region(f) or {
                            "startLine": f.start.row,
                            "startColumn": f.start.column,
                            "endLine": f.end.row,
                            "endColumn": max(f.end.column, 1),
                        },
                    }
                }
            ],
        }
        if getattr(f, "cell", None) is not None:
            result["properties"] = {"cell": f.cell, "cellRow": f.start.row, "cellColumn": f.start.column}
        if getattr(f, "graph_break", None) is not None:
            result.setdefault("properties", {})["graphBreak"] = graph_break_dict(f.graph_break)
        if f.related:
            result["relatedLocations"] = [_related(i, r, cwd) for i, r in enumerate(f.related)]
        fixes = _fixes(f, cwd)
        if fixes:
            result["fixes"] = fixes
        results.append(result)
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "compile-lint",
                        "version": __version__,
                        "informationUri": "https://github.com/compile-lint/compile-lint",
                        "rules": descriptors,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"


def _fixes(f, cwd: str):
    """The finding's fix as SARIF replacements (its edits, as the JSON format has them);
    none for a notebook cell, whose edits are in the cell's rows, not the file's."""
    if f.fix is None or not f.fix.edits or getattr(f, "cell", None) is not None:
        return None
    replacements = [{
        "deletedRegion": {"startLine": e.location.row, "startColumn": e.location.column,
                          "endLine": e.end_location.row, "endColumn": e.end_location.column},
        "insertedContent": {"text": e.content},
    } for e in f.fix.edits]
    return [{
        "description": {"text": f"{f.fix.message} ({f.fix.applicability} fix)"},
        "artifactChanges": [{"artifactLocation": {"uri": _uri(f.path, cwd)}, "replacements": replacements}],
    }]


def _notebook_region(f):
    """For a finding in a notebook cell: the line of the .ipynb file that holds the
    code (columns there are the JSON string's, so none is given); the position in the
    cell goes in the result's properties."""
    if getattr(f, "cell", None) is None:
        return None
    return {"startLine": f.file_row}
