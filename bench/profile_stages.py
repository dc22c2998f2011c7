#!/usr/bin/env python3
"""Where compile-lint's time goes, per pipeline stage and per rule, in one process.

    python bench/profile_stages.py DIR [--limit N] [--cprofile OUT.prof]

Times read, ast.parse, the node walk, the name table, the summary, pass 1's
single-file region index and every rule's check() over the .py files under DIR
(cold: no cache, no workers), and prints a table sorted by time.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--limit", type=int, default=0, help="only the first N files")
    ap.add_argument("--cprofile", help="also write a cProfile of the whole loop here")
    args = ap.parse_args(argv)

    from compile_lint.analysis.semantic.facts import ModuleFacts
    from compile_lint.analysis.semantic.names import NameTable, module_name_for
    from compile_lint.analysis.reach.regions import ProjectIndex, summarize
    from compile_lint.analysis.semantic.walk import walk_with_parents
    from compile_lint.config import Settings
    from compile_lint.rules import all_rules
    from compile_lint.source import ParseFailure, SourceFile
    from compile_lint.suppression import filter_suppressed

    files = sorted(
        os.path.join(d, f) for d, _, fs in os.walk(args.folder) for f in fs if f.endswith(".py")
    )
    if args.limit:
        files = files[: args.limit]
    rules = all_rules()
    settings = Settings(root=args.folder)
    spent: dict[str, float] = defaultdict(float)
    clock = time.perf_counter

    def loop():
        for path in files:
            t = clock()
            with open(path, "rb") as fh:
                data = fh.read()
            source = SourceFile(path, data)
            spent["read"] += clock() - t
            t = clock()
            try:
                tree = source.parse()
            except ParseFailure:
                spent["parse"] += clock() - t
                continue
            spent["parse (ast)"] += clock() - t
            t = clock()
            nodes, parents = walk_with_parents(tree)
            spent["walk"] += clock() - t
            t = clock()
            module, is_package = module_name_for(path)
            names = NameTable.build(tree, module, is_package, nodes)
            spent["names"] += clock() - t
            t = clock()
            summary = summarize(tree, names, path)
            spent["summary"] += clock() - t
            t = clock()
            regions = ProjectIndex([summary]).regions()
            facts = ModuleFacts(source, tree, names, regions, settings, nodes, parents)
            spent["facts + local index"] += clock() - t
            findings = []
            for code, rule in rules.items():
                t = clock()
                if not rule.requires or any(tok in data for tok in rule.requires):
                    findings.extend(rule.check(facts))
                spent[f"rule {code}"] += clock() - t
            t = clock()
            filter_suppressed(findings, source)
            spent["noqa"] += clock() - t

    start = clock()
    if args.cprofile:
        import cProfile

        cProfile.runctx("loop()", globals(), locals(), args.cprofile)
    else:
        loop()
    total = clock() - start
    print(f"{len(files)} files, {total:.1f} s in one process\n")
    print("| stage | s | % |\n|---|---:|---:|")
    for name, secs in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {secs:.2f} | {100 * secs / total:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
