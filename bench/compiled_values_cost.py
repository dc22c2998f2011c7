#!/usr/bin/env python3
"""CPU of the rules that ask compiled values first (CL401, CL402), and how many other
files they parse, over the .py files under DIR, one process, pass 1 (single-file regions).

    python bench/compiled_values_cost.py DIR

Every linted file gets its own project (as bench/profile_stages.py does), so an imported
module is parsed again for each file that looks a name up in it.
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from parsed_files import parsed_files  # noqa: E402  (this folder, on sys.path as the script's)


def main(argv=None) -> int:
    from compile_lint.analysis.project import context as project_mod
    from compile_lint.analysis.semantic.facts import ModuleFacts
    from compile_lint.analysis.semantic.names import NameTable
    from compile_lint.config import Settings
    from compile_lint.rules import all_rules

    folder = (argv or sys.argv[1:])[0]
    parsed = [0]
    original = project_mod.Sources._entry  # where another file is read and parsed, once per version

    def counted(self, path):
        key = self._stat(path)
        if key is not None and key not in self._parsed:
            parsed[0] += 1
        return original(self, path)

    project_mod.Sources._entry = counted
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".py"))
    rules = [all_rules()[code] for code in ("CL401", "CL402")]
    settings = Settings(root=folder)
    cpu = 0.0
    for path, source, tree, module, is_package in parsed_files(files):
        facts = ModuleFacts(source, tree, NameTable.build(tree, module, is_package), {}, settings)
        start = time.process_time()
        for rule in rules:
            list(rule.check(facts))
        cpu += time.process_time() - start
    print(f"{len(files)} files: CL401+CL402 CPU {cpu:.2f} s, other files parsed {parsed[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
