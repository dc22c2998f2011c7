"""Every graph break Dynamo takes, with its official ID and the user line (stdlib only).

Shared by `compile-lint record` (the recorder copies this file next to itself into the
bootstrap folder), `compile-lint verify` (its workers) and the oracle bench
(bench/oracle/child.py, loaded by path). Nothing here imports torch: the caller passes
the torch module it has imported.

Dynamo's own counts miss breaks: `counters["graph_break"]` leaves out data-dependent
jumps (`if tensor:`), and `torch._dynamo.explain` traces again. Two places of its
translator see every break, so they are wrapped:

- `InstructionTranslatorBase.log_graph_break`: every break Dynamo resumes after,
  data-dependent jumps included (those reach `graph_break_reasons`, not the counter);
- `InstructionTranslatorBase.raise_loop_graph_break`: a break inside a loop of the
  frame being compiled. Dynamo gives up on the whole frame, which then runs eagerly
  ("graph break in loop", GB7000); the cause is the exception it wraps.

Both are private APIs (torch/_dynamo/symbolic_convert.py, torch 2.13-2.15): `missing()`
names what is absent, and callers refuse to report "no breaks" when it is.

A break's ID comes from `torch/_dynamo/graph_break_registry.json` of the installed
torch, mapped from its `Gb_type` as torch's own `_load_gb_type_to_gb_id_map` does
(every historical `Gb_type` of an ID).
"""
from __future__ import annotations

import json
import os
from typing import Callable, Optional

LOOP_GB_TYPE = "graph break in loop"  # GB7000: the frame ran eagerly
HOOKED = ("log_graph_break", "raise_loop_graph_break")


def translator(torch):
    from torch._dynamo import symbolic_convert

    return symbolic_convert.InstructionTranslatorBase


def missing(torch) -> list[str]:
    """The hooked methods this torch lacks (empty when breaks can be recorded)."""
    try:
        cls = translator(torch)
    except Exception:
        return ["torch._dynamo.symbolic_convert"]
    return [f"InstructionTranslatorBase.{name}" for name in HOOKED if name not in cls.__dict__]


def registry_ids(torch) -> dict[str, str]:
    """Gb_type -> official ID, from the installed torch's registry ({} when unreadable)."""
    try:
        path = os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")
        with open(path, encoding="utf-8") as fh:
            registry = json.load(fh)
    except (OSError, ValueError, AttributeError):
        return {}
    return {item["Gb_type"]: gbid for gbid, items in registry.items() for item in items if "Gb_type" in item}


def _frame(fs) -> dict:
    return {"file": os.path.realpath(fs.filename), "line": fs.lineno, "name": fs.name}


def code_span(code) -> dict:
    """The code object Dynamo gave up on: its file, name and lines."""
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return {
        "file": os.path.realpath(code.co_filename),
        "name": getattr(code, "co_qualname", code.co_name),
        "first": code.co_firstlineno,
        "last": max(lines) if lines else code.co_firstlineno,
    }


def install(torch, on_break: Callable[[dict], None], user_file: Callable[[str], bool],
            on_loop_logged: Optional[Callable[[], None]] = None) -> Callable[[], None]:
    """Wrap the two methods; `on_break(record)` gets one dict per break:

    `gb_type`, `gb_id` (None when the registry does not know it), `kind` ("break": Dynamo
    resumed after it; "loop": the frame ran eagerly), `frame_to_eager`, `site` (the
    innermost frame for which `user_file(path)` is true: {file, line, name}), `innermost`
    (the innermost frame anywhere, e.g. inside torch), `stack` (the user frames), `frame`
    (the code Dynamo was translating) and `message` (the break's text, bounded).

    `on_loop_logged()`: the frame above logged a GB7000 already recorded as kind "loop".
    Returns the function that puts the originals back. Errors inside the hook are
    swallowed: recording must never change what Dynamo does.
    """
    cls = translator(torch)
    absent = missing(torch)
    if absent:
        raise RuntimeError(f"torch {torch.__version__}: {', '.join(absent)} missing")
    ids = registry_ids(torch)
    original_log = cls.__dict__["log_graph_break"]
    original_loop = cls.__dict__["raise_loop_graph_break"]
    loop_impl = original_loop.__func__

    def record(exc, kind: str, code) -> None:
        try:
            stack = getattr(exc, "real_stack", None) or torch._guards.TracingContext.extract_stack()
            frames = [_frame(fs) for fs in (stack or [])]
            inside = [f for f in frames if user_file(f["file"])]
            gb_type = getattr(exc, "gb_type", None) or type(exc).__name__
            on_break({
                "gb_type": gb_type,
                "gb_id": ids.get(gb_type),
                "kind": kind,
                "frame_to_eager": kind == "loop",
                "site": inside[-1] if inside else None,
                "innermost": frames[-1] if frames else None,
                "stack": inside,
                "frame": code_span(code) if code is not None else None,
                "message": str(getattr(exc, "msg", exc)).split("\n\n*** While handling", 1)[0][:2000],
            })
        except Exception:
            pass

    def log_graph_break(self, code_options, reason, exc):
        # the frame-level GB7000 that raise_loop_graph_break raised, logged again by the
        # frame above: its cause is already recorded as kind "loop"
        if getattr(exc, "gb_type", None) == LOOP_GB_TYPE:
            if on_loop_logged is not None:
                on_loop_logged()
        elif not getattr(exc, "logged", False):
            record(exc, "break", getattr(self, "f_code", None))
        return original_log(self, code_options, reason, exc)

    def raise_loop_graph_break(code, exc):
        record(exc, "loop", code)
        return loop_impl(code, exc)

    cls.log_graph_break = log_graph_break
    cls.raise_loop_graph_break = staticmethod(raise_loop_graph_break)

    def uninstall() -> None:
        cls.log_graph_break = original_log
        cls.raise_loop_graph_break = original_loop

    return uninstall


class BreakHooks:
    """`with BreakHooks(torch, user_file) as hooks: compiled(...)`; then `hooks.breaks`."""

    def __init__(self, torch, user_file: Callable[[str], bool]):
        self.torch = torch
        self.user_file = user_file
        self.breaks: list[dict] = []
        self.loop_logged = 0
        self._uninstall: Optional[Callable[[], None]] = None

    def __enter__(self) -> "BreakHooks":
        def loop_logged() -> None:
            self.loop_logged += 1

        self._uninstall = install(self.torch, self.breaks.append, self.user_file, loop_logged)
        return self

    def __exit__(self, *exc) -> None:
        if self._uninstall is not None:
            self._uninstall()
            self._uninstall = None


def under(roots) -> Callable[[str], bool]:
    """A `user_file` predicate: the file lies under one of the folders `roots`."""
    prefixes = tuple(os.path.join(os.path.realpath(r), "") for r in roots)
    cache: dict[str, bool] = {}

    def inside(path: str) -> bool:
        hit = cache.get(path)
        if hit is None:
            hit = cache[path] = os.path.realpath(path).startswith(prefixes)
        return hit

    return inside
