from __future__ import annotations

import ast
import re

from ..analysis.branches.feature_tests import old_torch_branch
from ..analysis.branches.fallbacks import in_compat_fallback
from ..analysis.semantic.names import public_spelling
from .base import Case, Rule

# old name -> (new name under torch., device, how old positional arguments map)
REPLACEMENTS = {
    "torch.cuda.amp.autocast": ("amp.autocast", "cuda", ("enabled", "dtype", "cache_enabled")),
    "torch.cpu.amp.autocast": ("amp.autocast", "cpu", ("enabled", "dtype", "cache_enabled")),
    "torch.cuda.amp.GradScaler": ("amp.GradScaler", "cuda", None),  # positionals shift by one
    "torch.cpu.amp.GradScaler": ("amp.GradScaler", "cpu", None),
    "torch.cuda.amp.custom_fwd": ("amp.custom_fwd", "cuda", "decorator"),
    "torch.cuda.amp.custom_bwd": ("amp.custom_bwd", "cuda", "decorator"),
}
AMP_WORD = re.compile(rb"\bamp\b")
LAST_NAMES = frozenset(dotted.rpartition(".")[2] for dotted in REPLACEMENTS)


def lookup_only_nodes(facts) -> set[int]:
    """ids of every node whose evaluation only looks a class up: inside an annotation
    (`x: T`, `self.x: T` in a function body never evaluated, elsewhere evaluated; a
    parameter's or a return's annotation, looked up at `def` time), and the class operand
    of `isinstance`/`issubclass` (UPT's `isinstance(self.grad_scaler, GradScaler)`,
    judged false in bench/dev_findings). None of them constructs or calls the API, and
    only the construction or call warns (verified on Python 3.11, torch 2.13: `python -W
    error::FutureWarning` is silent on `torch.cuda.amp.GradScaler` looked up and on
    `isinstance(x, torch.cuda.amp.GradScaler)`, raises on `torch.cuda.amp.GradScaler()`)."""
    found: set[int] = set()
    for node in facts.nodes(ast.AnnAssign, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef):
        hint = node.returns if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else node.annotation
        if hint is not None:
            found.update(id(sub) for sub in ast.walk(hint))
    for call in facts.nodes(ast.Call):
        if len(call.args) == 2 and isinstance(call.func, ast.Name) and call.func.id in ("isinstance", "issubclass") \
                and facts.resolve(call.func) in ("builtins.isinstance", "builtins.issubclass"):
            found.update(id(sub) for sub in ast.walk(call.args[1]))
    return found


class DeprecatedAmp(Rule):
    """
    ## What it does
    Finds the deprecated device-specific AMP API: `torch.cuda.amp.autocast`,
    `torch.cpu.amp.autocast`, `torch.cuda.amp.GradScaler`, `torch.cpu.amp.GradScaler`,
    `torch.cuda.amp.custom_fwd` / `custom_bwd`, however imported. That includes a name a
    module-level `try` imports whose handlers bind a stand-in for an older torch (RAFT's
    `try: from torch.cuda.amp import GradScaler` / `except: class GradScaler: ...`, copied
    by RAFT-Stereo, VideoFlow and monst3r): on every torch that has the API the import
    is what the name holds, so `GradScaler(...)` warns. Reported without a fix (the
    stand-in would stay behind). Measured on the 91 files of the benchmark apps and corpus
    M that import from `torch.cuda.amp`/`torch.cpu.amp`, each checked alone (`grep -RlE
    "from torch.(cuda|cpu).amp" --include=*.py <apps> | xargs -n1 compile-lint check
    --no-cache --select CL507`): 205 -> 210 findings, the 5 new ones this shape's
    constructions (a miss reported in bench/fresh_reads batch 54), nothing else moved.

    Not reported: the branch that runs only on a torch older than a test asks for
    (`if hasattr(torch.amp, "GradScaler"): ... else: <old API>`, a comparison of
    `torch.__version__`, a project's version helper, or a flag bound once to one of those,
    in this file or in the project module it is imported from: ultralytics'
    `TORCH_2_4 = check_version(torch.__version__, "2.4.0")`, whose `else` branches build
    `torch.cuda.amp.GradScaler` and `autocast` for torch < 2.4 / 1.13; yoloe's two, judged
    false in `bench/fresh_reads/` batch 35, went, and nothing else of CL303, CL304 or CL507
    moved on the 369 app folders of the benchmarks or corpus M: `bench/results.md`,
    2026-12-07 12:03). The old API there is the fallback for a torch without the new one.

    ## Why is this bad?
    Each use emits a FutureWarning, and the old CUDA spellings tie code to one device:
    on a CPU-only build `torch.cuda.amp.autocast()` silently stays fp32, so the
    "mixed precision" run is not mixed at all.

    ## Example
    ```python
    scaler = torch.cuda.amp.GradScaler()
    with torch.cuda.amp.autocast(dtype=torch.float16):
        loss = model(x)
    ```

    ## Use instead
    ```python
    scaler = torch.amp.GradScaler("cuda")
    with torch.amp.autocast("cuda", dtype=torch.float16):
        loss = model(x)
    ```

    ## Fix safety
    Safe: the new calls take the device explicitly and are otherwise the same
    (positional arguments of `autocast` become keywords, since the new signature puts
    `device_type` first). `import torch` is added when the file has no `torch` name.
    References that are not calls (`amp_cls = torch.cuda.amp.autocast`) are reported
    without a fix. Type hints are not reported (`self.scaler: torch.cuda.amp.GradScaler`,
    `def f(s: torch.cuda.amp.GradScaler)`): a hint constructs nothing, and only
    constructing or calling the old API warns (`python -W error::FutureWarning` on
    Python 3.11, torch 2.13: looking the class up is silent, `GradScaler()` raises; a
    bare annotation in a function body is never evaluated at all). Measured on
    bench/dev2: the one such finding (Infinity `infinity/utils/amp_opt.py:144`) was
    judged false. Nor are type tests (`isinstance(self.grad_scaler, GradScaler)`): the
    same silent lookup; UPT's two (bench/dev41, `src/trainers/base/sgd_trainer.py`) were
    judged false in bench/dev_findings, and the `GradScaler(...)` that builds the scaler
    is still reported.

    ## References
    - torch 2.4+ emits `FutureWarning: torch.cuda.amp.autocast(args...) is deprecated`
      (`torch/cuda/amp/autocast_mode.py`); `fixtures/rules/CL507/` holds the shapes
    - https://pytorch.org/docs/stable/amp.html
    """

    needs = ()
    code = "CL507"
    name = "deprecated-amp"
    summary = "Deprecated `torch.cuda.amp` / `torch.cpu.amp` API"
    fix_safety = "safe"
    codemod = "codemods.modern_amp:ModernAmp"
    # a deprecated name spells its last part in the file (`torch.cuda.amp.autocast`,
    # `from torch.cuda.amp import GradScaler as S`); "amp" is checked in check()
    requires = (b"autocast", b"GradScaler", b"custom_fwd", b"custom_bwd")

    valid = [
        Case("import torch\nwith torch.amp.autocast('cuda', dtype=torch.float16):\n    pass\n"),
        Case("import torch\nscaler = torch.amp.GradScaler('cuda')\n"),
        Case("import torch\nwith torch.autocast('cuda'):\n    pass\n"),
        Case(
            "import torch\ntry:\n    scaler = torch.amp.GradScaler('cuda', enabled=True)\n"
            "except (AttributeError, TypeError):\n    scaler = torch.cuda.amp.GradScaler(enabled=True)\n",
            note="old-torch fallback after the new API failed",
        ),
        Case(
            "import torch\ntry:\n    from torch.cuda.amp import GradScaler\nexcept ImportError:\n"
            "    class GradScaler:\n        pass\n"
            "def train(GradScaler):\n    return GradScaler(enabled=True)\n",
            note="a parameter of the same name is whatever the caller passes",
        ),
        Case(
            "import torch\ndef ctx():\n    try:\n        return torch.amp.autocast(device_type='cuda')\n"
            "    except Exception:\n        from torch.cuda.amp import autocast\n        return autocast()\n",
        ),
        Case(
            """\
            import torch
            from typing import Optional
            class AmpOptimizer:
                def __init__(self, scaler: Optional[torch.cuda.amp.GradScaler] = None):
                    self.scaler = scaler
                def step(self, loss) -> "torch.cuda.amp.GradScaler":
                    if self.scaler is not None:
                        self.scaler: torch.cuda.amp.GradScaler
                        self.scaler.scale(loss).backward()
                    return self.scaler
            """,
            note="type hints construct nothing (Infinity infinity/utils/amp_opt.py: a bare "
                 "`self.scaler: torch.cuda.amp.GradScaler` in a method, never evaluated)",
        ),
        Case(
            "from torch.cuda.amp import GradScaler\ndef step(scaler, loss):\n"
            "    if isinstance(scaler, GradScaler) or issubclass(type(scaler), (GradScaler, int)):\n"
            "        scaler.scale(loss).backward()\n",
            note="a type test looks the class up and constructs nothing (UPT, bench/dev41)",
        ),
        Case(
            "import torch\nif hasattr(torch.amp, 'GradScaler'):\n    scaler = torch.amp.GradScaler('cuda')\n"
            "else:\n    scaler = torch.cuda.amp.GradScaler()\n",
        ),
        Case(
            "import torch\nfrom packaging import version\n"
            "if version.parse(torch.__version__) < version.parse('2.3'):\n    ac = torch.cuda.amp.autocast\n"
            "else:\n    ac = torch.amp.autocast\n",
        ),
        Case(
            "import operator\nimport torch\nfrom .utils import compare_version\n"
            "def amp_fwd():\n    if compare_version('torch', operator.ge, '2.4.0'):\n"
            "        return torch.amp.custom_fwd\n    return torch.cuda.amp.custom_fwd\n",
            note="a project's version helper told the package (VILA, bench/fresh_reads batch 22)",
        ),
        Case(
            "import torch\nfrom pkg.checks import check_version\nTORCH_1_13 = check_version(torch.__version__, '1.13.0')\n"
            "def autocast(enabled, device='cuda'):\n    if TORCH_1_13:\n        return torch.amp.autocast(device, enabled=enabled)\n"
            "    else:\n        return torch.cuda.amp.autocast(enabled)\n",
            files={"pkg/__init__.py": "", "pkg/checks.py": "def check_version(current, required):\n    return current >= required\n"},
            path="pkg/torch_utils.py",
            note="a flag bound to a version helper given the running version (ultralytics' TORCH_1_13)",
        ),
        Case(
            "import torch\nfrom pkg.torch_utils import TORCH_2_4\nclass Trainer:\n    def setup(self, amp):\n"
            "        if TORCH_2_4:\n            self.scaler = torch.amp.GradScaler('cuda', enabled=amp)\n"
            "        else:\n            self.scaler = torch.cuda.amp.GradScaler(enabled=amp)\n",
            files={"pkg/__init__.py": "", "pkg/torch_utils.py": "import torch\nfrom pkg.checks import check_version\n"
                   "TORCH_2_4 = check_version(torch.__version__, '>=2.4.0')\n",
                   "pkg/checks.py": "def check_version(current, required):\n    return True\n"},
            path="pkg/trainer.py",
            note="the flag imported from the project module that binds it (ultralytics' trainer, yoloe in bench/fresh_reads batch 35)",
        ),
    ]
    invalid = [
        Case(
            "import torch\nwith torch.cuda.amp.autocast():\n    y = model(x)\n",
            fixed="import torch\nwith torch.amp.autocast(\"cuda\"):\n    y = model(x)\n",
            at=[(2, 6)],
        ),
        Case(
            "import torch as T\nwith T.cuda.amp.autocast(True, T.bfloat16):\n    pass\n",
            fixed="import torch as T\nwith T.amp.autocast(\"cuda\", enabled=True, dtype=T.bfloat16):\n    pass\n",
            at=[(2, 6)],
        ),
        Case(
            "from torch.cuda.amp import GradScaler, autocast\nscaler = GradScaler(init_scale=1024)\nwith autocast(dtype=dt):\n    pass\n",
            fixed="import torch\n\nscaler = torch.amp.GradScaler(\"cuda\", init_scale=1024)\nwith torch.amp.autocast(\"cuda\", dtype=dt):\n    pass\n",
            at=[(2, 10), (3, 6)],
        ),
        Case(
            "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    @torch.cuda.amp.custom_fwd\n    def forward(ctx, x):\n        return x\n",
            fixed="import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    @torch.amp.custom_fwd(device_type=\"cuda\")\n    def forward(ctx, x):\n        return x\n",
            at=[(4, 6)],
        ),
        Case(
            "import torch\ndef step(x):\n    return x\nstep16 = torch.cuda.amp.autocast()(step)\n",
            fixed="import torch\ndef step(x):\n    return x\nstep16 = torch.amp.autocast(\"cuda\")(step)\n",
            at=[(4, 10)], note="the context manager used as a decorator: only the inner call is the old API",
        ),
        Case(
            "import torch\nfrom torch.cuda.amp.autocast_mode import autocast\nwith autocast(dtype=torch.float16):\n    pass\n",
            fixed="import torch\nwith torch.amp.autocast(\"cuda\", dtype=torch.float16):\n    pass\n",
            at=[(3, 6)], note="imported from the module that defines it: the same class, and the import the fix drops",
        ),
        Case("import torch\nwith torch.cpu.amp.autocast():\n    pass\n", fixed="import torch\nwith torch.amp.autocast(\"cpu\"):\n    pass\n", at=[(2, 6)]),
        Case(
            "import torch\ntry:\n    from torch.cuda.amp import GradScaler\nexcept:\n"
            "    # dummy GradScaler for PyTorch < 1.6\n    class GradScaler:\n        def __init__(self):\n            pass\n"
            "def train(args):\n    return GradScaler(enabled=args.mixed_precision)\n",
            at=[(10, 12)],
            note="the try's import is what the name holds on every torch that has it; the stand-in is "
                 "for an older one (RAFT's train.py, copied by RAFT-Stereo, VideoFlow, monst3r: a miss "
                 "reported in bench/fresh_reads batch 54); no fix, which would leave the stand-in behind",
        ),
        Case("import torch\nctx = torch.cuda.amp.autocast\n", at=[(2, 7)],
             note="not a call: no fix; the name it binds is no second use (VideoFlow's `autocast = "
                  "torch.cuda.amp.autocast` was reported twice, one judged false in bench/fresh_reads batch 25)"),
        Case(
            "import torch\nclass Trainer:\n    def __init__(self):\n"
            "        self.scaler: torch.cuda.amp.GradScaler = torch.cuda.amp.GradScaler()\n",
            fixed="import torch\nclass Trainer:\n    def __init__(self):\n"
            "        self.scaler: torch.cuda.amp.GradScaler = torch.amp.GradScaler(\"cuda\")\n",
            at=[(4, 50)], note="the annotated assignment's value constructs: reported, its annotation not",
        ),
        Case(
            "import torch\ntry:\n    scaler = torch.cuda.amp.GradScaler()\nexcept AttributeError:\n    scaler = None\n",
            fixed="import torch\ntry:\n    scaler = torch.amp.GradScaler(\"cuda\")\nexcept AttributeError:\n    scaler = None\n",
            at=[(3, 14)], note="the old API in the try body is the one tried first",
        ),
        Case(
            "import torch\ntry:\n    import apex\nexcept ImportError:\n    apex = None\n"
            "with torch.cuda.amp.autocast():\n    pass\n",
            fixed="import torch\ntry:\n    import apex\nexcept ImportError:\n    apex = None\n"
            "with torch.amp.autocast(\"cuda\"):\n    pass\n",
            at=[(6, 6)], note="a try elsewhere changes nothing",
        ),
        Case(
            "import torch\nfrom pkg.checks import check_version\nTORCH_1_6 = check_version(torch.__version__, '1.6.0')\n"
            "def run(model, x):\n    if TORCH_1_6:\n        with torch.cuda.amp.autocast():\n            return model(x)\n"
            "    return model(x)\n",
            fixed="import torch\nfrom pkg.checks import check_version\nTORCH_1_6 = check_version(torch.__version__, '1.6.0')\n"
            "def run(model, x):\n    if TORCH_1_6:\n        with torch.amp.autocast(\"cuda\"):\n            return model(x)\n"
            "    return model(x)\n",
            files={"pkg/__init__.py": "", "pkg/checks.py": "def check_version(current, required):\n    return current >= required\n"},
            path="pkg/amp.py", at=[(6, 14)],
            note="the old API on the branch every newer torch takes (mmcv's fp16 helpers)",
        ),
    ]

    def check(self, facts):
        if AMP_WORD.search(facts.source.data) is None:
            return  # every deprecated name is under `torch.cuda.amp` / `torch.cpu.amp`: the file spells `amp`
        name_hits: dict[str, bool] = {}  # a bare name resolves the same wherever it is
        tried = _tried_imports(facts)  # {name: deprecated API} a module-level try imports
        lookups = None  # ids of the nodes that only look a class up, found on the first hit
        for node in facts.nodes(ast.Attribute, ast.Name):
            # `x.attr` resolves to "<x>.attr": only these last names can be a deprecated API
            if isinstance(node, ast.Attribute):
                if node.attr not in LAST_NAMES:
                    continue
            else:
                if node.ctx.__class__ is not ast.Load:
                    continue  # `autocast = torch.cuda.amp.autocast`: the name bound is no use; its value is reported
                hit = name_hits.get(node.id)
                if hit is None:
                    hit = name_hits[node.id] = facts.resolve(node) in REPLACEMENTS or node.id in tried
                if not hit:
                    continue
            parent = facts.parent(node)
            if isinstance(parent, ast.Attribute) and parent.value is node:
                continue
            if isinstance(parent, (ast.ImportFrom, ast.alias)):
                continue
            dotted = facts.resolve(node)
            stand_in = dotted not in REPLACEMENTS and isinstance(node, ast.Name) and node.id in tried
            if stand_in:
                dotted = tried[node.id]
            if dotted not in REPLACEMENTS:
                continue
            if lookups is None:
                lookups = lookup_only_nodes(facts)
            if id(node) in lookups:
                continue  # a type hint or a type test constructs and calls nothing: no warning, no device tie
            if in_compat_fallback(facts, node) or old_torch_branch(facts, node) is not None:
                continue  # the fallback for a torch without the new API: the "fix" would repeat what failed
            new, device, shape = REPLACEMENTS[dotted]
            old_text = facts.text(node)
            torch_name = facts.torch_alias()
            message = (
                f"`{old_text}` is deprecated: use `torch.{new}(\"{device}\", ...)`"
            )
            base = {"torch": torch_name or "torch", "add_import": torch_name is None, "new": new, "device": device}
            if stand_in:
                # the name is also the old torch's stand-in: a rewrite would leave the
                # import and the fallback class for the user to remove
                yield self.finding(facts, node, message)
                continue
            if isinstance(node, ast.Name):  # `from torch.cuda.amp import autocast`: drop it once unused
                base["unimport"] = _written_import(facts, node.id)
            is_call = isinstance(parent, ast.Call) and parent.func is node
            is_decorator = isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and node in parent.decorator_list
            if shape == "decorator" and (is_call or is_decorator):
                yield self.finding(facts, node, message, fix=f"use `torch.{new}(device_type=\"{device}\")`", data={**base, "form": "decorator"})
            elif is_call and shape != "decorator":
                if any(isinstance(a, ast.Starred) for a in parent.args) and shape is not None:
                    yield self.finding(facts, node, message)
                    continue
                if shape is not None and len(parent.args) > len(shape):
                    yield self.finding(facts, node, message)
                    continue
                yield self.finding(facts, node, message, fix=f"use `torch.{new}(\"{device}\", ...)`", data={**base, "form": "call", "positional": list(shape) if shape else None})
            else:
                yield self.finding(facts, node, message)


def _tried_imports(facts) -> dict:
    """{name: the deprecated API} a module-level `try` imports as `name` where each of its
    handlers binds a stand-in for a torch without it (RAFT's `try: from torch.cuda.amp
    import GradScaler` / `except: class GradScaler: ...`, "dummy GradScaler for PyTorch <
    1.6", copied by RAFT-Stereo, VideoFlow and monst3r): the import is what the name holds
    on every torch that has it, so each `GradScaler(...)` warns. A name anything else in the
    file binds is left out."""
    found: dict = {}
    for stmt in facts.tree.body:
        if stmt.__class__ is not ast.Try or not stmt.handlers:
            continue
        for s in stmt.body:
            if s.__class__ is not ast.ImportFrom:
                continue
            for alias in s.names:
                name = alias.asname or alias.name
                dotted = public_spelling(f"{facts.names.absolute_from(s)}.{alias.name}")
                if dotted in REPLACEMENTS and all(any(name in _bound_by(h) for h in handler.body) for handler in stmt.handlers):
                    found[name] = (dotted, stmt)
    out = {}
    for name, (dotted, stmt) in found.items():
        inside = {id(n) for n in ast.walk(stmt)}
        if not any(id(node) not in inside and name in _bound_by(node)
                   for node in facts.nodes(ast.Name, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.alias)):
            out[name] = dotted
    return out


def _bound_by(node) -> tuple:
    """The names `node` binds: a stored name, a parameter, a def or class, an import's alias."""
    if isinstance(node, ast.Name):
        return (node.id,) if node.ctx.__class__ is not ast.Load else ()
    if isinstance(node, ast.arg):
        return (node.arg,)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (node.name,)
    if isinstance(node, ast.alias):
        return ((node.asname or node.name).split(".")[0],)
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return tuple(b for alias in node.names for b in _bound_by(alias))
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return tuple(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return ()


def _written_import(facts, name: str):
    """[module, name] of the `from module import name` that binds `name`, as written
    (`from torch.cuda.amp.autocast_mode import autocast`, which resolves to its public
    spelling `torch.cuda.amp.autocast`), for the fix to drop once unused; None when no
    single from-import binds it."""
    found = None
    for stmt in facts.nodes(ast.ImportFrom):
        for alias in stmt.names:
            if (alias.asname or alias.name) == name:
                written = [facts.names.absolute_from(stmt), alias.name]
                if found is not None and found != written:
                    return None
                found = written
    return found

