"""Which calls draw random numbers, and when a draw happens at all.

Inductor generates random numbers with its own kernels, not eager's generator, so a
draw in compiled code differs from eager with the same seed (CL303). This module
recognizes a draw by its meaning, not its spelling:

- `random_draw`: `torch.rand*`/`randn*`/`randint*`/`randperm`/`bernoulli`/`multinomial`/
  `normal`/`poisson`, in-place samplers (`x.normal_()`, `x.uniform_()`, ...),
  `F.gumbel_softmax`/`F.rrelu`, `F.dropout*`/`torch.dropout` with `p` not 0 and
  `training` not False, `F.scaled_dot_product_attention(..., dropout_p=p)`, and
  `self.drop(x)` where the class sets `self.drop = nn.Dropout(p)` (or a container
  holding one) with `p` not 0 (nor a parameter defaulting to 0); an explicit
  `generator=` is not traced through by Dynamo and draws like eager;
- `draws_from_eager_generator`: `torch.multinomial`, `torch.randperm`, which Inductor
  runs as eager's kernels (a compiled one matches eager unless a generated draw ran
  before it in compiled code);
- `train_mode_only`: code under `if self.training:` or after an early
  `if not self.training: return` (timm's DropPath);
- `trains_at_every_site`: its mirror (every compile site's file only ever trains the
  compiled module);
- `eval_at_every_site`: every compile site compiles a module put in eval mode
  (`torch.compile(model.eval())`, `model.eval()` before) never set back to train;
- `draws_like_eager`: the region sets `torch._inductor.config.fallback_random = True`
  (in its files or site options), or runs a non-Inductor backend.
"""
from __future__ import annotations

import ast
from typing import Optional

from ..compiled.values import chain_text, literal, site_call, target_history
from ..compiled.wrappers import DATA_PARALLEL
from ..reach.queries import class_attrs, number_value, region_sets_config, runs_inductor
from ..reach.regions import COMPILE
from ..semantic.bindings import bindings_under
from ..semantic.signatures import call_argument, parameter_names

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
# draws Inductor runs as ATen kernels on every device, from eager's generator
# (torch/_inductor/lowering.py: `make_fallback(aten.multinomial.default)`,
# `make_fallback(aten.randperm)`, no decomposition): compiled, they match eager with the
# same seed unless a draw Inductor generates itself ran first in compiled code
# (scripts/measure/rng_fallback_ops.py)
ATEN_FALLBACK_DRAWS = frozenset({"multinomial", "randperm"})


def draws_like_eager(facts, region) -> bool:
    """Compiled draws match eager here: `fallback_random = True`, or no Inductor."""
    return region_sets_config(facts, region, "fallback_random", True) or not runs_inductor(facts, region)


def random_draw(facts, call: ast.Call) -> Optional[tuple[str, bool]]:
    """(what, depends-on-train-mode) when `call` draws random numbers."""
    dotted = facts.resolve(call.func) or ""
    if any(k.arg == "generator" for k in call.keywords):
        return None
    if dotted.startswith("torch.nn.functional."):
        name = dotted.rsplit(".", 1)[-1]
        if name in DROPOUT_FUNCS:
            return _dropout(facts, call, f"`{facts.text(call.func)}(...)`", 1, 2)
        if name == "scaled_dot_product_attention":
            return _attention_dropout(facts, call)
        if name in OTHER_RNG_FUNCS:
            return f"`{facts.text(call.func)}(...)`", name == "rrelu"
        return None
    if dotted.startswith("torch.") and dotted.count(".") == 1:
        name = dotted.rsplit(".", 1)[-1]
        if name in RNG_FUNCS:
            return f"`{facts.text(call.func)}(...)`", False
        if name in DROPOUT_FUNCS:
            return _dropout(facts, call, f"`{facts.text(call.func)}(...)`", 1, 2, keyword="train")
        return None
    if isinstance(call.func, ast.Attribute) and not dotted:
        attr = call.func.attr
        if attr in RNG_METHODS:
            return f"`.{attr}()`", False
        base = call.func.value
        if isinstance(base, ast.Name) and base.id == "self":
            kind = _self_module(facts, call, attr)
            if kind is not None:
                return kind
    return None


def draws_from_eager_generator(facts, call: ast.Call) -> bool:
    """`call` is `torch.multinomial`/`torch.randperm` or `t.multinomial(...)`
    (ATEN_FALLBACK_DRAWS): Inductor leaves the draw to eager's kernel and generator."""
    dotted = facts.resolve(call.func)
    if dotted is not None:
        return dotted.startswith("torch.") and dotted.count(".") == 1 and dotted[6:] in ATEN_FALLBACK_DRAWS
    return isinstance(call.func, ast.Attribute) and call.func.attr == "multinomial"


def always_zero(facts, at, p) -> bool:
    """A dropout probability that is 0 whenever it is read: `0.0`; `a if c else b` with
    both zero; `self.p` set only to 0 in the class; `self.drop.p` where every
    `self.drop = nn.Dropout(q)` of the class has a literal `q` of 0 (a `q` that is a
    constructor parameter defaulting to 0 is still reported, as latent: configurations
    set it, unless every construction of the class leaves it 0: `_zero_constructed`)."""
    if number_value(p) == 0:
        return True
    if isinstance(p, ast.IfExp):
        return always_zero(facts, at, p.body) and always_zero(facts, at, p.orelse)
    text = chain_text(p) or ""
    if not text.startswith("self."):
        return False
    if text.count(".") == 2 and text.endswith(".p"):
        modules = [(node, value) for node, value in class_attrs(facts, at).get(text.split(".")[1], ())]
        return bool(modules) and all(dropout_module_p(facts, value) in (0, 0.0) or _zero_constructed(facts, node, value)
                                     for node, value in modules)
    if text.count(".") == 1:
        cls = next((a for a in facts.ancestors(at) if isinstance(a, ast.ClassDef)), None)
        values = [
            sub.value for sub in (ast.walk(cls) if cls is not None else ())
            if isinstance(sub, ast.Assign) and any(chain_text(t) == text for t in sub.targets)
        ]
        return bool(values) and all(number_value(v) == 0 for v in values)
    return False


def is_dropout_layer(facts, call: ast.AST) -> bool:
    """`call` builds one of torch's dropout layers (`nn.Dropout(...)`, `nn.Dropout2d(...)`)."""
    if not isinstance(call, ast.Call):
        return False
    dotted = facts.resolve(call.func) or ""
    return dotted.startswith("torch.nn.") and dotted.rsplit(".", 1)[-1] in DROPOUT_MODULES


def dropout_module_p(facts, module: ast.Call) -> Optional[float]:
    """The literal probability of `nn.Dropout(q)` (0.5 when not given); None when `q` is
    not a number or `module` is not a dropout layer."""
    if not is_dropout_layer(facts, module):
        return None
    p = call_argument(module, 0, "p")
    return 0.5 if p is None else number_value(p)


def _zero_dropout(facts, stmt, module: ast.Call) -> bool:
    """`nn.Dropout(q)` with `q` zero (a literal, a parameter defaulting to 0, or an
    `__init__` parameter every construction of the class leaves 0)."""
    p = call_argument(module, 0, "p")
    return p is not None and (number_value(p) == 0 or _zero_default(facts, stmt, p) or _zero_constructed(facts, stmt, module))


def _zero_constructed(facts, stmt, module: ast.Call) -> bool:
    """`self.drop = nn.Dropout(q)` in `__init__`, `q` a parameter of it, and every
    construction of the class in the project passes 0 for it or leaves a default of 0,
    directly or through the `__init__` of a class that builds it and forwards its own
    parameter (passed_flags.constructed_values; olmoearth's `Block(attn_drop=0.0)` ->
    `Attention(attn_drop=attn_drop)` -> `nn.Dropout(attn_drop)`, bench/dev45, judged
    false in bench/dev_findings). A class built from a configuration, by `**kwargs` or
    through a registry is not known: still reported (timm's `drop_rate`)."""
    if not is_dropout_layer(facts, module):
        return False
    from ..branches.passed_flags import constructed_values

    values = constructed_values(facts, stmt, call_argument(module, 0, "p"))
    return bool(values) and all(type(v) in (int, float) and v == 0 for v in values)


def _dropout(facts, call, label, p_index, training_index, keyword="training"):
    p = call_argument(call, p_index, "p")
    if p is not None and (always_zero(facts, call, p) or _default_zero_never_passed(facts, call, p)
                          or _zero_from_compiled_callers(facts, call, p)):
        return None
    training = call_argument(call, training_index, keyword)
    if training is None:
        return label, False  # defaults to True: always random
    value = literal(training)
    if value is False:
        return None
    if value is True:
        return label, False
    return label, True  # self.training: train mode only


def _attention_dropout(facts, call) -> Optional[tuple[str, bool]]:
    """`F.scaled_dot_product_attention(q, k, v, mask, dropout_p)`: dropout on the
    attention weights whenever `dropout_p` is not 0 (there is no `training` flag:
    `dropout_p=self.p if self.training else 0.0` is the train-mode spelling)."""
    p = _assigned_rate(facts, call_argument(call, 4, "dropout_p"))
    if p is None or always_zero(facts, call, p) or _default_zero_never_passed(facts, call, p) \
            or _zero_from_compiled_callers(facts, call, p):
        return None  # also `self.attn_drop.p if self.training else 0.0` with `nn.Dropout(0.0)`
    label = f"`{facts.text(call.func)}(..., dropout_p=...)`"
    if isinstance(p, ast.IfExp):
        if "training" in facts.text(p.test) and any(always_zero(facts, call, b) for b in (p.body, p.orelse)):
            return label, True
        return label, False
    if isinstance(p, ast.Attribute) and isinstance(p.value, ast.Name) and p.value.id == "self":
        return label, True
    return label, False


def _assigned_rate(facts, p: Optional[ast.AST]) -> Optional[ast.AST]:
    """The rate a local name holds where it is its one assignment's value: `dropout_p =
    self.dropout_p if self.training else 0.0`, then `dropout_p=dropout_p` (SAM 2's
    RoPE attention, bench/dev_findings) is the inline train-mode spelling; else `p`."""
    if not isinstance(p, ast.Name):
        return p
    reaching = bindings_under(facts).reaching(p)
    if len(reaching) == 1 and reaching[0].kind == "assign" and isinstance(reaching[0].value, ast.IfExp):
        return reaching[0].value
    return p


def _self_module(facts, call, attr) -> Optional[tuple[str, bool]]:
    """`self.drop(x)` where `self.drop = nn.Dropout(p)` (or a Sequential holding one)."""
    for node, value in class_attrs(facts, call).get(attr, ()):
        for sub in ast.walk(value):
            if is_dropout_layer(facts, sub) and not _zero_dropout(facts, node, sub):
                if sub is node.value:
                    return f"`self.{attr}` (an `nn.{facts.resolve(sub.func).rsplit('.', 1)[-1]}`)", True
                return f"`self.{attr}` (holding `{facts.text(sub)}`)", True
    return None


def train_mode_only(facts, node) -> bool:
    """Code that runs only in train mode: under `if self.training:`, in the arm of a
    conditional expression that `self.training` picks, after `self.training and` (or
    `not self.training or`: Python evaluates the rest only in train mode, index-tts'
    `if self.training and torch.rand(1) < p:`, bench/fresh_reads batch 5), or after an
    early `if not self.training: return ...` (timm's DropPath)."""
    return _mode_only(facts, node, True)


def _mode_only(facts, node, training: bool) -> bool:
    def in_mode(test, negated):
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return in_mode(test.operand, not negated)
        if isinstance(test, ast.BoolOp):
            if isinstance(test.op, ast.And) and not negated:
                return any(in_mode(v, negated) for v in test.values)
            if isinstance(test.op, ast.Or) and negated:
                return any(in_mode(v, negated) for v in test.values)
            return False
        return chain_text(test) == "self.training" and negated is not training

    child = node
    for anc in facts.ancestors(node):
        if isinstance(anc, ast.If):
            in_body = any(child is n for n in anc.body)
            if in_mode(anc.test, not in_body):
                return True
        elif isinstance(anc, ast.IfExp) and child is not anc.test:
            if in_mode(anc.test, child is anc.orelse):
                return True
        elif isinstance(anc, ast.BoolOp):
            # the operands before `child` are evaluated first; `and` goes on while they are
            # true, `or` while they are false
            earlier = anc.values[:next(i for i, v in enumerate(anc.values) if v is child)]
            if any(in_mode(v, isinstance(anc.op, ast.Or)) for v in earlier):
                return True
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = anc.body if isinstance(anc.body, list) else []
            stmt = facts.statement_of(node)
            for earlier in body:
                if earlier.lineno >= stmt.lineno:
                    break
                if (earlier.end_lineno or earlier.lineno) >= stmt.lineno:
                    break  # the `if` holding `node`: its own test was read above
                if isinstance(earlier, ast.If) and any(isinstance(b, ast.Return) for b in earlier.body):
                    if in_mode(earlier.test, True):
                        return True
            return False
        child = anc
    return False


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


# methods whose callers call the instance (`block(x)`), never the method by name
_CALLED_THROUGH_INSTANCE = frozenset({"forward", "__call__"})


def _default_zero_never_passed(facts, call, p) -> bool:
    """`p` is a parameter of the function around `call` that defaults to 0, the function
    is called by name in the project, and no call passes that parameter (by position,
    keyword or `**kwargs`): the probability is 0 on every path the code has (a helper
    `attention(q, k, v, dropout_p=0.0)` nobody calls with a rate). A function nobody
    calls by name (a `forward`, a callback) may get a rate from anywhere: still reported."""
    if not isinstance(p, ast.Name) or not _zero_default(facts, call, p):
        return False
    func = facts.enclosing_function(call)
    if func is None or isinstance(func, ast.Lambda) or func.name in _CALLED_THROUGH_INSTANCE:
        return False
    from ..project.calls import calls_named

    args = func.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    index = positional.index(p.id) if p.id in positional else None
    is_method = isinstance(facts.parent(func), ast.ClassDef)
    found = False
    for _other, caller in calls_named(facts, func.name):
        if caller is call:
            continue
        found = True
        if any(k.arg is None or k.arg == p.id for k in caller.keywords):
            return False  # passed by keyword, or maybe inside **kwargs
        if any(isinstance(a, ast.Starred) for a in caller.args):
            return False
        if index is not None:
            # `obj.method(a, b)` fills the parameters after `self`
            shift = 1 if is_method and isinstance(caller.func, ast.Attribute) else 0
            if len(caller.args) + shift > index:
                return False
    return found


def _zero_from_compiled_callers(facts, call, p) -> bool:
    """`p` is a parameter of the def around `call`, and every call of that def from
    compiled code passes 0 for it or leaves a default of 0 (passed_flags.passed_values:
    constants, and parameters forwarded from their own compiled callers; a parameter the
    def rebinds is unknown there): the rate is 0
    wherever the call runs compiled, and dropout with a rate of 0 draws nothing. The
    Foley pack's `attention(..., drop_rate=0)`, which an eager caller does give a rate
    (bench/dev34)."""
    if not isinstance(p, ast.Name):
        return False
    func = facts.enclosing_function(call)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if p.id not in parameter_names(func.args):
        return False
    from ..branches.passed_flags import passed_values

    values = passed_values(facts, func, p.id)
    return bool(values) and all(type(v) in (int, float) and v == 0 for v in values)


def _compile_calls(facts, region) -> Optional[list]:
    """(file's facts, compile call) of every compile site of the region; None when it has
    none, or when one's call is not found (then nothing can be said of every site)."""
    calls = []
    for site in region.sites:
        if site.kind != COMPILE:
            continue
        found = site_call(facts, site)
        if found is None:
            return None
        calls.append(found)
    return calls or None


def eval_at_every_site(facts, region) -> bool:
    """Every compile site compiles a module shown in eval mode, never set back to train.
    Only compile sites: a trace or export that also reaches the code draws nothing
    compiled (doctr's LW-DETR, compiled in eval mode by a test and exported to ONNX by a
    helper, bench/dev12)."""
    calls = _compile_calls(facts, region)
    if calls is None:
        return False
    for other, cc in calls:
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


def trains_at_every_site(facts, region) -> bool:
    """Every compile site compiles a module its file only ever puts in train mode: a
    `.train()` (or `.train(True)`) on a name the compiled module is bound to, no `.eval()`
    or other `.train(...)` on one, and none of those names handed to another call (but a
    DDP or DataParallel) or returned: an `evaluate(model)` elsewhere may put it in eval mode.
    eval_at_every_site's mirror, for code that runs only in eval mode (tabicl's inference
    path: its trainer compiles the model and calls `self.model.train()` every step,
    bench/dev41; see branches/passed_flags.py). Only compile sites, as there."""
    calls = _compile_calls(facts, region)
    if calls is None:
        return False
    for other, cc in calls:
        names = _compiled_module_names(other, cc)
        if not names:
            return False
        trained = False
        for node in other.nodes(ast.Call):
            if node is cc.node:
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and chain_text(func.value) in names:
                if func.attr == "eval" or func.attr == "train" and node.args and literal(node.args[0]) is not True:
                    return False
                trained = trained or func.attr == "train"
                continue
            if any(chain_text(arg) in names for arg in [*node.args, *(k.value for k in node.keywords)]) \
                    and other.resolve(node.func) not in DATA_PARALLEL:  # (a DDP shares the module's mode)
                return False
        if not trained or any(chain_text(r.value) in names for r in other.nodes(ast.Return) if r.value is not None):
            return False
    return True


def _compiled_module_names(facts, cc) -> set:
    """The names (chain texts) a compiled module is bound to in its file: what the compile
    call is assigned to (the target itself for `m.compile()`), then what is assigned from
    those, from a DDP or DataParallel of one (compiled/wrappers.py's DATA_PARALLEL), or from
    such a wrapper's `.module`."""
    names = set()
    if cc.api == "Module.compile" and cc.target is not None:  # compiled in place
        text = chain_text(cc.target)
        if text:
            names.add(text)
    assigns = list(facts.nodes(ast.Assign))
    for node in assigns:
        if node.value is cc.node:
            names |= {t for t in map(chain_text, node.targets) if t}
    for _ in range(3):  # `self.model = model`, `self.model = DDP(model)`, `raw = self.model.module`
        size = len(names)
        for node in assigns:
            value = node.value
            held = chain_text(value)
            if held is not None and held.endswith(".module"):
                held = held[: -len(".module")]
            if isinstance(value, ast.Call) and facts.resolve(value.func) in DATA_PARALLEL and value.args:
                held = chain_text(value.args[0])
            if held in names:
                names |= {t for t in map(chain_text, node.targets) if t}
        if len(names) == size:
            break
    return names


TRAINING_CALLS = frozenset({"backward", "train"})  # `loss.backward()`, `model.train()`


def trains_at_some_site(facts, region) -> bool:
    """Some compile site of the region sits in a file that trains: it calls `.backward()`
    or `.train()` (not `.train(False)`). Dropout draws random numbers only in train mode;
    on the oracle bench (bench/results.md, issue 20) 618 of CL303's 672 findings were such
    draws, and 472 of the 500 on executed lines ran only in eval mode, where they draw
    nothing. Only compile sites: an export in a training script compiles nothing."""
    for site in region.sites:
        if site.kind != COMPILE:
            continue
        found = site_call(facts, site)
        if found is None:
            continue
        other, _ = found
        for call in other.nodes(ast.Call):
            f = call.func
            if isinstance(f, ast.Attribute) and f.attr in TRAINING_CALLS:
                if not (f.attr == "train" and call.args and literal(call.args[0]) is False):
                    return True
    return False

