#!/usr/bin/env python3
"""Digests of the per-file region summaries and of the project's regions, for one
checkout, so two checkouts can be shown to produce the same summaries.

    PYTHONHASHSEED=0 python bench/summary_digests.py CHECKOUT DIR OUT.json [--limit N]
    python bench/summary_digests.py --compare A.json B.json

Per file: the sha1 of `pickle.dumps(summary)` ("pickle") and of a canonical form
that does not depend on how pickle spells objects ("canon": dataclasses, named tuples
and plain objects as (class name, fields), sets sorted). Then the same two digests
of `ProjectIndex(all summaries).regions()` and of `resolved_sites()`. The canonical
digest is the one to compare when a change of pickle spelling (`__reduce__`) is
intended; the pickle digest otherwise. CPU seconds of summarize and of the index are
printed too (process time).
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import pickle
import sys
import time

from parsed_files import parsed_files  # (this folder, on sys.path as the script's)


def canon(obj, _seen=None):
    """A plain, order-stable structure equal for equal summaries."""
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return obj
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # named tuple
        return (type(obj).__name__,) + tuple(canon(v) for v in obj)
    if isinstance(obj, (tuple, list)):
        return (type(obj).__name__, tuple(canon(v) for v in obj))
    if isinstance(obj, (set, frozenset)):
        return ("set", tuple(sorted((canon(v) for v in obj), key=repr)))
    if isinstance(obj, dict):
        return ("dict", tuple((canon(k), canon(v)) for k, v in obj.items()))
    if dataclasses.is_dataclass(obj):
        return (type(obj).__name__, tuple((f.name, canon(getattr(obj, f.name))) for f in dataclasses.fields(obj)))
    if hasattr(obj, "__slots__") and not hasattr(obj, "__dict__"):
        return (type(obj).__name__, tuple((s, canon(getattr(obj, s, None))) for s in obj.__slots__))
    if hasattr(obj, "__dict__"):
        return (type(obj).__name__, tuple((k, canon(v)) for k, v in sorted(vars(obj).items())))
    return ("repr", repr(obj))


def sha(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def digests(obj) -> dict:
    return {"pickle": sha(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)), "canon": sha(repr(canon(obj)).encode())}


def collect(checkout: str, folder: str, limit) -> dict:
    sys.path.insert(0, checkout)
    from compile_lint.analysis.semantic.names import NameTable
    from compile_lint.analysis.reach.regions import ProjectIndex, summarize
    from compile_lint.analysis.semantic.walk import walk_with_parents
    from compile_lint.config import Settings

    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".py"))[:limit]
    settings = Settings(root=folder)
    out: dict = {"files": {}}
    summaries = []
    spent = 0.0
    for path, _source, tree, module, is_package in parsed_files(files):
        nodes, _parents = walk_with_parents(tree)
        names = NameTable.build(tree, module, is_package, nodes)
        t = time.process_time()
        summary = summarize(tree, names, path, settings.compile_wrappers, settings.trace_wrappers)
        spent += time.process_time() - t
        summaries.append(summary)
        out["files"][os.path.relpath(path, folder)] = digests(summary)
    t = time.process_time()
    index = ProjectIndex(summaries)
    regions = index.regions()
    index_cpu = time.process_time() - t
    out["regions"] = digests(regions)
    out["resolved"] = digests([(s, [e[0] for e in entries], why) for s, entries, why in index.resolved_sites()])
    out["cpu"] = {"summarize": round(spent, 2), "index": round(index_cpu, 2)}
    print(f"{checkout}: {len(summaries)} files, summarize {spent:.2f} s CPU, index {index_cpu:.2f} s CPU, {len(regions)} region defs", file=sys.stderr)
    return out


def compare(a: dict, b: dict, kind: str) -> int:
    bad = 0
    for name in sorted(set(a["files"]) | set(b["files"])):
        da, db = a["files"].get(name), b["files"].get(name)
        if da is None or db is None or da[kind] != db[kind]:
            bad += 1
            if bad <= 20:
                print("differs:", name)
    for key in ("regions", "resolved"):
        if a[key][kind] != b[key][kind]:
            bad += 1
            print("differs:", key)
    print(f"{kind}: {len(a['files'])} vs {len(b['files'])} files, {bad} differ")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("args", nargs="+")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--compare", action="store_true")
    ap.add_argument("--kind", default="canon", choices=("canon", "pickle"))
    ns = ap.parse_args()
    if ns.compare:
        a, b = (json.load(open(p)) for p in ns.args[:2])
        return 1 if compare(a, b, ns.kind) else 0
    if os.environ.get("PYTHONHASHSEED") != "0":  # set iteration order must not vary between runs
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    checkout, folder, out_path = ns.args
    result = collect(os.path.abspath(checkout), folder, ns.limit)
    with open(out_path, "w") as fh:
        json.dump(result, fh, indent=0, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
