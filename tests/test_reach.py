"""Reach by meaning (issue 19): each way real applications compile, trace or script
their models, as a general mechanism, and "unresolved beats wrong": a site whose value
may also be something the index cannot see is partial, never a resolved target.

Each case names the defect it pins; every one failed on dd75348."""
import textwrap

from test_values import project, region_defs

from compile_lint.config import Settings
from compile_lint.engine import Linter, Selection

NET = """
from torch import nn

class Base(nn.Module):
    def forward(self, x):
        return x

class Net(Base):
    def forward(self, x):
        return x * 2

class Other(nn.Module):
    def forward(self, x):
        return x - 1
"""


def site(data, path, row):
    for found in data["sites"]:
        if found["path"] == path and found["row"] == row:
            return found
    raise AssertionError(f"no site at {path}:{row}: {[(s['path'], s['row'], s['api']) for s in data['sites']]}")


def names(found):
    return sorted(f"{t['path']}:{t['qualname']}" for t in found["targets"])


# -- decorators: factories and wrappers of any depth ------------------------------------
def test_a_decorator_factory_that_returns_a_compiling_decorator_makes_the_def_a_site(tmp_path):
    _, data = project(tmp_path, {
        "deco.py": """
        import functools
        import os
        import torch

        def compile_if(flag):
            def decorator(fn):
                return torch.compile(fn) if flag else fn
            return decorator

        def compiled(fn):
            return torch.compile(fn, mode="max-autotune")

        def with_options(**kw):
            return functools.partial(torch.compile, **kw)

        def twice_removed(flag):
            return compile_if(flag)
        """,
        "steps.py": """
        import os
        from deco import compile_if, compiled, with_options, twice_removed

        @compile_if(os.environ.get("COMPILE"))
        def step_a(x):
            return x + 1

        @compiled
        def step_b(x):
            return x + 1

        @with_options(mode="reduce-overhead")
        def step_c(x):
            return x + 1

        @twice_removed(True)
        def step_d(x):
            return x + 1

        def plain(x):
            return x
        """,
    })
    assert names(site(data, "steps.py", 5)) == ["steps.py:step_a"]
    assert names(site(data, "steps.py", 9)) == ["steps.py:step_b"]
    # (the mode passed through `**kw` into the partial is not followed: options stay unknown)
    assert names(site(data, "steps.py", 13)) == ["steps.py:step_c"]
    assert names(site(data, "steps.py", 17)) == ["steps.py:step_d"]
    assert {"steps.step_a", "steps.step_b", "steps.step_c", "steps.step_d"} <= region_defs(data)
    assert "steps.plain" not in region_defs(data)


def test_a_decorator_that_is_not_a_compiler_makes_no_site(tmp_path):
    _, data = project(tmp_path, {
        "app.py": """
        import functools
        import torch

        def timed(fn):
            @functools.wraps(fn)
            def inner(*a):
                return fn(*a)
            return inner

        @timed
        @torch.no_grad()
        def step(x):
            return x
        """,
    })
    assert data["sites"] == []


# -- TorchScript -------------------------------------------------------------------------
def test_torch_jit_script_sites_are_listed_as_scripted(tmp_path):
    _, data = project(tmp_path, {
        "net.py": NET,
        "export.py": """
        import torch
        from net import Net

        scripted = torch.jit.script(Net())

        @torch.jit.script
        def gelu(x):
            return x * 0.5
        """,
    })
    first = site(data, "export.py", 5)
    assert first["kind"] == "scripted" and names(first) == ["net.py:Net"]
    assert names(site(data, "export.py", 7)) == ["export.py:gelu"]


# -- registries --------------------------------------------------------------------------
REGISTRY = """
MODELS = {}

def register(name):
    def add(cls):
        MODELS[name] = cls
        return cls
    return add

def create(name, **kw):
    return MODELS[name](**kw)
"""


def test_a_registry_filled_by_a_decorator_gives_the_class_registered_under_the_constant_asked(tmp_path):
    _, data = project(tmp_path, {
        "registry.py": REGISTRY,
        "models.py": """
        from torch import nn
        from registry import register, MODELS

        @register("unet")
        class UNet(nn.Module):
            def forward(self, x):
                return x

        @register("vae")
        class VAE(nn.Module):
            def forward(self, x):
                return x

        class Tiny(nn.Module):
            def forward(self, x):
                return x

        MODELS["tiny"] = Tiny
        """,
        "train.py": """
        import sys
        import torch
        import models
        from registry import create

        unet = torch.compile(create("unet"))
        tiny = torch.compile(create("tiny"))
        any_of = torch.compile(create(sys.argv[1]))
        """,
    })
    assert names(site(data, "train.py", 7)) == ["models.py:UNet"]
    assert names(site(data, "train.py", 8)) == ["models.py:Tiny"]
    # a key nobody can know: every registered class
    some = site(data, "train.py", 9)
    assert names(some) == ["models.py:Tiny", "models.py:UNet", "models.py:VAE"]


# -- unresolved beats wrong ----------------------------------------------------------------
def test_a_loader_that_may_return_an_unpickled_model_is_partial_not_resolved(tmp_path):
    _, data = project(tmp_path, {
        "net.py": NET,
        "load.py": """
        import torch
        from net import Net

        def load(path):
            if path.endswith(".pt"):
                return torch.load(path)
            return Net()

        model = torch.compile(load("weights.pt"))
        plain = torch.compile(Net())
        """,
    })
    loaded = site(data, "load.py", 10)
    assert loaded["resolution"] == "partial"
    assert names(loaded) == ["net.py:Net"]
    assert "torch.load" in loaded["unresolved"]
    assert site(data, "load.py", 11)["resolution"] == "resolved"


def test_the_summary_line_counts_resolved_partial_and_unresolved_apart(tmp_path):
    from compile_lint.regions_report import render_text

    _, data = project(tmp_path, {
        "net.py": NET,
        "app.py": """
        import torch
        from net import Net

        def load(path):
            if path:
                return torch.load(path)
            return Net()

        a = torch.compile(Net())
        b = torch.compile(load("x"))
        c = torch.compile(torch.hub.load("a", "b"))
        """,
    })
    assert render_text(data).splitlines()[-1].startswith("3 site(s): 1 resolved, 1 partial, 1 unresolved")


# -- classes, guards, tuples, arguments, attributes ------------------------------------------
def test_torch_compile_on_a_class_names_the_class_not_the_base_whose_forward_it_inherits(tmp_path):
    _, data = project(tmp_path, {
        "net.py": """
        import torch
        from torch import nn

        class Base(nn.Module):
            def forward(self, x):
                return self.body(x)

        @torch.compile
        class Net(Base):
            def body(self, x):
                return x
        """,
    })
    assert names(site(data, "net.py", 9)) == ["net.py:Net"]


def test_a_tuple_assignment_keeps_each_name_its_own_value(tmp_path):
    _, data = project(tmp_path, {
        "net.py": NET,
        "detect.py": """
        import torch
        from net import Net

        im = torch.zeros(1, 3, 8, 8)
        model = Net()
        im, model = im.half(), model.half()
        traced = torch.jit.trace(model, im)
        """,
    })
    assert names(site(data, "detect.py", 8)) == ["net.py:Net"]


def test_a_function_passed_to_a_compile_wrapper_in_any_position(tmp_path):
    _, data = project(tmp_path, {
        "app.py": """
        import torch

        def compile_fn(name, fn, mode=None):
            print("compiling", name)
            return torch.compile(fn, mode=mode)

        def step(x):
            return x + 1

        fast = compile_fn("step", step, mode="max-autotune")
        """,
    })
    assert "app.step" in region_defs(data)


def test_an_attribute_set_from_a_class_chosen_in_init(tmp_path):
    _, data = project(tmp_path, {
        "net.py": NET,
        "pipe.py": """
        import torch
        from torch import nn
        from net import Net, Other

        class Pipe(nn.Module):
            def __init__(self, big):
                super().__init__()
                cls = Net if big else Other
                self.body = cls()

        pipe = Pipe(True)
        pipe.body = torch.compile(pipe.body)
        """,
    })
    assert names(site(data, "pipe.py", 13)) == ["net.py:Net", "net.py:Other"]


def test_simple_namespace_and_annotated_attributes(tmp_path):
    _, data = project(tmp_path, {
        "net.py": NET,
        "app.py": """
        import types
        import torch
        from net import Net, Other

        class Pipeline:
            unet: Net
            def __init__(self, unet):
                self.unet = unet

        def run(pipe: Pipeline):
            return torch.compile(pipe.unet)

        ns = types.SimpleNamespace(model=Other(), steps=4)
        fast = torch.compile(ns.model)
        """,
    })
    assert names(site(data, "app.py", 12)) == ["net.py:Net"]
    assert names(site(data, "app.py", 15)) == ["net.py:Other"]


def test_submodules_forward_never_uses_are_not_marked(tmp_path):
    _, data = project(tmp_path, {
        "net.py": """
        import torch
        from torch import nn

        class Head(nn.Module):
            def forward(self, x):
                return x

        class Aux(nn.Module):
            def forward(self, x):
                return x

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = Head()
                self.aux = Aux()  # used by a training loss only

            def forward(self, x):
                return self.head(x)

        traced = torch.jit.trace(Net(), torch.zeros(1))
        """,
    })
    defs = region_defs(data)
    assert "net.Head.forward" in defs
    assert "net.Aux.forward" not in defs


# -- honest reasons ----------------------------------------------------------------------------
def test_reasons_name_the_config_and_the_projects_own_star_import(tmp_path):
    _, data = project(tmp_path, {
        "pkg/__init__.py": "from .models import *\n",
        "pkg/models.py": NET,
        "train.py": """
        import argparse
        import torch
        import pkg
        from pkg import *

        parser = argparse.ArgumentParser()
        args = parser.parse_args()
        model = torch.compile(args.model)
        net = torch.compile(Net())
        other = torch.compile(pkg.Other())
        """,
    })
    reason = site(data, "train.py", 9)["unresolved"]
    assert "another package" not in reason and "argparse" in reason
    assert names(site(data, "train.py", 10)) == ["pkg/models.py:Net"]
    assert names(site(data, "train.py", 11)) == ["pkg/models.py:Other"]


def test_an_annotation_is_not_the_value(tmp_path):
    _, data = project(tmp_path, {
        "net.py": NET,
        "app.py": """
        import torch
        from torch import nn
        from net import Net
        import hub

        model: nn.Module = hub.load("x")
        fast = torch.compile(model)
        """,
    })
    found = site(data, "app.py", 8)
    assert found["targets"] == [] and "hub.load" in found["unresolved"]


def test_a_parameter_annotated_with_torchs_module_is_unseen_not_torchs_layer(tmp_path):
    """`def export(model: nn.Module)` with no known caller said "`torch.nn.Module()` is
    from another package" (the annotation read as the value)."""
    _, data = project(tmp_path, {
        "export.py": """
        import torch
        from torch import nn

        def export(model: nn.Module, path: str):
            torch.onnx.export(model, torch.zeros(1, 3, 8, 8), path)
        """,
    })
    reason = site(data, "export.py", 6)["unresolved"]
    assert "another package" not in reason
    assert "`model` is a parameter of `export()` (annotated `torch.nn.Module`)" in reason


def test_loaded_checkpoints_and_container_items_are_unseen_not_resolved(tmp_path):
    """A model taken out of `torch.load(...)` is what the checkpoint holds; an item of a
    project container class (yolov9's `attempt_load` returns `model[-1]` of an `Ensemble`
    or the Ensemble) is not the container; and `img, model = img.half(), model.half()`
    gives `model` no reason borrowed from `img` (`torch.zeros()` said "from another package")."""
    _, data = project(tmp_path, {
        "models.py": """
        import torch
        from torch import nn

        class Ensemble(nn.ModuleList):
            def forward(self, x):
                return x

        def attempt_load(paths):
            model = Ensemble()
            for p in paths:
                model.append(torch.load(p)["model"].float())
            if len(model) == 1:
                return model[-1]
            return model

        def load_checkpoint(path):
            ckpt = torch.load(path)
            return ckpt["ema"].float()
        """,
        "export.py": """
        import torch
        from models import attempt_load, load_checkpoint

        model = attempt_load(["a.pt"])
        traced = torch.jit.trace(model, torch.zeros(1))
        net = load_checkpoint("b.pt")
        img = torch.zeros(1, 3, 8, 8)
        img, net = img.half(), net.half()
        torch.onnx.export(net, img, "m.onnx")
        """,
    })
    ens = site(data, "export.py", 6)
    assert ens["resolution"] == "partial" and names(ens) == ["models.py:Ensemble"]
    loaded = site(data, "export.py", 10)
    assert loaded["targets"] == [] and "torch.load" in loaded["unresolved"] and "zeros" not in loaded["unresolved"]


def test_a_for_loop_unpacking_pairs_binds_each_name(tmp_path):
    """`for name, model in [("a", A()), ...]: torch.compile(model)` (LivePortrait's
    speed.py): the loop's tuple target was not bound."""
    _, data = project(tmp_path, {
        "net.py": NET,
        "speed.py": """
        import torch
        from net import Net, Other

        pairs = [("net", Net()), ("other", Other())]
        for name, model in pairs:
            model = torch.compile(model.half())
        """,
    })
    assert names(site(data, "speed.py", 7)) == ["net.py:Net", "net.py:Other"]


# -- guards: an isinstance test around the compile, or an early return before it --------
def test_an_isinstance_guard_around_the_compile_keeps_the_classes_it_admits(tmp_path):
    _, data = project(tmp_path, {
        "net.py": NET,
        "run.py": """
        import torch
        from net import Net, Other

        def build(flag):
            return Net() if flag else Other()

        model = build(True)
        if isinstance(model, Net):
            model = torch.compile(model)
        other = build(False)
        if not isinstance(other, (Net, torch.jit.ScriptModule)):
            other = torch.compile(other)
        third = build(False)
        fast = torch.compile(third) if isinstance(third, Other) else third
        """,
    })
    assert names(site(data, "run.py", 10)) == ["net.py:Net"]
    assert names(site(data, "run.py", 13)) == ["net.py:Other"]
    assert names(site(data, "run.py", 15)) == ["net.py:Other"]


def test_an_early_return_on_an_isinstance_test_drops_the_class_it_returns_on(tmp_path):
    _, data = project(tmp_path, {
        "net.py": NET,
        "run.py": """
        import torch
        from net import Net, Other

        def main(flag):
            model = Net() if flag else Other()
            if isinstance(model, Other):
                return model
            return torch.compile(model)
        """,
    })
    assert names(site(data, "run.py", 9)) == ["net.py:Net"]


def test_a_subclass_passes_the_isinstance_test_of_its_base(tmp_path):
    _, data = project(tmp_path, {
        "net.py": NET,
        "run.py": """
        import torch
        from net import Base, Net, Other

        model = Net() if flag else Other()
        if isinstance(model, Base):
            model = torch.compile(model)
        """,
    })
    assert names(site(data, "run.py", 7)) == ["net.py:Net"]
