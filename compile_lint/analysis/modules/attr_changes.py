"""Python attributes that compiled or traced code reads, and the changes made to them
after `__init__`: the shared reasoning of CL102 (a tracer bakes the value in) and
CL202 (Dynamo guards on the value and recompiles).

Two places a change can come from:

- **the class itself** (`changed_reads`): a method other than `__init__` (and the
  helpers only `__init__` calls) writes `self.x`, and a method in a region reads it:
  a setter, `self.step += 1` in `forward`, `self.order.reverse()`;
- **the instance** (`instance_changes`): `traced = torch.jit.trace(model, x)` or
  `compiled = torch.compile(model)`, then `model.x = ...` in the same scope. The class
  may be defined in another file: then its region comes from the index and the kind
  of the value from the assignment itself.

Which attributes count is the caller's choice (`kinds`: the Python kinds of
`analysis/classes.python_kind`), and so is what makes a change a hazard (a later call
of the trace, a loop that also calls the compiled module).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterator, Optional

from .classes import (
    AttrWrite,
    Wrap,
    calls_of_name,
    class_region,
    enclosing_loops,
    init_attr_kinds,
    instance_writes,
    is_module_class,
    is_write_target,
    local_class,
    local_class_region,
    loop_value_kind,
    method_attr_writes,
    methods,
    python_kind,
    scopes,
    self_name,
    self_reads,
    wraps_in,
)
from ..semantic.facts import Fact, ModuleFacts
from ..project.calls import calls_named
from ..reach.regions import RegionInfo
from ..semantic.walk import walk, walk_scope


class ClassState:
    """Per class of one file, computed on first ask: the Python kinds of the attributes
    `__init__` sets, and the writes of attributes by the other methods."""

    def __init__(self, facts: ModuleFacts):
        self.facts = facts
        self._init: dict[int, dict] = {}
        self._writes: dict[int, dict[str, list[AttrWrite]]] = {}

    def init_kinds(self, cls: ast.ClassDef) -> dict[str, str]:
        """attr -> its Python kind, for attributes `__init__` sets to a plain value."""
        found = self._init.get(id(cls))
        if found is None:
            found = self._init[id(cls)] = {a: k[0] for a, k in init_attr_kinds(self.facts, cls).items()}
        return found

    def writes(self, cls: ast.ClassDef) -> dict[str, list[AttrWrite]]:
        found = self._writes.get(id(cls))
        if found is None:
            found = self._writes[id(cls)] = method_attr_writes(self.facts, cls)
        return found


class ClassStateFact(Fact):
    """The attribute kinds and writes of the file's classes (`ClassState`), shared by
    the rules about captured Python state (CL102, CL202)."""

    name = "class state"

    @classmethod
    def compute(cls, facts: ModuleFacts) -> ClassState:
        return ClassState(facts)


@dataclass
class ChangedRead:
    """`self.<attr>` read by a method in a region, and written by another method."""

    cls: ast.ClassDef
    method: str  # the name of the method in the region
    method_node: ast.AST
    region: RegionInfo
    attr: str
    node: ast.AST  # the read (`self.x`; the target of `self.x += 1` when `augmented`)
    kind: str  # the attribute's Python kind, from `__init__`
    write: AttrWrite  # the first write after `__init__`
    augmented: bool = False
    writes: list = field(default_factory=list)  # every write after `__init__`


def attr_uses(method: ast.AST, facts: ModuleFacts) -> list[tuple[str, ast.AST, bool]]:
    """(attr, node, augmented) for every read of `self.attr` in a method, including
    `self.attr += ...` (a read too; `augmented`), in source order."""
    out = [(a, n, False) for a, n in self_reads(method) if not is_write_target(facts, n)]
    me = self_name(method)
    for node in walk(method):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute):
            target = node.target
            if isinstance(target.value, ast.Name) and target.value.id == me:
                out.append((target.attr, target, True))
    return sorted(out, key=lambda r: (r[1].lineno, r[1].col_offset))


def changed_reads(facts: ModuleFacts, region_kind: str, kinds: frozenset) -> Iterator[ChangedRead]:
    """Reads of attributes of `kinds` in methods in a region of `region_kind`
    ("compiled" or "traced"), for module classes whose other methods change them."""
    for cls in facts.primary(ast.ClassDef):
        # the methods in a region first: most classes have none, and the attribute
        # facts below walk every method
        in_region = {
            name: (method, region) for name, method in methods(cls).items()
            if (region := facts.in_region(method, region_kind)) is not None
        }
        if not in_region:
            continue
        state = facts.get(ClassStateFact)
        init_kinds = {a: k for a, k in state.init_kinds(cls).items() if k in kinds}
        if not init_kinds or not is_module_class(facts, cls):
            continue
        writes = state.writes(cls)
        if region_kind == "compiled":
            # a write on the eager side of a compile test in a compiled method never runs
            # compiled (the eager warm-up that sets it once does not repeat)
            writes = {a: kept for a, ws in writes.items()
                      if (kept := [w for w in ws if not _never_runs_in(facts, w.node, region_kind)])}
        for name, (method, region) in in_region.items():
            for attr, node, augmented in attr_uses(method, facts):
                if attr in init_kinds and attr in writes and not _never_runs_in(facts, node, region_kind):
                    yield ChangedRead(cls, name, method, region, attr, node, init_kinds[attr], writes[attr][0], augmented, writes[attr])


def _never_runs_in(facts: ModuleFacts, node: ast.AST, region_kind: str) -> bool:
    """`node` sits on a branch the region's tracer never takes: the eager side of a compile
    test for Dynamo (`if torch.compiler.is_compiling(): pass elif torch.jit.is_scripting():
    <read>`, torchmd-net's `mol_sum`: bench/dev8); for a traced region, the body of
    `if torch.jit.is_scripting():`, which no tracer takes."""
    if region_kind == "compiled":
        from ..branches.compiling import eager_only, eager_only_method

        return eager_only(facts, node) or eager_only_method(facts, node)
    from ..branches.around import tests_around
    from ..branches.training import training_only

    tests = list(tests_around(facts, node))
    return any((value := _tracing_value(facts, test)) is not None and value != truth
               for test, truth in tests) or training_only(facts, node, tests)


def _tracing_value(facts: ModuleFacts, test: ast.AST) -> Optional[bool]:
    """What `test` (no `not` around it) is in every traced region (None: unknown or it
    depends on the tracer). "Traced" is torch.jit.trace, torch.fx, torch.export and
    torch.onnx.export alike: `is_scripting()` is False under all of them, but
    `is_tracing()` is True only under torch.jit.trace and `is_compiling()` True under
    torch.export (Dynamo), so those two decide nothing here."""
    if isinstance(test, ast.Call) and not test.args and facts.resolve(test.func) == "torch.jit.is_scripting":
        return False
    return None


@dataclass
class InstanceChange:
    """`holder.<attr> = ...` on an instance after a compile/trace call took it."""

    wrap: Wrap
    owner: ast.AST  # the function (or module) holding both
    body: list
    holder: str  # the name written through (the instance, or the compiled wrapper)
    attr: str
    node: ast.AST  # the statement or call that changes it
    how: str  # "assigned", "mutated with `.reverse()`", ...
    region: RegionInfo  # the region of the instance's class
    cls: Optional[ast.ClassDef]  # the class, when defined in this file
    kind: Optional[str]  # the value's Python kind: from `__init__` for a class of this file
    loops: list = field(default_factory=list)  # loops around the change
    calls: list = field(default_factory=list)  # calls of the compiled/traced result in the scope


def instance_changes(facts: ModuleFacts, region_kind: str) -> Iterator[InstanceChange]:
    """Attribute changes of instances after a `region_kind` call took them. Setting an
    attribute on a compiled wrapper (an OptimizedModule) sets it on the module, so the
    wrapper's name counts as the instance's for "compiled"."""
    for owner, body in scopes(facts, region_kind):
        wraps, _known = wraps_in(facts, body)
        for wrap in wraps:
            if wrap.kind != region_kind:
                continue
            local = local_class(facts, wrap.cls)
            region = local_class_region(facts, local, region_kind) if local is not None else class_region(facts, wrap.cls, region_kind)
            if region is None:
                continue
            init_kinds = facts.get(ClassStateFact).init_kinds(local) if local is not None else {}
            holders = [wrap.instance] + ([wrap.result] if region_kind == "compiled" and wrap.result != wrap.instance else [])
            calls = calls_of_name(body, wrap.result)
            for holder, attr, node, how in instance_writes(body, holders):
                if node.lineno <= wrap.call.lineno:
                    continue
                if local is not None:
                    kind = init_kinds.get(attr)
                else:
                    kind = assigned_kind(facts, node)
                yield InstanceChange(wrap, owner, body, holder, attr, node, how, region, local, kind,
                                     enclosing_loops(facts, node), calls)


def assigned_kind(facts: ModuleFacts, node: ast.AST) -> Optional[str]:
    """The Python kind a change gives the attribute, when the change says it:
    `m.steps = 20`, `m.k += 1`, `m.n = n` with `n` a loop variable over ints,
    `m.order.reverse()` (a list)."""
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        kind = python_kind(facts, node.value, {})
        if kind is None and isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            kind = loop_value_kind(facts, node.value.id, node)
        return kind
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("reverse", "sort"):
        return "list"
    return None


def maybe_python_value(facts: ModuleFacts, node: ast.AST) -> bool:
    """An assignment of a value of unknown type that is not plainly a tensor or a module
    (`shot["exposure"]`, `cfg.gamma`): when the class is in another file, this is as far
    as the file can tell."""
    if not isinstance(node, ast.Assign):
        return False
    for sub in walk(node.value):
        if isinstance(sub, ast.Call):
            dotted = facts.resolve(sub.func) or ""
            last = dotted.rsplit(".", 1)[-1] if dotted else getattr(sub.func, "attr", "")
            if dotted.startswith("torch.") or last[:1].isupper():
                return False
    return True


def read_in_region(facts: ModuleFacts, cls: ast.ClassDef, region_kind: str) -> dict[str, list[tuple[ast.AST, ast.AST]]]:
    """attr -> [(method, read)] for reads of `self.attr` in methods of `cls` in a region."""
    out: dict[str, list] = {}
    for method in methods(cls).values():
        if facts.in_region(method, region_kind):
            for attr, node, _augmented in attr_uses(method, facts):
                out.setdefault(attr, []).append((method, node))
    return out


def escapes(facts: ModuleFacts, owner: ast.AST, body: list, name: str, after_row: int) -> list[tuple[Optional[int], str]]:
    """(row or None, how) for each way the value held by `name` leaves this scope, to be
    used by code that runs later and that the linter may not see: returned, saved
    (`name.save(...)`, `torch.save`/`torch.jit.save`), stored on an object, or a module
    global read by a function."""
    out: list[tuple[Optional[int], str]] = []
    for node in walk_scope(body):
        if isinstance(node, ast.Return) and node.value is not None:
            if any(isinstance(n, ast.Name) and n.id == name for n in walk(node.value)):
                out.append((node.lineno, f"is returned at line {node.lineno}"))
        elif isinstance(node, ast.Call):
            func = node.func
            saved = isinstance(func, ast.Attribute) and func.attr == "save" and isinstance(func.value, ast.Name) and func.value.id == name
            saved = saved or (
                facts.resolve(func) in ("torch.jit.save", "torch.save")
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == name
            )
            if saved:
                out.append((node.lineno, f"is saved at line {node.lineno}"))
        elif isinstance(node, ast.Assign) and node.lineno > after_row:
            if isinstance(node.value, ast.Name) and node.value.id == name:
                for target in node.targets:
                    if isinstance(target, (ast.Attribute, ast.Subscript)):
                        out.append((None, f"is stored in `{facts.text(target)}` at line {node.lineno}"))
    if owner is facts.tree:
        for func in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in walk(func)):
                out.append((None, f"is a module global read by `{func.name}` (line {func.lineno})"))
                break
    return out


def repeated_write(facts: ModuleFacts, cls: ast.ClassDef, write: AttrWrite) -> Optional[tuple[ModuleFacts, ast.AST]]:
    """Where a write after `__init__` can run again and again, giving the attribute a new
    value each time: (file, node) of the write itself when its method runs in compiled
    code (a counter in `forward`), or of a call of its method inside a loop or inside
    compiled code, anywhere in the project. None for a method that only reconfigures the
    module once (`reset_classifier(...)`) or that nothing in view calls."""
    name = write.where.rsplit(".", 1)[-1]
    method = methods(cls).get(name)
    if method is None or facts.in_region(method, "compiled") is not None:
        return facts, write.node
    for other, call in calls_named(facts, name):
        if not fits(method, call) or not passes_value(method, call, write):
            continue  # another class's method of the same name (`meter.reset()`), or the same value each time
        if repeating_loops(other, call) or other.in_region(call, "compiled") is not None:
            return other, call
    return None


def repeating_loops(facts: ModuleFacts, call: ast.Call) -> list[ast.AST]:
    """The loops around a method call that call it on the same object again: not a loop
    over the receivers (`for block in self.blocks: block.set_input_size(s)` calls each
    block once)."""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    while isinstance(receiver, (ast.Attribute, ast.Subscript)):
        receiver = receiver.value
    name = receiver.id if isinstance(receiver, ast.Name) else None
    return [
        loop for loop in enclosing_loops(facts, call)
        if not (isinstance(loop, (ast.For, ast.AsyncFor)) and name in {n.id for n in walk(loop.target) if isinstance(n, ast.Name)})
    ]


def fits(method: ast.FunctionDef, call: ast.Call) -> bool:
    """A call whose arguments the method's signature accepts (`self` bound)."""
    args = method.args
    positional = [a.arg for a in args.posonlyargs + args.args][1:]
    required = len(positional) - len(args.defaults)
    given = len(call.args)
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return True
    named = {k.arg for k in call.keywords}
    if given > len(positional) and args.vararg is None:
        return False
    if not named <= set(positional[given:]) | {a.arg for a in args.kwonlyargs} and args.kwarg is None:
        return False
    return all(p in named for p in positional[given:required])


def passes_value(method: ast.FunctionDef, call: ast.Call, write: AttrWrite) -> bool:
    """A write `self.x = param` changes the value only through calls that pass `param`;
    one left to its default writes the same value every time."""
    node = write.node
    if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)):
        return True
    params = [a.arg for a in method.args.posonlyargs + method.args.args][1:]
    name = node.value.id
    if name not in params and name not in {a.arg for a in method.args.kwonlyargs}:
        return True
    index = params.index(name) if name in params else len(params)
    starred = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    return starred or index < len(call.args) or any(k.arg == name for k in call.keywords)
