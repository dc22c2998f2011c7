#!/usr/bin/env python3
"""Generate ``compile_lint/data/graph_break_ids.json`` from torch releases' graph-break registry.

Dynamo names every graph break by an official ID (``GB0124``) listed in the registry each
torch wheel ships, ``torch/_dynamo/graph_break_registry.json``: ID -> a list of entries
with ``Gb_type`` (the break's first message line), ``Context`` (a developer format
string), ``Explanation`` and ``Hints``. When a break is renamed the ID keeps its older
``Gb_type`` strings as further entries (torch maps all of them to the ID). A finding
message and a ``compile-lint rule`` page need the ID, its ``Gb_type``, explanation, hints
and the page Dynamo links; this table keeps only those, per release:

    {"generated_by": ..., "url": "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb{number}.html",
     "releases": ["2.13.0", "2.14.1", "2.15.0"],
     "hints": [every distinct hint string, sorted],
     "ids": {"GB0124": [{"releases": [...], "gb_type": "...", "explanation": "...",
                         "hints": [indexes into "hints"], "old_gb_types": [...]}]}}

An ID whose entry is the same in several releases is stored once with those releases;
``{number}`` in the URL is the ID's digits (``GB0124`` -> ``gb0124.html``), the link
torch's ``get_gbid_documentation_link`` prints under each break. ``Context`` is left out
(placeholders for Dynamo's developers).

The wheels are only read, never installed. The small macOS ones serve (any platform has
the same registry):

    mkdir -p /tmp/whl && cd /tmp/whl
    for v in 2.13.0 2.14.1 2.15.0; do
      PIP_CONSTRAINT=/dev/null pip download --no-deps --only-binary=:all: \\
        --platform macosx_14_0_arm64 --python-version 3.12 torch==$v
    done
    python scripts/gen_graph_break_ids.py /tmp/whl/torch-*.whl

Standard library only. The output is sorted, one hint and one ID a line, so that the same
wheels give a byte-identical file; pass every release the table should hold.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import zipfile
from pathlib import Path

REGISTRY = "torch/_dynamo/graph_break_registry.json"
URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb{number}.html"
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO_ROOT / "compile_lint" / "data" / "graph_break_ids.json"
WHEEL_RE = re.compile(r"^torch-(\d+\.\d+\.\d+)[-+]")


def read_wheel(path: Path) -> tuple[str, dict]:
    match = WHEEL_RE.match(path.name)
    if not match:
        raise ValueError(f"{path.name}: not a torch wheel name (torch-X.Y.Z-...whl)")
    with zipfile.ZipFile(path) as z:
        try:
            registry = json.loads(z.read(REGISTRY))
        except KeyError:
            raise ValueError(f"{path.name}: has no {REGISTRY}") from None
    return match.group(1), registry


def build(registries: dict[str, dict]) -> dict:
    releases = sorted(registries, key=lambda v: tuple(int(p) for p in v.split(".")))
    hints = sorted({h for reg in registries.values() for items in reg.values() for item in items[:1] for h in item["Hints"]})
    index = {h: i for i, h in enumerate(hints)}
    ids: dict[str, list] = {}
    for release in releases:
        for gbid, items in registries[release].items():
            first = items[0]
            record = {
                "gb_type": first["Gb_type"],
                "explanation": first["Explanation"],
                "hints": [index[h] for h in first["Hints"]],
                "old_gb_types": sorted({i["Gb_type"] for i in items[1:]} - {first["Gb_type"]}),
            }
            records = ids.setdefault(gbid, [])
            for known in records:
                if {k: v for k, v in known.items() if k != "releases"} == record:
                    known["releases"].append(release)
                    break
            else:
                records.append(dict(record, releases=[release]))
    return {
        "generated_by": "scripts/gen_graph_break_ids.py",
        "source": REGISTRY,
        "url": URL,
        "releases": releases,
        "hints": hints,
        "ids": {k: [dict(sorted(r.items())) for r in ids[k]] for k in sorted(ids)},
    }


def dump(table: dict) -> str:
    """JSON with one hint and one ID a line: small, and a new release reads as a diff."""
    def one(value) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    head = ",\n".join(f" {one(k)}:{one(v)}" for k, v in table.items() if k not in ("hints", "ids"))
    hints = ",\n".join("  " + one(h) for h in table["hints"])
    ids = ",\n".join(f"  {one(k)}:{one(v)}" for k, v in table["ids"].items())
    return "{\n" + head + ',\n "hints":[\n' + hints + '\n ],\n "ids":{\n' + ids + "\n }\n}\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Generate the graph-break ID table from torch wheels.")
    parser.add_argument("wheels", nargs="+", type=Path, help="torch wheels (any platform)")
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    ns = parser.parse_args(argv)
    registries = {}
    for wheel in ns.wheels:
        try:
            release, registry = read_wheel(wheel)
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            print(f"gen_graph_break_ids: {exc}", file=sys.stderr)
            return 2
        registries[release] = registry
    table = build(registries)
    text = dump(table)
    ns.output.write_text(text, encoding="utf-8")
    counts = ", ".join(f"{r}: {len(registries[r])} IDs" for r in table["releases"])
    print(f"{ns.output}: {counts}; {len(table['ids'])} IDs, {len(table['hints'])} hints, {len(text.encode())} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
