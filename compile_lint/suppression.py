"""`# noqa` comments.

- `x = 1  # noqa` suppresses every finding reported on that line;
  `# noqa: CL501, CL506` only those codes (a family prefix such as `CL5` works too).
- a comment line `# compile-lint: noqa` (anywhere, usually at the top) suppresses the
  whole file; `# compile-lint: noqa: CL5` only those codes.
Codes of other tools (`# noqa: E501`) do not suppress compile-lint findings.
Suppressed findings are neither reported nor fixed.
"""
from __future__ import annotations

import re
from typing import Iterable, Optional

from .model import Finding
from .source import SourceFile

_LINE = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)
_FILE = re.compile(
    rb"^[ \t]*#\s*compile-lint:\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[ \t,]+[A-Za-z]+[0-9]+)*))?[ \t]*\r?$",
    re.IGNORECASE | re.MULTILINE,
)
ALL = None  # "every code"


def _codes(text: Optional[str]):
    if not text:
        return ALL
    return tuple(c.upper() for c in re.split(r"[\s,]+", text.strip()) if c)


def _matches(code: str, codes) -> bool:
    return codes is ALL or any(code.startswith(c) for c in codes)


def file_directives(source: SourceFile) -> list:
    if b"compile-lint:" not in source.data:
        return []
    return [_codes(m.group("codes").decode() if m.group("codes") else None) for m in _FILE.finditer(source.data)]


def line_codes(line: str):
    """Codes a line's `# noqa` names: ALL, a tuple, or False when there is none."""
    if "noqa" not in line.lower():
        return False
    match = None
    for match in _LINE.finditer(line):
        pass  # the last one is the comment at the end of the line
    if match is None or "#" not in line[: match.start() + 1]:
        return False
    return _codes(match.group("codes"))


def filter_suppressed(findings: Iterable[Finding], source: SourceFile) -> list[Finding]:
    directives = file_directives(source)
    kept = []
    for finding in findings:
        if any(_matches(finding.code, codes) for codes in directives):
            continue
        codes = line_codes(source.text_line(finding.start.row))
        if codes is not False and _matches(finding.code, codes):
            continue
        kept.append(finding)
    return kept


def noqa_line(line: str, code: str) -> Optional[str]:
    """The line with `code` added to its `# noqa` comment (or one added); None when
    the line's noqa already covers it."""
    codes = line_codes(line)
    if codes is None:
        return None  # a bare `# noqa` silences everything already
    if codes is not False:
        if any(code.startswith(c) for c in codes):
            return None
        matches = list(re.finditer(r"#\s*noqa:\s*[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*", line, re.IGNORECASE))
        if matches:
            last = matches[-1]
            return line[:last.end()] + f", {code}" + line[last.end():]
    return line.rstrip() + f"  # noqa: {code}"
