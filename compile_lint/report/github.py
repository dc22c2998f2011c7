"""GitHub Actions workflow commands: findings show up as annotations on the PR."""
from __future__ import annotations

from . import display_path, location


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render_github(findings, *, cwd) -> str:
    out = []
    for f in findings:
        path = display_path(f.path, cwd)
        if getattr(f, "cell", None) is not None:  # the line of the .ipynb file
            place = f"line={f.file_row}"
        else:
            place = f"line={f.start.row},col={f.start.column},endLine={f.end.row},endColumn={f.end.column}"
        out.append(
            f"::error title={_escape_prop(f'compile-lint ({f.code})')},file={_escape_prop(path)},{place}::"
            f"{_escape_data(f'{location(f, cwd)}: {f.code} {f.message}')}"
        )
    return "".join(line + "\n" for line in out)
