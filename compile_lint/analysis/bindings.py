"""The value model's bindings of one file as a declared fact.

`FileBindings` (analysis/values.py) gives every scope's bindings with positions and
the reaching rule the value model uses; analyses that need the bound *expressions*
(dtypes in precision.py, gradients in gradients.py) ask this fact instead of keeping
their own tables. Rules that use those analyses declare `BindingsFact` in `needs`.
"""
from __future__ import annotations

from .facts import Fact, ModuleFacts
from .values import FileBindings


class BindingsFact(Fact):
    """Scopes and bindings with positions for one file (FileBindings)."""

    name = "bindings"

    @classmethod
    def compute(cls, facts: ModuleFacts) -> FileBindings:
        return FileBindings(facts.tree, facts.parent)


def bindings_for(facts: ModuleFacts) -> FileBindings:
    return facts.get(BindingsFact)
