"""Branches of a def that its compiled callers close.

A helper reached from compiled code often tests one of its own parameters: openpi's
`preprocess_observation(..., train=...)` augments under `if train:`, and the compiled
`sample_actions` passes `train=False` (through `_preprocess_observation(observation,
train=False)`, which forwards its own `train`); KataGo's metrics read `.item()` under
`if include_norms:`, and every compiled caller passes False. The draw or the break is
in the region the index marks (it marks defs, not branches), yet no compiled run takes
that branch. `closed_by_compiled_callers(facts, node)` says so when every call of the def
from compiled code passes (or leaves as its default) a constant that closes a test on
the parameter around `node`, or when every compiled call of the def sits in such a
closed branch itself (KataGo's norms helper, called only under `if include_model_norms:`).

The calls read are those the code spells: a method's `self.<name>(...)` in its class
(`modules.classes.self_calls`: none when the name is used any other way there), or a
module-level function's `name(...)` in the project's files that mention it (resolved to
this def; the name read any other way, as a callback or an alias, or imported under
another name, and nothing is known). A method read into a def's local alias that the def
only calls or puts back (`original = policy._prep`, `original(obs, train=False)`,
`policy._prep = original`: lerobot's parity helpers) adds those calls, counted wherever
they are: the wrapper may stand in for the method in compiled code. A test may also read
`self.<attr>` of a method when the class's `__init__` alone sets it, to constants or to parameters every
construction of the class in the project passes as constants (`attribute_values`),
directly or forwarded from the `__init__` of a class that builds it (`Block(verbose=verbose)`
in `Encoder.__init__`: what every `Encoder(...)` passes for `verbose`). An attribute of what a method's `self` holds
(`self.encoder.layer[i].attention`) is another object's, not a read of the function.
`self.training` is True where every compile site of the region only ever trains the
module it compiles, False where every one compiles it in eval mode (`_training_values`).
A value another call forwards from its own parameter is read from that def's compiled
callers in turn, a few calls deep. A method called by its name anywhere else in the
project (`policy.sample(x, train=True)`, a subclass's `super().sample(...)`) has callers
this does not judge: it stays open. Unknown stays open: a def a site compiles directly
(its callers are outside the compiled code), `forward` and `__call__` (run through the
module's call), a call passing `*args`/`**kwargs` or a value that is not a constant, a
parameter the def rebinds, and a def no compiled call of which is seen.
"""
from __future__ import annotations

import ast
from typing import Callable, Optional

from ..project.calls import ProjectFilesFact, _calls_def_of
from ..semantic.facts import Fact, ModuleFacts, RegionsFact
from ..semantic.names import chain_text
from ..semantic.signatures import call_argument, first_parameter, parameter_defaults, parameter_names
from .around import tests_around
from .compiling import eager_only

MAX_DEPTH = 3  # calls followed back from the def, each forwarding its own parameter
MAX_CALLER_FILES = 40  # files that may call a function, read for its calls
UNKNOWN = None
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ENTERED_BY_CALLING_THE_MODULE = frozenset({"forward", "__call__"})


class PassedFlagsFact(Fact):
    """What the compiled callers of this file's defs pass, per (def, parameter), asked once."""

    name = "passed flags"
    needs = (RegionsFact, ProjectFilesFact)  # where the calls are, and the files that may hold them

    @classmethod
    def compute(cls, facts: ModuleFacts) -> dict:
        return {}


def closed_by_compiled_callers(facts: ModuleFacts, node: ast.AST, depth: int = 0) -> bool:
    """`node` sits in a branch of an `if` on a parameter of its def (`if train:`, `if not
    test_mode:`, `if drop_ids is None:`, `if mode == "vanilla":`) that every call of the
    def from compiled code closes."""
    func = facts.enclosing_function(node)
    if not isinstance(func, _FUNCTIONS) or depth > MAX_DEPTH:
        return False
    params = parameter_names(func.args)
    for test, truth in tests_around(facts, node):
        tested = _tested_value(test)
        if tested is None:
            continue
        subject, holds = tested
        if isinstance(subject, ast.Name):
            values = passed_values(facts, func, subject.id, depth) if subject.id in params else UNKNOWN
        elif isinstance(subject.value, ast.Name) and subject.value.id == "self" and subject.attr == "training":
            values = _training_values(facts, node)
        else:
            values = attribute_values(facts, subject)
        if values and all(holds(v) != truth for v in values):
            return True
    return _called_only_where_closed(facts, func, depth)


def _training_values(facts: ModuleFacts, node: ast.AST) -> Optional[frozenset]:
    """What `self.training` holds where compiled code runs `node`: True where every
    compile site of its region only ever trains the module it compiles
    (`rng.trains_at_every_site`: tabicl's trainer, whose model runs its inference path only
    under `if not self.training:`, bench/dev41), False where every one compiles it in eval
    mode (`rng.eval_at_every_site`); else unknown. Dynamo reads the flag as a constant: the
    other side is never traced."""
    region = facts.in_region(node, "compiled")
    if region is None:
        return UNKNOWN
    memo = facts.get(PassedFlagsFact)
    key = (id(region), "self.training")
    if key not in memo:
        from ..tensors.rng import eval_at_every_site, trains_at_every_site

        memo[key] = frozenset({True}) if trains_at_every_site(facts, region) else \
            frozenset({False}) if eval_at_every_site(facts, region) else UNKNOWN
    return memo[key]


def _called_only_where_closed(facts: ModuleFacts, func: ast.AST, depth: int) -> bool:
    """Every compiled call of `func` sits in a branch its own def's compiled callers
    close (KataGo's norms helper, called only under `if include_model_norms:`)."""
    memo = facts.get(PassedFlagsFact)
    key = (id(func), "called where closed")
    if key not in memo:
        memo[key] = False  # (a cycle of calls stays open)
        memo[key] = _every_compiled_call_closed(facts, func, depth)
    return memo[key]


def _every_compiled_call_closed(facts: ModuleFacts, func: ast.AST, depth: int) -> bool:
    if depth >= MAX_DEPTH or func.name in _ENTERED_BY_CALLING_THE_MODULE or _compiled_directly(facts, func):
        return False
    calls = _calls(facts, func, isinstance(facts.parent(func), ast.ClassDef))
    if calls is None:
        return False
    # (a recursive call runs only where the def already runs: it closes nothing, opens nothing)
    compiled = [(caller_facts, call) for caller_facts, call, anywhere in calls
                if (anywhere or caller_facts.in_region(call, "compiled") is not None and not eager_only(caller_facts, call))
                and not (caller_facts is facts and facts.enclosing_function(call) is func)]
    return bool(compiled) and all(closed_by_compiled_callers(caller_facts, call, depth + 1)
                                  for caller_facts, call in compiled)


def _tested_value(test: ast.AST) -> Optional[tuple[ast.expr, Callable]]:
    """(the name or `self.<attr>` read, what the test is for a value of it) when `test`
    reads one alone: `p`, `p is None`, `p is not None`, `p == C`, `p != C` (`not` is
    already off)."""
    if _subject(test):
        return test, bool
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and _subject(test.left)
            and isinstance(test.comparators[0], ast.Constant)):
        return None
    op, constant = test.ops[0], test.comparators[0].value
    if isinstance(op, ast.Is) and constant is None:
        return test.left, lambda v: v is None
    if isinstance(op, ast.IsNot) and constant is None:
        return test.left, lambda v: v is not None
    if isinstance(op, ast.Eq):
        return test.left, lambda v: v == constant
    if isinstance(op, ast.NotEq):
        return test.left, lambda v: v != constant
    return None


def _subject(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Name) or (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name))


def passed_values(facts: ModuleFacts, func: ast.AST, name: str, depth: int = 0) -> Optional[frozenset]:
    """The constants every compiled call of `func` passes for its parameter `name`
    (defaults included); None when one of them is not known, or when `func` rebinds
    `name` (it then reads something else than what was passed)."""
    memo = facts.get(PassedFlagsFact)
    key = (id(func), name)
    if key in memo:
        return memo[key]
    memo[key] = UNKNOWN  # (a cycle of forwarded parameters stays unknown)
    memo[key] = found = _passed_values(facts, func, name, depth)
    return found


def _passed_values(facts: ModuleFacts, func: ast.AST, name: str, depth: int) -> Optional[frozenset]:
    if depth > MAX_DEPTH or func.name in _ENTERED_BY_CALLING_THE_MODULE or _compiled_directly(facts, func):
        return UNKNOWN
    if name in _rebound(func):
        return UNKNOWN  # `train = train and x.ndim == 4`: what the def reads is not what was passed
    method = isinstance(facts.parent(func), ast.ClassDef)
    positional = [a.arg for a in func.args.posonlyargs + func.args.args][1 if method else 0:]
    index = positional.index(name) if name in positional else None
    default = parameter_defaults(func.args).get(name)
    calls = _calls(facts, func, method)
    if calls is None:
        return UNKNOWN
    values: set = set()
    seen_one = False
    for caller_facts, call, anywhere in calls:
        if not anywhere and (caller_facts.in_region(call, "compiled") is None or eager_only(caller_facts, call)) \
                or closed_by_compiled_callers(caller_facts, call, depth + 1):
            continue  # an eager caller, or a compiled one that never runs this call
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return UNKNOWN
        passed = call_argument(call, index, name, missing=default)
        value = _value(caller_facts, passed, depth)
        if value is UNKNOWN:
            return UNKNOWN
        values |= value
        seen_one = True
    return frozenset(values) if seen_one else UNKNOWN


def _value(facts: ModuleFacts, expr: Optional[ast.AST], depth: int) -> Optional[frozenset]:
    """What `expr` (an argument, or a default) can be: a constant, or a parameter of the
    calling def that its own compiled callers fill."""
    if isinstance(expr, ast.Constant):
        return frozenset({expr.value})
    if isinstance(expr, ast.Attribute):
        return attribute_values(facts, expr)
    if isinstance(expr, ast.Name):
        caller = facts.enclosing_function(expr)
        if isinstance(caller, _FUNCTIONS) and expr.id in parameter_names(caller.args):
            return passed_values(facts, caller, expr.id, depth + 1)
    return UNKNOWN


def attribute_values(facts: ModuleFacts, expr: ast.AST) -> Optional[frozenset]:
    """The constants `self.<attr>` can hold, read in a method (not `__init__`) of a
    module-level class: every store of `<attr>` in the project's files that mention it is
    `self.<attr> = v` in the class's own `__init__`, each `v` a constant or a parameter of
    `__init__`, and every construction of the class passes a constant for that parameter
    or leaves its constant default (ACE-Step's `ConformerEncoder(use_dynamic_chunk=False)`,
    built once as `LyricEncoder(input_size=..., static_chunk_size=0)`). None (unknown)
    when a store is anywhere else (another method, another object, `setattr`), when the
    project subclasses the class, builds it through `cls(...)` / `type(self)(...)`, reads
    its name other than to call it or in `isinstance`, spells it in a string
    (`"pkg.Encoder"`), decorates it (a registry's `@register`), or never visibly builds
    it; and when `__init__` rebinds the parameter before storing it. Not seen: a class built from a name
    in a file that is no Python (a YAML config's `_target_`)."""
    if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)):
        return UNKNOWN
    method = facts.enclosing_function(expr)
    cls = facts.parent(method) if isinstance(method, _FUNCTIONS) else None
    if not isinstance(cls, ast.ClassDef) or cls not in facts.tree.body or method.name == "__init__" \
            or expr.value.id != first_parameter(method.args) or any(
                isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in method.decorator_list):
        return UNKNOWN
    memo = facts.get(PassedFlagsFact)
    key = (id(cls), "attribute", expr.attr)
    if key not in memo:
        memo[key] = UNKNOWN
        memo[key] = _attribute_values(facts, cls, expr.attr)
    return memo[key]


def _attribute_values(facts: ModuleFacts, cls: ast.ClassDef, attr: str) -> Optional[frozenset]:
    init = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
    if init is None or cls.decorator_list:
        return UNKNOWN  # (a decorated class: a registry's, built from a config's name)
    me = first_parameter(init.args)
    params = parameter_names(init.args) - _rebound(init)
    # this file's stores first (no other file is read for a flag they already leave open)
    stored = []
    for node in facts.reads_named(attr):
        if not isinstance(node, ast.Attribute) or isinstance(node.ctx, ast.Load):
            continue
        statement = facts.parent(node)
        if facts.enclosing_function(node) is not init or not isinstance(node.value, ast.Name) or node.value.id != me \
                or not isinstance(statement, ast.Assign) or node not in statement.targets:
            return UNKNOWN
        value = statement.value
        if not (isinstance(value, ast.Constant) or isinstance(value, ast.Name) and value.id in params):
            return UNKNOWN
        stored.append(value)
    if not stored:
        return UNKNOWN
    paths = _files_mentioning(facts, attr)
    if paths is None:
        return UNKNOWN
    for path in paths:
        other = facts if path == facts.path else facts.project.facts_for_path(facts, path)
        if other is None:
            return UNKNOWN
        if any(other.resolve(call.func) == "builtins.setattr" for call in other.calls_by_name("setattr")):
            return UNKNOWN  # a name given as a string
        if other is not facts and any(isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load)
                                      for node in other.reads_named(attr)):
            return UNKNOWN  # `model.fast = True`: stored on the instance from outside
    values: set = set()
    for value in stored:
        if isinstance(value, ast.Constant):
            values.add(value.value)
        else:
            found = _constructed_with(facts, cls, init, value.id)
            if found is UNKNOWN:
                return UNKNOWN
            values |= found
    return frozenset(values)


def _constructed_with(facts: ModuleFacts, cls: ast.ClassDef, init: ast.FunctionDef, name: str,
                      depth: int = 0) -> Optional[frozenset]:
    """The constants every construction of `cls` in the project passes (or leaves as the
    default) for the `__init__` parameter `name`; None when one is not known. A
    construction in another class's `__init__` that forwards a parameter of its own
    (`Attention(dim, attn_drop=attn_drop)` in `Block.__init__`) passes what every
    construction of that class passes for it, a few classes up (olmoearth's
    `Block(attn_drop=0.0)` default, never given: bench/dev45)."""
    memo = facts.get(PassedFlagsFact)
    key = (id(cls), "constructed", name)
    if key in memo:
        return memo[key]
    memo[key] = UNKNOWN  # (a cycle of classes building each other stays unknown)
    memo[key] = found = _constructions(facts, cls, init, name, depth)
    return found


def _constructions(facts: ModuleFacts, cls: ast.ClassDef, init: ast.FunctionDef, name: str,
                   depth: int) -> Optional[frozenset]:
    args = init.args
    positional = [a.arg for a in args.posonlyargs + args.args][1:]
    if name not in positional and name not in {a.arg for a in args.kwonlyargs}:
        return UNKNOWN  # `*args` / `**kwargs` (or `self`)
    index = positional.index(name) if name in positional else None
    default = parameter_defaults(args).get(name)
    for method in cls.body:  # `cls(...)` in a classmethod, `type(self)(...)`: built where this does not read
        if isinstance(method, _FUNCTIONS):
            own = first_parameter(method.args)
            for call in ast.walk(method):
                if isinstance(call, ast.Call) and (
                        isinstance(call.func, ast.Name) and call.func.id == own
                        or isinstance(call.func, ast.Call) and isinstance(call.func.func, ast.Name) and call.func.func.id == "type"
                        or isinstance(call.func, ast.Attribute) and call.func.attr == "__class__"):
                    return UNKNOWN
    paths = _files_mentioning(facts, cls.name)
    if paths is None:
        return UNKNOWN
    values: set = set()
    built = False
    for path in paths:
        other = facts.project.facts_for_path(facts, path)
        if other is None:
            return UNKNOWN
        names = {cls.name} | {alias.asname for node in other.nodes(ast.ImportFrom) for alias in node.names
                              if alias.name == cls.name and alias.asname}
        if any(isinstance(c.value, str) and (c.value == cls.name or c.value.endswith("." + cls.name))
               for c in other.nodes(ast.Constant)):
            return UNKNOWN  # `"pkg.Encoder"`: built from its name (a registry, a config's target)
        for sub in other.nodes(ast.ClassDef):
            if any((b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else None) in names
                   for b in sub.bases):
                return UNKNOWN  # a subclass: built, and its __init__ run, through its own calls
        for node in [n for read in sorted(names) for n in other.reads_named(read)]:
            if not isinstance(node.ctx, ast.Load):
                continue
            call = other.parent(node)
            if isinstance(call, ast.Call) and call.func is not node and other.resolve(call.func) in ("builtins.isinstance", "builtins.issubclass"):
                continue
            if not (isinstance(call, ast.Call) and call.func is node):
                return UNKNOWN  # handed on (a registry, a factory's argument): built where this does not read
            if not _calls_def_of(other, call, facts, cls.name):
                continue  # another class of that name (an alias of this one resolves to it)
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return UNKNOWN
            passed = call_argument(call, index, name, missing=default)
            if isinstance(passed, ast.Constant):
                values.add(passed.value)
            else:
                forwarded = UNKNOWN if passed is default else _forwarded_from_init(other, call, passed, depth)
                if forwarded is UNKNOWN:
                    return UNKNOWN
                values |= forwarded
            built = True
    return frozenset(values) if built else UNKNOWN


def constructed_values(facts: ModuleFacts, at: ast.AST, name: Optional[ast.AST]) -> Optional[frozenset]:
    """The constants the `__init__` parameter `name` (a Name read at `at`, inside the
    `__init__` of a module-level class) holds: what every construction of the class in
    the project passes for it, forwarded ones followed (`_constructed_with`). None when
    `name` is no such parameter or a construction is not known."""
    if not isinstance(name, ast.Name):
        return UNKNOWN
    memo = facts.get(PassedFlagsFact)
    key = (id(at), "constructed at", name.id)
    if key not in memo:
        memo[key] = _forwarded_from_init(facts, at, name, 0)
    return memo[key]


def _forwarded_from_init(facts: ModuleFacts, call: ast.AST, passed: Optional[ast.AST], depth: int) -> Optional[frozenset]:
    """What a construction passes when its argument is a parameter of the `__init__` it
    sits in (a module-level class's, the parameter never rebound there): what every
    construction of that class passes for it. None otherwise."""
    if not isinstance(passed, ast.Name) or depth >= MAX_DEPTH:
        return UNKNOWN
    init = facts.enclosing_function(call)
    if not isinstance(init, ast.FunctionDef) or init.name != "__init__" or passed.id not in parameter_names(init.args) \
            or passed.id == first_parameter(init.args) or passed.id in _rebound(init):
        return UNKNOWN
    outer = facts.parent(init)
    if not isinstance(outer, ast.ClassDef) or outer not in facts.tree.body or outer.decorator_list:
        return UNKNOWN
    return _constructed_with(facts, outer, init, passed.id, depth + 1)


def _compiled_directly(facts: ModuleFacts, func: ast.AST) -> bool:
    """A site compiles `func` itself: what it is passed comes from the callers of the
    compiled object, which this module does not read. (A compiled class is entered
    through `forward` / `__call__`, which are never judged; its other methods are
    reached by calls.)"""
    region = facts.region_of(func)
    if region is None:
        return True
    dotted = facts.dotted_of(func)
    return region.via is None or any(site.target is not None and site.target.dotted == dotted for site in region.sites)


def _calls(facts: ModuleFacts, func: ast.AST, method: bool) -> Optional[list]:
    """(the caller's facts, call, whether it counts wherever it is) for every call of
    `func`; None when the code may reach it in a way not read here: its name read other
    than as those calls (a callback, an alias, a method called on another object), or in
    too many files to read. A call through a local alias of the bound method counts
    even outside compiled code: the alias may stand in for the method there."""
    reads = _reads_of(facts, func.name)
    if reads is None:
        return None
    if method:
        from ..modules.classes import self_calls

        found = self_calls(facts, func)
        if not found:
            return None
        own = {id(call.func) for call, _ in found}
        calls = [(facts, call, False) for call, _ in found]
        cls = facts.parent(func)
        classes = None  # simple name -> (facts, ClassDef) of the files read, built when asked
        for other, node in reads:
            if id(node) in own or other is facts and facts.enclosing_function(node) is func \
                    and _is_call_of(facts, node):
                continue  # (a recursive call: self_calls leaves it out)
            if classes is None:
                classes = _classes_of([facts, *(o for o, _ in reads)])
            if _own_method_of_another_class(other, node, func.name, (facts, cls), classes):
                continue  # tabicl's five `self._inference_forward(...)`, each its class's own
            aliased = _alias_calls(other, node, func.name)
            if aliased is None:
                return None  # `policy.sample(x, train=True)` elsewhere: a caller this does not judge
            calls += [(other, call, True) for call in aliased]
        return calls
    if facts.enclosing_function(func) is not None or func not in facts.tree.body:
        return None  # a nested def, or one bound under an `if`/`try`: called in ways not read here
    calls = []
    for other, node in reads:
        call = other.parent(node)
        if not (isinstance(call, ast.Call) and call.func is node):
            if _instance_attribute(other, node):
                continue  # `self.attention.num_heads`: another object's attribute of that name
            return None  # `step = metrics`, `map(metrics, ...)`: reached where this does not read
        if _calls_def_of(other, call, facts, func.name):
            calls.append((other, call, False))
    return calls


def _is_call_of(facts: ModuleFacts, node: ast.AST) -> bool:
    parent = facts.parent(node)
    return isinstance(parent, ast.Call) and parent.func is node


def _classes_of(files: list) -> dict:
    out: dict = {}
    for other in files:
        for node in other.nodes(ast.ClassDef):
            out.setdefault(node.name, []).append((other, node))
    return out


def _own_method_of_another_class(facts: ModuleFacts, node: ast.AST, name: str, cls: tuple,
                                 classes: dict) -> bool:
    """`node` is `self.<name>` in a method of a class that defines `name` itself and is not
    among the ancestors of `cls` ((its file's facts, ClassDef)): there `self` runs its own
    class's method, not `cls`'s. An ancestor may call the override (a template method), so
    every base of `cls` must be found among the files read (`classes`) or be torch's or a
    builtin; otherwise unknown."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        return False
    method = facts.enclosing_function(node)
    owner = facts.parent(method) if isinstance(method, _FUNCTIONS) else None
    if not isinstance(owner, ast.ClassDef) or owner is cls[1] or node.value.id != first_parameter(method.args):
        return False
    if not any(isinstance(d, _FUNCTIONS) and d.name == name for d in owner.body):
        return False
    ancestors = _ancestor_names(cls, classes)
    return ancestors is not None and owner.name not in ancestors


def _ancestor_names(cls: tuple, classes: dict) -> Optional[set]:
    """The simple names of the project ancestors of `cls` ((facts, ClassDef)), walked
    through `classes`; None when a base is neither found there nor, as its file resolves
    it, torch's (`nn.Module`) or a builtin (`object`)."""
    names: set = set()
    todo = [cls]
    while todo:
        owner_facts, current = todo.pop()
        for base in current.bases:
            text = chain_text(base)
            if text is None:
                return None
            if (owner_facts.resolve(base) or "").startswith(("torch.", "builtins.")):
                continue
            simple = text.rsplit(".", 1)[-1]
            found = classes.get(simple)
            if not found:
                return None
            if simple not in names:
                names.add(simple)
                todo.extend(found)
    return names


def _alias_calls(facts: ModuleFacts, node: ast.AST, name: str) -> Optional[list]:
    """The calls made through a def's local alias of a bound method, when `node` is the
    alias's value (`original = policy._preprocess(...)`'s `policy._preprocess`) and the
    def uses the alias only to call it (`original(obs, train=False)`, in a closure too)
    or to put it back (`policy._preprocess = original`): openpi's parity helpers wrap a
    method that way (lerobot, bench/fresh_reads). None for any other use."""
    if not (isinstance(node, ast.Attribute) and node.attr == name):
        return None
    assign = facts.parent(node)
    if not (isinstance(assign, ast.Assign) and assign.value is node and len(assign.targets) == 1
            and isinstance(assign.targets[0], ast.Name)):
        return None
    alias = assign.targets[0].id
    scope = facts.enclosing_function(assign)
    if not isinstance(scope, _FUNCTIONS):
        return None
    calls = []
    for inner in ast.walk(scope):
        if isinstance(inner, (*_FUNCTIONS, ast.Lambda)) and inner is not scope and alias in parameter_names(inner.args):
            return None  # a closure's own parameter of that name: another value
        if not isinstance(inner, ast.Name) or inner.id != alias:
            continue
        if not isinstance(inner.ctx, ast.Load):
            if inner is not assign.targets[0]:
                return None  # bound again: another value
            continue
        parent = facts.parent(inner)
        if isinstance(parent, ast.Call) and parent.func is inner:
            calls.append(parent)
        elif not (isinstance(parent, ast.Assign) and parent.value is inner
                  and all(isinstance(t, ast.Attribute) and t.attr == name for t in parent.targets)):
            return None  # handed on, stored elsewhere: called where this does not read
    return calls


def _instance_attribute(facts: ModuleFacts, node: ast.AST) -> bool:
    """`node` is an attribute of what a method's `self` holds (`self.attention`,
    `self.encoder.layer[i].attention`): it holds a module-level function only if the
    code stored one there, which reads the function's name elsewhere (`self.fn =
    attention`: a read that is no call, so unknown). Not seen: a project module itself
    stored on the instance (`self.ops = layers`, then `self.ops.attention(...)`)."""
    if not isinstance(node, ast.Attribute):
        return False
    root = node.value
    while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
        root = root.func if isinstance(root, ast.Call) else root.value
    if not isinstance(root, ast.Name):
        return False
    method = facts.enclosing_function(node)
    if not isinstance(method, _FUNCTIONS) or not isinstance(facts.parent(method), ast.ClassDef):
        return False
    return root.id == first_parameter(method.args)


def _reads_of(facts: ModuleFacts, name: str) -> Optional[list]:
    """(file's facts, node) for every read of `name` (`name`, `x.name`) in the project's
    files that mention it, this file included; None when more than MAX_CALLER_FILES do."""
    paths = _files_mentioning(facts, name)
    if paths is None:
        return None
    reads = []
    for path in paths:
        other = facts.project.facts_for_path(facts, path)
        if other is not None and any(alias.name == name and alias.asname not in (None, name)
                                     for node in other.nodes(ast.ImportFrom) for alias in node.names):
            return None  # `from .layers import attention as attn`: called by a name not read here
        for node in other.reads_named(name) if other is not None else ():
            if isinstance(node.ctx, ast.Load):
                reads.append((other, node))
    return reads


def _files_mentioning(facts: ModuleFacts, name: str) -> Optional[list]:
    """The paths of the project's files whose bytes hold `name`, this file's included;
    None when more than MAX_CALLER_FILES do (too many to read)."""
    paths, _ = facts.project.files_mentioning(facts.get(ProjectFilesFact), name.encode())
    if facts.path not in paths:
        paths = [facts.path, *paths]
    return paths if len(paths) <= MAX_CALLER_FILES else None


def _rebound(func: ast.AST) -> set:
    """The names `func` stores anywhere in it (assignments, loop and `with` targets, nested
    defs' own names included: a conservative over-count)."""
    return {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
