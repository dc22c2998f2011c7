"""What one file's rules may know beyond the file: the project's region index and the
other files of the project.

The engine makes one `Project` per linted file and hands it to that file's
ModuleFacts. Rules and analyses never open other files themselves: they ask
`facts.project.facts_for_path(...)`, and the project records what was read, which is
what the results cache needs to tell when a cached result still holds
(compile_lint/cache_validity.py). Region lookups go through a `RegionView`, which a
cache-aware engine replaces with one that records the lookups.

Parsed other files are shared between the files one process lints through `Sources`,
owned by the engine (one per run, or per worker process), never by a module global.
"""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, NamedTuple, Optional

from ...source import ParseFailure, SourceFile
from ..semantic.names import NameTable, import_root, imports_in_walk_order, module_name_for
from ..reach.regions import RegionInfo
from ..semantic.walk import walk_by_type

if TYPE_CHECKING:
    from ..semantic.facts import ModuleFacts


class RegionView:
    """The run's region index as rules see it ({dotted def name: RegionInfo})."""

    __slots__ = ("_regions",)

    def __init__(self, regions: Optional[dict[str, RegionInfo]] = None):
        self._regions = dict(regions or {})

    def get(self, dotted: str) -> Optional[RegionInfo]:
        """The region of one def by its dotted name (`pkg.mod.Class.forward`)."""
        return self._regions.get(dotted)

    def under(self, module: str) -> Iterator[tuple[str, RegionInfo]]:
        """The regions of the defs in `module` (every one for module "")."""
        prefix = f"{module}." if module else ""
        for dotted, region in self._regions.items():
            if dotted.startswith(prefix):
                yield dotted, region

    def of_defs(self, module: str, names: tuple[str, ...]) -> Iterator[tuple[str, RegionInfo]]:
        """The regions of the defs of the file of package `module` (its `__init__.py`),
        given the names its defs start with (`names`, sorted): `under(module)` would
        also hold every submodule's defs, `pkg.sub.f` as well as `pkg.f`."""
        cut, wanted = len(module) + 1, frozenset(names)
        # (RegionView's own `under`: a tracking view records this question, not that one)
        for dotted, region in RegionView.under(self, module):
            if dotted[cut:].partition(".")[0] in wanted:
                yield dotted, region

    def everything(self) -> dict[str, RegionInfo]:
        return self._regions


def mentions_token(data: bytes, token: bytes) -> bool:
    """Whether a file's bytes contain `token`."""
    return token in data


def may_call_name(data: bytes, name: str) -> bool:
    """Whether a file's bytes hold something that may be a call of `name` (`name(`,
    `.name(`, not `def name(`): a filter that never drops a real call."""
    encoded = name.encode()
    if not encoded.isascii():  # (`\b` and `\w` below are ASCII's)
        return re.search(rb"(?<!def )\b" + re.escape(encoded) + rb"\s*\(", data) is not None
    # the pattern `(?<!def )\bNAME\s*\(`, checked at each occurrence of the name: a
    # pattern led by a lookbehind is tried at every byte of the file (timm: every model
    # file defines `reset_classifier`, so the substring alone does not settle it)
    size, start = len(data), data.find(encoded)
    while start != -1:
        if (start == 0 or data[start - 1] not in _WORD) and data[start - 4 : start] != b"def ":
            end = start + len(encoded)
            while end < size and data[end] in _SPACE:
                end += 1
            if end < size and data[end] == 0x28:  # "("
                return True
        start = data.find(encoded, start + 1)
    return False


_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_SPACE = frozenset(b" \t\n\r\f\v")


# what a probe of another file asks, by kind: recorded as a cache dependency on the
# answer (cache_validity.probe_holds re-asks it), not on every byte of the file
def _binds_compiled(data: bytes, arg: str) -> bool:
    from ..compiled.values import binds_compiled  # (compiled_values imports this module)

    return binds_compiled(data, arg)


PROBES = {
    "mentions": lambda data, arg: mentions_token(data, arg.encode("latin-1")),
    "may_call": may_call_name,
    "binds_compiled": _binds_compiled,
}


# how many probe questions (a kind and an argument, each asked of up to every file of a
# project) a process keeps answers for
MAX_PROBE_QUESTIONS = 64
# how many bytes of the files probed a process keeps (Sources._bytes_for_probe)
MAX_PROBE_BYTES = 32 << 20


class TreeShape(NamedTuple):
    """A tree's nodes (breadth-first), each node's parent, the nodes by type; and,
    filled on first use, its calls by the called name (ModuleFacts.calls_by_name), its
    defs' qualified names (ModuleFacts.qualname_of) and its names and attributes read by
    name (ModuleFacts.reads_named)."""

    nodes: list
    parents: dict
    by_type: dict
    calls: dict
    qualnames: dict
    named: dict

    @classmethod
    def of(cls, tree, nodes: Optional[list] = None, parents: Optional[dict] = None) -> "TreeShape":
        """The shape of `tree`, from its walk_with_parents when the caller has it."""
        if nodes is None or parents is None:
            nodes, parents, by_type = walk_by_type(tree)
            return cls(nodes, parents, by_type, {}, {}, {})
        by_type = {}
        for node in nodes:
            by_type.setdefault(node.__class__, []).append(node)
        return cls(nodes, parents, by_type, {}, {}, {})


class Sources:
    """Other files' parsed contents (bytes, tree, names), keyed by path and stat, so a
    module that many files import is parsed once per process and run."""

    def __init__(self, max_files: int = 256, snapshot: bool = False):
        """With `snapshot`, files are taken not to change while this object lives (a
        worker of one pass): each is stat'ed once and each folder listed once."""
        self._parsed: dict[tuple[str, int, int], Optional[tuple]] = {}
        # (probe kind, argument) -> {(path, size, mtime): answer}: by question, since a
        # rule asks one question of every file of the project (CL202: who calls `reset`?)
        self._probes: dict[tuple[str, str], dict[tuple, bool]] = {}
        self._max = max_files
        self._snapshot = snapshot
        self._stats: dict[str, Optional[tuple[str, int, int]]] = {}
        self._listings: dict[str, list[str]] = {}
        self._asked_of_all: dict[tuple, tuple[list[str], object]] = {}  # may_call_among, mentioning_among
        self._module_paths: dict[tuple[str, str], Optional[str]] = {}  # (folder, module) -> file (module_path)
        # (folder, module) -> the module's file right under the folder: the folders above a
        # file's (its import root and theirs) are asked again from every folder below them
        self._module_files: dict[tuple[str, str], Optional[str]] = {}
        # file version -> {kind: derived} (made once per version); dropped with the file's
        # parsed entry: what is derived from a tree (compile calls, a semantic model) keeps
        # the tree alive, and 1,024 of them held a check of corpus M at twice dd75348's memory
        self._derived: dict[tuple, dict] = {}
        # file version -> its bytes, for probes: a rule asks dozens of questions of each of
        # a package's files (corpus M: 80 questions of timm's 483 files, 38,000 reads of
        # the same bytes); kept up to MAX_PROBE_BYTES in all, least recently used out first
        self._probe_bytes: dict[tuple, bytes] = {}
        self._probe_bytes_size = 0

    def _stat(self, path: str) -> Optional[tuple[str, int, int]]:
        if self._snapshot and path in self._stats:
            return self._stats[path]
        try:
            st = os.stat(path)
        except OSError:
            found = None
        else:
            found = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
        if self._snapshot:
            self._stats[path] = found
        return found

    def listing(self, folder: str, make: Callable[[str], list[str]]) -> list[str]:
        """make(folder) (a list of the folder's files), once per snapshot."""
        if not self._snapshot:
            return make(folder)
        found = self._listings.get(folder)
        if found is None:
            found = self._listings[folder] = make(folder)
        return found

    def module_path(self, path: str, module: str) -> Optional[str]:
        """The file of project module `module` as the file at `path` imports it
        (path_for_module): in a snapshot, looked up once per folder and module (each of
        2,000 files asks for the modules it imports: ~7,000 lookups of a few `isfile`s)."""
        if not self._snapshot:
            return _module_path(path, module)
        key = (os.path.dirname(os.path.abspath(path)), module)
        if key not in self._module_paths:
            self._module_paths[key] = _module_path(path, module, self._module_files)
        return self._module_paths[key]

    def parsed(self, path: str) -> Optional[tuple[SourceFile, object, NameTable]]:
        entry = self._entry(path)
        return (entry[0], entry[1], entry[2]) if entry is not None else None

    def shape(self, path: str) -> Optional[TreeShape]:
        """The file's nodes, parents and nodes by type, walked once per file version in
        this process (every file linted here that reads this one shares them)."""
        entry = self._entry(path)
        return entry[3] if entry is not None else None

    def _entry(self, path: str) -> Optional[tuple]:
        """(source, tree, names, shape) of the file, parsed and walked once per version."""
        key = self._stat(path)
        if key is None:
            return None
        if key in self._parsed:
            found = self._parsed.pop(key)  # most recently used last
            self._parsed[key] = found
            return found
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            source = SourceFile(path, data)
            tree = source.parse()
        except (OSError, ParseFailure):
            found = None
        else:
            module, is_package = module_name_for(path)
            shape = TreeShape.of(tree)
            names = NameTable.build(tree, module, is_package, imports=imports_in_walk_order(shape.by_type, shape.parents))
            found = (source, tree, names, shape)
        if len(self._parsed) >= self._max:  # forget the least recently used one, and what was derived from it
            oldest = next(iter(self._parsed))
            del self._parsed[oldest]
            self._derived.pop(oldest, None)
        self._parsed[key] = found
        return found

    def derived(self, path: str, kind: tuple, make: Callable[[SourceFile, object, NameTable], object]):
        """make(source, tree, names) for the file, once per file version and `kind` in
        this process: what every importer asks of a module (its compile calls: 2,860
        transformers files import the same few dozen) is built once, not per importer.
        None when the file cannot be read or parsed."""
        key = self._stat(path)
        if key is None:
            return None
        kinds = self._derived.get(key)
        if kinds is not None and kind in kinds:
            if key in self._parsed:  # in use: the file stays among the most recent
                self._parsed[key] = self._parsed.pop(key)
            return kinds[kind]
        entry = self._entry(path)
        value = make(entry[0], entry[1], entry[2]) if entry is not None else None
        self._derived.setdefault(key, {})[kind] = value
        return value

    def mentions(self, path: str, token: bytes) -> bool:
        """Whether the file's bytes contain `token` (a cheap filter before parsing it)."""
        return self._probe(path, "mentions", token.decode("latin-1"))

    def may_call(self, path: str, name: str) -> bool:
        """Whether the file's bytes may hold a call of `name` (may_call_name)."""
        return self._probe(path, "may_call", name)

    def may_call_among(self, paths: list[str], name: str) -> dict[tuple[str, str, str], bool]:
        """{(path, "may_call", name): may_call(path, name)} for every path: one rule asks
        it of every file of the project, for each linted file; in a snapshot the answer
        is made once and shared (Project.probes takes it whole)."""
        return self._asked_of_list(paths, (name,),
                                   lambda: {(path, "may_call", name): self.may_call(path, name) for path in paths})

    def mentioning_among(self, paths: list[str], token: bytes) -> tuple[list[str], frozenset, dict]:
        """(the paths whose bytes hold `token`, the same as a set, {(path, "mentions",
        token): found} for every path), as may_call_among: in a snapshot made once per
        list and token, so the list is the same object each time (may_call_among then
        answers it from its own table too)."""
        arg = token.decode("latin-1")

        def make():
            answers = {(path, "mentions", arg): self.mentions(path, token) for path in paths}
            kept = [key[0] for key, found in answers.items() if found]
            return kept, frozenset(kept), answers

        return self._asked_of_list(paths, ("mentions", arg), make)

    def _asked_of_list(self, paths: list[str], question: tuple, make: Callable[[], object]):
        """make(), the answer to `question` about every file of `paths`: in a snapshot
        made once per list and question, and shared."""
        if not self._snapshot:
            return make()
        key = (id(paths), *question)
        found = self._asked_of_all.get(key)
        if found is None or found[0] is not paths:  # (the list kept: its id is not reused)
            found = self._asked_of_all[key] = (paths, make())
        return found[1]

    def _probe(self, path: str, kind: str, arg: str) -> bool:
        """PROBES[kind] asked of the file's bytes, once per file version."""
        key = self._stat(path)
        if key is None:
            return False
        answers = self._probes.get((kind, arg))
        if answers is None:
            if len(self._probes) >= MAX_PROBE_QUESTIONS:  # forget the oldest question
                del self._probes[next(iter(self._probes))]
            answers = self._probes[(kind, arg)] = {}
        found = answers.get(key)
        if found is None:
            data = self._bytes_for_probe(path, key)
            found = PROBES[kind](data, arg) if data is not None else False
            answers[key] = found
        return found

    def _bytes_for_probe(self, path: str, key: tuple) -> Optional[bytes]:
        data = self._probe_bytes.pop(key, None)
        if data is None:
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                return None
            if len(data) > MAX_PROBE_BYTES:
                return data  # (not kept: it would push out every other file)
            self._probe_bytes_size += len(data)
            while self._probe_bytes_size > MAX_PROBE_BYTES and self._probe_bytes:
                self._probe_bytes_size -= len(self._probe_bytes.pop(next(iter(self._probe_bytes))))
        self._probe_bytes[key] = data  # most recently used last
        return data


class Project:
    """The project around one linted file: its region index, its settings, the torch
    version it targets, and the other files its rules read (recorded in `read`)."""

    def __init__(
        self,
        regions: Optional[RegionView] = None,
        settings=None,
        *,
        target_torch: Optional[str] = None,
        sources: Optional[Sources] = None,
    ):
        self.regions = regions if regions is not None else RegionView()
        self.settings = settings
        self.target_torch = target_torch
        self.sources = sources if sources is not None else Sources()
        self.read: dict[str, Optional["ModuleFacts"]] = {}  # path -> its facts (None: read, not parsed)
        # (path, kind, argument) -> answer: what was asked of another file without reading
        # it for its meaning (PROBES); the cache depends on the answer, not the bytes
        self.probes: dict[tuple[str, str, str], bool] = {}
        # folder -> the dependency (listing.Listing.dependency) of each project listing searched
        self.listings: dict[str, str] = {}
        # the facts the running rule declared (`Rule.needs`); None: any. Set by the engine.
        self.allowed: Optional[frozenset] = None
        self._facts: dict[str, Optional["ModuleFacts"]] = {}

    def facts_for_path(self, asking: "ModuleFacts", path: str) -> Optional["ModuleFacts"]:
        """ModuleFacts of another file of the project (`asking` itself for its own path),
        seeing the same region index and recorded as read."""
        if os.path.abspath(path) == os.path.abspath(asking.path):
            return asking
        key = os.path.abspath(path)
        if key in self._facts:
            self.read[path] = self._facts[key]
            return self._facts[key]
        parsed = self.sources.parsed(path)
        other = None
        if parsed is not None:
            from ..semantic.facts import ModuleFacts

            source, tree, names = parsed
            other = ModuleFacts(source, tree, names, shape=self.sources.shape(path), project=self)
        self._facts[key] = other
        self.read[path] = other
        return other

    def release(self) -> None:
        """Forget the other files' facts once the linted file's findings and
        dependencies are taken: each points back at this project, a reference cycle
        only the cyclic GC would free."""
        for other in self._facts.values():
            if other is not None:
                other.release()
        self._facts.clear()
        self.read.clear()

    def listed(self, folder: str, listing) -> None:
        """The rules searched the project's files under `folder` (a listing.Listing): the
        result depends on that list (a file added or removed there re-checks it)."""
        if folder not in self.listings:
            self.listings[folder] = listing.dependency()

    def mentions(self, path: str, token: bytes) -> bool:
        """Whether another file contains `token` (recorded as a probe)."""
        found = self.sources.mentions(path, token)
        self.probes[(path, "mentions", token.decode("latin-1"))] = found
        return found

    def may_call(self, path: str, name: str) -> bool:
        """Whether another file may call `name` (Sources.may_call; recorded as a probe)."""
        found = self.sources.may_call(path, name)
        self.probes[(path, "may_call", name)] = found
        return found

    def files_mentioning(self, paths: list[str], token: bytes) -> tuple[list[str], frozenset]:
        """The paths whose files contain `token` (a list and a set), every answer
        recorded as a probe."""
        kept, kept_set, answers = self.sources.mentioning_among(paths, token)
        self.probes.update(answers)
        return kept, kept_set

    def files_that_may_call(self, paths: list[str], name: str) -> list[str]:
        """The paths whose files may call `name`, every answer recorded as a probe."""
        answers = self.sources.may_call_among(paths, name)
        self.probes.update(answers)
        return [key[0] for key, found in answers.items() if found]


def path_for_module(facts: "ModuleFacts", module: str) -> Optional[str]:
    """The file of a project module named by dotted `module` (as an import in this file
    writes it, or as the module name of a relative import), found next to this file,
    in its import root, or in the folders above it (names.import_root)."""
    if not facts.names.module:
        return None
    return facts.project.sources.module_path(facts.path, module)


def module_def(facts: "ModuleFacts", dotted: str):
    """(the facts of the file that defines it, the def) for a module-level function named
    by dotted `dotted`: one of this file, or of the project file it is imported from;
    None when it is no such def."""
    import ast

    module, _, name = dotted.rpartition(".")
    if not module:
        return None
    owner = facts
    if module != facts.names.module:
        path = path_for_module(facts, module) if facts.project else None
        owner = facts.project.facts_for_path(facts, path) if path else None
    if owner is None:
        return None
    found = next((s for s in owner.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name), None)
    return (owner, found) if found is not None else None


def _module_path(path: str, module: str, memo: Optional[dict] = None) -> Optional[str]:
    """path_for_module for a file at `path` (one with a module name). `memo`: (folder,
    module) -> _module_file's answer, where the files do not change while it lives."""
    here = os.path.dirname(os.path.abspath(path))
    root, prefix = import_root(path)
    folders = [here, root]
    above = root
    for _ in range(len(prefix)):  # a name that starts at the project root
        above = os.path.dirname(above)
        folders.append(above)
    parts = module.split(".")
    tried = dict.fromkeys(folders)
    memo = {} if memo is None else memo
    for folder in tried:
        if (folder, module) not in memo:
            memo[(folder, module)] = _module_file(folder, parts)
        found = memo[(folder, module)]
        if found is not None:
            return found
    # then the project's packages under an import folder of their own (`src/pkg`), as
    # the region index's import roots (listed only when the folders above lack the module)
    for folder in _import_folders(above):
        if folder not in tried and os.path.isfile(os.path.join(folder, parts[0], "__init__.py")):
            found = _module_file(folder, parts)
            if found is not None:
                return found
    # a module name of the region index starts with the folders below the project root,
    # where a dot in a folder's name is written `_` (`proj.v2/pkg` is `proj_v2.pkg`)
    return _spelled_path(above, parts) if prefix and any("_" in part for part in parts) else None


def _module_file(folder: str, parts: list) -> Optional[str]:
    base = os.path.join(folder, *parts)
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _import_folders(root: str, _cache: dict = {}) -> tuple:
    """The folders right below a project root that are no package themselves (`src`,
    `python`): where an installed project's packages may live."""
    try:
        moved = os.stat(root).st_mtime_ns  # (a folder added or removed there moves it)
    except OSError:
        return ()
    hit = _cache.get(root)
    if hit is not None and hit[0] == moved:
        return hit[1]
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        entries = []
    found = tuple(
        e.path for e in entries
        if not e.name.startswith(".") and e.is_dir() and not os.path.isfile(os.path.join(e.path, "__init__.py"))
    )
    _cache[root] = (moved, found)
    return found


def _spelled_path(root: str, parts: list) -> Optional[str]:
    """The file of `parts` under `root`, each folder matched by its name or its name with
    dots written `_`."""
    folder = root
    for i, part in enumerate(parts):
        for candidate in (os.path.join(folder, part + ".py"), os.path.join(folder, part, "__init__.py")):
            if i == len(parts) - 1 and os.path.isfile(candidate):
                return candidate
        if os.path.isdir(os.path.join(folder, part)):
            folder = os.path.join(folder, part)
            continue
        if "_" not in part:
            return None  # no folder named with a dot is spelled `part`
        try:
            names = [n for n in os.listdir(folder) if "." in n and n.replace(".", "_") == part and os.path.isdir(os.path.join(folder, n))]
        except OSError:
            return None
        if not names:
            return None
        folder = os.path.join(folder, names[0])
    return None


__all__ = ["Project", "RegionView", "Sources", "path_for_module"]


def kinds_of(regions: Iterable[tuple[str, RegionInfo]]) -> set[str]:
    kinds: set[str] = set()
    for _, region in regions:
        kinds |= region.kinds
    return kinds
