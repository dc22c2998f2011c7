"""Rule pages and the README's rules table, generated from the registry.

    python -m compile_lint.docs          # write docs/rules/*.md and the README table
    python -m compile_lint.docs --check  # exit 1 if they drifted (the tests run this)
"""
from __future__ import annotations

import os
import sys
import textwrap

from .rules import all_rules

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START, END = "<!-- rules-table:start -->", "<!-- rules-table:end -->"


def rule_page(rule) -> str:
    lines = [f"# {rule.code}: {rule.name}", "", f"{rule.summary}.", "", f"Family: {rule.family}. Fix: {rule.fix_safety}.", ""]
    page = rule.page().replace("## ", "### ")
    lines += [page, ""]
    if rule.invalid:
        lines += ["### Cases that fire", ""]
        for case in rule.invalid:
            lines += ["```python", textwrap.dedent(case.code).rstrip(), "```", ""]
            if case.fixed:
                lines += ["after `compile-lint fix`" + (" --unsafe-fixes" if rule.fix_safety == "unsafe" else "") + ":", "", "```python", textwrap.dedent(case.fixed).rstrip(), "```", ""]
    if rule.valid:
        lines += ["### Cases that stay quiet", ""]
        for case in rule.valid:
            note = f"  # {case.note}" if case.note else ""
            lines += ["```python", textwrap.dedent(case.code).rstrip() + ("\n" + note.strip() if note else ""), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def rules_table() -> str:
    rows = ["| Code | Name | What it finds | Fix |", "|---|---|---|---|"]
    for rule in all_rules().values():
        rows.append(f"| [{rule.code}](docs/rules/{rule.code}.md) | {rule.name} | {rule.summary} | {rule.fix_safety} |")
    return "\n".join(rows)


def expected_files() -> dict[str, str]:
    out = {os.path.join(ROOT, "docs", "rules", f"{code}.md"): rule_page(rule) for code, rule in all_rules().items()}
    readme = os.path.join(ROOT, "README.md")
    with open(readme, encoding="utf-8") as fh:
        text = fh.read()
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    out[readme] = f"{head}{START}\n{rules_table()}\n{END}{tail}"
    return out


def main(argv=None) -> int:
    check = "--check" in (argv if argv is not None else sys.argv[1:])
    drifted = []
    for path, content in expected_files().items():
        try:
            with open(path, encoding="utf-8") as fh:
                current = fh.read()
        except FileNotFoundError:
            current = None
        if current != content:
            drifted.append(os.path.relpath(path, ROOT))
            if not check:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(content)
    stale = [
        f for f in os.listdir(os.path.join(ROOT, "docs", "rules"))
        if f.endswith(".md") and f[:-3] not in all_rules()
    ] if os.path.isdir(os.path.join(ROOT, "docs", "rules")) else []
    for name in stale:
        drifted.append(f"docs/rules/{name} (no such rule)")
        if not check:
            os.remove(os.path.join(ROOT, "docs", "rules", name))
    if check and drifted:
        print("out of date (run `python -m compile_lint.docs`): " + ", ".join(drifted))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
