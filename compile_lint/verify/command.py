"""`compile-lint verify [PATHS]`: run flagged code eagerly and compiled, and say which
findings are real.

Importing this module must not import torch (the linter's pre-commit path imports the
CLI): torch is imported only by the worker processes that runner.py starts.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import time
from typing import Optional

import click

from .config import (
    CPU_MODES,
    CUDA_ONLY_MODES,
    VerifyConfigError,
    VerifyOptions,
    parse_checks,
    parse_dtypes,
    parse_dynamic,
    parse_modes,
    parse_resolution,
    parse_verify_table,
)
from .report import Progress, json_report, junit_report, text_report
from .results import exit_code
from .runner import Runner, probe_torch
from .targets import (
    TargetPlan,
    add_codes_from_lint,
    lint,
    merge,
    parse_shard,
    resolve_file,
    shard,
    spec_from_cli,
    targets_from_findings,
)

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
    for name in ("timeout", "jobs", "device", "seed"):
        if given[name] is not None:
            setattr(options, name, given[name])
    options.quick = given["quick"]


def _plan_targets(paths: tuple, explicit: tuple, options: VerifyOptions) -> TargetPlan:
    if explicit:
        chosen = [spec_from_cli(ref) for ref in explicit]
        notes = add_codes_from_lint(chosen)
        # A config entry for the same target says how to call it.
        chosen = merge(chosen, [s for s in options.targets
                                if any(_same_target(s, c) for c in chosen)])
        plan = TargetPlan(chosen, notes)
        if paths:
            found = targets_from_findings(lint(list(paths)))
            plan = TargetPlan(merge(found.targets, plan.targets), plan.notes + found.notes)
        return plan
    found = targets_from_findings(lint(list(paths) or ["."]))
    return TargetPlan(merge(found.targets, [s for s in options.targets if _under(s, paths)]), found.notes)


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


def _job_options(options: VerifyOptions, device: str, artifacts: Optional[str]) -> dict:
    return {
        "device": device,
        "modes": options.modes,
        "resolutions": options.resolutions,
        "dtypes": options.dtypes,
        "dynamic": list(options.dynamic),
        "checks": options.checks,
        "quick": options.quick,
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
@click.option("--modes", help="Compile modes, comma-separated (default: all the device supports).")
@click.option("--resolutions", help="Input sizes HxW, comma-separated (default 16x16,17x23,2x3).")
@click.option("--dtypes", help="Low-precision dtypes to check every target in, e.g. float16,bfloat16.")
@click.option("--dynamic", type=click.Choice(["both", "static", "dynamic"]), default=None,
              help="Compile with dynamic=False, dynamic=True, or both (default).")
@click.option("--checks", help="Run only these checks, comma-separated.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default=None,
              help="auto: CUDA when available (default).")
@click.option("--timeout", type=click.FloatRange(min=1), default=None, help="Seconds per target (default 600).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Targets in parallel on CPU.")
@click.option("--gpu-jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Targets in parallel on CUDA.")
@click.option("--shard", "shard_spec", metavar="K/N", help="Run the K-th of N slices of the targets (CI).")
@click.option("--quick", is_flag=True, help="Fewest checks: default mode, static shapes, no gradients/latency.")
@click.option("--report", "report_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--output-file", type=click.Path(dir_okay=False), help="Write the report here, not to stdout.")
@click.option("--junit-xml", type=click.Path(dir_okay=False), help="Also write a JUnit XML report.")
@click.option("--artifacts", type=click.Path(file_okay=False), help="Write PNGs of divergent image outputs here.")
@click.option("--seed", type=int, default=None, help="Seed for inputs and random numbers (default 0).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Take the verify table from this file instead of the config found above PATHS.")
def verify_command(paths, targets, modes, resolutions, dtypes, dynamic, checks, device, timeout, jobs, gpu_jobs,
                   shard_spec, quick, report_format, output_file, junit_xml, artifacts, seed, config_file) -> None:
    """Run the code the linter flags, eagerly and compiled, and report which findings are real."""
    if importlib.util.find_spec("torch") is None:
        _fail(NO_TORCH)
    started = time.monotonic()
    try:
        options = _load_options(_config_anchor(paths, targets), config_file)
        _apply_command_line(options, modes=modes, resolutions=resolutions, dtypes=dtypes, dynamic=dynamic,
                            checks=checks, timeout=timeout, jobs=jobs, device=device, seed=seed, quick=quick)
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
        "modes": (options.modes or list(CPU_MODES + (CUDA_ONLY_MODES if resolved_device == "cuda" else ())))[
            :1 if options.quick else None],
        "quick": options.quick,
        "shard": shard_spec,
    }
    if not specs:
        click.echo("compile-lint verify: nothing to verify (no findings in a function or class, and no "
                   "[[verify.targets]] in the config)", err=True)

    progress = Progress(len(specs), enabled=None if report_format == "text" else False)
    parallel = options.jobs if resolved_device == "cpu" else gpu_jobs
    runner = Runner(_job_options(options, resolved_device, artifacts), parallel, options.timeout,
                    on_done=progress.finish, on_start=progress.start)
    try:
        results = runner.run(specs)
    except KeyboardInterrupt:
        progress.close()
        _fail("interrupted")
        return
    progress.close()
    wall_s = time.monotonic() - started

    render = json_report if report_format == "json" else text_report
    text = render(results, header, plan.notes, wall_s)
    if output_file:
        with open(output_file, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        click.echo(text, nl=False)
    if junit_xml:
        with open(junit_xml, "w", encoding="utf-8") as fh:
            fh.write(junit_report(results))
    sys.exit(exit_code(results))
