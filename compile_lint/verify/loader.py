"""Import a target inside the worker and turn it into something to call.

Runs only in the worker process: importing the user's module runs its code.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .config import call_text


class TargetProblem(Exception):
    """The target cannot be loaded or called as asked; the message says what to change.

    `skipped`: nothing is wrong with the code, verify just cannot call it unaided (no
    inputs to guess, not a function or module); else the user's code failed (import,
    constructor): an error."""

    def __init__(self, message: str, skipped: bool = False) -> None:
        super().__init__(message)
        self.skipped = skipped


@dataclass
class LoadedTarget:
    obj: Any  # the function or nn.Module class as defined (compile wrappers removed)
    is_module_class: bool


def _package_root(path: str) -> tuple[str, str]:
    """The folder to put on sys.path and the dotted name to import `path` by, so that the
    file's own package-relative imports keep working."""
    folder, filename = os.path.split(os.path.abspath(path))
    parts = [os.path.splitext(filename)[0]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        parts.insert(0, package)
    return folder, ".".join(parts)


def import_target(spec: dict) -> LoadedTarget:
    if spec.get("file"):
        root, dotted = _package_root(spec["file"])
    else:
        root, dotted = spec.get("import_root") or os.getcwd(), spec["module"]
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        module = importlib.import_module(dotted)
    except Exception as exc:  # the user's module failed to import: report it as such
        raise TargetProblem(f"importing {dotted} failed: {type(exc).__name__}: {exc}") from exc
    obj: Any = module
    for part in spec["qualname"].split("."):
        if not hasattr(obj, part):
            raise TargetProblem(f"{dotted} has no {spec['qualname']!r}")
        obj = getattr(obj, part)
    return LoadedTarget(unwrap_compiled(obj), inspect.isclass(obj))


def unwrap_compiled(obj: Any) -> Any:
    """A `@torch.compile`d function or `torch.compile(Module())` is verified as the
    code it wraps: verify compiles it itself, in each mode."""
    for attr in ("_torchdynamo_orig_callable", "_orig_mod"):
        inner = getattr(obj, attr, None)
        if inner is not None:
            return unwrap_compiled(inner)
    return obj


def build(loaded: LoadedTarget, spec: dict, options: dict) -> tuple[Any, str]:
    """The target as the project builds it, and how, for the report: a factory the code
    calls (sites.py found it: `torch.compile(build())`, `--target mod.py:make_model`) is
    called and its result verified; a class is built with the configured or the site's
    arguments, else its defaults; a function is itself. `spec["built"]` says where the
    arguments come from."""
    import torch

    name = spec["qualname"]
    origin = f" ({spec['built']})" if spec.get("built") else ""
    factory = spec.get("factory")
    if factory:
        made = import_target(factory)
        args, kwargs = list(factory.get("args") or []), dict(factory.get("kwargs") or {})
        call = call_text(factory["qualname"], args, kwargs)
        try:
            result = made.obj(*args, **kwargs)
        except Exception as exc:
            raise TargetProblem(f"building {name} by {call} failed: {type(exc).__name__}: {exc}; give the "
                                f"constructor's args/kwargs in a [[verify.targets]] entry to build it directly") from exc
        result = unwrap_compiled(result)
        if isinstance(result, torch.nn.Module):
            made_what = f"a {type(result).__name__}"
        elif callable(result):
            made_what = f"the function {getattr(result, '__name__', '?')}"
        else:
            raise TargetProblem(f"{call} returned a {type(result).__name__}, neither an nn.Module nor a function",
                                skipped=True)
        return result, f"{call} -> {made_what}{origin}"
    args, kwargs = list(spec.get("args") or []), dict(spec.get("kwargs") or {})
    target = construct(loaded, args, kwargs, name, options, spec["ref"])
    if not loaded.is_module_class:
        return target, f"{name} (a function)"
    if not args and not kwargs:
        return target, f"{name}()" + (origin or " (its constructor's defaults)")
    return target, call_text(name, args, kwargs) + origin


def construct(loaded: LoadedTarget, args: list, kwargs: dict, module_name: str, syntax: Optional[dict] = None,
              ref: str = "") -> Any:
    """An instance of the target's class (or the function itself)."""
    import torch

    if not loaded.is_module_class:
        if not callable(loaded.obj):
            raise TargetProblem(f"{module_name} is neither a function nor an nn.Module class", skipped=True)
        return loaded.obj
    if not issubclass(loaded.obj, torch.nn.Module):
        raise TargetProblem(f"{module_name} is a class but not an nn.Module: verify runs functions and modules; "
                            f"name the compiled module or function it uses in a [[verify.targets]] entry, "
                            f"with codes = [...] for the findings", skipped=True)
    if not args and not kwargs:
        missing = required_parameters(loaded.obj.__init__, skip_self=True)
        if missing:
            from .config import toml_value

            syntax = syntax or {}
            values = ", ".join(f"{name} = {toml_value(small_value(name))}" for name in missing)
            table = syntax.get("targets_table") or "[[verify.targets]]"
            raise TargetProblem(
                f"cannot construct {module_name}: its constructor needs {', '.join(missing)} (no default, and "
                f"no literal call at a compile/trace site); add to {syntax.get('config_file') or 'compile-lint.toml'}"
                f" (the values are small guesses by name: check them):\n"
                f"{table}\ntarget = {toml_value(ref or module_name)}\nkwargs = {{ {values} }}", skipped=True)
    try:
        return loaded.obj(*args, **kwargs)
    except Exception as exc:
        raise TargetProblem(f"constructing {module_name} failed: {type(exc).__name__}: {exc}") from exc


def small_value(name: str):
    """A small value for a constructor argument, by its name (a tiny config to check)."""
    lowered = name.lower()
    if any(part in lowered for part in ("channel", "in_nc", "out_nc", "_nc", "in_ch", "out_ch", "c_in", "c_out")):
        return 3
    if any(part in lowered for part in ("dim", "width", "feat", "nf", "hidden", "embed", "ngf", "ndf", "gc")):
        return 16
    if any(part in lowered for part in ("scale", "factor", "upscale")):
        return 2
    if any(part in lowered for part in ("num_classes", "classes")):
        return 10
    if any(part in lowered for part in ("rate", "dropout", "eps", "gamma", "alpha", "beta", "strength")):
        return 0.5
    return 1


def required_parameters(fn: Callable, skip_self: bool = False) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    if skip_self and params and params[0].name == "self":
        params = params[1:]
    return [p.name for p in params
            if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def call_signature(target: Any) -> Optional[inspect.Signature]:
    import torch

    fn = target.forward if isinstance(target, torch.nn.Module) else target
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None
