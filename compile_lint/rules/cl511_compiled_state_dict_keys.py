from __future__ import annotations

import ast
from typing import Iterator

from ..analysis.compiled.values import chain_text
from ..analysis.compiled.wrappers import HOLDER, OWNER, WRAPPER, CompiledWrappersFact, compiled_wrappers, owning_compiles
from ..model import Related
from .base import Case, Rule

METHODS = ("state_dict", "load_state_dict")


class CompiledStateDictKeys(Rule):
    """
    ## What it does
    Finds `state_dict()` and `load_state_dict(...)` called on a value that may hold
    the wrapper `torch.compile(model)` returns: a name or attribute bound to it (in
    one branch of an `if` too), an alias or pick of it (`raw = model.module if ddp
    else model`), `DistributedDataParallel` / `DataParallel` of it, a parameter of a
    project function whose callers pass it (other files too), and an `nn.Module` of
    the project that keeps one as a submodule (`self.net = torch.compile(Net())`),
    saved whole (`owner.state_dict()`, `self.state_dict()`). Code that unwraps the
    wrapper on the way (`m._orig_mod`, `getattr(m, "_orig_mod", m)`) is left alone,
    as is `model.compile()`, which compiles in place, and a read where
    `isinstance(m, OptimizedModule)` is known false (`if not isinstance(...)`, or the
    `else` of the test: nnUNet, two findings on bench/dev9 before).

    ## Why is this bad?
    `torch.compile(model)` returns a new module that holds `model` as `_orig_mod`, so
    its keys are `_orig_mod.proj.weight`, ... Measured on torch 2.13 CPU
    (`scripts/measure/orig_mod_checkpoint_keys.py`, output in
    `scripts/measure/out/orig_mod_checkpoint_keys.txt`): a checkpoint saved from the
    wrapper does not load into the plain model ("Missing key(s) in state_dict:
    "proj.weight" ... Unexpected key(s) in state_dict: "_orig_mod.proj.weight""), and
    with `strict=False` it loads nothing, silently (the weights stay as initialised);
    the wrapper refuses a plain checkpoint the same way; EMA code that matches a
    plain copy's keys against the wrapper's finds 0 of 2; a module holding
    `self.net = torch.compile(Net())` saves `net._orig_mod.*`, `DDP(wrapper)` saves
    `module._orig_mod.*`. `net.compile()` in place and `m._orig_mod.state_dict()`
    save the plain keys. torch 2.14.1 and 2.15.0 add no state_dict hook to
    `OptimizedModule` and `nn.Module.load_state_dict` knows no prefix, so this holds
    there too.

    On real code (`bench/judged/`: corpus L, 14 packages, and the 24 apps, each run
    alone): 4 findings, 4 true, all checkpoints written from the wrapper (nanoGPT
    `train.py`, build-nanogpt `train_gpt2.py`, modded-nanogpt `train_gpt.py` and
    `train_gpt_medium.py`); nanoGPT strips the prefix by hand when it loads. None in
    corpus L. Not reported: LlamaGen, which saves `model.module._orig_mod` under the
    same `if not args.no_compile:` as its compile; modded-nanogpt's warm-up snapshot,
    restored into the wrapper it came from. Missed: BiRefNet saves
    `trainer.model.state_dict()`, where the wrapper reaches `Trainer` through a
    returned tuple. Not reported since c7ea8d9: a state dict copied from one wrapper
    into another with the same key prefix; cifar10-airbench's
    `model.load_state_dict(model_trainbias.state_dict())` (both compiled) gave 4 false
    findings on the held-out apps (`bench/testset/verdicts.jsonl`, judged after the
    work), so that figure is no longer a held-out one. Not reported either: a load that runs
    before the compile in the same def (a resume, then `model = torch.compile(model)`), and
    a load on the branch of an `if` that tests whether the checkpoint's keys carry
    `_orig_mod`: 3 false findings in continuous_tokenizer (`bench/dev25`, read after its
    first run) and metavoice's load before its compile (`bench/dev11`), the one finding
    of the 298 earlier development apps this changes; lightly's two loads into the wrapper
    (`bench/dev24`) stay. The same holds for a helper handed the module before the line that
    compiles it, where the def builds the object itself (`model = Trainer(cfg)`,
    `load_weights(model.nn_module, ...)`, then `model.nn_module = torch.compile(...)`, no
    loop around both): ball-action-spotting's two loads, judged false in
    `bench/fresh_reads` batch 57. An object a caller passes may come back compiled from an
    earlier call and is still reported. Nor a load into the wrapper in a def that puts the prefix on
    the keys or looks them up with it (`f"_orig_mod.{k}"`, `"_orig_mod." + k`,
    `sd["_orig_mod.x"]`, `"_orig_mod.x" in sd`) and never takes it off (`.replace`,
    `.removeprefix`, `.startswith`, `len(prefix)`): the author writes the wrapper's keys on
    purpose. On the 476 development apps held (`bench/dev_findings/`, 2026-12-06) this took
    3 findings and added none: cramming's two loads (`bench/dev4`) and TinyRecursiveModels'
    (`bench/dev19`); the 2 of them judged there were false. Nor a save and a load that are
    one checkpoint format of the file: `torch.save` of `R.state_dict()` (whole, or under a
    string key: `{"model": R.state_dict()}`, `state["model"] = R.state_dict()`) and
    `R.load_state_dict(...)` of the same slot (`torch.load(f)`, `ckpt["model"]`), `R`
    spelled the same: the file reads back into the module the keys it wrote from it
    (cramming's `save_training_checkpoint` / `load_training_checkpoint`, dreamerv3's
    `latest.pt` resume, ACE-Step's quantized-weights offload). On the 476 development apps
    (session 59) this took 14 findings in 5 apps and added none; the 3 of them judged in
    `bench/dev_findings/` were false. A load of another slot than the file saves is still
    reported (an invalid case). Nor a read or load in a class that rewrites checkpoint keys
    into the wrapper's form (`k.replace("diffusion_model.", "diffusion_model._orig_mod.")`):
    it matches its checkpoints to the wrapper on purpose (diffusion-forcing-transformer,
    `bench/fresh_reads`: 2 findings, judged false, that a version of session 65 which read
    every class's project base brought; that reading was not kept, and with it this
    exemption moves nothing on the development apps and fresh reads). Since session 73 the
    same holds for a def outside a class that puts `_orig_mod` into the keys where it
    compiles (Mono-DFCGS's `load_model`, `k.replace("model.", "model._orig_mod.", 1)`); an
    owner built from an object whose attribute gates every compile of the class
    (`if opt.compile: self.model = torch.compile(self.model)` in `__init__`, its bases'
    included) where the def building it, or every caller handing it the object, set that
    attribute to a falsy literal before (`opt.compile = False`, also through
    `copy.deepcopy(opt)`): the owner holds no wrapper; and a load into `self` in a method
    whose later lines compile every compiled submodule of the class (DeCo's Lightning
    `configure_model`). On the 308 fresh-read repositories and the 24 apps
    (`check --select CL511,CL512,CL513`, each whole, against session 72's main): the 10 gone
    are Mono-DFCGS's 8 and DeCo's 2 loads, all judged false in `bench/fresh_reads/`; nothing
    else moved (`bench/results.md`, session 73).

    ## Example
    ```python
    model = torch.compile(GPT(cfg))
    torch.save({"model": model.state_dict()}, "ckpt.pt")   # keys: _orig_mod.*
    ```

    ## Use instead
    ```python
    model = torch.compile(GPT(cfg))
    torch.save({"model": getattr(model, "_orig_mod", model).state_dict()}, "ckpt.pt")
    ```
    or compile in place (`model.compile()`), which keeps the keys. For a module that
    keeps a compiled submodule, compile the submodule in place
    (`self.net = Net(); self.net.compile()`).

    ## Fix safety
    Unsafe: `getattr(m, "_orig_mod", m).state_dict()` (or `.load_state_dict(...)`)
    reads or loads the original module, with or without compilation on this run, so
    the keys the code writes change: a loader that expects the `_orig_mod.` keys
    (loading into a compiled model strictly) must change with it. No fix for a holder
    (`DDP(wrapper)`) or an owner: the key layout there is the author's decision.

    ## References
    - `scripts/measure/orig_mod_checkpoint_keys.py`, `scripts/measure/out/orig_mod_checkpoint_keys.txt`
    - `torch/_dynamo/eval_frame.py` (`OptimizedModule` registers `_orig_mod` as a submodule)
    - pytorch#101107, pytorch#149894 (EMA and checkpoint keys of a compiled model)
    - `docs/hazards-measured.md`; `bench/judged/` for the findings on real code
    """

    code = "CL511"
    name = "compiled-state-dict-keys"
    summary = "`state_dict()` of a `torch.compile` wrapper has `_orig_mod.` keys the plain model does not load"
    fix_safety = "unsafe"
    codemod = "codemods.unwrap_compiled_module:UnwrapCompiledModule"
    requires = (b"state_dict",)
    needs = (CompiledWrappersFact,)
    verify_target = False  # nothing an eager-vs-compiled run of the function shows

    valid = [
        Case(
            """\
            import torch

            def load_weights(module, path):
                module.load_state_dict(torch.load(path))

            def train(config, path):
                model = Trainer(config)
                load_weights(model.nn_module, path)
                model.nn_module = torch.compile(model.nn_module)
                return model
            """,
            note="the helper is handed the plain module a later line compiles (ball-action-spotting, "
                 "judged false in bench/fresh_reads batch 57)",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Algo(nn.Module):
                def __init__(self, net):
                    super().__init__()
                    self.diffusion_model = torch.compile(net)
                def on_load_checkpoint(self, checkpoint):
                    checkpoint["state_dict"] = {k.replace("diffusion_model.", "diffusion_model._orig_mod."): v
                                                for k, v in checkpoint["state_dict"].items()}
                    return {k: v for k, v in self.state_dict().items() if k in checkpoint["state_dict"]}
            """,
            note="the class rewrites checkpoint keys into the wrapper's form (diffusion-forcing-transformer)",
        ),
        Case(
            "import torch\nmodel = Net()\nfor epoch in range(3):\n    model.load_state_dict(torch.load('c.pt'))\n"
            "    model = torch.compile(model)\n",
            at=[(4, 5)], note="a loop: the next turn loads into the wrapper the last one made",
        ),
        Case(
            """\
            import torch
            from torch._dynamo import OptimizedModule

            class Predictor:
                def __init__(self, network, compile_it):
                    self.network = torch.compile(network) if compile_it else network

                def load(self, params):
                    if not isinstance(self.network, OptimizedModule):
                        self.network.load_state_dict(params)
                    else:
                        self.network._orig_mod.load_state_dict(params)
            """,
            note="nnUNet (bench/dev9): a plain load only where the network is known not to be the wrapper",
        ),
        Case("import torch\nmodel = Net()\nmodel.compile()\ntorch.save(model.state_dict(), 'm.pt')\n", note="compiled in place: plain keys"),
        Case(
            "import torch\ndef main(args):\n    model = Net()\n    if args.resume:\n        model.load_state_dict(torch.load(args.resume))\n"
            "    if args.compile:\n        model = torch.compile(model)\n    train(model)\n",
            note="a checkpoint loaded before the compile (continuous_tokenizer's resume, bench/dev25)",
        ),
        Case(
            "import torch\nsd = torch.load('c.pt')\ncompiled = False\nfor key in sd:\n    if '_orig_mod' in key:\n        compiled = True\n"
            "model = Net()\nif compiled:\n    model = torch.compile(model)\n    model.load_state_dict(sd)\n"
            "else:\n    model.load_state_dict(sd)\n    model = torch.compile(model)\n",
            note="the branch is chosen by whether the checkpoint's keys carry `_orig_mod` (continuous_tokenizer)",
        ),
        Case(
            """\
            import torch

            class Trainer:
                def __init__(self, net, cfg):
                    self.cfg = cfg
                    self.model = torch.compile(net)

                def load(self, path):
                    state = {}
                    for k, v in torch.load(path).items():
                        if self.cfg.compile:
                            k = f"_orig_mod.{k}"
                        state[k] = v
                    self.model.load_state_dict(state)

                def resize(self, state):
                    name = "_orig_mod.inner.emb.weight"
                    if name in state:
                        state[name] = state[name][:10]
                    self.model.load_state_dict(state)
            """,
            note="the def puts the wrapper's prefix on the keys, or looks them up with it (cramming, bench/dev4; "
                 "TinyRecursiveModels, bench/dev19)",
        ),
        Case("import torch\nm = torch.compile(Net())\ntorch.save(m._orig_mod.state_dict(), 'm.pt')\n", note="the original module"),
        Case("import torch\nm = torch.compile(Net())\ntorch.save(getattr(m, '_orig_mod', m).state_dict(), 'm.pt')\n"),
        Case(
            "import torch\nm = torch.compile(Net())\nif hasattr(m, '_orig_mod'):\n    m = m._orig_mod\nsd = m.state_dict()\n",
            note="unwrapped on one path: the code knows about the prefix",
        ),
        Case("import torch\nstep = torch.compile(train_step)\nsd = opt.state_dict()\n", note="a compiled function; another object's state"),
        Case("import torch\nnet = Net()\nfast = torch.compile(net)\nsd = net.state_dict()\n", note="the plain module's keys"),
        Case(
            "import torch\nclass Owner(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.net = Net()\n        self.net.compile()\no = Owner()\nsd = o.state_dict()\n",
            note="the owner compiles its submodule in place",
        ),
        Case("import torch\nm = torch.compile(model.forward)\nsd = model.state_dict()\n", note="a compiled method"),
        Case(
            "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\n"
            "if not args.no_compile:\n    model = torch.compile(model)\nmodel = DDP(model)\n"
            "if not args.no_compile:\n    sd = model.module._orig_mod.state_dict()\nelse:\n    sd = model.module.state_dict()\n",
            note="the other branch of the same test as the compile",
        ),
        Case(
            "import copy, torch\nmodel = torch.compile(Net())\ninitial = dict(model=copy.deepcopy(model.state_dict()))\n"
            "warm_up(model)\nmodel.load_state_dict(initial['model'])\n",
            note="a snapshot restored into the wrapper it came from",
        ),
        Case(
            "import torch\nfast = torch.compile(Net())\nfrozen = torch.compile(Net(frozen=True))\n"
            "frozen.load_state_dict(fast.state_dict())\n",
            note="from one wrapper into another: the same `_orig_mod.` keys",
        ),
        Case(
            """\
            import torch
            class Engine:
                def __init__(self, net):
                    self.model = torch.compile(net)
                def save_training_checkpoint(self, file):
                    state = dict()
                    state["model"] = self.model.state_dict()
                    torch.save(state, file)
                def load_training_checkpoint(self, file):
                    state = torch.load(file)
                    self.model.load_state_dict(state["model"])
            """,
            note="cramming's torch_default.py (bench/dev4, both judged false in bench/dev_findings): the "
                 "file saves the wrapper's keys under a key and loads that key back into the same wrapper",
        ),
        Case(
            """\
            import copy
            import torch

            class Splat(torch.nn.Module):
                def __init__(self, opt):
                    super().__init__()
                    self.model = Net(opt)
                    if hasattr(opt, "compile") and opt.compile:
                        self.model = torch.compile(self.model)

            class Splat2(Splat):
                def __init__(self, opt, **kw):
                    super().__init__(opt)
                    if getattr(opt, "compile", False):
                        self.extra = torch.compile(Net(opt))

            def build(path):
                opt = Options()
                opt.compile = False
                opt.epoch = 0
                model = Splat2(opt).to("cuda")
                model.load_state_dict(torch.load(path))

            def load_model(opt, path):
                model = Splat(opt)
                model.load_state_dict(torch.load(path))

            def main():
                opt = Options()
                opt.compile = False
                load_model(copy.deepcopy(opt), "a.pt")
            """,
            note="every compile of the owner (and of its base) runs under `opt.compile`, set False before the "
                 "constructor, there or at every caller (Mono-DFCGS, bench/fresh_reads batch 66)",
        ),
        Case(
            """\
            import torch

            class Splat(torch.nn.Module):
                def __init__(self, opt):
                    super().__init__()
                    self.model = Net(opt)
                    if opt.compile:
                        self.model = torch.compile(self.model)

            def load(model, path, compile):
                state = {}
                for k, v in torch.load(path).items():
                    if "_orig_mod." in k and not compile:
                        k = k.replace("_orig_mod.", "")
                    if "_orig_mod." not in k and compile:
                        k = k.replace("model.", "model._orig_mod.", 1)
                    state[k] = v
                model.load_state_dict(state)

            def main(opt):
                model = Splat(opt)
                load(model, "a.pt", opt.compile)
            """,
            note="the def puts the wrapper's prefix in where it compiles (Mono-DFCGS's splat_inference.py)",
        ),
        Case(
            """\
            import torch

            class Model(torch.nn.Module):
                def configure_model(self):
                    self.denoiser = Net()
                    self.ema = Net()
                    if self.path is not None:
                        self.load_state_dict(torch.load(self.path)["state_dict"])
                    self.denoiser = torch.compile(self.denoiser)
                    self.ema = torch.compile(self.ema)
            """,
            note="the owner loads before the method's later lines compile every submodule (DeCo's configure_model, "
                 "bench/fresh_reads batch 60)",
        ),
    ]
    invalid = [
        Case(
            """\
            import torch

            def load_weights(module, path):
                module.load_state_dict(torch.load(path))

            def train(config, paths):
                model = Trainer(config)
                for path in paths:
                    load_weights(model.nn_module, path)
                    model.nn_module = torch.compile(model.nn_module)
                return model
            """,
            fixed="""\
            import torch

            def load_weights(module, path):
                getattr(module, "_orig_mod", module).load_state_dict(torch.load(path))

            def train(config, paths):
                model = Trainer(config)
                for path in paths:
                    load_weights(model.nn_module, path)
                    model.nn_module = torch.compile(model.nn_module)
                return model
            """,
            at=[(4, 5)], note="a loop brings the compiled module back to the helper",
        ),
        Case(
            """\
            import torch

            def load_weights(module, path):
                module.load_state_dict(torch.load(path))

            def train(model, path):
                load_weights(model.nn_module, path)
                model.nn_module = torch.compile(model.nn_module)
                return model
            """,
            fixed="""\
            import torch

            def load_weights(module, path):
                getattr(module, "_orig_mod", module).load_state_dict(torch.load(path))

            def train(model, path):
                load_weights(model.nn_module, path)
                model.nn_module = torch.compile(model.nn_module)
                return model
            """,
            at=[(4, 5)], note="a caller's object may come back compiled by an earlier call",
        ),
        Case(
            """\
            import torch
            class Engine:
                def __init__(self, net):
                    self.model = torch.compile(net)
                def save(self, file):
                    torch.save({"model": self.model.state_dict()}, file)
                def load_pretrained(self, file):
                    self.model.load_state_dict(torch.load(file)["weights"])
            """,
            fixed="""\
            import torch
            class Engine:
                def __init__(self, net):
                    self.model = torch.compile(net)
                def save(self, file):
                    torch.save({"model": getattr(self.model, "_orig_mod", self.model).state_dict()}, file)
                def load_pretrained(self, file):
                    getattr(self.model, "_orig_mod", self.model).load_state_dict(torch.load(file)["weights"])
            """,
            at=[(6, 30), (8, 9)], note="the load reads another slot than the file saves: a checkpoint from elsewhere",
        ),
        Case(
            "import torch\nclass Trainer:\n    def __init__(self, net):\n        self.model = torch.compile(net)\n"
            "    def load(self, path):\n        state = {k.replace('_orig_mod.', ''): v for k, v in torch.load(path).items()}\n"
            "        self.model.load_state_dict(state)\n",
            fixed="import torch\nclass Trainer:\n    def __init__(self, net):\n        self.model = torch.compile(net)\n"
            "    def load(self, path):\n        state = {k.replace('_orig_mod.', ''): v for k, v in torch.load(path).items()}\n"
            "        getattr(self.model, \"_orig_mod\", self.model).load_state_dict(state)\n",
            at=[(7, 9)], note="the def takes the prefix off, then loads into the wrapper",
        ),
        Case(
            "import torch\nfast = torch.compile(Net())\nplain = Net()\nplain.load_state_dict(fast.state_dict())\n",
            fixed="import torch\nfast = torch.compile(Net())\nplain = Net()\nplain.load_state_dict(getattr(fast, \"_orig_mod\", fast).state_dict())\n",
            at=[(4, 23)], note="from a wrapper into a plain module",
        ),
        Case(
            "import torch\nmodel = torch.compile(GPT(cfg))\ntorch.save({'model': model.state_dict()}, 'ckpt.pt')\n",
            fixed="import torch\nmodel = torch.compile(GPT(cfg))\ntorch.save({'model': getattr(model, \"_orig_mod\", model).state_dict()}, 'ckpt.pt')\n",
            at=[(3, 22)],
        ),
        Case(
            "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nmodel = GPT(cfg)\nif compile:\n"
            "    model = torch.compile(model)\nif ddp:\n    model = DDP(model)\nraw_model = model.module if ddp else model\n"
            "ckpt = {'model': raw_model.state_dict()}\n",
            fixed="import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nmodel = GPT(cfg)\nif compile:\n"
            "    model = torch.compile(model)\nif ddp:\n    model = DDP(model)\nraw_model = model.module if ddp else model\n"
            "ckpt = {'model': getattr(raw_model, \"_orig_mod\", raw_model).state_dict()}\n",
            at=[(9, 18)], note="compiled in one branch, then unwrapped from DDP in a pick",
        ),
        Case(
            "import torch\nclass Trainer:\n    def __init__(self, net):\n        self.model = torch.compile(net)\n"
            "    def save(self, path):\n        torch.save(self.model.state_dict(), path)\n",
            fixed="import torch\nclass Trainer:\n    def __init__(self, net):\n        self.model = torch.compile(net)\n"
            "    def save(self, path):\n        torch.save(getattr(self.model, \"_orig_mod\", self.model).state_dict(), path)\n",
            at=[(6, 20)], note="an attribute bound in another method",
        ),
        Case(
            "import torch\nclass Owner(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.net = torch.compile(Net())\n    def forward(self, x):\n        return self.net(x)\n"
            "owner = Owner()\ntorch.save(owner.state_dict(), 'o.pt')\n",
            at=[(9, 12)], note="an owner saved whole: net._orig_mod.* keys; no fix",
        ),
        Case(
            "import torch\nmodel = torch.compile(Net())\nmodel.load_state_dict(torch.load('pretrained.pt'))\n",
            fixed="import torch\nmodel = torch.compile(Net())\ngetattr(model, \"_orig_mod\", model).load_state_dict(torch.load('pretrained.pt'))\n",
            at=[(3, 1)], note="loading a plain checkpoint into the wrapper",
        ),
        Case(
            "import torch\nmodel = torch.compile(Net())\nema = {k: v.clone() for k, v in model.state_dict().items()}\n",
            fixed="import torch\nmodel = torch.compile(Net())\nema = {k: v.clone() for k, v in getattr(model, \"_orig_mod\", model).state_dict().items()}\n",
            at=[(3, 33)], note="EMA keyed by the wrapper's names",
        ),
        Case(
            "import torch\ndef maybe_compile(module):\n    return torch.compile(module, mode='max-autotune')\n"
            "unet = maybe_compile(UNet())\nsd = unet.state_dict()\n",
            fixed="import torch\ndef maybe_compile(module):\n    return torch.compile(module, mode='max-autotune')\n"
            "unet = maybe_compile(UNet())\nsd = getattr(unet, \"_orig_mod\", unet).state_dict()\n",
            at=[(5, 6)], note="a project wrapper that returns torch.compile(...)",
        ),
        Case(
            "import torch\ndef save_checkpoint(model, path):\n    torch.save(model.state_dict(), path)\n",
            files={"train.py": "import torch\nfrom utils import save_checkpoint\nmodel = torch.compile(Net())\nsave_checkpoint(model, 'c.pt')\n"},
            path="utils.py",
            fixed="import torch\ndef save_checkpoint(model, path):\n    torch.save(getattr(model, \"_orig_mod\", model).state_dict(), path)\n",
            at=[(3, 16)], note="a parameter: the caller in another file passes the wrapper",
        ),
        Case(
            """\
            import torch

            class Splat(torch.nn.Module):
                def __init__(self, opt):
                    super().__init__()
                    self.model = Net(opt)
                    if opt.compile:
                        self.model = torch.compile(self.model)

            def build(path, fast):
                opt = Options()
                opt.compile = False
                if fast:
                    opt.compile = True
                model = Splat(opt)
                model.load_state_dict(torch.load(path))

            def rebuild(opt, path):
                model = Splat(opt)
                model.load_state_dict(torch.load(path))
                opt.compile = False

            def sweep(paths):
                opt = Options()
                opt.compile = False
                for path in paths:
                    model = Splat(opt)
                    model.load_state_dict(torch.load(path))
                    opt.compile = True
            """,
            at=[(16, 5), (20, 5), (28, 9)],
            note="a branch may switch the compile back on; a flag set after the constructor is too late; "
                 "a loop's later store reaches its next turn",
        ),
        Case(
            """\
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = torch.compile(Net())

                def configure_model(self):
                    self.denoiser = Net()
                    self.load_state_dict(torch.load("c.pt"))
                    self.denoiser = torch.compile(self.denoiser)
            """,
            at=[(10, 9)],
            note="a submodule compiled in `__init__` is compiled before the load",
        ),
    ]

    def check(self, facts):
        wrappers = None
        calls = [c for c in facts.nodes(ast.Call) if isinstance(c.func, ast.Attribute) and c.func.attr in METHODS]
        restored: set = set()
        for load, reads in _snapshots(facts, calls):
            for read in reads:
                if facts.text(read.func.value) != facts.text(load.func.value):
                    # another module's state: the same keys when both hold a wrapper with
                    # the same prefix (two compiled copies of one model)
                    if wrappers is None:
                        wrappers = compiled_wrappers(facts)
                    into, out_of = wrappers.holding(load.func.value), wrappers.holding(read.func.value)
                    if into is None or out_of is None or into.prefix != out_of.prefix:
                        continue
                restored.update((id(load), id(read)))
        restored |= _round_trips(facts, calls)
        for call in calls:
            func = call.func
            if id(call) in restored:
                continue
            if wrappers is None:
                wrappers = compiled_wrappers(facts)
            held = wrappers.holding(func.value)
            if held is None or _before_its_compile(facts, call, held) or _chosen_by_the_keys(facts, call) \
                    or _keys_prefixed_for_it(facts, call) or _writes_wrapper_keys(facts, call):
                continue
            receiver = facts.text(func.value)
            loading = func.attr == "load_state_dict"
            if held.kind == OWNER:
                what = f"holds a `torch.compile`d submodule (`{held.prefix[:-len('._orig_mod.')]}`)"
            elif held.kind == HOLDER:
                what = "wraps a `torch.compile` wrapper"
            else:
                what = "may hold a `torch.compile` wrapper"
            keys = f"`{held.prefix}`"
            message = (f"`{receiver}` {what}: `load_state_dict` expects {keys}-prefixed keys, which a plain checkpoint lacks"
                       if loading else f"`{receiver}` {what}: its `state_dict()` keys start with {keys}, which the plain model does not load")
            fixable = held.kind == WRAPPER and chain_text(func.value) is not None
            yield self.finding(
                facts, call, message,
                fix=f"{'load into' if loading else 'save'} the original module: `getattr({receiver}, \"_orig_mod\", {receiver})`" if fixable else None,
                unsafe=True, data={"method": func.attr},
                related=[Related(held.call.path, held.call.row, held.call.node.col_offset + 1, "compiled here")],
            )


LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _before_its_compile(facts, call: ast.Call, held) -> bool:
    """The call runs before the compile that makes what its receiver holds: both in the
    same def (or both at module level) of this file, the compile on a later line and no
    loop around the two (a resume that loads a checkpoint, then compiles: continuous_tokenizer,
    bench/dev25). `held` is the wrapper `holding` picks: the first, by line, of its kind."""
    scope = facts.enclosing_function(call)
    if held.kind == OWNER:
        # `self` in a method that compiles every compiled submodule of its class on a later
        # line (Lightning's `configure_model`: a pretrained checkpoint loaded, then
        # `self.denoiser = torch.compile(self.denoiser)`; DeCo, bench/fresh_reads batch 60)
        cls = facts.parent(scope) if scope is not None else None
        if not (isinstance(call.func.value, ast.Name) and call.func.value.id == "self" and isinstance(cls, ast.ClassDef)):
            return False
        made = [cc for at, cc in owning_compiles(facts, cls, 0)]
        return bool(made) and all(cc.path == facts.path and _compiled_after(facts, call, scope, cc) for cc in made)
    return held.call.path == facts.path and _compiled_after(facts, call, scope, held.call)


def _compiled_after(facts, call: ast.Call, scope, cc) -> bool:
    """The compile `cc` runs in `scope` (the def around `call`) on a later line, no loop around both."""
    made = cc.node
    if cc.row <= call.lineno or facts.enclosing_function(made) is not scope:
        return False
    around = {id(a) for a in facts.ancestors(call) if isinstance(a, LOOPS)}
    return not any(id(a) in around for a in facts.ancestors(made) if isinstance(a, LOOPS))


def _chosen_by_the_keys(facts, call: ast.Call) -> bool:
    """A `load_state_dict` on the branch of an `if` that tests whether the checkpoint's keys
    carry `_orig_mod` (directly, or through a flag set under such a test in the same scope:
    `if any("_orig_mod" in k ...)`, `compiled = True` under `if "_orig_mod" in key:`): the
    code loads into the wrapper exactly when the keys fit it (continuous_tokenizer, dev25)."""
    if call.func.attr != "load_state_dict":
        return False
    tests = [a.test for a in facts.ancestors(call) if isinstance(a, ast.If)]
    if any(_mentions_orig_mod(test) for test in tests):
        return True
    flags = {n.id for test in tests for n in ast.walk(test) if isinstance(n, ast.Name)}
    if not flags:
        return False
    scope = facts.enclosing_function(call)  # (None: the module, and every def in it)
    for node in facts.nodes(ast.Assign):
        if not any(isinstance(t, ast.Name) and t.id in flags for t in node.targets):
            continue
        around = list(facts.ancestors(node))
        if (scope is None or any(a is scope for a in around)) \
                and any(isinstance(a, ast.If) and _mentions_orig_mod(a.test) for a in around):
            return True
    return False


# string methods (and `len`) that take a prefix off a key: a def that calls one with
# `_orig_mod` strips the wrapper's prefix
STRIPPING = frozenset({"replace", "removeprefix", "lstrip", "startswith", "split", "len"})


def _keys_prefixed_for_it(facts, call: ast.Call) -> bool:
    """A `load_state_dict` in a def that puts the wrapper's prefix on the keys it loads,
    or looks keys up with it (`f"_orig_mod.{k}"`, `"_orig_mod." + k`, `sd["_orig_mod.x"]`,
    `"_orig_mod.x" in sd`, also through a name bound to the string), and never takes it
    off (`.replace("_orig_mod.", "")`, `k[len(prefix):]`): the author loads checkpoints
    with the wrapper's keys into the wrapper on purpose (cramming's `f"_orig_mod.{k}"`
    when it compiles, TinyRecursiveModels' `"_orig_mod.model.inner.puzzle_emb.weights"`,
    bench/dev4 and dev19)."""
    if call.func.attr != "load_state_dict":
        return False
    scope = facts.enclosing_function(call)
    if scope is None:
        return False
    nodes = list(ast.walk(scope))
    names = {t.id for n in nodes if isinstance(n, ast.Assign) and _is_prefix(n.value)
             for t in n.targets if isinstance(t, ast.Name)}

    def prefix(node) -> bool:
        return _is_prefix(node) or (isinstance(node, ast.Name) and node.id in names)

    adds = False
    for node in nodes:
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if called in STRIPPING and any(prefix(a) for a in node.args):
                return False
        elif isinstance(node, ast.JoinedStr) and node.values and _is_prefix(node.values[0]):
            adds = True
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and prefix(node.left):
            adds = True
        elif isinstance(node, ast.Subscript) and prefix(node.slice):
            adds = True
        elif isinstance(node, ast.Compare) and prefix(node.left) and all(isinstance(o, ast.In) for o in node.ops):
            adds = True
    return adds


def _writes_wrapper_keys(facts, call: ast.Call) -> bool:
    """The call is in a method of a class (outside a class: in a def) that rewrites
    checkpoint keys into the wrapper's form, `key.replace("diffusion_model.", "diffusion_model._orig_mod.")` (a replacement
    that puts `_orig_mod` in; it may also take it out when saving): the class matches its
    checkpoints to the wrapper's keys on purpose (diffusion-forcing-transformer's
    `_compile_checkpoint` / `_uncompile_checkpoint`, bench/fresh_reads, session 65)."""
    # outside a class, the def around the load (splat_inference's `load_model` of
    # Mono-DFCGS, bench/fresh_reads batch 66: `k.replace("model.", "model._orig_mod.", 1)`
    # where it compiles, the prefix taken off where it does not)
    owner = next((a for a in facts.ancestors(call) if isinstance(a, ast.ClassDef)), None) \
        or facts.enclosing_function(call)
    return owner is not None and any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replace"
        and len(node.args) in (2, 3) and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args[:2])
        and "_orig_mod" in node.args[1].value and "_orig_mod" not in node.args[0].value
        for node in ast.walk(owner))


def _is_prefix(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("_orig_mod.")


def _mentions_orig_mod(test: ast.AST) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and "_orig_mod" in n.value for n in ast.walk(test))


def _snapshots(facts, calls) -> Iterator[tuple[ast.Call, list[ast.Call]]]:
    """(`a.load_state_dict(...)`, the `b.state_dict()` reads its argument comes from):
    read in the argument itself, or in what a variable of the argument is bound to in
    the same scope (`initial = copy.deepcopy(model.state_dict())` ... warm up ...
    `model.load_state_dict(initial)`). A snapshot restored into the module it came from,
    or into one with the same key prefix, has the keys it expects."""
    for call in calls:
        if call.func.attr != "load_state_dict" or not call.args:
            continue
        arg = call.args[0]
        reads = list(_state_dict_reads(arg))
        root = arg
        while isinstance(root, (ast.Subscript, ast.Attribute)):
            root = root.value
        if isinstance(root, ast.Name):
            scope = facts.enclosing_function(call) or facts.tree
            reads += [
                node for stmt in ast.walk(scope) if isinstance(stmt, ast.Assign) and facts.enclosing_function(stmt) is facts.enclosing_function(call)
                and any(isinstance(t, ast.Name) and t.id == root.id for t in stmt.targets)
                for node in _state_dict_reads(stmt.value)
            ]
        if reads:
            yield call, reads


_NOT_A_SLOT = object()


def _round_trips(facts, calls) -> set:
    """ids of the saves and loads that make one checkpoint format of this file: a
    `torch.save` of `R.state_dict()` (whole, or under a string key: `{"model": ...}`,
    `state["model"] = R.state_dict()`) and an `R.load_state_dict(...)` of the same slot
    (`torch.load(f)` whole, `ckpt["model"]`), `R` spelled the same. The file writes
    the keys it reads back into the same module: cramming's `save_training_checkpoint` /
    `load_training_checkpoint` (bench/dev4, both judged false in bench/dev_findings)."""
    if next(facts.calls_to("torch.save"), None) is None:
        return set()
    saved: dict = {}
    for call in calls:
        if call.func.attr == "state_dict" and not call.args:
            slot = _saved_slot(facts, call)
            if slot is not _NOT_A_SLOT:
                saved.setdefault((facts.text(call.func.value), slot), []).append(id(call))
    pairs: set = set()
    for call in calls:
        if call.func.attr == "load_state_dict" and call.args:
            slot = _loaded_slot(facts, call.args[0])
            found = saved.get((facts.text(call.func.value), slot)) if slot is not _NOT_A_SLOT else None
            if found:
                pairs.add(id(call))
                pairs.update(found)
    return pairs


def _saved_slot(facts, read: ast.Call):
    """Where `R.state_dict()` goes into a checkpoint: "" when saved whole (`torch.save(R.state_dict(), f)`),
    the key of a dict display or of a subscript store, else _NOT_A_SLOT."""
    parent = facts.parent(read)
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is read and facts.resolve(parent.func) == "torch.save":
        return ""
    if isinstance(parent, ast.Dict):
        index = next((i for i, v in enumerate(parent.values) if v is read), None)
        key = parent.keys[index] if index is not None else None
        return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else _NOT_A_SLOT
    if isinstance(parent, ast.Assign) and parent.value is read and len(parent.targets) == 1:
        target = parent.targets[0]
        if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
            return target.slice.value
    return _NOT_A_SLOT


def _loaded_slot(facts, arg: ast.AST):
    """The slot `load_state_dict(arg)` reads: "" for `torch.load(f)` itself, the key of
    `ckpt["model"]`, else _NOT_A_SLOT."""
    if isinstance(arg, ast.Call) and facts.resolve(arg.func) == "torch.load":
        return ""
    if isinstance(arg, ast.Subscript) and isinstance(arg.slice, ast.Constant) and isinstance(arg.slice.value, str):
        return arg.slice.value
    return _NOT_A_SLOT


def _state_dict_reads(expr: ast.AST) -> Iterator[ast.Call]:
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "state_dict":
            yield node
