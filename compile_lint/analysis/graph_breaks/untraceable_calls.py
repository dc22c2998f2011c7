"""Calls Dynamo does not trace: it breaks the graph at them, whatever the tensors hold.

Measured on torch 2.13 CPU by scripts/measure/graph_break_causes.py (each construct
compiled alone, its breaks and their official IDs):

- a method of a `logging.Logger` (`logger.warning(...)`, `logger.info(...)`, also a
  method a library adds to the class, transformers' `logger.warning_once`): GB0291,
  even at a disabled level. The logger is what `logging.getLogger(...)` or a project's
  `get_logger(...)` wrapper returns (transformers, diffusers and accelerate name theirs
  so), held by a module-level name, a local one or `self.<attr>`. Left alone when the
  file puts functions into `torch._dynamo.config.ignore_logging_functions` (or its old
  name `ignore_logger_methods`): Dynamo then drops those calls.
- a `logging` module function (`logging.warning(...)`): GB4841 on this release.
- `warnings.warn(...)`: a function Dynamo marks as skipped, GB0007. Left alone when the
  file puts functions into `reorderable_logging_functions` (Dynamo may then run them
  after the graph).
- calling an `nn.LSTM`/`nn.GRU`/`nn.RNN` module (`self.rnn(x)` where the class, or a
  subclass of it in the same file, assigns `self.rnn = nn.LSTM(...)`, also
  `getattr(nn, kind)(...)` under `if kind in ("LSTM", "GRU"):`): GB0014, unless
  `torch._dynamo.config.allow_rnn` is on.
- `copy.deepcopy` of a tensor or a module: GB4198 (of a plain Python object: no break).
- calling an `nn.TransformerEncoder` with a `mask` and no `is_causal`, an
  `nn.TransformerDecoder` with a `tgt_mask` and no `tgt_is_causal`, or an `nn.Transformer`
  with either: torch's `_detect_is_causal_mask` compares the mask with a causal one and
  reads the result with `bool(...)`, GB0124 at the call (in eval and train mode; the
  module is `self.<attr>` its class or a subclass in the file assigns, or `encoder`/
  `decoder` of a subclass of `nn.Transformer`: pytorch/examples' word_language_model).
- `np.random.choice(...)` in compiled code: GB0033 (transformers' `_compute_mask_indices`,
  SpecAugment in training; `np.random.rand(...)` alone is traced).
- `nn.Parameter(...)` made in compiled code, or a torch.nn layer that makes parameters
  (`nn.Linear(...)`, `nn.LayerNorm(...)`: a layer without any, `nn.ReLU()`, does not
  break): GB0264 (transformers' big_bird builds its full-attention layers inside forward).
- converting a layer in compiled code (`self.classifier.to(self.dtype)`, `.half()`: the
  class assigns it a torch.nn layer with parameters): GB0264 when the dtype or device
  changes (transformers' nllb_moe and switch_transformers routers in float16; a
  conversion that changes nothing does not break).
- `m.register_forward_hook(...)` / `register_forward_pre_hook(...)` in compiled code:
  GB0467 (transformers' output capturing installs its hooks on the first call).
- `torch._dynamo.config.patch(...)` made in compiled code: GB0007 (and GB0142 at the
  `with` that enters it; its block then runs eagerly).
- `torch.Generator(...)` made in compiled code: GB0363 (an opaque object); a method of a
  generator (`g.manual_seed(...)`, `g.get_state()`, `g.initial_seed()`...): GB7650; a
  generator passed to an op (`torch.rand(n, generator=g)`, `x.normal_(generator=g)`):
  GB0055 (not a project def given one, `self._sample(..., generator=g)`: the op inside it
  is where it breaks). Which values hold a generator: analysis/tensors/calls.py (a local every binding
  of which makes one, `self.gen = torch.Generator().manual_seed(0)`, a parameter annotated
  `torch.Generator` or filled with one by every caller in the file; `g = None` then
  `g = torch.Generator()` under a seed test, or a parameter annotated
  `Optional[torch.Generator]`, only as a method's receiver, since an op given None does
  not break).
"""
from __future__ import annotations

import ast
from typing import Optional

from ..semantic.facts import FUNCTION_NODES, ModuleFacts
from ..reach.queries import ClassAttrsFact, class_attrs
from ..tensors.calls import flow_for

LOGGER_FACTORIES = frozenset({"logging.getLogger", "logging.Logger", "logging.LoggerAdapter", "logging.getLoggerClass"})
LOGGER_WRAPPER_NAMES = frozenset({"get_logger", "getLogger"})  # a project's own: transformers.utils.logging.get_logger
LOGGING_FUNCTIONS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"})
WARN_FUNCTIONS = frozenset({"warnings.warn", "warnings.warn_explicit"})
RNN_CLASSES = frozenset({"LSTM", "GRU", "RNN"})
RNN_MODULES = ("torch.nn.", "torch.nn.modules.rnn.")
TRANSFORMER_MODULES = ("torch.nn.", "torch.nn.modules.transformer.")
# module -> (positional index of the mask, its keyword, the keyword that says whether it is causal)
CAUSAL_MASKS = {
    "TransformerEncoder": [(1, "mask", "is_causal")],
    "TransformerDecoder": [(2, "tgt_mask", "tgt_is_causal")],
    "Transformer": [(2, "src_mask", "src_is_causal"), (3, "tgt_mask", "tgt_is_causal")],
}
TRANSFORMER_PARTS = {"encoder": "TransformerEncoder", "decoder": "TransformerDecoder"}
# torch.Generator methods Dynamo does not trace (GB7650; `.device` is an attribute: traced)
GENERATOR_METHODS = frozenset({"manual_seed", "seed", "initial_seed", "get_state", "set_state", "get_offset",
                               "set_offset", "graphsafe_get_state", "graphsafe_set_state", "clone_state"})
# torch.nn layers whose constructor makes nn.Parameters (GB0264 when built in compiled code)
LAYERS_WITH_PARAMETERS = frozenset({
    "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "PReLU", "MultiheadAttention", "LSTM", "GRU",
    "RNN", "LSTMCell", "GRUCell", "RNNCell", "Transformer", "TransformerEncoderLayer", "TransformerDecoderLayer",
})
MODULE_CONVERSIONS = frozenset({"to", "half", "float", "double", "bfloat16", "type"})
HOOK_REGISTRATIONS = frozenset({"register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
                                "register_full_backward_pre_hook"})
LOCKS = frozenset({"threading.Lock", "threading.RLock", "threading.Semaphore", "threading.BoundedSemaphore",
                   "threading.Condition", "multiprocessing.Lock", "multiprocessing.RLock"})
IGNORED_LOGGING = ("ignore_logging_functions", "ignore_logger_methods")
REORDERABLE = "reorderable_logging_functions"


def module_loggers(facts: ModuleFacts) -> frozenset:
    """Module-level names bound once, to a logger (`logger = logging.get_logger(__name__)`)."""
    bound: dict[str, list] = {}
    for stmt in facts.tree.body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(stmt.value)
    return frozenset(name for name, values in bound.items()
                     if len(values) == 1 and values[0] is not None and is_logger(facts, values[0]))


def is_logger(facts: ModuleFacts, expr: ast.AST, loggers: frozenset = frozenset()) -> bool:
    """`expr` holds a `logging.Logger` (`loggers`: the file's module_loggers)."""
    if isinstance(expr, ast.Call):
        dotted = facts.resolve(expr.func)
        if dotted in LOGGER_FACTORIES:
            return True
        name = dotted.rsplit(".", 1)[-1] if dotted else getattr(expr.func, "attr", getattr(expr.func, "id", None))
        return name in LOGGER_WRAPPER_NAMES
    if isinstance(expr, ast.Name):
        return expr.id in loggers and not facts.semantic.is_shadowed(expr)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        assigned = class_attrs(facts, expr).get(expr.attr, ())
        return bool(assigned) and all(is_logger(facts, value, loggers) for _, value in assigned)
    return False


def mentions_config(facts: ModuleFacts, keys) -> bool:
    """The file names one of Dynamo's config `keys` (`torch._dynamo.config.<key>...`,
    `patch(<key>=...)`)."""
    for node in facts.nodes(ast.Attribute, ast.keyword):
        if isinstance(node, ast.keyword):
            if node.arg in keys:
                return True
        elif node.attr in keys and (facts.resolve(node) or "").startswith("torch."):
            return True
    return False


def _self_attr_call(facts: ModuleFacts, call: ast.Call):
    """(the class, the values assigned to `self.<attr>` by it and its subclasses in this
    file) for a call `self.<attr>(...)` inside a class; None otherwise."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
        return None
    cls = next((a for a in facts.ancestors(call) if isinstance(a, ast.ClassDef)), None)
    if cls is None:
        return None
    attrs = facts.get(ClassAttrsFact)
    return cls, [value for owner in [cls, *_subclasses(facts, cls)] for _, value in attrs.get(id(owner), {}).get(func.attr, ())]


def rnn_module_call(facts: ModuleFacts, call: ast.Call) -> Optional[str]:
    """The RNN class (`"LSTM"`) a call `self.<attr>(...)` runs, when its class or a
    subclass of it in this file assigns `self.<attr> = nn.LSTM(...)`."""
    found = _self_attr_call(facts, call)
    if found is None:
        return None
    return next((kind for value in found[1] if (kind := _rnn_class(facts, value))), None)


def transformer_module_call(facts: ModuleFacts, call: ast.Call) -> Optional[str]:
    """The nn.Transformer* class a call `self.<attr>(...)` runs (see RNN calls), also
    `self.encoder`/`self.decoder` of a subclass of `nn.Transformer`."""
    found = _self_attr_call(facts, call)
    if found is None:
        return None
    cls, values = found
    for value in values:
        dotted = facts.resolve(value.func) or ""
        for prefix in TRANSFORMER_MODULES:
            if dotted.startswith(prefix) and dotted[len(prefix):] in CAUSAL_MASKS:
                return dotted[len(prefix):]
    attr = call.func.attr
    if attr in TRANSFORMER_PARTS and any(
            (facts.resolve(b) or "") in ("torch.nn.Transformer", "torch.nn.modules.transformer.Transformer")
            for b in cls.bases):
        return TRANSFORMER_PARTS[attr]
    return None


def undeclared_causal_mask(call: ast.Call, kind: str) -> Optional[tuple[str, str]]:
    """(the mask's keyword, the keyword that would say it is causal) of a mask given to a
    `kind` module call whose causality is not said (`is_causal` absent or None)."""
    for index, name, causal in CAUSAL_MASKS[kind]:
        given = next((k.value for k in call.keywords if k.arg == name), None)
        if given is None and len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
            given = call.args[index]
        if given is None or isinstance(given, ast.Constant) and given.value is None:
            continue
        said = next((k.value for k in call.keywords if k.arg == causal), None)
        if said is None or isinstance(said, ast.Constant) and said.value is None:
            return name, causal
    return None


def _subclasses(facts: ModuleFacts, cls: ast.ClassDef) -> list:
    return [c for c in facts.nodes(ast.ClassDef)
            if any(isinstance(b, ast.Name) and b.id == cls.name for b in c.bases)]


def _rnn_class(facts: ModuleFacts, ctor: ast.Call) -> Optional[str]:
    dotted = facts.resolve(ctor.func)
    if dotted:
        for prefix in RNN_MODULES:
            if dotted.startswith(prefix) and dotted[len(prefix):] in RNN_CLASSES:
                return dotted[len(prefix):]
        return None
    getter = ctor.func  # getattr(nn, kind)(...)
    if not (isinstance(getter, ast.Call) and facts.resolve(getter.func) == "builtins.getattr" and len(getter.args) == 2
            and facts.resolve(getter.args[0]) in ("torch.nn", "torch.nn.modules.rnn")):
        return None
    kind = getter.args[1]
    if isinstance(kind, ast.Constant):
        return kind.value if kind.value in RNN_CLASSES else None
    if isinstance(kind, ast.Name):
        kinds = _tested_members(facts, kind.id, ctor)
        return "/".join(sorted(kinds)) if kinds and kinds <= RNN_CLASSES else None
    return None


def _tested_members(facts: ModuleFacts, name: str, node: ast.AST) -> Optional[set]:
    """The string constants an `if name in (...):` around `node` allows."""
    child = node
    for anc in facts.ancestors(node):
        if isinstance(anc, ast.If) and child in anc.body:
            test = anc.test
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In) \
                    and isinstance(test.left, ast.Name) and test.left.id == name \
                    and isinstance(test.comparators[0], (ast.List, ast.Tuple, ast.Set)):
                elts = test.comparators[0].elts
                if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elts):
                    return {e.value for e in elts}
        if isinstance(anc, FUNCTION_NODES):
            return None
        child = anc
    return None


class UntraceableCalls:
    """One file's calls Dynamo does not trace: `cause(call, is_tensor)` is
    (what, graph-break ID, the Dynamo flag that keeps it in the graph or None) or None."""

    def __init__(self, facts: ModuleFacts):
        self.facts = facts
        self.loggers = module_loggers(facts)
        self.logging_ignored = mentions_config(facts, IGNORED_LOGGING)
        self.warnings_reorderable = mentions_config(facts, (REORDERABLE,))

    def cause(self, call: ast.Call, is_tensor) -> Optional[tuple]:
        facts, func = self.facts, call.func
        dotted = facts.resolve(func)
        found = self._generator(call, dotted)
        if found:
            return found
        if isinstance(func, ast.Attribute) and not self.logging_ignored and is_logger(facts, func.value, self.loggers):
            return f"`{_short(func)}(...)` (a logging.Logger method)", "GB0291", None
        if isinstance(func, ast.Attribute) and dotted is None and func.attr in MODULE_CONVERSIONS \
                and self._layer_with_parameters(func.value):
            return f"`{_short(func)}(...)` (converting a layer: new parameters when its dtype or device changes)", \
                "GB0264", None
        if isinstance(func, ast.Attribute) and dotted is None and func.attr in HOOK_REGISTRATIONS:
            return f"`{_short(func)}(...)` (a module hook registered in compiled code)", "GB0467", None
        if isinstance(func, ast.Attribute) and dotted is None:
            kind = rnn_module_call(facts, call)
            if kind:
                return f"`{_short(func)}(...)` (an nn.{kind} module)", "GB0014", "allow_rnn"
            kind = transformer_module_call(facts, call)
            undeclared = undeclared_causal_mask(call, kind) if kind else None
            if undeclared:
                mask, causal = undeclared
                return (f"`{_short(func)}(..., {mask}=...)` (nn.{kind} tests the mask for causality with a tensor "
                        f"read; pass `{causal}=`)", "GB0124", "capture_scalar_outputs")
            return None
        if dotted in WARN_FUNCTIONS and not self.warnings_reorderable:
            return f"`{dotted}(...)`", "GB0007", None
        if dotted and dotted.startswith("logging.") and dotted[8:] in LOGGING_FUNCTIONS and not self.logging_ignored:
            return f"`{dotted}(...)`", "GB4841", None
        if dotted == "numpy.random.choice":
            return "`np.random.choice(...)` (a data-dependent NumPy draw)", "GB0033", None
        if dotted == "torch._dynamo.config.patch":
            return "`torch._dynamo.config.patch(...)` (made while Dynamo traces: it is not traced)", "GB0007", None
        if dotted in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return "`nn.Parameter(...)` made in compiled code", "GB0264", None
        if dotted and dotted.startswith("torch.nn.") and dotted.rsplit(".", 1)[-1] in LAYERS_WITH_PARAMETERS:
            return f"`{dotted[6:]}(...)` (a layer whose parameters are made in compiled code)", "GB0264", None
        if dotted == "copy.deepcopy" and call.args and self._tensor_or_module(call.args[0], is_tensor):
            return "`copy.deepcopy(...)` of a tensor or module", "GB4198", None
        return None

    def _generator(self, call: ast.Call, dotted: Optional[str]) -> Optional[tuple]:
        if dotted == "torch.Generator":
            return "`torch.Generator(...)` (an opaque object Dynamo cannot make)", "GB0363", None
        flow = flow_for(self.facts)
        where = self.facts.enclosing_function(call)
        func = call.func
        if isinstance(func, ast.Attribute) and dotted is None and func.attr in GENERATOR_METHODS \
                and flow.is_generator(where, func.value, receiver=True):
            return f"`{_short(func)}(...)` (a torch.Generator method)", "GB7650", None
        given = next((kw.value for kw in call.keywords if kw.arg == "generator"), None)
        # a def of the project handed the generator is no op: Dynamo inlines it, and the
        # break is where the generator reaches an op in it (AnySat's
        # `self._sample_block_size(..., generator=g)`, judged false in bench/fresh_reads
        # batch 24; the op inside is reported there)
        if given is not None and flow.is_generator(where, given) and flow.callee(call) is None:
            return f"`{_short(func)}(..., generator=...)` (a torch.Generator given to an op)", "GB0055", None
        return None

    def _layer_with_parameters(self, expr: ast.AST) -> bool:
        """`self.<attr>` the class only ever assigns a torch.nn layer that makes parameters."""
        if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self"):
            return False
        assigned = class_attrs(self.facts, expr).get(expr.attr, ())
        layers = [v for _, v in assigned if (self.facts.resolve(v.func) or "").startswith("torch.nn.")
                  and self.facts.resolve(v.func).rsplit(".", 1)[-1] in LAYERS_WITH_PARAMETERS]
        return bool(layers) and all(v in layers or _is_self_conversion(v, expr.attr) for _, v in assigned)

    def _tensor_or_module(self, expr: ast.AST, is_tensor) -> bool:
        if is_tensor(expr):
            return True
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            assigned = class_attrs(self.facts, expr).get(expr.attr, ())
            return bool(assigned) and all((self.facts.resolve(v.func) or "").startswith("torch.nn.") for _, v in assigned)
        return False


def _is_self_conversion(call: ast.Call, attr: str) -> bool:
    """`self.<attr>.to(...)` (a value assigned back to the same attribute)."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in MODULE_CONVERSIONS and isinstance(func.value, ast.Attribute) \
        and func.value.attr == attr and isinstance(func.value.value, ast.Name) and func.value.value.id == "self"


def _short(func: ast.AST) -> str:
    text = ast.unparse(func)
    return text if len(text) <= 40 else "..." + text[-37:]
