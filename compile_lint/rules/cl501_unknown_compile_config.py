from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..analysis.branches.fallbacks import guarded_by_compat_handler, in_compat_fallback
from ..torch_config import ConfigTable, config_modules, covers_all_supported, supported_versions
from .base import Case, Rule

ATTR_BUILTINS = ("setattr", "getattr", "hasattr")
ATTR_BUILTINS_DOTTED = frozenset(f"builtins.{name}" for name in ATTR_BUILTINS)


class UnknownCompileConfig(Rule):
    """
    ## What it does
    Checks every key set, read or patched on `torch._dynamo.config`,
    `torch._inductor.config`, `torch.compiler.config`, `torch._functorch.config` and
    `torch.fx.experimental._config` against the keys of every torch release the project
    supports. Spellings through aliases are followed (`import torch._dynamo.config as dc`,
    `from torch._inductor import config`), and so are `config.patch("key", ...)`,
    `config.patch(key=...)`, `config.patch({"key": ...})` and `setattr`/`getattr`
    with a literal key. A key is an attribute chain: `config.reorderable_logging_functions.add(print)`
    calls a method of the (set-valued) key `reorderable_logging_functions` and is fine.

    ## Why is this bad?
    torch's config modules reject unknown keys: `torch._dynamo.config.compile_fusion_guard = True`
    raises `AttributeError: ... does not exist` at import time, or, inside a
    `patch(...)`, when the patch is entered.

    Old names kept as aliases (`cache_size_limit` for `recompile_limit`) work silently on
    every release in the key table (measured on 2.13: setting `cache_size_limit = 5` sets
    `recompile_limit` to 5, no warning). They are reported, with a rename, only when
    `target-torch-version` says that every torch the project supports has the new name.
    Code that guards the access with `except AttributeError` (or falls back in such a
    handler) already handles releases without the key and is not reported.

    ## Example
    ```python
    import torch._dynamo.config as dc
    dc.cache_size_limt = 64
    ```

    ## Use instead
    ```python
    import torch._dynamo.config as dc
    dc.recompile_limit = 64
    ```

    ## Fix safety
    Safe, and only for an alias when `target-torch-version` (the OLDEST torch the
    project supports) is set and every release from it on has the new key: the fix
    renames it to the key it stands for, which is the same setting. Without
    `target-torch-version` no alias is reported, because the rename breaks projects
    that still support a torch older than the new name. Unknown keys have no fix: the
    finding suggests the closest real key.

    ## Options
    `target-torch-version` (or `--target-torch`): the oldest torch the project supports,
    as in Ruff's `target-version`. Keys are checked against every known release from it
    on; unset, against the newest known release only. The table is
    `compile_lint/data/torch_config_keys.json`, made by `scripts/gen_torch_config_keys.py`
    from real installs (it knows 2.13.0 and 2.14.1).

    ## References
    - `torch/utils/_config_module.py` (`Config(alias=...)`, `ConfigModule.__setattr__`)
    - the cases of this rule (`compile-lint rule CL501`) and `fixtures/rules/CL501/`
    """

    needs = ()
    code = "CL501"
    name = "unknown-compile-config"
    summary = "Config key that the target torch release does not have"
    fix_safety = "safe"
    codemod = "codemods.rename_config_key:RenameConfigKey"
    requires = (b"config",)

    valid = [
        Case("import torch._dynamo\ntorch._dynamo.config.recompile_limit = 16\n"),
        Case("import torch._inductor.config as ic\nic.triton.cudagraphs = True\nic.fallback_random = True\n"),
        Case("from torch._inductor import config\nwith config.patch(emulate_precision_casts=True):\n    pass\n"),
        Case("import torch\ntorch.compiler.config.allow_unspec_int_on_nn_module = True\n", note="public alias into dynamo"),
        Case("import myproj.config as config\nconfig.anything = 1\n", note="not torch's"),
        Case("import torch\ntorch._dynamo.config.reorderable_logging_functions.add(print)\n", note="method of a set-valued key"),
        Case("import torch._dynamo.config as dc\ndc.reorderable_logging_functions.update({print})\nx = dc.recompile_limit.__class__\n"),
        Case("import torch._dynamo.config as dc\ndc.cache_size_limit = 64\n", note="alias, oldest supported torch unknown"),
        Case(
            "import torch\ntry:\n    torch._dynamo.config.recompile_limit = 64\nexcept AttributeError:\n"
            "    torch._dynamo.config.cache_size_limit = 64\n",
            settings={"target-torch-version": "2.13"},
            note="fallback for older torch",
        ),
        Case(
            "import torch\ntry:\n    torch._dynamo.config.cache_size_limit = 64\nexcept Exception:\n    pass\n",
            settings={"target-torch-version": "2.13"},
        ),
        Case(
            "import torch._dynamo.config as dc\ndc.cache_size_limit = 64\n",
            settings={"target-torch-version": "2.4"},
            note="the table does not know 2.4: the new name may be missing there",
        ),
    ]
    invalid = [
        Case("import torch._dynamo\ntorch._dynamo.config.compile_fusion_guard = True\n", at=[(2, 1)]),
        Case(
            "import torch._dynamo.config as dc\ndc.cache_size_limit = 64\n",
            fixed="import torch._dynamo.config as dc\ndc.recompile_limit = 64\n",
            settings={"target-torch-version": "2.13"},
            at=[(2, 1)],
        ),
        Case(
            "from torch._dynamo import config\nwith config.patch(cache_size_limit=64):\n    pass\n",
            fixed="from torch._dynamo import config\nwith config.patch(recompile_limit=64):\n    pass\n",
            settings={"target-torch-version": "2.14"},
            at=[(2, 19)],
        ),
        Case(
            "import torch\n@torch._dynamo.config.patch('cache_size_limit', 8)\ndef test():\n    pass\n",
            fixed="import torch\n@torch._dynamo.config.patch('recompile_limit', 8)\ndef test():\n    pass\n",
            settings={"target-torch-version": "2.13.0"},
            at=[(2, 29)],
        ),
        Case("import torch\ntorch._dynamo.config.reorderable_logging_function.add(print)\n", at=[(2, 1)], note="misspelt key, then a method"),
        Case("import torch._inductor.config as ic\nic.triton.cudagraph = True\n", at=[(2, 1)]),
        Case("import torch\nx = torch._inductor.config.patch({'emulate_precision_cast': True})\n", at=[(2, 35)]),
        Case("import torch\nsetattr(torch._dynamo.config, 'suppress_error', True)\n", at=[(2, 31)]),
    ]

    def check(self, facts) -> Iterator:
        modules = config_modules()
        data = facts.source.data
        if not any(all(part.encode() in data for part in module.split(".")[1:]) for module in modules):
            return  # a name resolves to `torch._dynamo.config...` only if the file spells each part
        oldest = facts.project.target_torch
        tables: Optional[list[ConfigTable]] = None

        def module_of(dotted: Optional[str]) -> Optional[str]:
            if not dotted:
                return None
            for module in modules:
                if dotted == module or dotted.startswith(module + "."):
                    return module
            return None

        def verdicts(module: str, key: str):
            """(release, status, extra) for each release the project supports."""
            nonlocal tables
            if tables is None:
                tables = [ConfigTable(v) for v in supported_versions(oldest)]
            return [(t.version, *t.lookup(module, key)) for t in tables]

        def report(node, module, key):
            if key.startswith("_"):
                return None
            found = verdicts(module, key)
            unknown = [(v, extra) for v, status, extra in found if status == "unknown"]
            if unknown:
                if guarded_by_compat_handler(facts, node) or in_compat_fallback(facts, node):
                    return None  # the code already handles the release without the key
                version, extra = unknown[0]
                hint = f" (did you mean `{extra}`?)" if extra else ""
                return self.finding(
                    facts, node,
                    f"`{module}.{key}` does not exist in torch {version}{hint}",
                )
            targets = {extra for _, status, extra in found if status == "alias"}
            if len(targets) != 1 or len(found) != sum(1 for _, s, _ in found if s == "alias"):
                return None
            new = targets.pop()
            # The alias works silently on every known release; renaming it is right only
            # when every torch the project supports has the new key (target-torch-version
            # is the oldest supported release and the table covers it), and never in code
            # that already falls back for older releases.
            if not covers_all_supported(oldest):
                return None
            if any(t.lookup(module, new)[0] != "ok" for t in tables):
                return None
            if guarded_by_compat_handler(facts, node) or in_compat_fallback(facts, node):
                return None
            return self.finding(
                facts, node,
                f"`{module}.{key}` is an old name of `{new}`, which every supported torch has",
                fix=f"rename `{key}` to `{new}`",
                data={"old": key, "new": new},
            )

        # attribute chains: torch._dynamo.config.KEY[.SUB]
        # attribute chains, from their root names: only a root on a config module's path
        # (`torch`, `torch._dynamo`, `dynamo_config`) can start one naming a key
        root_hits: dict[str, bool] = {}  # a bare name resolves the same wherever it is
        Name = ast.Name
        for first in facts.nodes(ast.Attribute):
            root = first.value
            if root.__class__ is not Name:
                continue  # not the innermost attribute of a chain on a name
            hit = root_hits.get(root.id)
            if hit is None:
                base = facts.resolve(root)
                hit = root_hits[root.id] = bool(base) and any(m.startswith(base) or base.startswith(m) for m in modules)
            if not hit:
                continue
            node, parent = first, facts.parent(first)
            while isinstance(parent, ast.Attribute) and parent.value is node:
                node, parent = parent, facts.parent(parent)
            dotted = facts.resolve(node)
            module = module_of(dotted)
            if module is None or dotted == module:
                continue
            key = dotted[len(module) + 1 :]
            if isinstance(parent, ast.Call) and parent.func is node:
                if key in ("patch",):
                    yield from self._check_patch(facts, parent, module, report)
                    continue
            found = report(node, module, key)
            if found is not None:
                yield found
        # setattr / getattr with a literal key
        for call in facts.nodes(ast.Call):
            if not (len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str)):
                continue
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr not in ATTR_BUILTINS:
                continue  # resolves to "<x>.<attr>": not one of them
            if facts.resolve(func) in ATTR_BUILTINS_DOTTED:
                module = facts.resolve(call.args[0])
                if module in modules:
                    if facts.resolve(call.func) == "builtins.hasattr":
                        continue  # probing is the right way to handle other releases
                    found = report(call.args[1], module, call.args[1].value)
                    if found is not None:
                        yield found

    def _check_patch(self, facts, call, module, report):
        args = call.args
        if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
            found = report(args[0], module, args[0].value)
            if found is not None:
                yield found
        if args and isinstance(args[0], ast.Dict):
            for key in args[0].keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    found = report(key, module, key.value)
                    if found is not None:
                        yield found
        for kw in call.keywords:
            if kw.arg:
                found = report(kw, module, kw.arg)
                if found is not None:
                    yield found
