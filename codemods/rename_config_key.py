"""CL501: rename an old config key to the key it aliases (`cache_size_limit` -> `recompile_limit`)."""
from __future__ import annotations

import libcst as cst

from .base import FindingCodemod


class RenameConfigKey(FindingCodemod):
    RULE = "CL501"
    DESCRIPTION = "Rename aliased torch config keys to their real names."

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        data = self.target_data(original)
        if data and original.attr.value == data["old"]:
            return updated.with_changes(attr=cst.Name(data["new"]))
        return updated

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString):
        data = self.target_data(original)
        if data and original.evaluated_value == data["old"]:
            prefix_len = len(original.prefix) + len(original.quote)
            return updated.with_changes(
                value=original.value[:prefix_len] + data["new"] + original.value[-len(original.quote):]
            )
        return updated

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg):
        data = self.target_data(original)
        if data and original.keyword is not None and original.keyword.value == data["old"]:
            return updated.with_changes(keyword=cst.Name(data["new"]))
        return updated
