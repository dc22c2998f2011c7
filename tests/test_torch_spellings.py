"""compile_lint/data/torch_spellings.json (scripts/gen_torch_spellings.py): torch's public
API spelled through the modules that define it resolves to its public name."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap

import pytest

from compile_lint.analysis.semantic.names import NameTable, public_spelling

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(REPO, "compile_lint", "data", "torch_spellings.json")


def resolved(source: str, expr: str) -> str:
    tree = ast.parse(textwrap.dedent(source))
    table = NameTable.build(tree, module="app")
    return table.resolve(ast.parse(expr, mode="eval").body)


def test_the_table_matches_the_installed_torch():
    pytest.importorskip("torch")
    with open(TABLE, encoding="utf-8") as fh:
        data = json.load(fh)
    assert data["spellings"]["torch.jit._script.script"] == "torch.jit.script"
    assert data["spellings"]["torch.jit._trace.trace_module"] == "torch.jit.trace_module"
    run = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "gen_torch_spellings.py"), "--check"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, "regenerate: python scripts/gen_torch_spellings.py\n" + run.stderr[-2000:]


@pytest.mark.parametrize("source, expr, want", [
    ("from torch.jit._script import script", "script", "torch.jit.script"),
    ("from torch.jit._serialization import load as jit_load", "jit_load", "torch.jit.load"),
    ("import torch.jit._trace as tracing", "tracing.trace_module", "torch.jit.trace_module"),
    ("import torch", "torch.cuda.amp.autocast_mode.autocast", "torch.cuda.amp.autocast"),
    ("from torch.nn.modules.conv import Conv2d", "Conv2d", "torch.nn.Conv2d"),
    # the public spelling is left as it is, and so is a private one torch does not re-export
    ("import torch", "torch.jit.script", "torch.jit.script"),
    ("from torch.jit._trace import make_module", "make_module",
     "torch.jit._trace.make_module"),
    # a project's own package that happens to end like torch's is not torch
    ("from mylib.jit._script import script", "script", "mylib.jit._script.script"),
])
def test_private_spellings_resolve_to_the_public_name(source, expr, want):
    assert resolved(source, expr) == want


def test_a_public_and_a_private_import_of_one_function_do_not_conflict():
    source = """
    try:
        from torch.jit import script
    except ImportError:
        from torch.jit._script import script
    """
    assert resolved(source, "script") == "torch.jit.script"


def test_public_spelling_of_none_and_of_other_names():
    assert public_spelling(None) is None
    assert public_spelling("numpy.load") == "numpy.load"
