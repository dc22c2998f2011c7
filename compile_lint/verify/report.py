"""Reports: text with a progress bar, JSON, JUnit XML. (PNGs are written by the worker,
artifacts.py.) No torch here."""
from __future__ import annotations

import json
import sys
import threading
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Optional, TextIO

from .results import (
    COULD_NOT_CHECK, DIVERGED, ERROR, NOT_RUN, PASS, SKIPPED, STATUSES, CheckResult, TargetResult, left_out,
)

REPORT_VERSION = 1
_NOTABLE_PASSES = ("rounding", "expected-randomness", "recompiles")


def check_label(check: CheckResult) -> str:
    parts = [check.name]
    if check.backend and check.backend != "inductor" and check.name != "dynamo":
        parts.append(f"backend={check.backend}")
    if check.mode:
        parts.append(check.mode)
    if check.dynamic is not None:
        parts.append("dynamic" if check.dynamic else "static")
    if check.dtype:
        parts.append(check.dtype)
    if check.shape:
        parts.append(",".join("x".join(str(d) for d in s) for s in check.shape))
    return " ".join(parts)


# ---- progress ----

class Progress:
    """Progress on stderr while verify runs, whatever the report's format or file: a
    one-line bar on a terminal, else one line per unit of work (a target's stage) as it
    starts and ends (CI logs)."""

    def __init__(self, total: int, stream: TextIO = sys.stderr, enabled: bool = True) -> None:
        self.total = total
        self.done = 0
        self.running: list[str] = []
        self.stream = stream
        self.enabled = enabled and total > 0
        self.bar = enabled and stream.isatty()
        self._lock = threading.Lock()

    @staticmethod
    def _name(unit) -> str:
        from .plan import STAGE_NAMES

        return f"{STAGE_NAMES[unit.stage]} {unit.ref}"

    def start(self, unit) -> None:
        with self._lock:
            self.running.append(self._name(unit))
            if self.bar:
                self._draw()
            elif self.enabled:
                steps = ", ".join(s.label() for s in unit.steps) or "build and run eagerly"
                self._line(f"start {self._name(unit)}: {steps} (~{unit.estimate_s:.0f} s)")

    def finish(self, unit, result: TargetResult) -> None:
        with self._lock:
            self.done += 1
            name = self._name(unit)
            if name in self.running:
                self.running.remove(name)
            if self.bar:
                self._draw()
            elif self.enabled:
                from .results import target_status

                took = f" in {result.wall_s:.0f} s" if result.wall_s is not None else ""
                self._line(f"{target_status(result.checks)} so far: {name}{took}")

    def add(self, count: int = 1) -> None:
        """Units the plan gained while running (sizes a dynamic graph did not cover)."""
        with self._lock:
            self.total += count

    def skip(self, unit=None, why: str = "") -> None:
        """A unit that did not start (the budget, or a target that could not be built):
        said in the log, so that a CI log accounts for every unit."""
        with self._lock:
            self.done += 1
            if self.bar:
                self._draw()
            elif self.enabled and unit is not None and why:
                steps = ", ".join(s.label() for s in unit.steps) or "build and run eagerly"
                self._line(f"{why}: {self._name(unit)}: {steps}")

    def close(self) -> None:
        if self.bar and self.total:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def note(self, text: str) -> None:
        with self._lock:
            if self.bar:
                self.stream.write("\r\033[K")
            self.stream.write(text + "\n")
            self.stream.flush()

    def _line(self, text: str) -> None:
        self.stream.write(f"verify [{self.done}/{self.total}] {text}\n")
        self.stream.flush()

    def _draw(self) -> None:
        width = 24
        filled = width * self.done // max(1, self.total)
        label = self.running[0] if self.running else ""
        self.stream.write(f"\r\033[K[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {label[:60]}")
        self.stream.flush()


# ---- text ----

def text_report(results: list[TargetResult], header: dict, notes: list[str], wall_s: float) -> str:
    lines = [f"verify: {len(results)} target(s) on {header['device']} (torch {header['torch']}), "
             f"modes {', '.join(header['modes'])}"]
    for result in results:
        codes = ""
        if result.confirmed:
            codes += f" confirmed {', '.join(result.confirmed)}"
        if result.cleared:
            codes += f" cleared {', '.join(result.cleared)}"
        count = len(result.checks)
        lines.append(f"{result.status.upper():13} {result.target}  ({count} check{'s' if count != 1 else ''}"
                     f"{', ' + format(result.wall_s, '.0f') + ' s' if result.wall_s is not None else ''})"
                     + (f" [{codes.strip()}]" if codes else ""))
        if result.built:
            lines.append(f"    built: {result.built}")
        if result.inputs:
            sizes = ", ".join(f"{h}x{w}" for h, w in result.resolutions) if result.resolutions else "one fixed shape"
            lines.append(f"    inputs: {'; '.join(result.inputs)} at {sizes}")
            if result.inputs_config:
                lines.append(f"      (as config: {result.inputs_config})")
        lines.extend(_check_lines(result))
        budget = [c for c in result.checks if left_out(c)]
        if budget:
            labels = sorted({c.message.split(": ", 1)[-1].split(" (")[0] for c in budget})
            lines.append(f"    not run (budget): {', '.join(labels)}")
    unbuilt = [r.target for r in results if any(c.verdict in ("cannot-call", "eager-fails") and c.name == "inputs"
                                                 or c.verdict == "cannot-call" for c in r.checks)]
    if unbuilt:
        lines.append(f"could not build {len(unbuilt)} target(s), each with the config entry to add above: "
                     + ", ".join(unbuilt))
    for note in notes:
        lines.append(f"note: {note}")
    counts = Counter(r.status for r in results)
    summary = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s])
    cut = [r.target for r in results if any(left_out(c) for c in r.checks)]
    if cut:
        budget = header.get("budget_s")
        lines.append(f"budget: {len(cut)} target(s) had checks left out by the {budget:.0f} s budget "
                     f"(--budget 0 runs everything): {', '.join(cut)}")
    lines.append(f"summary: {summary or 'nothing to verify'} in {wall_s:.0f} s")
    return "\n".join(lines) + "\n"


def _check_lines(result: TargetResult, limit: int = 8) -> list[str]:
    out = []
    interesting = [c for c in result.checks if (c.status != PASS or c.verdict in _NOTABLE_PASSES or c.breaks)
                   and not left_out(c)]
    # One line per distinct (status, verdict, message) keeps a 20-check target readable.
    seen = set()
    for check in interesting:
        key = (check.status, check.verdict, check.name, check.message.split(":")[0])
        if key in seen:
            continue
        seen.add(key)
        message = (check.message or check.verdict).replace("\n", "\n" + " " * 18)
        out.append(f"    {check.status:13} {check_label(check)}: {message}")
        if check.artifact:
            out.append(f"                  image: {check.artifact}")
        if check.repro:
            out.append(f"                  repro: {check.repro} (plain torch: python {check.repro})")
        for explanation in check.explained_by:
            out.append(f"                  can be explained by: {explanation}")
        if check.status == DIVERGED and not check.explained_by and check.name != "worker":
            out.append("                  no rule explains it: a compiler defect? (see the repro)")
    if len(out) > limit:
        out = out[:limit] + [f"    ... {len(out) - limit} more (see --report json)"]
    latency = next((c for c in result.checks if c.name == "latency" and c.status == PASS), None)
    if latency is not None:
        out.append(f"    latency: {latency.message}")
    return out


# ---- json ----

def json_report(results: list[TargetResult], header: dict, notes: list[str], wall_s: float) -> str:
    counts = Counter(r.status for r in results)
    data = {
        "version": REPORT_VERSION,
        **header,
        "wall_s": round(wall_s, 2),
        "summary": {status: counts[status] for status in STATUSES},
        "notes": notes,
        "targets": [r.to_json() for r in results],
    }
    return json.dumps(data, indent=2) + "\n"


# ---- junit ----

def junit_report(results: list[TargetResult]) -> str:
    """One testsuite per target, one testcase per check: CI test tabs show each check."""
    suites = ET.Element("testsuites", name="compile-lint verify")
    for result in results:
        checks = result.checks or [CheckResult(name="target", status=result.status, verdict="", message=result.message)]
        counts = Counter(c.status for c in checks)
        suite = ET.SubElement(suites, "testsuite", name=result.target, tests=str(len(checks)),
                              failures=str(counts[DIVERGED]), errors=str(counts[ERROR]),
                              skipped=str(counts[SKIPPED] + counts[COULD_NOT_CHECK] + counts[NOT_RUN]),
                              time=f"{result.wall_s or 0:.2f}")
        for check in checks:
            seconds = check.times.get("compile_s", 0.0) if check.times else 0.0
            case = ET.SubElement(suite, "testcase", classname=result.target, name=check_label(check),
                                 time=f"{seconds:.3f}")
            text = _details(check)
            if check.status == DIVERGED:
                ET.SubElement(case, "failure", message=check.message[:300] or check.verdict, type=check.verdict).text = text
            elif check.status == ERROR:
                ET.SubElement(case, "error", message=check.message[:300] or check.verdict, type=check.verdict).text = text
            elif check.status in (SKIPPED, COULD_NOT_CHECK, NOT_RUN):
                ET.SubElement(case, "skipped", message=f"{check.status}: {check.message}"[:300])
            else:
                ET.SubElement(case, "system-out").text = text
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _details(check: CheckResult) -> str:
    fields = ("verdict", "max_abs_diff", "mismatch_fraction", "max_diff_vs_fp64", "eager_max_diff_vs_fp64",
              "emulated_max_abs_diff", "fallback_random_max_abs_diff", "graphs", "breaks", "recompiles",
              "fell_back", "confirms", "clears", "artifact")
    lines = [check.message] if check.message else []
    lines += [f"{name}: {getattr(check, name)}" for name in fields if getattr(check, name) not in (None, [], False)]
    if check.times:
        lines.append(f"times: {check.times}")
    return "\n".join(lines)
