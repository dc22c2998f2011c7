"""Apply fixes: each finding's edits (fix_edits.py), applied together, re-linted, again
until nothing more applies; then written back without ever losing a byte.

A pass applies the edits of every applicable fix that overlaps no other (identical
edits, such as the same `import torch`, count once), as Ruff does; the file is linted
again and the fixes of what is left apply in the next pass. A pass whose result does not
parse is retried one fix at a time, keeping those that parse. Edits computed by the lint
(cached with the findings) serve the first pass.

Writing (`write_file`) is a compare-and-swap: the file must still hold the bytes the
fix started from, or it is left alone (an editor saved it meanwhile); a symbolic link
is fixed through to its target; the new file keeps the old one's mode and owner, and a
file with other hard links is rewritten in place (after a backup copy) so that the
links keep sharing it. libcst round-trips bytes exactly and edits touch only what they
change, so BOM, CRLF, CR, tabs and comments outside an edit are untouched.
"""
from __future__ import annotations

import ast
import errno
import os
import stat
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Optional

from . import deep_stack
from .fix_edits import FileEdits, FixError, Text, changed_span  # noqa: F401 (changed_span: lsp/actions.py)
from .model import SAFE, Edit, Finding

MAX_PASSES = 12


class FixFailure(Exception):
    pass


class ChangedOnDisk(OSError):
    """The file is not what the fix started from: it was edited while `fix` ran."""


@dataclass
class FixOutcome:
    path: str
    original: bytes
    fixed: bytes
    applied: int = 0  # findings fixed
    remaining: list[Finding] = field(default_factory=list)
    error: Optional[str] = None
    applied_findings: list[Finding] = field(default_factory=list)  # (--show-fixes)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def is_applicable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and (finding.fix.applicability == SAFE or unsafe)


def _codemod_class(spec: str):
    from .codemods_home import codemod_class

    return codemod_class(spec)


def apply_codemod(path: str, data: bytes, spec: Optional[str], findings: list, codemod=None) -> bytes:
    """Run one codemod over the whole of `data` for the given findings; the new bytes.
    (The way for codemods that need the whole file: fix_edits.py runs the others on
    the statements they change.)"""
    import libcst as cst
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

    try:
        module = cst.parse_module(data)
    except cst.ParserSyntaxError as exc:  # ast accepted it but libcst does not
        raise FixFailure(f"libcst cannot parse the file: {str(exc).splitlines()[0]}") from None
    context = CodemodContext(filename=path)
    targets = [(f.start.row, f.start.column, f.fix.data) for f in findings]
    module = (codemod or _codemod_class(spec))(context, targets).transform_module(module)
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


def _parses(path: str, data: bytes) -> Optional[ast.Module]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(data, filename=path)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def fill_edits(path: str, data: bytes, findings: list[Finding], tree: Optional[ast.Module] = None) -> list[str]:
    """Compute the edits of every finding with a fix whose edits are not known yet
    (`fix.edits`, cached with the findings); the problems met, one line each."""
    todo = [f for f in findings if f.fix is not None and f.fix.edits is None]
    if not todo:
        return []
    edits = FileEdits(path, data, tree)
    problems = []
    for f in todo:
        try:
            f.fix.edits = deep_stack.call(edits.edits, f)
        except (FixError, RecursionError) as exc:
            f.fix.edits = []
            problems.append(f"{f.code} at {f.start.row}:{f.start.column}: {exc}")
    return problems


# -- applying edits ---------------------------------------------------------------------
def apply_fixes(edits: FileEdits, fixes: list[tuple[Finding, list[Edit]]]) -> tuple[str, list[Finding]]:
    """The file's text with every fix applied that overlaps no fix applied before it (in
    the order of their first edits); identical edits count once. The findings fixed."""
    spans = []  # (start, end, content) applied
    applied = []
    for finding, fix_edits in sorted(fixes, key=lambda item: _order(edits, item[1])):
        if not fix_edits:
            continue
        mine = [(edits.offset(e.location), edits.offset(e.end_location), e.content) for e in fix_edits]
        if any(s > e for s, e, _ in mine):
            continue
        fresh = [m for m in mine if m not in spans]
        if any(_overlap(m, other) for m in fresh for other in spans) or _overlap_within(fresh):
            continue  # the next pass, against the text this pass leaves
        spans.extend(fresh)
        applied.append(finding)
    text = edits.text
    for start, end, content in sorted(spans, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:start] + content + text[end:]
    return text, applied


def _order(edits: FileEdits, fix_edits: list[Edit]):
    if not fix_edits:
        return (0, 0)
    first = min(fix_edits, key=lambda e: (e.location.row, e.location.column))
    return (first.location.row, first.location.column)


def _overlap(a, b) -> bool:
    (s1, e1, c1), (s2, e2, c2) = a, b
    if s1 == e1 and s2 == e2:  # two insertions at one place: order is ambiguous
        return s1 == s2
    if s1 == e1:
        return s2 < s1 < e2
    if s2 == e2:
        return s1 < s2 < e1
    return s1 < e2 and s2 < e1


def _overlap_within(spans) -> bool:
    return any(_overlap(a, b) for i, a in enumerate(spans) for b in spans[i + 1:])


# -- the fix loop ---------------------------------------------------------------------------
def fix_source(linter, path: str, data: bytes, findings: list[Finding], unsafe: bool, tree: Optional[ast.Module] = None) -> FixOutcome:
    """Fix one file's contents (code: a notebook's module of cells) in memory; the linter
    re-lints between passes (`linter.relint`). The edits already in `findings` must be
    those of `data` (as the lint computed them)."""
    outcome = FixOutcome(path, data, data, remaining=findings)
    current, current_findings = data, findings
    problems: list[str] = []
    try:
        for _ in range(MAX_PASSES):
            fixable = [f for f in current_findings if is_applicable(f, unsafe)]
            if not fixable:
                break
            edits = FileEdits(path, current, tree)
            problems += fill_edits(path, current, fixable, tree)
            new, applied = _apply_parsing(path, edits, [(f, f.fix.edits) for f in fixable])
            if not applied or new == current:
                break  # nothing applies: do not loop
            current = new
            item, current_findings = linter.relint(path, current, linter.regions)
            tree = item.tree
            outcome.applied += len(applied)
            outcome.applied_findings.extend(applied)
    except FixFailure as exc:
        return FixOutcome(path, data, data, 0, findings, error=str(exc))
    except RecursionError:
        raise  # fix_files runs it again on a deep stack
    except FixError as exc:
        return FixOutcome(path, data, data, 0, findings, error=str(exc))
    except Exception as exc:  # a codemod bug must never cost the user a file
        return FixOutcome(path, data, data, 0, findings, error=f"internal error while fixing: {type(exc).__name__}: {exc}")
    outcome.fixed = current
    outcome.remaining = current_findings
    if problems:
        outcome.error = "some fixes could not be computed: " + "; ".join(problems[:3]) + (" ..." if len(problems) > 3 else "")
    return outcome


def _apply_parsing(path: str, edits: FileEdits, fixes) -> tuple[bytes, list[Finding]]:
    """apply_fixes, and a result that parses: when all of them together do not, one at a
    time, keeping each that leaves code that parses."""
    text, applied = apply_fixes(edits, fixes)
    new = edits.decoded.encode(text)
    if not applied or _parses(path, new) is not None:
        return new, applied
    kept: list = []
    for item in fixes:
        text, ok = apply_fixes(edits, kept + [item])
        candidate = edits.decoded.encode(text)
        if len(ok) == len(kept) + 1 and _parses(path, candidate) is not None:
            kept.append(item)
    text, applied = apply_fixes(edits, kept)
    new = edits.decoded.encode(text)
    check_parses(path, new)
    return new, applied


def fix_notebook(linter, path: str, data: bytes, findings: list[Finding], unsafe: bool) -> FixOutcome:
    """fix_source for a notebook: fix the module of its code cells, then write back only
    the cells that changed (compile_lint.notebook). The cells must read back as the
    fixed cells, or the fixes of the cells that do not are left out (each cell's fixes
    tried on their own) and the notebook keeps those cells as they were."""
    from .notebook import NotebookError, read_notebook

    try:
        notebook = read_notebook(path, data)
    except NotebookError as exc:
        return FixOutcome(path, data, data, 0, findings, error=str(exc))
    code = notebook.code.encode("utf-8", errors="surrogatepass")
    outcome = fix_source(linter, path, code, findings, unsafe)
    if outcome.error is not None and not outcome.changed:
        return FixOutcome(path, data, data, outcome.applied, outcome.remaining, error=outcome.error)
    if not outcome.changed:
        return FixOutcome(path, data, data, outcome.applied, outcome.remaining, error=outcome.error)
    try:
        fixed = _notebook_bytes(path, notebook, outcome.fixed)
        return FixOutcome(path, data, fixed, outcome.applied, _with_cell_errors(path, fixed, outcome.remaining, findings),
                          error=outcome.error, applied_findings=outcome.applied_findings)
    except NotebookError as exc:
        whole = exc
    # cell by cell: the fixes of each cell alone, kept when the notebook reads back
    by_cell: dict[int, list[Finding]] = {}
    for f in findings:
        by_cell.setdefault(notebook.locate(f.start.row)[0], []).append(f)
    accepted: list[Finding] = []
    result = None
    for cell_number in sorted(by_cell):
        trial = accepted + [f for f in by_cell[cell_number] if is_applicable(f, unsafe)]
        attempt = fix_source(linter, path, code, [f for f in findings if f in trial or not is_applicable(f, unsafe)], unsafe)
        if attempt.error is not None or not attempt.changed:
            continue
        try:
            fixed = _notebook_bytes(path, notebook, attempt.fixed)
        except NotebookError:
            continue
        accepted, result = trial, (fixed, attempt)
    if result is None:
        return FixOutcome(path, data, data, 0, findings, error=str(whole))
    fixed, attempt = result
    left = len([f for f in findings if is_applicable(f, unsafe)]) - len(accepted)
    note = f"{left} fix{'es' * (left != 1)} left out: {whole}" if left else None
    return FixOutcome(path, data, fixed, attempt.applied, _with_cell_errors(path, fixed, attempt.remaining, findings),
                      error=note, applied_findings=attempt.applied_findings)


def _with_cell_errors(path: str, fixed: bytes, remaining: list[Finding], before: list[Finding]) -> list[Finding]:
    """The findings left after fixing a notebook, with the CL000 of each cell that does
    not parse (re-linting the fixed module cannot see them: those cells are masked),
    where the lint reported them."""
    from .lint_file import SYNTAX_ERROR, cell_syntax_finding
    from .notebook import read_notebook, source_of

    if not any(f.code == SYNTAX_ERROR for f in before):
        return remaining
    source = source_of(read_notebook(path, fixed))
    errors = [cell_syntax_finding(source, e) for e in source.syntax_errors]
    return sorted([f for f in remaining if f.code != SYNTAX_ERROR] + errors, key=Finding.sort_key)


def _notebook_bytes(path: str, notebook, fixed_code: bytes) -> bytes:
    from .notebook import NotebookError, read_notebook

    code = fixed_code.decode("utf-8", errors="surrogatepass")
    fixed = notebook.with_code(code)
    if [cell.text for cell in read_notebook(path, fixed).cells] != notebook.cell_texts(code):
        raise NotebookError("the fixed notebook does not read back as the fixed code; the notebook was left as it was")
    return fixed


@dataclass
class FixRun:
    """What fixing a run's files did."""

    outcomes: list[FixOutcome] = field(default_factory=list)  # changed files (written, or not with diff_only)
    remaining: list[Finding] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    fixed_count: int = 0
    stdin_out: Optional[bytes] = None  # the fixed stdin, when stdin was linted
    applied: list[Finding] = field(default_factory=list)  # the findings fixed (--show-fixes)


def fix_files(linter, results, stdin: Optional[tuple[str, bytes]], unsafe: bool, write: bool) -> FixRun:
    """The fix loop over a run's results: fix each file in memory (re-linting between
    passes), then write it (compare-and-swap, write_file) unless `write` is false
    (`fix --diff`)."""
    from . import cache as cache_mod

    run = FixRun()
    for result in results:
        if result.error:
            continue
        is_stdin = stdin is not None and result.path == stdin[0]
        findings = result.findings
        if not is_stdin and not any(is_applicable(f, unsafe) for f in findings):
            run.remaining.extend(findings)
            continue
        if is_stdin:
            data = stdin[1]
        else:
            try:
                with open(result.path, "rb") as fh:
                    data = fh.read()
            except OSError as exc:
                run.errors.append((result.path, f"cannot read: {exc.strerror or exc}"))
                run.remaining.extend(findings)
                continue
            if getattr(result, "digest", None) is not None and cache_mod.digest(data) != result.digest:
                # edited since it was linted: its findings (and their edits) are another text's
                from .notebook import NotebookError
                from .source import source_for

                try:
                    _, findings = linter.relint(result.path, source_for(result.path, data).data, linter.regions)
                except NotebookError as exc:
                    run.errors.append((result.path, str(exc)))
                    continue
                for f in findings:
                    if f.fix is not None:
                        f.fix.edits = None
        fix_file = fix_notebook if result.path.endswith(".ipynb") else fix_source
        try:
            outcome = deep_stack.call(fix_file, linter, result.path, data, findings, unsafe)
        except RecursionError:
            outcome = FixOutcome(result.path, data, data, 0, findings, error="the code is nested too deeply to fix")
        if outcome.error:
            run.errors.append((result.path, outcome.error))
        if is_stdin:
            run.stdin_out = outcome.fixed
        elif outcome.changed and write:
            try:
                write_file(result.path, outcome.fixed, expect=data)
            except ChangedOnDisk:
                run.errors.append((result.path, "changed on disk while fixing; not fixed (run `fix` again)"))
                run.remaining.extend(findings)
                continue
            except OSError as exc:
                run.errors.append((result.path, f"not fixed: {exc.strerror or exc}"))
                run.remaining.extend(findings)
                continue
        run.remaining.extend(outcome.remaining)
        if outcome.changed and not is_stdin:
            run.outcomes.append(outcome)
        run.fixed_count += outcome.applied
        run.applied.extend(outcome.applied_findings)
    run.remaining.sort(key=lambda f: f.sort_key())
    return run


# -- writing --------------------------------------------------------------------------------
def write_file(path: str, data: bytes, expect: Optional[bytes] = None) -> None:
    """Replace the contents of `path` with `data`, so that readers see the old bytes or the
    new ones, never half, and nothing an editor saved meanwhile is lost.

    - `expect`: the bytes the fix started from; when the file holds others now, it is
      left alone (ChangedOnDisk), checked again just before the new file takes its place.
    - a symbolic link stays a link: its target is fixed.
    - the new file gets the old one's mode, and owner and group where the process may
      set them (root may; a user may set the group to one of theirs); where it may not,
      or where the file has other hard links (a rename would split them off), the file
      is rewritten in place instead, a backup copy beside it until the write is done.
    """
    target = os.path.realpath(path)
    st = os.stat(target)
    # the mode bits too: root passes os.access, and a rename needs only the folder
    if not os.access(target, os.W_OK) or not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise OSError(errno.EACCES, f"{path} is read-only")
    if expect is not None:
        _expect(target, expect, st)
    folder = os.path.dirname(target)
    if st.st_nlink > 1 or not _can_own(st):
        _rewrite_in_place(target, data, expect, st)
        return
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.", suffix=".compile-lint.tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        if (st.st_uid, st.st_gid) != _owner_of(tmp):
            os.chown(tmp, st.st_uid, st.st_gid)
        if expect is not None:
            _expect(target, expect, st)  # the last look before the swap
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _expect(target: str, expect: bytes, st: os.stat_result) -> None:
    try:
        now = os.stat(target)
        if (now.st_ino, now.st_dev) != (st.st_ino, st.st_dev):
            raise ChangedOnDisk(f"{target} was replaced while fixing")
        with open(target, "rb") as fh:
            if fh.read() != expect:
                raise ChangedOnDisk(f"{target} changed while fixing")
    except FileNotFoundError:
        raise ChangedOnDisk(f"{target} was removed while fixing") from None


def _owner_of(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_uid, st.st_gid


def _can_own(st: os.stat_result) -> bool:
    """Whether a file this process creates can be given `st`'s owner and group."""
    if not hasattr(os, "geteuid"):
        return True  # (Windows: no owners to keep)
    euid = os.geteuid()
    if euid == 0:
        return True
    return st.st_uid == euid and (st.st_gid == os.getegid() or st.st_gid in os.getgroups())


def _rewrite_in_place(target: str, data: bytes, expect: Optional[bytes], st: os.stat_result) -> None:
    """Write `data` into the file itself (its inode, owner and links kept). A backup copy
    of the old bytes sits beside it until the new ones are on disk, so that a process
    killed mid-write leaves the old contents recoverable."""
    folder = os.path.dirname(target)
    fd, backup = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.", suffix=".compile-lint.bak")
    writing = False
    try:
        with open(target, "r+b") as fh:
            old = fh.read()
            if expect is not None and old != expect:
                raise ChangedOnDisk(f"{target} changed while fixing")
            with os.fdopen(fd, "wb") as bak:
                fd = -1
                bak.write(old)
                bak.flush()
                os.fsync(bak.fileno())
            writing = True
            fh.seek(0)
            fh.write(data)
            fh.truncate()
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException as exc:
        if fd != -1:
            os.close(fd)
        if not writing:
            os.unlink(backup)
        elif isinstance(exc, OSError):
            raise OSError(exc.errno, f"{exc.strerror or exc}; the old contents are in {backup}") from None
        raise
    os.unlink(backup)
