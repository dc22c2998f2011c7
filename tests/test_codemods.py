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


def _fixable_cases():
    from compile_lint.rules import all_rules

    for code, rule in all_rules().items():
        for index, case in enumerate(rule.invalid):
            if case.fixed is not None:
                yield pytest.param(code, index, id=f"{code}-{index}")


@pytest.mark.parametrize("code,index", list(_fixable_cases()))
def test_a_fix_on_its_statement_equals_the_fix_on_the_whole_file(code, index, tmp_path):
    """fix_edits.py runs a codemod on the statement it changes (dedented, parsed alone);
    each rule case's fix must come out exactly as the codemod run on the whole file, with
    each finding fixed on its own, and both equal to applying the finding's edits."""
    from compile_lint.engine import Linter, Selection
    from compile_lint.config import Settings, parse_table
    from compile_lint.fix_edits import FileEdits
    from compile_lint.fixer import apply_codemod, apply_fixes
    from compile_lint.rules import all_rules

    case = all_rules()[code].invalid[index]
    for rel, text in case.all_files().items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    settings = parse_table(dict(case.settings), "case", str(tmp_path)) if case.settings else Settings(root=str(tmp_path))
    linter = Linter(lambda _p: settings, Selection(select=(code,)))
    results = {r.path: r for r in linter.lint([str(tmp_path / rel) for rel in case.all_files()])}
    target = str(tmp_path / case.path)
    data = (tmp_path / case.path).read_bytes()
    fixable = [f for f in results[target].findings if f.fix is not None]
    assert fixable
    for f in fixable:
        whole = apply_codemod(target, data, f.fix.codemod, [f])
        edits = FileEdits(target, data)
        text, applied = apply_fixes(edits, [(f, edits.edits(f))])
        assert text.encode() == whole, f"{code} at {f.start}"
