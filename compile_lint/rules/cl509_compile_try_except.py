from __future__ import annotations

import ast

from ..analysis.compiled.calls import is_compile_call
from ..analysis.reach.regions import compiles_nothing
from ..analysis.torch_api import SUPPRESS_ERRORS
from .base import Case, Rule


def _calls_name(nodes, names: set[str], skip: ast.Call) -> bool:
    """Does any call in `nodes` (other than `skip`) call one of `names`?"""
    for stmt in nodes:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and node is not skip:
                func = node.func
                while isinstance(func, ast.Attribute):
                    func = func.value
                target = node.func
                text = ast.unparse(target) if not isinstance(target, ast.Name) else target.id
                if text in names or (isinstance(func, ast.Name) and func.id in names):
                    return True
    return False


def _hands_to_a_caller(tree: ast.Module, nodes, names: set[str]) -> bool:
    """Does a call in `nodes` hand one of `names` to a module-level def of this file that
    calls that parameter (LiveSwapping's `benchmark_model(compiled_model, ...)`, whose
    warm-up runs the model inside the `try`: judged false in bench/fresh_reads batch 52)?"""
    defs = {stmt.name: stmt for stmt in tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for stmt in nodes:
        for node in ast.walk(stmt):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in defs):
                continue
            func = defs[node.func.id]
            positional = func.args.posonlyargs + func.args.args
            handed = {positional[i].arg for i, arg in enumerate(node.args)
                      if i < len(positional) and isinstance(arg, ast.Name) and arg.id in names}
            handed |= {k.arg for k in node.keywords if k.arg and isinstance(k.value, ast.Name) and k.value.id in names}
            if handed and any(isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in handed
                              for call in ast.walk(func)):
                return True
    return False


_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)


def _nested_statements(body):
    """The statements of a try body, including those inside `if`/`for`/`while`/`with`
    blocks in it (a nested `try` is checked on its own; defs run later, if at all)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, _BLOCKS):
            yield from _nested_statements(stmt.body)
            yield from _nested_statements(getattr(stmt, "orelse", []))
        elif hasattr(ast, "Match") and isinstance(stmt, ast.Match):
            for case in stmt.cases:
                yield from _nested_statements(case.body)


# what a probe for a missing API raises: an optional import, or `torch.compile` itself on a
# torch older than 2.0 (`module 'torch' has no attribute 'compile'`)
PROBE_ERRORS = frozenset({"builtins.ImportError", "builtins.ModuleNotFoundError", "builtins.AttributeError"})


def _suppresses_errors(facts, body) -> bool:
    """The `try` body sets `torch._dynamo.config.suppress_errors = True` (before or after
    the wrapping: the setting is read when the first call compiles): the author sends the
    lazy errors to eager that way, not to the `except` (ai-toolkit's captioner, read in
    bench/fresh_reads; CL506 reports the setting)."""
    for stmt in _nested_statements(body):
        if isinstance(stmt, ast.Assign) \
                and isinstance(stmt.value, ast.Constant) and stmt.value.value is True \
                and any(facts.resolve(t) == SUPPRESS_ERRORS for t in stmt.targets):
            return True
    return False


def _catches_probe_errors_only(facts, handler: ast.ExceptHandler) -> bool:
    """`except ImportError:` (or ModuleNotFoundError, AttributeError, or a tuple of them):
    the `try` probes an optional import (`from torch.nn.attention.flex_attention import
    ...`, then compiling it, focalcodec's wavlm.py, bench/dev_findings) or `torch.compile`
    itself on a torch without it (RVT's `th.compile(cumsum_channel)` under `except
    AttributeError: ...`, bench/fresh_reads batch 38); its handler was never meant for
    compile errors, and none is one of these."""
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type] if handler.type else []
    return bool(kinds) and all(facts.resolve(kind) in PROBE_ERRORS for kind in kinds)


class CompileTryExcept(Rule):
    """
    ## What it does
    Finds `torch.compile(...)` (or `module.compile()`) inside a `try` block whose
    `except` is meant to catch compilation failures, when nothing in the `try` calls
    the compiled result, directly or by handing it to a def of the same file that calls
    it (LiveSwapping's `benchmark_model(compiled_model, ...)`, whose warm-up runs the
    model inside the `try`: judged false in `bench/fresh_reads` batch 52; a def that only
    stores it is no call). Not reported: a `try` that sets
    `torch._dynamo.config.suppress_errors = True`, sending the lazy errors to eager by
    that setting (which CL506 reports): ai-toolkit's captioner at 27a03a9, a false
    finding read in `bench/fresh_reads/`. On the 476 development apps this took 1 of the
    rule's 40 findings, the HunyuanVideo-Foley pack's DAC compile (bench/dev34), which
    `bench/dev_findings/` holds as true: its judge read the `except` and not the
    `dynamo.config.suppress_errors = True` two statements above, which makes a failing
    compile run eagerly, the fallback the handler was for. Corpus M unchanged.

    ## Why is this bad?
    Compilation is lazy: `torch.compile` only wraps its argument, and tracing and code
    generation happen at the first call. Errors surface there, outside the `try`, so
    the handler (a fallback to eager, a warning) never runs. Real cases: k-diffusion's
    `flags.py`, ccrestoration's `base_model.py`.

    ## Example
    ```python
    try:
        model = torch.compile(model)
    except Exception:
        print("compile failed, running eagerly")
    ```

    ## Use instead
    ```python
    model = torch.compile(model)
    try:
        model(example_input)  # compilation happens here
    except Exception:
        model = model._orig_mod  # or torch._dynamo.reset() and fall back
    ```

    ## Fix safety
    No fix: where to warm up, and with what input, is the author's decision.

    Not reported: a `try` whose handlers catch only `ImportError` / `ModuleNotFoundError`
    (an optional import probed, then compiled: `from torch.nn.attention.flex_attention
    import flex_attention`): the handler is for the import, and no compile error is one of
    those. On the 476 development apps held (`bench/dev_findings/`, 2026-12-06) this took
    one finding, focalcodec's `wavlm.py`, judged false there, and added none. Nor one whose
    handlers catch only those and `AttributeError`: `torch.compile` probed on a torch
    older than 2.0 (RVT's `except AttributeError: ...`, judged false in
    `bench/fresh_reads/` batch 38; on the 381 app folders of the benchmarks the only
    CL509 finding that went, corpus M unchanged: `bench/results.md`, 2026-12-07 12:03). Nor a
    `torch.compile(..., disable=True)` (the literal; `Module.compile(disable=True)` too):
    torch returns the argument itself (`torch._dynamo.optimize` gives a `_NullDecorator`),
    so nothing compiles and no lazy error can come. Music-Source-Separation-Training's
    bandit_v2 wraps such calls in `try` for a torch without `torch.compile`
    (`bench/fresh_reads/` batch 16: its 2 findings, judged false, went; on frame A and the
    fresh reads nothing else moved).

    ## References
    - `torch.compile` returns a wrapper and compiles at the first call (lazy); real cases:
      k-diffusion `flags.py`, ccrestoration `base_model.py` (`bench/judged/`)
    - https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html
    """

    needs = ()
    code = "CL509"
    name = "compile-try-except"
    summary = "`try: torch.compile(...) except:` never catches compile errors"
    requires = (b"try",)

    valid = [
        Case(
            "import torch\ntry:\n    torch._dynamo.config.suppress_errors = True\n    model.compile(dynamic=True)\n"
            "except Exception:\n    print('eager')\n",
            note="the lazy errors go to eager by suppress_errors, set first in the same try (ai-toolkit's captioner)",
        ),
        Case("import torch\ntry:\n    model = torch.compile(model)\n    model(example)\nexcept Exception:\n    model = eager\n"),
        Case(
            "import torch\ndef bench(model, x):\n    for _ in range(3):\n        model(x)\n\n"
            "for mode in modes:\n    try:\n        compiled = torch.compile(base, mode=mode)\n        bench(compiled, x)\n"
            "    except Exception:\n        continue\n",
            note="handed to a def of the file that calls it: the first call is inside the try (LiveSwapping's demo)",
        ),
        Case("import torch\ntry:\n    fast = torch.compile(model)\nfinally:\n    log()\n", note="no handler"),
        Case("import torch\ntry:\n    import triton\nexcept ImportError:\n    triton = None\n"),
        Case(
            "import torch\ntry:\n    from torch.nn.attention.flex_attention import flex_attention\n"
            "    flex_attention = torch.compile(flex_attention)\n    HAS_FLEX = True\n"
            "except (ImportError, ModuleNotFoundError):\n    HAS_FLEX = False\n",
            note="an optional import probed, then compiled: the handler is for the import (focalcodec, bench/dev_findings)",
        ),
        Case(
            "import torch\ntry:\n    if args.compile:\n        model = torch.compile(model)\n    with torch.no_grad():\n"
            "        model(warmup)\nexcept Exception:\n    model = eager\n",
            note="warmed up inside the try",
        ),
        Case(
            "import torch\ntry:\n    def build(m):\n        return torch.compile(m)\nexcept Exception:\n    pass\n",
            note="a def in the try does not compile anything there",
        ),
        Case(
            "import torch\ntry:\n    band = torch.compile(band, disable=True)\nexcept AttributeError:\n    pass\n",
            note="`disable=True` returns the argument itself: nothing compiles (Music-Source-Separation, bench/fresh_reads)",
        ),
        Case("import torch\ntry:\n    net.compile(disable=True)\nexcept Exception:\n    pass\n",
             note="Module.compile hands its keywords to torch.compile"),
        Case("import torch as th\ntry:\n    fast = th.compile(cumsum_channel)\nexcept AttributeError:\n    ...\n",
             note="torch.compile probed on a torch without it (RVT's event representations, bench/fresh_reads batch 38)"),
    ]
    invalid = [
        Case(
            "import torch\ntry:\n    torch._dynamo.config.suppress_errors = False\n    model = torch.compile(model)\n"
            "except Exception:\n    print('eager')\n",
            at=[(4, 13)], note="suppress_errors turned off: the lazy errors still escape the try",
        ),
        Case("import torch\ntry:\n    model = torch.compile(model)\nexcept Exception:\n    print('eager')\n", at=[(3, 13)]),
        Case(
            "import torch\ntry:\n    fast = torch.compile(model)\nexcept (ImportError, RuntimeError):\n    fast = model\n",
            at=[(3, 12)], note="a handler for more than the import",
        ),
        Case("import torch as T\ndef setup(self):\n    try:\n        self.unet = T.compile(self.unet, mode='max-autotune')\n    except RuntimeError:\n        pass\n", at=[(4, 21)]),
        Case(
            "import torch\ndef keep(model, registry):\n    registry.append(model)\n\n"
            "try:\n    compiled = torch.compile(base)\n    keep(compiled, models)\nexcept Exception:\n    compiled = base\n",
            at=[(6, 16)], note="handed to a def that only stores it: the first call is elsewhere",
        ),
        Case("import torch\ntry:\n    net.compile()\nexcept Exception:\n    pass\n", at=[(3, 5)]),
        Case(
            "import torch\ntry:\n    model = torch.compile(model, disable=not use_compile)\nexcept Exception:\n    pass\n",
            at=[(3, 13)], note="a `disable` the code computes may be False",
        ),
        Case(
            "import torch\ntry:\n    if use_compile:\n        model = torch.compile(model, mode='max-autotune')\n"
            "except Exception as e:\n    print(e)\n",
            at=[(4, 17)], note="compile inside an if within the try",
        ),
        Case(
            "import torch\ndef setup(self):\n    try:\n        for name in ('unet', 'vae'):\n"
            "            with torch.device('cuda'):\n                setattr(self, name, torch.compile(getattr(self, name)))\n"
            "    except RuntimeError:\n        pass\n",
            at=[(6, 37)], note="inside for and with",
        ),
        Case(
            "import torch\ntry:\n    with timer():\n        self.model.compile()\nexcept Exception:\n    pass\n",
            at=[(4, 9)], note="Module.compile inside a with",
        ),
    ]

    def check(self, facts):
        for node in facts.nodes(ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ())):
            if not node.handlers or all(_catches_probe_errors_only(facts, h) for h in node.handlers):
                continue
            uncalled = [call for stmt in _nested_statements(node.body) for call, names in self._compiles(facts, stmt)
                        if not (names and (_calls_name(node.body, names, call)
                                           or _hands_to_a_caller(facts.tree, node.body, names)))]
            if not uncalled or _suppresses_errors(facts, node.body):
                continue  # (the setting read once per `try`, and only where it decides)
            for call in uncalled:
                yield self.finding(
                    facts, call,
                    "compile errors surface at the first call, outside this `try`: the `except` never catches them",
                )

    @staticmethod
    def _compiles(facts, stmt):
        """(compile call, names bound to its result) in one statement of the try body."""
        if isinstance(stmt, ast.Assign) and is_compile_call(facts, stmt.value):
            yield stmt.value, {ast.unparse(t) for t in stmt.targets}
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            if is_compile_call(facts, call):
                yield call, set()
            elif isinstance(call.func, ast.Attribute) and call.func.attr == "compile" and facts.resolve(call.func) is None \
                    and not compiles_nothing((k.arg, k.value) for k in call.keywords):
                # (`Module.compile(**kwargs)` hands them to torch.compile: `disable=True` compiles nothing)
                yield call, {ast.unparse(call.func.value)}
            elif facts.resolve(call.func) == "builtins.setattr" and len(call.args) == 3 and is_compile_call(facts, call.args[2]):
                yield call.args[2], set()  # setattr(self, name, torch.compile(...))
