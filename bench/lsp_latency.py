#!/usr/bin/env python3
"""Language server latency: didChange -> publishDiagnostics on a 1,000-line file in a
generated project of 2,000 files, with the project's region index built (warm).

    python bench/lsp_latency.py                 # generate (once), measure, print a table
    python bench/lsp_latency.py --edits 50 --files 2000 --big-lines 1000

The project (bench/.work/lsp_project/, gitignored) is image-model code in 20 packages:
each module has an nn.Module with an interpolate and a helper; every 10th module
compiles a block of another module, and `pkg00/train.py` traces the classes of the
1,000-line `pkg00/big.py`, so the big file's findings depend on regions set up in
another file. The server runs as editors run it (`compile-lint server` on stdio, the
results cache on), with `debounceMs: 0`, so the time measured is from sending didChange
to reading the matching publishDiagnostics (version-checked) on the client side, pipe
and JSON-RPC included, debounce excluded.

Two kinds of edit are timed:
- body edit: a constant inside a method body changes (the module's summary does not:
  the index is reused) -- the common keystroke;
- summary edit: a def is added (the summary changes: the index over 2,000 summaries is
  rebuilt and the other open buffers are checked).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from lsp_client import LspClient, uri  # noqa: E402

SMALL = '''\
import torch
import torch.nn.functional as F
from torch import nn

from pkg{other_pkg:02d} import mod{other:04d}


class Block{i}(nn.Module):
    """A resize-and-blend block ({i})."""

    def __init__(self, channels=3, scale=2.0):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.scale = scale

    def forward(self, x, ref):
        y = self.conv(x)
        y = F.interpolate(y, size=ref.shape[-2:], mode="bilinear", align_corners=False)
        return blend{i}(y, ref, 0.5)


def blend{i}(a, b, alpha):
    out = a * alpha + b * (1 - alpha)
    return out.clamp(0, 1)


def make{i}():
    return Block{i}()
'''
COMPILES = '''

compiled{i} = torch.compile(mod{other:04d}.make{other}())
'''
BIG_HEAD = '''\
import torch
import torch.nn.functional as F
from torch import nn

'''
BIG_CLASS = '''

class Stage{k}(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.gain = 0.5

    def forward(self, x, ref):
        y = self.conv(x) * self.gain
        h = int(ref.shape[2])
        w = int(ref.shape[3])
        y = F.interpolate(y, size=(h, w), mode="bilinear")
        y = y + 0.25 * ref
        return y.clamp(0, 1)

    def extra_repr(self):
        return "stage {k}"


def helper{k}(x):
    scale = 1.0
    return x * scale
'''
TRAIN = '''\
import torch

from pkg00 import big

example = (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16))
{traces}
'''


def generate(target: str, files: int, big_lines: int) -> str:
    marker = os.path.join(target, f".generated-{files}-{big_lines}")
    if os.path.exists(marker):
        return target
    import shutil

    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    with open(os.path.join(target, "pyproject.toml"), "w") as fh:
        fh.write('[project]\nname = "lsp-bench"\n\n[tool.compile-lint]\nrespect-gitignore = false\n')
    packages = 20
    per = (files - 2) // packages - 1  # modules a package, besides its __init__.py
    extra = files - 2 - packages * (per + 1)  # the rest go into the last packages
    counts = [per + (1 if p >= packages - extra else 0) for p in range(packages)]
    starts = [sum(counts[:p]) for p in range(packages)]
    total = sum(counts)
    for p in range(packages):
        folder = os.path.join(target, f"pkg{p:02d}")
        os.makedirs(folder)
        open(os.path.join(folder, "__init__.py"), "w").close()
        for j in range(counts[p]):
            i = starts[p] + j
            other = (i * 7 + 3) % total
            other_pkg = max(q for q in range(packages) if starts[q] <= other)
            text = SMALL.format(i=i, other=other, other_pkg=other_pkg)
            if i % 10 == 0:
                text += COMPILES.format(i=i, other=other)
            with open(os.path.join(folder, f"mod{i:04d}.py"), "w") as fh:
                fh.write(text)
    big = [BIG_HEAD]
    k = 0
    while sum(part.count("\n") for part in big) < big_lines:
        big.append(BIG_CLASS.format(k=k))
        k += 1
    with open(os.path.join(target, "pkg00", "big.py"), "w") as fh:
        fh.write("".join(big))
    traces = "\n".join(f"traced{s} = torch.jit.trace(big.Stage{s}(), example)" for s in range(0, k, 3))
    with open(os.path.join(target, "pkg00", "train.py"), "w") as fh:
        fh.write(TRAIN.format(traces=traces))
    open(marker, "w").close()
    return target


def count_files(target: str) -> int:
    return sum(1 for _, _, names in os.walk(target) for n in names if n.endswith(".py"))


def summarize(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p90 = ms[min(len(ms) - 1, int(round(0.9 * (len(ms) - 1))))]
    return f"{statistics.median(ms):.1f} | {p90:.1f} | {ms[0]:.1f} | {ms[-1]:.1f}"


def session(target: str):
    """Start the server, open big.py, wait for the project index; (client, uri, text, s)."""
    client = LspClient(target)
    started = time.perf_counter()
    client.initialize(target, {"debounceMs": 0})
    path = os.path.join(target, "pkg00", "big.py")
    with open(path) as fh:
        text = fh.read()
    doc = client.open(path, text)
    # CL101 on a traced stage needs the index (train.py sets the regions up)
    client.diagnostics_for(doc, lambda d: any(x["code"] == "CL101" for x in d), timeout=1800)
    return client, doc, text, time.perf_counter() - started


def published(client, doc: str, version: int) -> float:
    """When the diagnostics of that version of the document arrived."""
    at, _ = client.wait_for(
        "textDocument/publishDiagnostics", lambda p: p["uri"] == doc and p.get("version") == version, timeout=60)
    return at


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--big-lines", type=int, default=1000)
    ap.add_argument("--edits", type=int, default=40)
    ap.add_argument("--target", default=os.path.join(HERE, ".work", "lsp_project"))
    args = ap.parse_args()

    target = generate(args.target, args.files, args.big_lines)
    n_files = count_files(target)
    with open(os.path.join(target, "pkg00", "big.py")) as fh:
        big_lines = fh.read().count("\n")

    # first start: builds the cache if it is cold; the second start reads it back
    client, _, _, first_start = session(target)
    client.close()
    client, doc, text, warm_start = session(target)

    body, summary = [], []
    body_versions, summary_versions = set(), set()
    version = 1
    needle = "self.gain = 0.5"
    for n in range(args.edits):
        version += 1
        edited = text.replace(needle, f"self.gain = 0.{n + 10}", 1)
        sent = client.change(doc, edited, version)
        at = published(client, doc, version)
        body.append(at - sent)
        body_versions.add(version)
    for n in range(max(5, args.edits // 4)):
        version += 1
        edited = text + f"\n\ndef added{n}(x):\n    return x\n"
        sent = client.change(doc, edited, version)
        summary.append(published(client, doc, version) - sent)
        summary_versions.add(version)
        version += 1
        sent = client.change(doc, text, version)  # back: the index changes again
        summary.append(published(client, doc, version) - sent)
        summary_versions.add(version)
    reported = client.request("compile-lint/timings", None)
    server_side = reported["lints"]
    rc = client.close()

    import platform

    print(f"project: {n_files} Python files, big file {big_lines} lines; {platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}; server exit code {rc}")
    print(f"server start to first diagnostics with the project index: first start {first_start:.1f} s, "
          f"second start (warm cache) {warm_start:.1f} s; second start's index: {reported['projects']}")
    print()
    print("| edit to the 1,000-line file | n | median ms | p90 ms | min ms | max ms |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| body edit (index reused) | {len(body)} | {summarize(body)} |")
    print(f"| summary edit (index rebuilt) | {len(summary)} | {summarize(summary)} |")
    print()
    print("Inside the server (lint + publish, and its CPU time), same edits:")
    print()
    print("| edit | n | wall median ms | wall p90 ms | CPU median ms | CPU p90 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, versions in (("body edit", body_versions), ("summary edit", summary_versions)):
        rows = [t for t in server_side if t["path"].endswith("big.py") and t["version"] in versions]
        wall = sorted(t["total_s"] * 1000 for t in rows)
        cpu = sorted(t["cpu_s"] * 1000 for t in rows)
        p90 = lambda xs: xs[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))]
        print(f"| {label} | {len(rows)} | {statistics.median(wall):.1f} | {p90(wall):.1f} | "
              f"{statistics.median(cpu):.1f} | {p90(cpu):.1f} |")
    print()
    print(f"load average during the run: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
