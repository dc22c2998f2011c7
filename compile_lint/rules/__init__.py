"""The rule registry: every `Rule` subclass in this package's modules, by code.

A new rule is a new module here (`clNNN_name.py`); nothing else to register.
"""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Case, Rule

__all__ = ["Case", "Rule", "all_rules", "get_rule", "region_reading_codes", "select_codes"]


def __getattr__(name: str):
    """Case and Rule from .base when first asked for: a run answered from the cache
    (engine.py) imports this package without needing a rule."""
    if name in ("Case", "Rule"):
        from . import base

        value = globals()[name] = getattr(base, name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@lru_cache(maxsize=1)
def all_rules() -> dict[str, Rule]:
    import importlib
    import pkgutil

    from .base import Rule

    found: dict[str, Rule] = {}
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("cl"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__:
                if obj.code in found:
                    raise RuntimeError(f"two rules claim {obj.code}")
                found[obj.code] = obj()
    return dict(sorted(found.items()))


@lru_cache(maxsize=1)
def region_reading_codes() -> frozenset[str]:
    """The rules that may read the region index. The others cannot: a fact or query of
    the index goes through RegionsFact, which a rule must declare in `needs`, itself or
    through a fact it declares (ModuleFacts.get refuses it otherwise), so their findings do not change when only
    the index does (pass 2 re-runs these alone)."""
    from ..analysis.semantic.facts import RegionsFact, declared_facts

    return frozenset(code for code, rule in all_rules().items() if RegionsFact in declared_facts(rule.needs))


def get_rule(code: str) -> Rule:
    return all_rules()[code.upper()]


class UnknownSelector(ValueError):
    pass


def expand_selector(selector: str) -> set[str]:
    """`ALL`, a family prefix (`CL5`, `CL50`) or a full code -> the codes it names."""
    sel = selector.strip().upper()
    codes = all_rules().keys()
    if sel == "ALL":
        return set(codes)
    matched = {c for c in codes if c.startswith(sel)}
    if not matched or not sel.startswith("CL"):
        import difflib

        hint = difflib.get_close_matches(sel, list(codes), n=1)
        extra = f" (did you mean {hint[0]}?)" if hint else ""
        raise UnknownSelector(f"unknown rule selector {selector!r}{extra}")
    return matched


def select_codes(select, extend_select=(), ignore=()) -> set[str]:
    """The enabled codes. `ALL` (the default `select`) enables every rule except those
    off by default (`Rule.default_selected = False`, e.g. CL103, a small-input
    hazard); naming such a rule by its code or a prefix (`CL103`, `CL1`) enables it."""
    enabled: set[str] = set()
    rules = all_rules()
    for sel in list(select) + list(extend_select):
        codes = expand_selector(sel)
        if sel.strip().upper() == "ALL":
            codes = {c for c in codes if rules[c].default_selected}
        enabled |= codes
    for sel in ignore:
        enabled -= expand_selector(sel)
    return enabled
