"""Which attributes of an `nn.Module` class keep submodules in plain Python containers.

`nn.Module` registers what is assigned to an attribute, not what sits inside a Python
`list`, `tuple` or `dict`. This module finds, per module class of a file, every
`self.x` that is given such a container and what the container holds, in one walk of
each method that follows both the attribute and the local lists it is built from:

- a display or comprehension (`self.blocks = [Block() for _ in range(4)]`), a local
  container assigned to the attribute (`layers = []; ...; self.layers = layers`),
- items added later: `.append`/`.extend`/`.insert`, `+`/`+=` concatenation, item
  assignment (`self.heads[name] = Conv2d(...)`),
- and what each item is (`module_values.builds_module`): a module (also one a factory
  function of the file returns, asked of the value model), a call of a class the file
  cannot see, or something else. A local name holding one module counts as that
  module unless it was registered by hand (`self.add_module(n, m)`,
  `self.register_module(n, m)`, `setattr(self, n, m)`). Built-in modules without
  parameters or buffers, and classes of the file that hold none, are left out
  (analysis/stateless_modules.py): a list of them loses nothing.

An attribute the class wraps anywhere (`nn.ModuleList(self.x)`, `nn.Sequential(*x)`,
a loop that registers each item) is not reported. Each container also says whether
the class calls its items and whether `nn.ModuleList`/`nn.ModuleDict` could replace
it (`blocker`): used by CL201 to offer its fix or say why not.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from ...analysis.compiled.values import literal
from ...analysis.modules.classes import CONTAINERS, is_module_class, methods, read_construction, self_attr, self_name
from ...analysis.semantic.facts import Fact, ModuleFacts
from .module_values import builds_module, builds_module_container
from .stateless_modules import stateless_local_class
from ...analysis.semantic.walk import walk, walk_scope

# list and dict methods a ModuleList / ModuleDict lacks: a wrap would break these uses
LIST_ONLY = frozenset({"sort", "reverse", "index", "count", "remove", "copy", "clear"})
DICT_ONLY = frozenset({"get", "setdefault", "popitem", "copy", "fromkeys"})
ADDERS = frozenset({"append", "extend", "insert"})
REGISTERS = frozenset({"add_module", "register_module"})
DISPLAYS = (ast.List, ast.Tuple, ast.Dict, ast.ListComp, ast.DictComp)


@dataclass
class Items:
    """What a container holds, split by what the file can tell of each item."""

    modules: list[ast.AST] = field(default_factory=list)  # known modules holding state
    unknown: list[ast.AST] = field(default_factory=list)  # calls of classes the file cannot see
    others: list[ast.AST] = field(default_factory=list)  # known not to be modules
    keys: list[Optional[ast.AST]] = field(default_factory=list)  # dict keys seen

    def add(self, other: "Items") -> None:
        self.modules += other.modules
        self.unknown += other.unknown
        self.others += other.others
        self.keys += other.keys


@dataclass
class ContainerAttr:
    """`self.<name>` of a module class, first given a plain container."""

    name: str
    cls: ast.ClassDef
    first: ast.AST  # the value of the first `self.x = ...`
    container: str  # "list" | "tuple" | "dict"
    items: Items
    local: Optional[str] = None  # the first value is a local container: `self.x = layers`
    called: bool = False  # the class calls the items (`for l in self.x: l(y)`, `self.x[i](y)`)
    blocker: Optional[str] = None  # why nn.ModuleList / ModuleDict cannot replace it
    factory: bool = False  # the container is returned by a factory function of the file
    statement: Optional[ast.AST] = None  # the statement of the first `self.x = ...` (reported at)

    @property
    def holds_modules(self) -> bool:
        return bool(self.items.modules) or bool(self.items.unknown and self.called)


class ModuleContainersFact(Fact):
    """The container attributes holding modules, of every module class of the file."""

    name = "module containers"

    @classmethod
    def compute(cls, facts: ModuleFacts) -> list[ContainerAttr]:
        out: list[ContainerAttr] = []
        if next(facts.nodes(ast.ClassDef), None) is None:
            return out  # cheap: no class, nothing to look for
        # the cheap pre-check first: asking is_module_class of every class of the file
        # was a third of the rule's time on corpus M
        for node in candidate_classes(facts):
            if is_module_class(facts, node):
                out += class_containers(facts, node)
        return out


def container_kind(value: ast.AST) -> str:
    if isinstance(value, (ast.List, ast.ListComp)):
        return "list"
    if isinstance(value, ast.Tuple):
        return "tuple"
    if isinstance(value, (ast.Dict, ast.DictComp)):
        return "dict"
    return ""


def candidate_classes(facts: ModuleFacts) -> list[ast.ClassDef]:
    """Cheap pre-check over the file's statements: the classes in which an attribute
    gets a container that could hold modules, in source order."""
    found: dict[int, ast.ClassDef] = {}

    def note(node):
        cls = next((a for a in facts.ancestors(node) if isinstance(a, ast.ClassDef)), None)
        if cls is not None:
            found.setdefault(id(cls), cls)

    local_lists = None  # (id(def), name) of the local containers: found when first needed
    factories = {n.name for n in facts.tree.body if isinstance(n, ast.FunctionDef) and not n.name[:1].isupper()}
    for node in facts.nodes(ast.Assign, ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        if value is None or not any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets):
            continue
        if isinstance(value, ast.Name):
            if local_lists is None:
                local_lists = _local_containers(facts)
            hit = (id(facts.enclosing_function(node)), value.id) in local_lists
        elif isinstance(value, ast.Call):
            hit = isinstance(value.func, ast.Name) and value.func.id in factories  # may return a list of modules
        elif isinstance(value, ast.BinOp):
            hit = isinstance(value.left, ast.Attribute) and isinstance(value.right, DISPLAYS)
        elif isinstance(value, (ast.List, ast.Tuple, ast.Dict)) and not (value.values if isinstance(value, ast.Dict) else value.elts):
            hit = True  # empty, filled later
        else:
            hit = isinstance(value, DISPLAYS) and any(isinstance(sub, ast.Call) for sub in walk(value))
        if hit:
            note(node)
    for node in facts.nodes(ast.AugAssign):
        if isinstance(node.target, ast.Attribute) and isinstance(node.value, (*DISPLAYS, ast.Name)):
            note(node)
    for node in facts.nodes(ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr in ADDERS and isinstance(node.func.value, ast.Attribute):
            note(node)
    return sorted(found.values(), key=lambda c: (c.lineno, c.col_offset))


def _local_containers(facts: ModuleFacts) -> set[tuple[int, str]]:
    """(id of the enclosing def, name) of every name given a container display."""
    return {
        (id(facts.enclosing_function(node)), target.id)
        for node in facts.nodes(ast.Assign) if isinstance(node.value, DISPLAYS)
        for target in node.targets if isinstance(target, ast.Name)
    }


class LocalModules:
    """Which local names of one method hold a module, as the walk reaches each point.

    A name holds one when its latest assignment that builds a module (`builds_module`)
    says so; a name the method registers by hand (add_module / register_module /
    setattr) holds one that is not lost. Asked lazily: a factory call's verdict needs the
    file's value model, and most local names never end up in a container."""

    def __init__(self, facts: ModuleFacts, registered: set[str]):
        self.facts = facts
        self.registered = registered
        self._assigned: dict[str, list[ast.AST]] = {}  # name -> values assigned so far, in order
        self._builds: dict[int, Optional[bool]] = {}  # id(value) -> builds_module(value)

    def assign(self, name: str, value: ast.AST) -> None:
        self._assigned.setdefault(name, []).append(value)

    def holds(self, name: str) -> Optional[bool]:
        """True: a module; False: one registered by hand; None: not known as a module."""
        values = self._assigned.get(name)
        if not values:
            return None
        if name in self.registered:
            return False
        for value in reversed(values):
            verdict = self._builds.get(id(value), 0)
            if verdict == 0:
                verdict = self._builds[id(value)] = builds_module(self.facts, value)
            if verdict:
                return True
        return None


def items_of(facts: ModuleFacts, value: ast.AST, local_modules: LocalModules) -> Items:
    """The items an added value or container expression holds. `local_modules`: which
    local names hold a module at this point."""
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        elements = list(value.elts)
    elif isinstance(value, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        elements = [value.elt]
    elif isinstance(value, ast.Dict):
        elements = list(value.values)
    elif isinstance(value, ast.DictComp):
        elements = [value.value]
    else:
        elements = [value]
    out = Items(keys=list(value.keys) if isinstance(value, ast.Dict) else [])
    for item in elements:
        if isinstance(item, ast.Starred):
            continue
        if isinstance(item, ast.Name):
            holds = local_modules.holds(item.id)
            if holds is not None:
                if holds:
                    out.modules.append(item)
                continue
        if stateless_local_class(facts, item):
            continue  # nn.L1Loss(), nn.ReLU(), a loss class of this file holding nothing
        verdict = builds_module(facts, item)
        if verdict is None and read_construction(facts, item) is False:
            # a class of another project file that is no module (AnySat's `MaskCollator(object)`,
            # kept in a dict its owner calls the items of: bench/fresh_reads batch 24)
            verdict = False
        (out.modules if verdict else out.unknown if verdict is None else out.others).append(item)
    return out


@dataclass
class _Method:
    """One method's walk: its local containers and the attributes it fills."""

    facts: ModuleFacts
    me: str
    attrs: dict[str, ContainerAttr]
    cls: ast.ClassDef
    registered_loops: set[str]  # registered_names(method)
    local_items: dict[str, tuple[str, Items]] = field(default_factory=dict)  # name -> (kind, items)
    wrapped_locals: set[str] = field(default_factory=set)
    registered_locals: set[str] = field(default_factory=set)
    local_modules: Optional[LocalModules] = None  # made once registered_locals is known

    def run(self, method: ast.AST) -> None:
        nodes = sorted(walk_scope(method.body), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
        displayed = {t.id for n in nodes if isinstance(n, ast.Assign) and isinstance(n.value, DISPLAYS)
                     for t in n.targets if isinstance(t, ast.Name)}  # the local containers
        for node in nodes:
            if isinstance(node, ast.Call):
                if self.facts.resolve(node.func) in CONTAINERS:
                    self.wrapped_locals |= {sub.id for sub in walk(node) if isinstance(sub, ast.Name)}
                else:
                    handed = {a.id for a in whole_arguments(node) if isinstance(a, ast.Name)} & displayed
                    if handed and takes_modules(self.facts, node):
                        self.wrapped_locals |= handed
                registered = registered_value(self.facts, node)
                if isinstance(registered, ast.Name):
                    self.registered_locals.add(registered.id)
        self.wrapped_locals |= self.registered_loops
        self.local_modules = LocalModules(self.facts, self.registered_locals)
        for node in nodes:
            self.visit(node)

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                self.assign(target, node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            self.add(node.target, node.value, "`+=`")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ADDERS and node.args:
            arg = node.args[0] if node.func.attr == "extend" else node.args[-1]
            self.add(node.func.value, arg, f"`.{node.func.attr}()`")

    def assign(self, target: ast.AST, value: ast.AST) -> None:
        facts, me = self.facts, self.me
        kind = container_kind(value)
        if isinstance(target, ast.Name):
            self.local_modules.assign(target.id, value)
            if kind:
                entry = self.local_items.setdefault(target.id, (kind, Items()))
                entry[1].add(items_of(facts, value, self.local_modules))
            return
        attr = self_attr(target, me)
        if attr is not None:
            if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and self_attr(value.left, me) == attr:
                self.add(target, value.right, "`+` concatenation")
            elif getattr(self.attrs.get(attr), "first", None) is None:
                earlier = self.attrs.get(attr)
                found = self.attrs[attr] = self.first_value(attr, value, kind)
                if earlier is not None:  # items added before the first assignment
                    found.items.add(earlier.items)
            return
        if isinstance(target, ast.Subscript):
            items = self.add(target.value, value, "item assignment")
            if items is not None:
                items.keys.append(target.slice)

    def first_value(self, attr: str, value: ast.AST, kind: str) -> ContainerAttr:
        found = self._first_value(attr, value, kind)
        found.statement = self.facts.parent(value) or value
        return found

    def _first_value(self, attr: str, value: ast.AST, kind: str) -> ContainerAttr:
        if isinstance(value, ast.Name) and value.id in self.local_items and value.id not in self.wrapped_locals:
            kind, items = self.local_items[value.id]  # the same list object: later appends count
            return ContainerAttr(attr, self.cls, value, kind, items, local=value.id)
        if not kind and builds_module_container(self.facts, value):
            # a factory's list of modules: reported, but which wrapper fits is in the factory
            return ContainerAttr(attr, self.cls, value, "list", Items(modules=[value]), factory=True)
        items = items_of(self.facts, value, self.local_modules) if kind else Items()
        return ContainerAttr(attr, self.cls, value, kind, items)  # kind "": not a container

    def add(self, holder: ast.AST, value: ast.AST, how: str) -> Optional[Items]:
        """Items added to `self.x` (a local list is followed by `first_value`)."""
        attr = self_attr(holder, self.me)
        if attr is None:
            if isinstance(holder, ast.Name) and holder.id in self.local_items and how.startswith("`."):
                self.local_items[holder.id][1].add(self._added_items(value, how))
            return None
        found = self.attrs.get(attr)
        if found is None:  # filled before any `self.x = ...` this class shows
            found = self.attrs[attr] = ContainerAttr(attr, self.cls, None, "", Items())
        added = self._added_items(value, how)
        found.items.add(added)
        return found.items

    def _added_items(self, value: ast.AST, how: str) -> Items:
        """What `.append(v)`, `.insert(i, v)`, `.extend(vs)` or `+= vs` adds. An appended
        tuple or list literal is one item that holds its modules (`self.pairs.append((a, b))`:
        the modules are in the container, unregistered, but nn.ModuleList cannot hold the
        tuple, so no fix: kohya-ss sd-scripts' `Hypernetwork`, read in session 61)."""
        added = items_of(self.facts, value, self.local_modules)
        if how in ("`.append()`", "`.insert()`") and isinstance(value, (ast.Tuple, ast.List)):
            added.others.append(value)
        return added


def whole_arguments(call: ast.Call) -> list[ast.AST]:
    """The arguments a call is given whole: `f(x)`, `f(*x)`, `f(layers=x)` (not
    `f(x[0])`, which hands over one item)."""
    args = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
    return args + [kw.value for kw in call.keywords if kw.arg is not None]


def takes_modules(facts: ModuleFacts, call: ast.Call) -> bool:
    """`call` builds a module that is handed the container: a subclass of
    `nn.Sequential`/`nn.ModuleList` of the project (`EmbedSequential(*self.blocks)`), any
    module class of the file or another file, or a factory of the file returning a
    module. The modules are then that module's to register (`nn.Sequential` and its
    subclasses register their arguments): the owner's list is no longer where they live."""
    return builds_module(facts, call) is not False


def _may_fill(node: ast.AST) -> bool:
    """A statement or call through which _Method.visit can give an attribute items:
    an assignment to an attribute or item, an augmented assignment, `x.append(...)`."""
    cls = node.__class__
    if cls is ast.Assign:
        return any(t.__class__ in (ast.Attribute, ast.Subscript) for t in node.targets)
    if cls is ast.AnnAssign:
        return node.target.__class__ in (ast.Attribute, ast.Subscript)
    if cls is ast.AugAssign:
        return True
    return cls is ast.Call and node.func.__class__ is ast.Attribute and node.func.attr in ADDERS


def registered_value(facts: ModuleFacts, call: ast.Call) -> Optional[ast.AST]:
    """The module `self.add_module(n, M)`, `self.register_module(n, M)` or
    `setattr(self, n, M)` registers."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in REGISTERS and len(call.args) >= 2:
        return call.args[1]
    if facts.resolve(func) == "builtins.setattr" and len(call.args) == 3:
        return call.args[2]
    return None


def registered_names(facts: ModuleFacts, func: ast.AST, nodes: list[ast.AST]) -> set[str]:
    """Names (and `self.x` attributes, as "self.x") iterated by a loop that registers
    each item (add_module / register_module / setattr). `nodes`: walk(func)."""
    out: set[str] = set()
    loops: dict[int, ast.AST] = {}  # the loops holding a registering call
    for node in nodes:
        if isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Attribute) and node.func.attr in REGISTERS)
            or (isinstance(node.func, ast.Name) and node.func.id == "setattr")
        ):
            for anc in facts.ancestors(node):
                if isinstance(anc, (ast.For, ast.AsyncFor)):
                    loops[id(anc)] = anc
                if anc is func:
                    break
    me = self_name(func)
    for loop in loops.values():
        for sub in walk(loop.iter):
            if isinstance(sub, ast.Name):
                out.add(sub.id)
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                out.add(f"{sub.value.id}.{sub.attr}")
        out |= _appended_then_registered(facts, loop, me)
    return out


def _appended_then_registered(facts: ModuleFacts, loop: ast.AST, me: Optional[str]) -> set[str]:
    """"self.x" for each `self.x` the loop appends to and then registers the last item of
    (`self.heads.append(head)` then `self.add_module(name, self.heads[-1])`: yolov7_d2's
    semantic-segmentation head, judged false in bench/dev_findings), or, when it appends a
    tuple of modules, every element of the last item (`self.modules.append((a, b))` then
    `self.register_module(n0, self.modules[-1][0])` and `...[-1][1]`: kohya-ss sd-scripts'
    `Hypernetwork`, read in session 61): every module the list gets is registered as it is
    added."""
    if me is None:
        return set()
    appended: dict[str, set] = {}  # attr -> the widths of what it appends (None: one item, not a tuple)
    registered: dict[str, set] = {}  # attr -> the parts of its last item registered (None: all of it)
    for node in walk(loop):
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            # `self.x += [item]`: one item appended, as `.append(item)` (ClimSim's MLP,
            # `self.add_module('linear%d' % i, self.linears[-1])` after it: bench/fresh_reads batch 42)
            item = _single_item(node.value)
            attr = self_attr(node.target, me) if item is not None else None
            if attr is not None:
                appended.setdefault(attr, set()).add(_width(item))
            continue
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and len(node.args) == 1:
            # `.extend([item])` appends one item as `.append(item)` does
            item = node.args[0] if func.attr == "append" else _single_item(node.args[0])
            attr = self_attr(func.value, me) if item is not None else None
            if attr is not None:
                appended.setdefault(attr, set()).add(_width(item))
        value = registered_value(facts, node)
        part = None
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Subscript) \
                and isinstance(literal(value.slice), int):
            part, value = literal(value.slice), value.value  # `self.x[-1][k]`
        if isinstance(value, ast.Subscript) and literal(value.slice) == -1:
            attr = self_attr(value.value, me)
            if attr is not None:
                registered.setdefault(attr, set()).add(part)
    return {f"{me}.{attr}" for attr, widths in appended.items()
            if attr in registered and all(_all_parts(registered[attr], width) for width in widths)}


def _single_item(display: ast.AST) -> Optional[ast.AST]:
    """The one element of a list or tuple display (`[block]`), else None."""
    if isinstance(display, (ast.List, ast.Tuple)) and len(display.elts) == 1 and not isinstance(display.elts[0], ast.Starred):
        return display.elts[0]
    return None


def _width(item: ast.AST) -> Optional[int]:
    """How many modules an appended item holds: a tuple display's elements, else one (None)."""
    if isinstance(item, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in item.elts):
        return len(item.elts)
    return None


def _all_parts(parts: set, width: Optional[int]) -> bool:
    """The registered parts of the last item cover it: the whole item, or every element
    of a tuple `width` wide (by index from either end)."""
    if None in parts:
        return True
    return width is not None and all(i in parts or i - width in parts for i in range(width))


def class_containers(facts: ModuleFacts, cls: ast.ClassDef) -> list[ContainerAttr]:
    """Every attribute of `cls` first given a plain container that holds modules
    (`ContainerAttr.holds_modules`) and is never wrapped, with its items, in source order."""
    attrs: dict[str, ContainerAttr] = {}
    registered: dict[int, set[str]] = {}  # id(method) -> registered_names
    uses = _ClassUses(facts, cls, registered)
    for method in methods(cls).values():
        me = self_name(method)
        if me is not None and id(method) in uses.writing:
            _Method(facts, me, attrs, cls, registered[id(method)]).run(method)
    found = [attr for attr in attrs.values() if attr.first is not None and attr.container]
    if not any(attr.items.modules or attr.items.unknown for attr in found):
        return []  # holds no module, whatever the class does with it (most classes)
    uses.visit_methods()
    out = []
    for attr in found:
        if attr.name in uses.wrapped or _deleted_after(facts, attr):
            continue
        attr.called = attr.name in uses.called
        if not attr.holds_modules:
            continue
        attr.blocker = uses.blocker(attr)
        out.append(attr)
    return sorted(out, key=lambda a: (a.first.lineno, a.first.col_offset))


def _deleted_after(facts: ModuleFacts, attr: ContainerAttr) -> bool:
    """`del self.x_proj` later in the method that made the container: its modules lived only
    while that method copied what it needed (VMamba's SS2D stacks their weights into one
    `nn.Parameter`, then deletes the tuple; bench/dev45's Swin-UMamba, judged false in
    bench/dev_findings), so nothing unregistered stays on the module."""
    method = facts.enclosing_function(attr.first)
    me = self_name(method) if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if me is None:
        return False
    after = (attr.first.lineno, attr.first.col_offset)
    return any(
        isinstance(node, ast.Delete) and (node.lineno, node.col_offset) > after
        and any(self_attr(target, me) == attr.name for target in node.targets)
        for node in walk(method)
    )


class _ClassUses:
    """How the methods of a class use its attributes: which ones they wrap or register,
    which ones' items they call, and uses a module container would not support.

    In two steps: which methods may fill an attribute and which names they register
    (needed to find the containers), then, only for a class with a container that may
    hold modules, every use (`visit_methods`)."""

    def __init__(self, facts: ModuleFacts, cls: ast.ClassDef, registered: dict[int, set[str]]):
        self.facts = facts
        self.wrapped: set[str] = set()
        self.called: set[str] = set()
        self.attr_calls: dict[str, list[str]] = {}  # attr -> the methods called on it
        self.prepended: set[str] = set()  # `[...] + self.x`
        self.writing: set[int] = set()  # id of each method that may fill an attribute (_Method looks at these)
        self._walked: list[tuple[list, str]] = []  # (walk(method), its self name) per method
        for method in methods(cls).values():
            me = self_name(method)
            if me is None:
                continue
            nodes = walk(method)
            self._walked.append((nodes, me))
            if any(_may_fill(node) for node in nodes):
                self.writing.add(id(method))
            names = registered[id(method)] = registered_names(facts, method, nodes)
            self.wrapped |= {n.split(".", 1)[1] for n in names if n.startswith(f"{me}.")}

    def visit_methods(self) -> None:
        """Every use of an attribute in the methods: wraps, calls of items, methods called."""
        for nodes, me in self._walked:
            for node in nodes:
                self._visit(node, me)

    def _visit(self, node: ast.AST, me: str) -> None:
        if isinstance(node, ast.Call):
            func = node.func
            if self.facts.resolve(func) in CONTAINERS:
                self.wrapped |= {a for a in (self_attr(sub, me) for sub in walk(node)) if a}
                parent = self.facts.parent(node)
                if isinstance(parent, (ast.Assign, ast.AnnAssign)):
                    targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
                    self.wrapped |= {a for a in (self_attr(t, me) for t in targets) if a}
            else:
                whole = {a for a in (self_attr(arg, me) for arg in whole_arguments(node)) if a}
                if whole and takes_modules(self.facts, node):
                    self.wrapped |= whole
            if isinstance(func, ast.Subscript) and self_attr(func.value, me):
                self.called.add(self_attr(func.value, me))
            if isinstance(func, ast.Attribute) and self_attr(func.value, me):
                self.attr_calls.setdefault(self_attr(func.value, me), []).append(func.attr)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and self_attr(node.right, me):
            self.prepended.add(self_attr(node.right, me))
        loops = []
        if isinstance(node, (ast.For, ast.AsyncFor)):
            loops.append((node.target, node.iter))
        elif isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            loops += [(gen.target, gen.iter) for gen in node.generators]
        for target, it in loops:
            attrs = {a for a in (self_attr(s, me) for s in walk(it)) if a}
            bound = {n.id for n in walk(target) if isinstance(n, ast.Name)}
            if attrs and any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in bound for c in walk(node)):
                self.called |= attrs

    def blocker(self, attr: ContainerAttr) -> Optional[str]:
        """Why `nn.ModuleList` / `nn.ModuleDict` cannot replace the container, if so."""
        facts, items = self.facts, attr.items
        if attr.factory:
            return f"`{facts.text(attr.first.func)}()` builds the container"
        if items.others:
            return f"`{facts.text(items.others[0])[:40]}` is not a module"
        if items.unknown and not attr.called:
            return "some items may not be modules"
        is_dict = attr.container == "dict"
        keys = list(items.keys) + ([attr.first.key] if isinstance(attr.first, ast.DictComp) else [])
        if is_dict and not all(string_key(facts, key) for key in keys):
            return "nn.ModuleDict needs string keys"
        wrapper = "nn.ModuleDict" if is_dict else "nn.ModuleList"
        method = self._unsupported_call(attr.name, DICT_ONLY if is_dict else LIST_ONLY)
        if method is not None:
            return f"the class calls `.{method}()` on it, which {wrapper} lacks"
        if attr.name in self.prepended:
            return "a list is added in front of it"
        if attr.local is not None and self._changed_after(attr):
            return f"`{attr.local}` is changed after it is assigned"
        return None

    def _unsupported_call(self, name: str, unsupported: frozenset) -> Optional[str]:
        return next((m for m in self.attr_calls.get(name, ()) if m in unsupported), None)

    def _changed_after(self, attr: ContainerAttr) -> bool:
        func = self.facts.enclosing_function(attr.first)
        return any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == attr.local
            and node.lineno > attr.first.lineno
            for node in walk(func)
        )


def string_key(facts: ModuleFacts, key: Optional[ast.AST]) -> bool:
    """A dict key that is a string: a literal, an f-string, `str(...)`, or a loop
    variable over literal strings or over a parameter defaulting to them."""
    if key is None:
        return False
    if (isinstance(key, ast.Constant) and isinstance(key.value, str)) or isinstance(key, ast.JoinedStr):
        return True
    if isinstance(key, ast.Call) and facts.resolve(key.func) == "builtins.str":
        return True
    if not isinstance(key, ast.Name):
        return False
    for anc in facts.ancestors(key):
        if isinstance(anc, (ast.For, ast.AsyncFor)) and isinstance(anc.target, ast.Name) and anc.target.id == key.id:
            it = anc.iter
            func = facts.enclosing_function(anc)
            if isinstance(it, ast.Name) and isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = func.args.posonlyargs + func.args.args
                defaults = dict(zip([a.arg for a in args][len(args) - len(func.args.defaults):], func.args.defaults))
                it = defaults.get(it.id, it)
            return isinstance(it, (ast.Tuple, ast.List)) and bool(it.elts) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in it.elts
            )
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
    return False
