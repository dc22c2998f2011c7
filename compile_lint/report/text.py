from __future__ import annotations

from dataclasses import dataclass

from . import location, related_location


@dataclass
class Summary:
    safe_fixable: int = 0
    unsafe_fixable: int = 0
    fixed: int = 0
    files_with_errors: int = 0


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _count_line(findings, summary) -> str:
    s = summary or Summary()
    line = _findings_line(findings, s)
    if s.files_with_errors:  # never "All checks passed!" when a file was not checked
        errors = f"{_plural(s.files_with_errors, 'file')} could not be checked (see the errors on stderr)."
        line = (line if findings or s.fixed else "No findings in the files checked;") + " " + errors
    return line


def _findings_line(findings, s: Summary) -> str:
    n = len(findings)
    if n == 0:
        if s.files_with_errors and not s.fixed:
            return ""
        return "All checks passed!" if not s.fixed else f"Fixed {_plural(s.fixed, 'finding')}; none remain."
    # as Ruff counts: found = fixed + remaining
    parts = [f"Found {_plural(n + s.fixed, 'finding')}"]
    if s.fixed:
        parts[0] += f" ({s.fixed} fixed, {n} remaining)"
    extras = []
    if s.safe_fixable:
        extras.append(f"{s.safe_fixable} fixable with `compile-lint fix`")
    if s.unsafe_fixable:
        extras.append(f"{s.unsafe_fixable} more with `--unsafe-fixes`")
    line = parts[0] + (f" ({', '.join(extras)})" if extras else "") + "."
    return line


def render_concise(findings, *, cwd, summary=None, quiet=False, fixes=None) -> str:
    lines = [
        f"{location(f, cwd)}: {f.code} {f.message}" for f in findings
    ]
    if not quiet:
        if fixes:
            lines.append(fixes.rstrip("\n") + "\n")
        lines.append(_count_line(findings, summary))
    return "".join(line + "\n" for line in lines)


def render_statistics(findings, fmt: str, summary=None, quiet=False) -> str:
    """Ruff's --statistics: one line per rule, `count  code  [*] name` ([*]: fixable with
    `fix`, [-]: with `--unsafe-fixes`), most frequent first; JSON formats give a list."""
    from ..rules import all_rules

    rules = all_rules()
    rows: dict[str, list] = {}
    for f in findings:
        row = rows.setdefault(f.code, [0, False, False])
        row[0] += 1
        row[1] |= bool(f.fix and f.fix.applicability == "safe")
        row[2] |= bool(f.fix and f.fix.applicability == "unsafe")
    order = sorted(rows, key=lambda code: (-rows[code][0], code))
    name = lambda code: rules[code].name if code in rules else code  # noqa: E731
    if fmt in ("json", "json-lines", "sarif"):
        import json

        items = [{"code": c, "name": name(c), "count": rows[c][0], "fixable": rows[c][1] or rows[c][2],
                  "fix_applicability": "safe" if rows[c][1] else ("unsafe" if rows[c][2] else None)} for c in order]
        return json.dumps(items, indent=2) + "\n"
    width = max((len(str(rows[c][0])) for c in order), default=1)
    lines = [f"{rows[c][0]:>{width}}\t{c}\t{'[*] ' if rows[c][1] else '[-] ' if rows[c][2] else '[ ] '}{name(c)}" for c in order]
    if not quiet:
        lines.append(_count_line(findings, summary))
    return "".join(line + "\n" for line in lines)


def graph_break_lines(f, cyan=lambda s: s) -> list[str]:
    """A graph-break finding's ID, Dynamo's explanation and hints, and the page Dynamo
    links (torch's graph-break registry for the target release)."""
    info = getattr(f, "graph_break", None)
    if info is None:
        return []
    lines = [f"  = {cyan('note')}: {info.gb_id} {info.gb_type} (torch {info.torch})"
             + (f": {info.explanation}" if info.explanation else "")]
    lines += [f"  = {cyan('hint')}: {hint}" for hint in info.hints]
    lines.append(f"  = {cyan('see')}: {info.url}")
    return lines


def render_text(findings, *, cwd, summary=None, color=False, quiet=False, fixes=None) -> str:
    if findings:  # (a run with nothing to show has no source to read)
        from ..source import SourceFile

    bold = (lambda s: f"\x1b[1m{s}\x1b[0m") if color else (lambda s: s)
    red = (lambda s: f"\x1b[31m{s}\x1b[0m") if color else (lambda s: s)
    cyan = (lambda s: f"\x1b[36m{s}\x1b[0m") if color else (lambda s: s)
    sources: dict[str, SourceFile] = {}
    out = []
    for f in findings:
        out.append(f"{bold(location(f, cwd))}: {red(bold(f.code))} {f.message}")
        src = sources.get(f.path)
        if getattr(f, "cell", None) is not None:
            src = _cell_lines(f)
        elif src is None and f.path != "-":
            try:
                with open(f.path, "rb") as fh:
                    src = sources[f.path] = SourceFile(f.path, fh.read())
            except OSError:
                src = None
        if src is not None:
            line = shown_line(src.text_line(f.start.row))
            if line:
                gutter = " " * len(str(f.start.row))
                width = max(1, (f.end.column - f.start.column) if f.end.row == f.start.row else len(line) - f.start.column + 1)
                out.append(f"{gutter} |")
                out.append(f"{f.start.row} | {line}")
                out.append(f"{gutter} | {' ' * (f.start.column - 1)}{red('^' * width)}")
        for rel in f.related:
            where = related_location(rel, cwd)
            out.append(f"  = {cyan('note')}: {where}: {rel.message}")
        out.extend(graph_break_lines(f, cyan))
        if f.fix is not None:
            tag = "fix" if f.fix.applicability == "safe" else "unsafe fix"
            out.append(f"  = {cyan('help')}: {f.fix.message} ({tag})")
        out.append("")
    if quiet:
        return "\n".join(out) + ("\n" if out else "")
    if fixes:
        out.append(fixes.rstrip("\n") + "\n")
    out.append(_count_line(findings, summary))
    return "\n".join(out) + "\n"


_CONTROL = {c: "\ufffd" for c in [*range(0x00, 0x09), *range(0x0a, 0x20), *range(0x7f, 0xa0)]}


def shown_line(line: str) -> str:
    """A source line as the terminal may show it: tabs expanded, control characters
    (a binary file's bytes, an escape sequence in a string) each one U+FFFD, so that
    nothing read from a file reaches the terminal as a command and the caret stays under
    its column."""
    if "\t" in line:
        line = line.expandtabs(4)
    return line if line.isprintable() else line.translate(_CONTROL)


class _CellLine:
    """The one line of a notebook cell the text report shows under a finding."""

    def __init__(self, line: str):
        self.line = line

    def text_line(self, row: int) -> str:
        return self.line


def _cell_lines(f):
    from ..notebook import load

    nb = load(f.path)
    return _CellLine(nb.cell_line(f.module_start.row)) if nb is not None else None
