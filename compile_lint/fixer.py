"""Apply fixes: the rules' codemods, repeated until nothing more applies.

Every result must parse before it is written; writes are atomic (a temp file in the
same folder, then os.replace, the file's mode kept). libcst round-trips bytes exactly,
so BOM, CRLF, tabs and comments outside an edit are untouched.
"""
from __future__ import annotations

import ast
import os
import stat
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Optional

from . import deep_stack
from .model import SAFE, Edit, Finding, Position

MAX_PASSES = 12


class FixFailure(Exception):
    pass


@dataclass
class FixOutcome:
    path: str
    original: bytes
    fixed: bytes
    applied: int = 0  # findings fixed
    remaining: list[Finding] = field(default_factory=list)
    error: Optional[str] = None

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def _codemod_class(spec: str):
    from .codemods_home import codemod_class

    return codemod_class(spec)


def is_applicable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and (finding.fix.applicability == SAFE or unsafe)


def apply_codemod(path: str, data: bytes, spec: str, findings: list[Finding]) -> bytes:
    """Run one codemod over `data` for the given findings; return the new bytes."""
    import libcst as cst
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

    try:
        module = cst.parse_module(data)
    except cst.ParserSyntaxError as exc:  # ast accepted it but libcst does not
        raise FixFailure(f"libcst cannot parse the file: {str(exc).splitlines()[0]}") from None
    context = CodemodContext(filename=path)
    targets = [(f.start.row, f.start.column, f.fix.data) for f in findings]
    module = _codemod_class(spec)(context, targets).transform_module(module)
    if context.scratch.get(RemoveImportsVisitor.CONTEXT_KEY):
        module = RemoveImportsVisitor(context).transform_module(module)
    if context.scratch.get(AddImportsVisitor.CONTEXT_KEY):
        module = AddImportsVisitor(context).transform_module(module)
    return module.bytes


def check_parses(path: str, data: bytes) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(data, filename=path)
    except (SyntaxError, ValueError) as exc:
        raise FixFailure(f"the fixed code does not parse ({exc}); the file was left as it was") from None


def fix_source(linter, path: str, data: bytes, findings: list[Finding], unsafe: bool) -> FixOutcome:
    """Fix one file's contents in memory; the linter re-lints between passes."""
    outcome = FixOutcome(path, data, data, remaining=findings)
    current, current_findings = data, findings
    try:
        for _ in range(MAX_PASSES):
            fixable = [f for f in current_findings if is_applicable(f, unsafe)]
            if not fixable:
                break
            spec = fixable[0].fix.codemod
            batch = [f for f in fixable if f.fix.codemod == spec]
            new = apply_codemod(path, current, spec, batch)
            if new == current:
                break  # the codemod found nothing to do: do not loop
            check_parses(path, new)
            current = new
            _, current_findings = linter.relint(path, current, linter.regions)
            outcome.applied += len(batch)
    except FixFailure as exc:
        return FixOutcome(path, data, data, 0, findings, error=str(exc))
    except RecursionError:
        raise  # fix_files runs it again on a deep stack
    except Exception as exc:  # a codemod bug must never cost the user a file
        return FixOutcome(path, data, data, 0, findings, error=f"internal error while fixing: {type(exc).__name__}: {exc}")
    outcome.fixed = current
    outcome.remaining = current_findings
    return outcome


def fix_notebook(linter, path: str, data: bytes, findings: list[Finding], unsafe: bool) -> FixOutcome:
    """fix_source for a notebook: fix the module of its code cells, then write back only
    the cells that changed (compile_lint.notebook). The result must read back as the
    same module, or the notebook is left as it was."""
    from .notebook import NotebookError, read_notebook

    try:
        notebook = read_notebook(path, data)
    except NotebookError as exc:
        return FixOutcome(path, data, data, 0, findings, error=str(exc))
    outcome = fix_source(linter, path, notebook.code.encode("utf-8"), findings, unsafe)
    if outcome.error is not None or not outcome.changed:
        return FixOutcome(path, data, data, outcome.applied, outcome.remaining, error=outcome.error)
    fixed_code = outcome.fixed.decode("utf-8")
    try:
        fixed = notebook.with_code(fixed_code)
        if read_notebook(path, fixed).code != fixed_code:
            raise NotebookError("the fixed notebook does not read back as the fixed code; the notebook was left as it was")
    except NotebookError as exc:
        return FixOutcome(path, data, data, 0, findings, error=str(exc))
    return FixOutcome(path, data, fixed, outcome.applied, outcome.remaining)


@dataclass
class FixRun:
    """What fixing a run's files did."""

    outcomes: list[FixOutcome] = field(default_factory=list)  # changed files (written, or not with diff_only)
    remaining: list[Finding] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    fixed_count: int = 0
    stdin_out: Optional[bytes] = None  # the fixed stdin, when stdin was linted


def fix_files(linter, results, stdin: Optional[tuple[str, bytes]], unsafe: bool, write: bool) -> FixRun:
    """The fix loop over a run's results: fix each file in memory (re-linting between
    codemods), then write it atomically unless `write` is false (`fix --diff`)."""
    run = FixRun()
    for result in results:
        if result.error:
            continue
        is_stdin = stdin is not None and result.path == stdin[0]
        if is_stdin:
            data = stdin[1]
        else:
            try:
                with open(result.path, "rb") as fh:
                    data = fh.read()
            except OSError as exc:
                run.errors.append((result.path, f"cannot read: {exc.strerror or exc}"))
                continue
        fix_file = fix_notebook if result.path.endswith(".ipynb") else fix_source
        try:
            outcome = deep_stack.call(fix_file, linter, result.path, data, result.findings, unsafe)
        except RecursionError:
            outcome = FixOutcome(result.path, data, data, 0, result.findings, error="the code is nested too deeply to fix")
        if outcome.error:
            run.errors.append((result.path, outcome.error))
        run.remaining.extend(outcome.remaining)
        if is_stdin:
            run.stdin_out = outcome.fixed
            run.fixed_count += outcome.applied
            continue
        if not outcome.changed:
            continue
        if not write:
            run.outcomes.append(outcome)
            run.fixed_count += outcome.applied
            continue
        try:
            write_atomic(result.path, outcome.fixed)
            run.outcomes.append(outcome)
            run.fixed_count += outcome.applied
        except OSError as exc:
            run.errors.append((result.path, f"not fixed: {exc.strerror or exc}"))
            run.remaining.extend(f for f in result.findings if f not in outcome.remaining)
    run.remaining.sort(key=lambda f: f.sort_key())
    return run


def write_atomic(path: str, data: bytes) -> None:
    """Replace `path` with `data`: readers see the old file or the new one, never half."""
    st = os.stat(path)
    # the mode bits too: root passes os.access, and a rename needs only the folder
    if not os.access(path, os.W_OK) or not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise OSError(f"{path} is read-only")
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".compile-lint.tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def changed_span(old: str, new: str) -> tuple[int, int, int]:
    """(start, end in old, end in new) of the one span where `new` differs from `old`:
    the common prefix and suffix are left out, so an edit touches only what changed."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return start, end_old, end_new


def edits_for(path: str, data: bytes, finding: Finding) -> list[Edit]:
    """The text edit one finding's fix makes, as a single replaced span."""
    try:
        new = apply_codemod(path, data, finding.fix.codemod, [finding])
    except Exception:
        return []
    if new == data:
        return []
    old_text, new_text = _decode(data), _decode(new)
    start, end_old, end_new = changed_span(old_text, new_text)
    return [Edit(new_text[start:end_new], _position(old_text, start), _position(old_text, end_old))]


def _decode(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="surrogateescape")


def _position(text: str, offset: int) -> Position:
    row = text.count("\n", 0, offset) + 1
    line_start = text.rfind("\n", 0, offset) + 1
    return Position(row, offset - line_start + 1)
