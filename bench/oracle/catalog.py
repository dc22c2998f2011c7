"""What an oracle-bench models file declares: sources (folders of library or app code) and
entries (one model or function each, how to build it, its inputs, eval or train mode).

A models file (models.py, or the CI slice tests/oracle_slice/models.py) is plain Python
that does `from oracle_catalog import Entry, Source` and defines `SOURCES` and
`ENTRIES`; `load_models(path)` reads one. Standard library only: run.py and the scorer
read models files with any interpreter, the child with the models' venv.

Folder templates in a Source: `{site}` the venv's site-packages, `{venv}` the venv,
`{apps}` the development apps (/work/apps, from bench/apps/materialize.sh), `{here}` the
models file's folder.
"""
from __future__ import annotations

import glob
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

CATALOG_NAME = "oracle_catalog"
DEFAULT_APPS = "/work/apps"


@dataclass(frozen=True)
class Source:
    """Code that models come from, linted as one project.

    `base` is the folder imported from (site-packages, an overlay, an app's folder) and
    the lint project's root; `packages` the top-level folders (or .py files) under it
    that belong to this source (empty: all of `base`); `path` extra sys.path folders for
    the child, first wins (an overlay holding an older transformers)."""

    name: str
    base: str
    packages: tuple[str, ...] = ()
    path: tuple[str, ...] = ()
    version: str = ""  # what the README and results call it ("transformers 4.44.2")


@dataclass(frozen=True)
class Entry:
    """One compiled target. `build` is "FILE.py:function" (relative to the models file)
    returning (callable, args tuple, kwargs dict); it is called with **args."""

    name: str
    source: str
    build: str
    args: dict = field(default_factory=dict, hash=False)
    mode: str = "eval"  # "eval" | "train"
    shim: bool = False  # put bench/oracle/shim (a torchvision stand-in) on sys.path
    note: str = ""


class Models:
    """A loaded models file, its folder templates resolved."""

    def __init__(self, module, path: str, venv: Optional[str], apps: Optional[str]):
        self.module = module
        self.path = os.path.abspath(path)
        self.here = os.path.dirname(self.path)
        self.venv = os.path.abspath(venv) if venv else sys.prefix
        self.apps = apps or os.environ.get("ORACLE_APPS", DEFAULT_APPS)
        self.sources: dict[str, Source] = {s.name: s for s in module.SOURCES}
        self.entries: list[Entry] = list(module.ENTRIES)
        names = [e.name for e in self.entries]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"{path}: entries named twice: {dupes[:5]}")
        unknown = sorted({e.source for e in self.entries} - set(self.sources))
        if unknown:
            raise ValueError(f"{path}: entries name unknown sources: {unknown}")

    def site(self) -> str:
        found = sorted(glob.glob(os.path.join(self.venv, "lib", "python3*", "site-packages")))
        if not found:
            raise FileNotFoundError(f"{self.venv}: no lib/python3*/site-packages (is it a venv?)")
        return found[-1]

    def resolve(self, template: str) -> str:
        values = {"venv": self.venv, "apps": self.apps, "here": self.here}
        if "{site}" in template:
            values["site"] = self.site()
        return os.path.normpath(template.format(**values))

    def entry(self, name: str) -> Entry:
        for e in self.entries:
            if e.name == name:
                return e
        raise KeyError(f"no entry {name!r} in {self.path}")

    def base(self, source: str) -> str:
        return self.resolve(self.sources[source].base)

    def source_roots(self, source: str) -> list[str]:
        src = self.sources[source]
        base = self.resolve(src.base)
        return [os.path.join(base, p) for p in src.packages] if src.packages else [base]

    def sys_path(self, entry: Entry) -> list[str]:
        src = self.sources[entry.source]
        paths = [self.resolve(p) for p in src.path]
        if entry.shim:
            paths.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim"))
        return paths

    def builder(self, entry: Entry):
        file, _, func = entry.build.partition(":")
        path = os.path.join(self.here, file)
        name = "_oracle_build_" + os.path.splitext(os.path.basename(file))[0]
        module = sys.modules.get(name)
        if module is None:
            module = _load_file(path, name)
        return getattr(module, func)


def _load_file(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_models(path: str, venv: Optional[str] = None, apps: Optional[str] = None) -> Models:
    """Read a models file (it imports this module as `oracle_catalog`)."""
    sys.modules.setdefault(CATALOG_NAME, sys.modules[__name__])
    module = _load_file(os.path.abspath(path), "_oracle_models_" + str(abs(hash(os.path.abspath(path)))))
    return Models(module, path, venv, apps)
