"""Units of `compile-lint record` that need no torch: merging partial files, and verify's
inputs taken from a recording."""
import json
import random

from compile_lint.record.merge import merge_sites, write_recording
from compile_lint.verify.config import TargetSpec
from compile_lint.verify.recorded_inputs import use_recorded_inputs


def site(qualname, shapes=(), calls=(), graphs=0, mode=None, code=()):
    return {
        "target": {"path": "m.py", "qualname": qualname, "row": 3, "kind": "class"},
        "kind": "compiled", "api": "torch.compile", "options": {"mode": mode},
        "calls": [{"path": "t.py", "row": r} for r in calls],
        "seen": {"inputs": [[{"shape": list(s), "dtype": "float32"}] for s in shapes], "graphs": graphs,
                 "recompiles": 0, "graph_breaks": 0, "graph_break_reasons": [],
                 "code": [{"path": "m.py", "qualname": q, "row": 1} for q in code]},
    }


def test_merge_is_order_independent_and_bounded():
    groups = [
        [site("B", shapes=[(1, 8)], calls=[5], graphs=1)],
        [site("A", shapes=[(1, 4), (1, 2)], calls=[9, 2], graphs=2, code=["f"])],
        [site("A", shapes=[(1, 2), (1, 6)], calls=[2], graphs=1, code=["g", "f"]), site("A", mode="reduce-overhead")],
    ]
    merged = merge_sites(groups)
    for _ in range(5):
        shuffled = [list(g) for g in groups]
        random.shuffle(shuffled)
        assert merge_sites(shuffled) == merged
    assert [(s["target"]["qualname"], s["options"].get("mode")) for s in merged] == [("A", "reduce-overhead"), ("A", None), ("B", None)]
    a = merged[1]
    assert [c["row"] for c in a["calls"]] == [2, 9]
    assert [i[0]["shape"] for i in a["seen"]["inputs"]] == [[1, 2], [1, 4], [1, 6]]
    assert a["seen"]["graphs"] == 2  # the largest any process saw, not the sum
    assert [c["qualname"] for c in a["seen"]["code"]] == ["f", "g"]
    assert len(merge_sites(groups, max_shapes=2)[1]["seen"]["inputs"]) == 2


def test_written_file_is_stable(tmp_path):
    out = tmp_path / "compile-lint-regions.json"
    write_recording(str(out), [[site("A", shapes=[(1, 3, 8, 8)])]], fresh=True)
    first = out.read_bytes()
    write_recording(str(out), [], fresh=False)
    assert out.read_bytes() == first
    assert b'"shape": [1, 3, 8, 8]' in first  # shapes on one line: reviewable diffs


def test_verify_takes_recorded_inputs(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "m.py").write_text("class A: pass\nclass B: pass\n")
    data = {"version": 1, "sites": [site("A", shapes=[(2, 3, 16, 16), (1, 3, 8, 8)])]}
    (tmp_path / "compile-lint-regions.json").write_text(json.dumps(data))
    specs = [TargetSpec(ref="m.py:A", qualname="A", file=str(tmp_path / "m.py")),
             TargetSpec(ref="m.py:B", qualname="B", file=str(tmp_path / "m.py"))]
    use_recorded_inputs(specs)
    assert [(i.shape, i.dtype) for i in specs[0].inputs] == [([2, 3, 16, 16], "float32")]  # the first the file lists
    assert specs[1].inputs is None  # not recorded: synthesised as before


def test_recorded_command_dies_with_compile_lint(tmp_path):
    """SIGKILL to `compile-lint record` (a CI timeout, the OOM killer) ends the command too."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import ROOT

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    pid_file = tmp_path / "pid"
    script = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(120)"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    record = subprocess.Popen([sys.executable, "-m", "compile_lint", "record", "--", sys.executable, "-c", script],
                              cwd=str(tmp_path), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        child = int(pid_file.read_text())
        record.send_signal(signal.SIGKILL)
        record.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            os.kill(child, signal.SIGKILL)
            raise AssertionError("the recorded command outlived compile-lint record")
    finally:
        if record.poll() is None:
            record.kill()


def test_breaks_merge_as_a_union_and_mark_findings(tmp_path):
    """Graph breaks (ID, user line) from several processes: a union, sorted; `check` then
    reads them per region (declared.recorded_breaks)."""
    from compile_lint.analysis.reach.declared import read_recorded, recorded_breaks

    one, two = site("A"), site("A")
    one["seen"]["breaks"] = [{"id": "GB0124", "gb_type": "item", "path": "m.py", "row": 7, "frame_to_eager": False}]
    two["seen"]["breaks"] = [{"id": "GB0170", "gb_type": "branch", "path": "m.py", "row": 4, "frame_to_eager": True},
                             dict(one["seen"]["breaks"][0])]
    [merged] = merge_sites([[one], [two]])
    assert [(b["row"], b["id"]) for b in merged["seen"]["breaks"]] == [(4, "GB0170"), (7, "GB0124")]
    out = tmp_path / "compile-lint-regions.json"
    write_recording(str(out), [[one], [two]], fresh=True)
    [region] = read_recorded(str(out))
    assert region.recording.breaks == (("m.py", 4, "GB0170", True), ("m.py", 7, "GB0124", False))

    from dataclasses import replace

    # as `check` holds it: paths made absolute (declared._rebase)
    rec = replace(region.recording, breaks=tuple((str(tmp_path / p), r, g, e) for p, r, g, e in region.recording.breaks),
                  code=((str(tmp_path / "m.py"), "f"),))

    class Site:
        recording = rec

    class Region:
        sites = (Site,)

    path = str(tmp_path / "m.py")
    assert recorded_breaks(Region, path, range(7, 8), "g") == "confirmed GB0124"
    assert recorded_breaks(Region, path, range(5, 6), "f") == "compiled"
    assert recorded_breaks(Region, path, range(5, 6), "h") == "not reached"

    class Old:
        recording = replace(rec, breaks=None)  # a recording made before the break hooks

    class OldRegion:
        sites = (Old,)

    assert recorded_breaks(OldRegion, path, range(7, 8), "g") is None
