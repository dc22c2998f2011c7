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


def main(argv=None) -> int:
    from compile_lint.analysis.context as project import project as project_mod
    from compile_lint.analysis.semantic.facts import ModuleFacts
    from compile_lint.analysis.semantic.names import NameTable, module_name_for
    from compile_lint.config import Settings
    from compile_lint.rules import all_rules
    from compile_lint.source import ParseFailure, SourceFile

    folder = (argv or sys.argv[1:])[0]
    parsed = [0]
    original = project_mod.Sources.parsed

    def counted(self, path):
        parsed[0] += 1
        return original(self, path)

    project_mod.Sources.parsed = counted
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".py"))
    rules = [all_rules()[code] for code in ("CL401", "CL402")]
    settings = Settings(root=folder)
    cpu = 0.0
    for path in files:
        with open(path, "rb") as fh:
            source = SourceFile(path, fh.read())
        try:
            tree = source.parse()
        except ParseFailure:
            continue
        module, is_package = module_name_for(path)
        facts = ModuleFacts(source, tree, NameTable.build(tree, module, is_package), {}, settings)
        start = time.process_time()
        for rule in rules:
            list(rule.check(facts))
        cpu += time.process_time() - start
    print(f"{len(files)} files: CL401+CL402 CPU {cpu:.2f} s, other files parsed {parsed[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
