"""What names hold compiled callables (analysis/compiled/values.py) and which calls reach a
def (precision.py callers), both asked of the value model's bindings (analysis/semantic/bindings.py):
another file's module scope, aliases, shadowing, compiled wrappers."""
from __future__ import annotations

import ast
import os
import textwrap

from compile_lint.analysis.semantic.bindings import holds_def, module_bindings, module_statements
from compile_lint.analysis.compiled.values import compiled_values
from compile_lint.analysis.semantic.facts import ModuleFacts
from compile_lint.analysis.semantic.names import NameTable, module_name_for
from compile_lint.config import Settings
from compile_lint.engine import Linter, Selection
from compile_lint.source import SourceFile


def write(tmp_path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def lint(tmp_path, files: dict[str, str], codes):
    write(tmp_path, files)
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection(select=tuple(codes)))
    results = linter.lint([str(tmp_path / rel) for rel in files])
    return {os.path.basename(r.path): [(f.code, f.row) for f in r.findings] for r in results}


def facts_of(path: str) -> ModuleFacts:
    with open(path, "rb") as fh:
        source = SourceFile(path, fh.read())
    tree = source.parse()
    module, is_package = module_name_for(path)
    return ModuleFacts(source, tree, NameTable.build(tree, module, is_package), {}, Settings(root=os.path.dirname(path)))


def facts_for(code: str) -> ModuleFacts:
    source = SourceFile("snippet.py", textwrap.dedent(code).encode())
    tree = source.parse()
    return ModuleFacts(source, tree, NameTable.build(tree, "snippet"), {}, Settings())


def calls(facts, name: str) -> list[ast.Call]:
    return [c for c in facts.nodes(ast.Call) if isinstance(c.func, ast.Name) and c.func.id == name]


# -- another file's module scope ------------------------------------------------------
ENGINE = {
    "engine.py": """
        import torch

        def _decode(z):
            return z * 2

        try:
            decode, plain = torch.compile(_decode, mode="reduce-overhead"), _decode
        except RuntimeError:
            decode = _decode
        model = Net()
        model.compile(mode="max-autotune")
        eager = _decode
    """,
}


def test_imported_values_come_from_the_other_files_module_bindings(tmp_path):
    write(tmp_path, {**ENGINE, "app.py": """
        from engine import decode, plain, model, eager

        a = decode(z)
        b = plain(z)
        c = model(z)
        d = eager(z)
    """})
    facts = facts_of(str(tmp_path / "app.py"))
    values = compiled_values(facts)
    got = {name: values.callee(calls(facts, name)[0].func, calls(facts, name)[0]) for name in ("decode", "plain", "model", "eager")}
    assert got["decode"] is not None and got["decode"].mode == "reduce-overhead" and got["decode"].row == 8
    assert got["model"] is not None and got["model"].api == "Module.compile" and got["model"].mode == "max-autotune"
    assert got["plain"] is None and got["eager"] is None
    assert (str(tmp_path / "engine.py"), "mentions", "compile") in facts.project.probes


def test_only_imported_names_the_file_calls_are_looked_up(tmp_path):
    write(tmp_path, {**ENGINE, "quiet.py": """
        from engine import decode

        handlers = [decode]
    """, "loud.py": """
        from engine import decode

        def run(fn, z):
            return fn(z)

        out = run(decode, z)
    """})
    quiet = facts_of(str(tmp_path / "quiet.py"))
    assert not compiled_values(quiet).may_call_compiled(cudagraphs=True)
    assert quiet.project.probes == {}  # engine.py never looked at
    loud = facts_of(str(tmp_path / "loud.py"))
    assert compiled_values(loud).may_call_compiled(cudagraphs=True)


def test_a_file_that_spells_no_cuda_graph_compile_is_not_parsed_for_the_cuda_graph_check(tmp_path):
    """A compile's mode and options are literals of its own file: a file without
    "reduce-overhead", "max-autotune" or "triton.cudagraphs" binds no name to a CUDA-graph
    compile, so `may_call_compiled(cudagraphs=True)` answers from its bytes (a probe the
    cache records) without parsing it; the options spelling still counts."""
    write(tmp_path, {
        "plain.py": "import torch\ndecode = torch.compile(dec)\n",
        "graphs.py": "import torch\ndecode = torch.compile(dec, options={'triton.cudagraphs': True})\n",
        "use_plain.py": "from plain import decode\nout = decode(z)\n",
        "use_graphs.py": "from graphs import decode\nout = decode(z)\n",
    })
    plain = facts_of(str(tmp_path / "use_plain.py"))
    assert not compiled_values(plain).may_call_compiled(cudagraphs=True)
    assert compiled_values(plain).may_call_compiled(cudagraphs=False)  # it is compiled, without graphs
    graphs = facts_of(str(tmp_path / "use_graphs.py"))
    assert compiled_values(graphs).may_call_compiled(cudagraphs=True)
    other = facts_of(str(tmp_path / "use_plain.py"))
    assert not compiled_values(other).may_call_compiled(cudagraphs=True)
    path = str(tmp_path / "plain.py")
    assert (path, "mentions", "reduce-overhead") in other.project.probes
    assert (path, "mentions", "compile") not in other.project.probes  # never opened as a project file


def test_cudagraph_output_kept_across_files_through_a_tuple_binding(tmp_path):
    found = lint(tmp_path, {**ENGINE, "app.py": """
        from engine import decode

        outs = []
        for z in batches:
            outs.append(decode(z))
    """}, ("CL401",))
    assert found["app.py"] == [("CL401", 6)]


def test_module_statements_walk_blocks_not_bodies():
    facts = facts_for("""
        import torch
        if X:
            a = 1
        else:
            try:
                b = 2
            except E:
                c = 3
        class K:
            d = 4
        def f():
            e = 5
        match v:
            case 1:
                g = 6
    """)
    names = [s.targets[0].id for s in module_statements(facts.tree) if isinstance(s, ast.Assign)]
    assert names == ["a", "b", "c", "g"]
    assert set(module_bindings(facts.tree)) == {"a", "b", "c", "K", "f", "g"}


# -- which calls reach a def ----------------------------------------------------------
def test_a_call_holds_the_def_through_aliases_and_compiled_wrappers():
    facts = facts_for("""
        import torch

        def blend(a, b, t):
            return a * t + b * (1 - t)

        mix = blend
        fast = torch.compile(mix)
        x = blend(p, q, 0.5)
        y = mix(p, q, 0.5)
        z = fast(p, q, 0.5)

        def other(blend, p, q):
            return blend(p, q, 0.5)
    """)
    func = next(n for n in facts.nodes(ast.FunctionDef) if n.name == "blend")
    target = lambda call: (compiled_values(facts).compile_call(call) or None) and compiled_values(facts).compile_call(call).target
    for name, row in (("blend", 9), ("mix", 10), ("fast", 11)):
        call = next(c for c in calls(facts, name) if c.lineno == row)
        assert holds_def(facts, call.func, func, target), name
    shadowed = next(c for c in calls(facts, "blend") if c.lineno == 14)
    assert not holds_def(facts, shadowed.func, func, target)


def test_dtype_reaches_a_compiled_def_through_an_alias(tmp_path):
    found = lint(tmp_path, {"app.py": """
        import torch

        @torch.compile
        def over(a, b, t):
            return a * t + b * (1 - t)

        mix = over
        out = mix(fg.half(), bg.half(), 0.5)
    """}, ("CL301",))
    assert found["app.py"] == [("CL301", 6)]


def test_a_parameter_of_the_same_name_is_not_a_caller(tmp_path):
    found = lint(tmp_path, {"app.py": """
        import torch

        @torch.compile
        def over(a, b, t):
            return a * t + b * (1 - t)

        def apply(over, fg, bg):
            return over(fg.half(), bg.half(), 0.5)
    """}, ("CL301",))
    assert found["app.py"] == []


# -- what a name holds in this file -------------------------------------------------
def test_a_local_of_the_same_name_shadows_a_compiled_global():
    facts = facts_for("""
        import torch

        fast = torch.compile(f, mode="reduce-overhead")

        def keep(fast, xs):
            return [fast(x) for x in xs]

        def run(xs):
            return [fast(x) for x in xs]
    """)
    values = compiled_values(facts)
    shadowed, reached = sorted(calls(facts, "fast"), key=lambda c: c.lineno)
    assert values.callee(shadowed.func, shadowed) is None
    assert values.callee(reached.func, reached).mode == "reduce-overhead"


def test_a_binding_below_the_use_reaches_it_through_the_loop():
    facts = facts_for("""
        import torch

        def train(model, batches):
            for step, x in enumerate(batches):
                y = model(x)
                if step == 0:
                    model = torch.compile(model, mode="reduce-overhead")
            after = model(x)
    """)
    values = compiled_values(facts)
    in_loop, after = sorted(calls(facts, "model"), key=lambda c: c.lineno)
    assert values.callee(in_loop.func, in_loop).mode == "reduce-overhead"
    assert values.callee(after.func, after).mode == "reduce-overhead"


def test_a_name_compiled_in_place_and_a_decorated_def():
    facts = facts_for("""
        import torch

        model = Net()
        model.compile(mode="max-autotune")

        @torch.compile(mode="reduce-overhead")
        def step(x):
            return x

        a = model(x)
        b = step(x)
        c = print(x)
    """)
    values = compiled_values(facts)
    assert values.callee(calls(facts, "model")[0].func, calls(facts, "model")[0]).api == "Module.compile"
    assert values.callee(calls(facts, "step")[0].func, calls(facts, "step")[0]).mode == "reduce-overhead"
    assert values.callee(calls(facts, "print")[0].func, calls(facts, "print")[0]) is None


# -- the cache follows the compile an imported name holds -------------------------------
CUDAGRAPH_ENGINE = """\
import torch

denoise = torch.compile(Denoiser(), mode="reduce-overhead")
"""
ALBUM = """\
from engine import denoise


def denoise_album(photos):
    results = {}
    for name, photo in photos.items():
        results[name] = denoise(photo)
    return results
"""


def test_a_warm_cache_sees_the_imported_compile_change_its_mode(tmp_path):
    """album.py's CL401 comes from engine.py's `mode=`: editing that mode (engine.py still
    mentions compile) must re-lint album.py, not serve its cached finding."""
    import json
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "engine.py").write_text(CUDAGRAPH_ENGINE)
    (tmp_path / "album.py").write_text(ALBUM)
    env = dict(os.environ, PYTHONPATH=root)
    env.pop("COMPILE_LINT_NO_CACHE", None)

    def check():
        proc = subprocess.run([sys.executable, "-m", "compile_lint", "check", "--select", "CL401", "--output-format", "json", "."],
                              cwd=tmp_path, env=env, capture_output=True)
        assert proc.returncode in (0, 1), proc.stderr.decode()
        return [(os.path.basename(f["filename"]), f["code"]) for f in json.loads(proc.stdout)]

    assert check() == [("album.py", "CL401")]
    assert check() == [("album.py", "CL401")]  # warm
    (tmp_path / "engine.py").write_text(CUDAGRAPH_ENGINE.replace("reduce-overhead", "max-autotune-no-cudagraphs"))
    assert check() == []


# -- a compiled module handed to a helper of another file (compiled_wrappers._param) ----
HELPER = """
    import torch

    def ready(model):
        # (a compiled model too)
        if model:
            return model
"""


def test_a_wrapper_passed_to_a_helper_of_another_file_is_followed_into_it(tmp_path):
    found = lint(tmp_path, {"helpers.py": HELPER, "train.py": """
        import torch
        from helpers import ready
        ready(torch.compile(Net()))
    """}, ("CL512",))
    assert found["helpers.py"] == [("CL512", 6)]


def test_the_callers_of_a_def_that_many_files_call_are_not_read(tmp_path):
    # a library entry point (transformers' `auto_docstring`, called in 1,776 files): its
    # callers are not searched, so a wrapper one of them passes is not seen
    from compile_lint.analysis.compiled.wrappers import MAX_CALLER_FILES

    files = {"helpers.py": HELPER, "train.py": "import torch\nfrom helpers import ready\nready(torch.compile(Net()))\n"}
    files.update({f"use{i}.py": "# compile\nfrom helpers import ready\nready(None)\n" for i in range(MAX_CALLER_FILES)})
    found = lint(tmp_path, files, ("CL512",))
    assert found["helpers.py"] == []


def test_callers_that_never_spell_compile_do_not_count_toward_the_cut(tmp_path):
    from compile_lint.analysis.compiled.wrappers import MAX_CALLER_FILES

    files = {"helpers.py": HELPER, "train.py": "import torch\nfrom helpers import ready\nready(torch.compile(Net()))\n"}
    files.update({f"use{i}.py": "from helpers import ready\nready(None)\n" for i in range(MAX_CALLER_FILES + 5)})
    found = lint(tmp_path, files, ("CL512",))
    assert found["helpers.py"] == [("CL512", 6)]
