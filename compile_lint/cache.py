"""The results cache: `.compile_lint_cache/` in the project root.

What the last runs learned is kept in a few files:

- `manifest`, one file for the whole project, read once per run: per path (absolute) a
  record of the file's `digest` (a hash of its bytes) and the `stat` signature it was
  taken under (size, mtime, ctime, inode, device), its module name and the folder
  state it was derived under (cache_validity.FolderStates), the digest of its
  `ModuleSummary` and the `summary_key` that summary is valid under (tool, digest,
  module name, wrappers), and its findings, valid while the digest, `settings_key`
  (tool fingerprint, enabled rules, config, target torch version) and the *region
  facts the findings were computed from* all match: for the file's own module and for
  every module of another file the rules read while linting it (`used`, and `deps`
  with those files' digests); `index` names the region index the record was last
  checked against, so a run whose index is that one re-checks nothing but `deps`. A
  change in `blocks.py` that changes what is compiled re-lints exactly the files whose
  regions (or whose read files) changed; a file that is only touched keeps its record.
- `files/`, one small file per path holding its pickled `ModuleSummary`, read only
  when the region index must be rebuilt (most warm runs load the cached index).
- `tree`: what a folder walk found in each folder (discovery.py), reused while the
  folder's signature, its settings and its ignore files are unchanged.
- `regions`: the region index of the last run, keyed on its files' summaries.
- `codes`: the rule codes each selection enables (the tool's fingerprint covers the rules).

The stat signature is only a fast path to skip re-reading and re-hashing: it is
recorded only when the file had not been modified for `RACY_NS` before it was read
(git's "racy clean" rule), and a write always moves ctime, which userland cannot set
back. Otherwise the file is read and hashed.

Contract this relies on (compile_lint.analysis.semantic.facts): a rule sees the region index only
through lookups of its own module's defs (`region_of`, `has_region`, ...) and through
the ModuleFacts of other files it reads (`facts.project.facts_for_path`), which look up theirs.

Everything is written atomically (temp file + os.replace) and read with an unpickler
that only builds compile_lint's own plain data classes, so a corrupt or foreign
file is a miss, never an error and never code run. Files with findings are cached too.
"""
from __future__ import annotations

import io
import os
import pickle
import time
from typing import Any, Optional

try:  # the one hash used here, without hashlib's OpenSSL set-up (4 ms of a 200 ms warm run)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - another Python implementation
    from hashlib import blake2b

CACHE_DIR = ".compile_lint_cache"
FORMAT = 2
RACY_NS = 2_000_000_000  # a file modified less than 2 s before it was read: hash it next time
TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by compile-lint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)

_ALLOWED = {
    ("compile_lint.model", "Finding"),
    ("compile_lint.model", "Fix"),
    ("compile_lint.model", "Edit"),
    ("compile_lint.model", "Position"),
    ("compile_lint.model", "Related"),
    ("compile_lint.model", "BreakInfo"),
    ("compile_lint.analysis.reach.regions", "ModuleSummary"),
    ("compile_lint.analysis.reach.regions", "DefInfo"),
    ("compile_lint.analysis.reach.regions", "Site"),
    ("compile_lint.analysis.reach.regions", "Ref"),
    ("compile_lint.analysis.reach.regions", "RegionInfo"),
    ("compile_lint.analysis.reach.declared", "DeclaredRegion"),
    ("compile_lint.analysis.reach.declared", "Recording"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "tuple"),
    ("builtins", "list"),
    ("builtins", "dict"),
    ("builtins", "complex"),
    ("builtins", "Ellipsis"),
}


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a cache entry")


def loads(data: bytes) -> Any:
    return _SafeUnpickler(io.BytesIO(data)).load()


def digest(data: bytes) -> str:
    return blake2b(data, digest_size=16).hexdigest()


def file_digest(path: str) -> Optional[str]:
    """digest() of a file's bytes, None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return digest(fh.read())
    except OSError:
        return None


def key(*parts: Any) -> str:
    """A stable hash of plain values (their repr)."""
    return blake2b(repr(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def stat_signature(st: os.stat_result) -> tuple:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def trusted_signature(st: os.stat_result, read_at_ns: int) -> Optional[tuple]:
    """The signature to record for a file read at `read_at_ns`, or None when it was
    modified too recently for the signature to prove that its content is unchanged."""
    if max(st.st_mtime_ns, st.st_ctime_ns) >= read_at_ns - RACY_NS:
        return None
    return stat_signature(st)


_FINGERPRINT: Optional[str] = None


def tool_fingerprint() -> str:
    """The version plus the size and mtime of every file of compile_lint and codemods,
    so an edited rule (or a new install) never reads another build's entries."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        from . import __version__

        from .codemods_home import folder

        here = os.path.dirname(os.path.abspath(__file__))
        roots = [here, folder()]
        items = []
        for root in roots:
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "verify"))
                for name in sorted(files):
                    if name.endswith((".py", ".json")):
                        try:
                            st = os.stat(os.path.join(folder, name))
                        except OSError:
                            continue
                        items.append((os.path.relpath(os.path.join(folder, name), root), st.st_size, st.st_mtime_ns))
        _FINGERPRINT = key(__version__, FORMAT, items)
    return _FINGERPRINT


def project_root(config_source: Optional[str], cwd: str) -> str:
    """The folder of the config file, else the current folder."""
    return os.path.dirname(os.path.abspath(config_source)) if config_source else cwd


class ResultsCache:
    def __init__(self, root: str):
        self.root = root
        self.folder = os.path.join(root, CACHE_DIR)
        self.entries = os.path.join(self.folder, "files")
        self.tool = tool_fingerprint()
        self._writable: Optional[bool] = None
        self.written = 0
        self._manifest_seen: Optional[tuple] = None
        self._codes: Optional[dict] = None

    def _entry_path(self, path: str) -> str:
        name = blake2b(os.path.abspath(path).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
        return os.path.join(self.entries, name[:2], name)

    def _load_file(self, name: str) -> Optional[dict]:
        try:
            with open(os.path.join(self.folder, name), "rb") as fh:
                entry = loads(fh.read())
        except Exception:  # missing, unreadable, truncated, corrupt, foreign: a miss
            return None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("tool") != self.tool:
            return None
        return entry

    def _store_file(self, name: str, entry: dict) -> None:
        if not self._prepare():
            return
        entry = dict(entry, format=FORMAT, tool=self.tool)
        try:
            _write_atomic(os.path.join(self.folder, name), pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL))
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            pass  # the cache is an optimisation: never fail a run over it

    # -- per file: the pickled summary ------------------------------------------------
    def load_summary(self, path: str, summary_key: str) -> Optional[tuple[Optional[bytes]]]:
        """(the pickled ModuleSummary, or None for a file that does not parse), or None
        when there is no usable entry for `path` under `summary_key`."""
        try:
            with open(self._entry_path(path), "rb") as fh:
                entry = loads(fh.read())
        except Exception:
            return None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("tool") != self.tool:
            return None
        if entry.get("path") != os.path.abspath(path) or entry.get("summary_key") != summary_key:
            return None
        blob = entry.get("summary_blob")
        return (blob,) if blob is None or isinstance(blob, bytes) else None

    def store_summary(self, path: str, summary_key: str, blob: Optional[bytes]) -> None:
        if not self._prepare():
            return
        entry = {"format": FORMAT, "tool": self.tool, "path": os.path.abspath(path), "summary_key": summary_key,
                 "summary_blob": blob}
        target = self._entry_path(path)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            _write_atomic(target, pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL))
            self.written += 1
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            pass

    # -- the whole project: records, folder walks, the region index ----------------------
    def load_manifest(self) -> dict:
        """{absolute path: record} (see the module's docstring), from one read."""
        self._manifest_seen = _signature_of(os.path.join(self.folder, "manifest"))
        entry = self._load_file("manifest")
        files = entry.get("files") if entry else None
        return files if isinstance(files, dict) else {}

    def store_manifest(self, changed: dict, base: dict) -> None:
        """Write `base` with the records `changed`; when another run wrote the manifest
        since this one read it, its records are kept and `changed` goes on top."""
        if _signature_of(os.path.join(self.folder, "manifest")) != getattr(self, "_manifest_seen", None):
            base = self.load_manifest()
        files = dict(base)
        files.update(_shared(changed))
        self._store_file("manifest", {"files": files})

    def load_tree(self) -> dict:
        entry = self._load_file("tree")
        folders = entry.get("folders") if entry else None
        return folders if isinstance(folders, dict) else {}

    def store_tree(self, folders: dict) -> None:
        self._store_file("tree", {"folders": folders})

    def load_codes(self) -> dict:
        """{selection key: enabled codes} for this build of the tool (engine.py)."""
        if self._codes is None:
            entry = self._load_file("codes")
            codes = entry.get("codes") if entry else None
            self._codes = codes if isinstance(codes, dict) else {}
        return self._codes

    def store_codes(self, codes: dict) -> None:
        self._codes = codes
        self._store_file("codes", {"codes": codes})

    def load_regions(self, run_key: str) -> Optional[dict]:
        """The region index of a run whose files had exactly these summaries."""
        entry = self._load_file("regions")
        if entry is not None and entry.get("run") == run_key and isinstance(entry.get("regions"), dict):
            return entry["regions"]
        return None

    def store_regions(self, run_key: str, regions: dict) -> None:
        self._store_file("regions", {"run": run_key, "regions": regions})

    def _prepare(self) -> bool:
        if self._writable is None:
            try:
                os.makedirs(self.entries, exist_ok=True)
                tag = os.path.join(self.folder, "CACHEDIR.TAG")
                if not os.path.exists(tag):
                    _write_atomic(tag, TAG.encode())
                ignore = os.path.join(self.folder, ".gitignore")
                if not os.path.exists(ignore):
                    _write_atomic(ignore, b"# created by compile-lint\n*\n")
                self._writable = True
            except OSError:
                self._writable = False  # a read-only project: lint without writing a cache
        return self._writable


def _shared(records: dict) -> dict:
    """The records with equal parts as one object each, so that pickle writes each part
    once (its memo) and a load builds it once. Most of a manifest is `deps`: on corpus M
    140,000 of them, 17,000 distinct (files that search the whole project for callers);
    written as they come, the manifest is 11 MB and takes ~40 ms to load, shared 2.4 MB
    and ~15 ms. Records read from the manifest come shared already: only the records a
    run changed go through here."""
    pool: dict = {}
    known, one = pool.get, pool.setdefault
    out = {}
    for path, record in records.items():
        if isinstance(record, dict):
            record = dict(record)
            deps = record.get("deps")
            if isinstance(deps, tuple):
                shared = [known(dep) for dep in deps]
                if None in shared:  # first seen: its parts shared too (a path is in many deps)
                    for n, dep in enumerate(deps):
                        if shared[n] is None:
                            shared[n] = pool[dep] = tuple([one(part, part) for part in dep]) if isinstance(dep, tuple) else dep
                record["deps"] = tuple(shared)
            used = record.get("used")
            if isinstance(used, dict):
                record["used"] = {one(token, token): one(dig, dig) for token, dig in used.items()}
            for name in ("where", "settings_key", "index"):
                value = record.get(name)
                if isinstance(value, str):
                    record[name] = one(value, value)
        out[path] = record
    return out


def _signature_of(path: str) -> Optional[tuple]:
    try:
        return stat_signature(os.stat(path))
    except OSError:
        return None


def _write_atomic(target: str, data: bytes) -> None:
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def clean(root: str) -> Optional[str]:
    """Remove `root`/.compile_lint_cache; the folder removed, or None if there was none.
    Refuses a folder without our CACHEDIR.TAG (it is not ours to delete)."""
    import shutil

    folder = os.path.join(root, CACHE_DIR)
    if not os.path.isdir(folder) or os.path.islink(folder):
        return None
    tag = os.path.join(folder, "CACHEDIR.TAG")
    try:
        with open(tag, "rb") as fh:
            ours = fh.read().startswith(TAG.encode()[:43])
    except OSError:
        ours = not os.listdir(folder)
    if not ours:
        raise OSError(f"{folder} has no compile-lint CACHEDIR.TAG; not removing it")
    shutil.rmtree(folder)
    return folder


def now_ns() -> int:
    return time.time_ns()
