"""Targets without hand work (compile_lint/verify/sites.py): found from the code's own
compile and trace sites, constructor arguments from literal calls, the exporters and
dynamic shapes each site uses, and input value ranges from what the code compares
against. ast only: no torch, fast."""
import os
import textwrap

import pytest

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
    assert den.args == [8]  # Denoiser(width), width = 8: the first site's call, its name followed to the literal
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


# ---- built as the project builds it (construction.py) ----

def _project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'app'\n")
    _write(tmp_path, "arch.py", """
        import torch
        from torch import nn


        class RRDBNet(nn.Module):
            def __init__(self, in_nc, out_nc, nf, nb, gc=32):
                super().__init__()
                self.conv = nn.Conv2d(in_nc, out_nc, 3, padding=1)

            def forward(self, x):
                return self.conv(x)


        class StyleNet(nn.Module):
            def __init__(self, width=64):
                super().__init__()
                self.conv = nn.Conv2d(3, width, 3)

            def forward(self, x):
                return self.conv(x)


        class ResNet(nn.Module):
            def __init__(self, block, layers, num_classes=10):
                super().__init__()
                self.fc = nn.Linear(3, num_classes)

            def forward(self, x):
                return self.fc(x.mean((2, 3)))


        def ResNet18(num_classes=10):
            return ResNet("basic", [2, 2, 2, 2], num_classes=num_classes)


        class UNet(nn.Module):
            def __init__(self, channels):
                super().__init__()
                self.conv = nn.Conv2d(3, channels, 3)

            def forward(self, x):
                return self.conv(x)
    """)
    _write(tmp_path, "train.py", """
        import torch
        from arch import RRDBNet, StyleNet, UNet

        SCALE = 2


        def build(scale=4):
            return RRDBNet(3, 3, 32 * scale // 4, 3, gc=16)


        def train(cfg):
            model = build(scale=SCALE).to("cpu")
            fast = torch.compile(model)
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
            for batch in cfg.data:
                loss = fast(batch).mean()
                loss.backward()
                optimizer.step()


        def serve(cfg):
            unet = torch.compile(UNet(cfg.channels))
            width = 32
            net = StyleNet(width=width).eval()
            stylize = torch.compile(net)
            return unet, stylize
    """)
    return tmp_path


def test_a_factory_at_the_site_is_called_with_its_literal_arguments(tmp_path):
    from compile_lint.verify.sites import site_targets

    root = _project(tmp_path)
    found = {t.qualname: t for t in site_targets([str(root / "train.py")], [str(root / "arch.py")]).specs}
    rrdb = found["RRDBNet"]
    # model = build(scale=SCALE): the factory is called as the project calls it ...
    assert rrdb.factory["qualname"] == "build" and rrdb.factory["file"] == str(root / "train.py")
    assert rrdb.factory["kwargs"] == {"scale": 2} and rrdb.factory["args"] == []
    # ... and the report says what it returns, its arguments followed through the parameter
    assert "RRDBNet(3, 3, 32 * scale // 4, 3, gc=16)" in rrdb.built and "train.py:9" in rrdb.built
    assert rrdb.args == [] and rrdb.kwargs == {}
    assert rrdb.trained.startswith("an optimizer over its parameters at ") and rrdb.trained.endswith("train.py:15")
    # StyleNet(width=width).eval() with width = 32: the literal followed through the name
    assert found["StyleNet"].kwargs == {"width": 32} and found["StyleNet"].trained is None
    # UNet(cfg.channels): not a literal, not guessed; the report says why
    unet = found["UNet"]
    assert unet.args == [] and "cfg.channels" in unet.built and "not literals" in unet.built


def test_an_explicit_target_uses_the_arguments_its_project_compiles_it_with(tmp_path):
    from compile_lint.verify.targets import add_sites, spec_from_cli

    root = _project(tmp_path)
    style = spec_from_cli(f"{root / 'arch.py'}:StyleNet")
    factory = spec_from_cli(f"{root / 'arch.py'}:ResNet18")
    made_by, _sites = add_sites([style, factory])
    assert style.kwargs == {"width": 32} and "train.py:" in style.built  # not its default 64
    # a factory given as a target is called for its result
    assert factory.factory == {"qualname": "ResNet18", "file": str(root / "arch.py"), "args": [], "kwargs": {}}
    assert "returns a ResNet" in factory.built
    assert made_by[factory.ref] == (str(root / "arch.py"), "ResNet")


def test_a_finding_about_a_trace_site_gives_its_code_to_what_it_traces(tmp_path):
    """CL102 in `preview()`: it traces Grade, then changes grade.gamma; Grade gets CL102.
    CL102 is off by default: `check` does not report it, verify's own lint has it (a
    verify candidate), and a project's `ignore` of it leaves it out there too."""
    from compile_lint.api import lint_paths
    from compile_lint.verify.sites import site_targets
    from compile_lint.verify.targets import lint, targets_from_findings

    path = _write(tmp_path, "grade.py", """
        import torch
        from torch import nn


        class Grade(nn.Module):
            def __init__(self):
                super().__init__()
                self.gamma = 1.2

            def forward(self, image):
                return image.clamp(0, 1) ** self.gamma


        def preview(frames):
            grade = Grade()
            traced = torch.jit.trace(grade, frames[0])
            grade.gamma = 0.8
            return [traced(f) for f in frames]
    """)
    assert not any(f.code == "CL102" for f in lint_paths([path]))
    findings = lint([path])
    assert any(f.code == "CL102" and f.scope == "preview" for f in findings)
    sites = site_targets([path])
    plan = targets_from_findings(findings, sites)
    (grade,) = [s for s in sites.specs if s.qualname == "Grade"]
    assert "CL102" in grade.codes
    # ... and so the frozen-state check, without `codes = ["CL102"]` in the config
    from compile_lint.verify.config import VerifyOptions
    from compile_lint.verify.plan import plan_target

    assert "frozen-state" in [s.check for s in plan_target(grade, VerifyOptions(), "cpu").steps]
    assert any(t.qualname == "preview" for t in plan.targets)
    from compile_lint.config import clear_cache

    (tmp_path / "compile-lint.toml").write_text('ignore = ["CL102"]\n')
    clear_cache()  # (the configuration found above is remembered for the process)
    assert not any(f.code == "CL102" for f in lint([path]))


def test_a_model_trained_through_a_helper_parameter_is_trained(tmp_path):
    """`def fit(model, ...)` builds the optimizer; its callers pass the models (the value
    model's answer for a parameter)."""
    from compile_lint.verify.sites import site_targets

    (tmp_path / "pyproject.toml").write_text("")
    _write(tmp_path, "nets.py", """
        import torch
        from torch import nn


        class Small(nn.Module):
            def forward(self, x):
                return x


        class Other(nn.Module):
            def forward(self, x):
                return x


        class Served(nn.Module):
            def forward(self, x):
                return x


        def fit(model, data):
            optimizer = torch.optim.AdamW(model.parameters())
            for x in data:
                model(x).sum().backward()
                optimizer.step()


        fit(Small(), [])
        fit(Other(), [])
        fast = [torch.compile(Small()), torch.compile(Other()), torch.compile(Served())]
    """)
    found = {t.qualname: t for t in site_targets([str(tmp_path / "nets.py")]).specs}
    assert found["Small"].trained and found["Other"].trained
    assert found["Served"].trained is None


@pytest.mark.slow
def test_a_factory_target_and_a_class_target_run_as_the_project_builds_them(tmp_path):
    """End to end: `--target arch.py:ResNet18` (a function returning a module) is called
    and its ResNet fed an image (before: ResNet18 itself compiled, never fed, 'diverged'
    with 0 graphs); `--target arch.py:StyleNet` is built with the site's width=32, and
    each report says so."""
    import json
    import subprocess
    import sys

    root = _project(tmp_path)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-m", "compile_lint", "verify", "--device", "cpu", "--report", "json",
                           "--checks", "forward", "--dynamic", "static", "--resolutions", "16x16", "--no-repro",
                           "--target", "arch.py:ResNet18", "--target", "arch.py:StyleNet"],
                          capture_output=True, text=True, cwd=str(root), env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    found = {t["target"]: t for t in json.loads(done.stdout)["targets"]}
    resnet, style = found["arch.py:ResNet18"], found["arch.py:StyleNet"]
    assert resnet["status"] == "pass" and resnet["built"].startswith("ResNet18() -> a ResNet")
    assert resnet["inputs"] == ["float32[1x3xHxW] random in [0, 1]"] and resnet["resolutions"] == [[16, 16]]
    (forward,) = [c for c in resnet["checks"] if c["name"] == "forward"]
    assert forward["graphs"] == 1 and forward["shape"] == [[1, 3, 16, 16]]
    assert style["status"] == "pass" and style["built"].startswith("StyleNet(width=32) (")
    assert "train.py:" in style["built"]
