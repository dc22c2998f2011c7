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

    def to_json(self) -> dict:
        data = asdict(self)
        data["checks"] = [c.to_json() if isinstance(c, CheckResult) else c for c in self.checks]
        return data


def target_status(checks: list[CheckResult]) -> str:
    """The most severe of its checks' statuses (skipped when there is none): a target
    whose forward check passed and whose export timed out could not be checked."""
    return max((c.status for c in checks), key=_SEVERITY.__getitem__, default=SKIPPED)


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


def exit_code(results: list[TargetResult], fail_on=DEFAULT_FAIL_ON) -> int:
    """1 when a target's status is one of `fail_on` (default: diverged or error), else 0."""
    return 1 if any(r.status in fail_on for r in results) else 0
