"""Configuration: `[tool.compile-lint]` in pyproject.toml, or compile-lint.toml.

The closest file above a linted path wins (compile-lint.toml before pyproject.toml
in the same folder, as Ruff prefers ruff.toml); a pyproject.toml without our table
is passed over, and so is one that does not parse and never names compile-lint.
Unknown keys and bad values are errors naming the key.
"""
from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_NAMES = ("compile-lint.toml", ".compile-lint.toml", "pyproject.toml")

DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
    ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache",
    ".svn", ".tox", ".venv", ".vscode", "__pypackages__", "_build", "buck-out", "build",
    "dist", "node_modules", "site-packages", "venv", ".compile_lint_cache",
)


# files a folder walk lints (Ruff's default `include`, notebooks included)
DEFAULT_INCLUDE = ("*.py", "*.pyi", "*.ipynb")


class ConfigError(Exception):
    """A user error in configuration: reported in one line, exit code 2."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("ALL",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    include: tuple[str, ...] = DEFAULT_INCLUDE
    extend_include: tuple[str, ...] = ()
    target_torch_version: Optional[str] = None
    compile_wrappers: tuple[str, ...] = ()
    trace_wrappers: tuple[str, ...] = ()
    compiled: tuple = ()  # declared regions (analysis/reach/declared.py DeclaredRegion)
    traced: tuple = ()
    regions_file: Optional[str] = None  # a recording other than compile-lint-regions.json
    verify: Any = field(default_factory=dict, compare=False, hash=False)
    root: str = "."  # folder the config file lives in: globs are relative to it
    source: Optional[str] = None  # the config file, if any

    def all_includes(self) -> tuple[str, ...]:
        return tuple(self.include) + tuple(self.extend_include)

    def all_excludes(self) -> tuple[str, ...]:
        return tuple(self.exclude) + tuple(self.extend_exclude)

    def ignored_for(self, path: str) -> set[str]:
        """Codes `per-file-ignores` switches off for `path`."""
        if not self.per_file_ignores:
            return set()
        from .rules import expand_selector

        rel = os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")
        base = os.path.basename(path)
        out: set[str] = set()
        for pattern, codes in self.per_file_ignores:
            if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(base, pattern):
                for code in codes:
                    out |= expand_selector(code)
        return out


# key -> (attribute, kind)
_KEYS: dict[str, tuple[str, str]] = {
    "select": ("select", "codes"),
    "extend-select": ("extend_select", "codes"),
    "ignore": ("ignore", "codes"),
    "per-file-ignores": ("per_file_ignores", "glob-codes"),
    "exclude": ("exclude", "strings"),
    "extend-exclude": ("extend_exclude", "strings"),
    "respect-gitignore": ("respect_gitignore", "bool"),
    "include": ("include", "strings"),
    "extend-include": ("extend_include", "strings"),
    "target-torch-version": ("target_torch_version", "version"),
    "compile-wrappers": ("compile_wrappers", "dotted"),
    "trace-wrappers": ("trace_wrappers", "dotted"),
    "compiled": ("compiled", "declared"),
    "traced": ("traced", "declared"),
    "regions-file": ("regions_file", "string"),
    "verify": ("verify", "table"),
}


def _did_you_mean(word: str, choices) -> str:
    import difflib

    hint = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {hint[0]!r}?)" if hint else ""


def _check_codes(where: str, key: str, value) -> tuple[str, ...]:
    from .rules import UnknownSelector, expand_selector

    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {key!r} must be a list of rule codes, got {value!r}")
    for sel in value:
        try:
            expand_selector(sel)
        except UnknownSelector as exc:
            raise ConfigError(f"{where}: {key!r}: {exc}") from None
    return tuple(value)


def parse_table(table: dict, where: str, root: str) -> Settings:
    """Validate a `[tool.compile-lint]` table into Settings."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            raise ConfigError(f"{where}: unknown key {key!r}{_did_you_mean(key, _KEYS)}")
        attr, kind = _KEYS[key]
        if kind == "codes":
            values[attr] = _check_codes(where, key, value)
        elif kind == "glob-codes":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: {key!r} must be a table of glob = [codes]")
            values[attr] = tuple((glob, _check_codes(where, f"{key}.{glob}", codes)) for glob, codes in value.items())
        elif kind in ("strings", "dotted"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: {key!r} must be a list of strings, got {value!r}")
            if kind == "dotted":
                for name in value:
                    if not all(part.isidentifier() for part in name.split(".")):
                        raise ConfigError(f"{where}: {key!r}: {name!r} is not a dotted name like 'pkg.module.function'")
            values[attr] = tuple(value)
        elif kind == "bool":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: {key!r} must be true or false, got {value!r}")
            values[attr] = value
        elif kind == "version":
            values[attr] = check_version(value, f"{where}: {key!r}")
        elif kind == "declared":
            from .analysis.reach.declared import DeclarationError, parse_config_list

            try:
                values[attr] = parse_config_list(value, key, where)
            except DeclarationError as exc:
                raise ConfigError(str(exc)) from None
        elif kind == "string":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{where}: {key!r} must be a path, got {value!r}")
            values[attr] = value
        elif kind == "table":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: {key!r} must be a table")
            values[attr] = value
    return Settings(root=root, **values)


def check_version(value, where: str = "--target-torch") -> str:
    if not isinstance(value, str) or not all(p.isdigit() for p in value.split(".")) or not 1 <= len(value.split(".")) <= 3:
        raise ConfigError(f"{where}: expected a torch version like '2.13' or '2.13.0', got {value!r}")
    return value


def read_config_file(path: str) -> Optional[Settings]:
    """Settings from one file; None for a pyproject.toml without our table."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        if os.path.basename(path) == "pyproject.toml" and b"compile-lint" not in raw:
            # another tool's file that tomllib finds invalid (a vendored package's
            # pyproject.toml declaring one table twice, which hatch accepts: bench/dev46's
            # ocp): it holds no table of ours, so it is passed over as a valid one would be
            return None
        reason = f"not UTF-8 ({exc.reason})" if isinstance(exc, UnicodeDecodeError) else str(exc)
        raise ConfigError(f"{path}: invalid TOML: {reason}") from None
    root = os.path.dirname(os.path.abspath(path))
    if os.path.basename(path) == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict) or "compile-lint" not in tool:
            return None
        table = tool["compile-lint"]
        where = f"{path} [tool.compile-lint]"
    else:
        table, where = data, path
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    return parse_table(table, where, root)


@lru_cache(maxsize=None)
def _settings_for_dir(folder: str) -> Settings:
    for name in CONFIG_NAMES:
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate):
            found = read_config_file(candidate)
            if found is not None:
                return replace(found, source=candidate)
    parent = os.path.dirname(folder)
    if parent == folder:
        return Settings(root=os.getcwd())
    return _settings_for_dir(parent)


def load_config_for(path: str) -> Settings:
    """The settings that apply to `path` (a file or a folder)."""
    path = os.path.abspath(path)
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    return _settings_for_dir(folder)


def load_config_file(path: str) -> Settings:
    if not os.path.exists(path):
        raise ConfigError(f"config file {path} does not exist")
    found = read_config_file(path)
    if found is None:
        raise ConfigError(f"{path} has no [tool.compile-lint] table")
    return replace(found, source=path)


def clear_cache() -> None:
    _settings_for_dir.cache_clear()
