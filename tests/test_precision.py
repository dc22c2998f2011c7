"""The dtype analysis of analysis/tensors/precision.py (CL301/CL302 ask it): dtypes of
expressions, autocast op lists, dtypes from call sites in other files."""
from __future__ import annotations

import ast
import os
import textwrap

import pytest

from compile_lint.analysis.semantic.facts import ModuleFacts
from compile_lint.analysis.semantic.names import NameTable
from compile_lint.analysis.tensors.precision import BF16, F16, F32, precision_for
from compile_lint.config import Settings
from compile_lint.engine import Linter, Selection
from compile_lint.source import SourceFile


def lint(tmp_path, files: dict[str, str], codes=("CL301", "CL302", "CL303", "CL304", "CL401", "CL402", "CL403")):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection(select=tuple(codes)))
    results = linter.lint([str(tmp_path / rel) for rel in files])
    return {os.path.basename(r.path): r.findings for r in results}


def facts_for(code: str, path: str = "snippet.py") -> ModuleFacts:
    source = SourceFile(path, textwrap.dedent(code).encode())
    tree = source.parse()
    return ModuleFacts(source, tree, NameTable.build(tree, "snippet"), {}, Settings())


def dtype_of(code: str, marker: str = "RESULT"):
    """The dtype the analysis gives the expression assigned to RESULT."""
    facts = facts_for(code)
    node = next(n for n in facts.nodes(ast.Assign) if any(isinstance(t, ast.Name) and t.id == marker for t in n.targets))
    return precision_for(facts).dtype(node.value)


@pytest.mark.parametrize(
    "code,expected",
    [
        ("import torch\nRESULT = torch.rand(3).half() * 2 + 1\n", F16),
        ("import torch\nRESULT = torch.rand(3).to(torch.bfloat16) * 2\n", BF16),
        ("import torch\nRESULT = torch.rand(3).half().float() * 2\n", F32),
        ("import torch\nRESULT = torch.zeros(3, dtype=torch.float16) + torch.zeros(3)\n", F32),  # fp32 wins
        ("import torch\nRESULT = torch.ones(3).half() + torch.ones(3).bfloat16()\n", F32),  # f16 + bf16
        ("import torch\nx = torch.rand(3).half()\nRESULT = torch.lerp(x, x, 0.5)\n", F16),
        ("import torch\nx = torch.rand(3).half()\nRESULT = torch.full_like(x, 2.0)\n", F16),
        ("import torch\nRESULT = torch.rand(3) * 0.5\n", F32),
        ("def f(x):\n    RESULT = x * 2\n", None),  # unknown stays unknown
    ],
)
def test_dtype_of_expressions(code, expected):
    assert dtype_of(code) == expected


AUTOCAST = """
import torch
import torch.nn.functional as F

def f(x: torch.FloatTensor, w: torch.FloatTensor):
    with {ctx}:
        y = F.conv2d(x, w)
        RESULT = {expr}
"""


@pytest.mark.parametrize(
    "ctx,expr,expected",
    [
        ('torch.autocast("cuda")', "y", F16),  # conv is on the lower-precision list
        ('torch.autocast("cpu")', "y", BF16),  # cpu's default dtype
        ('torch.autocast("cuda", dtype=torch.bfloat16)', "y", BF16),
        ("torch.cuda.amp.autocast()", "y", F16),
        ('torch.autocast("cuda")', "x * 0.5 + x * 0.5", F32),  # elementwise: input dtype
        ('torch.autocast("cuda")', "y ** 0.45", F32),  # pow runs in fp32 on CUDA
        ('torch.autocast("cpu")', "y ** 0.45", BF16),  # ...but not on CPU
        ('torch.autocast("cuda")', "y.exp()", F32),
        ('torch.autocast("cuda")', "y * 2", F16),
        ('torch.autocast("cuda", enabled=False)', "y", F32),
        ("torch.autocast(device_type=dev)", "y ** 0.45", None),  # device unknown
    ],
)
def test_autocast_op_lists(ctx, expr, expected):
    assert dtype_of(AUTOCAST.format(ctx=ctx, expr=expr)) == expected


def test_dtype_from_call_sites_in_another_file(tmp_path):
    found = lint(tmp_path, {
        "fx.py": """
            def vignette(img, strength):
                return img * (1 - strength) + img * img * strength
        """,
        "app.py": """
            import torch
            from fx import vignette
            fast = torch.compile(vignette)
            out = fast(frame.to(torch.float16), 0.3)
        """,
    }, codes=("CL301",))
    assert [f.code for f in found["fx.py"]] == ["CL301"]
    assert "at the call on line 5 in app.py" in found["fx.py"][0].message


def test_mixed_call_sites_stay_quiet(tmp_path):
    found = lint(tmp_path, {
        "app.py": """
            import torch

            @torch.compile
            def over(a, b, t):
                return a * t + b * (1 - t)

            x = over(fg.half(), bg.half(), 0.5)
            y = over(fg.float(), bg.float(), 0.5)
        """,
    }, codes=("CL301",))
    assert found["app.py"] == []
