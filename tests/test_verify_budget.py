"""The whole-run budget and the plan (compile_lint/verify/plan.py, runner.py): every
target's Dynamo stage before any Inductor compile, flagged targets first, what does not
fit is not-run (budget) and listed, a worker still running at the deadline is stopped,
and nothing verified is exit 3, not a green gate.

Fast: the workers here are stand-ins (a few lines of Python that sleep as long as each
step says and report it passed), so the scheduling is tested without torch; the real
workers are exercised by the slow tests (test_verify_defaults.py, bench/verify_app).
"""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from compile_lint.verify import runner as vrunner
from compile_lint.verify.config import TargetSpec, VerifyConfigError, VerifyOptions, parse_budget
from compile_lint.verify.plan import (
    DYNAMO, INDUCTOR, MORE, describe_plan, estimate, plan_target, split_recompiling_sizes, units_in_order,
)
from compile_lint.verify.results import (
    BUDGET, EXIT_NOTHING_VERIFIED, NOT_RUN, PASS, CheckResult, TargetResult, exit_code, finish, target_status,
)

FAKE_WORKER = textwrap.dedent("""
    import json, sys, time
    job_path, events_path = sys.argv[1:]
    job = json.load(open(job_path))
    out = open(events_path, "a")
    def write(event):
        event["t"] = time.time()
        out.write(json.dumps(event) + "\\n"); out.flush()
    scale = job["target"]["kwargs"].get("seconds_per_estimated", 0.0)
    late_error = job["target"]["kwargs"].get("late_error")
    write({"event": "built", "built": job["target"]["qualname"] + "()", "kind": "class"})
    write({"event": "inputs", "inputs": ["float32[1x3xHxW]"], "specs": [{"shape": [1, 3, "H", "W"]}],
           "synthesised": True, "config": "inputs = []", "resolutions": [[16, 16]]})
    for step in job["steps"]:
        if step["check"] == "dynamo" and job["target"]["kwargs"].get("recompiles_by_size"):
            # one result per size, as the real Dynamo pass reports: the recompile count grows where a guard failed
            for size, recompiles in job["target"]["kwargs"]["recompiles_by_size"]:
                write({"event": "check", "result": {"name": "dynamo", "status": "pass", "verdict": "bit-identical",
                                                    "backend": "aot_eager", "dynamic": True, "recompiles": recompiles,
                                                    "detail": {"resolution": size},
                                                    "graph_nodes": job["target"]["kwargs"].get("nodes")}})
            continue
        if job["deadline"] and step["estimate_s"] > job["deadline"] - time.time():
            write({"event": "start", "check": step["check"], "step": step["label"]})
            write({"event": "check", "result": {"name": step["check"], "status": "not-run", "verdict": "budget",
                                                "message": "not run (budget): " + step["check"]}})
            continue
        write({"event": "start", "check": step["check"], "step": step["label"]})
        time.sleep(step["estimate_s"] * scale)
        if late_error:
            time.sleep(late_error)
            write({"event": "check", "result": {"name": step["check"], "status": "error", "verdict": "compile-error",
                                                "message": "KeyboardInterrupt wrapped by the compiler"}})
            continue
        write({"event": "check", "result": {"name": step["check"], "status": "pass", "verdict": "bit-identical",
                                            "backend": step["backend"],
                                            "graph_nodes": job["target"]["kwargs"].get("nodes")}})
    write({"event": "done"})
""")


class FakeLauncher:
    def __init__(self, folder):
        self.script = folder / "fake_worker.py"
        self.script.write_text(FAKE_WORKER)
        self.started = []
        self.labels = []

    def start(self, job_path, events_path, stderr_path):
        with open(job_path) as fh:
            job = json.load(fh)
        self.started.append((job["target"]["qualname"], job["stage"], [s["check"] for s in job["steps"]]))
        self.labels.append((job["target"]["qualname"], job["stage"], [s["label"] for s in job["steps"]]))
        proc = subprocess.Popen([sys.executable, str(self.script), job_path, events_path], start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return vrunner.SpawnedWorker(proc)

    def close(self, kill=False):
        pass


@pytest.fixture
def fake(tmp_path, monkeypatch):
    launcher = FakeLauncher(tmp_path)
    monkeypatch.setattr(vrunner, "make_launcher", lambda device, jobs: launcher)
    return launcher


def _spec(name, codes=(), trained=None, **kwargs):
    return TargetSpec(ref=f"m.py:{name}", qualname=name, file=f"/nowhere/m.py", codes=list(codes), trained=trained,
                      kwargs=kwargs)


def _runner(deadline=None, budget=0.0):
    return vrunner.Runner({"device": "cpu"}, 1, 60, deadline=deadline, budget=budget)


# ---- the plan ----

def test_plan_stages_dynamo_first_then_one_dynamic_inductor_compile_then_static():
    options = VerifyOptions()
    plan = plan_target(_spec("Clean"), options, "cpu")
    stages = [(s.check, s.stage, s.backend, s.dynamic, s.sizes) for s in plan.steps]
    assert stages == [("dynamo", DYNAMO, "aot_eager", True, "all"), ("forward", INDUCTOR, "inductor", True, "all"),
                      ("forward", MORE, "inductor", False, "first")]
    # a target with findings gets its static compile at every size (CL103 shows at some only)
    flagged = plan_target(_spec("Zoom", codes=["CL103"]), options, "cpu")
    assert [(s.check, s.dynamic, s.sizes) for s in flagged.steps if s.check == "forward"] == [
        ("forward", True, "all"), ("forward", False, "all")]


def test_gradients_only_where_the_project_trains_the_target_or_when_asked():
    options = VerifyOptions()
    inference = plan_target(_spec("Infer"), options, "cpu")
    assert "gradients" not in [s.check for s in inference.steps]
    (hint,) = inference.decided  # said, not silently dropped
    assert hint["status"] == "skipped" and "does not train it" in hint["message"] and "--gradients always" in hint["message"]
    trained = plan_target(_spec("Trained", trained="an optimizer over its parameters at train.py:9"), options, "cpu")
    assert [s.stage for s in trained.steps if s.check == "gradients"] == [INDUCTOR]
    assert not trained.decided
    options.gradients = "always"
    assert "gradients" in [s.check for s in plan_target(_spec("Infer"), options, "cpu").steps]
    options.gradients = "never"
    assert "gradients" not in [s.check for s in plan_target(_spec("T", trained="x"), options, "cpu").steps]
    options.gradients, options.checks = "auto", ["gradients"]
    assert [s.check for s in plan_target(_spec("Infer"), options, "cpu").steps] == ["gradients"]


def test_held_outputs_and_cudagraph_sizes_run_only_for_their_finding_input_mutation_for_any_cudagraph_site():
    """The held-outputs check keeps call N's output itself, and every CUDA-graph replay
    overwrites a kept output: on an H200 a clean compositor compiled with reduce-overhead
    came back "diverged" (bench/results.md, "GPU run"). cudagraph-sizes feeds ten sizes
    itself, and any CUDA-graph target records a graph per size. Without their finding they
    must say why they did not run, never run and fail a clean project's GPU CI; whether
    compiled code writes into its inputs is the target's own, so input-mutation runs."""
    options = VerifyOptions()
    cudagraph_site = _spec("Clean")
    cudagraph_site.region_kinds = ["compiled", "cudagraph"]
    plan = plan_target(cudagraph_site, options, "cuda")
    cuda_steps = [s.check for s in plan.steps if s.mode == "reduce-overhead" and s.check != "forward"]
    assert cuda_steps == ["input-mutation"]
    skipped = {d["name"]: d for d in plan.decided if d["verdict"] == "not-flagged"}
    assert sorted(skipped) == ["cudagraph-sizes", "held-outputs"]
    assert "CL401" in skipped["held-outputs"]["message"] and "CL402" in skipped["cudagraph-sizes"]["message"]
    assert all(d["status"] == "skipped" for d in skipped.values())
    flagged = plan_target(_spec("Kept", codes=["CL401"]), options, "cuda")
    assert [s.check for s in flagged.steps if s.mode == "reduce-overhead"] == ["held-outputs"]
    sizes = plan_target(_spec("Served", codes=["CL402"]), options, "cuda")
    assert [s.check for s in sizes.steps if s.mode == "reduce-overhead"] == ["cudagraph-sizes"]
    # asked for by name on a target with no finding: said, not run
    options.checks = ["held-outputs"]
    asked = plan_target(_spec("Clean"), options, "cuda")
    assert not asked.steps and [d["verdict"] for d in asked.decided] == ["not-flagged"]


def test_a_unit_on_cuda_is_estimated_with_the_cost_a_gpu_worker_measured():
    """On an H200 each unit took 17-24 s beyond its compiles (bench/results.md, "GPU run");
    a 2-second CPU prior made a 330 s budget look like room for 469 s of work."""
    from compile_lint.verify.plan import UNIT_OVERHEAD_CUDA_S, UNIT_OVERHEAD_S, stage_units

    options = VerifyOptions()
    on_cpu, on_cuda = plan_target(_spec("Clean"), options, "cpu"), plan_target(_spec("Clean"), options, "cuda")
    steps_cpu = sum(s.estimate_s for s in on_cpu.steps if s.stage == INDUCTOR)
    (unit_cpu,), (unit_cuda,) = stage_units([on_cpu], INDUCTOR), stage_units([on_cuda], INDUCTOR)
    assert unit_cpu.estimate_s == steps_cpu + UNIT_OVERHEAD_S
    assert unit_cuda.estimate_s - sum(s.estimate_s for s in unit_cuda.steps) == UNIT_OVERHEAD_CUDA_S >= 15


def test_units_run_every_dynamo_stage_first_flagged_targets_first():
    options = VerifyOptions()
    plans = [plan_target(_spec(name, codes=codes), options, "cpu")
             for name, codes in (("A", []), ("B", ["CL301"]), ("C", []))]
    order = [(u.plan.spec.qualname, u.stage) for u in units_in_order(plans)]
    assert order[:3] == [("B", DYNAMO), ("A", DYNAMO), ("C", DYNAMO)]
    assert [stage for _name, stage in order] == sorted(stage for _name, stage in order)
    assert order[3][0] == "B"  # flagged first in the Inductor stage too


def test_the_plan_is_printed_with_targets_checks_and_estimates():
    options = VerifyOptions()
    spec = _spec("Net", codes=["CL103"])
    spec.built = "as train.py:12 calls it"
    lines = describe_plan([plan_target(spec, options, "cpu")], "cpu", 600, "verify")
    text = "\n".join(lines)
    assert lines[0].startswith("verify: plan for 1 target(s) on cpu, budget 600 s, estimated ~")
    assert "m.py:Net [CL103]" in text and "built: as train.py:12 calls it" in text
    assert "dynamo: dynamo (aot_eager, dynamic) (~" in text and "inductor: forward dynamic" in text
    assert "not-run (budget)" in text


def test_budget_values():
    assert parse_budget("10m", "--budget") == 600 and parse_budget(90, "x") == 90 and parse_budget("0", "x") == 0
    assert parse_budget("none", "x") == 0
    with pytest.raises(VerifyConfigError, match="not a number of seconds"):
        parse_budget("soon", "--budget")


# ---- statuses and the gate ----

def test_budget_left_out_checks_do_not_count_unless_nothing_compiled_ran():
    left = CheckResult(name="forward", status=NOT_RUN, verdict=BUDGET)
    assert target_status([CheckResult(name="forward", status=PASS, verdict=""), left]) == PASS
    # only the Dynamo pass ran: not verified
    assert target_status([CheckResult(name="dynamo", status=PASS, verdict=""), left]) == NOT_RUN
    assert target_status([CheckResult(name="forward", status=NOT_RUN, verdict="interrupted")]) == NOT_RUN


def test_nothing_verified_is_exit_3_unless_allowed():
    skipped = finish(TargetResult("a", "", checks=[CheckResult(name="inputs", status="skipped", verdict="")]))
    passed = finish(TargetResult("b", "", checks=[CheckResult(name="forward", status=PASS, verdict="")]))
    assert exit_code([skipped], allow_nothing_verified=False) == EXIT_NOTHING_VERIFIED
    assert exit_code([], allow_nothing_verified=False) == EXIT_NOTHING_VERIFIED
    assert exit_code([skipped], allow_nothing_verified=True) == 0
    assert exit_code([skipped, passed], allow_nothing_verified=False) == 0
    diverged = finish(TargetResult("c", "", checks=[CheckResult(name="forward", status="diverged", verdict="")]))
    assert exit_code([diverged, skipped], allow_nothing_verified=False) == 1


# ---- the runner under a budget (stand-in workers) ----

def test_what_does_not_fit_the_budget_is_not_run_and_the_dynamo_stage_still_runs(fake):
    options = VerifyOptions()
    plans = [plan_target(_spec(name, seconds_per_estimated=0.0), options, "cpu") for name in ("A", "B")]
    for plan in plans:
        for step in plan.steps:
            step.estimate_s = 1.0 if step.check == "dynamo" else 500.0  # Inductor cannot fit 30 s
    runner = _runner(deadline=time.time() + 30, budget=30)
    results = {r.target: r for r in runner.run(plans)}
    assert [(name, stage) for name, stage, _checks in fake.started] == [("A", DYNAMO), ("B", DYNAMO)]
    for result in results.values():
        assert result.status == NOT_RUN  # only its Dynamo pass ran: not verified
        left = [c for c in result.checks if c.verdict == BUDGET]
        assert {c.name for c in left} == {"forward"} and all("budget" in c.message for c in left)
        assert result.built.endswith("()") and result.inputs_config == "inputs = []"
    assert exit_code(list(results.values()), allow_nothing_verified=False) == EXIT_NOTHING_VERIFIED


def test_a_target_the_budget_left_out_says_how_it_would_have_been_built(fake):
    """The plan and a target that never started show the factory call with its literal
    arguments, not only where it was found."""
    options = VerifyOptions()
    spec = _spec("RRDBNet")
    spec.factory = {"qualname": "build_upscaler", "file": "/nowhere/serve.py", "args": [], "kwargs": {"scale": 2}}
    spec.built = "as serve.py:26 calls it; it returns RRDBNet(3, 3, 16, 1, gc=8, scale=scale) (serve.py:17)"
    classy = _spec("StyleNet", width=8)
    classy.built = "the call at serve.py:27"
    plans = [plan_target(spec, options, "cpu"), plan_target(classy, options, "cpu")]
    for plan in plans:
        for step in plan.steps:
            step.estimate_s = 500.0  # nothing fits 30 s
    text = "\n".join(describe_plan(plans, "cpu", 30, "verify"))
    assert "built: build_upscaler(scale=2) (as serve.py:26 calls it; it returns RRDBNet(3, 3, 16, 1" in text
    assert "built: StyleNet(width=8) (the call at serve.py:27)" in text
    results = {r.target: r for r in _runner(deadline=time.time() + 30, budget=30).run(plans)}
    assert not fake.started
    assert results["m.py:RRDBNet"].built.startswith("build_upscaler(scale=2) (as serve.py:26 calls it")
    assert results["m.py:StyleNet"].built == "StyleNet(width=8) (the call at serve.py:27)"
    assert all(r.status == NOT_RUN for r in results.values())


def test_sizes_one_dynamic_graph_does_not_cover_wait_for_the_last_stage():
    """2x3 makes a ResNet recompile (a guard failed): a whole Inductor compile more. A
    clean target's stage 1 compiles once, at the sizes the Dynamo pass's graph covered;
    the others come with the static compile. A flagged target keeps every size."""
    options = VerifyOptions()
    plan = plan_target(_spec("Clean"), options, "cpu")
    plan.nodes = 100
    assert split_recompiling_sizes(plan, [[17, 23], [16, 16]], [[2, 3]])
    forward = [(s.stage, s.dynamic, s.at, s.label()) for s in plan.steps if s.check == "forward"]
    assert forward == [(INDUCTOR, True, [[17, 23], [16, 16]], "forward dynamic at 17x23, 16x16"),
                       (MORE, True, [[2, 3]], "forward dynamic at 2x3"),
                       (MORE, False, None, "forward static at the first size")]
    estimate(plan, "cpu")
    inductor, later = [s for s in plan.steps if s.check == "forward" and s.dynamic]
    assert inductor.estimate_s == later.estimate_s == 50.0  # one compile each (0.5 s per node)
    assert not split_recompiling_sizes(plan, [[17, 23], [16, 16]], [[2, 3]])  # once
    flagged = plan_target(_spec("Zoom", codes=["CL103"]), options, "cpu")
    assert not split_recompiling_sizes(flagged, [[17, 23], [16, 16]], [[2, 3]])
    assert not split_recompiling_sizes(plan_target(_spec("Even"), options, "cpu"), [[17, 23], [2, 3]], [])


def test_the_sizes_a_dynamo_pass_recompiled_at_are_read_from_its_counts():
    def dynamo(size, recompiles):
        return CheckResult(name="dynamo", status=PASS, verdict="", dynamic=True, recompiles=recompiles,
                           detail={"resolution": size}, graph_nodes=10)

    checks = [dynamo([17, 23], 0), dynamo([2, 3], 1), dynamo([16, 16], 1)]
    assert vrunner._sizes_by_graph(checks) == ([[17, 23], [16, 16]], [[2, 3]])
    # after a rerun reset Dynamo the count starts again: no recompile there
    assert vrunner._sizes_by_graph([dynamo([17, 23], 0), dynamo([2, 3], 0)]) == ([[17, 23], [2, 3]], [])


def test_each_stage_runs_cheapest_first_by_what_the_dynamo_pass_measured(fake):
    """Before the Dynamo pass A and B cost the same (priors); its graphs make A's compile
    the dearer (1,000 nodes against 10): B's Inductor stage runs first. B recompiled at
    2x3 in the Dynamo pass: its stage 1 runs at the other sizes, 2x3 comes in stage 2."""
    options = VerifyOptions()
    sizes = [[[17, 23], 0], [[2, 3], 1], [[16, 16], 1]]
    plans = [plan_target(_spec("A", nodes=1000, seconds_per_estimated=0.0), options, "cpu"),
             plan_target(_spec("B", nodes=10, seconds_per_estimated=0.0, recompiles_by_size=sizes), options, "cpu")]
    results = {r.target: r for r in _runner().run(plans)}
    assert [(name, stage) for name, stage, _labels in fake.labels] == [
        ("A", DYNAMO), ("B", DYNAMO), ("B", INDUCTOR), ("A", INDUCTOR), ("B", MORE), ("A", MORE)]
    labels = {(name, stage): steps for name, stage, steps in fake.labels}
    assert labels[("B", INDUCTOR)] == ["forward dynamic at 17x23, 16x16"]
    assert labels[("B", MORE)] == ["forward dynamic at 2x3", "forward static at the first size"]
    assert labels[("A", INDUCTOR)] == ["forward dynamic"]
    assert all(r.status == PASS for r in results.values())


def test_progress_accounts_for_every_unit_including_those_the_budget_left_out(fake):
    import io

    from compile_lint.verify.report import Progress

    options = VerifyOptions()
    plans = [plan_target(_spec("A", seconds_per_estimated=0.0), options, "cpu")]
    for step in plans[0].steps:
        step.estimate_s = 1.0 if step.check == "dynamo" else 500.0
    stream = io.StringIO()
    progress = Progress(len(units_in_order(plans)), stream=stream)
    runner = vrunner.Runner({"device": "cpu"}, 1, 60, deadline=time.time() + 30, budget=30, on_done=progress.finish,
                            on_start=progress.start, on_skip=progress.skip, on_added=progress.add)
    runner.run(plans)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "verify [0/3] start dynamo m.py:A: dynamo (aot_eager, dynamic) (~3 s)"
    assert lines[2] == "verify [2/3] not run (budget): inductor m.py:A: forward dynamic"
    assert lines[3] == "verify [3/3] not run (budget): more m.py:A: forward static at the first size"


def test_a_worker_running_at_the_deadline_is_stopped_and_its_step_left_out(fake):
    options = VerifyOptions()
    plan = plan_target(_spec("Slow", seconds_per_estimated=1.0), options, "cpu")
    plan.steps = [s for s in plan.steps if s.check in ("dynamo", "forward")][:2]
    plan.steps[0].estimate_s = 0.0
    plan.steps[1].estimate_s = 2.0  # fits by its estimate, but the stand-in sleeps longer than the deadline ...
    plan.steps[1].stage = DYNAMO
    runner = _runner(deadline=time.time() + 2.5, budget=2.5)
    runner_started = time.monotonic()
    plan.spec.kwargs["seconds_per_estimated"] = 30.0  # ... 60 s
    (result,) = runner.run([plan])
    took = time.monotonic() - runner_started
    assert took < 2.5 + vrunner.BUDGET_GRACE_S + 5, took
    forward = [c for c in result.checks if c.name == "forward"]
    assert [c.verdict for c in forward] == [BUDGET] and "stopped when the budget ran out" in forward[0].message


def test_a_check_that_ends_after_the_runs_own_signal_is_not_an_error(fake):
    """The SIGINT flake: the run's own signal reaching a target while it compiles used to
    surface as an `error` check (the compiler wraps what interrupts it). Whatever a worker
    reports after verify was signalled is dropped: the target is not-run."""
    options = VerifyOptions()
    plan = plan_target(_spec("Busy", late_error=0.0), options, "cpu")
    unit = units_in_order([plan])[0]
    runner = _runner()
    runner.results[plan.spec.ref] = TargetResult(target=plan.spec.ref, status="error")
    runner.state[plan.spec.ref] = {"done": [], "plan": plan}
    runner.stopping, runner.stopped_at = True, 1000.0
    events = [{"event": "start", "check": "dynamo", "step": "dynamo", "t": 999.0},
              {"event": "check", "t": 999.5, "result": {"name": "dynamo", "status": "pass", "verdict": "bit-identical"}},
              {"event": "start", "check": "forward", "step": "forward dynamic", "t": 999.6},
              {"event": "check", "t": 1000.2, "result": {"name": "forward", "status": "error", "verdict": "compile-error",
                                                         "message": "BackendCompilerFailed: KeyboardInterrupt"}},
              {"event": "done", "t": 1000.3}]
    runner.collect(unit, unit.steps, events, 0, False, False, 60, [], 1.0)
    result = runner._finished(plan, "interrupted before it finished")
    assert [c.status for c in result.checks] == ["pass", "not-run", "skipped"]  # and the gradients hint
    assert result.status == NOT_RUN


def test_each_worker_says_where_its_seconds_went():
    """ready (launch to the target built), baselines, checks: what a GPU run needs to say
    where the 17-24 s per unit beyond the compiles went (bench/results.md, "GPU run")."""
    options = VerifyOptions()
    plan = plan_target(_spec("Timed"), options, "cpu")
    unit = units_in_order([plan])[0]
    runner = _runner()
    runner.results[plan.spec.ref] = TargetResult(target=plan.spec.ref, status="")
    runner.state[plan.spec.ref] = {"done": [], "plan": plan}
    events = [{"event": "built", "built": "Timed()", "kind": "module", "t": 105.0},
              {"event": "start", "check": "eager baseline", "t": 105.5},
              {"event": "start", "check": "dynamo", "step": "dynamo", "t": 107.0},
              {"event": "check", "t": 109.0, "result": {"name": "dynamo", "status": "pass", "verdict": "bit-identical"}},
              {"event": "done", "t": 110.25}]
    runner.collect(unit, unit.steps, events, 0, False, False, 60, [], 10.5, launched=100.0)
    (worker,) = runner.results[plan.spec.ref].workers
    assert worker == {"stage": "dynamo", "wall_s": 10.5, "ready_s": 5.0, "baselines_s": 1.5, "checks_s": 3.25}
    # a worker that died before building its target says only what it knows
    runner.collect(unit, unit.steps, [], -9, False, False, 60, [], 2.0, launched=200.0)
    assert runner.results[plan.spec.ref].workers[1] == {
        "stage": "dynamo", "wall_s": 2.0, "ready_s": None, "baselines_s": None, "checks_s": None}
    assert "workers" in runner.results[plan.spec.ref].to_json()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals and process groups")
def test_sigint_during_a_worker_reports_not_run_without_errors(fake, tmp_path):
    options = VerifyOptions()
    plan = plan_target(_spec("Busy", seconds_per_estimated=0.0, late_error=1.5), options, "cpu")
    runner = _runner()

    def interrupt(signum, frame):
        raise vrunner.Interrupted(signum)

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(vrunner.Interrupted) as stopped:
            runner.run([plan])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    (result,) = stopped.value.results
    assert result.status == NOT_RUN and not [c for c in result.checks if c.status == "error"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals")
def test_a_signal_stops_one_run_and_the_next_run_in_the_same_process_is_stopped_again():
    """verify's signal handling (command._stopped_by_signals): the first SIGTERM/SIGINT
    stops the run, a second while the report is written is ignored, and the handlers from
    before are back afterwards, exit included. A notebook or test that ran verify twice in
    one process had SIGINT left ignored and the second run deaf to its first signal."""
    from compile_lint.verify.command import _stopped_by_signals

    mine = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    for _ in range(2):
        with pytest.raises(vrunner.Interrupted) as stopped:
            with _stopped_by_signals() as signalled:
                try:
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(5)  # (the handler raises in the main thread before this ends)
                except vrunner.Interrupted:
                    os.kill(os.getpid(), signal.SIGINT)  # while the report is written: ignored
                    time.sleep(0.05)
                    raise
        assert stopped.value.signum == signal.SIGTERM and signalled == [signal.SIGTERM]
        assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == mine
    with pytest.raises(SystemExit):
        with _stopped_by_signals():
            sys.exit(130)
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == mine


@pytest.mark.slow
def test_a_run_that_verified_nothing_exits_3_unless_allowed_by_flag_or_config(tmp_path):
    """End to end: the only target cannot be fed (an argument verify does not guess), so
    it is skipped: exit 3, not a green gate; --allow-nothing-verified or the config key
    makes it 0."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "net.py").write_text(textwrap.dedent("""
        import torch
        from torch import nn


        class Scheduler(nn.Module):
            def forward(self, plan):
                return plan.steps * 2


        fast = torch.compile(Scheduler())
    """))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)

    def verify(*extra):
        return subprocess.run([sys.executable, "-m", "compile_lint", "verify", "--device", "cpu", "--no-repro",
                               "net.py", *extra], capture_output=True, text=True, cwd=str(tmp_path), env=env,
                              timeout=600)

    gate = verify()
    assert gate.returncode == EXIT_NOTHING_VERIFIED, gate.stderr[-2000:]
    assert "nothing was verified" in gate.stderr and "--allow-nothing-verified" in gate.stderr
    assert "SKIPPED" in gate.stdout.upper()
    assert verify("--allow-nothing-verified").returncode == 0
    (tmp_path / "pyproject.toml").write_text("[tool.compile-lint.verify]\nallow-nothing-verified = true\n")
    assert verify().returncode == 0
