#!/usr/bin/env python3
"""CPU seconds per rule in pass 1 of a cold `check`, in one process, and the findings.

    python bench/rules_cpu.py DIR [--every N] [--findings OUT.txt] [--cprofile OUT.prof] [--rules CL201,CL401]

For every .py file under DIR (every N-th with --every): parse, walk, names, summarize
and the single-file index as the engine's pass 1 does (untimed), then each rule as
`lint_file.run_rules` runs it (its `requires` tokens, a fresh instance, its declared
facts), timed in process CPU. A fact is paid by the first rule that asks for it, so
the total is the number to compare; the per-rule rows say where it goes.
`--findings` writes every finding (path:row:col code message) so that two checkouts
can be compared; `--cprofile` profiles the rules only. Garbage collection runs as in a
pool worker (off, collected by hand between files, untimed).
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from parsed_files import parsed_files  # noqa: E402  (this folder, on sys.path as the script's)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--every", type=int, default=1, help="only every N-th file")
    ap.add_argument("--findings", help="write the findings here")
    ap.add_argument("--cprofile", help="write a cProfile of the rules here")
    ap.add_argument("--rules", help="only these codes, comma-separated (the facts they share are then theirs)")
    ap.add_argument("--whole-index", action="store_true",
                    help="the rules read the index of every file's summary, as pass 2 does (built first, untimed), "
                         "and run only on the files holding a def in a region")
    args = ap.parse_args(argv)

    from compile_lint.analysis.semantic.facts import ModuleFacts, declared_facts
    from compile_lint.analysis.semantic.names import NameTable
    from compile_lint.analysis.project.context import Sources
    from compile_lint.analysis.reach.regions import ProjectIndex, summarize
    from compile_lint.analysis.semantic.walk import walk_with_parents
    from compile_lint.config import Settings
    from compile_lint.lint_file import HandCollector, project_for
    from compile_lint.rules import all_rules

    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.folder) for f in fs if f.endswith(".py"))
    files = files[:: args.every]
    settings = Settings(root=args.folder)
    rules = all_rules()
    codes = sorted(args.rules.split(",")) if args.rules else sorted(rules)
    sources = Sources(snapshot=True)  # as a pool worker reads them (lint_file.init_worker): one state of the files
    cpu = time.process_time
    spent: dict[str, float] = defaultdict(float)
    out = []
    profiler = None
    if args.cprofile:
        import cProfile

        profiler = cProfile.Profile()
    collector = HandCollector()
    whole = None
    if args.whole_index:  # pass 2's view: summaries of every file, one index
        summaries = {}
        for path, _source, tree, module, is_package in parsed_files(files):
            names = NameTable.build(tree, module, is_package)
            summaries[path] = summarize(tree, names, path, settings.compile_wrappers, settings.trace_wrappers)
        whole = ProjectIndex(list(summaries.values())).regions()
        keys = set(whole)
        files = [p for p, summary in summaries.items()
                 if any(k == summary.module or k.startswith(summary.module + ".") for k in keys)]
    gc.disable()
    for path, source, tree, module, is_package in parsed_files(files):
        if collector.due():
            collector.collect()
        nodes, parents = walk_with_parents(tree)
        names = NameTable.build(tree, module, is_package, nodes)
        if whole is None:  # pass 1: the file's own summary and the regions it implies alone
            summary = summarize(tree, names, path, settings.compile_wrappers, settings.trace_wrappers)
            regions = ProjectIndex([summary]).regions()
        else:  # pass 2 (lint_file.run_rules): the whole index, and no summary of its own
            summary, regions = None, whole
        project = project_for(settings, regions, None, sources)
        facts = ModuleFacts(source, tree, names, nodes=nodes, parents=parents, project=project, summary=summary)
        data = source.data
        for code in codes:
            rule = rules[code]
            t = cpu()
            if profiler:
                profiler.enable()
            if not rule.requires or any(token in data for token in rule.requires):
                project.allowed = declared_facts(rule.needs)
                found = list(type(rule)().check(facts))
            else:
                found = []
            if profiler:
                profiler.disable()
            spent[code] += cpu() - t
            for f in found:
                out.append(f"{f.path}:{f.start.row}:{f.start.column}-{f.end.row}:{f.end.column} {f.code} {f.message} {f.fix!r} {f.related!r} {f.scope} {f.region_kind}")
        project.allowed = None
        facts.release()
    gc.enable()
    total = sum(spent.values())
    print(f"{len(files)} files; rules' CPU seconds in one process\n")
    print("| rule | CPU s | % |\n|---|---:|---:|")
    for code, secs in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"| {code} | {secs:.2f} | {100 * secs / total:.0f} |")
    print(f"| total | {total:.2f} | 100 |")
    if args.findings:
        with open(args.findings, "w") as fh:
            fh.write("\n".join(sorted(out)) + "\n")
    if profiler:
        profiler.dump_stats(args.cprofile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
