"""Which expressions hold the wrapper `torch.compile(module)` returns (an
`OptimizedModule`), a DDP/DataParallel of one, or a module that owns one.

`m = torch.compile(model)` is not `model`: it is a new `nn.Module` that holds `model`
as its submodule `_orig_mod`. Measured on torch 2.13 CPU (scripts/measure/, outputs in
scripts/measure/out/, summary in docs/hazards-measured.md):
- its `state_dict()` keys are `_orig_mod.<name>`; a module holding one as `self.net`
  saves `net._orig_mod.<name>`, `DDP(m)` saves `module._orig_mod.<name>`; the plain
  model refuses them strictly and `strict=False` loads none of them
  (orig_mod_checkpoint_keys.py);
- `bool(m)` raises `TypeError: Net does not support len()` for a module without
  `__len__` (compiled_module_bool.py);
- a full backward hook registered on `m` never runs (hooks_after_compile.py).
`model.compile()` compiles in place and keeps the module itself: none of this applies.

What a name or attribute chain is bound to comes from CompiledValues
(compiled_values.py: the value model's bindings, `self.x = torch.compile(...)`,
module-level values of other files). This module adds, in one place:
- the wrapper's kind: only `torch.compile(...)` of something that is not a function
  (a def, a lambda, `model.forward`, a method of the class) makes an OptimizedModule;
- the flow of the wrapper through aliases and picks (`raw = model`,
  `raw = model.module if ddp else model`, `a or b`, `.to(device)`, `copy.deepcopy`),
  DDP/DataParallel and their `.module`, and into the parameters of a module-level
  function of the project from its callers (other files that spell `compile` included);
- code that unwraps it (`m._orig_mod`, `getattr(m, "_orig_mod", m)`, a rebinding to
  either): a name that any reaching binding unwraps holds what the code chose;
- branches: a binding under `if c:` does not reach a use on the other branch of a test
  with the same text (`if not args.no_compile: m = torch.compile(m)` ... `else:
  m.state_dict()`), in the same scope or across scopes;
- owners: an `nn.Module` class of the project (or a subclass of one) that binds
  `self.<attr> = torch.compile(...)`; its instances (`Owner(...)`, `self` in its methods).
The answers say "may hold": a wrapper bound in one branch of an `if` counts.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from ..semantic.bindings import BindingsFact, bindings_under
from ..modules.classes import is_module_class, local_class, methods, module_construction, self_name, strip_returns_self
from .values import CompileCall, CompiledValuesFact, chain_text, compiled_values
from ..semantic.facts import Fact, ModuleFacts
from ..semantic.walk import walk
from ..branches.around import tests_around
from ..project.context import path_for_module
from ..project.calls import ProjectFilesFact, arguments_of
from ..reach.values import RETURNS_SELF

WRAPPER, HOLDER, OWNER = "wrapper", "holder", "owner"
# modules whose `.module` is the module they were given
DATA_PARALLEL = frozenset({
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
})
COPIES = frozenset({"copy.deepcopy", "copy.copy"})
UNWRAPPED = "unwrapped"  # a binding that takes `_orig_mod` out
MAX_DEPTH = 6
MAX_CALLER_FILES = 32  # a def called in more files is not followed into its callers (_param)


@dataclass(frozen=True, eq=False)
class Wrapped:
    """What an expression may hold: `kind` WRAPPER (the OptimizedModule itself), HOLDER
    (DDP/DataParallel of one) or OWNER (a module with one as a submodule); `call` the
    `torch.compile` call; `prefix` where `_orig_mod.` sits in its state_dict keys
    (`_orig_mod.`, `module._orig_mod.`, `net._orig_mod.`); `owner` the owning class.
    Compared by identity, as CompileCall is (one per call node)."""

    kind: str
    call: CompileCall
    prefix: str
    owner: Optional[str] = None
    target: Optional[str] = None  # target_kind of the compiled thing: "module" or None (not told)


KIND_ORDER = {WRAPPER: 0, HOLDER: 1, OWNER: 2}
NOTHING: frozenset = frozenset()
ONLY_UNWRAPPED = frozenset({UNWRAPPED})


class CompiledWrappers:
    """The wrapper flow of one file (built on its CompiledValues)."""

    def __init__(self, facts: ModuleFacts):
        self.facts = facts
        self.values = compiled_values(facts)
        self._owners: dict[int, Optional[tuple[str, CompileCall]]] = {}  # id(ClassDef) -> owned attr
        self._chains: dict[int, dict[str, list[ast.Assign]]] = {}  # id(scope) -> _assigned_chains
        self._params: dict[tuple[int, str], frozenset] = {}  # (id(def), parameter) -> what callers pass

    # -- the question -----------------------------------------------------------------
    def holding(self, expr: ast.AST) -> Optional[Wrapped]:
        """What `expr`, read where it stands, may hold: the wrapper itself before a
        holder before an owner; None for no wrapper, or when the code unwraps it."""
        if self._not_a_wrapper_here(expr):
            return None
        found = self._holding(expr, 0, self.guards(expr))
        if UNWRAPPED in found:
            return None
        return min(found, key=lambda w: (KIND_ORDER[w.kind], w.call.row), default=None)

    def wrapper(self, expr: ast.AST) -> Optional[Wrapped]:
        """The OptimizedModule `expr` may hold (not a holder or an owner of one)."""
        if self._not_a_wrapper_here(expr):
            return None
        found = self._holding(expr, 0, self.guards(expr))
        if UNWRAPPED in found:
            return None
        return min((w for w in found if w.kind == WRAPPER), key=lambda w: w.call.row, default=None)

    def _holding(self, expr: ast.AST, depth: int, ctx: dict) -> frozenset:
        """Every Wrapped `expr` may hold, and UNWRAPPED when the code takes `_orig_mod` out."""
        if depth > MAX_DEPTH or expr is None:
            return NOTHING
        while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in RETURNS_SELF:
            expr = expr.func.value  # `m.to(device)` is `m`
        if isinstance(expr, ast.IfExp):  # each branch with its side of the test
            test, branch = _polarity(expr.test)
            text = self.facts.text(test)
            if text in ctx:
                return self._holding(expr.body if ctx[text] == branch else expr.orelse, depth + 1, ctx)
            return self._holding(expr.body, depth + 1, {**ctx, text: branch}) | self._holding(
                expr.orelse, depth + 1, {**ctx, text: not branch})
        if isinstance(expr, ast.BoolOp):
            return frozenset().union(*(self._holding(b, depth + 1, ctx) for b in expr.values))
        if isinstance(expr, ast.NamedExpr):
            return self._holding(expr.value, depth + 1, ctx)
        if isinstance(expr, ast.Call):
            return self._call(expr, depth, ctx)
        if isinstance(expr, ast.Attribute):
            if expr.attr == "_orig_mod":
                return ONLY_UNWRAPPED
            if expr.attr == "module":  # DDP(m).module is m
                inner = self._holding(expr.value, depth + 1, ctx)
                return frozenset(
                    Wrapped(WRAPPER, w.call, w.prefix[len("module."):], target=w.target) if w != UNWRAPPED else w
                    for w in inner if w == UNWRAPPED or w.kind == HOLDER
                )
            cc = self.values.callee(expr)
            if cc is not None:
                return self._made(cc, self.facts)
            return self._chain(expr, depth, ctx)
        if isinstance(expr, ast.Name):
            return self._name(expr, depth, ctx)
        return NOTHING

    def _call(self, call: ast.Call, depth: int, ctx: dict) -> frozenset:
        facts = self.facts
        cc = self.values.compile_call(call)
        if cc is not None:
            return self._made(cc, facts)
        dotted = facts.resolve(call.func)
        if dotted in DATA_PARALLEL and call.args:
            return frozenset(
                Wrapped(HOLDER, w.call, "module." + w.prefix, target=w.target) if w != UNWRAPPED else w
                for w in self._holding(call.args[0], depth + 1, ctx) if w == UNWRAPPED or w.kind == WRAPPER
            )
        if dotted in COPIES and call.args:
            return self._holding(call.args[0], depth + 1, ctx)
        if dotted == "builtins.getattr" and len(call.args) >= 2 and _is_str(call.args[1], "_orig_mod"):
            return ONLY_UNWRAPPED
        owned = self.owner_of_class(dotted)
        if owned is not None:
            attr, cc, name = owned
            if self._compiles_switched_off(call, dotted):
                return NOTHING
            return frozenset({Wrapped(OWNER, cc, f"{attr}._orig_mod.", name)})
        return NOTHING

    def _compiles_switched_off(self, call: ast.Call, dotted: str) -> bool:
        """`Owner(opt)` where every compile that makes `Owner` an owner runs in an
        `__init__` under `if opt.compile:` (or `getattr(opt, "compile", ...)`) of the object
        the call passes (a base's `__init__` when the class hands it the same parameter
        through `super().__init__`), and the def making the call set that attribute to a
        falsy literal on a line before it, or every caller handing the def that object did
        (`opt.compile = False` then `SplatModel(opt)`, also `load_model(deepcopy(opt))`: a
        script that loads a plain checkpoint builds the model uncompiled on purpose;
        Mono-DFCGS, bench/fresh_reads batch 66, 7 CL511 judged false). Another store of the
        attribute or of the name in between, in a branch, or in a loop around the call
        keeps the owner."""
        found = self._class_of(dotted)
        if found is None:
            return False
        where, cls = found
        init = methods(cls).get("__init__")
        compiles = owning_compiles(where, cls, 0)
        if init is None or not compiles:
            return False
        init_params = [a.arg for a in init.args.posonlyargs + init.args.args]
        for at, cc in compiles:
            gate = _init_gate(at, cc)
            if gate is None:
                return False
            func, param, attr = gate
            if func is not init and not _passes_on(init, func, param):
                return False
            if param not in init_params:
                return False
            index = init_params.index(param) - 1  # (`self` is not passed)
            arg = call.args[index] if 0 <= index < len(call.args) and not any(
                a.__class__ is ast.Starred for a in call.args[:index + 1]) else next(
                (k.value for k in call.keywords if k.arg == param), None)
            arg = _uncopied(self.facts, arg)
            if not isinstance(arg, ast.Name) or not _switched_off_at(self.facts, call, arg.id, attr):
                return False
        return True

    def _class_of(self, dotted: str) -> Optional[tuple[ModuleFacts, ast.ClassDef]]:
        """(the file's facts, the class) of the project class `dotted`, as owner_of_class finds it."""
        local = local_class(self.facts, dotted)
        if local is not None:
            return self.facts, local
        module, _, name = dotted.rpartition(".")
        path = path_for_module(self.facts, module) if module else None
        other = self.facts.project.facts_for_path(self.facts, path) if path else None
        if other is None:
            return None
        cls = next((n for n in other.tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
        return (other, cls) if cls is not None else None

    def _chain(self, expr: ast.Attribute, depth: int, ctx: dict) -> frozenset:
        """An attribute chain that CompiledValues does not bind to a compile call itself:
        its assignments of other values (`self.ema = torch.compile(e) if c else None`,
        `self.raw = self.model`): for `self.x`, those in any method of the class; for
        other chains, those in the same def (or at module level)."""
        facts = self.facts
        text = chain_text(expr)
        if text is None:
            return NOTHING
        own = facts.statement_of(expr)
        read_first = False  # assignments below `own` run after it (unless a loop brings them back)
        if text.startswith("self."):
            cls = next((a for a in facts.ancestors(expr) if isinstance(a, ast.ClassDef)), None)
            scopes = list(methods(cls).values()) if cls is not None else []
        else:
            func = facts.enclosing_function(expr)
            scopes = [func or facts.tree]
            # a chain on an object the def makes itself is read before it is rebound further
            # down: the helper handed `model.nn_module` loads into the plain module that a
            # later line compiles (ball-action-spotting's `load_weights_from_pretrain(...)`
            # then `model.nn_module = torch.compile(...)`: 2 CL511 judged false in
            # bench/fresh_reads batch 57), unless a loop around both reads it again. (An
            # object a caller passes may come back compiled by an earlier call.)
            read_first = own is not None and _made_here(func, text.split(".", 1)[0])
        loops = [a for a in facts.ancestors(expr) if isinstance(a, (ast.For, ast.AsyncFor, ast.While))] if read_first else ()
        found: frozenset = NOTHING
        for scope in scopes:
            for stmt in self._assigned_chains(scope).get(text, ()):
                if stmt is not own and not (read_first and _runs_after(stmt, own, loops)):
                    found |= self._holding(stmt.value, depth + 1, ctx)
        return ONLY_UNWRAPPED if UNWRAPPED in found else found

    def _assigned_chains(self, scope: ast.AST) -> dict[str, list[ast.Assign]]:
        """{chain text: the assignments to it} anywhere under `scope`, built once per scope
        (a walk per attribute test made transformers' CL512 45 s of CPU)."""
        table = self._chains.get(id(scope))
        if table is None:
            table = self._chains[id(scope)] = {}
            for stmt in walk(scope):
                if isinstance(stmt, ast.Assign):
                    for target in stmt.targets:
                        text = chain_text(target)
                        if text is not None and stmt not in table.setdefault(text, []):
                            table[text].append(stmt)
        return table

    def _name(self, name: ast.Name, depth: int, ctx: dict) -> frozenset:
        facts = self.facts
        bindings = bindings_under(facts)
        if bindings.binding_scope(name) is None:  # a global of another file
            cc = self.values.callee(name)
            return self._made(cc, facts) if cc is not None else NOTHING
        found: frozenset = NOTHING
        use_guards = None
        for bound in bindings.reaching(name):
            if bound.kind == "assign" and bound.conditional:
                use_guards = {**self.guards(name), **ctx} if use_guards is None else use_guards
                if _exclusive(self.guards(bound.stmt), use_guards):
                    continue  # `if compile: m = torch.compile(m)` ... `else: m.state_dict()`
            if bound.kind == "assign":
                found |= self._holding(bound.value, depth + 1, ctx)
            elif bound.kind == "param":
                found |= self._param(name, bound, depth)
        return ONLY_UNWRAPPED if UNWRAPPED in found else found  # unwrapped on one path: the code knows

    def _param(self, name: ast.Name, bound, depth: int) -> frozenset:
        """`self` in a method of an owner class; a parameter of a module-level function:
        what its callers in the project pass."""
        func = bound.stmt
        facts = self.facts
        cls = facts.parent(func)
        if isinstance(cls, ast.ClassDef):
            owned = self.owned(cls) if name.id == self_name(func) else None
            return frozenset({Wrapped(OWNER, owned[1], f"{owned[0]}._orig_mod.", cls.name)}) if owned else NOTHING
        if cls is not facts.tree or _annotated_not_module(facts, bound.stmt, name.id):
            return NOTHING
        key = (id(func), name.id)
        if key in self._params:  # asked again (each test of the parameter), or a cycle of calls
            return self._params[key]
        self._params[key] = NOTHING
        found: frozenset = NOTHING
        # callers in files that never spell `compile` are not read (a wrapper is made
        # where `torch.compile` is written, as CompiledValues reads other files), nor the
        # callers of a def more than MAX_CALLER_FILES files call: a library entry point,
        # not a helper handed the model (transformers' `auto_docstring(...)`, called in
        # 1,776 files, 240 of them spelling `compile`: reading them was most of CL512's
        # 45 s of CPU on transformers)
        for other, arg in arguments_of(facts, func, name.id, mentioning=b"compile", max_files=MAX_CALLER_FILES):
            wrappers = self if other is facts else other.get(CompiledWrappersFact)
            found |= wrappers._holding(arg, depth + 1, wrappers.guards(arg))
        self._params[key] = found
        return found

    def _not_a_wrapper_here(self, expr: ast.AST) -> bool:
        """`expr` is read where `isinstance(expr, OptimizedModule)` is known false: the
        `else` of that test, the body of `if not isinstance(...)` (nnUNet loads its weights
        into `self.network._orig_mod` in the other branch: bench/dev9)."""
        facts = self.facts
        text = facts.text(expr)
        return any(
            not truth and isinstance(test, ast.Call) and facts.resolve(test.func) == "builtins.isinstance"
            and len(test.args) == 2 and facts.text(test.args[0]) == text and _names_optimized_module(facts, test.args[1])
            for test, truth in tests_around(facts, expr, conditional_expressions=True))

    def guards(self, node: ast.AST) -> dict[str, bool]:
        """{test text: branch} for the `if` statements and conditional expressions around
        `node` in its scope and the scopes around it (`not x` is `x` on the other branch)."""
        facts = self.facts
        out: dict[str, bool] = {}
        child = node
        for anc in facts.ancestors(node):
            if isinstance(anc, (ast.If, ast.IfExp)) and child is not anc.test:
                test, polarity = _polarity(anc.test)
                branch = child in (anc.body if isinstance(anc, ast.If) else [anc.body])
                out.setdefault(facts.text(test), branch == polarity)
            child = anc
        return out

    # -- what a compile call makes ------------------------------------------------------
    def _made(self, cc: CompileCall, facts: ModuleFacts) -> frozenset:
        """A WRAPPER for `torch.compile(<module>)`; nothing for `m.compile()` (in place), a
        decorator, or a function target."""
        if cc.api == "Module.compile" or not isinstance(cc.node, ast.Call) or cc.target is None:
            return NOTHING
        where = facts if cc.path == facts.path else facts.project.facts_for_path(facts, cc.path)
        kind = target_kind(where, cc) if where is not None else None
        return NOTHING if kind == "function" else frozenset({Wrapped(WRAPPER, cc, "_orig_mod.", target=kind)})

    # -- owners -------------------------------------------------------------------------
    def owned(self, cls: ast.ClassDef, depth: int = 0) -> Optional[tuple[str, CompileCall]]:
        """(attr, compile call) when the nn.Module class `cls` of this file binds
        `self.<attr> = torch.compile(<module>)` in a method, or a base class of the
        project does."""
        key = id(cls)
        if key not in self._owners:
            self._owners[key] = None  # a cycle of bases ends here
            self._owners[key] = self._owned(cls, depth)
        return self._owners[key]

    def _owned(self, cls: ast.ClassDef, depth: int) -> Optional[tuple[str, CompileCall]]:
        facts = self.facts
        if not is_module_class(facts, cls):
            return None
        for text, _func, b_cls, _row, cc in self.values.bindings:
            parts = text.split(".")
            if b_cls is cls and len(parts) == 2 and parts[0] == "self" and self._made(cc, facts):
                return parts[1], cc
        if depth < 3:
            for base in cls.bases:
                found = self.owner_of_class(facts.resolve(base), depth + 1)
                if found is not None:
                    return found[0], found[1]
        return None

    def owner_of_class(self, dotted: Optional[str], depth: int = 0) -> Optional[tuple[str, CompileCall, str]]:
        """(attr, compile call, class name) for a project class named `dotted` (this file
        or another) that owns a compiled submodule."""
        if not dotted or dotted.startswith(("torch.", "builtins.")) or not dotted.rpartition(".")[2][:1].isupper():
            return None
        local = local_class(self.facts, dotted)
        if local is not None:
            found = self.owned(local, depth)
            return (found[0], found[1], local.name) if found is not None else None
        module, _, name = dotted.rpartition(".")
        path = path_for_module(self.facts, module) if module else None
        other = self.facts.project.facts_for_path(self.facts, path) if path else None
        if other is None or other is self.facts or b"compile" not in other.source.data:
            return None
        cls = next((n for n in other.tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
        found = other.get(CompiledWrappersFact).owned(cls, depth) if cls is not None else None
        return (found[0], found[1], name) if found is not None else None


def owning_compiles(facts: ModuleFacts, cls: ast.ClassDef, depth: int) -> list:
    """(file facts, compile call) for every `self.<attr> = torch.compile(...)` of `cls` and
    of its project bases (as CompiledWrappers.owned reads them, every one, not the first)."""
    wrappers = facts.get(CompiledWrappersFact)
    found = [(facts, cc) for text, _func, b_cls, _row, cc in wrappers.values.bindings
             if b_cls is cls and text.count(".") == 1 and text.startswith("self.") and wrappers._made(cc, facts)]
    if depth < 3:
        for base in cls.bases:
            dotted = facts.resolve(base)
            if not dotted or dotted.startswith(("torch.", "builtins.")):
                continue
            at = wrappers._class_of(dotted)
            if at is not None and at[1] is not cls:
                found += owning_compiles(at[0], at[1], depth + 1)
    return found


def _init_gate(facts: ModuleFacts, cc: CompileCall) -> Optional[tuple]:
    """(the `__init__`, parameter, attribute) when the compile `cc` runs in an `__init__`
    only where `<parameter>.<attribute>` (or `getattr(<parameter>, "<attribute>", ...)`)
    is true; None otherwise."""
    func = facts.enclosing_function(cc.node)
    if not isinstance(func, ast.FunctionDef) or func.name != "__init__":
        return None
    params = {a.arg for a in (func.args.posonlyargs + func.args.args)[1:]}  # (not `self`)
    for test, truth in tests_around(facts, cc.node):
        if not truth:
            continue
        if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) and test.value.id in params:
            return func, test.value.id, test.attr
        if isinstance(test, ast.Call) and facts.resolve(test.func) == "builtins.getattr" and len(test.args) >= 2 \
                and isinstance(test.args[0], ast.Name) and test.args[0].id in params \
                and isinstance(test.args[1], ast.Constant) and isinstance(test.args[1].value, str):
            return func, test.args[0].id, test.args[1].value
    return None


def _passes_on(init: ast.FunctionDef, base_init: ast.FunctionDef, param: str) -> bool:
    """`init` hands its own `param` to `super().__init__(...)` where `base_init` takes it."""
    base_params = [a.arg for a in base_init.args.posonlyargs + base_init.args.args][1:]
    for node in walk(init):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__" \
                and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name) \
                and node.func.value.func.id == "super":
            passed = [a.id if isinstance(a, ast.Name) else None for a in node.args]
            keywords = {k.arg: k.value for k in node.keywords}
            if param in base_params:
                index = base_params.index(param)
                if index < len(passed) and passed[index] == param and not any(
                        a.__class__ is ast.Starred for a in node.args[:index + 1]):
                    return True
            value = keywords.get(param)
            if isinstance(value, ast.Name) and value.id == param:
                return True
    return False


FALSY = (False, None, 0, "")


def _switched_off_at(facts: ModuleFacts, at: ast.AST, name: str, attr: str, depth: int = 0) -> bool:
    """`name.attr` holds a falsy literal where `at` runs: set so before it in its def, or,
    where the def stores neither and `name` is a parameter of a module-level def, so at
    every call of that def in the project (one at least) that passes it (`load_model(opt,
    ...)` after `opt.compile = False`)."""
    found = _set_falsy_before(facts, at, name, attr)
    if found is not None or depth > 0:
        return bool(found)
    func = facts.enclosing_function(at)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or facts.parent(func) is not facts.tree \
            or name not in [a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs]:
        return False
    seen = False
    for other, arg in arguments_of(facts, func, name, max_files=MAX_CALLER_FILES):
        arg = _uncopied(other, arg)
        if not isinstance(arg, ast.Name) or not _switched_off_at(other, arg, arg.id, attr, depth + 1):
            return False
        seen = True
    return seen


def _uncopied(facts: ModuleFacts, arg: Optional[ast.expr]) -> Optional[ast.expr]:
    """`x` for `copy.deepcopy(x)` / `copy.copy(x)` (the copy holds what `x` held), else `arg`."""
    while isinstance(arg, ast.Call) and len(arg.args) == 1 and facts.resolve(arg.func) in COPIES:
        arg = arg.args[0]
    return arg


def _set_falsy_before(facts: ModuleFacts, at: ast.AST, name: str, attr: str) -> Optional[bool]:
    """True: the def (or module) around `at` runs `name.attr = <falsy literal>` before it,
    in the block holding it or one around it, and nothing in between stores `name.attr` or
    rebinds `name` (a branch that might is in between too); False: something else stores
    them last; None: nothing before it in its def does."""
    node = facts.statement_of(at)
    stop = facts.enclosing_function(at)
    while node is not None and node is not stop:
        parent = facts.parent(node)
        if parent is None:
            return None
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.While)) and any(_stores(n, name, attr) for n in walk(parent)):
            return False  # (a store later in the loop reaches the next turn's call)
        block = next((b for b in (getattr(parent, f, None) for f in ("body", "orelse", "finalbody"))
                      if isinstance(b, list) and node in b), None)
        if block is not None:
            for stmt in reversed(block[:block.index(node)]):
                stores = [n for n in walk(stmt) if _stores(n, name, attr)]
                if not stores:
                    continue
                return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _stores(stmt.targets[0], name, attr)
                        and isinstance(stmt.targets[0], ast.Attribute) and isinstance(stmt.value, ast.Constant)
                        and any(stmt.value.value is v or (type(stmt.value.value) is type(v) and stmt.value.value == v)
                                for v in FALSY))
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return None
        node = parent
    return None


def _stores(node: ast.AST, name: str, attr: str) -> bool:
    """`node` stores `name.attr`, or binds `name` again."""
    if isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.ctx, ast.Store):
        return isinstance(node.value, ast.Name) and node.value.id == name
    return isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)


def target_kind(facts: ModuleFacts, cc: CompileCall) -> Optional[str]:
    """"function" (a def, lambda, method or `.forward` is compiled), "module" (a module
    is built or held), or None (cannot tell), for the target of a compile call of the
    file `facts` reads."""
    target = cc.target
    if target is None or isinstance(target, ast.Lambda):
        return "function"
    if isinstance(target, ast.Attribute):
        if target.attr in ("forward", "__call__"):
            return "function"
        owner = chain_text(target.value)
        cls = next((a for a in facts.ancestors(cc.node) if isinstance(a, ast.ClassDef)), None)
        if owner == "self" and cls is not None and target.attr in methods(cls):
            return "function"
        return None
    if isinstance(target, ast.Name):
        for bound in bindings_under(facts).reaching(target):
            if bound.kind == "def" and isinstance(bound.value, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return "function"
            if bound.kind == "assign" and isinstance(bound.value, ast.Lambda):
                return "function"
            if bound.kind == "assign" and _module_or_none(facts, bound.value):
                return "module"
        return None
    if isinstance(target, ast.Call):
        return "module" if _builds_module(facts, target) else None
    return None


def _runs_after(stmt: ast.stmt, own: ast.stmt, loops) -> bool:
    """`stmt` lies below `own` and in none of the loops around `own`: it runs after it."""
    return stmt.lineno > (own.end_lineno or own.lineno) and not any(
        loop.lineno <= stmt.lineno <= (loop.end_lineno or loop.lineno) for loop in loops)


def _made_here(func, name: str) -> bool:
    """`name` is a local that `func` (None: the module, run once) only assigns: no
    parameter, `global` or `nonlocal` of it."""
    if func is None:
        return True
    if isinstance(func, ast.Lambda):
        return False
    args = func.args
    if any(a.arg == name for a in args.posonlyargs + args.args + args.kwonlyargs) or \
            name in ((args.vararg.arg if args.vararg else None), (args.kwarg.arg if args.kwarg else None)):
        return False
    assigned = False
    for node in walk(func):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
        if isinstance(node, ast.Name) and node.id == name and node.ctx.__class__ is ast.Store:
            assigned = True
    return assigned


def _module_or_none(facts: ModuleFacts, expr: ast.AST) -> bool:
    """A module build, or a pick between one and None (`Net() if flag else None`)."""
    if isinstance(expr, (ast.IfExp, ast.BoolOp)):
        branches = [expr.body, expr.orelse] if isinstance(expr, ast.IfExp) else expr.values
        built = [b for b in branches if not (isinstance(b, ast.Constant) and b.value is None)]
        return bool(built) and all(_module_or_none(facts, b) for b in built)
    return _builds_module(facts, expr)


def _builds_module(facts: ModuleFacts, expr: ast.AST) -> bool:
    """`Net(...)`, `nn.Linear(...)`, `GPT.from_pretrained(...)`, `Net().to(dev)`: a module
    class of the project or torch, or a CapWords class that cannot be seen."""
    verdict = module_construction(facts, expr)
    if verdict is not False:
        return True
    call = strip_returns_self(expr)
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id[:1].isupper():
        func = func.value  # a constructor method: `GPT.from_pretrained(...)`
    last = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    dotted = facts.resolve(func) or ""
    return last[:1].isupper() and not dotted.startswith(("torch.", "builtins."))  # GPT(cfg), VAE(...) too


# annotations that say a parameter holds no module (`flag: bool`, `x: Optional[torch.Tensor]`)
NOT_MODULES = frozenset({
    "builtins.bool", "builtins.int", "builtins.float", "builtins.str", "builtins.bytes", "builtins.list",
    "builtins.dict", "builtins.tuple", "builtins.set", "torch.Tensor", "torch.dtype", "torch.device",
    "torch.Size", "torch.Generator",
})
TYPE_WRAPPERS = frozenset({"typing.Optional", "typing.Union", "typing.List", "typing.Tuple", "typing.Dict",
                           "builtins.list", "builtins.tuple", "builtins.dict"})


def _annotated_not_module(facts: ModuleFacts, func: ast.AST, param: str) -> bool:
    """The parameter `param` of `func` is annotated with types none of which is a module
    (only builtins scalars and containers, tensors, dtypes, None): its callers are not
    searched (a project-wide search per tested parameter was most of CL512's time on
    transformers, whose parameters are annotated)."""
    args = func.args
    arg = next((a for a in args.posonlyargs + args.args + args.kwonlyargs if a.arg == param), None)
    return arg is not None and arg.annotation is not None and _names_no_module(facts, arg.annotation)


def _names_no_module(facts: ModuleFacts, ann: ast.AST) -> bool:
    if isinstance(ann, ast.Constant):
        return ann.value is None
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):  # `Tensor | None`
        return _names_no_module(facts, ann.left) and _names_no_module(facts, ann.right)
    if isinstance(ann, ast.Subscript):
        parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        return facts.resolve(ann.value) in TYPE_WRAPPERS and all(_names_no_module(facts, p) for p in parts)
    if isinstance(ann, (ast.Name, ast.Attribute)):
        return facts.resolve(ann) in NOT_MODULES
    return False


def _names_optimized_module(facts: ModuleFacts, classes: ast.AST) -> bool:
    """`classes` (an isinstance second argument) is torch's OptimizedModule, alone or in a tuple."""
    items = classes.elts if isinstance(classes, ast.Tuple) else [classes]
    dotted = [facts.resolve(c) or "" for c in items]
    return any(d.startswith("torch.") and d.endswith(".OptimizedModule") for d in dotted)


def _polarity(test: ast.AST) -> tuple[ast.AST, bool]:
    """`not not x` -> (x, True), `not x` -> (x, False): the test and the branch it means."""
    branch = True
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, branch = test.operand, not branch
    return test, branch


def _exclusive(a: dict[str, bool], b: dict[str, bool]) -> bool:
    """Two places that the same test sends down different branches never both run."""
    return any(text in b and b[text] != branch for text, branch in a.items())


def _is_str(expr: ast.AST, text: str) -> bool:
    return isinstance(expr, ast.Constant) and expr.value == text


class CompiledWrappersFact(Fact):
    """What expressions of a file may hold a `torch.compile` wrapper (CompiledWrappers)."""

    name = "compiled wrappers"
    needs = (CompiledValuesFact, BindingsFact, ProjectFilesFact)

    @classmethod
    def compute(cls, facts: ModuleFacts) -> CompiledWrappers:
        return CompiledWrappers(facts)


def compiled_wrappers(facts: ModuleFacts) -> CompiledWrappers:
    return facts.get(CompiledWrappersFact)
