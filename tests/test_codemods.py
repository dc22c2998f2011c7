"""The codemods on their own: layout-keeping helpers, and each codemod run by libcst's
own runner (without targets, a codemod asks its rule where it fires)."""
import os
import shutil
import subprocess
import sys

import libcst as cst
import pytest
from libcst.codemod import CodemodContext

from conftest import ROOT


@pytest.mark.parametrize(
    "before,after",
    [
        ("f(x)", "f(x, recompute_scale_factor=True)"),
        ("f()", "f(recompute_scale_factor=True)"),
        ("f(\n    x,\n)", "f(\n    x,\n    recompute_scale_factor=True,\n)"),
        ("f(x, s,\n  )", "f(x, s, recompute_scale_factor=True,\n  )"),
    ],
)
def test_append_keyword_keeps_layout(before, after):
    from codemods.recompute_scale_factor import append_keyword

    call = cst.parse_expression(before)
    new = append_keyword(call, "recompute_scale_factor", cst.Name("True"))
    assert cst.Module([]).code_for_node(new) == after


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
            "codemods.unwrap_compiled_module", "UnwrapCompiledModule",
            "import torch\nmodel = torch.compile(Net())\ntorch.save(model.state_dict(), 'm.pt')\n",
            "torch.save(getattr(model, \"_orig_mod\", model).state_dict(), 'm.pt')",
        ),
        (
            "codemods.none_test", "NoneTest",
            "import torch\nmodel = torch.compile(Net())\nif not model:\n    pass\n",
            "if model is None:",
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


def test_codemod_runs_under_libcsts_runner(tmp_path):
    target = tmp_path / "m.py"
    target.write_text("import torch\nmodel = Net()\ntorch.compile(model)\n")
    shutil.copy(os.path.join(ROOT, ".libcst.codemod.yaml"), tmp_path / ".libcst.codemod.yaml")
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "--no-format",
         "assign_compile_result.AssignCompileResult", str(target)],
        capture_output=True, text=True, cwd=tmp_path, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert target.read_text() == "import torch\nmodel = Net()\nmodel = torch.compile(model)\n"
