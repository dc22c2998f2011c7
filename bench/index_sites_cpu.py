"""CPU seconds of each compile/trace site's resolution in the serial region index.

    python bench/index_sites_cpu.py DIR [--top N]

Runs `compile-lint check --no-cache -j 2 --config bench/judged/lint.toml DIR` in this
process (the parent builds the whole-run index; the workers lint) and times, in process
CPU, `ProjectIndex.resolve_site` for every site of the largest index built and the
index's steps (they nest: `regions` holds `_all_resolved` and `_mark`, which asks
`_entry_defs`). Answers are shared between sites (the Resolver's tabling): the site
asked first pays for what later sites find answered, so a site's seconds say where the
index's work starts, not what that site alone would cost.

The code measured is this checkout's (in_process.py).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

from in_process import run_check  # (this folder, on sys.path as the script's)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--top", type=int, default=10, help="the N sites that cost most")
    args = ap.parse_args(argv)

    from compile_lint.analysis.reach.regions import ProjectIndex

    sites: list = []  # (CPU s, index size, path, row, api)
    steps: dict = defaultdict(lambda: [0.0, 0])  # step -> [CPU s, index size] of the largest index
    busy: dict = defaultdict(bool)  # step -> inside a call of it

    resolve_site = ProjectIndex.resolve_site

    def timed_site(self, site, summary):
        started = time.process_time()
        try:
            return resolve_site(self, site, summary)
        finally:
            sites.append((time.process_time() - started, len(self.summaries), summary.path if summary else "?",
                          site.row, site.api))

    def timed_step(name):
        step = getattr(ProjectIndex, name)

        def run(self, *a, **kw):
            if busy[name]:  # a recursive call: counted in the outermost one
                return step(self, *a, **kw)
            busy[name] = True
            started = time.process_time()
            try:
                return step(self, *a, **kw)
            finally:
                busy[name] = False
                spent, size = time.process_time() - started, len(self.summaries)
                if size > steps[name][1]:
                    steps[name] = [0.0, size]
                if size == steps[name][1]:
                    steps[name][0] += spent
        return run

    ProjectIndex.resolve_site = timed_site
    for name in ("regions", "_all_resolved", "_mark", "_entry_defs", "decorated_by"):
        setattr(ProjectIndex, name, timed_step(name))
    run_check(args.folder, 2)
    largest = max((size for _, size, *_ in sites), default=0)
    mine = sorted((s for s in sites if s[1] == largest), reverse=True)
    print(f"index of {largest} files; {len(mine)} sites; their resolution {sum(s[0] for s in mine):.2f} CPU s")
    print("\n| step | CPU s |\n|---|---:|")
    for name, (spent, _size) in sorted(steps.items(), key=lambda kv: -kv[1][0]):
        print(f"| {name} | {spent:.2f} |")
    print("\n| site | API | CPU s |\n|---|---|---:|")
    for spent, _size, path, row, api in mine[: args.top]:
        print(f"| {os.path.relpath(path, args.folder)}:{row} | {api} | {spent:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
