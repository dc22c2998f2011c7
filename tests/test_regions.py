"""Name resolution and compiled/traced/cudagraph regions, within and across files."""
import ast
import os
import textwrap

from compile_lint.analysis.semantic.names import NameTable
from compile_lint.config import Settings
from compile_lint.engine import Linter, Selection


def names_of(src, module="pkg.mod", is_package=False):
    return NameTable.build(ast.parse(textwrap.dedent(src)), module, is_package)


def resolve(table, expr):
    return table.resolve(ast.parse(expr, mode="eval").body)


def test_aliases_resolve_to_torch():
    table = names_of(
        """
        import torch as T
        from torch import compile as tc
        import torch._dynamo.config as dc
        from torch._inductor import config
        import functools
        fast = functools.partial(T.compile, mode="max-autotune")
        comp = T.compile
        """
    )
    assert resolve(table, "T.compile") == "torch.compile"
    assert resolve(table, "tc") == "torch.compile"
    assert resolve(table, "dc.suppress_errors") == "torch._dynamo.config.suppress_errors"
    assert resolve(table, "config.triton.cudagraphs") == "torch._inductor.config.triton.cudagraphs"
    assert resolve(table, "fast") == "torch.compile"
    assert resolve(table, "comp") == "torch.compile"
    assert dict(table.partial_keywords(ast.parse("fast", mode="eval").body)).keys() == {"mode"}


def test_other_compiles_never_match():
    table = names_of("import re\nfrom re import compile as rc\n")
    assert resolve(table, "re.compile") == "re.compile"
    assert resolve(table, "rc") == "re.compile"
    assert resolve(table, "compile") == "builtins.compile"
    shadowed = names_of("from torch import compile\ndef compile(x):\n    return x\n")
    assert resolve(shadowed, "compile") != "torch.compile"


def test_relative_imports():
    table = names_of("from .blocks import Block\nfrom ..utils import helper\n", module="pkg.sub.train")
    assert resolve(table, "Block") == "pkg.sub.blocks.Block"
    assert resolve(table, "helper") == "pkg.utils.helper"
    init = names_of("from .blocks import Block\n", module="pkg", is_package=True)
    assert resolve(init, "Block") == "pkg.blocks.Block"


def regions_for(tmp_path, files):
    (tmp_path / "pyproject.toml").write_text("")  # a project: module names start at its root
    paths = []
    for rel, src in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(src))
        paths.append(str(path))
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection(select=("CL000",)))
    linter.lint(paths)
    return linter.regions


def test_single_file_regions(tmp_path):
    regions = regions_for(
        tmp_path,
        {
            "app.py": """
            import torch
            from torch import nn

            def helper(x):
                return x * 2

            @torch.compile
            def decorated(x):
                return helper(x)

            @torch.compile(mode="reduce-overhead")
            def graphs(x):
                return x

            def plain(x):
                return x

            plain_c = torch.compile(plain, dynamic=True)

            class Block(nn.Module):
                def forward(self, x):
                    return x

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blocks = nn.ModuleList([Block() for _ in range(3)])

                def forward(self, x):
                    return self.tail(x)

                def tail(self, x):
                    for block in self.blocks:  # the blocks run: forward reaches a method reading them
                        x = block(x)
                    return x

            class Other(nn.Module):
                def forward(self, x):
                    return x

            net = Net().to("cuda").eval()
            net = torch.compile(net)
            other = Other()
            other.compile()

            @torch.compiler.disable
            def eager_only(x):
                return x

            class Traced(nn.Module):
                def forward(self, x):
                    return eager_only(x)

            t = torch.jit.trace(Traced(), example)
            """
        },
    )
    assert {"compiled"} == regions["app.decorated"].kinds
    assert regions["app.helper"].via == "decorated"
    assert "cudagraph" in regions["app.graphs"].kinds
    assert regions["app.plain"].sites[0].dynamic is True
    for name in ("app.Net.forward", "app.Net.tail", "app.Block.forward", "app.Other.forward"):
        assert "compiled" in regions[name].kinds, name
    assert regions["app.Traced.forward"].kinds == {"traced"}
    assert "app.eager_only" not in regions
    assert "app.Block.__init__" not in regions


def test_cross_file_regions(tmp_path):
    regions = regions_for(
        tmp_path,
        {
            "pkg/__init__.py": "from .blocks import UpBlock\n",
            "pkg/blocks.py": """
            from torch import nn
            from .ops import blend

            class UpBlock(nn.Module):
                def forward(self, x, y):
                    return blend(x, y)
            """,
            "pkg/ops.py": """
            def blend(a, b):
                return a * 0.5 + b * 0.5
            """,
            "pkg/wrappers.py": """
            import torch

            def fast(model, mode="max-autotune"):
                return torch.compile(model, mode=mode)
            """,
            "pkg/train.py": """
            import torch
            from pkg import UpBlock
            from pkg.wrappers import fast

            up = UpBlock()
            up = fast(up, mode="reduce-overhead")
            """,
        },
    )
    fwd = regions["pkg.blocks.UpBlock.forward"]
    assert "compiled" in fwd.kinds and "cudagraph" in fwd.kinds
    assert fwd.sites[0].path.endswith("train.py")
    assert "train.py:7" in fwd.describe() and "compiled by fast()" in fwd.describe()
    assert regions["pkg.ops.blend"].via == "UpBlock.forward"


def test_a_wrapper_called_by_a_name_imports_gave_it_is_a_site(tmp_path):
    """The index looks up only calls spelled with a wrapper's name or a name an import
    bound it to (ProjectIndex._wrapper_names): renamed twice, through a package, it is
    still found; a call of another def with the wrapper's argument shape is not a site."""
    regions = regions_for(
        tmp_path,
        {
            "pkg/__init__.py": "from .wrappers import fast as speed\n",
            "pkg/wrappers.py": """
            import torch

            def fast(model):
                return torch.compile(model)

            def slow(model):
                return model
            """,
            "app.py": """
            from torch import nn
            from pkg import speed as go
            from pkg.wrappers import slow

            class Net(nn.Module):
                def forward(self, x):
                    return x

            class Eager(nn.Module):
                def forward(self, x):
                    return x

            net = go(Net())
            other = slow(Eager())
            """,
        },
    )
    assert regions["app.Net.forward"].kinds == {"compiled"}
    assert "compiled by fast()" in regions["app.Net.forward"].describe()
    assert "app.Eager.forward" not in regions


def test_a_submodule_read_only_in_a_disabled_nested_def_is_not_reached(tmp_path):
    """doctr's compiled forward hands its post-processor to a nested def decorated
    `torch.compiler.disable`: that def runs eagerly, so the post-processor is outside the
    region; a submodule the forward reads itself, or in a plain nested def, is inside."""
    regions = regions_for(
        tmp_path,
        {
            "app.py": """
            import torch
            from torch import nn

            class Post(nn.Module):
                def forward(self, x):
                    return x

            class Head(nn.Module):
                def forward(self, x):
                    return x

            class Body(nn.Module):
                def forward(self, x):
                    return x

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.post = Post()
                    self.head = Head()
                    self.body = Body()

                def forward(self, x):
                    @torch.compiler.disable
                    def _postprocess(y):
                        return self.post(y)

                    def _run(y):
                        return self.body(y)

                    return _postprocess(self.head(_run(x)))

            net = torch.compile(Net())
            """,
        },
    )
    assert "app.Head.forward" in regions and "app.Body.forward" in regions
    assert "app.Post.forward" not in regions


def test_configured_wrappers(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "lib.py").write_text("def trace_it(m):\n    return magic(m)\n")
    (tmp_path / "use.py").write_text(
        "from torch import nn\nfrom lib import trace_it\nclass M(nn.Module):\n    def forward(self, x):\n        return x\nm = trace_it(M())\n"
    )
    settings = Settings(root=str(tmp_path), trace_wrappers=("lib.trace_it",))
    linter = Linter(lambda _p: settings, Selection(select=("CL000",)))
    linter.lint([str(tmp_path / "lib.py"), str(tmp_path / "use.py")])
    assert linter.regions["use.M.forward"].kinds == {"traced"}


def test_one_file_alone_assumes_nothing(tmp_path):
    regions = regions_for(
        tmp_path,
        {"blocks.py": "from torch import nn\nclass UpBlock(nn.Module):\n    def forward(self, x):\n        return x\n"},
    )
    assert regions == {}


def test_self_passed_to_a_tracer_marks_the_class(tmp_path):
    regions = regions_for(
        tmp_path,
        {
            "sr.py": """
            import torch
            from torch import nn

            class SuperRes(nn.Module):
                def forward(self, x):
                    return x

                def to_onnx(self, path):
                    torch.onnx.export(self, torch.rand(1, 3, 64, 64), path)
            """
        },
    )
    assert regions["sr.SuperRes.forward"].kinds == {"traced"}


# -- region labels and related locations on findings ------------------------------------
CL34 = ("CL301", "CL302", "CL303", "CL304", "CL401", "CL402", "CL403")


def run_rule(code, source, tmp_path, **kw):
    from compile_lint.rules import get_rule
    from compile_lint.rules.base import Case
    from compile_lint.testing import run_case

    return run_case(get_rule(code), Case(textwrap.dedent(source), **kw), str(tmp_path))


def lint_codes(tmp_path, files: dict, codes=CL34):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection(select=tuple(codes)))
    results = linter.lint([str(tmp_path / rel) for rel in files])
    return {os.path.basename(r.path): r.findings for r in results}


def test_traced_finding_is_labelled_traced_even_when_also_compiled(tmp_path):
    result = run_rule("CL101", """\
        import torch
        import torch.nn.functional as F
        def up(x, ref):
            return F.interpolate(x, size=(int(ref.shape[2]), ref.shape[3]))
        fast = torch.compile(up)
        traced = torch.jit.trace(up, (torch.rand(1, 3, 4, 4), torch.rand(1, 3, 8, 8)))
        """, tmp_path)
    assert [f.region_kind for f in result.findings] == ["traced"]
    (site,) = result.findings[0].related
    assert site.row == 6 and site.path.endswith("case.py")
    assert site.message.startswith("traced by torch.jit.trace()") and "compiled" not in site.message


def test_region_description_names_the_path_through_submodules(tmp_path):
    result = run_rule("CL102", """\
        import torch
        from torch import nn
        class Inner(nn.Module):
            def __init__(self):
                super().__init__()
                self.k = 2
            def set_k(self, k):
                self.k = k
            def forward(self, x):
                return x * self.k
        class Outer(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()
            def forward(self, x):
                return self.inner(x)
        t = torch.jit.trace(Outer(), torch.rand(2))
        """, tmp_path)
    (finding,) = result.findings
    assert "set_k" in finding.message
    site, write = finding.related
    assert site.row == 17 and "reaching this code from `Outer.forward`" in site.message
    assert (write.row, write.column) == (8, 9) and write.message == "assigned here"


def test_findings_name_the_compile_site_as_a_related_location(tmp_path):
    found = lint_codes(tmp_path, {
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
    (site,) = cl401.related
    assert site.path.endswith("train.py") and site.row == 3
    assert site.message == "compiled by torch.compile() with mode='reduce-overhead'"
    assert "overwrites it" in cl401.message and "train.py" not in cl401.message
    assert cl401.region_kind == "cudagraph"
    assert cl401.fix is not None and cl401.fix.applicability == "safe"
    cl303 = by_code["CL303"]
    assert [(r.row, r.message) for r in cl303.related] == [(8, "compiled by torch.compile()")]
    assert "differ from eager" in cl303.message
    assert cl303.region_kind == "compiled"


def test_cl403_only_for_graph_inputs(tmp_path):
    found = lint_codes(tmp_path, {
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


def test_def_qualnames_of_a_walk_equal_those_of_the_statements():
    from compile_lint.analysis.reach.regions import def_qualnames, def_qualnames_of_shape
    from compile_lint.analysis.semantic.walk import walk_by_type

    tree = ast.parse(textwrap.dedent("""\
        import sys
        if sys.version_info > (3, 8):
            def f():
                def inner():
                    class Local:
                        def m(self): ...
                    return Local
                return inner
        else:
            def f(): ...
        try:
            class A:
                async def g(self):
                    with open("x") as fh:
                        def h(): ...
                class B:
                    pass
        except ImportError:
            pass
        match sys.argv:
            case [_, "x"]:
                def k(): return lambda: 0
        for _ in range(2):
            while True:
                @staticmethod
                def w(): ...
                break
        """))
    _nodes, parents, by_type = walk_by_type(tree)
    expected = def_qualnames(tree)
    assert sorted(expected.values()) == sorted(
        ["f", "f.inner", "f.inner.Local", "f.inner.Local.m", "f", "A", "A.g", "A.g.h", "A.B", "k", "w"])
    assert def_qualnames_of_shape(by_type, parents) == expected
