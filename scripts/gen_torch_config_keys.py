#!/usr/bin/env python3
"""Generate ``compile_lint/data/torch_config_keys.json`` from real torch releases.

Rule CL501 (unknown-compile-config) flags reads, writes and ``patch(...)`` calls
on keys of torch's config modules (``torch._dynamo.config``,
``torch._inductor.config``, ``torch.compiler.config``, ``torch._functorch.config``,
``torch.fx.experimental._config``) that the target torch version does not have.
The linter never imports torch; it reads the JSON table this script writes.

For every requested version the script

1. creates a scratch virtual environment (``python3 -m venv``) in a temporary
   directory (or under ``--keep-venvs DIR``, where it is kept and reused);
2. installs ``torch==VERSION`` into it with ``--no-deps`` and then installs
   torch's own non-optional requirements (read from the installed wheel's
   metadata) one pip call at a time, skipping any that cannot be installed
   (e.g. ``cuda-bindings`` when it is not on the index).  CUDA builds need the
   ``nvidia-*`` / ``cuda-toolkit`` libraries to be installed for ``import torch``
   to work at all (libtorch_cuda.so links against them), even on a CPU-only
   machine; ``triton`` and ``cuda-bindings`` are only imported lazily;
3. runs a small dumper (``DUMPER`` below) with the venv's interpreter, in a
   sanitised environment (no TORCH*/PYTORCH* variables, no visible GPU), which
   imports each config module and reads torch's ``ConfigModule`` internals
   (``torch/utils/_config_module.py``):

   * ``keys``: every entry of ``module._config`` (dotted for nested config
     classes, e.g. ``triton.cudagraphs``), *including* alias entries, mapped to
     the type name of the default value (``bool``, ``int``, ``float``, ``str``,
     ``NoneType``, ``list``, ``set``, ``tuple``, ``dict``, else ``other``).  For
     an alias the type is that of the (transitively) aliased key's default.
   * ``aliases``: key -> the full dotted target written in ``Config(alias=...)``
     (e.g. ``cache_size_limit`` -> ``torch._dynamo.config.recompile_limit``).
     Setting/reading an alias key is legal; it forwards to the target.
   * ``attributes``: public (non-underscore) names that are legal to access but
     are not config keys: ConfigModule methods (``patch``, ``save_config``, ...),
     nested config namespaces (``triton``, ``cpp``, dotted for deeper nesting),
     and everything else left in the module namespace (helper functions,
     imported modules/names).  Dunder/private attributes are not listed.

The output is sorted and indented with ``indent=1`` so that regenerating it
with the same releases produces a byte-identical file.

Adding a torch release
----------------------
Make the wheel installable by pip on this machine (index, ``--find-links`` or
pip config), then regenerate with *all* versions the table should contain, e.g.::

    python scripts/gen_torch_config_keys.py --versions 2.13.0 2.14.1 2.15.0

and update ``DEFAULT_VERSIONS`` below so a plain run keeps covering it.  Commit
the regenerated JSON.  The whole file is rewritten, so always pass every
version you want to keep.  Only the standard library is used here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_VERSIONS = ["2.13.0", "2.14.1"]
DEFAULT_MODULES = [
    "torch._dynamo.config",
    "torch._inductor.config",
    "torch.compiler.config",
    "torch._functorch.config",
    "torch.fx.experimental._config",
]
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO_ROOT / "compile_lint" / "data" / "torch_config_keys.json"
GENERATED_BY = "scripts/gen_torch_config_keys.py"

# Run inside the scratch venv: ``python -I -c DUMPER module [module ...]``.
# Prints one JSON object on stdout.
DUMPER = r'''
import importlib
import json
import sys
import warnings

warnings.simplefilter("ignore")

import torch
from torch.utils import _config_module as cm

ConfigModule = cm.ConfigModule
SubConfigProxy = getattr(cm, "SubConfigProxy", None)
UNSET = getattr(cm, "_UNSET_SENTINEL", object())
SIMPLE_TYPES = (bool, int, float, str, type(None), list, set, tuple, dict)


def type_name(value):
    t = type(value)
    return t.__name__ if t in SIMPLE_TYPES else "other"


def raw_config(mod):
    # ModuleType.__getattribute__ finds _config in the module __dict__
    # without going through ConfigModule.__getattr__.
    return vars(mod).get("_config")


def entry_default(entry):
    # torch >= 2.5: _config maps name -> _ConfigEntry; older: name -> value.
    if hasattr(entry, "default") and hasattr(entry, "user_override"):
        return entry.default
    return entry


def entry_alias(entry):
    alias = getattr(entry, "alias", None)
    return alias if isinstance(alias, str) else None


def resolve_alias_type(alias, seen=()):
    if alias in seen or len(seen) > 20:
        return "other"
    module_name, attr = alias.rsplit(".", 1)
    try:
        target = importlib.import_module(module_name)
    except ImportError:
        return "other"
    cfg = raw_config(target) if isinstance(target, ConfigModule) else None
    if cfg is not None and attr in cfg:
        entry = cfg[attr]
        nxt = entry_alias(entry)
        if nxt is not None:
            return resolve_alias_type(nxt, seen + (alias,))
        return type_name(entry_default(entry))
    if hasattr(target, attr):
        return type_name(getattr(target, attr))
    return "other"


def subproxies(obj, prefix):
    # SubConfigProxy keeps nested proxies in its own __dict__.
    out = []
    for name, value in sorted(object.__getattribute__(obj, "__dict__").items()):
        if SubConfigProxy is not None and isinstance(value, SubConfigProxy):
            out.append(prefix + name)
            out.extend(subproxies(value, prefix + name + "."))
    return out


def dump(mod):
    cfg = raw_config(mod)
    if not isinstance(cfg, dict):
        raise SystemExit(f"{mod.__name__}: ConfigModule without a _config dict")
    names = set(cfg)
    names.update(vars(mod).get("_allowed_keys", ()) or ())  # very old torch
    keys, aliases = {}, {}
    for name in sorted(names):
        entry = cfg.get(name, UNSET)
        alias = entry_alias(entry)
        if alias is not None:
            aliases[name] = alias
            keys[name] = resolve_alias_type(alias)
        else:
            default = entry_default(entry)
            keys[name] = "other" if default is UNSET else type_name(default)
    attributes = set()
    for name in dir(type(mod)):
        if not name.startswith("_"):
            attributes.add(name)
    for name, value in vars(mod).items():
        if name.startswith("_"):
            continue
        attributes.add(name)
        if SubConfigProxy is not None and isinstance(value, SubConfigProxy):
            attributes.update(subproxies(value, name + "."))
    for name in names:  # every prefix of a dotted key is a namespace
        parts = name.split(".")
        for i in range(1, len(parts)):
            attributes.add(".".join(parts[:i]))
    attributes -= names
    return {"keys": keys, "aliases": aliases,
            "attributes": sorted(a for a in attributes if not a.startswith("_"))}


result = {"torch_version": torch.__version__, "modules": {}, "skipped": {}}
for module_name in sys.argv[1:]:
    try:
        mod = importlib.import_module(module_name)
    except Exception as exc:  # absent in this release
        result["skipped"][module_name] = f"import failed: {type(exc).__name__}: {exc}"
        continue
    if not isinstance(mod, ConfigModule):
        result["skipped"][module_name] = "not a ConfigModule"
        continue
    result["modules"][module_name] = dump(mod)
json.dump(result, sys.stdout, sort_keys=True)
'''

IMPORT_CHECK = (
    "import warnings; warnings.simplefilter('ignore'); "
    "import importlib.metadata as m, torch; "
    "print(torch.__version__); print(m.version('torch'))"
)

REQUIRES = (
    "import importlib.metadata as m, json; "
    "print(json.dumps(m.requires('torch') or []))"
)


class GenError(Exception):
    pass


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def clean_env() -> dict[str, str]:
    """Environment for running torch: nothing that could change config defaults."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "USER")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["CUDA_VISIBLE_DEVICES"] = ""
    env["PYTHONHASHSEED"] = "0"
    return env


def run(cmd: list[str], *, env: dict[str, str] | None = None, what: str) -> str:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise GenError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")
    return proc.stdout


def base_version(v: str) -> str:
    return v.split("+", 1)[0]


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def installed_torch(py: Path) -> str | None:
    """The torch version importable in the venv, or None."""
    if not py.exists():
        return None
    proc = subprocess.run([str(py), "-I", "-c", IMPORT_CHECK], env=clean_env(),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    return proc.stdout.split()[0]


def pip_install(py: Path, args: list[str], what: str) -> None:
    run([str(py), "-m", "pip", "install", "--disable-pip-version-check",
         "--no-input", "--progress-bar", "off", *args], what=what)


def make_venv(version: str, venv: Path) -> None:
    py = venv_python(venv)
    have = installed_torch(py)
    if have is not None and base_version(have) == version:
        log(f"  reusing {venv} (torch {have})")
        return
    if venv.exists():
        shutil.rmtree(venv)
    log(f"  creating venv {venv}")
    run([sys.executable, "-m", "venv", str(venv)], what="python3 -m venv")
    log(f"  pip install --no-deps torch=={version}")
    pip_install(py, ["--no-deps", f"torch=={version}"], f"installing torch=={version}")
    reqs = json.loads(run([str(py), "-I", "-c", REQUIRES], env=clean_env(),
                          what="reading torch requirements"))
    # Optional extras are not needed for importing the config modules.
    reqs = [r for r in reqs if not re.search(r";.*\bextra\s*==", r)]
    log(f"  installing {len(reqs)} requirement(s) of torch one by one")
    skipped = []
    for req in reqs:
        try:
            pip_install(py, [req], f"installing {req!r}")
        except GenError as exc:
            skipped.append(req)
            last = str(exc).strip().splitlines()[-1]
            log(f"    skipped {req!r}: {last}")
    have = installed_torch(py)
    if have is None:
        proc = subprocess.run([str(py), "-I", "-c", "import torch"], env=clean_env(),
                              capture_output=True, text=True)
        tail = "\n".join(proc.stderr.strip().splitlines()[-8:])
        raise GenError(f"`import torch` fails in {venv} (skipped deps: {skipped}):\n{tail}")
    if base_version(have) != version:
        raise GenError(f"asked for torch {version}, venv has {have}")
    log(f"  torch {have} imports fine" + (f" (skipped: {', '.join(skipped)})" if skipped else ""))


def dump_version(version: str, venv: Path, modules: list[str]) -> dict:
    make_venv(version, venv)
    out = run([str(venv_python(venv)), "-I", "-c", DUMPER, *modules], env=clean_env(),
              what=f"dumping config modules of torch {version}")
    try:
        data = json.loads(out)
    except json.JSONDecodeError as exc:
        raise GenError(f"dumper printed invalid JSON for torch {version}: {exc}") from exc
    for mod, why in sorted(data["skipped"].items()):
        log(f"  note: {mod} skipped in torch {version}: {why}")
    if not data["modules"]:
        raise GenError(f"no config module found in torch {version}")
    for mod, info in sorted(data["modules"].items()):
        log(f"  {mod}: {len(info['keys'])} keys, {len(info['aliases'])} aliases, "
            f"{len(info['attributes'])} attributes")
    return data["modules"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Dump torch config-module keys for compile-lint rule CL501.")
    parser.add_argument("--versions", nargs="+", default=DEFAULT_VERSIONS, metavar="VERSION",
                        help="torch releases to include (default: %(default)s)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT,
                        help="JSON file to write (default: compile_lint/data/torch_config_keys.json)")
    parser.add_argument("--keep-venvs", type=Path, metavar="DIR",
                        help="create the venvs as DIR/torch-VERSION, keep them, and reuse them "
                             "on later runs (default: temporary, deleted afterwards)")
    parser.add_argument("--modules", nargs="+", default=DEFAULT_MODULES, metavar="MODULE",
                        help="config modules to dump (default: %(default)s)")
    args = parser.parse_args(argv)

    versions = list(dict.fromkeys(args.versions))
    for v in versions:
        if not v or "+" in v or not v[0].isdigit():
            parser.error(f"invalid torch version {v!r} (use a plain release like 2.13.0)")

    start = time.monotonic()
    table: dict[str, dict] = {}
    try:
        for version in versions:
            t0 = time.monotonic()
            log(f"torch {version}:")
            if args.keep_venvs:
                args.keep_venvs.mkdir(parents=True, exist_ok=True)
                table[version] = dump_version(
                    version, args.keep_venvs.resolve() / f"torch-{version}", args.modules)
            else:
                with tempfile.TemporaryDirectory(prefix=f"torch-{version}-") as tmp:
                    table[version] = dump_version(version, Path(tmp) / "venv", args.modules)
            log(f"  done in {time.monotonic() - t0:.0f}s")
    except GenError as exc:
        log(f"error: {exc}")
        return 1
    except KeyboardInterrupt:
        log("interrupted")
        return 130

    payload = {"generated_by": GENERATED_BY, "versions": table}
    text = json.dumps(payload, sort_keys=True, indent=1) + "\n"
    args.output.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = args.output.with_name(args.output.name + ".tmp")
    tmp_out.write_text(text, encoding="utf-8")
    tmp_out.replace(args.output)
    log(f"wrote {args.output} ({len(text)} bytes) in {time.monotonic() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
