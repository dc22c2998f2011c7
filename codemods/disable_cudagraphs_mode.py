"""CL402: `mode="reduce-overhead"` / `"max-autotune"` -> `mode="max-autotune-no-cudagraphs"`."""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from .base import FindingCodemod

NO_CUDAGRAPHS = "max-autotune-no-cudagraphs"


class DisableCudagraphsMode(FindingCodemod):
    RULE = "CL402"
    DESCRIPTION = "Compile without CUDA graphs: mode='max-autotune-no-cudagraphs'."

    @classmethod
    def touched_points(cls, row, column, data):
        return [(row, column)] + ([tuple(data["mode_at"])] if data.get("mode_at") else [])

    def _wanted(self) -> set[tuple[int, int]]:
        wanted = getattr(self, "_wanted_cache", None)
        if wanted is None:
            wanted = {tuple(d["mode_at"]) for d in self.targets.values() if d.get("mode_at")}
            self._wanted_cache = wanted
        return wanted

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString):
        try:
            pos = self.get_metadata(PositionProvider, original).start
        except KeyError:
            return updated
        if (pos.line, pos.column + 1) not in self._wanted():
            return updated
        quote = updated.quote
        prefix = updated.prefix
        return updated.with_changes(value=f"{prefix}{quote}{NO_CUDAGRAPHS}{quote}")
