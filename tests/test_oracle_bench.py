"""The oracle bench (bench/oracle/) on its CI slice: tiny self-written modules with known
graph breaks, run under Dynamo by the same runner and scored by the same scorer as the
full bench, with this checkout's compile-lint. No model package is needed: the slice's
"venv" is the test interpreter (torch 2.13 CPU from the test extras)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.path.join(REPO, "bench", "oracle")
SLICE = os.path.join(ORACLE, "slice")
NETS = os.path.join(SLICE, "src", "oracle_slice", "nets.py")

sys.path.insert(0, ORACLE)
import score  # noqa: E402  (bench/oracle/score.py)

torch = pytest.importorskip("torch")

# entry -> (the break's marker in nets.py, the registry ID torch 2.13 gives it, kind)
EXPECTED = {
    "slice/Nonzero": ("nonzero", "GB0036", "break"),
    "slice/Item": ("item", "GB0124", "break"),
    "slice/Branch": ("branch", "GB0170", "break"),
    "slice/PrintInLoop": ("print in loop", "GB0059", "loop"),
    "slice/rescale": ("tolist", "GB0109", "break"),
    "slice/MakesGenerator": ("generator made", "GB0363", "break"),
    "slice/SeedsGenerator": ("generator method", "GB7650", "break"),
    "slice/DrawsWithGenerator": ("generator given", "GB0055", "break"),
    "slice/ListIndex": ("list index", "GB0124", "break"),
    "slice/RangeOfTensor": ("range", "GB0059", "break"),
    "slice/PadThroughCall": ("tuple parameter", "GB0170", "break"),
    "slice/MaskFromReturn": ("returned mask", "GB0036", "break"),
    "slice/CausalEncoder": ("causal mask", "GB0124", "break"),
    "slice/ResetsBuffer": ("buffer set", "GB4841", "break", ("eval", "train")),
    "slice/TakesLock": ("lock", "GB0142", "break"),
    "slice/HooksOnce": ("hook", "GB0467", "break"),
    "slice/SetsRequiresGrad": ("requires_grad", "GB0206", "break"),
    "slice/BuildsLayer": ("layer built", "GB0264", "break"),
    "slice/ConvertsLayer": ("layer converted", "GB0264", "break", ("eval:float16",)),
}


def all_markers() -> dict:
    """Every `# break: MARKER` line of the slice's modules: MARKER -> line."""
    with open(NETS, encoding="utf-8") as f:
        return {line.rsplit("# break: ", 1)[1].strip(): i for i, line in enumerate(f, 1) if "# break: " in line}


def marker_line(marker: str) -> int:
    with open(NETS, encoding="utf-8") as f:
        rows = [i for i, line in enumerate(f, 1) if line.rstrip().endswith(f"# break: {marker}")]
    assert len(rows) == 1, marker
    return rows[0]


def line_of(text: str) -> int:
    with open(NETS, encoding="utf-8") as f:
        rows = [i for i, line in enumerate(f, 1) if text in line]
    assert len(rows) == 1, text
    return rows[0]


@pytest.fixture(scope="module")
def slice_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("oracle")
    proc = subprocess.run(
        [sys.executable, os.path.join(ORACLE, "run.py"), "--models", os.path.join(SLICE, "models.py"),
         "--venv", sys.prefix, "--python", sys.executable, "--out", str(out), "--jobs", "2", "--timeout", "240"],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def load(out, name: str) -> dict:
    with open(os.path.join(out, "models", name.replace("/", "__") + ".json"), encoding="utf-8") as f:
        return json.load(f)


def test_each_break_is_recorded_with_its_id_line_and_kind(slice_run):
    for name, (marker, gb_id, kind, *only) in EXPECTED.items():
        result = load(slice_run, name)
        assert result["status"] == "ok" and result["complete"], result
        module = result["target"]["kind"] == "class"
        # the judge runs each entry in eval and in train mode, and in eval mode on float16;
        # a plain function has no mode
        assert [(p["pass"], p["status"]) for p in result["passes"]] == [
            ("eval", "ok"), ("train", "ok" if module else "no_mode"), ("eval:float16", "ok")]
        want = [(gb_id, kind, marker_line(marker), p)
                for p in (only[0] if only else ("eval", "train", "eval:float16") if module else ("eval", "eval:float16"))]
        # (PadThroughCall's `if` on 0-d int tensors is two data-dependent jumps on one line)
        assert sorted({(b["gb_id"], b["kind"], b["site"]["line"], b["pass"]) for b in result["breaks"]}) == sorted(want), name
        site = result["breaks"][0]["site"]
        assert site["file"] == os.path.realpath(NETS)
        assert marker_line(marker) in result["executed"][os.path.realpath(NETS)]


def test_a_break_only_training_takes_is_seen_in_the_train_pass(slice_run):
    result = load(slice_run, "slice/LayerDrop")
    assert [(b["gb_id"], b["site"]["line"], b["pass"]) for b in result["breaks"]] == [
        ("GB0170", marker_line("layerdrop"), "train")]
    eval_pass = next(p for p in result["passes"] if p["pass"] == "eval")
    assert eval_pass["breaks"] == [] and marker_line("layerdrop") in eval_pass["executed"][os.path.realpath(NETS)]


def test_the_compiled_run_gets_a_model_the_eager_run_did_not_touch(slice_run):
    # SwitchOnce warns and changes its own state on its first call (transformers'
    # big_bird): the line-tracing eager run must not take that call from the compiled run
    result = load(slice_run, "slice/SwitchOnce")
    assert {(b["gb_id"], b["site"]["line"]) for b in result["breaks"]} == {("GB0007", marker_line("first call"))}
    assert {b["pass"] for b in result["breaks"]} == {"eval", "train", "eval:float16"}


def test_a_break_only_float16_takes_is_seen_in_the_float16_pass(slice_run):
    result = load(slice_run, "slice/HalfClamp")
    assert [(b["gb_id"], b["site"]["line"], b["pass"]) for b in result["breaks"]] == [
        ("GB0170", marker_line("float16"), "eval:float16")]


def test_dynamo_counts_the_hooks_go_beyond(slice_run):
    for branch in load(slice_run, "slice/Branch")["passes"]:
        # a data-dependent `if`: counters["graph_break"] misses it, graph_break_reasons has it
        assert branch["dynamo"]["graph_break_counter"] == 0 and branch["dynamo"]["graph_break_reasons"] == 1
    loop = load(slice_run, "slice/PrintInLoop")
    assert loop["breaks"][0]["frame_to_eager"] is True
    assert loop["passes"][0]["dynamo"]["frames_total"] > loop["passes"][0]["dynamo"]["frames_ok"]
    assert loop["breaks"][0]["frame"]["name"].endswith("forward")
    assert loop["target"] == {"kind": "class", "file": os.path.realpath(NETS), "qualname": "PrintInLoop", "module": "oracle_slice.nets"}


def test_clean_module_has_no_break_and_its_lines_are_executed(slice_run):
    clean = load(slice_run, "slice/Clean")
    assert clean["breaks"] == [] and [p["dynamo"]["graphs"] for p in clean["passes"]] == [1, 1, 1]
    assert line_of("if y.shape[0] > 1:") in clean["executed"][os.path.realpath(NETS)]


def test_score_of_this_checkout_on_the_slice(slice_run):
    proc = subprocess.run(
        [sys.executable, os.path.join(ORACLE, "score.py"), "--results", str(slice_run), "--code", REPO],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    with open(os.path.join(slice_run, "score.json"), encoding="utf-8") as f:
        result = json.load(f)
    markers = all_markers()
    assert result["sites"] == len(markers)
    assert {(s["line"]) for s in result["site_list"]} == set(markers.values())
    assert {v[1] for v in EXPECTED.values()} | {"GB0007"} <= set(result["per_id"])
    # the train pass alone saw the LayerDrop break
    assert next(s for s in result["site_list"] if s["line"] == markers["layerdrop"])["passes"] == ["train"]
    assert result["per_id"]["GB7000 (frame to eager)"]["sites"] == 1
    declared = result["declared"]["slice"]
    assert "oracle_slice.nets:PrintInLoop" in declared and "oracle_slice.nets:rescale" in declared
    found = {s["line"]: s["found_by"] for s in result["site_list"]}
    # CL508 covers these constructs today; losing one is a regression
    for marker in [v[0] for v in EXPECTED.values()] + ["layerdrop", "first call", "float16"]:
        assert "CL508" in found[marker_line(marker)], marker
    # no finding may sit on the clean module's executed lines
    assert result["findings"]["false"] == 0
    assert result["recall"] == round(sum(1 for s in result["site_list"] if s["found_by"]) / len(markers), 3)
    assert "| GB0124 |" in proc.stdout


def test_statement_spans_cover_simple_statements_and_compound_headers():
    src = "def f(x):\n    y = g(\n        x)\n    if (x >\n            0):\n        return y\n"
    spans = score.statement_spans(src)
    assert spans[2] == spans[3] == (2, 3)
    assert spans[4] == spans[5] == (4, 5)
    assert spans[6] == (6, 6)
    assert spans[1] == (1, 1)


def test_judge_true_false_unknown_and_untraced_frames():
    site = score.Site("s", "m.py", 10, ids={"GB0124"}, gb_types={"item"}, models={"a"}, span=(10, 11))
    loop = score.Site("s", "m.py", 30, ids={"GB0059"}, models={"a"}, to_eager=True, span=(30, 30))
    facts = score.RunFacts(
        sites={("s", "m.py", 10): site, ("s", "m.py", 30): loop},
        executed={("s", "m.py"): {10, 11, 20, 30, 31}},
        untraced={("s", "m.py"): {29, 30, 31}},
        outside={}, targets={}, undeclarable=[], models=[],
    )
    findings = {"s": [
        ("m.py", 11, 11, "CL508", "on the statement's second line"),  # true (GB0124)
        ("m.py", 20, 20, "CL508", "GB0170 executed, no break"),  # false, declares GB0170
        ("m.py", 40, 40, "CL508", "never executed"),  # unknown
        ("m.py", 31, 31, "CL508", "after a loop break: Dynamo never traced it"),  # unknown
        ("m.py", 20, 20, "CL303", "not a counted code"),
    ]}
    result = score.judge(facts, findings, ("CL5",), lambda source, rel, row: {11: (10, 11)}.get(row, (row, row)))
    assert result["findings"] == {"true": 1, "false": 1, "unknown": 2}
    assert result["precision"] == 0.5 and result["recall"] == 0.5
    assert result["per_id"]["GB0124"]["found"] == 1 and result["per_id"]["GB0124"]["true"] == 1
    assert result["per_id"]["GB0170"]["false"] == 1 and result["per_id"]["GB0170"]["sites"] == 0
    assert result["per_id"]["GB0059"]["found"] == 0 and result["per_id"]["GB0059"]["to_eager"] == 1
    assert result["by_code"]["CL303"] == {"findings": 1, "executed": 1, "true": 0, "false": 1, "unknown": 0}


def test_declared_names_follow_the_lint_roots_import_names():
    assert score.declared_name("timm/models/resnet.py", "ResNet") == "timm.models.resnet:ResNet"
    assert score.declared_name("pkg/__init__.py", "Net") == "pkg:Net"
    assert score.declared_name("src/models/modnet.py", "MODNet.forward") == "src.models.modnet:MODNet.forward"
    assert score.declared_name("a/b.py", "f.<locals>.g") is None
    # a folder that is no identifier cannot be named in `compiled = [...]`
    assert score.declared_name("swift-srgan/models.py", "G") is None


def test_scoring_one_pass_with_the_findings_kept_from_a_first_scoring(slice_run, tmp_path):
    cache = str(tmp_path / "findings.json")
    scored = {}
    for label, extra in (("all", ["--python", sys.executable]), ("eval", ["--passes", "eval", "--python", "/bin/false"])):
        # the second scoring never runs compile-lint (its --python could not): the kept findings serve
        proc = subprocess.run(
            [sys.executable, os.path.join(ORACLE, "score.py"), "--results", str(slice_run), "--code", REPO,
             "--findings", cache, "--score-file", str(tmp_path / f"{label}.json"), *extra],
            capture_output=True, text=True, timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
        with open(tmp_path / f"{label}.json", encoding="utf-8") as f:
            scored[label] = json.load(f)
    line = all_markers()["layerdrop"]
    verdicts = {label: {(f["line"], f["verdict"]) for f in s["finding_list"] if f["line"] == line} for label, s in scored.items()}
    # judged by the eval pass alone, LayerDrop's break is not a site, and its tensor test
    # never ran there (`self.training and ...` short-circuits): unknown, not false
    assert verdicts == {"all": {(line, "true")}, "eval": {(line, "unknown")}}
    assert scored["eval"]["passes"] == ["eval"] and scored["all"]["passes"] == ["eval", "eval:float16", "train"]
    # the sites no eval-mode float32 run breaks at (LayerDrop's, HalfClamp's, ConvertsLayer's) are not the eval pass's
    assert scored["eval"]["sites"] == sum(1 for site in scored["all"]["site_list"] if "eval" in site["passes"])
    assert scored["eval"]["sites"] <= scored["all"]["sites"] - 3


def test_a_finding_whose_expression_never_ran_is_unknown_by_expression_false_by_line(slice_run, tmp_path):
    line = line_of("# never read: short-circuit")
    with open(os.path.join(slice_run, "models", "slice__ShortCircuit.json"), encoding="utf-8") as f:
        columns = json.load(f)["passes"][0]["executed_columns"][os.path.realpath(NETS)][str(line)]
    text = open(NETS, encoding="utf-8").read().splitlines()[line - 1]
    assert text.index("x.shape") in columns and text.index("x.sum()") not in columns
    verdicts = {}
    for by in ("expression", "line"):
        out = tmp_path / f"{by}.json"
        proc = subprocess.run(
            [sys.executable, os.path.join(ORACLE, "score.py"), "--results", str(slice_run), "--code", REPO,
             "--executed", by, "--findings", str(tmp_path / "findings.json"), "--score-file", str(out)],
            capture_output=True, text=True, timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
        with open(out, encoding="utf-8") as f:
            verdicts[by] = [x["verdict"] for x in json.load(f)["finding_list"] if x["line"] == line]
    assert verdicts == {"expression": ["unknown"], "line": ["false"]}


def test_ran_by_expression_looks_inside_the_findings_span():
    facts = score.RunFacts(sites={}, executed={("s", "m.py"): {5, 6}}, untraced={}, outside={}, targets={},
                           undeclarable=[], models=[], columns={("s", "m.py"): {5: {4, 8}, 6: {0}}})
    key = ("s", "m.py")
    assert score.ran(facts, key, 5, 5, 9, 12)  # 1-based column 9 is column 8
    assert not score.ran(facts, key, 5, 5, 10, 20)
    assert score.ran(facts, key, 5, 5, 10, 20, by="line")
    assert score.ran(facts, key, 4, 6, 30, 2)  # a span over three lines: line 6 column 0
    assert not score.ran(facts, key, 7, 7, 1, 5)


def test_resume_keeps_finished_entries_and_reruns_ones_a_stop_cut_short(tmp_path):
    import run

    def write(name, data):
        path = tmp_path / name
        path.write_text(json.dumps(data), encoding="utf-8")
        return str(path)

    assert run.finished(write("done.json", {"complete": True, "passes": [{}]}))
    assert run.finished(write("first_judge.json", {"status": "ok"}))  # written before passes existed
    assert run.finished(write("timed_out.json", {"complete": False, "incomplete": "timeout: killed after 600 s"}))
    assert not run.finished(write("stopped.json", {"complete": False, "passes": [{}]}))  # SIGTERM mid-entry
    assert not run.finished(str(tmp_path / "missing.json"))
    assert not run.finished(write("torn.json", {"complete": True})[:-5] + "torn.json.tmp")
