"""The run's plan: which checks each target gets, in which stage, what they may cost, and
the order the work is done in, so that a whole-run budget is spent on what tells most.

A target's checks are split into stages, and every target's stage runs before any
target's next stage:

0. **dynamo**: build the target, make its inputs, run it eagerly, then Dynamo alone
   (`backend="aot_eager"`: no code generation) at every resolution with one dynamic
   compile: graph breaks, recompiles, guard failures, frames that fall back, errors
   Dynamo raises; and the checks that need no Inductor (traced, frozen-state, a
   recompile sweep with `backend="eager"`). Seconds per target.
1. **inductor**: one dynamic Inductor compile run at every resolution it covers, the
   low-precision check and, where the project trains the target, gradients. The
   Dynamo pass shows which sizes a dynamic graph cannot cover (a guard failed: a
   recompile, which costs Inductor a whole compile): for a target without findings
   they move to stage 2 (`split_recompiling_sizes`); a target with findings keeps them
   (CL103 shows at some sizes only).
2. **more**: a static compile at the first resolution (every resolution for a target
   with findings), the sizes the dynamic graph did not cover, the other modes and the
   latency check of `--full`.

Within a stage, targets with findings go first, then the cheapest by the estimates the
Dynamo pass refined (`stage_units`, called as each stage starts). What does not fit the
budget is reported `not-run` (verdict "budget") and listed. No torch here.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Optional

from .config import CUDA_ONLY_MODES, TargetSpec, VerifyOptions, default_modes

DYNAMO, INDUCTOR, MORE = 0, 1, 2
STAGE_NAMES = ("dynamo", "inductor", "more")
CUDA_CHECKS = {"held-outputs": "CL401", "cudagraph-sizes": "CL402", "input-mutation": "CL403"}
# CUDA checks whose outcome is torch's, not the target's: verify itself does what the
# finding says the code does, and every CUDA-graph target then shows the hazard (on an H200
# with torch 2.11 a clean compositor's kept output changed by 0.845, and a plain conv net
# recorded 11 graphs for 10 sizes; bench/results.md, "GPU run"). So they only confirm a
# finding, and without one they would fail a clean project's GPU CI.
CONFIRMATION_ONLY = {
    "held-outputs": "verify's own call would be what keeps the output, and every CUDA-graph replay overwrites a "
                    "kept output",
    "cudagraph-sizes": "verify's own calls would be what varies the size, and every CUDA-graph target records a "
                       "graph per size",
}

# Seconds per step before anything is measured, on a 2-core CPU runner with a cold
# Inductor cache (bench/results.md, "verify budget"): the plan prints them as estimates
# and refines them with what the Dynamo pass saw (graph size) and what compiles took.
PRIOR_S = {
    "dynamo": 3.0,
    "forward": 20.0,  # one Inductor compile and a call at each resolution
    "forward-static": 12.0,
    "low-precision": 15.0,  # per dtype
    "gradients": 30.0,  # forward and backward graphs
    "traced": 6.0,
    "frozen-state": 8.0,
    "recompile-sweep": 10.0,
    "latency": 20.0,
}
UNIT_OVERHEAD_S = 2.0  # a worker: fork, import the target's module, build it, eager baselines
# The same on CUDA, cold: an H200 with torch 2.11 took 17-24 s per unit beyond its compiles
# (worker start, CUDA initialisation, eager and float64 baselines; bench/results.md, "GPU run").
UNIT_OVERHEAD_CUDA_S = 20.0
FIRST_INDUCTOR_S = 15.0  # the first Inductor compile of a cold run loads and builds more
# Inductor compile seconds per FX graph node per compile, as the Dynamo pass counts them
# (refined as the run measures real compiles). Medians measured on fixtures/verify/clean
# with a cold cache on this project's 2-core machine under load ~2.5 (bench/results.md,
# "verify budget"): dynamic 0.28-0.59 s/node, static 0.25-0.5, forward+backward 0.34-0.79.
SECONDS_PER_NODE = {"forward": 0.5, "forward-static": 0.3, "low-precision": 0.3, "gradients": 0.7}
MIN_COMPILE_S = 3.0


@dataclass
class Step:
    """One piece of a target's work, run by its worker (worker.py runs them in order)."""

    check: str  # a CHECK_NAMES name
    stage: int
    backend: str = "inductor"  # "aot_eager" / "eager" for the Dynamo-only steps
    mode: str = "default"
    dynamic: Optional[bool] = None
    sizes: str = "all"  # "all" resolutions, or "first"
    dtypes: list = field(default_factory=list)
    estimate_s: float = 0.0
    at: Optional[list] = None  # these resolutions ([h, w]) only, instead of `sizes`
    compiles: Optional[int] = None  # Inductor compiles it takes, when the Dynamo pass told

    @property
    def kind(self) -> str:
        """The cost class: a static forward costs less than a dynamic one."""
        return "forward-static" if self.check == "forward" and self.dynamic is False else self.check

    def label(self) -> str:
        if self.check == "forward":
            parts = ["forward"] + ([self.mode] if self.mode != "default" else [])
            where = (["at " + ", ".join(f"{h}x{w}" for h, w in self.at)] if self.at
                     else ["at the first size"] if self.sizes == "first" else [])
            return " ".join(parts + ["dynamic" if self.dynamic else "static"] + where)
        if self.check == "dynamo":
            return f"dynamo ({self.backend}{', dynamic' if self.dynamic else ''})"
        if self.check == "low-precision":
            return f"low-precision {'/'.join(self.dtypes)}"
        return self.check

    def to_json(self) -> dict:
        return dict(asdict(self), label=self.label())

    @classmethod
    def from_json(cls, data: dict) -> "Step":
        return cls(**{k: v for k, v in data.items() if k != "label"})


@dataclass
class TargetPlan:
    """What one target gets: its steps, and checks decided without running (a skipped
    gradients check on inference-only code)."""

    spec: TargetSpec
    steps: list
    decided: list = field(default_factory=list)  # dicts for results.CheckResult
    nodes: Optional[int] = None  # FX graph nodes per compile the Dynamo pass saw (refines estimates)
    compiles: int = 1  # compiles the Dynamo pass needed for every size (1: its dynamic graph covered them)
    sizes: int = 3  # resolutions the target runs at
    overhead_s: float = UNIT_OVERHEAD_S  # a worker's cost beyond its steps, on this device

    @property
    def flagged(self) -> bool:
        return bool(self.spec.codes)

    def estimate(self, stage: Optional[int] = None) -> float:
        steps = [s for s in self.steps if stage is None or s.stage == stage]
        return sum(s.estimate_s for s in steps) + (self.overhead_s if steps else 0.0)


def low_precision_dtypes(spec: TargetSpec, options: VerifyOptions) -> list:
    asked = spec.dtypes or options.dtypes or []
    if not asked and set(spec.codes) & {"CL301", "CL302"}:
        asked = ["float16", "bfloat16"]
    return [d for d in asked if d in ("float16", "bfloat16", "float64")]


def gradients_decision(spec: TargetSpec, options: VerifyOptions, chosen: Optional[list]) -> tuple[bool, str]:
    """Whether to check gradients, and why (or why not)."""
    if chosen is not None:
        return "gradients" in chosen, "asked for"
    if spec.gradients is not None:
        return spec.gradients, "the target's gradients = " + str(spec.gradients).lower()
    if options.quick:
        return False, "--quick"
    if options.gradients == "always":
        return True, "--gradients always"
    if options.gradients == "never":
        return False, "--gradients never"
    if spec.trained:
        return True, f"the project trains it ({spec.trained})"
    return False, ("the project does not train it (no optimizer over its parameters, no backward through it; "
                   "--gradients always checks them)")


def plan_target(spec: TargetSpec, options: VerifyOptions, device: str) -> TargetPlan:
    chosen = list(spec.checks or options.checks or []) or None
    codes, kinds = set(spec.codes), set(spec.region_kinds)

    def wanted(name: str) -> bool:
        return chosen is None or name in chosen

    modes = list(spec.modes or options.modes or default_modes(device, options.full))
    dynamics = list(options.dynamic)
    if options.quick:
        modes, dynamics = modes[:1], dynamics[:1]
    steps: list = []
    decided: list = []
    if wanted("dynamo"):
        dynamic = True in dynamics
        steps.append(Step("dynamo", DYNAMO, backend="aot_eager", dynamic=dynamic, sizes="all" if dynamic else "first"))
    if wanted("traced") and (codes & {"CL101", "CL104"} or "traced" in kinds or chosen is not None):
        steps.append(Step("traced", DYNAMO, backend="none"))
    if wanted("frozen-state") and ("CL102" in codes or spec.mutate or chosen is not None):
        steps.append(Step("frozen-state", DYNAMO, backend="none"))
    if wanted("recompile-sweep") and ("CL202" in codes or chosen is not None):
        steps.append(Step("recompile-sweep", DYNAMO, backend="eager"))
    if wanted("forward"):
        both = dynamics == [False, True]
        for index, mode in enumerate(modes):
            if mode in CUDA_ONLY_MODES and device != "cuda":
                steps.append(Step("forward", DYNAMO, mode=mode))  # reported skipped at once
                continue
            first_mode = index == 0
            if True in dynamics:
                steps.append(Step("forward", INDUCTOR if first_mode else MORE, mode=mode, dynamic=True))
            if False in dynamics:
                # with a dynamic compile covering the sizes, the static one is a second
                # look: the first size only, unless the target's findings show at some sizes
                sizes = "first" if both and not codes and not options.full else "all"
                steps.append(Step("forward", MORE if both or not first_mode else INDUCTOR, mode=mode, dynamic=False,
                                  sizes=sizes))
    dtypes = low_precision_dtypes(spec, options)
    if dtypes and wanted("low-precision") or chosen is not None and "low-precision" in chosen:
        steps.append(Step("low-precision", INDUCTOR, dynamic=False, dtypes=dtypes or ["float16", "bfloat16"]))
    check_gradients, why = gradients_decision(spec, options, chosen)
    if check_gradients:
        steps.append(Step("gradients", INDUCTOR, dynamic=False))
    elif chosen is None:
        decided.append({"name": "gradients", "status": "skipped", "verdict": "not-trained" if not options.quick
                        and options.gradients == "auto" and spec.gradients is None else "not-asked",
                        "message": f"not checked: {why}"})
    for name, code in CUDA_CHECKS.items():
        if not wanted(name):
            continue
        if name in CONFIRMATION_ONLY and code not in codes:
            if chosen is not None or "cudagraph" in kinds:
                decided.append({"name": name, "status": "skipped", "verdict": "not-flagged",
                                "message": f"not checked: no {code} finding here; {name} confirms one "
                                           f"({CONFIRMATION_ONLY[name]})"})
            continue
        if code in codes or "cudagraph" in kinds or chosen is not None:
            steps.append(Step(name, INDUCTOR if device == "cuda" else DYNAMO, mode="reduce-overhead"))
    if wanted("latency") and options.full and not options.quick or chosen is not None and "latency" in chosen:
        steps.append(Step("latency", MORE))
    plan = TargetPlan(spec, steps, decided, overhead_s=UNIT_OVERHEAD_CUDA_S if device == "cuda" else UNIT_OVERHEAD_S)
    estimate(plan, device)
    return plan


def step_estimate(step: Step, plan: "TargetPlan", seconds_per_node: dict, device: str) -> float:
    """Seconds one step may take: the prior, or, once the Dynamo pass counted the graph's
    nodes and how many compiles its sizes took, a per-node cost per compile (learned from
    this run's compiles where there are some)."""
    if step.check in CUDA_CHECKS and device != "cuda" or step.mode in CUDA_ONLY_MODES and device != "cuda":
        return 0.0
    kind = step.kind
    nodes = plan.nodes
    if nodes is not None and kind in seconds_per_node and step.backend == "inductor":
        if step.compiles is not None:
            compiles = step.compiles
        elif kind == "forward":
            compiles = plan.compiles  # a dynamic compile that still recompiles per size
        elif kind == "forward-static":
            compiles = 1 if step.sizes == "first" else plan.sizes
        elif kind == "low-precision":
            compiles = len(step.dtypes) * plan.sizes
        else:
            compiles = 1
        return compiles * max(MIN_COMPILE_S, seconds_per_node[kind] * nodes)
    prior = PRIOR_S.get(kind, 10.0)
    return prior * (len(step.dtypes) if kind == "low-precision" else 1)


def estimate(plan: TargetPlan, device: str, seconds_per_node: Optional[dict] = None) -> None:
    rates = dict(SECONDS_PER_NODE, **(seconds_per_node or {}))
    for step in plan.steps:
        step.estimate_s = round(step_estimate(step, plan, rates, device), 1)


@dataclass
class Unit:
    """One worker's share: a target's steps of one stage."""

    plan: TargetPlan
    stage: int
    steps: list

    @property
    def ref(self) -> str:
        return self.plan.spec.ref

    @property
    def estimate_s(self) -> float:
        return sum(s.estimate_s for s in self.steps) + self.plan.overhead_s


def split_recompiling_sizes(plan: TargetPlan, shared: list, recompiled: list) -> bool:
    """After the Dynamo pass: the dynamic Inductor compile of stage 1 runs at the sizes
    its graph covered (`shared`), and the sizes where a guard failed (`recompiled`, each
    a whole Inductor compile more: at 2x3 a ResNet's strided convs reach size 1, which
    Dynamo specialises) wait for stage 2, like a static compile, so that one compile per
    target verifies every target before any target's second compile. A target with
    findings keeps them in stage 1: CL103 shows at some sizes only. Returns whether the
    plan changed."""
    if plan.flagged or not recompiled or not shared:
        return False
    changed = False
    for step in list(plan.steps):
        if step.check == "forward" and step.dynamic and step.stage == INDUCTOR and step.at is None \
                and step.sizes == "all":
            step.at, step.compiles = [list(r) for r in shared], 1
            plan.steps.insert(plan.steps.index(step) + 1, Step(
                "forward", MORE, mode=step.mode, dynamic=True, at=[list(r) for r in recompiled],
                compiles=len(recompiled)))
            changed = True
    return changed


def stage_units(plans: list, stage: int) -> list:
    """The workers of one stage, in order: targets with findings first, then the
    cheapest (so that a budget covers as many targets as it can). A target with no step
    at all gets one in stage 0: building it and calling it eagerly tells whether it can
    be verified."""
    units = []
    for plan in plans:
        steps = [s for s in plan.steps if s.stage == stage]
        if steps or stage == DYNAMO and not plan.steps:
            units.append(Unit(plan, stage, steps))
    return sorted(units, key=lambda u: (not u.plan.flagged, u.estimate_s, u.ref))


def units_in_order(plans: list) -> list:
    """Every target's stage 0 first, then stage 1, then 2, each in `stage_units` order
    by the estimates known now (the runner orders each stage again as it starts)."""
    return [unit for stage in (DYNAMO, INDUCTOR, MORE) for unit in stage_units(plans, stage)]


def describe_plan(plans: list, device: str, budget: float, header: str) -> list:
    """The plan as lines for stderr, printed before anything runs."""
    total = sum(p.estimate() for p in plans) + (FIRST_INDUCTOR_S if any(
        s.backend == "inductor" and s.estimate_s for p in plans for s in p.steps) else 0.0)
    budget_text = f"budget {budget:.0f} s" if budget else "no budget"
    lines = [f"{header}: plan for {len(plans)} target(s) on {device}, {budget_text}, estimated ~{total:.0f} s "
             f"(refined after the Dynamo passes)"]
    for plan in sorted(plans, key=lambda p: (not p.flagged, p.spec.ref)):
        spec = plan.spec
        codes = f" [{', '.join(spec.codes)}]" if spec.codes else ""
        lines.append(f"  {spec.ref}{codes}")
        if spec.build_call():
            lines.append(f"      built: {spec.build_call()}")
        for stage in sorted({s.stage for s in plan.steps}):
            steps = [s for s in plan.steps if s.stage == stage]
            cost = sum(s.estimate_s for s in steps)
            lines.append(f"      {STAGE_NAMES[stage]}: {', '.join(s.label() for s in steps)} (~{cost:.0f} s)")
        for check in plan.decided:
            lines.append(f"      {check['name']} {check['message']}")
    if budget:
        lines.append("  order: every target's Dynamo pass first (flagged targets first), then one Inductor compile "
                     "each (flagged, then cheapest, first), then static compiles and the sizes a dynamic graph did "
                     "not cover; what does not fit is not-run (budget)")
    return lines
