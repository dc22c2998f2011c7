#!/usr/bin/env python3
"""Score a compile-lint checkout on the repositories read in bench/fresh_reads/.

    APPS_TOML=bench/fresh_reads/apps.toml bench/apps/materialize.sh DEST [SNAPSHOTS]
    python bench/fresh_reads/score.py DEST                  # this checkout
    python bench/fresh_reads/score.py DEST --code CHECKOUT  # another one

Two scores, as bench/testset/score.py gives them: the sites of sites.toml (what each
compile, trace, script or export site resolves to, bench/region_resolution.py), and every
finding of `compile-lint check APP` (default selection) looked up in verdicts.jsonl by
(repository, path, code, source line text). A finding nobody judged is listed: judge it
by reading the code, and add it with the linter commit that first reported it.
Exit status: 0 when every finding is judged, 1 when some are not, 2 on errors.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SITES = os.path.join(HERE, "sites.toml")
VERDICTS = os.path.join(HERE, "verdicts.jsonl")


def load_verdicts() -> dict:
    """Verdicts keyed as judge_apps asks: the app folder (`owner__name`), path, code, line;
    also with the row, and with the column where a verdict gives one."""
    table = {}
    with open(VERDICTS, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                v = json.loads(line)
                key = (v["repo"].replace("/", "__", 1), v["path"], v["code"], v["line"])
                table[key] = v
                # the same line text judged apart: at two rows (a copy of a def), or two
                # findings of one rule on one line (by column); the apps are pinned commits
                if "row" in v:
                    table[key + ("row", v["row"])] = v
                if "column" in v:
                    table[key + (v["column"],)] = v
    return table


def _testset_score():
    """bench/testset/score.py's `score` (the same two scores, other labels)."""
    spec = importlib.util.spec_from_file_location("testset_score", os.path.join(ROOT, "bench", "testset", "score.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.score


def main(argv=None) -> int:
    return _testset_score()(argv, SITES, load_verdicts, "folder with one sub-folder per app of bench/fresh_reads/apps.toml",
                            __doc__.split("\n\n")[0])


if __name__ == "__main__":
    sys.exit(main())
