"""What verify measures, as plain data that crosses the worker's process boundary as JSON.

No torch here: the parent process (the CLI) reads these without importing it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Optional

# What a check or a target came to (docs/verify.md, "Statuses and exit codes"):
PASS = "pass"  # compiled agrees with eager (bit-identical, within tolerance, or rounding)
DIVERGED = "diverged"  # compiled differs beyond rounding, fails where eager works, or recompiles/falls back
COULD_NOT_CHECK = "could-not-check"  # a limit of the tool or the tracer, not of the code: a timeout,
# an output jit.trace cannot take, a missing exporter package
ERROR = "error"  # the code itself failed: it does not import, construct or run eagerly
NOT_RUN = "not-run"  # verify was interrupted before this finished
SKIPPED = "skipped"  # nothing to run: no inputs could be made, a check that needs CUDA on CPU
STATUSES = (PASS, DIVERGED, COULD_NOT_CHECK, ERROR, NOT_RUN, SKIPPED)
BUDGET = "budget"  # the verdict of a check the run's --budget left out (status not-run)
INTERRUPTED = "interrupted"  # the verdict of a check a signal stopped (status not-run)
# Exit status when nothing was verified: no target passed or diverged (all skipped, not
# run, could not be checked, or none found). A gate that checked nothing is no pass.
EXIT_NOTHING_VERIFIED = 3

# A target takes the status of its most severe check.
_SEVERITY = {SKIPPED: 0, PASS: 1, COULD_NOT_CHECK: 2, NOT_RUN: 3, DIVERGED: 4, ERROR: 5}
# The exit code policy: these statuses make verify exit 1 (--strict / fail-on add more).
DEFAULT_FAIL_ON = (DIVERGED, ERROR)
STRICT_FAIL_ON = (DIVERGED, ERROR, COULD_NOT_CHECK, NOT_RUN, SKIPPED)


@dataclass
class CheckResult:
    """One named measurement, e.g. "forward" in mode default, dynamic, float32, 1x3x17x23."""

    name: str
    status: str
    verdict: str  # what was seen, e.g. "bit-identical", "rounding", "divergence", "fell-back-to-eager"
    message: str = ""
    mode: Optional[str] = None
    dynamic: Optional[bool] = None
    dtype: Optional[str] = None
    shape: Optional[list] = None  # shapes of the tensor inputs, one list per input
    max_abs_diff: Optional[float] = None  # max |compiled - eager|
    mismatch_fraction: Optional[float] = None  # share of output elements that differ at all
    max_diff_vs_fp64: Optional[float] = None  # max |compiled - fp64 reference|
    eager_max_diff_vs_fp64: Optional[float] = None  # max |eager - fp64 reference|
    compiled_rmse_vs_fp64: Optional[float] = None
    eager_rmse_vs_fp64: Optional[float] = None
    emulated_max_abs_diff: Optional[float] = None  # after emulate_precision_casts = True
    fallback_random_max_abs_diff: Optional[float] = None  # after fallback_random = True
    graphs: Optional[int] = None
    breaks: Optional[int] = None
    recompiles: Optional[int] = None
    fell_back: bool = False  # some frame ran eagerly (recompile limit, swallowed error)
    break_reasons: list = field(default_factory=list)  # Dynamo's reason and source line per graph break
    times: dict = field(default_factory=dict)  # seconds / milliseconds, keys say which
    confirms: list = field(default_factory=list)  # lint codes this check shows are real
    clears: list = field(default_factory=list)  # lint codes this check looked for and did not see
    artifact: Optional[str] = None  # PNG: eager | compiled | amplified difference
    graph_nodes: Optional[int] = None  # FX nodes of the graphs Dynamo captured (the dynamo check; sizes the plan)
    backend: Optional[str] = None  # torch.compile backend: "inductor", or "aot_eager"/"eager" (Dynamo-only)
    repro: Optional[str] = None  # a standalone script that shows this divergence (repro.py)
    explained_by: list = field(default_factory=list)  # findings that can explain a divergence (attribution.py)
    detail: dict = field(default_factory=dict)  # what a repro needs to redo it: the attribute changed, the sizes before

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "CheckResult":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class TargetResult:
    target: str  # "path/to/file.py:Name" or "pkg.mod:Name"
    status: str
    codes: list = field(default_factory=list)  # the lint findings' codes that made it a target
    confirmed: list = field(default_factory=list)
    cleared: list = field(default_factory=list)
    message: str = ""
    inputs: list = field(default_factory=list)  # how each input was made, for the report
    checks: list = field(default_factory=list)  # CheckResult
    wall_s: Optional[float] = None
    built: Optional[str] = None  # the constructor call or factory the target was built with
    inputs_config: Optional[str] = None  # the inputs as a config entry (`inputs = [...]`), to paste
    resolutions: list = field(default_factory=list)  # the sizes it ran at
    trained: Optional[str] = None  # where the project trains it, when it does
    workers: list = field(default_factory=list)  # per worker: stage, wall_s, ready_s, baselines_s, checks_s

    def to_json(self) -> dict:
        data = asdict(self)
        data["checks"] = [c.to_json() if isinstance(c, CheckResult) else c for c in self.checks]
        return data


def left_out(check: CheckResult) -> bool:
    """A check the budget left out (listed, but not a result)."""
    return check.status == NOT_RUN and check.verdict == BUDGET


def target_status(checks: list[CheckResult]) -> str:
    """The most severe of its checks' statuses (skipped when there is none): a target
    whose forward check passed and whose export timed out could not be checked.

    Checks the budget left out do not count, unless they were all the checks that
    compare compiled (or traced) code with eager: a target that only had its Dynamo
    pass is not-run, not pass."""
    ran = [c for c in checks if not left_out(c)]
    status = max((c.status for c in ran), key=_SEVERITY.__getitem__, default=SKIPPED)
    if len(ran) < len(checks) and status in (PASS, SKIPPED) and not any(
            c.status == PASS and c.name != "dynamo" for c in ran):
        return NOT_RUN
    return status


def summarise_codes(checks: list[CheckResult]) -> tuple[list[str], list[str]]:
    """Codes confirmed by any check; codes cleared by some check and confirmed by none."""
    confirmed = sorted({code for c in checks for code in c.confirms})
    cleared = sorted({code for c in checks for code in c.clears} - set(confirmed))
    return confirmed, cleared


def finish(result: TargetResult) -> TargetResult:
    """Fill a target's status and code summary from its checks. Everything that happens
    to a target, a crash or unsynthesisable inputs too, is recorded as a check."""
    result.status = target_status(result.checks)
    result.confirmed, result.cleared = summarise_codes(result.checks)
    return result


def verified(result: TargetResult) -> bool:
    """Compiled code was compared with eager and a verdict reached."""
    return result.status in (PASS, DIVERGED)


def exit_code(results: list[TargetResult], fail_on=DEFAULT_FAIL_ON, allow_nothing_verified: bool = True) -> int:
    """1 when a target's status is one of `fail_on` (default: diverged or error); else
    EXIT_NOTHING_VERIFIED when no target was verified (unless allowed); else 0."""
    if any(r.status in fail_on for r in results):
        return 1
    if not allow_nothing_verified and not any(verified(r) for r in results):
        return EXIT_NOTHING_VERIFIED
    return 0
