from __future__ import annotations

import ast
from textwrap import dedent

from ..analysis.compiled.values import CompiledValuesFact
from ..analysis.semantic.facts import RegionsFact
from ..analysis.branches.feature_tests import never_runs_compiled
from ..analysis.branches.passed_flags import PassedFlagsFact, closed_by_compiled_callers
from ..analysis.project.calls import ProjectFilesFact
from ..analysis.reach.queries import ClassAttrsFact, eager_only, region_nodes
from ..analysis.tensors.rng import (
    draws_from_eager_generator,
    draws_like_eager,
    eval_at_every_site,
    trains_at_some_site,
    random_draw,
    train_mode_only,
)
from .base import Case, Rule


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

    A probability that is always 0 draws nothing and is quiet: `p=0`, `self.p` set only
    to 0 in the class, `self.drop.p` of an `nn.Dropout(0.0)` (a probability that is a
    constructor parameter defaulting to 0 is reported: configurations set it; it is 0
    when every construction of the class in the project passes 0 or leaves a default of
    0, directly or through the `__init__` of a class that builds it and forwards its own
    parameter, `Block(attn_drop=0.0)` -> `Attention(attn_drop=attn_drop)` ->
    `nn.Dropout(attn_drop)`: olmoearth's SDPA finding in bench/dev45, judged false in
    `bench/dev_findings/`, and REPA-E's ResnetBlock dropout, both of the 476 development
    apps' CL303/CL508 findings that moved (442 -> 440, session 61); a class built from
    `**kwargs`, a registry or a configuration has constructions not read), a
    helper's parameter that defaults to 0 when the project calls the helper by name and
    no call passes a rate (`attention(q, k, v, dropout_p=0.0)`, a false finding on a
    public video app; its shape is a valid case), a helper's parameter that every call
    from compiled code leaves at a default of 0 or passes 0 for, directly or forwarded
    (`analysis/branches/passed_flags.py`; eager callers may pass a rate: the Foley pack's
    `attention(..., drop_rate=0)` in bench/dev34, whose `torch.dropout` finding was judged
    false in `bench/dev_findings/`, and its SDPA twin: on the 476 development apps these
    two went and nothing else moved, session 60), and
    `a if self.training else b` with both zero (a finding on timm `iformer.py` of corpus L judged false by
    `bench/judged/run.py`; its shape is a valid case). Dropout that depends on `self.training` is quiet when the compile site shows the
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
    function defined there exists only on that older torch). So is a draw Dynamo never
    traces: under `if not torch.compiler.is_compiling():` (or a project wrapper of it, a
    name bound to it, an operand of `and`/`or`), in the `if` of `torch.jit.is_tracing()`,
    or after an `if is_compiling(): ... return` (litgpt `generate/base.py`'s
    `torch.multinomial`, a false finding on bench/dev2; its shape is a valid case).

    **Train-mode draws are reported only where the project trains.** Dropout and the
    other draws that happen only in train mode (`self.training` tests, `nn.Dropout`,
    `F.dropout(..., training=self.training)`, SDPA's `dropout_p`) are reported only when
    the file of a compile site of the region trains: it calls `.backward()` or `.train()`
    (not `.train(False)`). A module compiled for inference, or declared compiled in the
    configuration with no compile call to read, keeps its dropout quiet; draws that happen
    in every mode (`torch.randn_like(x)` noise, `.normal_()`) are always
    reported. Only the region's compile sites count for both questions: a trace or an
    ONNX export that also reaches the code compiles nothing (doctr compiles LW-DETR and
    PARSeq in eval mode in its tests, which train other models, and exports them to ONNX
    from a helper: 10 train-mode findings, the 2 judged in `bench/dev_findings/` false,
    went on the 476 development apps held, 2026-12-06, and none came). A rate assigned to a
    local first (`dropout_p = self.dropout_p if self.training else 0.0`, then
    `dropout_p=dropout_p`: SAM 2's RoPE attention, timm's `DiffAttention`) is the same
    train-mode spelling: on frame A (dev34-dev50, 173 apps) SAM 2's two compiled-for-inference
    draws went (755 -> 753 findings; one was in the judged sample, false), and corpus M's
    two `DiffAttention` findings now say "in train mode". So is a draw Python evaluates
    only in train mode: after `self.training and` (`if self.training and torch.rand(1) <
    p:`), after `not self.training or`, or in the arm of `a if self.training else b` that
    train mode picks (index-tts' DiT, compiled for inference: its finding was judged false
    in `bench/fresh_reads/`, batch 5, and went; frame A's 753 findings and corpus M's
    report are unchanged).

    **Draws Inductor leaves to eager are quiet alone.** `torch.multinomial` (or
    `probs.multinomial(n)`) and `torch.randperm` are ATen fallbacks in Inductor on every
    device (torch 2.13 `torch/_inductor/lowering.py`: `make_fallback(aten.multinomial.default)`,
    `make_fallback(aten.randperm)`; neither has a decomposition): the compiled code calls
    eager's kernel on eager's generator. `scripts/measure/rng_fallback_ops.py` (CPU) shows
    both match eager with the same seed alone and in a compiled sampling loop, and stop
    matching once a draw Inductor generates itself (`torch.rand`) ran before them in
    compiled code, in the same graph or an earlier one. Such a draw is reported where it
    is, and `fallback_random = True` fixes both; the fallback draw is reported too when a
    reported generated draw shares its def (anywhere in it: a loop's later draw runs
    before its next round), with that draw's line. On development frame A (dev34-dev50) and the
    repositories of `bench/fresh_reads/` (session 64, `--select CL303` on the 107 apps whose
    code names either op) 4 findings went, each alone in its def: the `torch.multinomial`
    of discrete_flow_models, nari-labs/dia and x-transformers (judged false in
    `bench/dev_findings/` and `bench/fresh_reads/`) and lerobot's pi0_fast (latent);
    alphafold3-pytorch's `torch.randperm`, in a def with a generated draw, stays.

    **Branches the compiled callers close are quiet** (`analysis/branches/passed_flags.py`,
    shared with CL508): a draw under `if train:` (`if not test_mode:`, `if drop_ids is
    None:`, `if mode == "vanilla":`) of a helper every call of which from compiled code
    passes a constant that closes the branch, directly or forwarded from the caller's
    own parameter (openpi's augmentations: the compiled `sample_actions` passes
    `train=False` through `_preprocess_observation`, judged false in `bench/dev_findings/`).
    A def a site compiles itself stays reported (its callers are outside the compiled
    code), and so does one called with a value that is not a constant. On the 476
    development apps (session 59) this took 6 CL303 findings, all openpi's, and added
    none; `tests/test_passed_flags.py` holds the cases. The test may also read
    `self.<attr>` when the class's `__init__` alone sets it, from a parameter every
    construction of the class in the project leaves at (or passes) a constant; a store
    anywhere else, a subclass, a construction through `cls(...)`, the class handed on or
    named in a string keep it open (session 60: ACE-Step's `if use_dynamic_chunk:`
    `torch.randint` in its two copies, 4 CL303 findings, went on the 476 apps; none
    came). `self.training` is read the same way where every compile site only ever
    trains the module it compiles, or compiles it in eval mode (session 64, see CL508's
    page; no CL303 finding moved on frame A and `bench/fresh_reads/`).

    ## Why is this bad?
    Inductor generates random numbers with its own Philox-based kernels, not with
    eager's generator: with the same seed, compiled and eager results differ on 100%
    of elements (max 2.13 in the measured case). This is intended (pytorch#118735),
    but it breaks seed-based reproducibility, eager-vs-compiled tests and debugging
    by comparing against eager.

    Measured on the oracle bench (bench/oracle/, issue 20: 440 models of timm,
    transformers, diffusers, kornia and applications declared compiled, 428 run in eval
    mode, 12 in train mode; `python bench/oracle/score.py --results bench/.work/oracle/
    --code . --codes CL303`, before this default): 672 findings, 618 of them train-mode
    draws (dropout: `self.dropout(...)` 233, `nn.functional.dropout` 193, LayerDrop's
    `torch.rand([])` 49, ...). Of the 500 train-mode draws on lines the models executed,
    472 ran only in eval mode, where dropout draws nothing, and 28 in a train-mode entry;
    the 54 every-mode draws (12 executed) differ from eager in every mode. Every model
    has dropout, and in training Inductor's own RNG is intended: by default a user sees
    the every-mode draws, and dropout where the code visibly trains the compiled model.
    With this default (h-breaks d465512, same command): 99 findings, 25 on executed lines
    (the 12 every-mode draws; 17 train-mode draws in code a training file compiles:
    timm's `timm/task/*.py` 14, nanoGPT's `train.py` 3; 6 of them executed by a
    train-mode entry). On the development apps
    the judged true findings stay (LlamaGen, VAR and nanoGPT compile in their training
    scripts: 8, 2 and 3 findings, as before).

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
    needs = (RegionsFact, ClassAttrsFact, CompiledValuesFact, ProjectFilesFact, PassedFlagsFact)  # fires only inside compiled regions; callers of a helper

    valid = [
        Case(
            """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            class Attention(nn.Module):
                def __init__(self, dim, attn_drop=0.1):
                    super().__init__()
                    self.qkv = nn.Linear(dim, dim * 3)
                    self.attn_drop = nn.Dropout(attn_drop)

                def forward(self, x):
                    q, k, v = self.qkv(x).chunk(3, -1)
                    return F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p)

            class Block(nn.Module):
                def __init__(self, dim, attn_drop=0.0):
                    super().__init__()
                    self.attn = Attention(dim, attn_drop=attn_drop)

                def forward(self, x):
                    return x + self.attn(x)

            model = torch.compile(Block(8))
            model.train()
            """,
            note="olmoearth's Block -> Attention (bench/dev45, judged false): the one construction of "
                 "Block leaves attn_drop 0.0, which Block forwards to Attention, so the rate is 0",
        ),
        Case(
            """
            import torch

            def augment(x, train=True):
                if train:
                    x = x + 0.1 * torch.randn_like(x)
                return x

            @torch.compile
            def infer(x):
                return augment(x, train=False)
            """,
            note="openpi's preprocessing (bench/dev9, judged false in bench/dev_findings): the only "
                 "compiled call passes train=False, which closes the draw's branch",
        ),
        Case(
            """
            import torch
            from torch import compiler

            def sample(probs):
                if torch._dynamo.is_compiling():
                    return torch.argmax(probs, dim=-1, keepdim=True)
                return torch.multinomial(probs, num_samples=1)

            def jitter(x):
                compiling = compiler.is_compiling()
                if not compiling:
                    x = x + 0.01 * torch.randn_like(x)
                return x

            @torch.compile
            def next_token(logits):
                return sample(torch.softmax(jitter(logits), dim=-1))
            """,
            note="draws only Dynamo never traces: after a compiling branch that returns (litgpt "
                 "generate/base.py), under `not is_compiling()` through a name",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.drop = nn.Dropout(0.1)

                def forward(self, x):
                    return self.drop(x)

            model = torch.compile(Block())
            out = model(torch.randn(2, 4))
            """,
            note="dropout in a module compiled where nothing trains: it draws nothing in eval mode (the default)",
        ),
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

            class DiT(nn.Module):
                def forward(self, x):
                    if self.training and torch.rand(1) < 0.1:
                        x = torch.zeros_like(x)
                    keep = torch.rand_like(x) if self.training else torch.ones_like(x)
                    if not self.training or torch.rand(1) < 0.5:
                        return x * keep
                    return x

            estimator = torch.compile(DiT())
            """,
            note="draws Python evaluates only in train mode (after `self.training and`, in the arm "
                 "`self.training` picks, after `not self.training or`), in a model compiled where "
                 "nothing trains (index-tts' DiT, judged false in bench/fresh_reads)",
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

            def attention(q, k, v, dropout_p=0.0):
                return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)

            @torch.compile
            def block(q, k, v):
                return attention(q, k, v) + attention(k, q, v)
            """,
            note="a rate that defaults to 0 and that no call of the helper passes (a public video app)",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            def attention(q, k, v, drop_rate=0.0):
                return F.dropout(q @ k.transpose(-2, -1), p=drop_rate) @ v

            def forward_block(q, k, v, drop_rate=0.0):
                return attention(q, k, v, drop_rate=drop_rate)

            @torch.compile
            def block(q, k, v):
                return forward_block(q, k, v) + attention(q, k, v, 0.0)

            def train_step(q, k, v):
                return attention(q, k, v, drop_rate=0.1)
            """,
            note="every compiled call leaves the rate at its default 0 or passes 0, directly or "
                 "forwarded; only an eager caller gives one (the Foley pack's attention, bench/dev34)",
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
        Case(
            """
            import torch
            import torch.nn.functional as F

            class RoPEAttention(torch.nn.Module):
                def __init__(self, dropout=0.1):
                    super().__init__()
                    self.dropout_p = dropout

                def forward(self, q, k, v):
                    dropout_p = self.dropout_p if self.training else 0.0
                    return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)

            attn = torch.compile(RoPEAttention().eval())
            """,
            note="the train-mode rate assigned to a local first (SAM 2's RoPEAttention, judged false in "
                 "bench/dev_findings: compiled for inference only)",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            class Attention(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.qkv = nn.Linear(dim, dim * 3)
                    self.attn_drop = nn.Dropout(0.0)

                def forward(self, q, k, v):
                    return F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0)

            attn = torch.compile(Attention(64))
            """,
            note="dropout_p read from an `nn.Dropout(0.0)`: always 0, nothing is drawn (timm iformer)",
        ),
        Case(
            files={
                "test_models.py": dedent("""
                    import torch
                    from layers import Decoder

                    def test_train_step():
                        model = Decoder().train()
                        model(torch.rand(2, 8)).sum().backward()

                    def test_compiled():
                        compiled = torch.compile(Decoder().eval())
                        compiled(torch.rand(2, 8))
                """),
                "export.py": dedent("""
                    import torch
                    from layers import Decoder

                    torch.onnx.export(Decoder().eval(), torch.rand(2, 8), "decoder.onnx")
                """),
            },
            path="layers.py",
            code="""
            import torch.nn as nn

            class Decoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 8)
                    self.drop = nn.Dropout(0.1)

                def forward(self, x):
                    return self.drop(self.fc(x))
            """,
            note="the one compile is of an eval-mode module; an ONNX export also reaching the code compiles "
                 "nothing (doctr's LW-DETR, bench/dev12)",
        ),
        Case(
            files={
                "train.py": dedent("""
                    import torch
                    import torch._inductor.config
                    from blocks import Denoiser

                    torch._inductor.config.fallback_random = True
                    net = torch.compile(Denoiser())
                """),
                "export.py": dedent("""
                    import torch
                    from blocks import Denoiser

                    torch.onnx.export(Denoiser(), torch.rand(1, 4), "denoiser.onnx")
                """),
            },
            path="blocks.py",
            code="""
            import torch
            import torch.nn as nn

            class Denoiser(nn.Module):
                def forward(self, x):
                    return x + 0.1 * torch.randn_like(x)
            """,
            note="`fallback_random` set in the file of the one compile site; an export reaching the code "
                 "compiles nothing, so its file need not set it",
        ),
        Case(
            """
            import torch

            @torch.compile
            def decode_step(model, tokens, temperature: float):
                probs = torch.softmax(model(tokens)[:, -1] / temperature, dim=-1)
                order = torch.randperm(probs.shape[0])
                return torch.multinomial(probs, num_samples=1)[order], probs.multinomial(1)
            """,
            note="multinomial and randperm run as eager's kernels on eager's generator (Inductor falls back): "
                 "with no generated draw before them they match eager (nari-labs/dia, x-transformers, "
                 "judged false in bench/fresh_reads)",
        ),
    ]
    invalid = [
        Case(
            """
            import torch
            import torch.nn as nn

            class DiT(nn.Module):
                def forward(self, x):
                    if self.training and torch.rand(1) < 0.1:
                        x = torch.zeros_like(x)
                    return x

            model = torch.compile(DiT())
            model.train()
            model(torch.randn(2)).sum().backward()
            """,
            at=[(7, 30)],
            note="a draw after `self.training and`, in a model compiled where it trains",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            def attention(q, k, v, drop_rate=0.0):
                drop_rate = drop_rate * 2
                return F.dropout(q @ k.transpose(-2, -1), p=drop_rate) @ v

            @torch.compile
            def block(q, k, v):
                return attention(q, k, v)

            def train_step(q, k, v):
                return attention(q, k, v, drop_rate=0.1)
            """,
            at=[(7, 12)],
            note="a rate rebound in the helper is not what its compiled callers passed",
        ),
        Case(
            """
            import torch

            def sample(probs):
                if torch._dynamo.is_compiling():
                    distribution = torch.empty_like(probs).exponential_(1)
                    return torch.argmax(probs / distribution, dim=-1, keepdim=True)
                return torch.multinomial(probs, num_samples=1)

            @torch.compile
            def next_token(logits):
                return sample(torch.softmax(logits, dim=-1))
            """,
            at=[(6, 24)],
            note="the draw of the compiling branch is compiled (litgpt generate/base.py, judged true); "
                 "the eager one after its return is not reported",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            def attention(q, k, v, dropout_p=0.0):
                return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)

            @torch.compile
            def block(q, k, v):
                return attention(q, k, v, dropout_p=0.1)
            """,
            at=[(6, 12)],
            note="the same helper, with a caller that passes a rate",
        ),
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
            model(torch.randn(1, 3, 8, 8)).sum().backward()
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
            attn.train()
            """,
            at=[(11, 16)], note="SDPA attention dropout in train mode",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            class RoPEAttention(torch.nn.Module):
                def __init__(self, dropout=0.1):
                    super().__init__()
                    self.dropout_p = dropout

                def forward(self, q, k, v):
                    dropout_p = self.dropout_p if self.training else 0.0
                    return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)

            attn = torch.compile(RoPEAttention())
            attn.train()
            """,
            at=[(12, 16)], note="the same rate through a local, in a file that trains",
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
        Case(
            """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            class Attention(nn.Module):
                def __init__(self, dim, attn_drop=0.1):
                    super().__init__()
                    self.attn_drop = nn.Dropout(attn_drop)

                def forward(self, q, k, v):
                    return F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0)

            attn = torch.compile(Attention(64))
            attn.train()
            """,
            at=[(12, 16)], note="dropout_p read from an `nn.Dropout` whose probability defaults to 0.1",
        ),
        Case(
            """
            import torch

            @torch.compile
            def sample(logits, temperature: float):
                noisy = logits + 0.01 * torch.randn_like(logits)
                probs = torch.softmax(noisy / temperature, dim=-1)
                return torch.multinomial(probs, num_samples=1)
            """,
            at=[(6, 29), (8, 12)],
            note="a generated draw (randn_like) moves the generator the multinomial then reads: both differ",
        ),
    ]

    def check(self, facts):
        like_eager: dict[int, bool] = {}
        in_eval: dict[int, bool] = {}
        reported = []  # (node, region, label, left to eager's kernel) of each draw that differs from eager
        for node, region in region_nodes(facts, (ast.Call,)):
            what = random_draw(facts, node)
            if what is None or never_runs_compiled(facts, node) or eager_only(facts, node):
                continue  # not a draw, a fallback for a torch older than torch.compile itself, or eager only
            label, train_mode = what
            train_mode = train_mode or train_mode_only(facts, node)
            key = id(region)
            if key not in like_eager:
                like_eager[key] = draws_like_eager(facts, region)
            if like_eager[key]:
                continue
            if train_mode:
                if key not in in_eval:
                    # quiet unless a compile site's file trains, and not shown in eval mode there
                    in_eval[key] = not trains_at_some_site(facts, region) or eval_at_every_site(facts, region)
                if in_eval[key]:
                    continue
            if closed_by_compiled_callers(facts, node):
                continue  # `if train:` in a helper every compiled caller passes train=False
            mode = " in train mode" if train_mode else ""
            reported.append((node, region, label + mode, draws_from_eager_generator(facts, node)))
        # a draw Inductor leaves to eager's kernel (`torch.multinomial`) matches eager
        # unless a draw Inductor generates ran before it in compiled code: reported where
        # such a draw is reported in the same def (a loop's later draw runs before its
        # next round); one in another def is reported there, and its fix fixes both
        generated = {}
        for node, _region, _label, eager_kernel in reported:
            if not eager_kernel:
                generated.setdefault(id(facts.enclosing_function(node)), node)
        for node, region, label, eager_kernel in reported:
            said = "draws random numbers in compiled code"
            if eager_kernel:
                first = generated.get(id(facts.enclosing_function(node)))
                if first is None:
                    continue
                said += f" with a generator a draw Inductor generates has moved (line {first.lineno})"
            yield self.finding(
                facts, node, f"{label} {said}: they differ from eager with the same seed", region=region,
            )
