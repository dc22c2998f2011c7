"""Ruff-compatible JSON: tools that read `ruff check --output-format json` read this."""
from __future__ import annotations

import json
import os

from ..model import DOC_URL
from . import graph_break_dict


def finding_dict(f, cwd: str) -> dict:
    fix = None
    if f.fix is not None:
        fix = {
            "applicability": f.fix.applicability,
            "message": f.fix.message,
            "edits": [
                {
                    "content": e.content,
                    "location": {"row": e.location.row, "column": e.location.column},
                    "end_location": {"row": e.end_location.row, "column": e.end_location.column},
                }
                for e in (f.fix.edits or [])
            ],
        }
    return {
        "cell": getattr(f, "cell", None),
        "code": f.code,
        "end_location": {"row": f.end.row, "column": f.end.column},
        "filename": _filename(f.path, cwd),
        "fix": fix,
        "location": {"row": f.start.row, "column": f.start.column},
        "message": f.message,
        "noqa_row": f.start.row,
        "url": DOC_URL.format(code=f.code),
        # not in Ruff's format: other places that explain the finding (where it is compiled)
        "related": [
            {
                "filename": _filename(r.path, cwd),
                "location": {"row": r.row, "column": r.column},
                "message": r.message,
                **({"cell": r.cell} if getattr(r, "cell", None) is not None else {}),  # in a notebook
            }
            for r in f.related
        ],
        # not in Ruff's format: a graph-break finding's official Dynamo ID and texts
        **({"graph_break": graph_break_dict(f.graph_break)} if getattr(f, "graph_break", None) else {}),
    }


def _filename(path: str, cwd: str) -> str:
    return path if path == "-" or os.path.isabs(path) else os.path.join(cwd, path)


def render_json(findings, *, cwd, lines=False) -> str:
    items = [finding_dict(f, cwd) for f in findings]
    if lines:
        return "".join(json.dumps(i) + "\n" for i in items)
    return json.dumps(items, indent=2) + "\n"
