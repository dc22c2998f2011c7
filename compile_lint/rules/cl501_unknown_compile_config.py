from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..torch_config import ConfigTable, config_modules, resolve_version
from .base import Case, Rule


class UnknownCompileConfig(Rule):
    """
    ## What it does
    Checks every key set, read or patched on `torch._dynamo.config`,
    `torch._inductor.config`, `torch.compiler.config`, `torch._functorch.config` and
    `torch.fx.experimental._config` against the keys the target torch release has.
    Spellings through aliases are followed (`import torch._dynamo.config as dc`,
    `from torch._inductor import config`), and so are `config.patch("key", ...)`,
    `config.patch(key=...)`, `config.patch({"key": ...})` and `setattr`/`getattr`
    with a literal key.

    ## Why is this bad?
    torch's config modules reject unknown keys: `torch._dynamo.config.compile_fusion_guard = True`
    raises `AttributeError: ... does not exist` at import time, or, inside a
    `patch(...)`, when the patch is entered. A key renamed in a newer release (for
    example `cache_size_limit`, now an alias of `recompile_limit`) keeps working only
    while the alias lasts.

    ## Example
    ```python
    import torch._dynamo.config as dc
    dc.cache_size_limt = 64
    dc.cache_size_limit = 64
    ```

    ## Use instead
    ```python
    import torch._dynamo.config as dc
    dc.recompile_limit = 64
    ```

    ## Fix safety
    Safe only for a known alias: the fix renames it to the key it stands for
    (`cache_size_limit` -> `recompile_limit`), which is the same setting. Unknown keys
    have no fix: the finding suggests the closest real key.

    ## Options
    `target-torch-version` (or `--target-torch`) picks the release; the default is
    the newest release in the table (see `compile_lint/data/torch_config_keys.json`,
    made by `scripts/gen_torch_config_keys.py`).

    ## References
    - hazards.md CL501
    - torch/utils/_config_module.py (`Config(alias=...)`)
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
    ]
    invalid = [
        Case("import torch._dynamo\ntorch._dynamo.config.compile_fusion_guard = True\n", at=[(2, 1)]),
        Case(
            "import torch._dynamo.config as dc\ndc.cache_size_limit = 64\n",
            fixed="import torch._dynamo.config as dc\ndc.recompile_limit = 64\n",
            at=[(2, 1)],
        ),
        Case(
            "from torch._dynamo import config\nwith config.patch(cache_size_limit=64):\n    pass\n",
            fixed="from torch._dynamo import config\nwith config.patch(recompile_limit=64):\n    pass\n",
            at=[(2, 19)],
        ),
        Case(
            "import torch\n@torch._dynamo.config.patch('cache_size_limit', 8)\ndef test():\n    pass\n",
            fixed="import torch\n@torch._dynamo.config.patch('recompile_limit', 8)\ndef test():\n    pass\n",
            at=[(2, 29)],
        ),
        Case("import torch._inductor.config as ic\nic.triton.cudagraph = True\n", at=[(2, 1)]),
        Case("import torch\nx = torch._inductor.config.patch({'emulate_precision_cast': True})\n", at=[(2, 35)]),
        Case("import torch\nsetattr(torch._dynamo.config, 'suppress_error', True)\n", at=[(2, 31)]),
    ]

    def check(self, facts) -> Iterator:
        modules = config_modules()
        table: Optional[ConfigTable] = None

        def module_of(dotted: Optional[str]) -> Optional[str]:
            if not dotted:
                return None
            for module in modules:
                if dotted == module or dotted.startswith(module + "."):
                    return module
            return None

        def verdict(module: str, key: str):
            nonlocal table
            if table is None:
                table = ConfigTable(resolve_version(facts.project.target_torch))
            return table.lookup(module, key)

        def report(node, module, key):
            status, extra = verdict(module, key)
            if status == "ok" or key.startswith("_"):
                return None
            if status == "alias":
                return self.finding(
                    facts, node,
                    f"`{module}.{key}` is an old name of `{extra}` in torch {table.version}",
                    fix=f"rename `{key}` to `{extra}`",
                    data={"old": key, "new": extra},
                )
            hint = f" (did you mean `{extra}`?)" if extra else ""
            return self.finding(
                facts, node,
                f"`{module}.{key}` does not exist in torch {table.version}{hint}",
            )

        # attribute chains: torch._dynamo.config.KEY[.SUB]
        for node in facts.nodes(ast.Attribute):
            parent = facts.parent(node)
            if isinstance(parent, ast.Attribute) and parent.value is node:
                continue  # only the outermost attribute of a chain
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
        for call in facts.calls_to("builtins.setattr", "builtins.getattr", "builtins.hasattr"):
            if len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str):
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
