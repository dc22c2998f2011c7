"""Output formats. Each module renders a list of findings to text."""
from __future__ import annotations

FORMATS = ("text", "concise", "json", "json-lines", "sarif", "github")


def render(fmt: str, findings, *, cwd: str, summary=None, color: bool = False, quiet: bool = False,
           fixes: str = None) -> str:
    """The report. `quiet`: the findings only (no summary line); `fixes`: the text of
    --show-fixes, put before the summary (text formats)."""
    if any(f.path.endswith(".ipynb") for f in findings):
        from ..notebook import in_cells

        findings = in_cells(findings)  # rows relative to the cell, `cell` set
    if fmt == "text":
        from .text import render_text

        return render_text(findings, cwd=cwd, summary=summary, color=color, quiet=quiet, fixes=fixes)
    if fmt == "concise":
        from .text import render_concise

        return render_concise(findings, cwd=cwd, summary=summary, quiet=quiet, fixes=fixes)
    if fmt in ("json", "json-lines"):
        from .json import render_json

        return render_json(findings, cwd=cwd, lines=fmt == "json-lines")
    if fmt == "sarif":
        from .sarif import render_sarif

        return render_sarif(findings, cwd=cwd)
    if fmt == "github":
        from .github import render_github

        return render_github(findings, cwd=cwd)
    raise ValueError(fmt)


def display_path(path: str, cwd: str) -> str:
    import os

    if path == "-" or not os.path.isabs(path):
        return path
    rel = os.path.relpath(path, cwd)
    return path if rel.startswith("..") else rel


def location(f, cwd: str) -> str:
    """`path:row:col`, or `nb.ipynb:cell 3:row:col` for a finding in a notebook cell."""
    cell = getattr(f, "cell", None)
    where = f"cell {cell}:" if cell is not None else ""
    return f"{display_path(f.path, cwd)}:{where}{f.start.row}:{f.start.column}"


def related_location(rel, cwd: str) -> str:
    """`path:row[:col]` of a related place, with its cell in a notebook."""
    cell = getattr(rel, "cell", None)
    where = f"cell {cell}:" if cell is not None else ""
    return f"{display_path(rel.path, cwd)}:{where}{rel.row}" + (f":{rel.column}" if rel.column else "")


def graph_break_dict(info) -> dict:
    """A graph-break finding's ID and the registry's texts (JSON `graph_break`, SARIF
    `properties.graphBreak`)."""
    return {
        "id": info.gb_id,
        "gb_type": info.gb_type,
        "explanation": info.explanation,
        "hints": list(info.hints),
        "url": info.url,
        "torch": info.torch,
        "frame_to_eager": info.in_loop,  # the function Dynamo then runs eagerly (GB7000), or null
        "recorded": info.recorded,  # a recorded run: "confirmed GB0124", "compiled", "not reached", or null
    }
