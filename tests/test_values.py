"""The value model (analysis/reach/values.py) as the region index uses it: what each
compile/trace site resolves to, or why not, within and across files; module names
that never collide; and the `compile-lint regions` command."""
import json
import os
import subprocess
import sys
import textwrap

from compile_lint.config import Settings
from compile_lint.regions_report import build_index, report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def project(tmp_path, files, marker=True):
    if marker:
        (tmp_path / "pyproject.toml").write_text("")
    paths = []
    for rel, src in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(src))
        paths.append(str(path))
    index, errors = build_index(paths, lambda _p: Settings(root=str(tmp_path)))
    assert not errors
    return index, report(index, str(tmp_path))


def targets(data, path, row):
    """The "file:Qualname" targets of the site at path:row, or its reason."""
    for site in data["sites"]:
        if site["path"] == path and site["row"] == row:
            if site["targets"]:
                return sorted(f"{t['path']}:{t['qualname']}" for t in site["targets"])
            return site["unresolved"]
    raise AssertionError(f"no site at {path}:{row}: {[(s['path'], s['row']) for s in data['sites']]}")


def region_defs(data):
    return {r["def"] for r in data["regions"]}


NET = """
from torch import nn

class Block(nn.Module):
    def forward(self, x):
        return x

class Net(nn.Module):
    def __init__(self, cfg=None):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(2)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x

    @classmethod
    def from_pretrained(cls, name):
        print("loading", name)
        return cls(name)

class Other(nn.Module):
    def forward(self, x):
        return x
"""


# -- factories, classmethods, returns ---------------------------------------------------
def test_factory_function_and_classmethod_resolve_to_the_class_not_the_factory(tmp_path):
    _, data = project(tmp_path, {
        "model.py": NET,
        "train.py": """
        import torch
        from model import Net

        def build_model(cfg):
            print("building", cfg)
            return Net(cfg).to("cuda")

        a = torch.compile(build_model(1))
        b = Net.from_pretrained("x")
        b = torch.compile(b)
        """,
    })
    assert targets(data, "train.py", 9) == ["model.py:Net"]
    assert targets(data, "train.py", 11) == ["model.py:Net"]
    defs = region_defs(data)
    assert "model.Net.forward" in defs and "model.Block.forward" in defs
    # the factories' own bodies (their prints) are not compiled
    assert "train.build_model" not in defs and "model.Net.from_pretrained" not in defs


def test_function_returning_sequential_compiles_its_elements(tmp_path):
    _, data = project(tmp_path, {
        "model.py": NET,
        "heads.py": """
        import torch
        from torch import nn
        from model import Block, Other

        def make_head():
            return nn.Sequential(Block(), nn.ReLU(), *[Other()])

        head = torch.compile(make_head())
        """,
    })
    assert targets(data, "heads.py", 9) == ["model.py:Block", "model.py:Other"]
    assert "heads.make_head" not in region_defs(data)


def test_branches_give_the_union_and_a_later_binding_replaces_an_earlier_one(tmp_path):
    _, data = project(tmp_path, {
        "model.py": NET,
        "run.py": """
        import torch
        from model import Net, Other

        def pick(flag):
            if flag:
                m = Net()
            else:
                m = Other()
            return torch.compile(m)

        def last():
            m = Net()
            m = Other()
            return torch.compile(m)
        """,
    })
    assert targets(data, "run.py", 10) == ["model.py:Net", "model.py:Other"]
    assert targets(data, "run.py", 15) == ["model.py:Other"]


def test_return_annotation_and_annotated_parameter(tmp_path):
    _, data = project(tmp_path, {
        "model.py": NET,
        "load.py": """
        import torch
        from typing import Optional
        from model import Net, Other

        def load(path) -> Net:
            return torch.load(path)

        def run(model: Optional["Other"]):
            return torch.compile(model)

        m = torch.compile(load("w.pt"))
        """,
    })
    assert targets(data, "load.py", 10) == ["model.py:Other"]
    assert targets(data, "load.py", 12) == ["model.py:Net"]


# -- containers and registries ------------------------------------------------------------
def test_dict_literal_and_registries(tmp_path):
    _, data = project(tmp_path, {
        "model.py": NET,
        "registry.py": """
        from model import Net, Other

        MODELS = {}

        def register(fn):
            MODELS[fn.__name__] = fn
            return fn

        @register
        def tiny():
            return Net()

        MODELS["other"] = Other

        def create(name):
            return MODELS[name]()
        """,
        "train.py": """
        import torch
        from model import Net, Other
        from registry import create

        CHOICES = {"net": Net, "other": Other}
        a = torch.compile(CHOICES["net"]())
        b = torch.compile(create("tiny"))
        """,
    })
    # keyed by the constant asked (issue 19): "net" is Net; "tiny" is the def registered
    # under its own name (`fn.__name__`), which builds a Net
    assert targets(data, "train.py", 7) == ["model.py:Net"]
    assert targets(data, "train.py", 8) == ["model.py:Net"]


# -- attributes -------------------------------------------------------------------------
def test_attributes_inherited_elements_and_wrappers(tmp_path):
    _, data = project(tmp_path, {
        "model.py": NET,
        "base.py": """
        from torch import nn
        from model import Block

        class Base(nn.Module):
            def _build_heads(self):
                self.head = Block()
        """,
        "pipe.py": """
        import torch
        from torch import nn
        from base import Base
        from model import Net, Other

        class Pipe(Base):
            def __init__(self):
                super().__init__()
                self._build_heads()
                self.net = Net()

            def speed_up(self):
                self.head.forward = torch.compile(self.head.forward)
                self.first = torch.compile(self.net.blocks[0])

        dp = nn.DataParallel(Other())
        c = torch.compile(dp.module)
        d = torch.compile(c._orig_mod)
        """,
    })
    assert targets(data, "pipe.py", 14) == ["model.py:Block"]  # its forward
    assert targets(data, "pipe.py", 15) == ["model.py:Block"]
    assert targets(data, "pipe.py", 18) == ["model.py:Other"]
    assert targets(data, "pipe.py", 19) == ["model.py:Other"]


def test_parameters_follow_their_callers_across_files(tmp_path):
    _, data = project(tmp_path, {
        "model.py": NET,
        "export.py": """
        import torch

        def export_onnx(model, path):
            torch.onnx.export(model, torch.rand(1, 3, 8, 8), path)

        def never_called(model):
            return torch.jit.trace(model, torch.rand(1))
        """,
        "main.py": """
        from export import export_onnx
        from model import Net

        export_onnx(Net.from_pretrained("a"), "a.onnx")
        """,
    })
    assert targets(data, "export.py", 5) == ["model.py:Net"]
    assert "no call of it passes a known value" in targets(data, "export.py", 8)


# -- what stays unresolved, and why ---------------------------------------------------------
def test_unresolved_sites_say_why(tmp_path):
    _, data = project(tmp_path, {
        "app.py": """
        import torch
        import timm

        m = torch.compile(timm.create_model("resnet50"))
        n = torch.compile(load_somehow())
        """,
    })
    assert targets(data, "app.py", 5) == "`timm.create_model()` is from another package"
    assert isinstance(targets(data, "app.py", 6), str)
    assert data["regions"] == []


# -- module names ------------------------------------------------------------------------
def test_same_named_scripts_stay_apart(tmp_path):
    index, data = project(tmp_path, {
        "gen/generate.py": """
        import torch

        def decode(x):
            return x

        decode = torch.compile(decode)
        """,
        "moe/generate.py": """
        def decode(x):
            print(x)
            return x
        """,
        "moe/eval.py": """
        import torch
        from generate import decode

        fast = torch.compile(decode)
        """,
    })
    assert targets(data, "gen/generate.py", 7) == ["gen/generate.py:decode"]
    assert targets(data, "moe/eval.py", 5) == ["moe/generate.py:decode"]
    assert {s.module for s in index.summaries} == {"gen.generate", "moe.generate", "moe.eval"}


def test_same_named_scripts_findings_cite_their_own_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    for folder, compiled in (("a", True), ("b", False)):
        (tmp_path / folder).mkdir()
        src = "import torch\n\ndef step(x):\n    print(x)\n    return x\n"
        if compiled:
            src += "\nstep = torch.compile(step)\n"
        (tmp_path / folder / "train.py").write_text(src)
    out = subprocess.run(
        [sys.executable, "-m", "compile_lint", "check", "--no-cache", "--select", "CL508", "--output-format", "json", "a", "b"],
        cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT),
    )
    findings = json.loads(out.stdout)
    assert findings and {os.path.relpath(f["filename"], tmp_path) for f in findings} == {os.path.join("a", "train.py")}


def test_namespace_folder_and_sys_path_imports(tmp_path):
    _, data = project(tmp_path, {
        "models/net.py": NET,  # no __init__.py: a namespace folder
        "train.py": """
        import torch
        from models.net import Net

        m = torch.compile(Net())
        """,
        "tools/export.py": """
        import sys
        sys.path.append("..")
        import torch
        from models.net import Other

        torch.onnx.export(Other(), torch.rand(1), "o.onnx")
        """,
    }, marker=False)
    assert targets(data, "train.py", 5) == ["models/net.py:Net"]
    assert targets(data, "tools/export.py", 7) == ["models/net.py:Other"]


# -- the listed defects ---------------------------------------------------------------------
def test_decorator_with_parentheses_is_one_site(tmp_path):
    _, data = project(tmp_path, {
        "ops.py": """
        import torch

        @torch.compile()
        def blend(a, b):
            return a + b

        @torch.compile(mode="reduce-overhead", fullgraph=True)
        def graphs(a):
            return a
        """,
    })
    assert [(s["row"], s["mode"], s["fullgraph"]) for s in data["sites"]] == [(4, None, None), (8, "reduce-overhead", True)]
    assert all(s["targets"] for s in data["sites"])


def test_mode_through_a_parameter_default(tmp_path):
    _, data = project(tmp_path, {
        "model.py": NET,
        "fast.py": """
        import torch
        from model import Net, Other

        def fast(model, mode="reduce-overhead"):
            return torch.compile(model, mode=mode)

        def plain(model, mode="default"):
            return torch.compile(model, mode=mode)

        a = fast(Net())
        b = plain(Other(), mode="max-autotune")
        """,
    })
    modes = {(s["row"], s["api"]): s["mode"] for s in data["sites"]}
    assert modes[(11, "fast")] == "reduce-overhead"
    assert modes[(12, "plain")] == "max-autotune"
    kinds = {r["def"]: r["kinds"] for r in data["regions"]}
    assert "cudagraph" in kinds["model.Net.forward"] and "cudagraph" in kinds["model.Other.forward"]


def test_projects_own_compile_method_is_not_module_compile(tmp_path):
    _, data = project(tmp_path, {
        "model.py": NET,
        "trainer.py": """
        from torch import nn
        from model import Net

        class Wrapped(nn.Module):
            def compile(self, optimizer):
                self.optimizer = optimizer

            def forward(self, x):
                return x

        w = Wrapped()
        w.compile("adam")
        n = Net()
        n.compile(mode="max-autotune")
        """,
    })
    assert "own method" in targets(data, "trainer.py", 13)
    assert targets(data, "trainer.py", 15) == ["model.py:Net"]
    assert "trainer.Wrapped.forward" not in region_defs(data)


def test_global_rebinding_in_a_function(tmp_path):
    _, data = project(tmp_path, {
        "gen.py": """
        import torch

        def decode(x):
            return x

        def main(compile):
            global decode
            if compile:
                decode = torch.compile(decode, mode="reduce-overhead")
        """,
    })
    assert targets(data, "gen.py", 10) == ["gen.py:decode"]


# -- the command ----------------------------------------------------------------------------
def run_cli(args, cwd):
    return subprocess.run([sys.executable, "-m", "compile_lint", *args], cwd=cwd, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT))


def test_regions_command_text_and_json(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(textwrap.dedent(NET))
    (tmp_path / "train.py").write_text(
        "import torch\nfrom model import Net\nimport timm\n"
        "m = torch.compile(Net(), mode='reduce-overhead')\n"
        "t = torch.jit.trace(timm.create_model('x'), None)\n"
    )
    out = run_cli(["regions", ".", "--output-format", "json"], tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["root"] == str(tmp_path)
    compiled, traced = data["sites"]
    assert compiled["path"] == "train.py" and compiled["row"] == 4 and compiled["kind"] == "compiled"
    assert compiled["api"] == "torch.compile" and compiled["origin"] == "static" and compiled["mode"] == "reduce-overhead"
    assert compiled["targets"] == [{"path": "model.py", "qualname": "Net", "row": 8, "kind": "class", "module": "model"}]
    assert compiled["unresolved"] is None and "model.Block.forward" in compiled["reached"]
    assert traced["targets"] == [] and "another package" in traced["unresolved"]
    assert {"def": "model.Net.forward", "path": "model.py", "row": 13, "kinds": ["compiled", "cudagraph"], "via": None} in data["regions"]
    text = run_cli(["regions", "train.py", "model.py"], tmp_path)
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert lines[0] == "train.py:4:4 torch.compile(mode='reduce-overhead') -> model.py:8 Net"
    assert "    model.Net.forward" in lines
    assert any(line.startswith("train.py:5:4 torch.jit.trace() -> unresolved: ") for line in lines)


def test_regions_command_bad_path(tmp_path):
    out = run_cli(["regions", "missing.py"], tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr and "missing.py" in out.stderr


def test_a_factory_branching_on_a_string_parameter_builds_what_the_call_asks_for(tmp_path):
    _, data = project(tmp_path, {
        "model.py": NET,
        "load.py": """
        import torch
        from model import Net, Other

        def load_model(path, kind):
            if kind == "net":
                model = Net()
            elif kind == "other":
                model = Other()
            else:
                raise ValueError(kind)
            return model.eval()

        a = torch.compile(load_model("a.pt", "net"))
        b = torch.compile(load_model("b.pt", kind="other"))
        c = torch.compile(load_model("c.pt", pick()))
        """,
    })
    assert targets(data, "load.py", 14) == ["model.py:Net"]
    assert targets(data, "load.py", 15) == ["model.py:Other"]
    assert targets(data, "load.py", 16) == ["model.py:Net", "model.py:Other"]


def test_a_guarded_parameter_passed_down_a_chain_of_factories_still_chooses_the_branch(tmp_path):
    """Questions are asked with only the bindings their term can read (Resolver._restricted):
    `name` is never read, so the two `build` calls share what does not depend on it; `kind`
    reaches the guard two calls down and must still choose the branch."""
    _, data = project(tmp_path, {
        "model.py": NET,
        "load.py": """
        import torch
        from model import Net, Other

        def _make(kind):
            if kind == "net":
                model = Net()
            else:
                model = Other()
            return model

        def build(name, kind):
            model = _make(kind)
            return model

        a = torch.compile(build("first", "net"))
        b = torch.compile(build("second", "other"))
        """,
    })
    assert targets(data, "load.py", 16) == ["model.py:Net"]
    assert targets(data, "load.py", 17) == ["model.py:Other"]


def test_same_named_scripts_stay_apart_without_a_project_marker(tmp_path):
    index, data = project(tmp_path, {
        "a/model.py": """
        import torch

        class Net(torch.nn.Module):
            def forward(self, x):
                return x
        """,
        "a/export.py": """
        import torch
        from model import Net

        traced = torch.jit.trace(Net(), torch.randn(2, 3))
        """,
        "b/model.py": """
        import torch

        class Net(torch.nn.Module):
            def forward(self, x):
                return x
        """,
    }, marker=False)
    assert targets(data, "a/export.py", 5) == ["a/model.py:Net"]
    assert len({s.module for s in index.summaries}) == 3


def test_helper_nested_in_a_method_is_no_method(tmp_path):
    # `_maybe_compile(mod)` defined inside `__init__`: its first parameter is the module
    # passed in, not the object being built, so only that module is compiled
    index, data = project(tmp_path, {
        "det.py": """
        import torch
        from torch import nn

        class Pyramid(nn.Module):
            def forward(self, x):
                return x * 2

        class Det(nn.Module):
            def __init__(self, pyr=None, compile_subs=False):
                super().__init__()

                def _maybe_compile(mod, name):
                    return torch.compile(mod) if compile_subs else mod

                if pyr is None:
                    pyr = Pyramid()
                self.pyr = _maybe_compile(pyr, "pyr")

            def forward(self, x):
                return self.pyr(x) * int(x.sum().item())
        """,
    })
    assert targets(data, "det.py", 14) == ["det.py:Pyramid"]


def test_a_large_registry_resolves_completely_whatever_asks_first(tmp_path):
    """Answers are a fix-point, not a budget: a factory that builds any of 150
    registered models resolves to all of them, a model passed around a cycle of calls
    (`a` -> `b` -> `a`) is still found, and no guard cut any answer short. (The budget
    this replaced cut timm's `create_model` site from 102 entries to 32: bench/results.md.)"""
    classes = "\n".join(
        f"@register\nclass Net{i}(nn.Module):\n    def __init__(self, cfg=None):\n        super().__init__()\n"
        f"        self.head = Head()\n\n    def forward(self, x):\n        return self.head(x)\n"
        for i in range(150)
    )
    models = (
        "from torch import nn\nREGISTRY = {}\n\n\ndef register(cls):\n    REGISTRY[cls.__name__] = cls\n    return cls\n\n\n"
        "class Head(nn.Module):\n    def forward(self, x):\n        return x\n\n\n" + classes + "\n\n"
        "def create_model(name, **kw):\n    return build(REGISTRY[name], kw)\n\n\n"
        "def build(cls, kw):\n    return cls(**kw)\n"
    )
    train = """
        import torch
        from models import create_model

        def a(model, n):
            return b(model, n - 1) if n else model

        def b(model, n):
            return a(model, n)

        def main(name):
            net = create_model(name)
            fast = torch.compile(net)
            cycled = torch.compile(a(create_model("Net3"), 3))
            return fast, cycled
    """
    index, data = project(tmp_path, {"models.py": models, "train.py": train})
    want = sorted(f"models.py:Net{i}" for i in range(150))
    assert targets(data, "train.py", 13) == want
    assert targets(data, "train.py", 14) == want  # the registry gives no way to pick Net3 out
    assert "models.Head.forward" in region_defs(data)
    assert index.resolver.cuts == 0


def test_regions_uses_the_cache_check_made_and_sees_an_edit(tmp_path):
    """`regions` reads the summaries `check` cached (issue 19: it parsed every file on
    every run); an edited file is summarized afresh."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(textwrap.dedent(NET))
    train = tmp_path / "train.py"
    train.write_text("import torch\nfrom model import Net\nm = torch.compile(Net())\n")

    def regions(*extra):
        env = dict(os.environ, PYTHONPATH=ROOT, COMPILE_LINT_STATS=str(tmp_path / "stats.jsonl"))
        proc = subprocess.run([sys.executable, "-m", "compile_lint", "regions", ".", "--output-format", "json", *extra],
                              cwd=tmp_path, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    subprocess.run([sys.executable, "-m", "compile_lint", "check", "."], cwd=tmp_path, capture_output=True,
                   env=dict(os.environ, PYTHONPATH=ROOT))
    assert (tmp_path / ".compile_lint_cache").is_dir()
    warm = regions()
    assert warm == regions("--no-cache")
    assert [t["qualname"] for t in warm["sites"][0]["targets"]] == ["Net"]
    train.write_text("import torch\nfrom model import Other\nm = torch.compile(Other())\n")
    assert [t["qualname"] for t in regions()["sites"][0]["targets"]] == ["Other"]
    import shutil

    shutil.rmtree(tmp_path / ".compile_lint_cache")
    regions()  # a cold `regions` leaves the summaries for the next run
    assert any((tmp_path / ".compile_lint_cache").rglob("*"))


def test_cycles_nested_deep_take_rounds_at_their_lowest_question_only(tmp_path):
    """A cycle of 16 functions, each also calling itself: the answer is the class at its
    end, and the cycle's rounds are taken once for all of it. When every question of
    the cycle took rounds of its own, the innermost was evaluated up to 2^16 times
    (transformers 4.44.2's `from_pretrained` machinery: 4,097 evaluations of one term,
    bench/results.md)."""
    k = 16
    funcs = "".join(f"def f{i}():\n    return f{i}() if FLAG else f{i + 1}()\n\n\n" for i in range(k))
    src = (
        "import torch\nfrom torch import nn\n\nFLAG = False\n\n\n"
        "class Net(nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
        + funcs
        + f"def f{k}():\n    return f0() if FLAG else Net()\n\n\n"
        "fast = torch.compile(f0())\n"
    )
    index, data = project(tmp_path, {"app.py": src})
    row = src.count("\n")
    assert targets(data, "app.py", row) == ["app.py:Net"]
    assert index.resolver.cuts == 0
    assert index.resolver.evaluations < 40 * k


def test_a_parameter_many_calls_pass_containers_to_holds_what_each_holds(tmp_path):
    """40 calls pass their own dict to one factory: the answer keeps what every dict
    holds (the containers are merged into one past MAX_CONTAINERS, their elements
    kept), and each call's unknown reason does not make the answer grow."""
    classes = "".join(f"class Net{i}(nn.Module):\n    def forward(self, x):\n        return x\n\n\n" for i in range(40))
    calls = "".join(f"    make({{'a': Net{i}, 'size': cfg{i}}})\n" for i in range(40))
    src = (
        "import torch\nfrom torch import nn\n\n\n" + classes
        + "def make(d):\n    return torch.compile(d['a']())\n\n\n"
        + "def main(" + ", ".join(f"cfg{i}" for i in range(40)) + "):\n" + calls
    )
    index, data = project(tmp_path, {"app.py": src})
    row = src.splitlines().index("    return torch.compile(d['a']())") + 1
    assert targets(data, "app.py", row) == sorted(f"app.py:Net{i}" for i in range(40))
    assert index.resolver.cuts == 0


def test_a_values_repr_is_the_same_in_every_process():
    """Values are sorted by repr (a site's values, entries, reasons), so their repr must
    not move with the hash seed or with memory: trt_pose (bench/dev15) listed its
    backbones in either order from run to run. A set lists its members sorted, and a
    construction (`made`, which holds a summary's id) shows its kind alone."""
    from compile_lint.analysis.reach.values import Value

    members = [Value("inst", f"pkg.m{i:02d}.Net") for i in range(20)]
    text = repr(Value("seq", None, (frozenset(members),), False))
    assert [text.index(f"pkg.m{i:02d}.Net") for i in range(20)] == sorted(text.index(f"pkg.m{i:02d}.Net") for i in range(20))
    built_here = Value("inst", "pkg.Net", made=("call", 140603542816656, (), (), 3))
    built_there = Value("inst", "pkg.Net", made=("call", 140593613855504, (), (), 7))
    assert repr(built_here) == repr(built_there) and built_here != built_there
