#!/usr/bin/env python3
"""Benchmark compile-lint against its peers on pinned real-world corpora.

    python bench/run_bench.py                      # sets S and M, 3 runs, peers
    python bench/run_bench.py --runs 1 --sets S --skip-peers   # a quick run (~5-10 min)
    nohup python bench/run_bench.py > bench/.work/bench.log 2>&1 &  # the full run

What it does, all under bench/.work/ (gitignored):
- fetches corpora S and M with shared/corpus/fetch_corpus.sh (once);
- installs the peers, pinned, into a scratch venv (once): torchfix 0.7.0, fixit 2.2.1,
  ruff 0.17.5;
- measures, on the same files in one run, with 1 and 2 worker processes:
  compile-lint cold (empty cache), warm (nothing changed), after editing one file,
  and one file alone (the pre-commit case: a fresh process, no cache); then Ruff
  `--select ALL --no-cache`, and TorchFix and Fixit on torchvision (alone: they take
  minutes per run on a whole set) next to compile-lint on the same folder;
- reports medians of --runs runs (wall and CPU seconds), ratios compile-lint/peer
  computed pair by pair within the same run, and peak resident memory (parent and
  largest worker, from COMPILE_LINT_STATS; peers: the process tree's peak);
- writes its tables to bench/.work/run_bench.md (--out): bench/results.md is the
  curated history, where a run's tables are pasted by hand with the context they need.

The corpora live inside this repository's gitignored bench/.work/, so a
`compile-lint.toml` with `respect-gitignore = false` is written into each corpus
folder (Ruff gets `--no-respect-gitignore`); the cache goes there too.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, ".work")
FETCH = os.path.join(os.path.dirname(ROOT), "shared", "corpus", "fetch_corpus.sh")
PEERS = ["torchfix==0.7.0", "fixit==2.2.1", "ruff==0.17.5"]
PYTHON = sys.executable


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def corpus(name: str) -> str:
    target = os.path.join(WORK, "corpus", name)
    src = os.path.join(target, "src")
    if not os.path.isdir(src):
        log(f"fetching corpus {name}")
        subprocess.run(["bash", os.environ.get("COMPILE_LINT_FETCH_CORPUS", FETCH), target, name], check=True)
    with open(os.path.join(src, "compile-lint.toml"), "w") as fh:
        fh.write("# written by bench/run_bench.py: the corpus sits in a gitignored folder\nrespect-gitignore = false\n")
    return src


def peers_venv(peers: list[str]) -> str:
    venv = os.path.join(WORK, "peers-venv" if peers == PEERS else "ruff-venv")
    marker = os.path.join(venv, ".installed-" + "-".join(peers).replace("=", ""))
    if not os.path.exists(marker):
        log(f"installing {' '.join(peers)} into {venv}")
        subprocess.run([sys.executable, "-m", "venv", "--clear", venv], check=True)
        subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", *peers], check=True)
        open(marker, "w").close()
    return os.path.join(venv, "bin")


def measure(cmd: list[str], cwd: str, env_extra: dict | None = None) -> dict:
    """Run once: wall and CPU seconds, peak RSS of the process tree, compile-lint stats."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure as users run it: with .pyc files
    env.update(SNAPSHOT_ENV)
    stats_file = None
    if env_extra:
        env.update(env_extra)
    if cmd[0] == PYTHON and "compile_lint" in cmd:
        fd, stats_file = tempfile.mkstemp(prefix="cl-stats-", suffix=".jsonl")
        os.close(fd)
        env["COMPILE_LINT_STATS"] = stats_file
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    out = {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024, "rc": proc.returncode}
    if proc.returncode not in (0, 1):
        out["error"] = err[-500:]
    if stats_file:
        try:
            with open(stats_file) as fh:
                lines = [json.loads(line) for line in fh if line.strip()]
            if lines:
                out["stats"] = lines[-1]
                out["rss_mb"] = lines[-1]["parent_maxrss_mb"]
                out["worker_rss_mb"] = lines[-1]["worker_maxrss_mb"]
        finally:
            os.unlink(stats_file)
    return out


SNAPSHOT_ENV: dict = {}


def snapshot_code() -> None:
    """Measure one version of the code: copy compile_lint/ and codemods/ aside and put
    the copy first on PYTHONPATH (others may edit the work tree while the run goes on,
    and every edit rightly invalidates the cache)."""
    target = os.path.join(WORK, "code-snapshot")
    shutil.rmtree(target, ignore_errors=True)
    for name in ("compile_lint", "codemods"):
        shutil.copytree(os.path.join(ROOT, name), os.path.join(target, name),
                        ignore=shutil.ignore_patterns("__pycache__"))
    SNAPSHOT_ENV["PYTHONPATH"] = target


def cl(*args: str) -> list[str]:
    return [PYTHON, "-m", "compile_lint", *args]


def pick_edit_target(folder: str) -> str:
    """A mid-sized module (the median size of the set): the file 'being edited'."""
    files = sorted(
        (os.path.getsize(os.path.join(d, f)), os.path.join(d, f))
        for d, _, fs in os.walk(folder) for f in fs if f.endswith(".py")
    )
    return files[len(files) // 2][1]


def bench_set(name: str, src: str, runs: int, jobs_list: list[int]) -> dict:
    rows: dict = {}
    target = pick_edit_target(src)
    with open(target, "rb") as fh:
        original = fh.read()
    nfiles = sum(1 for d, _, fs in os.walk(src) for f in fs if f.endswith(".py"))
    rows["_files"] = nfiles
    rows["_target"] = os.path.relpath(target, src)
    try:
        for jobs in jobs_list:
            j = ["-j", str(jobs)]
            for r in range(runs):
                shutil.rmtree(os.path.join(src, ".compile_lint_cache"), ignore_errors=True)
                log(f"{name} j{jobs} run {r + 1}/{runs}: cold")
                rows.setdefault(("cold", jobs), []).append(measure(cl("check", ".", *j), src))
                log(f"{name} j{jobs} run {r + 1}/{runs}: warm")
                rows.setdefault(("warm", jobs), []).append(measure(cl("check", ".", *j), src))
                with open(target, "ab") as fh:
                    fh.write(f"\n# bench edit {r} {time.time()}\n".encode())
                log(f"{name} j{jobs} run {r + 1}/{runs}: one file edited")
                rows.setdefault(("edit1", jobs), []).append(measure(cl("check", ".", *j), src))
                with open(target, "wb") as fh:
                    fh.write(original)
                os.utime(target)
                log(f"{name} j{jobs} run {r + 1}/{runs}: one file, warm cache (its project as context)")
                rows.setdefault(("single-warm", jobs), []).append(measure(cl("check", target, *j), src))
                log(f"{name} j{jobs} run {r + 1}/{runs}: one file alone, --no-project --no-cache")
                rows.setdefault(("single-alone", jobs), []).append(measure(cl("check", target, "--no-cache", "--no-project", *j), src))
                shutil.rmtree(os.path.join(src, ".compile_lint_cache"), ignore_errors=True)
                log(f"{name} j{jobs} run {r + 1}/{runs}: one file, empty cache (summarizes its project)")
                rows.setdefault(("single", jobs), []).append(measure(cl("check", target, *j), src))
    finally:
        with open(target, "wb") as fh:
            fh.write(original)
    return rows


def bench_peers(name: str, src: str, runs: int, bin_dir: str, results: dict) -> None:
    ruff = [os.path.join(bin_dir, "ruff"), "check", "--select", "ALL", "--no-cache", "--no-respect-gitignore",
            "--isolated", "--exit-zero", "--quiet", "."]
    for r in range(runs):
        log(f"{name} run {r + 1}/{runs}: ruff --select ALL, then compile-lint cold -j2")
        results.setdefault(("ruff", 0), []).append(measure(ruff, src))
        results.setdefault(("cl-vs-ruff", 2), []).append(measure(cl("check", ".", "--no-cache", "-j", "2"), src))


def bench_slow_peers(src: str, runs: int, bin_dir: str) -> dict:
    """TorchFix and Fixit take minutes even on one library: torchvision alone."""
    found = next(os.path.join(src, d) for d in os.listdir(src) if d.startswith("torchvision"))
    # outside this git work tree: Fixit skips gitignored files even when named
    tv = os.path.join(tempfile.mkdtemp(prefix="compile-lint-bench-"), os.path.basename(found))
    shutil.copytree(found, tv)
    rows: dict = {"_folder": os.path.basename(tv), "_files": sum(1 for d, _, fs in os.walk(tv) for f in fs if f.endswith(".py"))}
    for r in range(runs):
        log(f"torchvision run {r + 1}/{runs}: torchfix, fixit, compile-lint")
        rows.setdefault(("torchfix", 0), []).append(measure([os.path.join(bin_dir, "torchfix"), "."], tv))
        rows.setdefault(("fixit", 0), []).append(measure([os.path.join(bin_dir, "fixit"), "lint", "."], tv))
        for jobs in (1, 2):
            rows.setdefault(("cl-tv", jobs), []).append(measure(cl("check", ".", "--no-cache", "-j", str(jobs)), tv))
    shutil.rmtree(os.path.dirname(tv), ignore_errors=True)
    return rows


def med(items: list[dict], key: str) -> float:
    vals = [i[key] for i in items if key in i]
    return statistics.median(vals) if vals else float("nan")


def fmt(x: float, digits: int = 2) -> str:
    return "n/a" if x != x else f"{x:.{digits}f}"


def ratio_pairwise(ours: list[dict], theirs: list[dict]) -> str:
    pairs = [a["wall"] / b["wall"] for a, b in zip(ours, theirs) if b["wall"] > 0]
    return fmt(statistics.median(pairs), 3) if pairs else "n/a"


def render(all_rows: dict, slow: dict | None, args) -> str:
    out = [
        "# compile-lint benchmark",
        "",
        f"Written by `bench/run_bench.py --runs {args.runs} --sets {args.sets} --jobs {','.join(map(str, args.jobs))}"
        + (" --skip-peers" if args.skip_peers else "") + (" --ruff-only" if args.ruff_only else "") + f"` on {time.strftime('%Y-%m-%d %H:%M')}; "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. "
        f"Medians of {args.runs} run(s); wall and CPU (user+sys, all processes) seconds. "
        "Load from other processes on a shared machine shows in wall time, less in CPU time. "
        "RSS: peak resident MB of the parent, and of the largest worker process.",
        "",
        "Targets (corpus M, 2 workers): cold <= 40 s, warm <= 1 s, one file <= 0.25 s, <= 400 MB per worker.",
        "",
    ]
    labels = {"cold": "cold (empty cache)", "warm": "warm (nothing changed)", "edit1": "one file edited",
              "single-warm": "one file, warm cache (`check FILE`; the project from the cache)",
              "single-alone": "one file alone (`check FILE --no-project --no-cache`)",
              "single": "one file, first run (`check FILE`, empty cache: summarizes the project)"}
    for name, rows in all_rows.items():
        out += [f"## Set {name}: {rows['_files']} files", "",
                "| case | workers | wall s | CPU s | parent RSS MB | worker RSS MB | files parsed (pass 1 / 2) |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for case in ("cold", "warm", "edit1", "single-warm", "single-alone", "single"):
            for jobs in args.jobs:
                items = rows.get((case, jobs))
                if not items:
                    continue
                st = items[-1].get("stats", {})
                out.append(
                    f"| {labels[case]} | {jobs} | {fmt(med(items, 'wall'))} | {fmt(med(items, 'cpu'))} | "
                    f"{fmt(med(items, 'rss_mb'), 0)} | {fmt(max((i.get('worker_rss_mb', 0) for i in items), default=0), 0)} | "
                    f"{st.get('pass1', '?')} / {st.get('pass2', '?')} |"
                )
        errors = [i["error"] for items in rows.values() if isinstance(items, list) for i in items if "error" in i]
        if errors:
            out += ["", f"Errors: {errors[:3]}"]
        if ("ruff", 0) in rows:
            ruff, ours = rows[("ruff", 0)], rows[("cl-vs-ruff", 2)]
            out += ["", "| peer (same files, same run) | wall s | CPU s | peak RSS MB | compile-lint cold -j2 wall s | ratio compile-lint/peer (pairwise median) |",
                    "|---|---:|---:|---:|---:|---:|",
                    f"| Ruff 0.17.5 `--select ALL --no-cache` | {fmt(med(ruff, 'wall'))} | {fmt(med(ruff, 'cpu'))} | {fmt(med(ruff, 'rss_mb'), 0)} | {fmt(med(ours, 'wall'))} | {ratio_pairwise(ours, ruff)} |"]
        out.append("")
    if slow:
        out += [f"## TorchFix and Fixit: {slow['_folder']} ({slow['_files']} files)", "",
                "| tool | wall s | CPU s | peak RSS MB | ratio compile-lint -j1 / tool | ratio compile-lint -j2 / tool |",
                "|---|---:|---:|---:|---:|---:|"]
        for tool, label in (("torchfix", "TorchFix 0.7.0"), ("fixit", "Fixit 2.2.1")):
            items = slow[(tool, 0)]
            out.append(f"| {label} | {fmt(med(items, 'wall'))} | {fmt(med(items, 'cpu'))} | {fmt(med(items, 'rss_mb'), 0)} | "
                       f"{ratio_pairwise(slow[('cl-tv', 1)], items)} | {ratio_pairwise(slow[('cl-tv', 2)], items)} |")
        for jobs in (1, 2):
            items = slow[("cl-tv", jobs)]
            out.append(f"| compile-lint cold `-j {jobs}` | {fmt(med(items, 'wall'))} | {fmt(med(items, 'cpu'))} | {fmt(med(items, 'rss_mb'), 0)} | | |")
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs of each measurement (median reported)")
    ap.add_argument("--sets", default="S,M", help="corpus sets, comma-separated (S, M, M2, L)")
    ap.add_argument("--jobs", default="1,2", help="worker counts to measure")
    ap.add_argument("--skip-peers", action="store_true", help="measure compile-lint only")
    ap.add_argument("--ruff-only", action="store_true", help="of the peers, only Ruff (no TorchFix/Fixit)")
    ap.add_argument("--peer-runs", type=int, default=None, help="runs of the slow peers (default: --runs)")
    # not results.md: rewriting it wiped the curated history (a `--ruff-only` run did)
    ap.add_argument("--out", default=os.path.join(WORK, "run_bench.md"))
    args = ap.parse_args(argv)
    args.jobs = [int(j) for j in args.jobs.split(",")]
    os.makedirs(WORK, exist_ok=True)
    snapshot_code()
    bin_dir = None if args.skip_peers else peers_venv(["ruff==0.17.5"] if args.ruff_only else PEERS)
    all_rows: dict = {}
    slow = None
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        src = corpus(name)
        all_rows[name] = bench_set(name, src, args.runs, args.jobs)
        if bin_dir:
            bench_peers(name, src, args.runs, bin_dir, all_rows[name])
        with open(args.out, "w") as fh:  # partial results as they come
            fh.write(render(all_rows, slow, args))
    if bin_dir and not args.ruff_only:
        slow = bench_slow_peers(corpus("S"), args.peer_runs or args.runs, bin_dir)
    text = render(all_rows, slow, args)
    with open(args.out, "w") as fh:
        fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
