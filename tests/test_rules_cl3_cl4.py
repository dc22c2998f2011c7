"""What the generic case harness cannot say about CL301-CL304 and CL401-CL403:
message contents, region kinds, the dtype analysis itself, fix data, and the
codemods run by libcst's own runner."""
from __future__ import annotations

import ast
import os
import textwrap

import libcst as cst
import pytest
from libcst.codemod import CodemodContext

from compile_lint.analysis.facts import ModuleFacts
from compile_lint.analysis.names import NameTable
from compile_lint.analysis.precision import BF16, F16, F32, precision_for
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


# -- the dtype analysis -----------------------------------------------------------------
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


# -- messages and region kinds ---------------------------------------------------------------
def test_messages_say_where_and_what_happens(tmp_path):
    found = lint(tmp_path, {
        "train.py": """
            import torch
            model = torch.compile(model, mode="reduce-overhead")
            outs = []
            for frame in frames:
                outs.append(model(frame))

            @torch.compile
            def grain(x):
                return x + torch.randn_like(x)
        """,
    })["train.py"]
    by_code = {f.code: f for f in found}
    cl401 = by_code["CL401"]
    assert "mode='reduce-overhead'" in cl401.message and "train.py:3" in cl401.message
    assert "overwritten by a subsequent run" in cl401.message
    assert cl401.region_kind == "cudagraph"
    assert cl401.fix is not None and cl401.fix.applicability == "safe"
    cl303 = by_code["CL303"]
    assert "train.py:8" in cl303.message and "fallback_random" in cl303.message
    assert cl303.region_kind == "compiled"


def test_cl403_only_for_graph_inputs(tmp_path):
    found = lint(tmp_path, {
        "m.py": """
            import torch

            def helper(buf):
                buf.zero_()      # an intermediate, when called from the region
                return buf

            @torch.compile(mode="reduce-overhead")
            def step(x):
                y = helper(x * 2)
                return y
        """,
    }, codes=("CL403",))
    assert found["m.py"] == []


# -- fixes ---------------------------------------------------------------------------------
def test_cl402_fix_only_for_a_literal_mode_on_the_call(tmp_path):
    found = lint(tmp_path, {
        "a.py": """
            import functools, torch
            fast = functools.partial(torch.compile, mode="reduce-overhead")
            model = fast(model, dynamic=True)
        """,
        "b.py": """
            import torch
            model = torch.compile(model, mode='max-autotune', dynamic=True)
        """,
    }, codes=("CL402",))
    assert [f.fix for f in found["a.py"]] == [None]
    [b] = found["b.py"]
    assert b.fix is not None and b.fix.applicability == "unsafe"


def test_cl302_two_compares_share_one_rewrite(tmp_path):
    from compile_lint.fixer import fix_source

    code = textwrap.dedent("""
        import torch

        @torch.compile
        def bands(img: torch.HalfTensor):
            luma = img[:, 0] * 0.3 + img[:, 1] * 0.7
            return (luma > 0.2) & (luma < 0.8)
    """)
    path = tmp_path / "bands.py"
    path.write_text(code)
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection(select=("CL302",)))
    [result] = linter.lint([str(path)])
    assert len(result.findings) == 2
    outcome = fix_source(linter, str(path), code.encode(), result.findings, unsafe=True)
    assert outcome.fixed.decode().count(".float()") == 2
    assert "img[:, 0].float() * 0.3 + img[:, 1].float() * 0.7" in outcome.fixed.decode()
    assert outcome.remaining == []


@pytest.mark.parametrize(
    "module,cls,code,expected",
    [
        (
            "codemods.clone_cudagraph_output", "CloneCudagraphOutput",
            "import torch\nm = torch.compile(m, mode='reduce-overhead')\nouts = []\nfor x in xs:\n    outs.append(m(x))\n",
            "outs.append(m(x).clone())",
        ),
        (
            "codemods.disable_cudagraphs_mode", "DisableCudagraphsMode",
            "import torch\nm = torch.compile(m, mode='reduce-overhead', dynamic=True)\n",
            "mode='max-autotune-no-cudagraphs'",
        ),
        (
            "codemods.clamp_branch_input", "ClampBranchInput",
            "import torch\n@torch.compile\ndef f(u):\n    return torch.where(u > 0.5, u.sqrt(), u)\n",
            "u.clamp(min=0.5).sqrt()",
        ),
    ],
)
def test_codemods_run_by_libcst_runner(tmp_path, module, cls, code, expected):
    """Without targets, a codemod asks the rule where it fires (libcst's runner path)."""
    import importlib

    path = tmp_path / "snippet.py"
    path.write_text(code)
    codemod = getattr(importlib.import_module(module), cls)
    context = CodemodContext(filename=str(path))
    out = codemod(context).transform_module(cst.parse_module(code))
    assert expected in out.code


def test_pages_have_evidence():
    from compile_lint.rules import get_rule

    for code in ("CL301", "CL302", "CL303", "CL304", "CL401", "CL402", "CL403"):
        page = get_rule(code).page()
        assert "hazards.md" not in page, "pages cite nothing outside the repository"
        assert "pytorch#" in page or "kornia" in page or "cudagraph_utils.py" in page
