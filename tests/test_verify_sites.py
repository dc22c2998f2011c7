"""Targets without hand work (compile_lint/verify/sites.py): found from the code's own
compile and trace sites, constructor arguments from literal calls, the exporters and
dynamic shapes each site uses, and input value ranges from what the code compares
against. ast only: no torch, fast."""
import os
import textwrap

from compile_lint.verify.command import _config_syntax
from compile_lint.verify.sites import targets_from_sites

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _write(folder, name, text):
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_sites_make_targets_with_literal_constructor_arguments_and_exporters(tmp_path):
    nets = _write(tmp_path, "nets.py", """
        import torch
        from torch import nn
        from torch.export import Dim


        class Upscaler(nn.Module):
            def __init__(self, width, blocks=2):
                super().__init__()

            def forward(self, x):
                return x


        class Denoiser(nn.Module):
            def __init__(self, width):
                super().__init__()

            def forward(self, x):
                return torch.where(x < 0, -x, x)


        def blend(a, b):
            return a * 0.5 + b * 0.5


        def helper(x):  # only called, never compiled: not a target of its own
            return x


        up = torch.compile(Upscaler(16, blocks=3))
        fast_blend = torch.compile(blend)
        width = 8
        den = Denoiser(width)
        traced = torch.jit.trace(den, torch.rand(1, 3, 8, 8))
        fixed = torch.export.export(Denoiser(4), (torch.rand(1, 3, 8, 8),))
        free = torch.onnx.export(Upscaler(2), (torch.rand(1, 3, 8, 8),), "up.onnx",
                                 dynamic_axes={"x": {2: "h", 3: "w"}})
    """)
    found = {t.qualname: t for t in targets_from_sites([nets])}
    assert set(found) == {"Upscaler", "Denoiser", "blend"}
    up, den, blend = found["Upscaler"], found["Denoiser"], found["blend"]
    assert (up.args, up.kwargs) == ([16], {"blocks": 3})  # the first site's literal call
    assert up.region_kinds == ["compiled", "traced"]
    assert up.trace_sites == [{"api": "onnx", "dynamic": True, "where": up.trace_sites[0]["where"]}]
    assert blend.region_kinds == ["compiled"] and blend.trace_sites == []
    apis = sorted((s["api"], s["dynamic"]) for s in den.trace_sites)
    assert apis == [("export", False), ("jit.trace", False)]  # no dynamic_shapes: a fixed-size export
    assert den.args == [4]  # Denoiser(width) is not literal; the export site's Denoiser(4) is
    assert den.value_range == [-1.0, 1.0] and "compares with 0" in den.range_reason
    assert up.value_range is None and blend.value_range is None


def test_a_signed_blend_fixture_gets_inputs_in_minus_one_to_one():
    path = os.path.join(ROOT, "fixtures", "verify", "clean", "signed_soft_light.py")
    (spec,) = targets_from_sites([path])
    assert spec.value_range == [-1.0, 1.0]
    assert "signed_soft_light.py line 12: " in spec.range_reason


def test_config_snippets_use_the_projects_config_syntax(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "m.py").write_text("x = 1\n")
    syntax = _config_syntax(str(tmp_path / "m.py"), None)
    assert syntax["targets_table"] == "[[tool.compile-lint.verify.targets]]"
    assert syntax["config_file"].endswith("pyproject.toml")
    bare = tmp_path / "sub"
    bare.mkdir()
    (bare / "compile-lint.toml").write_text("")
    syntax = _config_syntax(str(bare), None)
    assert syntax == {"config_file": str(bare / "compile-lint.toml"), "targets_table": "[[verify.targets]]"}


def test_declared_regions_are_targets_too(tmp_path):
    """A class compiled somewhere the linter cannot see, declared by a marker comment."""
    path = _write(tmp_path, "declared.py", """
        import torch
        from torch import nn


        # compile-lint: compiled
        class Grade(nn.Module):
            def forward(self, image):
                return image * 1.1
    """)
    (spec,) = targets_from_sites([path])
    assert spec.qualname == "Grade" and spec.region_kinds == ["compiled"]
