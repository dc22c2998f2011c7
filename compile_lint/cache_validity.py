"""When does a computed result still hold? The region facts and files it came from.

A file's findings depend on its bytes, its settings, the region facts its rules looked
at and the bytes of other files they read. `TrackedRegionView` records the region facts
(its own module's regions, single defs looked up by name, or all of them) as tokens;
`RegionDigests` gives each token's digest under a region index. A result keeps the
digest of every token it used (`used`) and of every file it read (`deps`: a file's
digest, a probe's answer, or the digest of a folder's file list it searched); it holds
under another index, or on another run, when all of them are unchanged.
"""
from __future__ import annotations

import os
from typing import Callable, Iterator, Optional

from .analysis.project.listing import LISTING
from .cache import blake2b

EMPTY = "-"  # the digest of "no region facts"


def __getattr__(name: str):
    """TrackedRegionView, made on first use: its base class lives with the analysis,
    which a warm run answered from the cache never imports."""
    if name == "TrackedRegionView":
        value = globals()[name] = _tracked_region_view()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _tracked_region_view():
    from .analysis.project.context import RegionView
    from .analysis.reach.regions import RegionInfo

    class TrackedRegionView(RegionView):
        """The region index as one file's rules see it, recording what they look at."""

        __slots__ = ("seen", "modules", "packages", "all_seen")

        def __init__(self, regions: Optional[dict[str, RegionInfo]] = None):
            super().__init__(regions)
            self.seen: set[str] = set()
            self.modules: set[str] = set()
            self.packages: set[tuple[str, tuple[str, ...]]] = set()
            self.all_seen = False

        def get(self, dotted: str) -> Optional[RegionInfo]:
            self.seen.add(dotted)
            return super().get(dotted)

        def under(self, module: str) -> Iterator[tuple[str, RegionInfo]]:
            self.modules.add(module)
            return super().under(module)

        def of_defs(self, module: str, names: tuple[str, ...]) -> Iterator[tuple[str, RegionInfo]]:
            self.packages.add((module, names))
            return super().of_defs(module, names)

        def everything(self) -> dict[str, RegionInfo]:
            self.all_seen = True
            return super().everything()

        def used(self) -> list[tuple]:
            if self.all_seen:
                return [("all",)]
            return ([("mod", m) for m in sorted(self.modules)] + [("defs", m, names) for m, names in sorted(self.packages)]
                    + [("key", k) for k in sorted(self.seen)])

    TrackedRegionView.__module__, TrackedRegionView.__qualname__ = __name__, "TrackedRegionView"
    return TrackedRegionView


def _region_repr(dotted: str, info) -> bytes:
    return repr((dotted, sorted(info.kinds), info.sites, info.via)).encode("utf-8", "surrogatepass")


class RegionDigests:
    """The digest of one fact about a region index: ("mod", m) the regions of every def
    under module m, ("defs", p, names) those of the defs of package p's own file (the
    ones whose name after `p.` starts with one of `names`: RegionView.of_defs), ("key",
    name) one def's region (or none), ("all",) all of it."""

    def __init__(self, regions: dict):
        self.regions = dict(regions)
        self._buckets: Optional[dict[str, list[str]]] = None
        self._memo: dict[tuple, str] = {}

    def _hash(self, keys) -> str:
        keys = [k for k in keys if k in self.regions]
        if not keys:
            return EMPTY
        h = blake2b(digest_size=16)
        for k in sorted(keys):
            h.update(_region_repr(k, self.regions[k]))
        return h.hexdigest()

    def __call__(self, token: tuple) -> str:
        found = self._memo.get(token)
        if found is not None:
            return found
        kind = token[0]
        if kind == "key":
            value = self._hash([token[1]])
        elif kind == "mod" and token[1]:
            value = self._hash(self._under(token[1]))
        elif kind == "defs":
            cut, names = len(token[1]) + 1, frozenset(token[2])
            value = self._hash([k for k in self._under(token[1]) if k[cut:].partition(".")[0] in names])
        else:  # ("all",), or the regions under module "" (every one)
            value = self._hash(self.regions)
        self._memo[token] = value
        return value

    def _under(self, module: str) -> list[str]:
        """The regions' dotted names under `module` (bucketed once per index)."""
        if self._buckets is None:
            buckets: dict[str, list[str]] = {}
            for dotted in self.regions:
                parts = dotted.split(".")
                for cut in range(1, len(parts)):
                    buckets.setdefault(".".join(parts[:cut]), []).append(dotted)
            self._buckets = buckets
        return self._buckets.get(module, [])


def still_holds(used: dict[tuple, str], deps: tuple, digests: Optional[RegionDigests],
                current_digest: Callable[[str], Optional[str]], checked: Optional[dict] = None) -> bool:
    """Whether a result computed from region facts `used` and files `deps` holds under
    the index `digests` describes (None: the very index the result was last checked
    against, so its facts hold) and the files as they are now. `checked` memoizes the
    answer per dependency across the results of one run (many files probe the same
    files: ~70,000 dependencies, ~2,000 distinct, on corpus M)."""
    for token, digest in used.items() if digests is not None else ():
        if digests(token) != digest:
            return False
    if checked is None:
        checked = {}
    # What is known already is looked up in C; only the deps not yet answered in this
    # run are visited here (files sharing most of their deps: 28 of corpus M's files
    # each read all 2,102 files for a name, 70,000 deps in all, 8,500 distinct)
    answers = list(map(checked.get, deps))
    if False in answers:
        return False
    at = 0
    while True:
        try:
            at = answers.index(None, at)
        except ValueError:  # none left to answer
            return True
        dep = deps[at]
        holds = checked.get(dep)  # (a dep twice in `deps`)
        if holds is None:
            path, dig = dep
            if dig is not None and dig.startswith(PROBE):
                holds = probe_holds(path, dig, current_digest)
            elif dig is not None and dig.startswith(LISTING):
                holds = listing_holds(path, dig)
            else:
                holds = current_digest(path) == dig
            checked[dep] = holds
        if not holds:
            return False
        at += 1


PROBE = "probe:"


def probe_dep(kind: str, arg: str, answer: bool, digest: Optional[str]) -> str:
    """The dependency a probe of another file leaves (analysis/project/context.py PROBES): the
    file's digest when asked and the answer. The file unchanged, it holds at the cost of
    a digest check; changed, the probe is asked again, so editing a file that was only
    searched for a name stales a result only when the answer changes."""
    return f"{PROBE}{kind}:{int(answer)}:{digest or '-'}:{arg}"


def probe_holds(path: str, dep: str, current_digest: Callable[[str], Optional[str]]) -> bool:
    kind, answer, digest, arg = dep[len(PROBE):].split(":", 3)
    if digest != "-" and current_digest(path) == digest:
        return True
    from .analysis.project.context import PROBES

    ask = PROBES.get(kind)
    if ask is None:
        return False
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return answer == "0"  # a file gone holds nothing
    return ask(data, arg) == (answer == "1")


def listing_holds(folder: str, dep: str) -> bool:
    """A project listing's dependency (analysis/project/listing.py; checked once per folder and
    run: `checked` memoizes it)."""
    from .analysis.project.listing import listing_holds as holds

    return holds(folder, dep)


class FolderStates:
    """What a run knows about folders, from one `stat` each: whether a folder's entry
    list (and those of every folder above it) is as it was when a result was recorded.

    A folder's mtime moves whenever an entry is added, removed or renamed in it, so the
    signature of a folder and of the folders above it pins what a file's module name
    depends on (`__init__.py` files, project markers) and what a folder walk found
    there. As for files (cache.RACY_NS), a folder changed less than RACY_NS before it
    was looked at is never trusted: its signature is None and nothing is reused."""

    def __init__(self):
        from . import cache as cache_mod

        self._cache = cache_mod
        self._now = cache_mod.now_ns()
        self._own: dict[str, Optional[tuple]] = {}
        self._chain: dict[str, Optional[str]] = {}

    def own(self, folder: str) -> Optional[tuple]:
        """The folder's trusted stat signature, or None (unreadable, or changed just now)."""
        if folder in self._own:
            return self._own[folder]
        try:
            st = os.stat(folder)
        except OSError:
            signature = None
        else:
            signature = self._cache.trusted_signature(st, self._now)
        self._own[folder] = signature
        return signature

    def identity(self, folder: str) -> Optional[tuple[int, int]]:
        """(device, inode) of a folder whose signature own() trusts, from that stat."""
        own = self.own(folder)
        return None if own is None else (own[4], own[3])  # cache.stat_signature's layout

    def chain(self, folder: str) -> Optional[str]:
        """A digest of the signatures of `folder` and of every folder above it up to the
        project root (None when any of them is not trusted).

        A file's module name (analysis.semantic.names.module_name_for) reads the folders from its
        own up to its top package (`__init__.py` files) and from there up to the nearest
        project marker; folders above a marked folder that is no package cannot change
        it, so the chain ends there. A project right under a folder that changes all the
        time (`/tmp/proj`, a busy home folder) keeps its module names."""
        if folder in self._chain:
            return self._chain[folder]
        own = self.own(folder)
        parent = os.path.dirname(folder)
        above = "/" if parent == folder or self._is_root(folder) else self.chain(parent)
        value = None if own is None or above is None else self._cache.key(own, above)
        self._chain[folder] = value
        return value

    @staticmethod
    def _is_root(folder: str) -> bool:
        """A folder holding a project marker that is not a package itself."""
        from .analysis.semantic.names import holds_marker

        return not os.path.exists(os.path.join(folder, "__init__.py")) and holds_marker(folder)

    def file(self, path: str) -> Optional[tuple]:
        """The trusted signature of a file that may be absent (("absent",) then)."""
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return ("absent",)
        except OSError:
            return None
        return self._cache.trusted_signature(st, self._now)
