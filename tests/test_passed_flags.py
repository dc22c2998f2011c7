"""Branches a def's compiled callers close (analysis/branches/passed_flags.py), as CL303
and CL508 ask it: openpi's `if train:` augmentation reached from a compiled
`sample_actions` that passes `train=False` through a method forwarding its own `train`
(bench/dev9, judged false in bench/dev_findings), KataGo's `if include_norms:` metrics
every compiled caller passes False (bench/dev47)."""
from __future__ import annotations

import os
import textwrap

from compile_lint.config import Settings
from compile_lint.engine import Linter, Selection

PREP = """
import torch


def preprocess(image, *, train: bool = True):
    if train:
        image = image * (0.7 + torch.rand(1) * 0.6)
    return image


def metrics(x, include_norms, mode="plain"):
    out = x.sum()
    if include_norms:
        print(out.item())
        norms(x)
    if mode == "debug":
        print(out.item())
    return out


def norms(x):
    for row in x:
        print(row.norm().item())
"""

MODEL = """
import torch
from torch import nn
from pkg.prep import preprocess, metrics


class Policy(nn.Module):
    def _prep(self, obs, *, train=True):
        return preprocess(obs, train=train)

    def forward(self, obs):
        return self._prep(obs, train=True)

    def sample_actions(self, obs):
        x = self._prep(obs, train=False)
        return metrics(x, False)


policy = Policy()
fast = torch.compile(policy.sample_actions)
"""


def lint(tmp_path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection(select=("CL303", "CL508")))
    results = linter.lint([str(tmp_path / rel) for rel in files])
    return sorted((os.path.basename(r.path), f.row, f.code) for r in results for f in r.findings)


def test_a_branch_every_compiled_caller_closes_is_not_compiled_code(tmp_path):
    # sample_actions passes train=False through _prep, which forwards its own `train`,
    # and include_norms=False; mode keeps its default
    assert lint(tmp_path, {"pkg/__init__.py": "", "pkg/prep.py": PREP, "pkg/model.py": MODEL}) == []


def test_one_compiled_caller_that_opens_the_branch_keeps_it(tmp_path):
    # compiling the whole policy compiles forward, which passes train=True
    found = lint(tmp_path, {"pkg/__init__.py": "", "pkg/prep.py": PREP,
                            "pkg/model.py": MODEL + "whole = torch.compile(policy)\n"})
    assert found == [("prep.py", 7, "CL303")]


def test_a_def_compiled_itself_is_open_whatever_its_other_callers_pass(tmp_path):
    found = lint(tmp_path, {"pkg/__init__.py": "", "pkg/prep.py": PREP,
                            "pkg/model.py": MODEL + "direct = torch.compile(preprocess)\n"})
    assert found == [("prep.py", 7, "CL303")]


def test_a_value_that_is_not_a_constant_keeps_the_branch(tmp_path):
    model = MODEL.replace("return metrics(x, False)", "return metrics(x, obs.shape[0] > 1)")
    found = lint(tmp_path, {"pkg/__init__.py": "", "pkg/prep.py": PREP, "pkg/model.py": model})
    # the branch's print and `.item()`, and the helper it calls (every compiled call of
    # `norms` sits in that branch, open now)
    assert found == [("prep.py", 14, "CL508"), ("prep.py", 14, "CL508"), ("prep.py", 23, "CL508"), ("prep.py", 23, "CL508")]


def test_a_helper_read_other_than_by_a_call_may_run_compiled_where_this_does_not_see(tmp_path):
    # `norms` is called only in the closed branch, but also handed on as a value
    model = MODEL + "hooks = [norms]\n"
    model = model.replace("from pkg.prep import preprocess, metrics", "from pkg.prep import preprocess, metrics, norms")
    found = lint(tmp_path, {"pkg/__init__.py": "", "pkg/prep.py": PREP, "pkg/model.py": model})
    assert found == [("prep.py", 23, "CL508"), ("prep.py", 23, "CL508")]


def test_a_method_called_from_outside_its_class_keeps_its_branches_open(tmp_path):
    # `_prep(train=True)` from a compiled function outside the class: its callers are not
    # all `self._prep(...)` in the class, so nothing is known of `train`
    model = MODEL + (
        "@torch.compile\n"
        "def augmenting(p, obs):\n"
        "    return p._prep(obs, train=True)\n"
    )
    found = lint(tmp_path, {"pkg/__init__.py": "", "pkg/prep.py": PREP, "pkg/model.py": model})
    assert found == [("prep.py", 7, "CL303")]


PARITY = """
import contextlib


@contextlib.contextmanager
def deterministic(policy):
    original = policy._prep

    def prep(obs, *, train=True):
        return original(obs, train=FLAG)

    policy._prep = prep
    try:
        yield
    finally:
        policy._prep = original
"""


def test_a_method_wrapped_through_a_local_alias_passes_what_the_alias_calls_pass(tmp_path):
    # lerobot's openpi parity helper (bench/fresh_reads): the method read into a local,
    # called with train=False and put back; sample_actions' own call passes False too
    found = lint(tmp_path, {"pkg/__init__.py": "", "pkg/prep.py": PREP, "pkg/model.py": MODEL,
                            "pkg/parity.py": PARITY.replace("FLAG", "False")})
    assert found == []


def test_an_alias_call_that_opens_the_branch_keeps_it_even_outside_compiled_code(tmp_path):
    # the wrapper stands in for the method the compiled sample_actions calls
    found = lint(tmp_path, {"pkg/__init__.py": "", "pkg/prep.py": PREP, "pkg/model.py": MODEL,
                            "pkg/parity.py": PARITY.replace("FLAG", "True")})
    assert found == [("prep.py", 7, "CL303")]


def test_an_alias_used_other_than_by_calling_it_keeps_the_branch(tmp_path):
    parity = PARITY.replace("FLAG", "False") + "\n\ndef leak(policy, hooks):\n    fn = policy._prep\n    hooks.append(fn)\n"
    found = lint(tmp_path, {"pkg/__init__.py": "", "pkg/prep.py": PREP, "pkg/model.py": MODEL, "pkg/parity.py": parity})
    assert found == [("prep.py", 7, "CL303")]


def test_an_attribute_of_an_instance_named_like_the_helper_is_not_a_read_of_it(tmp_path):
    # `self.encoder.layers[0].metrics` is another object's attribute: it can hold the
    # module-level `metrics` only if the code stored it there, by a read seen as such
    other = (
        "from torch import nn\n\n\n"
        "class Report(nn.Module):\n"
        "    def summary(self):\n"
        "        return self.encoder.layers[0].metrics.total, self.metrics\n"
    )
    files = {"pkg/__init__.py": "", "pkg/prep.py": PREP, "pkg/model.py": MODEL, "pkg/report.py": other}
    assert lint(tmp_path, files) == []


def test_a_helper_imported_under_another_name_has_callers_not_read(tmp_path):
    # `metrics` called as `m(x, True)` from compiled code: nothing is known of its
    # callers, so both of its branches are open (and `norms`, called in one)
    model = MODEL + (
        "from pkg.prep import metrics as m\n\n\n"
        "@torch.compile\n"
        "def noisy(x):\n"
        "    return m(x, True)\n"
    )
    found = lint(tmp_path, {"pkg/__init__.py": "", "pkg/prep.py": PREP, "pkg/model.py": model})
    assert found == [("prep.py", row, "CL508") for row in (14, 14, 17, 17, 23, 23)]


ENCODER = """
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, dim, dynamic_chunk=False):
        super().__init__()
        self.dynamic_chunk = dynamic_chunk
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        if self.dynamic_chunk:
            print(x.sum().item())
        return self.proj(x)


model = torch.compile(Encoder(8))
"""


def test_a_flag_every_construction_leaves_false_closes_the_branch(tmp_path):
    assert lint(tmp_path, {"pkg/__init__.py": "", "pkg/enc.py": ENCODER}) == []


def test_a_flag_set_outside_init_or_a_class_built_from_its_name_keeps_the_branch(tmp_path):
    opened = [("enc.py", 14, "CL508"), ("enc.py", 14, "CL508")]
    for extra in ("model.dynamic_chunk = True\n", 'REGISTRY = {"encoder": "pkg.enc.Encoder"}\n',
                  "class Chunked(Encoder):\n    pass\n", "build = Encoder\n"):
        assert lint(tmp_path, {"pkg/__init__.py": "", "pkg/enc.py": ENCODER + extra}) == opened, extra


def test_a_registered_class_or_a_rebound_parameter_keeps_the_branch(tmp_path):
    opened = [("enc.py", 15, "CL508"), ("enc.py", 15, "CL508")]
    registered = ENCODER.replace("class Encoder(nn.Module):", "REGISTRY = {}\n\n\ndef register(cls):\n"
                                 "    REGISTRY[cls.__name__] = cls\n    return cls\n\n\n@register\nclass Encoder(nn.Module):")
    found = lint(tmp_path, {"pkg/__init__.py": "", "pkg/enc.py": registered})
    assert [(f, row - 9, code) for f, row, code in found] == [("enc.py", 14, "CL508"), ("enc.py", 14, "CL508")]
    rebound = ENCODER.replace("        self.dynamic_chunk = dynamic_chunk",
                              "        dynamic_chunk = dynamic_chunk or dim > 4\n        self.dynamic_chunk = dynamic_chunk")
    assert lint(tmp_path, {"pkg/__init__.py": "", "pkg/enc.py": rebound}) == opened


def test_a_parameter_its_def_rebinds_is_not_what_the_callers_passed(tmp_path):
    # every compiled call passes train=False, but the def reads a value of its own
    prep = PREP.replace("    if train:\n", "    train = train or image.ndim == 4\n    if train:\n")
    found = lint(tmp_path, {"pkg/__init__.py": "", "pkg/prep.py": prep, "pkg/model.py": MODEL})
    assert found == [("prep.py", 8, "CL303")]


FORWARDED_RATE = """
import torch
from torch import nn
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
    def __init__(self, dim, attn_drop=0.0, verbose=False):
        super().__init__()
        self.verbose = verbose
        self.attn = Attention(dim, attn_drop=attn_drop)

    def forward(self, x):
        if self.verbose:
            print(x.sum().item())
        return x + self.attn(x)


class Encoder(nn.Module):
    def __init__(self, dim, depth, attn_drop=0.0, verbose=False):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim, attn_drop=attn_drop, verbose=verbose) for _ in range(depth)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


model = torch.compile(Encoder(8, 2))
model.train()
"""


def test_a_constructor_parameter_every_construction_forwards_as_its_default_is_that_default(tmp_path):
    # Encoder(8, 2) leaves attn_drop 0.0 and verbose False, and forwards both to Block,
    # which forwards attn_drop to Attention: the SDPA's rate is 0 (Attention's own
    # default, 0.1, is never used) and `if self.verbose:` is closed (olmoearth's
    # Block -> Attention, bench/dev45)
    assert lint(tmp_path, {"pkg/__init__.py": "", "pkg/enc.py": FORWARDED_RATE}) == []


def test_a_forwarded_constructor_parameter_one_construction_sets_stays_open(tmp_path):
    rate = FORWARDED_RATE.replace("Encoder(8, 2))", "Encoder(8, 2)); other = Block(8, attn_drop=0.2)")
    assert lint(tmp_path, {"pkg/__init__.py": "", "pkg/enc.py": rate}) == [("enc.py", 15, "CL303")]
    verbose = FORWARDED_RATE.replace("Encoder(8, 2))", "Encoder(8, 2, verbose=True))")
    assert lint(tmp_path, {"pkg/__init__.py": "", "pkg/enc.py": verbose}) == [("enc.py", 26, "CL508"), ("enc.py", 26, "CL508")]


def test_a_class_built_from_keyword_arguments_has_constructions_not_read(tmp_path):
    # `Encoder(**cfg)`: what the configuration holds is not read, so neither is what
    # Block and Attention receive (timm's drop rates, set through create_model's kwargs)
    kwargs = FORWARDED_RATE.replace("Encoder(8, 2))", "Encoder(**{'dim': 8, 'depth': 2, 'verbose': True}))")
    assert lint(tmp_path, {"pkg/__init__.py": "", "pkg/enc.py": kwargs}) == [
        ("enc.py", 15, "CL303"), ("enc.py", 26, "CL508"), ("enc.py", 26, "CL508")]


# tabicl (bench/dev41): the trainer compiles the model and calls `self.model.train()`
# every step; the inference path runs only under `if not self.training:`, in methods of
# the same name as other classes' own, one of them recursive
TABULAR = """
import torch
from torch import nn


class Learner(nn.Module):
    def _fit(self, y, depth):
        classes = torch.unique(y)
        if depth < 3:
            self._fit(y[y > 0], depth + 1)
        return classes

    def _infer(self, x):
        print("inference")
        return self._fit(x, 0)

    def forward(self, x):
        if self.training:
            return x * 2
        else:
            return self._infer(x)


class Embedder(nn.Module):
    def _infer(self, x):
        return x

    def forward(self, x):
        return self._infer(x)
"""

TRAINER = """
import torch
from pkg.model import Learner


class Trainer:
    def build(self):
        model = torch.compile(Learner())
        self.model = model

    def step(self, x):
        self.model.train()
        loss = self.model(x).sum()
        loss.backward()
"""


def test_eval_mode_code_a_module_compiled_only_for_training_never_runs_is_not_compiled_code(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/model.py": TABULAR, "pkg/train.py": TRAINER}
    assert lint(tmp_path, files) == []


def test_eval_mode_code_is_compiled_code_where_the_compiled_module_may_be_put_in_eval_mode(tmp_path):
    inference = [("model.py", 8, "CL508"), ("model.py", 14, "CL508")]  # unique, print
    for trainer in (
        TRAINER.replace("self.model.train()", "self.model.eval()"),  # evaluated in this file
        TRAINER.replace("self.model.train()", "self.model.train(self.flag)"),  # a mode the code does not say
        TRAINER + "\n    def validate(self, x):\n        return evaluate(self.model, x)\n",  # handed on
        TRAINER + "\n    def model_for_eval(self):\n        return self.model\n",  # returned
    ):
        files = {"pkg/__init__.py": "", "pkg/model.py": TABULAR, "pkg/train.py": trainer}
        assert lint(tmp_path, files) == inference, trainer


def test_a_base_class_calling_a_method_of_the_name_may_call_the_override(tmp_path):
    # Learner now derives from a base whose `run` calls `self._infer(...)` outside any
    # mode test: on a Learner that is Learner's `_infer` (a subclass's own `_infer`, as
    # Embedder's, is never Learner's)
    base = "\n\nclass Base(nn.Module):\n    def _infer(self, x):\n        return x\n\n" \
           "    def run(self, x):\n        return self._infer(x)\n"
    model = TABULAR.replace("\n\nclass Learner(nn.Module):", base + "\n\nclass Learner(Base):")
    files = {"pkg/__init__.py": "", "pkg/model.py": model, "pkg/train.py": TRAINER}
    assert lint(tmp_path, files) == [("model.py", 16, "CL508"), ("model.py", 22, "CL508")]


def test_code_after_an_early_return_of_the_other_mode_is_that_mode_only_the_return_branch_is_not(tmp_path):
    # the `if not self.training:` branch itself runs in eval mode: its break is reported
    # without "when training" (it was read as code after an early return of eval mode)
    model = """
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            if not self.training:
                print("eval")
                return x
            print("train")
            return x * 2


    net = torch.compile(Net())
    """
    linter_files = {"pkg/__init__.py": "", "pkg/net.py": model}
    for rel, text in linter_files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    linter = Linter(lambda _p: Settings(root=str(tmp_path)), Selection(select=("CL508",)))
    results = linter.lint([str(tmp_path / rel) for rel in linter_files])
    messages = sorted((f.row, f.message) for r in results for f in r.findings)
    assert [(row, "when training" in message) for row, message in messages] == [(9, False), (11, True)]


def test_a_data_parallel_wrapper_of_the_compiled_module_shares_its_mode(tmp_path):
    # `self.model = DDP(model)` (tabicl's distributed branch): handing the module to a DDP
    # is no unseen `evaluate(model)`; a project class that happens to be named DDP is
    trainer = TRAINER.replace("import torch\n", "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n", 1)
    trainer = trainer.replace("        self.model = model\n", "        self.model = DDP(model)\n")
    files = {"pkg/__init__.py": "", "pkg/model.py": TABULAR, "pkg/train.py": trainer}
    assert lint(tmp_path, files) == []
    own = trainer.replace("from torch.nn.parallel import DistributedDataParallel as DDP\n", "from pkg.wrap import DDP\n")
    files = {**files, "pkg/train.py": own, "pkg/wrap.py": "class DDP:\n    def __init__(self, m):\n        self.m = m\n"}
    assert lint(tmp_path, files) == [("model.py", 8, "CL508"), ("model.py", 14, "CL508")]


AUGMENT = """
import random
import torch
from torch import nn


def augment(x, test_mode=False):
    if random.random() < 0.5 and not test_mode:
        x = x + torch.rand_like(x)
    elif x.dim() > 3 or test_mode:
        return x
    else:
        x = x * torch.rand(1)
    return x


class Net(nn.Module):
    def forward(self, x):
        return augment(x, test_mode=MODE)


net = torch.compile(Net())
"""


def test_an_operand_of_a_conjunction_that_holds_closes_the_branch(tmp_path):
    # stereoanywhere's augmentations (bench/dev43): `if random.random() < p and not test_mode:`
    # runs only where `not test_mode` holds; the `else` of `... or test_mode` only where
    # `test_mode` fails
    assert lint(tmp_path, {"aug.py": AUGMENT.replace("MODE", "True")}) == []
    assert lint(tmp_path, {"aug.py": AUGMENT.replace("MODE", "False")}) == [("aug.py", 9, "CL303"), ("aug.py", 13, "CL303")]
