"""compile_lint/data/graph_break_ids.json (scripts/gen_graph_break_ids.py) against the
graph-break registry of the installed torch (2.13.0 through constraints.txt)."""
from __future__ import annotations

import json
import os
import sys
import zipfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(REPO, "compile_lint", "data", "graph_break_ids.json")
sys.path.insert(0, os.path.join(REPO, "scripts"))
import gen_graph_break_ids as gen  # noqa: E402


def table() -> dict:
    with open(TABLE, encoding="utf-8") as f:
        return json.load(f)


def record(data: dict, gbid: str, release: str):
    return next((r for r in data["ids"].get(gbid, []) if release in r["releases"]), None)


def test_table_is_well_formed():
    data = table()
    assert data["releases"] == ["2.13.0", "2.14.1", "2.15.0"]
    counts = {r: sum(1 for recs in data["ids"].values() if any(r in x["releases"] for x in recs)) for r in data["releases"]}
    assert counts == {"2.13.0": 517, "2.14.1": 561, "2.15.0": 592}
    for gbid, records in data["ids"].items():
        seen = [r for rec in records for r in rec["releases"]]
        assert len(seen) == len(set(seen)), gbid  # one record per ID and release
        for rec in records:
            assert rec["gb_type"] and all(0 <= i < len(data["hints"]) for i in rec["hints"])
    assert data["url"].format(number="0124") == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html"


def test_table_matches_the_installed_torch_registry():
    torch = pytest.importorskip("torch")
    release = torch.__version__.split("+")[0]
    data = table()
    if release not in data["releases"]:
        pytest.skip(f"torch {release} is not in the table")
    path = os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")
    with open(path, encoding="utf-8") as f:
        registry = json.load(f)
    assert {k for k in data["ids"] if record(data, k, release)} == set(registry)
    for gbid, items in registry.items():
        rec = record(data, gbid, release)
        assert rec["gb_type"] == items[0]["Gb_type"]
        assert rec["explanation"] == items[0]["Explanation"]
        assert [data["hints"][i] for i in rec["hints"]] == items[0]["Hints"]
        assert set(rec["old_gb_types"]) == {i["Gb_type"] for i in items[1:]} - {items[0]["Gb_type"]}


def test_generator_merges_releases_and_rejects_what_is_not_a_torch_wheel(tmp_path):
    def wheel(name, registry):
        path = tmp_path / name
        with zipfile.ZipFile(path, "w") as z:
            z.writestr(gen.REGISTRY, json.dumps(registry))
        return path

    same = {"Gb_type": "t", "Context": "c", "Explanation": "e", "Hints": ["h1", "h2"]}
    a = wheel("torch-2.13.0-cp312-none-any.whl", {"GB0001": [same]})
    b = wheel("torch-2.14.1-cp312-none-any.whl", {"GB0001": [same], "GB0002": [dict(same, Gb_type="new"), dict(same, Gb_type="old")]})
    out = tmp_path / "out.json"
    assert gen.main([str(a), str(b), "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["ids"]["GB0001"] == [{"explanation": "e", "gb_type": "t", "hints": [0, 1], "old_gb_types": [], "releases": ["2.13.0", "2.14.1"]}]
    assert data["ids"]["GB0002"][0]["old_gb_types"] == ["old"]
    assert gen.main([str(a), str(b), "-o", str(tmp_path / "again.json")]) == 0
    assert (tmp_path / "again.json").read_bytes() == out.read_bytes()
    bad = tmp_path / "numpy-2.0.0-cp312-none-any.whl"
    bad.write_bytes(b"")
    assert gen.main([str(bad), "-o", str(tmp_path / "x.json")]) == 2
