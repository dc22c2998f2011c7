"""Shared shape of the CL3xx/CL4xx rewrites: append a method call to given expressions.

A finding's fix data names the expressions to rewrite by their exact range,
`"wrap": [[row, col, end_row, end_col], ...]` (1-based rows, 1-based character columns,
end exclusive, as `SourceFile.node_range` gives them), and the text to append,
`"suffix": ".float()"`. Ranges, not just starts, because `model(x).sample`, `model(x)`
and `model` all start at the same place. The ranges may lie outside the finding's own
node (CL302 converts the inputs of the computation a compare reads).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst
from libcst.metadata import PositionProvider

from .base import FindingCodemod

ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.ConcatenatedString, cst.List, cst.Tuple, cst.Dict)


def suffixed(module: cst.Module, node: cst.BaseExpression, suffix: str) -> cst.BaseExpression:
    """`node` followed by `suffix` (`.clone()`), parenthesized when it needs to be."""
    code = module.code_for_node(node)
    if not (isinstance(node, ATOMS) or node.lpar):
        code = f"({code})"
    return cst.parse_expression(code + suffix)


class WrapExpressions(FindingCodemod):
    DEFAULT_SUFFIX = ""

    @classmethod
    def touched_points(cls, row, column, data):
        return [(row, column)] + [(r[0], r[1]) for r in data.get("wrap", ())]

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        self._module = tree
        return super().transform_module_impl(tree)

    def _ranges(self) -> dict[tuple[int, int, int, int], str]:
        ranges = getattr(self, "_range_cache", None)
        if ranges is None:
            ranges = {}
            for data in self.targets.values():
                suffix = data.get("suffix", self.DEFAULT_SUFFIX)
                for r in data.get("wrap", ()):
                    ranges[tuple(r)] = suffix
            self._range_cache = ranges
        return ranges

    def _suffix_for(self, node: cst.CSTNode) -> Optional[str]:
        if not isinstance(node, cst.BaseExpression):
            return None
        try:
            pos = self.get_metadata(PositionProvider, node)
        except KeyError:
            return None
        key = (pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1)
        return self._ranges().get(key)

    def on_leave(self, original_node, updated_node):
        updated = super().on_leave(original_node, updated_node)
        suffix = self._suffix_for(original_node)
        if suffix is None or not isinstance(updated, cst.BaseExpression):
            return updated
        return suffixed(self._module, updated, suffix)
