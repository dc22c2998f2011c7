#!/usr/bin/env python3
"""Crash test on real code: `check`, then `fix --unsafe-fixes` twice, over corpus L.

    python scripts/corpus_check.py [--corpus DIR] [--jobs N] [--keep]

Fetches corpus L (3,400 files of real PyTorch libraries, with BOM, CRLF and
tab-indented files) with shared/corpus/fetch_corpus.sh into bench/.work/corpus/L
unless --corpus names a folder, copies it to a scratch folder, and asserts:

1. no internal error on any file (check or fix);
2. every rewritten file parses;
3. a second `fix` changes nothing;
4. every changed line lies inside the range of a finding `check` reported (or is an
   import line a fix added).

Prints counts and exits 1 if any assertion fails.
"""
from __future__ import annotations

import argparse
import ast
import collections
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FETCH = os.path.join(os.path.dirname(ROOT), "shared", "corpus", "fetch_corpus.sh")
IMPORT_LINE = re.compile(rb"^\s*(import\s+[\w.]+(\s+as\s+\w+)?(\s*,\s*[\w.]+(\s+as\s+\w+)?)*|from\s+[\w.]+\s+import\s+.+)\s*$")


def fetch(target: str) -> str:
    src = os.path.join(target, "src")
    if not os.path.isdir(src):
        fetcher = os.environ.get("COMPILE_LINT_FETCH_CORPUS", FETCH)
        subprocess.run(["bash", fetcher, target, "L"], check=True)
    return src


HAZARD_BLOCK = (
    "\nimport torch\nimport torch._dynamo\n"
    "model = torch.nn.Linear(2, 2)\n"
    "torch.compile(model)\n"
    "torch._dynamo.config.suppress_errors = True\n"
    "scaler = torch.cuda.amp.GradScaler()\n"
)


def tabify(text: str) -> str:
    out = []
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip(" ")
        spaces = len(line) - len(stripped)
        out.append("\t" * (spaces // 4) + " " * (spaces % 4) + stripped)
    return "".join(out)


def add_synthetic(work: str, count: int) -> dict[str, int]:
    """Copies of `count` corpus files as BOM, CRLF and tab-indented variants, each with
    hazards appended, so fixes run on those encodings too (corpus L has CRLF files but
    no BOM or tab-indented ones)."""
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(work) for f in fs if f.endswith(".py"))
    picked = [p for p in files if 2_000 < os.path.getsize(p) < 40_000][:: max(1, len(files) // max(count, 1))][:count]
    target = os.path.join(work, "_synthetic")
    os.makedirs(target, exist_ok=True)
    made = collections.Counter()
    for i, path in enumerate(picked):
        with open(path, "rb") as fh:
            raw = fh.read()
        try:
            text = raw.decode("utf-8").replace("\r\n", "\n")
        except UnicodeDecodeError:
            continue
        if not parses(raw):
            continue
        variants = {
            "bom": b"\xef\xbb\xbf" + (text + HAZARD_BLOCK).encode(),
            "crlf": (text + HAZARD_BLOCK).replace("\n", "\r\n").encode(),
            "tab": (tabify(text) + HAZARD_BLOCK).encode(),
        }
        for kind, data in variants.items():
            if parses(data):
                with open(os.path.join(target, f"{kind}_{i:03d}.py"), "wb") as fh:
                    fh.write(data)
                made[kind] += 1
    return dict(made)


def snapshot(folder: str) -> dict[str, bytes]:
    out = {}
    for d, dirs, files in os.walk(folder):
        dirs[:] = [x for x in dirs if x != ".compile_lint_cache"]
        for f in files:
            if f.endswith((".py", ".pyi")):
                p = os.path.join(d, f)
                with open(p, "rb") as fh:
                    out[p] = fh.read()
    return out


def compile_lint(args: list[str], cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "compile_lint", *args], cwd=cwd, capture_output=True)


def parses(data: bytes) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(data)
        return True
    except (SyntaxError, ValueError):
        return False


def changed_old_lines(old: bytes, new: bytes):
    """(first, last) 1-based old line numbers of each replaced/deleted hunk, and the
    inserted lines of each pure insertion with the old line it lands before."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            yield ("replace", i1 + 1, i2, b[j1:j2])
        else:
            yield ("insert", i1 + 1, i1, b[j1:j2])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", help="a folder of sources (default: fetch corpus L into bench/.work/corpus/L)")
    ap.add_argument("--jobs", default="0", help="worker processes for compile-lint (0: all cores)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy and print where it is")
    ap.add_argument("--synthetic", type=int, default=30, help="files to copy as BOM/CRLF/tab variants with hazards (0: none)")
    args = ap.parse_args(argv)

    source = args.corpus or fetch(os.path.join(ROOT, "bench", ".work", "corpus", "L"))
    scratch = tempfile.mkdtemp(prefix="compile-lint-corpus-")
    work = os.path.join(scratch, "src")
    shutil.copytree(source, work, symlinks=True, ignore=shutil.ignore_patterns(".compile_lint_cache"))
    failures: list[str] = []
    counts: dict[str, object] = {}
    try:
        counts["synthetic_variants"] = add_synthetic(work, args.synthetic) if args.synthetic else {}
        before = snapshot(work)
        counts["files"] = len(before)
        counts["bom"] = sum(d.startswith(b"\xef\xbb\xbf") for d in before.values())
        counts["crlf"] = sum(b"\r\n" in d for d in before.values())
        counts["tab-indented"] = sum(bool(re.search(rb"^\t+\S", d, re.M)) for d in before.values())

        t = time.perf_counter()
        check = compile_lint(["check", ".", "--output-format", "json", "--no-cache", "-j", args.jobs], work)
        counts["check_s"] = round(time.perf_counter() - t, 1)
        if check.returncode not in (0, 1):
            failures.append(f"check exited {check.returncode}: {check.stderr.decode(errors='replace')[-2000:]}")
        findings = json.loads(check.stdout or b"[]")
        internal = [line for line in check.stderr.decode(errors="replace").splitlines() if "internal error" in line]
        counts["check_internal_errors"] = len(internal)
        failures += [f"check: {line}" for line in internal]
        counts["findings"] = len(findings)
        counts["by_code"] = dict(sorted(collections.Counter(f["code"] for f in findings).items()))
        counts["fixable_safe"] = sum(1 for f in findings if f.get("fix") and f["fix"].get("applicability") == "safe")
        counts["fixable_unsafe"] = sum(1 for f in findings if f.get("fix") and f["fix"].get("applicability") == "unsafe")
        counts["syntax_errors"] = counts["by_code"].get("CL000", 0)
        ranges: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
        for f in findings:
            path = os.path.normpath(os.path.join(work, f["filename"]))
            ranges[path].append((f["location"]["row"], f["end_location"]["row"]))

        t = time.perf_counter()
        fix = compile_lint(["fix", ".", "--unsafe-fixes", "--no-cache", "--output-format", "json", "-j", args.jobs], work)
        counts["fix_s"] = round(time.perf_counter() - t, 1)
        fix_err = fix.stderr.decode(errors="replace")
        internal = [line for line in fix_err.splitlines() if "internal error" in line]
        counts["fix_internal_errors"] = len(internal)
        failures += [f"fix: {line}" for line in internal]
        not_parsing = [line for line in fix_err.splitlines() if "does not parse" in line]
        counts["fixes_refused_not_parsing"] = len(not_parsing)
        failures += [f"fix: {line}" for line in not_parsing]
        counts["fix_other_errors"] = [line for line in fix_err.splitlines() if line.startswith("compile-lint: error:") and "internal error" not in line and "does not parse" not in line][:10]
        remaining = json.loads(fix.stdout or b"[]")
        counts["remaining"] = len(remaining)

        after = snapshot(work)
        changed = [p for p in before if after.get(p) != before[p]]
        counts["files_changed"] = len(changed)
        bad_parse = [p for p in changed if not parses(after[p])]
        counts["rewritten_not_parsing"] = len(bad_parse)
        failures += [f"rewritten file does not parse: {os.path.relpath(p, work)}" for p in bad_parse]
        outside = []
        changed_lines = 0
        for p in changed:
            spans = ranges.get(p, [])
            for kind, first, last, new_lines in changed_old_lines(before[p], after[p]):
                changed_lines += max(1, last - first + 1)
                if kind == "insert":
                    if all(IMPORT_LINE.match(line.rstrip(b"\r\n")) or not line.strip() for line in new_lines):
                        continue
                    if any(lo <= first <= hi + 1 for lo, hi in spans):
                        continue
                elif all(any(lo <= row <= hi for lo, hi in spans) for row in range(first, last + 1)):
                    continue  # every replaced line lies in some finding's range
                outside.append(f"{os.path.relpath(p, work)}:{first}-{last} ({kind})")
        counts["changed_lines"] = changed_lines
        counts["changes_outside_findings"] = len(outside)
        failures += [f"change outside any finding's range: {o}" for o in outside[:20]]

        again = compile_lint(["fix", ".", "--unsafe-fixes", "--no-cache", "-j", args.jobs], work)
        second = snapshot(work)
        moved = [os.path.relpath(p, work) for p in after if second.get(p) != after[p]]
        counts["second_fix_changed_files"] = len(moved)
        failures += [f"a second fix changed {p}" for p in moved[:20]]
        internal = [line for line in again.stderr.decode(errors="replace").splitlines() if "internal error" in line]
        failures += [f"second fix: {line}" for line in internal]
    finally:
        if args.keep:
            print(f"scratch copy kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)

    width = max(len(k) for k in counts)
    for k, v in counts.items():
        print(f"{k.ljust(width)}  {v}")
    if failures:
        print(f"\nFAILED ({len(failures)}):")
        for line in failures[:60]:
            print(f"  {line}")
        return 1
    print("\nOK: no internal error, every rewritten file parses, a second fix changes nothing, every change lies in a finding's range")
    return 0


if __name__ == "__main__":
    sys.exit(main())
