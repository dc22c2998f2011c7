#!/usr/bin/env python3
"""Generate ``compile_lint/data/torch_spellings.json``: the private spellings of torch's
public API (``torch.jit._script.script`` is ``torch.jit.script``).

Code written against older torch, or copied from torch's own sources, imports public
functions from the modules that define them: ``from torch.jit._script import script``
(voicesmith's TorchScript export, bench/fresh_reads batch 11), ``from torch.jit._trace
import trace_module``, ``from torch.serialization import load``. The linter resolves names
without importing torch, so it learns these spellings from this table: a name resolved to
a key is the value.

For each public package below, every public function or class it exposes whose
``__module__`` is a submodule of that package, and which that submodule also binds under
the same name, gives ``"<submodule>.<name>": "<package>.<name>"``. Only the torch that
runs this script is read (the pinned one: ``constraints.txt``), so a spelling that older
releases had and 2.13 no longer has is not in the table.

    python scripts/gen_torch_spellings.py            # writes the JSON
    python scripts/gen_torch_spellings.py --check    # exit 1 when the file differs
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import sys
import warnings

PACKAGES = (
    "torch", "torch.nn", "torch.nn.functional", "torch.jit", "torch.onnx", "torch.export", "torch.compiler",
    "torch._dynamo", "torch.fx", "torch.amp", "torch.cuda", "torch.cuda.amp", "torch.cpu.amp", "torch.autograd",
    "torch.utils.checkpoint",
)
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compile_lint", "data",
                   "torch_spellings.json")


def spellings() -> dict:
    table = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in dir(module):
            if name.startswith("_"):
                continue
            obj = getattr(module, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj)):
                continue
            home = getattr(obj, "__module__", None)
            if not isinstance(home, str) or not home.startswith(package + "."):
                continue
            if getattr(sys.modules.get(home), name, None) is not obj:
                continue
            # the shortest public spelling wins (`torch.nn.modules.conv.Conv2d` is
            # `torch.nn.Conv2d`, not a longer re-export of it)
            private = f"{home}.{name}"
            public = f"{package}.{name}"
            if private not in table or len(public) < len(table[private]):
                table[private] = public
    return dict(sorted(table.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed file differs")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    import torch

    text = json.dumps({"torch": torch.__version__.split("+")[0], "packages": list(PACKAGES),
                       "spellings": spellings()}, indent=1) + "\n"
    if args.check:
        with open(OUT, encoding="utf-8") as fh:
            return 0 if fh.read() == text else 1
    with open(OUT + ".tmp", "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(OUT + ".tmp", OUT)
    print(f"{OUT}: {text.count(chr(10)) - 6} spellings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
