from __future__ import annotations

import ast
from textwrap import dedent
from typing import Optional

from ..analysis.feature_tests import never_runs_compiled
from ..analysis.compiled_values import chain_text, literal, site_call, target_history
from ..analysis.region_queries import class_attrs, number_value, region_nodes, region_sets_config, runs_inductor
from ..analysis.facts import RegionsFact
from ..analysis.region_queries import ClassAttrsFact
from ..analysis.compiled_values import CompiledValuesFact
from .base import Case, Rule

RNG_FUNCS = frozenset(
    {
        "rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm", "bernoulli",
        "multinomial", "normal", "poisson", "rrelu", "binomial",
    }
)
RNG_METHODS = frozenset(
    {
        "normal_", "uniform_", "bernoulli_", "bernoulli", "random_", "exponential_", "geometric_",
        "log_normal_", "cauchy_", "multinomial",
    }
)
DROPOUT_FUNCS = frozenset({"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"})
DROPOUT_MODULES = frozenset({"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"})
OTHER_RNG_FUNCS = frozenset({"gumbel_softmax", "rrelu"})  # torch.nn.functional


class RngInCompiledRegion(Rule):
    """
    ## What it does
    Finds random number generation in a `torch.compile`d region: `torch.rand`,
    `randn`, `randint`, `rand_like`, `randn_like`, `randperm`, `bernoulli`,
    `multinomial`, `normal`, in-place samplers (`x.normal_()`, `x.uniform_()`,
    `x.bernoulli_()`, ...), `F.gumbel_softmax`, attention dropout
    (`F.scaled_dot_product_attention(..., dropout_p=p)` with `p` not 0; the
    `p if self.training else 0.0` spelling counts as train mode), and dropout that is active:
    `F.dropout(x, p)` (its `training` defaults to True), `F.dropout(x, p,
    training=self.training)` and `nn.Dropout` modules called in `forward`, unless the
    compiled module is known to be in eval mode.

    Dropout that depends on `self.training` is quiet when the compile site shows the
    module in eval mode (`torch.compile(model.eval())`, or `model.eval()` before the
    compile) and the site's file never calls `.train()` on it: in eval mode dropout
    draws no random numbers. Also
    quiet: `p=0`, `training=False`, an explicit `generator=` (Dynamo does not trace
    through a user generator: measured diff 0 on torch 2.13), and
    `torch._inductor.config.fallback_random = True` set in this file, in the file of
    every compile site, or in the site's `options`. Code that runs only on a torch
    without `torch.compile` is quiet too: the `else` (or the code after an early
    `return`) of a feature test that is true on every torch that has `torch.compile`
    (`hasattr(F, "scaled_dot_product_attention")`, `torch.__version__ >= "2.0"`), and
    the `except ImportError:` of a `try` that only imports such names (a fallback
    function defined there exists only on that older torch).

    ## Why is this bad?
    Inductor generates random numbers with its own Philox-based kernels, not with
    eager's generator: with the same seed, compiled and eager results differ on 100%
    of elements (max 2.13 in the measured case). This is intended (pytorch#118735),
    but it breaks seed-based reproducibility, eager-vs-compiled tests and debugging
    by comparing against eager.

    ## Example
    ```python
    @torch.compile
    def add_grain(img, strength):
        return img + strength * torch.randn_like(img)
    ```

    ## Use instead
    Draw the noise outside the compiled function and pass it in, or make compiled
    randomness match eager:
    ```python
    import torch._inductor.config
    torch._inductor.config.fallback_random = True
    ```

    ## Fix safety
    No fix: whether reproducibility or the speed of Inductor's RNG matters is the
    author's decision.

    ## References
    - measured on torch 2.13 CPU: same seed, 100% of elements differ compiled vs eager
      (max 2.13); with `fallback_random = True`: 0. `compile-lint verify` on
      `fixtures/verify/` reproduces it (`tests/test_verify_hazards.py`)
    - pytorch#118735 (intended)
    """

    code = "CL303"
    name = "rng-in-compiled-region"
    summary = "Random numbers in a compiled region differ from eager with the same seed"
    requires = ()
    needs = (RegionsFact, ClassAttrsFact, CompiledValuesFact,)  # fires only inside compiled regions

    valid = [
        Case(
            """
            import torch
            import torch.nn as nn

            class DropPath(nn.Module):
                def forward(self, x):
                    if not self.training:
                        return x
                    keep = torch.rand(x.shape[0], 1, 1, 1, device=x.device) >= 0.1
                    return x * keep / 0.9

            net = torch.compile(DropPath().eval())
            """,
            note="train-only code (early return when not training) in an eval-mode model",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Block(nn.Module):
                def __init__(self, dim, proj_drop=0.0):
                    super().__init__()
                    self.proj = nn.Linear(dim, dim)
                    self.drop = nn.Dropout(proj_drop)

                def forward(self, x):
                    return self.drop(self.proj(x))

            model = torch.compile(Block(64))
            """,
            note="dropout rate defaults to 0: the layer draws nothing",
        ),
        Case(
            """
            import torch
            torch._inductor.config.fallback_random = True

            @torch.compile
            def add_grain(img, strength):
                return img + strength * torch.randn_like(img)
            """,
            note="fallback_random",
        ),
        Case(
            """
            import torch

            def add_grain(img, strength):
                return img + strength * torch.randn_like(img)
            """,
            note="not compiled",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 3, 3)
                    self.drop = nn.Dropout(0.1)

                def forward(self, x):
                    return self.drop(F.dropout(self.conv(x), 0.2, training=self.training))

            model = Block().cuda().eval()
            model = torch.compile(model, mode="reduce-overhead")
            """,
            note="eval mode at the compile site: dropout draws nothing",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            @torch.compile
            def f(x, noise):
                return F.dropout(x, 0.0) + noise + F.dropout(x, 0.5, training=False)
            """,
            note="p=0 and training=False",
        ),
        Case(
            """
            import torch

            @torch.compile
            def sample(latents, g: torch.Generator):
                return latents + torch.randn(latents.shape, generator=g)
            """,
            note="an explicit generator: Dynamo falls back to eager for it",
        ),
        Case(
            """
            import torch

            def step(x):
                return x * torch.rand_like(x)

            fast = torch.compile(step, options={"fallback_random": True})
            """,
            note="fallback_random in the compile options",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            class Attention(torch.nn.Module):
                def forward(self, q, k, v):
                    if hasattr(F, "scaled_dot_product_attention"):
                        return F.scaled_dot_product_attention(q, k, v)
                    attn = (q @ k.transpose(-2, -1)).softmax(-1)
                    attn = F.dropout(attn, 0.1)
                    return attn @ v

            attn = torch.compile(Attention())
            """,
            note="the fallback runs only on a torch without SDPA, which has no torch.compile either",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            class Attention(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.attn_dropout = nn.Dropout(0.1)
                    self.flash = hasattr(torch.nn.functional, "scaled_dot_product_attention")

                def forward(self, q, k, v):
                    if self.flash:
                        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    else:
                        att = self.attn_dropout((q @ k.transpose(-2, -1)).softmax(-1))
                        return att @ v

            attn = torch.compile(Attention())
            """,
            note="the feature test held in an attribute (nanoGPT's self.flash)",
        ),
        Case(
            """
            import torch
            from packaging import version

            @torch.compile
            def f(x):
                if version.parse(torch.__version__) < version.parse("2.0"):
                    return x * torch.rand_like(x)
                return x
            """,
            note="branch for torch < 2.0",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            try:
                from torch.nn.functional import scaled_dot_product_attention as attend
            except ImportError:
                def attend(q, k, v, dropout_p=0.0):
                    return F.dropout((q @ k.transpose(-2, -1)).softmax(-1), p=dropout_p) @ v

            @torch.compile
            def block(q, k, v):
                return attend(q, k, v, dropout_p=0.1)
            """,
            note="a fallback defined only where importing SDPA fails: never on a torch with torch.compile (VAR)",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            class Attention(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.attn_p = 0.0

                def forward(self, q, k, v):
                    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)
                    b = F.scaled_dot_product_attention(q, k, v, None, self.attn_p)
                    return a + b

            attn = torch.compile(Attention())
            """,
            note="SDPA without dropout",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            class Attention(torch.nn.Module):
                def forward(self, q, k, v):
                    p = 0.1 if self.training else 0.0
                    return F.scaled_dot_product_attention(q, k, v, dropout_p=self.p if self.training else 0.0)

            attn = torch.compile(Attention().eval())
            """,
            note="train-mode SDPA dropout in an eval-mode model",
        ),
    ]
    invalid = [
        Case(
            """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            class Head(nn.Module):
                def __init__(self, p=0.1):
                    super().__init__()
                    self.p = p
                    self.body = nn.Sequential(nn.Conv2d(8, 8, 3), nn.Dropout2d(p))

                def forward(self, x):
                    x = F.dropout(self.body(x), self.p, self.training)
                    return x + 0.01 * torch.rand_like(x)

            head = torch.compile(Head().train())
            """,
            at=[(13, 13), (13, 23), (14, 27)],
            note="a Sequential holding Dropout2d, positional training flag, rand_like",
        ),
        Case(
            """
            import torch

            @torch.compile
            def add_grain(img, strength):
                return img + strength * torch.randn_like(img)
            """,
            at=[(6, 29)],
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 3, 3)
                    self.drop = nn.Dropout(0.1)

                def forward(self, x):
                    x = F.dropout(self.conv(x), 0.2, training=self.training)
                    return self.drop(x)

            model = torch.compile(Block())
            """,
            at=[(13, 13), (14, 16)],
            note="train-mode dropout, functional and module",
        ),
        Case(
            """
            import torch.nn.functional as F
            import torch

            @torch.compile
            def head(x):
                return F.dropout(x, 0.1)
            """,
            note="F.dropout defaults to training=True",
            at=[(7, 12)],
        ),
        Case(
            """
            import torch as T

            def ddpm_step(x, t):
                noise = T.empty_like(x).normal_()
                return x + t * noise

            sampler = T.compile(ddpm_step)
            """,
            at=[(5, 13)],
        ),
        Case(
            files={
                "train.py": dedent("""
                    import torch
                    from blocks import Denoiser

                    net = torch.compile(Denoiser())
                """),
            },
            path="blocks.py",
            code="""
            import torch
            import torch.nn as nn

            class Denoiser(nn.Module):
                def forward(self, x):
                    mask = torch.bernoulli(torch.full_like(x, 0.5))
                    return x * mask
            """,
            at=[(7, 16)],
            note="cross-file",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            class Attention(torch.nn.Module):
                def __init__(self, attn_drop=0.1):
                    super().__init__()
                    self.attn_drop = attn_drop

                def forward(self, q, k, v):
                    return F.scaled_dot_product_attention(
                        q, k, v, dropout_p=self.attn_drop if self.training else 0.0
                    )

            attn = torch.compile(Attention())
            """,
            at=[(11, 16)], note="SDPA attention dropout in train mode",
        ),
        Case(
            """
            import torch
            from torch.nn.functional import scaled_dot_product_attention as sdpa

            @torch.compile
            def attend(q, k, v, p: float):
                return sdpa(q, k, v, None, p)
            """,
            at=[(7, 12)], note="dropout_p positional, from a parameter",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            @torch.compile
            def f(x):
                if hasattr(torch, "compile"):
                    return F.dropout(x, 0.1)
                return x
            """,
            at=[(8, 16)], note="the branch that runs on every torch with torch.compile",
        ),
    ]

    def check(self, facts):
        eval_cache: dict[int, bool] = {}
        fallback: dict[int, bool] = {}
        for node, region in region_nodes(facts, (ast.Call,)):
            what = self._rng(facts, node)
            if what is None:
                continue
            if never_runs_compiled(facts, node):
                continue  # a fallback for a torch older than torch.compile itself
            label, train_mode = what
            train_mode = train_mode or self._train_only(facts, node)
            key = id(region)
            if key not in fallback:
                fallback[key] = region_sets_config(facts, region, "fallback_random", True) or not runs_inductor(facts, region)
            if fallback[key]:
                continue
            if train_mode:
                if key not in eval_cache:
                    eval_cache[key] = self._eval_at_sites(facts, region)
                if eval_cache[key]:
                    continue
            mode = " in train mode" if train_mode else ""
            yield self.finding(
                facts, node,
                f"{label}{mode} draws random numbers in compiled code: they differ from eager with the same seed",
                region=region,
            )

    def _rng(self, facts, call: ast.Call) -> Optional[tuple[str, bool]]:
        """(what, depends-on-train-mode) when `call` draws random numbers."""
        dotted = facts.resolve(call.func) or ""
        if any(k.arg == "generator" for k in call.keywords):
            return None
        if dotted.startswith("torch.nn.functional."):
            name = dotted.rsplit(".", 1)[-1]
            if name in DROPOUT_FUNCS:
                return self._dropout(facts, call, f"`{facts.text(call.func)}(...)`", 1, 2)
            if name == "scaled_dot_product_attention":
                return self._attention_dropout(facts, call)
            if name in OTHER_RNG_FUNCS:
                return f"`{facts.text(call.func)}(...)`", name == "rrelu"
            return None
        if dotted.startswith("torch.") and dotted.count(".") == 1:
            name = dotted.rsplit(".", 1)[-1]
            if name in RNG_FUNCS:
                return f"`{facts.text(call.func)}(...)`", False
            if name in DROPOUT_FUNCS:
                return self._dropout(facts, call, f"`{facts.text(call.func)}(...)`", 1, 2, keyword="train")
            return None
        if isinstance(call.func, ast.Attribute) and not dotted:
            attr = call.func.attr
            if attr in RNG_METHODS:
                return f"`.{attr}()`", False
            base = call.func.value
            if isinstance(base, ast.Name) and base.id == "self":
                kind = self._self_module(facts, call, attr)
                if kind is not None:
                    return kind
        return None

    @staticmethod
    def _dropout(facts, call, label, p_index, training_index, keyword="training"):
        p = call.args[p_index] if len(call.args) > p_index else next((k.value for k in call.keywords if k.arg == "p"), None)
        if p is not None and number_value(p) == 0:
            return None
        training = call.args[training_index] if len(call.args) > training_index else next((k.value for k in call.keywords if k.arg == keyword), None)
        if training is None:
            return label, False  # defaults to True: always random
        value = literal(training)
        if value is False:
            return None
        if value is True:
            return label, False
        return label, True  # self.training: train mode only

    @staticmethod
    def _attention_dropout(facts, call) -> Optional[tuple[str, bool]]:
        """`F.scaled_dot_product_attention(q, k, v, mask, dropout_p)`: dropout on the
        attention weights whenever `dropout_p` is not 0 (there is no `training` flag:
        `dropout_p=self.p if self.training else 0.0` is the train-mode spelling)."""
        p = call.args[4] if len(call.args) > 4 else next((k.value for k in call.keywords if k.arg == "dropout_p"), None)
        if p is None or number_value(p) == 0:
            return None
        label = f"`{facts.text(call.func)}(..., dropout_p=...)`"
        if isinstance(p, ast.IfExp):
            branches = (p.body, p.orelse)
            if all(number_value(b) == 0 for b in branches):
                return None
            if "training" in facts.text(p.test) and any(number_value(b) == 0 for b in branches):
                return label, True
            return label, False
        if isinstance(p, ast.Attribute) and isinstance(p.value, ast.Name) and p.value.id == "self":
            cls = next((a for a in facts.ancestors(call) if isinstance(a, ast.ClassDef)), None)
            values = [
                sub.value for sub in (ast.walk(cls) if cls is not None else ())
                if isinstance(sub, ast.Assign) and any(chain_text(t) == f"self.{p.attr}" for t in sub.targets)
            ]
            if values and all(number_value(v) == 0 for v in values):
                return None  # self.attn_p = 0.0 everywhere it is set
            return label, True
        return label, False

    @staticmethod
    def _self_module(facts, call, attr) -> Optional[tuple[str, bool]]:
        """`self.drop(x)` where `self.drop = nn.Dropout(p)` (or a Sequential holding one)."""
        for node, value in class_attrs(facts, call).get(attr, ()):
            for sub in ast.walk(value):
                if isinstance(sub, ast.Call):
                    dotted = facts.resolve(sub.func) or ""
                    if dotted.startswith("torch.nn.") and dotted.rsplit(".", 1)[-1] in DROPOUT_MODULES:
                        p = sub.args[0] if sub.args else next((k.value for k in sub.keywords if k.arg == "p"), None)
                        if p is not None and (number_value(p) == 0 or RngInCompiledRegion._zero_default(facts, node, p)):
                            continue
                        if sub is node.value:
                            return f"`self.{attr}` (an `nn.{dotted.rsplit('.', 1)[-1]}`)", True
                        return f"`self.{attr}` (holding `{facts.text(sub)}`)", True
        return None

    @staticmethod
    def _train_only(facts, node) -> bool:
        """Code that runs only in train mode: under `if self.training:`, or after an
        early `if not self.training: return ...` (timm's DropPath)."""
        def is_training(test, negated):
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                return is_training(test.operand, not negated)
            if isinstance(test, ast.BoolOp):
                if isinstance(test.op, ast.And) and not negated:
                    return any(is_training(v, negated) for v in test.values)
                if isinstance(test.op, ast.Or) and negated:
                    return any(is_training(v, negated) for v in test.values)
                return False
            return chain_text(test) == "self.training" and not negated

        child = node
        for anc in facts.ancestors(node):
            if isinstance(anc, ast.If):
                in_body = any(child is n for n in anc.body)
                if is_training(anc.test, not in_body):
                    return True
            if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                body = anc.body if isinstance(anc.body, list) else []
                stmt = facts.statement_of(node)
                for earlier in body:
                    if earlier.lineno >= stmt.lineno:
                        break
                    if isinstance(earlier, ast.If) and any(isinstance(b, ast.Return) for b in earlier.body):
                        if is_training(earlier.test, True):
                            return True
                return False
            child = anc
        return False

    @staticmethod
    def _zero_default(facts, stmt, p) -> bool:
        """`nn.Dropout(drop)` where `drop` is a parameter of the method defaulting to 0:
        by default the layer draws nothing (timm-style `proj_drop=0.`)."""
        if not isinstance(p, ast.Name):
            return False
        func = facts.enclosing_function(stmt)
        if func is None or isinstance(func, ast.Lambda):
            return False
        args = func.args
        positional = args.posonlyargs + args.args
        defaults = dict(zip([a.arg for a in positional][len(positional) - len(args.defaults):], args.defaults))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
        default = defaults.get(p.id)
        return default is not None and number_value(default) == 0

    @staticmethod
    def _eval_at_sites(facts, region) -> bool:
        """Every compile site compiles a module shown in eval mode, never set back to train."""
        if not region.sites:
            return False
        for site in region.sites:
            found = site_call(facts, site)
            if found is None:
                return False
            other, cc = found
            history = target_history(other, cc.target, cc.node)
            state = None
            for call in history:
                attr = call.func.attr if isinstance(call.func, ast.Attribute) else None
                if attr == "eval" or (attr == "train" and call.args and literal(call.args[0]) is False):
                    state = "eval"
                    break
                if attr == "train":
                    state = "train"
                    break
            if state != "eval":
                return False
            text = chain_text(cc.target) if cc.target is not None else None
            names = {text} if text else set()
            for node in other.nodes(ast.Assign):
                if node.value is cc.node or (isinstance(node.value, ast.Call) and node.value is cc.node):
                    names |= {chain_text(t) for t in node.targets if chain_text(t)}
            for node in other.nodes(ast.Call):
                f = node.func
                if isinstance(f, ast.Attribute) and f.attr == "train" and chain_text(f.value) in names:
                    if not (node.args and literal(node.args[0]) is False):
                        return False
        return True
