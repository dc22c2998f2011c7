"""The `compile-lint record [OPTIONS] -- COMMAND [ARGS]...` command."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile

import click

from . import break_hooks, recorder

SITECUSTOMIZE = '''\
# Written by `compile-lint record`: loads its recorder, then the sitecustomize this shadows.
import os as _os
import sys as _sys

try:
    import _compile_lint_recorder

    _compile_lint_recorder.install()
except Exception as _exc:  # never stop the program
    _sys.stderr.write(f"compile-lint record: recorder not loaded: {_exc}\\n")


def _chain():
    import importlib.machinery
    import importlib.util

    here = _os.path.dirname(_os.path.abspath(__file__))
    rest = [p for p in _sys.path if _os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None and spec.origin != __file__:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_chain()
'''


def _bootstrap(folder: str) -> str:
    """A folder with sitecustomize.py and the recorder, to go first on PYTHONPATH."""
    boot = os.path.join(folder, "bootstrap")
    os.makedirs(boot)
    shutil.copyfile(recorder.__file__, os.path.join(boot, "_compile_lint_recorder.py"))
    shutil.copyfile(break_hooks.__file__, os.path.join(boot, "_compile_lint_break_hooks.py"))
    with open(os.path.join(boot, "sitecustomize.py"), "w", encoding="utf-8") as fh:
        fh.write(SITECUSTOMIZE)
    return boot


def _project_root() -> tuple[str, object]:
    from ..config import load_config_for
    from ..project_root import find_project_root

    settings = load_config_for(os.getcwd())
    return find_project_root(os.getcwd(), settings) or os.getcwd(), settings


def run_recorded(command: list[str], output: str, root: str, fresh: bool, eager: bool, max_shapes: int) -> tuple[int, list, int]:
    """Run `command` with the recorder in every Python process; merge what they saw
    into `output`. Returns (exit status, merged sites, recorder errors)."""
    from .merge import read_partials, rebase, write_recording

    work = tempfile.mkdtemp(prefix="compile-lint-record-")
    try:
        boot = _bootstrap(work)
        partials = os.path.join(work, "partials")
        os.makedirs(partials)
        env = dict(os.environ)
        env["PYTHONPATH"] = boot + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env[recorder.ENV_DIR] = partials
        env[recorder.ENV_ROOT] = root
        env[recorder.ENV_MAX_SHAPES] = str(max_shapes)
        if eager:
            env[recorder.ENV_EAGER] = "1"
        else:
            env.pop(recorder.ENV_EAGER, None)
        status = _run(command, env)
        groups, errors = read_partials(partials)
        for sites in groups:
            rebase(sites, root, os.path.dirname(os.path.abspath(output)))
        sites = write_recording(output, groups, fresh, max_shapes)
        return status, sites, errors
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(command: list[str], env: dict) -> int:
    """The command's exit status (128+N when killed by signal N); SIGTERM/SIGHUP sent to
    compile-lint are passed on, and on Linux the command is killed if compile-lint is
    killed outright (compile_lint/children.py), so it never outlives it."""
    from ..children import _prctl_pdeathsig

    def arm() -> None:  # in the child, before exec: the kernel kills it if we die (Linux)
        _prctl_pdeathsig(signal.SIGKILL)

    try:
        child = subprocess.Popen(command, env=env, preexec_fn=arm if sys.platform.startswith("linux") else None)
    except FileNotFoundError:
        raise click.UsageError(f"command not found: {command[0]}") from None
    except OSError as exc:
        raise click.UsageError(f"cannot run {command[0]}: {exc.strerror or exc}") from None

    def forward(signum, _frame):
        if child.poll() is None:
            child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        while True:
            try:
                status = child.wait()
                break
            except KeyboardInterrupt:  # the child got SIGINT too (same process group)
                continue
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if child.poll() is None:
            child.kill()
            child.wait()
    return 128 - status if status < 0 else status


@click.command("record", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write here instead of compile-lint-regions.json at the project root.")
@click.option("--fresh", is_flag=True, help="Start a new recording instead of merging into the existing file.")
@click.option("--eager-backend", is_flag=True, help='Compile with backend="eager": records regions, shapes and graph breaks without code generation (fast; numerics are eager\'s).')
@click.option("--max-shapes", type=click.IntRange(min=1, max=1000), default=16, show_default=True, help="Distinct input shapes kept per site.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def record_command(output, fresh, eager_backend, max_shapes, command):
    """Run COMMAND (after `--`) and record what it compiles and traces.

    Every Python process the command starts loads a recorder (children, multiprocessing
    workers, torchrun ranks, pytest workers included) that notes each torch.compile,
    Module.compile, jit.trace, fx.symbolic_trace, export and onnx.export: the target, the
    options, the input shapes seen, graphs, recompiles and graph breaks. The result goes to
    compile-lint-regions.json at the project root (commit it: `check` reads it, and never
    needs torch). The command's exit status is passed through.
    """
    from ..analysis.reach.declared import REGIONS_FILE, DeclarationError
    from ..cli import EXIT_ERROR, _error
    from ..config import ConfigError

    try:
        root, settings = _project_root()
    except ConfigError as exc:
        _error(str(exc))
        sys.exit(EXIT_ERROR)
    if output is None:
        chosen = getattr(settings, "regions_file", None)
        output = os.path.join(settings.root, chosen) if chosen else os.path.join(root, REGIONS_FILE)
    output = os.path.abspath(output)
    if not os.path.isdir(os.path.dirname(output)):
        _error(f"--output: folder {os.path.dirname(output)} does not exist")
        sys.exit(EXIT_ERROR)
    try:
        status, sites, errors = run_recorded(list(command), output, root, fresh, eager_backend, max_shapes)
    except DeclarationError as exc:
        _error(str(exc))
        sys.exit(EXIT_ERROR)
    except OSError as exc:
        _error(f"cannot write {output}: {exc.strerror or exc}")
        sys.exit(EXIT_ERROR)
    shown = os.path.relpath(output) if not os.path.relpath(output).startswith("..") else output
    compiled = sum(1 for s in sites if s["kind"] == "compiled")
    click.echo(f"compile-lint record: {len(sites)} site{'s' * (len(sites) != 1)} ({compiled} compiled, "
               f"{len(sites) - compiled} traced) in {shown}", err=True)
    if errors:
        click.echo(f"compile-lint record: the recorder skipped {errors} event{'s' * (errors != 1)} it could not read", err=True)
    for line in break_report(sites, os.path.dirname(output), root):
        click.echo(line, err=True)
    sys.exit(status)


def break_report(sites: list, folder: str, root: str) -> list[str]:
    """Each graph break the run took (official ID, user line; data-dependent jumps
    included), then each static graph-break finding marked confirmed, compiled without a
    break, or not reached (the findings `check` gives with this recording)."""
    seen = {}
    for site in sites:
        for brk in (site.get("seen") or {}).get("breaks") or ():
            if brk.get("path"):
                key = (brk["path"], brk["row"], str(brk.get("id") or "?"))
                seen[key] = seen.get(key) or brk
    cwd = os.getcwd()

    def shown(path: str) -> str:
        rel = os.path.relpath(path, cwd)
        return path if rel.startswith("..") else rel

    lines = []
    if seen:
        lines.append(f"compile-lint record: {len(seen)} graph break{'s' * (len(seen) != 1)} (ID, user line):")
        for (path, row, gb), brk in sorted(seen.items()):
            eager = " (the frame ran eagerly)" if brk.get("frame_to_eager") else ""
            lines.append(f"  {shown(os.path.join(folder, path))}:{row}: {gb} {brk.get('gb_type', '')}{eager}")
    findings = _static_findings(root)
    if findings:
        counts: dict[str, int] = {}
        for f in findings:
            counts[f.graph_break.recorded.split()[0]] = counts.get(f.graph_break.recorded.split()[0], 0) + 1
        lines.append("compile-lint record: static graph-break findings: " + ", ".join(
            f"{counts.get(k, 0)} {label}" for k, label in (("confirmed", "confirmed"), ("compiled", "compiled without a break"),
                                                          ("not", "not reached"))))
        for f in findings:
            lines.append(f"  {shown(f.path)}:{f.start.row}: {f.code} {f.graph_break.gb_id} {f.graph_break.recorded}")
    return lines


def _static_findings(root: str) -> list:
    """The graph-break family's findings in the project, with what the recording saw."""
    from ..api import lint_paths
    from ..engine import Selection
    from ..rules import all_rules

    family = tuple(code for code, rule in all_rules().items() if rule.graph_break_ids)
    try:
        found = lint_paths([root], Selection(select=family))
    except Exception as exc:  # the recording is written; a lint problem is reported, not raised
        click.echo(f"compile-lint record: could not check the findings: {exc}", err=True)
        return []
    return sorted((f for f in found if f.graph_break is not None and f.graph_break.recorded),
                  key=lambda f: (f.path, f.start.row, f.start.column))
