"""`compile-lint verify [PATHS]`: run flagged code eagerly and compiled, and say which
findings are real.

Importing this module must not import torch (the linter's pre-commit path imports the
CLI): torch is imported only by the worker processes that runner.py starts.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import sys
import time
from typing import Optional

import click

from .config import (
    GRADIENT_CHOICES,
    STATUS_NAMES,
    VerifyConfigError,
    VerifyOptions,
    default_modes,
    parse_checks,
    parse_fail_on,
    parse_dtypes,
    parse_dynamic,
    parse_modes,
    parse_resolution,
    parse_budget,
    parse_verify_table,
)
from .plan import describe_plan, plan_target, units_in_order
from .report import Progress, json_report, junit_report, text_report
from .results import EXIT_NOTHING_VERIFIED, exit_code, verified
from .runner import Interrupted, Runner, not_run, probe_torch
from .sites import site_targets
from .targets import (
    TargetPlan,
    add_codes_from_lint,
    add_sites,
    lint,
    merge,
    parse_shard,
    project_files,
    python_files,
    resolve_file,
    shard,
    spec_from_cli,
    targets_from_findings,
)

BUDGET_RESERVE_S = 5.0  # of the budget, kept for writing the report after the last worker stops
NO_TORCH = ("compile-lint verify runs your code eagerly and under torch.compile, so it needs PyTorch: "
            "pip install 'compile-lint[verify]'")


def _fail(message: str) -> None:
    click.echo(f"compile-lint verify: {message}", err=True)
    sys.exit(2)


def _load_options(first_path: str, config_file: Optional[str]) -> VerifyOptions:
    from compile_lint.config import ConfigError, load_config_file, load_config_for

    try:
        settings = load_config_file(config_file) if config_file else load_config_for(first_path)
    except ConfigError as exc:
        raise VerifyConfigError(str(exc)) from None
    where = f"{settings.source} [tool.compile-lint.verify]" if settings.source and settings.source.endswith(
        "pyproject.toml") else f"{settings.source or 'config'} [verify]"
    return parse_verify_table(settings.verify or {}, where=where, root=settings.root)


def _config_syntax(anchor: str, config_file: Optional[str]) -> dict:
    """Where a [[verify.targets]] entry to paste goes, in that file's syntax: the config
    in use, else pyproject.toml when the project has one, else compile-lint.toml."""
    from compile_lint.config import ConfigError, load_config_for
    from compile_lint.project_root import find_project_root

    source = config_file
    if source is None:
        try:
            source = load_config_for(anchor).source
        except ConfigError:
            source = None
    if source is None:
        root = find_project_root(anchor)
        if root and os.path.isfile(os.path.join(root, "pyproject.toml")):
            source = os.path.join(root, "pyproject.toml")
    if source and os.path.basename(source) == "pyproject.toml":
        return {"config_file": source, "targets_table": "[[tool.compile-lint.verify.targets]]"}
    return {"config_file": source or "compile-lint.toml", "targets_table": "[[verify.targets]]"}


def _config_anchor(paths: tuple, targets: tuple) -> str:
    """Where to look for the config: the first path, else the first --target's file."""
    if paths:
        return paths[0]
    for ref in targets:
        location = ref.rpartition(":")[0]
        if location.endswith(".py") and os.path.isfile(location):
            return location
    return os.getcwd()


def _apply_command_line(options: VerifyOptions, **given) -> None:
    if given["modes"]:
        options.modes = parse_modes(given["modes"], "--modes")
    if given["resolutions"]:
        options.resolutions = [parse_resolution(r.strip(), "--resolutions")
                               for r in given["resolutions"].split(",") if r.strip()]
    if given["dtypes"]:
        options.dtypes = parse_dtypes(given["dtypes"], "--dtypes")
    if given["dynamic"]:
        options.dynamic = parse_dynamic(given["dynamic"], "--dynamic")
    if given["checks"]:
        options.checks = parse_checks(given["checks"], "--checks")
    for name in ("timeout", "check_timeout", "jobs", "device", "seed"):
        if given[name] is not None:
            setattr(options, name, given[name])
    options.quick = given["quick"]
    options.full = options.full or given["full"]
    if given["fail_on"]:
        options.fail_on = parse_fail_on(given["fail_on"], "--fail-on")
    if given["strict"]:
        options.fail_on = [s for s in STATUS_NAMES if s != "pass"]
    if given["budget"] is not None:
        options.budget = parse_budget(given["budget"], "--budget")
    if given["gradients"]:
        options.gradients = given["gradients"]
    if given["allow_nothing_verified"]:
        options.allow_nothing_verified = True


def _plan_targets(paths: tuple, explicit: tuple, options: VerifyOptions) -> TargetPlan:
    """--target refs when given (with PATHS, the PATHS' targets too); else every function
    and class of PATHS that a finding or a compile/trace site names, plus config targets."""
    if explicit:
        chosen = [spec_from_cli(ref) for ref in explicit]
        made_by, sites = add_sites(chosen)
        notes = add_codes_from_lint(chosen, made_by)
        # A config entry for the same target says how to call it.
        chosen = merge(chosen, [s for s in options.targets
                                if any(_same_target(s, c) for c in chosen)])
        plan = TargetPlan(chosen, notes, sites)
        if paths:
            found = _found_in(list(paths))
            plan = TargetPlan(merge(found.targets, plan.targets), plan.notes + found.notes, found.sites)
        return plan
    found = _found_in(list(paths) or ["."])
    return TargetPlan(merge(found.targets, [s for s in options.targets if _under(s, paths)]), found.notes,
                      found.sites)


def _found_in(paths: list) -> TargetPlan:
    """Targets of PATHS' compile/trace sites (built and trained as the whole project
    around PATHS does) and of their findings."""
    sites = site_targets(python_files(paths), project_files(paths))
    found = targets_from_findings(lint(paths), sites)
    return TargetPlan(merge(sites.specs, found.targets), found.notes, sites)


def _under(spec, paths: tuple) -> bool:
    """Config targets count when they live under one of PATHS (all of them without PATHS)."""
    if not paths:
        return True
    location = resolve_file(spec)
    if location is None:
        return True  # cannot tell without importing: keep it, the worker will say if it fails
    location = os.path.abspath(location)
    return any(location == os.path.abspath(p) or location.startswith(os.path.abspath(p).rstrip(os.sep) + os.sep)
               for p in paths)


def _same_target(a, b) -> bool:
    return a.qualname == b.qualname and resolve_file(a) == resolve_file(b)


def _job_options(options: VerifyOptions, device: str, artifacts: Optional[str], syntax: dict) -> dict:
    return {
        **syntax,
        "device": device,
        "modes": options.modes,
        "resolutions": options.resolutions,
        "dtypes": options.dtypes,
        "dynamic": list(options.dynamic),
        "checks": options.checks,
        "quick": options.quick,
        "full": options.full,
        "check_timeout": options.check_timeout,
        "atol": options.atol,
        "rtol": options.rtol,
        "fp64_multiplier": options.fp64_multiplier,
        "seed": options.seed,
        "artifacts": os.path.abspath(artifacts) if artifacts else None,
    }


@click.command("verify")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--target", "targets", multiple=True, metavar="REF",
              help="Verify this function or nn.Module class: pkg.module:Name or path/to/file.py:Name (repeatable).")
@click.option("--modes", help="Compile modes, comma-separated (default: 'default'; --full: all the device supports).")
@click.option("--resolutions", help="Input sizes HxW, comma-separated (default 16x16,17x23,2x3).")
@click.option("--dtypes", help="Low-precision dtypes to check every target in, e.g. float16,bfloat16.")
@click.option("--dynamic", type=click.Choice(["both", "static", "dynamic"]), default=None,
              help="Compile with dynamic=False, dynamic=True, or both (default).")
@click.option("--checks", help="Run only these checks, comma-separated.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default=None,
              help="auto: CUDA when available (default).")
@click.option("--timeout", type=click.FloatRange(min=1), default=None,
              help="Seconds per target; then its worker is killed (default 1800).")
@click.option("--check-timeout", type=click.FloatRange(min=1), default=None,
              help="Seconds per check; then it is could-not-check and the next check runs (default 600).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Targets in parallel on CPU.")
@click.option("--gpu-jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Targets in parallel on CUDA.")
@click.option("--shard", "shard_spec", metavar="K/N", help="Run the K-th of N slices of the targets (CI).")
@click.option("--quick", is_flag=True, help="Fewest checks: default mode, static shapes, no gradients/latency.")
@click.option("--full", is_flag=True,
              help="Every compile mode and the latency check (default: mode 'default' only, no latency).")
@click.option("--strict", is_flag=True,
              help="Exit 1 on any status but pass (could-not-check, skipped, not-run too).")
@click.option("--fail-on", "fail_on", metavar="STATUSES",
              help="Statuses that make verify exit 1, comma-separated (default: diverged,error).")
@click.option("--budget", metavar="SECONDS",
              help="Seconds for the whole run, e.g. 600 or 10m (default 600; 0: no budget). Cheapest and most "
                   "telling checks first; what does not fit is not-run (budget).")
@click.option("--gradients", type=click.Choice(GRADIENT_CHOICES), default=None,
              help="Check gradients: auto (default) where the project trains the target, always, or never.")
@click.option("--allow-nothing-verified", is_flag=True,
              help=f"Exit 0, not {EXIT_NOTHING_VERIFIED}, when no target could be verified.")
@click.option("--repro-dir", type=click.Path(file_okay=False),
              help="Write a standalone repro script per divergence here (default: verify-repros/ next to the "
                   "report, or in the current folder).")
@click.option("--no-repro", is_flag=True, help="Write no repro scripts.")
@click.option("--report", "report_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--output-file", type=click.Path(dir_okay=False), help="Write the report here, not to stdout.")
@click.option("--junit-xml", type=click.Path(dir_okay=False), help="Also write a JUnit XML report.")
@click.option("--artifacts", type=click.Path(file_okay=False), help="Write PNGs of divergent image outputs here.")
@click.option("--seed", type=int, default=None, help="Seed for inputs and random numbers (default 0).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Take the verify table from this file instead of the config found above PATHS.")
def verify_command(paths, targets, modes, resolutions, dtypes, dynamic, checks, device, timeout, check_timeout, jobs,
                   gpu_jobs, shard_spec, quick, full, strict, fail_on, budget, gradients, allow_nothing_verified,
                   repro_dir, no_repro, report_format, output_file, junit_xml, artifacts, seed, config_file) -> None:
    """Run the code the linter flags, eagerly and compiled, and report which findings are real."""
    if importlib.util.find_spec("torch") is None:
        _fail(NO_TORCH)
    started = time.monotonic()
    try:
        options = _load_options(_config_anchor(paths, targets), config_file)
        _apply_command_line(options, modes=modes, resolutions=resolutions, dtypes=dtypes, dynamic=dynamic,
                            checks=checks, timeout=timeout, check_timeout=check_timeout, jobs=jobs, device=device,
                            seed=seed, quick=quick, full=full, strict=strict, fail_on=fail_on, budget=budget,
                            gradients=gradients, allow_nothing_verified=allow_nothing_verified)
        for path in paths:
            if not os.path.exists(path):
                raise VerifyConfigError(f"no such file or folder: {path}")
        plan = _plan_targets(paths, targets, options)
        specs = shard(plan.targets, parse_shard(shard_spec))
        from .recorded_inputs import use_recorded_inputs

        use_recorded_inputs(specs)  # shapes a `compile-lint record` run saw, where none are configured
    except VerifyConfigError as exc:
        _fail(str(exc))
        return

    torch_info = probe_torch()
    if not torch_info["ok"]:
        _fail(f"PyTorch failed to import: {torch_info['error']}")
    resolved_device = options.device
    if resolved_device == "auto":
        resolved_device = "cuda" if torch_info["cuda"] else "cpu"
    elif resolved_device == "cuda" and not torch_info["cuda"]:
        _fail("--device cuda: this PyTorch sees no CUDA device")
    header = {
        "torch": torch_info["version"],
        "device": resolved_device,
        "modes": (options.modes or default_modes(resolved_device, options.full))[:1 if options.quick else None],
        "quick": options.quick,
        "full": options.full,
        "fail_on": options.fail_on,
        "shard": shard_spec,
    }
    if not specs:
        click.echo("compile-lint verify: nothing to verify (no findings in a function or class, and no "
                   "[[verify.targets]] in the config)", err=True)

    plans = [plan_target(spec, options, resolved_device) for spec in specs]
    units = units_in_order(plans)
    progress = Progress(len(units))
    for line in describe_plan(plans, resolved_device, options.budget, "verify") if specs else []:
        click.echo(line, err=True)
    header["budget_s"] = options.budget
    parallel = options.jobs if resolved_device == "cpu" else gpu_jobs
    syntax = _config_syntax(_config_anchor(paths, targets), config_file)
    # the run must be over, report written, within the budget: stop the work a little before
    deadline = time.time() + options.budget - (time.monotonic() - started) - BUDGET_RESERVE_S if options.budget \
        else None
    runner = Runner(_job_options(options, resolved_device, artifacts, syntax), parallel, options.timeout,
                    on_done=progress.finish, on_start=progress.start, deadline=deadline, budget=options.budget,
                    on_skip=progress.skip, on_added=progress.add)
    interrupted = None
    with _stopped_by_signals() as signalled:
        try:
            results = runner.run(plans)
        except (Interrupted, KeyboardInterrupt) as exc:
            interrupted = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
            results = getattr(exc, "results", None) or [not_run(spec, "interrupted before it started") for spec in specs]
        signalled.append(None)  # the run is over: a signal from now on would only cut the report short
        progress.close()
        _explain_and_repro(results, specs, plan, runner, paths, report_dir=_repro_folder(repro_dir, output_file),
                           enabled=not no_repro and interrupted is None)
        wall_s = time.monotonic() - started

        render = json_report if report_format == "json" else text_report
        notes = plan.notes + ([f"interrupted by {signal.Signals(interrupted).name}: targets not finished are not-run"]
                              if interrupted else [])
        text = render(results, header, notes, wall_s)
        if output_file:
            with open(output_file, "w", encoding="utf-8") as fh:
                fh.write(text)
        else:
            click.echo(text, nl=False)
        if junit_xml:
            with open(junit_xml, "w", encoding="utf-8") as fh:
                fh.write(junit_report(results))
        if interrupted:
            click.echo(f"compile-lint verify: interrupted by {signal.Signals(interrupted).name}", err=True)
            sys.exit(128 + interrupted)
        code = exit_code(results, options.fail_on, options.allow_nothing_verified)
        if code == EXIT_NOTHING_VERIFIED:
            click.echo(f"compile-lint verify: nothing was verified ({len(results)} target(s), none passed or diverged); "
                       f"exit {EXIT_NOTHING_VERIFIED} (--allow-nothing-verified exits 0)", err=True)
        sys.exit(code)


def _repro_folder(repro_dir: Optional[str], output_file: Optional[str]) -> str:
    if repro_dir:
        return repro_dir
    return os.path.join(os.path.dirname(os.path.abspath(output_file)) if output_file else os.getcwd(), "verify-repros")


def _explain_and_repro(results: list, specs: list, plan: TargetPlan, runner: Runner, paths: tuple, report_dir: str,
                       enabled: bool) -> None:
    """Name the findings that can explain each divergence, and write a repro for each."""
    from .attribution import attribute
    from .repro import write_repros

    by_ref = {spec.ref: spec for spec in specs}
    attribute(results, by_ref, plan.sites, list(paths))
    if enabled:
        write_repros(results, {ref: spec.to_json() for ref, spec in by_ref.items()}, runner.state, runner.options,
                     report_dir)


@contextlib.contextmanager
def _stopped_by_signals():
    """While the block runs, the first SIGTERM/SIGINT raises Interrupted and later ones
    (or any once the yielded list is not empty) are ignored, so the report is written
    whole. The handlers from before are back when the block ends, exit included: a
    caller in the same process (a notebook, a test) that runs verify again gets its
    Ctrl-C back, which a handler left at SIG_IGN and a module-level flag had taken."""
    signalled: list = []

    def raise_interrupted(signum, frame) -> None:
        if signalled:
            return
        signalled.append(signum)
        raise Interrupted(signum)

    previous = {signum: signal.signal(signum, raise_interrupted) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield signalled
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
