"""Classes a project's YAML configurations name: what `instantiate_from_config(config.model)`
and `hydra.utils.instantiate(cfg.model)` build.

Image and video pipelines descended from latent diffusion build their models from YAML:

    model:
      target: ldm.models.diffusion.ddpm.LatentDiffusion
      params:
        unet_config:
          target: ldm.modules.diffusionmodules.openaimodel.UNetModel

read by a project function `instantiate_from_config(config)` that imports
`config["target"]` and calls it with `config["params"]`; Hydra projects write `_target_`
and let `hydra.utils.instantiate` build the tree, nested entries first (a nested entry is
the instance its owner's constructor receives). The code never names those classes, so
without the YAML every such site is unresolved.

What this module reads, per mapping that sets `target` or `_target_` to a dotted name: the
key the mapping is stored under (`model`, `unet_config`; for a Hydra config-group file
whose top level sets `_target_`, the group: the file's folder), the target, and the target
of the nearest mapping around it that has one (its owner). The region index asks by key:
"what can a configuration entry stored under `unet_config` build"; which YAML file a run
loads is a command-line choice the code does not make, so the answer is every entry under
that key in the project (a union), and none when no YAML has the key (the site stays
unresolved, never guessed). The exception is an entry read off the configuration that
`@hydra.main(config_path=..., config_name=...)` hands its function: the code names that
primary file, and `composed` gives it with the config-group files its `defaults` list
picks (bench/dev37's CQN-AS: ten scripts, each with its own file).

The same files give the values of keys the code reads from a YAML file it loads
(`cfg["MODEL"]["NAME"]` after `yaml.safe_load`): `read_names` keeps every scalar with the
key of the mapping around it, asked as (parent key, key) only when such a read happens.

The reader is a line scanner for block-style mappings, not a YAML parser: flow mappings
(`{target: x}`), anchors merged with `<<` and multi-document streams are read only as far
as their lines look like `key: value`; an entry it cannot read is an entry not seen (the
site stays unresolved), never a wrong one. A target that names a class the reader cannot
follow, an interpolation (`${model.arch}`) or a name relative to a package a loader
computes (`.hy3dgen.shapegen.models.Hunyuan3DDiT`), is kept as such (`UNREAD`): what the
key builds is then partly unknown, and a site that reads it is partial, not resolved to
the other files' entries under the same key. PyYAML would parse more, but the table needs
only keys, nesting and `target` scalars, and the tool does not depend on it.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterable, Optional

TARGET_KEYS = ("target", "_target_")
HYDRA_TARGET = "_target_"
NEW_TAG = "!new:"  # hyperpyyaml (SpeechBrain, CosyVoice): the class of an instance to build
SUFFIXES = (".yaml", ".yml")
MAX_FILES = 5000  # a project with more YAML than this (a dataset of YAML files) is read this far
MAX_BYTES = 512 * 1024  # a larger YAML file is data, not a model configuration
SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site-packages", "venv", ".venv", "env",
                             ".compile_lint_cache", ".tox", ".nox", "build", "dist"})

_KEY = re.compile(r"""^(?:([A-Za-z_][\w.\-]*)|"([^"]+)"|'([^']+)')\s*:(?:\s+(.*?))?\s*$""")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
UNREAD = "?"  # the prefix of a target the reader cannot take for a dotted name
MAX_VALUE = 200  # a longer scalar is text, not a name (and is kept as "some other value")


@dataclass(frozen=True)
class ConfiguredEntry:
    """One mapping of a YAML file that names a class to build."""

    key: str  # the key the mapping is stored under (a Hydra group file: its folder)
    target: str  # the dotted name it builds
    owner: Optional[str]  # the target of the nearest mapping around it that has one
    hydra: bool  # `_target_` (Hydra builds nested entries first and passes the instances)
    where: str  # "path:line", for reasons
    # the key of the mapping around it (for a file's top-level mapping, the file's folder: a
    # Hydra config group); None for a config-group file's own target
    parent: Optional[str] = None


class ConfiguredTargets:
    """Every `target`/`_target_` entry of the YAML files under some folders.

    Made from the files' signatures (path, size, modification time): that is the region
    index's cache key, so a warm run stats the YAML files and reads none; the entries are
    read when the index is built and asks for them."""

    def __init__(self, files: tuple = ()):
        self.files = files  # ((path, size, mtime_ns), ...) in a fixed order
        self._entries: Optional[list] = None
        self._by_key: Optional[dict] = None
        self._names: Optional[dict] = None  # (parent key, key) -> the names given it

    def _texts(self, needles: tuple = (), only: Optional[str] = None):
        """(path, text) of each file small enough to be a configuration (a larger YAML file
        is data) and, with `needles`, holding one of them (the rest is not decoded); with
        `only`, of that file alone."""
        for path, size, _mtime in self.files:
            if size > MAX_BYTES or (only is not None and path != only):
                continue
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            if not needles or any(n in data for n in needles):
                yield path, data.decode("utf-8", errors="replace")

    @property
    def entries(self) -> list[ConfiguredEntry]:
        if self._entries is None:
            # (most YAML is data, not models: a file that names no target is not parsed)
            self._entries = [e for path, text in self._texts((b"target", NEW_TAG.encode())) for e in read_entries(text, path)]
        return self._entries

    def by_key(self, key: str) -> list[ConfiguredEntry]:
        if self._by_key is None:
            table: dict = {}
            for entry in self.entries:
                table.setdefault(entry.key, []).append(entry)
            self._by_key = table
        return self._by_key.get(key, [])

    def names_at(self, parent: Optional[str], key: str) -> frozenset:
        """The names the project's YAML gives `key` inside a mapping stored under `parent`
        (None: at a file's top): what `cfg["MODEL"]["NAME"]` of a loaded configuration can
        be. Read from every YAML file on the first question."""
        if self._names is None:
            table: dict = {}
            for _path, text in self._texts():
                for held_in, name_key, name in read_names(text):
                    table.setdefault((held_in, name_key), set()).add(name)
            self._names = {k: frozenset(v) for k, v in table.items()}
        return self._names.get((parent, key), frozenset())

    def composed(self, primary: str) -> Optional[frozenset]:
        """The files Hydra composes a run's configuration from when `primary` is its primary
        file: it, and the config-group files its `defaults` list picks (`- agent: sac` is
        `agent/sac.yaml` beside it). None when `primary` is no YAML file of the project."""
        if not any(path == primary for path, _size, _mtime in self.files):
            return None
        files = {primary}
        folder = os.path.dirname(primary)
        for _path, text in self._texts(only=primary):
            for group, choice in read_defaults(text):
                files.add(os.path.normpath(os.path.join(folder, group, f"{choice}.yaml")))
        return frozenset(files)

    def key(self) -> tuple:
        """What the region index depends on (its cache key): the files' signatures."""
        return self.files


def configured_targets(folders: Iterable[str]) -> ConfiguredTargets:
    """The YAML files under `folders` (hidden folders, environments and build output
    skipped), in a fixed order; at most MAX_FILES."""
    files: list = []
    seen: set = set()
    for top in sorted({os.path.abspath(f) for f in folders if f}):
        for path in _yaml_files(top):
            if path in seen or len(files) >= MAX_FILES:
                continue
            seen.add(path)
            try:
                st = os.stat(path)
            except OSError:
                continue
            files.append((path, st.st_size, st.st_mtime_ns))
    return ConfiguredTargets(tuple(files))


def _yaml_files(top: str) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        found += [os.path.join(folder, name) for name in sorted(files) if name.endswith(SUFFIXES)]
    return found


class _Mapping:
    __slots__ = ("key", "indent", "parent", "target", "hydra", "row")

    def __init__(self, key: Optional[str], indent: int, parent: Optional["_Mapping"], row: int):
        self.key, self.indent, self.parent, self.row = key, indent, parent, row
        self.target: Optional[str] = None
        self.hydra = False


def read_entries(text: str, path: str = "") -> list[ConfiguredEntry]:
    """The `target`/`_target_` entries of one YAML text (see the module's docstring)."""
    return _read(text, path)[0]


def read_names(text: str) -> list[tuple]:
    """The scalars one YAML text gives keys, as text: (the key of the mapping around it,
    None at the top; the key; the value) for `MODEL:\n  NAME: DDRNet` -> ("MODEL", "NAME",
    "DDRNet"). Every scalar counts (`Latte-XL/2`, `18`, `true`): a key's values are all
    of them or the answer would be a subset. A flow collection, a block scalar, an alias or
    a tag is None: a value the reader does not know."""
    return _read(text, "")[1]


def _read(text: str, path: str) -> tuple[list, list]:
    top = _Mapping(None, -1, None, 0)
    names: list = []
    stack = [top]
    mappings = []
    for row, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        content = line.lstrip(" ")
        if not content or content.startswith(("#", "---", "...", "%")):
            continue
        indent = len(line) - len(content)
        while content.startswith("- "):  # a list item holding a mapping: its keys sit past the dash
            content = content[2:].lstrip(" ")
            indent = len(line) - len(content)
        match = _KEY.match(_without_comment(content))
        if match is None:
            continue
        key = match.group(1) or match.group(2) or match.group(3)
        value = _scalar(match.group(4) or "")
        while stack[-1].indent >= indent:
            stack.pop()
        holder = stack[-1]
        if key in TARGET_KEYS:
            if value and holder.target is None:
                # a target the reader cannot take for a dotted name is kept as it is: an
                # entry not seen, so a union over the key is not all seen (Hunyuan3D's ComfyUI
                # wrapper names `.hy3dgen.shapegen.models.Hunyuan3DDiT`, relative to a package
                # its loader computes; the training configs' entries under the same key were
                # given as all it builds: bench/fresh_reads batch 39)
                if _DOTTED.match(value):
                    holder.target = value
                elif "${" in value or _DOTTED.match(value.lstrip(".")):
                    holder.target = UNREAD + value
                else:
                    continue  # a number, a bare word: no class named at all
                holder.hydra, holder.row = key == HYDRA_TARGET, row
            continue
        starts_mapping = not value or value.startswith(("&", "!")) and " " not in value
        if not starts_mapping:
            plain = not value.startswith(("[", "{", "|", ">", "&", "*", "!")) and len(value) <= MAX_VALUE
            names.append((holder.key, key, value if plain else None))
        if starts_mapping:
            mapping = _Mapping(key, indent, holder, row)
            if value.startswith(NEW_TAG) and _DOTTED.match(value[len(NEW_TAG):]):
                # hyperpyyaml's `encoder: !new:pkg.Conformer`: an instance, built before its owner
                mapping.target, mapping.hydra = value[len(NEW_TAG):], True
            mappings.append(mapping)
            stack.append(mapping)
    out = []
    if top.target is not None and top.hydra:  # a Hydra config-group file: `model/sam2.yaml`
        group = _group(path)
        if group:
            out.append(ConfiguredEntry(group, top.target, None, True, f"{path}:{top.row}"))
    for mapping in mappings:
        if mapping.target is None:
            continue
        owner = mapping.parent
        while owner is not None and owner.target is None:
            owner = owner.parent
        parent = mapping.parent.key if mapping.parent is not top else _group(path)
        out.append(ConfiguredEntry(mapping.key, mapping.target, owner.target if owner is not None else None,
                                   mapping.hydra, f"{path}:{mapping.row}", parent))
    return out, names


def _group(path: str) -> str:
    """The folder a YAML file lies in: its Hydra config group (`model/sam2.yaml`)."""
    return os.path.basename(os.path.dirname(path)) if path else ""


_DEFAULT_ITEM = re.compile(r"^-\s+(?:override\s+)?([A-Za-z_][\w/.\-]*)(?:@[\w.\-]+)?\s*:\s*([A-Za-z_][\w/.\-]*)\s*$")


def read_defaults(text: str) -> list[tuple[str, str]]:
    """The (group, option) pairs of a Hydra primary file's top-level `defaults` list:
    `- agent: sac` and `- override agent@policy: sac` are ("agent", "sac"); `_self_`, a
    file of the same folder (`- base`) and `null` choices are not groups."""
    out: list = []
    inside = False
    for raw in text.splitlines():
        line = _without_comment(raw.rstrip())
        content = line.lstrip(" ")
        if not content:
            continue
        if line == content:  # a top-level key: the list is the lines under `defaults:`
            inside = content.rstrip() == "defaults:"
            continue
        if inside:
            match = _DEFAULT_ITEM.match(content)
            if match and match.group(2) not in ("null", "None", "_self_"):
                out.append((match.group(1), match.group(2)))
    return out


def _without_comment(content: str) -> str:
    """`key: value  # note` -> `key: value` (a `#` inside quotes is kept)."""
    if "#" not in content:
        return content
    quote = None
    for i, ch in enumerate(content):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or content[i - 1] in " \t"):
            return content[:i].rstrip()
    return content


def _scalar(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value
