#!/usr/bin/env python3
"""How much logic each rule module holds: the measure behind "a rule is its page plus a
short function" (issue 13: the largest rule's own logic <= 200 lines, all rules <= 2,500).

    python scripts/rule_sizes.py            # table, largest first, and the total
    python scripts/rule_sizes.py --check    # exit 1 when a limit is exceeded

Logic lines are the lines of a rule module that hold code, not counting: blank lines,
comment lines, docstrings, imports, and the rule's `valid`/`invalid` case lists (they are
its tests, carried beside it as in Fixit).
"""
from __future__ import annotations

import argparse
import ast
import os
import sys

RULES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compile_lint", "rules")
LARGEST_LIMIT = 200
TOTAL_LIMIT = 2500
CASE_LISTS = {"valid", "invalid", "VALID", "INVALID"}


def logic_lines(source: str) -> int:
    tree = ast.parse(source)
    excluded: set[int] = set()

    def exclude(node: ast.AST) -> None:
        excluded.update(range(node.lineno, node.end_lineno + 1))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                exclude(body[0])
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            exclude(node)
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):  # (`valid += [...]` too)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in CASE_LISTS for t in targets):
                exclude(node)
    count = 0
    for number, line in enumerate(source.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or number in excluded:
            continue
        count += 1
    return count


def sizes() -> list[tuple[str, int]]:
    rows = []
    for name in sorted(os.listdir(RULES)):
        # a rule is a module, or a package whose __init__ is the rule and whose other
        # modules are its private analysis (counted with analysis/, not the rule)
        path = os.path.join(RULES, name)
        if name.startswith("cl") and os.path.isdir(path):
            path = os.path.join(path, "__init__.py")
        elif not (name.startswith("cl") and name.endswith(".py")):
            continue
        with open(path, encoding="utf-8") as fh:
            rows.append((name, logic_lines(fh.read())))
    return sorted(rows, key=lambda row: -row[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a limit is exceeded")
    args = parser.parse_args()
    rows = sizes()
    for name, lines in rows:
        print(f"{lines:5d}  {name}")
    total = sum(lines for _, lines in rows)
    print(f"{total:5d}  total ({len(rows)} rules; limits: largest <= {LARGEST_LIMIT}, total <= {TOTAL_LIMIT})")
    over = rows and (rows[0][1] > LARGEST_LIMIT or total > TOTAL_LIMIT)
    return 1 if args.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
