"""TorchScript's deprecation warnings: exact text, category, and whether a user sees them.

Run: python scripts/measure/torchscript_deprecated.py   (torch 2.13 CPU)
In this process, with every warning recorded (`simplefilter("always")`): the warnings
of torch.jit.trace, trace_module, script, save, load and freeze, with category and the
file they are attributed to. Then a child `python -c` script that traces and scripts a
module under Python's default warning filters: what reaches its stderr. Last, the
warning texts in torch/jit/*.py of the installed torch and of 2.14.1/2.15.0 wheels.
"""
import io
import os
import re
import subprocess
import sys
import warnings

import torch

from measure_env import header, torch_sources, verdict


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x)


def recorded(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [w for w in caught if "deprecat" in str(w.message).lower()]


CHILD = """
import torch
net = torch.nn.Linear(4, 4)
torch.jit.trace(net, torch.ones(1, 4))
torch.jit.script(net)
print("child done")
"""

if __name__ == "__main__":
    header("TorchScript deprecation warnings")
    x = torch.ones(1, 4)
    traced, seen = recorded(lambda: torch.jit.trace(Net(), x))
    shown = {}
    calls = {
        "torch.jit.trace": lambda: torch.jit.trace(Net(), x),
        "torch.jit.trace_module": lambda: torch.jit.trace_module(Net(), {"forward": x}),
        "torch.jit.script": lambda: torch.jit.script(Net()),
        "torch.jit.save": lambda: torch.jit.save(traced, io.BytesIO()),
        "torch.jit.freeze": lambda: torch.jit.freeze(torch.jit.script(Net()).eval()),
    }
    for name, call in calls.items():
        _, caught = recorded(call)
        shown[name] = caught
        for w in caught:
            where = os.path.relpath(w.filename, os.path.dirname(os.path.dirname(torch.__file__)))
            print(f"{name:24} {w.category.__name__}: {w.message}  [attributed to {where}:{w.lineno}]")
        if not caught:
            print(f"{name:24} no deprecation warning")
    buffer = io.BytesIO()
    torch.jit.save(traced, buffer)
    buffer.seek(0)
    _, caught = recorded(lambda: torch.jit.load(buffer))
    for w in caught:
        print(f"{'torch.jit.load':24} {w.category.__name__}: {w.message}")

    child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
    lines = [line for line in child.stderr.splitlines() if "deprecated" in line]
    print(f"child script, default warning filters: exit {child.returncode}, {len(lines)} deprecation lines on stderr")
    child_w = subprocess.run([sys.executable, "-W", "default::DeprecationWarning", "-c", CHILD],
                             capture_output=True, text=True, timeout=120)
    lines_w = [line.strip().split("site-packages/")[-1] for line in child_w.stderr.splitlines() if "deprecated" in line]
    print(f"child script, -W default::DeprecationWarning: {len(lines_w)} deprecation lines: {lines_w}")

    categories = {}
    print("warning texts in torch/jit by release:")
    for path in ("torch/jit/_trace.py", "torch/jit/_script.py"):
        for version, text in torch_sources(path).items():
            texts = sorted(set(re.findall(r'"(`torch\.jit\.(?:trace|script)` is (?:deprecated|not supported)[^"]*)"', text)))
            category = sorted(set(re.findall(r"Please switch to `torch\.compile` or `torch\.export`\.\",\n\s*(\w+Warning)", text)))
            print(f"  {path} {version}: {texts} {category}")
            categories.setdefault(version.split(" ")[0], set()).update(category)

    trace_w = shown["torch.jit.trace"]
    script_w = shown["torch.jit.script"]
    verdict(bool(trace_w and script_w),
            f"trace: {trace_w[0].category.__name__ if trace_w else None} {str(trace_w[0].message) if trace_w else ''!r}; "
            f"script: {script_w[0].category.__name__ if script_w else None}; attributed to torch's own file, so "
            f"Python's default filters hide it ({len(lines)} lines in a plain script, {len(lines_w)} with -W default); "
            f"category by release: " + ", ".join(f"{v} {'/'.join(sorted(c))}" for v, c in categories.items()))
