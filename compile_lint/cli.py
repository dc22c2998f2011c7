"""The command line: check, fix, rules, rule, verify.

Exit codes: 0 nothing found (or all fixed), 1 findings remain (or `fix --diff` would
change files), 2 usage, configuration or internal error. Errors are one line on
stderr, never a traceback (set COMPILE_LINT_DEBUG=1 to see one).
"""
from __future__ import annotations

import gc
import os
import sys
from typing import Optional

import click

from . import __version__
from .config import ConfigError, Settings, check_version, load_config_file, load_config_for
from .report import FORMATS, display_path, render

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UserError(Exception):
    pass


def _split_codes(values) -> Optional[tuple[str, ...]]:
    if not values:
        return None
    out = []
    for value in values:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return tuple(out)


def _error(message: str) -> None:
    click.echo(f"compile-lint: error: {message}", err=True)


def common_options(func):
    options = [
        click.argument("paths", nargs=-1, type=click.Path()),
        click.option("--select", multiple=True, help="Rules to enable (codes, prefixes like CL5, or ALL); replaces the config's select."),
        click.option("--extend-select", multiple=True, help="Rules to enable on top of the selection."),
        click.option("--ignore", multiple=True, help="Rules to disable."),
        click.option("--output-format", type=click.Choice(FORMATS), default=None, help="How findings are printed (default: text)."),
        click.option("--output-file", "-o", type=click.Path(dir_okay=False), help="Write the report here instead of stdout."),
        click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain."),
        click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Use this config file for every path."),
        click.option("--target-torch", help="Torch version to check config keys against (e.g. 2.13)."),
        click.option("--force-exclude", is_flag=True, help="Apply exclusions to paths named on the command line too."),
        click.option("--stdin-filename", help="The name of the file read from stdin (`-`)."),
        click.option("--no-cache", is_flag=True, help="Do not read or write the results cache."),
        click.option("--no-project", is_flag=True, help="Build the region index from the given files only, not from their whole project."),
        click.option("--jobs", "-j", type=click.IntRange(min=0), default=None, help="Worker processes (default: all cores; 1 for none)."),
        click.option("--exclude", multiple=True, help="Files and folders to leave out (gitignore-style globs); replaces the config's exclude."),
        click.option("--extend-exclude", multiple=True, help="Files and folders to leave out, on top of the config's exclude."),
        click.option("--per-file-ignores", multiple=True, metavar="PATTERN:CODES", help="Rules to disable in files matching PATTERN; replaces the config's per-file-ignores."),
        click.option("--extend-per-file-ignores", multiple=True, metavar="PATTERN:CODES", help="Like --per-file-ignores, on top of the config's."),
        click.option("--statistics", is_flag=True, help="Show how many findings each rule has instead of the findings."),
        click.option("--show-fixes", is_flag=True, help="List the findings fixed, by file and rule."),
        click.option("--quiet", "-q", is_flag=True, help="Print the findings and nothing else (no summary line)."),
        click.option("--silent", "-s", is_flag=True, help="Print nothing; the exit code tells."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _patterns(values) -> tuple[str, ...]:
    return tuple(p.strip() for value in values or () for p in value.split(",") if p.strip())


def _per_file_ignores(values) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`PATTERN:CODE,CODE` (as Ruff's --per-file-ignores) -> the config's shape."""
    from .rules import UnknownSelector, expand_selector

    out = []
    for value in values or ():
        pattern, sep, codes = value.rpartition(":")
        if not sep or not pattern.strip() or not codes.strip():
            raise UserError(f"--per-file-ignores {value!r}: expected PATTERN:CODES, such as 'tests/*:CL5'")
        parsed = tuple(c.strip() for c in codes.split(",") if c.strip())
        try:
            for code in parsed:
                expand_selector(code)
        except UnknownSelector as exc:
            raise UserError(f"--per-file-ignores {value!r}: {exc}") from None
        out.append((pattern.strip(), parsed))
    return tuple(out)


class Run:
    """What check and fix share: settings, selection, files, the linter."""

    def __init__(self, opts: dict):
        from .engine import Selection

        self.opts = opts
        self.cwd = os.getcwd()
        if opts.get("target_torch"):
            check_version(opts["target_torch"])
        select = _split_codes(opts.get("select"))
        extend = _split_codes(opts.get("extend_select")) or ()
        ignore = _split_codes(opts.get("ignore")) or ()
        if select or extend or ignore:
            from .rules import UnknownSelector, expand_selector

            try:
                for sel in (select or ()) + extend + ignore:
                    expand_selector(sel)
            except UnknownSelector as exc:
                raise UserError(str(exc)) from None
        self.selection = Selection(select, extend, ignore, opts.get("target_torch"))
        if opts.get("config_file"):
            fixed = load_config_file(opts["config_file"])
            self.settings_for = lambda _path: fixed
        else:
            self.settings_for = load_config_for
        overrides = self._overrides(opts)
        if overrides:
            self.settings_for = _overridden(self.settings_for, overrides)
        self.fmt = opts.get("output_format") or "text"
        self._cache = None
        self._memo = None
        self.discovery: dict = {}  # what the folder walks did (for COMPILE_LINT_STATS)

    @staticmethod
    def _overrides(opts: dict):
        """Settings given on the command line: {field: function of the config's value}."""
        out = {}
        if opts.get("exclude"):
            given = _patterns(opts["exclude"])
            out["exclude"] = lambda _old: given
        if opts.get("extend_exclude"):
            extra = _patterns(opts["extend_exclude"])
            out["extend_exclude"] = lambda old: tuple(old) + extra
        if opts.get("per_file_ignores"):
            table = _per_file_ignores(opts["per_file_ignores"])
            out["per_file_ignores"] = lambda _old: table
        if opts.get("extend_per_file_ignores"):
            more = _per_file_ignores(opts["extend_per_file_ignores"])
            previous = out.get("per_file_ignores", lambda old: tuple(old))
            out["per_file_ignores"] = lambda old: previous(old) + more
        return out

    def cache(self):
        """The results cache (None with --no-cache)."""
        if self._cache is None and not self.opts.get("no_cache") and not os.environ.get("COMPILE_LINT_NO_CACHE"):
            from .cache import ResultsCache

            self._cache = ResultsCache(cache_root(self.opts))
        return self._cache

    def folder_memo(self):
        """What earlier folder walks found (discovery.FolderMemo), from the cache."""
        if self._memo is None and self.cache() is not None:
            from .discovery import FolderMemo

            self._memo = FolderMemo(self.cache().load_tree())
        return self._memo

    def save_folder_memo(self) -> None:
        if self._memo is None:
            return
        self.discovery.update(folders_reused=self._memo.reused, folders_listed=self._memo.listed)
        if self._memo.learned:
            self._cache.store_tree(self._memo.everything())
            self._memo.known, self._memo.learned = self._memo.everything(), {}

    def files(self) -> tuple[list[str], Optional[tuple[str, bytes]], list[tuple[str, str]]]:
        from .discovery import find_files

        paths = list(self.opts.get("paths") or ())
        stdin = None
        if "-" in paths:
            paths.remove("-")
            name = self.opts.get("stdin_filename") or "-"
            stdin = (os.path.abspath(name) if name != "-" else "-", sys.stdin.buffer.read())
            if name.endswith(".ipynb"):  # the reports map its rows to cells
                from .notebook import NotebookError, remember

                try:
                    remember(stdin[0], stdin[1])
                except NotebookError:
                    pass  # linting it reports what is wrong
        elif not paths:
            paths = ["."]
        if not paths and stdin is not None:
            return [], stdin, []
        found = find_files(paths, self.settings_for, bool(self.opts.get("force_exclude")), self.folder_memo())
        self.save_folder_memo()
        if stdin is not None and stdin[0] != "-" and self.opts.get("force_exclude"):
            from .discovery import is_excluded

            if is_excluded(stdin[0], self.settings_for(stdin[0]), False):
                stdin = None
        return found.files, stdin, found.errors

    def linter(self):
        from .engine import Linter

        jobs = self.opts.get("jobs")
        linter = Linter(self.settings_for, self.selection, jobs=jobs or 0, cache=self.cache())
        linter.discovery = self.discovery
        return linter

    def lint(self, linter, files: list[str], stdin: Optional[tuple[str, bytes]]):
        """Lint `files` (and stdin) within their project: the region index also covers
        the project's other files (summarized only), so a partial run reports what a
        whole-project run reports for those files."""
        context = [] if self.opts.get("no_project") else self.project_files(files, stdin)
        if self._memo is not None:
            linter.folder_states = self._memo.folders  # one stat per folder for the whole run
        return linter.lint(files, stdin=stdin, context=context)

    def project_files(self, files: list[str], stdin: Optional[tuple[str, bytes]]) -> list[str]:
        """The files of the projects around the given paths that the run does not lint."""
        from .discovery import find_files
        from .project_root import find_project_root

        given = [p for p in (self.opts.get("paths") or ()) if p != "-"] or ([] if stdin else ["."])
        if stdin is not None and stdin[0] != "-":
            given.append(stdin[0])
        roots = []
        for path in given:
            root = find_project_root(path, self.settings_for(os.path.abspath(path)))
            if root is None or root in roots:
                continue
            if os.path.isdir(path) and os.path.abspath(path) == root:
                continue  # the whole project is linted already
            roots.append(root)
        if not roots:
            return []
        linted = {os.path.abspath(p) for p in files} | ({os.path.abspath(stdin[0])} if stdin else set())
        found = find_files(roots, self.settings_for, False, self.folder_memo())
        self.save_folder_memo()
        return [p for p in found.files if p not in linted]  # absolute already: find_files walked absolute roots

    def emit(self, text: str) -> None:
        target = self.opts.get("output_file")
        if target:
            try:
                with open(target, "w", encoding="utf-8") as fh:
                    fh.write(text)
            except OSError as exc:
                raise UserError(f"cannot write {target}: {exc.strerror or exc}") from None
        else:
            click.echo(text, nl=False, color=self.color())

    def color(self) -> bool:
        """Colors on a terminal; NO_COLOR (set and not empty) turns them off, FORCE_COLOR
        (set and not empty) on where stdout is not a terminal (CI logs), as Ruff reads them."""
        if self.opts.get("output_file") or os.environ.get("NO_COLOR"):
            return False
        return bool(os.environ.get("FORCE_COLOR")) or sys.stdout.isatty()


def _overridden(settings_for, overrides: dict):
    """settings_for with the command line's settings applied; one object per config's
    Settings (the engine and the folder walk key on their identity)."""
    from dataclasses import replace

    made: dict[int, tuple] = {}

    def settings(path: str) -> Settings:
        base = settings_for(path)
        known = made.get(id(base))
        if known is None or known[0] is not base:
            known = made[id(base)] = (base, replace(base, **{name: change(getattr(base, name)) for name, change in overrides.items()}))
        return known[1]

    return settings


def cache_root(opts: dict) -> str:
    """The project root, where `.compile_lint_cache/` lives: the folder of the config
    file (--config, else the one that applies to the current folder, else to the first
    path), else the current folder."""
    from .cache import project_root

    cwd = os.getcwd()
    source = None
    if opts.get("config_file"):
        source = opts["config_file"]
    else:
        for path in [cwd] + [p for p in (opts.get("paths") or ()) if p != "-"][:1]:
            source = load_config_for(path).source
            if source:
                break
    return project_root(source, cwd)


def _guard(func):
    """Turn user errors into one line and exit 2; never show a traceback."""

    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (UserError, ConfigError) as exc:
            _error(str(exc))
            sys.exit(EXIT_ERROR)
        except click.exceptions.Exit:
            raise
        except KeyboardInterrupt:
            _error("interrupted")
            sys.exit(130)
        except Exception as exc:  # pragma: no cover - the last line of defence
            if os.environ.get("COMPILE_LINT_DEBUG"):
                raise
            _error(f"internal error: {type(exc).__name__}: {exc} (set COMPILE_LINT_DEBUG=1 for a traceback, and please report it)")
            sys.exit(EXIT_ERROR)

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper


class LazyGroup(click.Group):
    """Imports `verify` and `record` only when they run: check/fix stay free of their imports."""

    lazy = {
        "verify": ("compile_lint.verify.command", "verify_command"),
        "record": ("compile_lint.record.command", "record_command"),
    }

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx, name):
        if name in self.lazy and name not in self.commands:
            module, attr = self.lazy[name]
            try:
                import importlib

                return getattr(importlib.import_module(module), attr)
            except ImportError as exc:
                _error(f"`{name}` is not available in this install: {exc}")
                sys.exit(EXIT_ERROR)
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="compile-lint")
def cli():
    """Find, fix and prove PyTorch code that changes meaning under torch.compile,
    torch.jit.trace and torch.export."""


def _report_warnings(linter) -> None:
    for message in getattr(linter, "warnings", ()):
        click.echo(f"compile-lint: warning: {message}", err=True)


def _report_errors(errors) -> bool:
    for path, message in errors:
        _error(f"{path}: {message}")
    return bool(errors)


@cli.command()
@common_options
@click.option("--fix/--no-fix", "fix", default=False, help="Apply the safe fixes (as `compile-lint fix`).")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix, also apply the fixes that may change behaviour.")
@click.option("--fix-only", is_flag=True, help="Apply the fixes and report nothing that is left (exit 0). Implies --fix.")
@click.option("--diff", is_flag=True, help="Write nothing; print what the fixes would change as a unified diff (exit 1 if any). Implies --fix-only.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to every line with a finding, instead of reporting them.")
@click.option("--watch", "-w", is_flag=True, help="Check again whenever a file changes (Ctrl-C ends).")
@_guard
def check(**opts):
    """Lint PATHS (default: the current folder)."""
    global _checked
    if opts["watch"]:
        _watch(opts)
        return
    _checked = True
    # A check is short and leaves no reference cycles behind (engine.py): the cyclic GC
    # would only walk the cache's records again and again.
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        code = _lint_run(opts)
    finally:
        if gc_was_on:
            gc.enable()
    sys.exit(code)


@cli.command()
@common_options
@click.option("--diff", is_flag=True, help="Write nothing; print the changes as a unified diff (exit 1 if any).")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that may change eager numerics, checkpoint keys or an API.")
@_guard
def fix(**opts):
    """Apply the safe fixes (and with --unsafe-fixes the unsafe ones) to PATHS."""
    sys.exit(_lint_run(dict(opts, fix=True)))


def _lint_run(opts: dict) -> int:
    """One check (or fix) as the options say; the exit code. With COMPILE_LINT_STATS, its
    stats line covers the whole command: the lint's stages, then fixing (`fix_s`,
    `edits_*`) and the report (`report_s`), and `command_s` from start to end."""
    import time

    started, cpu = time.perf_counter(), time.process_time()
    phases: dict = {}
    linter_box: list = []
    try:
        return _lint_run_timed(opts, phases, linter_box)
    finally:
        if os.environ.get("COMPILE_LINT_STATS") and linter_box:
            from .engine import write_stats

            write_stats({**linter_box[0].stats, **phases, "command": "fix" if opts.get("fix") else "check",
                         "format": opts.get("output_format") or "text", "command_s": round(time.perf_counter() - started, 3),
                         "command_cpu_s": round(time.process_time() - cpu, 3)})


def _lint_run_timed(opts: dict, phases: dict, linter_box: list) -> int:
    import time

    from .report.text import Summary

    fixing = bool(opts.get("fix") or opts.get("fix_only") or opts.get("diff"))
    run = Run(opts)
    files, stdin, found_errors = run.files()
    linter = run.linter()
    linter.defer_stats = True
    linter.edits = fixing or (run.fmt in ("json", "json-lines", "sarif") and not opts.get("statistics"))
    linter_box.append(linter)
    results = run.lint(linter, files, stdin)
    phases["lint_s"] = linter.stats.get("wall_s")
    t_after = time.perf_counter()
    _report_warnings(linter)
    io_errors = list(found_errors) + [(r.path, r.error) for r in results if r.error and r.error_kind == "io"]
    errors = [(r.path, r.error) for r in results if r.error and r.error_kind != "io"]
    io_findings, unreported = _io_findings(linter, io_errors)
    errors += unreported
    if opts.get("add_noqa"):
        return _add_noqa(run, results, errors)
    fixed_count, applied, diffs = 0, [], []
    if fixing:
        from .fixer import fix_files

        outcome = fix_files(linter, results, stdin, bool(opts.get("unsafe_fixes")), write=not opts.get("diff"))
        phases["fix_s"] = round(time.perf_counter() - t_after, 3)
        phases["files_fixed"] = len(outcome.outcomes)
        t_after = time.perf_counter()
        errors += outcome.errors
        findings, fixed_count, applied = outcome.remaining, outcome.fixed_count, outcome.applied
        if opts.get("diff"):
            diffs = [_notebook_diff(o, run.cwd) if o.path.endswith(".ipynb") else _unified_diff(o, run.cwd) for o in outcome.outcomes]
        elif outcome.stdin_out is not None:
            sys.stdout.buffer.write(outcome.stdin_out)
            sys.stdout.flush()
            _report_errors(errors)
            return EXIT_ERROR if errors else (EXIT_FINDINGS if findings and not opts["exit_zero"] and not opts.get("fix_only") else EXIT_OK)
    else:
        findings = [f for r in results for f in r.findings]
    findings = sorted(findings + io_findings, key=lambda f: f.sort_key())
    if opts.get("diff"):
        if not opts.get("silent"):
            run.emit("".join(diffs))
            click.echo(f"Would fix {fixed_count} finding{'s' * (fixed_count != 1)}.", err=True)
        if _report_errors(errors):
            return EXIT_ERROR
        return EXIT_FINDINGS if diffs and not opts["exit_zero"] else EXIT_OK
    if run.fmt in ("json", "json-lines", "sarif") and not opts.get("statistics"):
        _fill_edits(findings, stdin)  # (what is left after fixing: the lint computed the others)
    summary = Summary(
        safe_fixable=sum(1 for f in findings if f.fix and f.fix.applicability == "safe"),
        unsafe_fixable=sum(1 for f in findings if f.fix and f.fix.applicability == "unsafe"),
        fixed=fixed_count,
        files_with_errors=len({path for path, _ in errors}),
    )
    if opts.get("fix_only"):
        if not opts.get("silent") and not opts.get("quiet") and run.fmt in ("text", "concise"):
            text = _show_fixes(applied, run.cwd) if opts.get("show_fixes") else ""
            run.emit(text + (f"Fixed {fixed_count} finding{'s' * (fixed_count != 1)}.\n" if fixed_count else "No fixes applied.\n"))
        return EXIT_ERROR if _report_errors(errors) else EXIT_OK
    phases["report_s"] = 0.0
    t_report = time.perf_counter()
    if not opts.get("silent"):
        if opts.get("statistics"):
            from .report.text import render_statistics

            text = render_statistics(findings, run.fmt, summary, quiet=bool(opts.get("quiet")))
        else:
            text = render(run.fmt, findings, cwd=run.cwd, summary=summary, color=run.color(), quiet=bool(opts.get("quiet")),
                          fixes=_show_fixes(applied, run.cwd) if opts.get("show_fixes") and fixing else None)
        run.emit(text)
    phases["report_s"] = round(time.perf_counter() - t_report, 3)
    if _report_errors(errors):
        return EXIT_ERROR
    return EXIT_FINDINGS if findings and not opts["exit_zero"] else EXIT_OK


def _io_findings(linter, io_errors):
    """Paths that cannot be read, as CL001 findings where CL001 is enabled (Ruff's E902);
    the others stay errors (exit 2)."""
    from .model import Finding, Position

    findings, errors = [], []
    for path, message in io_errors:
        absolute = os.path.abspath(path)
        try:
            enabled = "CL001" in linter._codes(absolute)
        except Exception:  # no settings for a path that is not there: the defaults' answer
            enabled = True
        if enabled:
            start = Position(1, 1)
            findings.append(Finding("CL001", message, absolute, start, start))
        else:
            errors.append((path, message))
    return findings, errors


def _fill_edits(findings, stdin) -> None:
    """The edits of findings whose fix edits the lint did not compute (a report format
    that shows them: JSON, SARIF)."""
    todo: dict = {}
    for f in findings:
        if f.fix is not None and f.fix.edits is None:
            todo.setdefault(f.path, []).append(f)
    if not todo:
        return
    from .fixer import fill_edits  # only here: it is the fix machinery
    from .notebook import NotebookError, code_bytes

    raw_of = {stdin[0]: stdin[1]} if stdin else {}
    for path, pending in todo.items():
        try:
            raw = raw_of.get(path)
            if raw is None:
                with open(path, "rb") as fh:
                    raw = fh.read()
            fill_edits(path, code_bytes(path, raw), pending)  # a notebook's code
        except (OSError, NotebookError):
            for f in pending:
                f.fix.edits = []


def _show_fixes(applied, cwd: str) -> str:
    """Ruff's --show-fixes: per file, how many findings of each rule were fixed."""
    if not applied:
        return "No fixes applied.\n\n"
    from .rules import all_rules

    rules = all_rules()
    by_path: dict = {}
    for f in applied:
        by_path.setdefault(display_path(f.path, cwd), {}).setdefault(f.code, 0)
        by_path[display_path(f.path, cwd)][f.code] += 1
    lines = [f"Fixed {len(applied)} finding{'s' * (len(applied) != 1)}:"]
    for path in sorted(by_path):
        lines.append(f"- {path}:")
        for code, count in sorted(by_path[path].items()):
            name = rules[code].name if code in rules else code
            lines.append(f"    {count} × {code} ({name})")
    return "\n".join(lines) + "\n\n"


def _add_noqa(run, results, errors) -> int:
    """--add-noqa: `# noqa: CODE` on the line each finding is reported on (merged into a
    `# noqa: ...` already there), written back; a line whose end is inside a string (a
    multi-line string) is left alone, since a comment there would be text."""
    from .notebook import NotebookError, read_notebook
    from .fixer import ChangedOnDisk, write_file
    from .suppression import noqa_line

    added, skipped = 0, 0
    for result in results:
        if result.error or not result.findings:
            continue
        try:
            with open(result.path, "rb") as fh:
                raw = fh.read()
            notebook = read_notebook(result.path, raw) if result.path.endswith(".ipynb") else None
        except (OSError, NotebookError) as exc:
            errors.append((result.path, f"cannot add noqa: {exc}"))
            continue
        from .fix_edits import Text, split_lines

        text = Text.of(raw) if notebook is None else Text(False, "utf-8", notebook.code)
        lines = split_lines(text.text)
        inside = _rows_ending_in_strings(text.text)
        changed = False
        for f in sorted(result.findings, key=lambda f: f.start.row):
            index = f.start.row - 1
            if not 0 <= index < len(lines) or f.start.row in inside:
                skipped += 1
                continue
            body = lines[index].rstrip("\r\n")
            new = noqa_line(body, f.code)
            if new is None:
                continue
            lines[index] = new + lines[index][len(body):]
            added += 1
            changed = True
        if not changed:
            continue
        new_text = "".join(lines)
        data = text.encode(new_text) if notebook is None else notebook.with_code(new_text)
        try:
            write_file(result.path, data, expect=raw)
        except ChangedOnDisk:
            errors.append((result.path, "changed on disk while adding noqa; left as it was"))
        except (OSError, NotebookError) as exc:
            errors.append((result.path, f"cannot add noqa: {exc}"))
    if not run.opts.get("silent"):
        click.echo(f"Added {added} noqa directive{'s' * (added != 1)}." + (f" ({skipped} lines end inside a string: left alone)" if skipped else ""), err=True)
    return EXIT_ERROR if _report_errors(errors) else EXIT_OK


def _rows_ending_in_strings(text: str) -> set[int]:
    """Rows whose end lies inside a string token (a multi-line string goes on)."""
    import io
    import tokenize

    rows: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                rows.update(range(tok.start[0], tok.end[0]))
            elif getattr(tokenize, "FSTRING_MIDDLE", None) == tok.type and tok.end[0] > tok.start[0]:
                rows.update(range(tok.start[0], tok.end[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return rows


def _watch(opts: dict) -> None:
    """--watch: check, then check again whenever a linted file (or the folders holding
    them, for new and removed files) changes; Ctrl-C ends it (exit 0)."""
    import time

    def state():
        run = Run(opts)
        files, _, _ = run.files()
        seen = []
        for path in files + [os.path.dirname(p) for p in files]:
            try:
                st = os.stat(path)
                seen.append((path, st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                seen.append((path, None))
        return tuple(sorted(set(seen), key=repr))

    try:
        last = None
        while True:
            current = state()
            if current != last:
                last = current
                stamp = time.strftime("%H:%M:%S")
                click.echo(f"[{stamp}] Checking ({len({p for p, *_ in current if p.endswith(('.py', '.pyi', '.ipynb'))})} files)...", err=True)
                code = _lint_run(dict(opts, watch=False, exit_zero=True))
                click.echo(f"[{time.strftime('%H:%M:%S')}] Watching for file changes." + (" (errors above)" if code == EXIT_ERROR else ""), err=True)
                sys.stdout.flush()
            time.sleep(0.5)
    except KeyboardInterrupt:
        sys.exit(EXIT_OK)


def _unified_diff(outcome, cwd: str) -> str:
    import difflib

    name = display_path(outcome.path, cwd)
    old = outcome.original.decode("utf-8", errors="replace").splitlines(keepends=True)
    new = outcome.fixed.decode("utf-8", errors="replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, fromfile=f"a/{name}", tofile=f"b/{name}"))


def _notebook_diff(outcome, cwd: str) -> str:
    """One unified diff per changed cell, named `nb.ipynb:cell N` (as Ruff does)."""
    import difflib

    from .notebook import read_notebook

    name = display_path(outcome.path, cwd)
    before = read_notebook(outcome.path, outcome.original)
    after = read_notebook(outcome.path, outcome.fixed)
    out = []
    for old, new in zip(before.cells, after.cells):
        if old.text != new.text:
            # a cell's last line has no newline: give both one, so lines stay lines
            a, b = (t if t.endswith("\n") else t + "\n" for t in (old.text, new.text))
            out.extend(difflib.unified_diff(
                a.splitlines(keepends=True), b.splitlines(keepends=True),
                fromfile=f"a/{name}:cell {old.number}", tofile=f"b/{name}:cell {new.number}",
            ))
    return "".join(out)


@cli.command()
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="The config file whose folder holds the cache.")
@_guard
def clean(config_file):
    """Remove the results cache (.compile_lint_cache/ in the project root)."""
    from .cache import CACHE_DIR, clean as remove

    root = cache_root({"config_file": config_file})
    try:
        removed = remove(root)
    except OSError as exc:
        raise UserError(f"cannot remove the cache: {exc.strerror or exc}") from None
    if removed:
        click.echo(f"Removed {removed}")
    else:
        click.echo(f"No cache at {os.path.join(root, CACHE_DIR)}")


@cli.command("regions")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", help="How sites are printed (default: text).")
@click.option("--output-file", "-o", type=click.Path(dir_okay=False), help="Write the report here instead of stdout.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Use this config file for every path.")
@click.option("--force-exclude", is_flag=True, help="Apply exclusions to paths named on the command line too.")
@click.option("--stdin-filename", help="The name of the file read from stdin (`-`).")
@click.option("--no-cache", is_flag=True, help="Read every file afresh (the summaries `check` cached are used otherwise).")
@_guard
def regions_command(**opts):
    """Show every compile/trace site in PATHS: what it resolved to (or why not), its
    mode and options, and the functions it reaches."""
    from .project_root import find_project_root
    from .regions_report import build_index, render, report

    run = Run(opts)
    files, stdin, errors = run.files()
    index, read_errors = build_index(files, run.settings_for, stdin, store=run.cache())
    first = (list(opts.get("paths") or ()) or ["."])[0]
    first = stdin[0] if first == "-" and stdin and stdin[0] != "-" else (os.getcwd() if first == "-" else first)
    root = find_project_root(first, None if opts.get("config_file") is None else run.settings_for(first))
    if root is None:  # no project marker: paths are shown relative to the folder given
        root = os.path.abspath(first if os.path.isdir(first) else os.path.dirname(first) or ".")
    run.emit(render(report(index, root), opts["output_format"]))
    if _report_errors(list(errors) + read_errors):
        sys.exit(EXIT_ERROR)


@cli.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rules_command(output_format):
    """List every rule: code, name, family, fix availability and whether the default
    selection (`ALL`) enables it."""
    from .rules import all_rules

    rules = all_rules()
    if output_format == "json":
        import json

        click.echo(json.dumps([
            {"code": r.code, "name": r.name, "family": r.family, "fix": r.fix_safety, "default": r.default_selected,
             "summary": r.summary}
            for r in rules.values()
        ], indent=2))
        return
    rows = [("CODE", "NAME", "FAMILY", "FIX", "DEFAULT", "SUMMARY")] + [
        (r.code, r.name, r.family, r.fix_safety, "on" if r.default_selected else "off", r.summary)
        for r in rules.values()
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        click.echo("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:5])) + "  " + row[5])


@cli.command("rule")
@click.argument("code")
def rule_command(code):
    """Show one rule's page: what it does, why, example, fix and references."""
    from .rules import all_rules

    rules = all_rules()
    rule = rules.get(code.upper())
    if rule is None:
        import difflib

        hint = difflib.get_close_matches(code.upper(), list(rules), n=1)
        _error(f"unknown rule {code!r}" + (f" (did you mean {hint[0]}?)" if hint else ""))
        sys.exit(EXIT_ERROR)
    click.echo(f"# {rule.name} ({rule.code})\n")
    click.echo(f"Family: {rule.family}. Fix: {rule.fix_safety}.\n")
    click.echo(rule.page())


@cli.command("server")
def server_command():
    """Run the language server on stdio (editors: see the README)."""
    from .lsp.server import main as serve

    serve()


def main() -> None:
    """The command line, ending in SystemExit (for callers in the same process)."""
    cli(prog_name="compile-lint")


_checked = False  # the command run was `check` (the only one run() ends at once)


def run() -> None:
    """The program (the `compile-lint` script, `python -m compile_lint`): main(), and
    after a `check` the process ends at once (_exit_now)."""
    try:
        main()
    except SystemExit as exc:
        if _checked:
            _exit_now(exc.code)
        raise


def _exit_now(code) -> None:
    """End the process at once with `code`, skipping the interpreter's teardown: it
    frees the heap one object at a time, the cache's records and every module (25 ms
    of a 200 ms warm run on corpus M; 4 s of a cold `-j 1` run there, which holds every
    file's tree). Only when nothing else needs that teardown: one thread, no child
    process of multiprocessing alive (the engine's pools are shut down and joined when
    their pass ends; libcst's codemod module imports multiprocessing for the fixes'
    edits without starting anything), the output flushed without error; functions
    registered with atexit still run. Otherwise (or for a code that is not a number)
    this returns and the exit is the usual one."""
    if code is None:
        code = 0
    threading = sys.modules.get("threading")  # never imported: no thread was started
    if not isinstance(code, int) or not 0 <= code <= 255 or (threading is not None and threading.active_count() != 1):
        return
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is not None and multiprocessing.active_children():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # a closed pipe: let the usual exit report it
        return
    import atexit

    atexit._run_exitfuncs()
    atexit._clear()  # ran: not again should the usual exit follow
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        return
    os._exit(code)


if __name__ == "__main__":
    main()
