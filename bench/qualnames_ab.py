#!/usr/bin/env python3
"""Def qualnames two ways, on every .py file under the folders: `def_qualnames(tree)`
(a walk of the statements) against `def_qualnames_of_shape(by_type, parents)` (from the
walk a file's facts already hold, as ModuleFacts asks since 0c57472). Prints the files
read, how many give different names (each one listed), and each way's CPU seconds.

    python bench/qualnames_ab.py DIR [DIR ...]
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from parsed_files import parsed_files  # noqa: E402  (this folder, on sys.path as the script's)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    from compile_lint.analysis.reach.regions import def_qualnames, def_qualnames_of_shape
    from compile_lint.analysis.semantic.walk import walk_by_type

    paths = sorted(os.path.join(d, f) for folder in argv for d, _, fs in os.walk(folder) for f in fs if f.endswith(".py"))
    files = differ = 0
    by_statements = by_shape = 0.0
    for path, _source, tree, _module, _is_package in parsed_files(paths):
        _nodes, parents, by_type = walk_by_type(tree)
        started = time.process_time()
        expected = def_qualnames(tree)
        middle = time.process_time()
        got = def_qualnames_of_shape(by_type, parents)
        by_statements += middle - started
        by_shape += time.process_time() - middle
        files += 1
        if got != expected:
            differ += 1
            print(f"differs: {path}: {sorted(set(expected.values()) ^ set(got.values()))}")
    print(f"{files} files, {differ} differ; CPU s: def_qualnames {by_statements:.2f}, "
          f"def_qualnames_of_shape {by_shape:.2f}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
