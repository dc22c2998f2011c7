"""CL201's container facts (rules/cl201_module_list_not_registered/module_containers.py): which local names hold a
module (asked lazily, only for names put in a container), registered names, branches."""
from __future__ import annotations

import textwrap

from compile_lint.analysis.semantic.facts import ModuleFacts
from compile_lint.rules.cl201_module_list_not_registered.module_containers import ModuleContainersFact
from compile_lint.analysis.semantic.names import NameTable
from compile_lint.config import Settings
from compile_lint.source import SourceFile


def containers(code: str) -> dict[str, tuple[int, int]]:
    """attr -> (modules, unknown items) of every reported container attribute."""
    source = SourceFile("snippet.py", textwrap.dedent(code).encode())
    tree = source.parse()
    facts = ModuleFacts(source, tree, NameTable.build(tree, "snippet"), {}, Settings())
    return {a.name: (len(a.items.modules), len(a.items.unknown)) for a in facts.get(ModuleContainersFact)}


def test_a_local_module_appended_in_a_loop():
    found = containers(
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self, n):
                super().__init__()
                layers = []
                for _ in range(n):
                    conv = nn.Conv2d(8, 8, 3)
                    layers.append(conv)
                self.layers = layers
        """
    )
    assert found == {"layers": (1, 0)}


def test_either_branch_binds_a_module():
    found = containers(
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self, deep):
                super().__init__()
                if deep:
                    block = nn.Conv2d(8, 8, 3)
                else:
                    block = nn.Identity()
                self.blocks = [block, nn.Conv2d(8, 3, 1)]
        """
    )
    assert found == {"blocks": (2, 0)}


def test_a_name_registered_by_hand_is_not_lost():
    assert containers(
        """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                conv = nn.Conv2d(8, 8, 3)
                self.add_module("conv", conv)
                self.convs = [conv]
            def forward(self, x):
                return [c(x) for c in self.convs]
        """
    ) == {}


def test_a_name_of_the_enclosing_scope_is_not_a_local_module():
    found = containers(
        """
        import torch.nn as nn
        shared = nn.Conv2d(8, 8, 3)
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.convs = [shared, nn.Conv2d(8, 8, 1)]
        """
    )
    assert found == {"convs": (1, 0)}



def test_a_module_name_stays_a_module_after_an_unknown_reassignment():
    # CL201's own name table (module_containers.LocalModules): the latest assignment that
    # builds a module counts, an unknown one after it does not undo it (the value model's
    # reaching bindings would say "unknown"; bench/results.md 2026-12-01 h-rules says why
    # CL201 does not ask it)
    found = containers(
        """
        import torch.nn as nn
        from helpers import wrap
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                conv = nn.Conv2d(8, 8, 3)
                conv = wrap(conv)
                self.convs = [conv, nn.Conv2d(8, 3, 1)]
        """
    )
    assert found == {"convs": (2, 0)}
