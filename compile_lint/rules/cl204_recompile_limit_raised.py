from __future__ import annotations

import ast
import operator
import os
from typing import Optional

from ..analysis.torch_api import RECOMPILE_LIMITS
from .base import Case, Rule

KEYS = RECOMPILE_LIMITS
# defaults on torch 2.x: per code object, and across all frames of the process
DEFAULTS = {"recompile_limit": 8, "cache_size_limit": 8, "accumulated_recompile_limit": 256, "accumulated_cache_size_limit": 256}
REAL_NAME = {"cache_size_limit": "recompile_limit", "accumulated_cache_size_limit": "accumulated_recompile_limit"}
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Pow: operator.pow, ast.FloorDiv: operator.floordiv}


def const_int(expr: ast.AST) -> Optional[int]:
    """An int from a literal or constant arithmetic (`1_000_000`, `2 ** 16`, `max(64, ...)`)."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.BinOp) and type(expr.op) in _OPS:
        left, right = const_int(expr.left), const_int(expr.right)
        if left is not None and right is not None and not (isinstance(expr.op, ast.Pow) and right > 64):
            try:
                return _OPS[type(expr.op)](left, right)
            except ZeroDivisionError:
                return None
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "max":
        values = [const_int(a) for a in expr.args]
        known = [v for v in values if v is not None]
        return max(known) if known else None
    return None


LAUNCH_CALLS = frozenset({
    "torch.distributed.init_process_group", "argparse.ArgumentParser.parse_args",
})
# decorators and runners that make a def a program's command line
CLI_PREFIXES = ("click.", "typer.", "fire.", "hydra.")


def _reads_launch(facts, nodes) -> bool:
    """Some node reads the program's launch: `os.environ["RANK"]`, `sys.argv`,
    `parser.parse_args()`, `dist.init_process_group(...)`."""
    for node in nodes:
        if isinstance(node, ast.Subscript) and facts.resolve(node.value) == "os.environ":
            return True
        if isinstance(node, ast.Attribute) and facts.resolve(node) == "sys.argv":
            return True
        if isinstance(node, ast.Call):
            if facts.resolve(node.func) in LAUNCH_CALLS:
                return True
            if isinstance(node.func, ast.Attribute) and node.func.attr == "parse_args":
                return True
    return False


def _launches_at_import(facts) -> bool:
    """Module-level code reads the launch: importing the module would run the program,
    so it is a script, not a library."""
    return any(
        _reads_launch(facts, ast.walk(stmt)) for stmt in facts.tree.body
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If))
    )


def _main_guards(facts) -> list:
    return [stmt for stmt in facts.tree.body if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare)
            and isinstance(stmt.test.left, ast.Name) and stmt.test.left.id == "__name__"]


def _main_guard_calls(facts) -> set:
    """Names the module's `if __name__ == "__main__":` blocks call or hand to a runner
    (`main()`, `cli()`, `fire.Fire(main)`, `typer.run(main)`)."""
    called: set = set()
    for stmt in _main_guards(facts):
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                for part in [node.func, *node.args]:
                    if isinstance(part, ast.Name):
                        called.add(part.id)
    return called


def _is_command(facts, func) -> bool:
    """A def made a command line by its decorators (`@click.command()`, `@app.command()`,
    `@hydra.main(...)`)."""
    for deco in func.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if (facts.resolve(target) or "").startswith(CLI_PREFIXES):
            return True
        if isinstance(target, ast.Attribute) and target.attr in ("command", "group", "main"):
            return True
    return False


def _is_script(facts) -> bool:
    """The file is a program the user runs: module-level code reads the launch, or its
    `__main__` guard does (directly, through a def of the file it calls, or by running
    a command-line def: click, typer, fire, hydra). Its settings reach no program but
    its own. A guard that only runs a demo (`print(Net()(x).shape)`) does not make a
    library module a script."""
    if _launches_at_import(facts):
        return True
    guards = _main_guards(facts)
    if not guards:
        return False
    if any(_reads_launch(facts, ast.walk(g)) for g in guards):
        return True
    if any(isinstance(node, ast.Call) and (facts.resolve(node.func) or "").startswith(CLI_PREFIXES)
           for g in guards for node in ast.walk(g)):
        return True  # `fire.Fire(main)`, `typer.run(main)`: a runner reads the command line
    called = _main_guard_calls(facts)
    defs = {stmt.name: stmt for stmt in facts.tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return any(name in defs and (_is_command(facts, defs[name]) or _reads_launch(facts, ast.walk(defs[name])))
               for name in called)


# what in a project's root folder says its code is a distribution others install and
# import (a library), as opposed to an application's own modules
PACKAGING = (("setup.py", b""), ("setup.cfg", b"[metadata]"), ("pyproject.toml", b"[project]"),
             ("pyproject.toml", b"[tool.poetry]"))


def _in_library(facts) -> bool:
    """The file belongs to code others install and import: an installed distribution
    (site-packages, a `*.dist-info`/`*.egg-info` beside its top package) or a project
    whose root declares a package (`setup.py`, `setup.cfg` with `[metadata]`,
    `pyproject.toml` with `[project]` or `[tool.poetry]`). An application's modules
    (no such declaration) are imported by its own programs only. The files' contents
    are asked as probes: a cached result is checked again when one changes."""
    from ..analysis.semantic.names import import_root, marked_root

    path = os.path.abspath(facts.path)
    if any(part in ("site-packages", "dist-packages") for part in path.split(os.sep)):
        return True
    folder, _prefix = import_root(path)
    try:
        if any(name.endswith((".dist-info", ".egg-info")) for name in os.listdir(folder)):
            return True
    except OSError:
        pass
    root = marked_root(folder)
    if root is None:
        return False
    project = facts.project
    return any(project.mentions(os.path.join(root, name), token) for name, token in PACKAGING)


def _in_program_entry(facts, node) -> bool:
    """The line runs in the program's own entry point: a module-level def its
    `__main__` guard calls, or a command of a CLI group it runs (`@cli.command()`,
    `@click.command()`), in a file that has such a guard: a script, not a library."""
    top = None
    for anc in facts.ancestors(node):
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)) and facts.parent(anc) is facts.tree:
            top = anc
    if top is None:
        return False
    called = _main_guard_calls(facts)
    if not called:
        return False
    if top.name in called:
        return True
    for deco in top.decorator_list:
        func = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(func, ast.Attribute) and func.attr in ("command", "group"):
            base = func.value
            if (isinstance(base, ast.Name) and base.id in called) or (facts.resolve(func) or "").startswith(("click.", "typer.")):
                return True
    return False


class RecompileLimitRaised(Rule):
    """
    ## What it does
    Finds assignments that raise Dynamo's recompile limit above its default of 8:
    `torch._dynamo.config.recompile_limit = 64`, the old name `cache_size_limit`,
    the process-wide `accumulated_recompile_limit` / `accumulated_cache_size_limit`
    above their default of 256, `+=`/`*=` on them, and `setattr(torch._dynamo.config, "cache_size_limit", ...)`,
    through any import spelling (`import torch._dynamo.config as dc`,
    `from torch._dynamo import config`). Assignments at module level, which run on
    import, are called out as such.

    ## Why is this bad?
    The limit is what stops a recompile storm: a function that recompiles for every
    new input shape or Python value gets a new graph per call until the limit, then
    runs eagerly with a warning. Raising the limit hides the storm (every call pays a
    compile) instead of fixing its cause, and the setting is process-wide: set on
    import in library code, it silences the warning for every program that imports
    the library. Real case: timm `optim/kron.py` sets `cache_size_limit = 1_000_000`
    on import.

    ## Example
    ```python
    import torch._dynamo
    torch._dynamo.config.cache_size_limit = 1_000_000
    ```

    ## Use instead
    Find what recompiles (`TORCH_LOGS=recompiles`) and remove the cause: mark sizes
    dynamic (`torch._dynamo.mark_dynamic`, `dynamic=True`), pass Python values as
    tensors. If a higher limit is really needed, scope it to the call that needs it:
    ```python
    with torch._dynamo.config.patch(recompile_limit=32):
        run_sweep()
    ```

    ## Fix safety
    No fix: removing the line brings the storm's warnings back (and eager fallbacks),
    which is the point, but the cause still has to be fixed by hand.

    Not reported: a per-frame limit at or below the process-wide total's default
    (`accumulated_recompile_limit`, 256 on torch 2.13, read from `torch._dynamo.config`;
    `max(64, config.cache_size_limit)` counts as 64) set where it reaches no program
    but the one that sets it, since it still stops a storm (Dynamo warns past it):
    - in a script: module-level code reads the launch (`os.environ["RANK"]`,
      `sys.argv`, `parse_args()`, `init_process_group`), or its `if __name__ ==
      "__main__":` guard does, directly, through a def of the file it calls, or by
      running a command-line def (`@click.command()`, typer, fire, hydra); then the
      whole file, module level included, is the program's own. A guard that only runs
      a demo (`print(Net()(x).shape)`) leaves a library module a library;
    - under a `__main__` guard, or in the def it calls;
    - in a module of an application: no package others install is declared where the
      code is imported from (no `*.dist-info`/`*.egg-info` beside its top package, not
      in site-packages, and the project root holds no `setup.py`, no `setup.cfg` with
      `[metadata]`, no `pyproject.toml` with `[project]` or `[tool.poetry]`): its
      modules are imported by its own programs only.
    Measured on bench/dev2 (`python bench/dev2/score.py /work/dev2`): both bounded
    raises found there were judged false (Infinity `tools/comprehensive_infer.py`, 64 at
    module level of an argparse script; joliGEN `models/modules/hdit/hdit.py`,
    `max(64, ...)` in an application's module), as were modded-nanogpt's two scripts
    (bench/judged); every raise judged true or latent is unbounded (timm 1_000_000 in
    an installed library, gpt-fast and torchchat 100000) and is still reported,
    script or not.
    Not reported either: values at or below the default (8; 256 for the accumulated
    limits), including lowering it to catch recompiles in tests; `config.patch(...)`,
    which is scoped; values that are not constants.

    ## References
    - `torch._dynamo.config` is process-wide: a limit raised at import time applies to
      every compiled frame of the program (real case: timm `optim/kron.py` sets
      `cache_size_limit = 1_000_000` on import; see `bench/judged/`)
    - `bench/dev2/verdicts_a.jsonl`, `verdicts_b.jsonl`, `bench/judged/verdicts.jsonl`:
      the judged raises behind the bounded-raise exceptions; `tests/test_cl204_scope.py`
    - https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html (recompilations)
    """

    needs = ()
    code = "CL204"
    name = "recompile-limit-raised"
    summary = "Raising Dynamo's recompile limit hides recompile storms process-wide"
    fix_safety = "none"
    requires = (b"_limit",)

    valid = [
        Case(
            """
            import os
            import torch

            rank = int(os.environ["RANK"])
            torch._dynamo.config.recompile_limit = 64
            """,
            note="a launched script's own bounded limit (modded-nanogpt): no importer, still below the total's 256",
        ),
        Case(
            """
            import click
            import torch

            @click.command()
            @click.option("--steps", default=10)
            def main(steps):
                torch._dynamo.config.cache_size_limit = 64
                run(steps)

            if __name__ == "__main__":
                main()
            """,
            note="a click CLI script's own entry point (a public app run as __main__): no importer, below 256",
        ),
        Case(
            """
            import argparse
            import torch
            torch._dynamo.config.cache_size_limit = 64

            from run_infer import load_model

            def infer(args):
                return load_model(args.ckpt)

            if __name__ == '__main__':
                parser = argparse.ArgumentParser()
                parser.add_argument("--ckpt")
                infer(parser.parse_args())
            """,
            files={"setup.py": "from setuptools import setup\nsetup(name='gen')\n", "tools/run_infer.py": ""},
            path="tools/infer.py",
            note="module level of an argparse script, launched under its `__main__` guard at the bottom "
                 "(Infinity tools/comprehensive_infer.py): a bounded raise for its own process",
        ),
        Case(
            """
            import click
            import torch
            torch._dynamo.config.cache_size_limit = 64

            @click.command()
            @click.argument("path")
            def main(path):
                run(path)

            if __name__ == "__main__":
                main()
            """,
            files={"pyproject.toml": "[project]\nname = 'gen'\n"},
            path="scripts/sample.py",
            note="module level of a click script of a packaged project",
        ),
        Case(
            """
            import torch
            from .. import flags

            if flags.use_compile():
                torch._dynamo.config.cache_size_limit = max(64, torch._dynamo.config.cache_size_limit)
            """,
            files={"pyproject.toml": "[tool.ruff]\nline-length = 120\n", "models/__init__.py": "",
                   "models/flags.py": "def use_compile():\n    return True\n", "models/hdit/__init__.py": "", "train.py": ""},
            path="models/hdit/hdit.py",
            note="an application's own module (joliGEN models/modules/hdit/hdit.py; no package declared: "
                 "the pyproject.toml configures a tool): only its own programs import it, and 64 still binds",
        ),
        Case("import torch._dynamo\ntorch._dynamo.config.recompile_limit = 8\n", note="the default"),
        Case("import torch._dynamo.config as dc\ndc.recompile_limit = 1\n", note="lowered, to catch recompiles"),
        Case(
            "import torch._dynamo\n@torch._dynamo.config.patch(recompile_limit=64)\ndef test_sweep():\n    pass\n",
            note="scoped by patch",
        ),
        Case("import myproj.config as config\nconfig.cache_size_limit = 1024\n", note="not torch's config"),
        Case("import torch._dynamo\ntorch._dynamo.config.recompile_limit = args.limit\n", note="not a constant"),
    ]
    invalid = [
        Case(
            "import torch\nimport torch._dynamo\ntorch._dynamo.config.cache_size_limit = 1_000_000\n",
            at=[(3, 1)],
            note="timm optim/kron.py, on import",
        ),
        Case(
            """
            import sys
            import torch

            if __name__ == "__main__":
                torch._dynamo.config.cache_size_limit = 100000
                print(sys.argv)
            """,
            at=[(6, 5)],
            note="a script's limit above the process-wide total's default: no storm is ever stopped (gpt-fast eval.py)",
        ),
        Case(
            "from torch._dynamo import config\ndef setup():\n    config.recompile_limit = 2 ** 10\n",
            at=[(3, 5)],
        ),
        Case(
            "import torch._dynamo.config as dc\ndc.cache_size_limit += 56\n"
            "setattr(dc, 'recompile_limit', max(dc.recompile_limit, 64))\n",
            files={"setup.py": "", "lib/__init__.py": ""},
            path="lib/tuning.py",
            at=[(2, 1), (3, 1)],
            note="in a library (setup.py): even a bounded raise reaches every importer",
        ),
        Case(
            """
            import torch
            from torch import nn

            torch._dynamo.config.cache_size_limit = max(64, torch._dynamo.config.cache_size_limit)

            class Net(nn.Module):
                def forward(self, x):
                    return x.relu()

            if __name__ == "__main__":
                print(Net()(torch.randn(2, 3)).shape)
            """,
            files={"vision-1.0.dist-info/METADATA": "Name: vision\n", "vision/__init__.py": ""},
            path="vision/net.py",
            at=[(5, 1)],
            note="an installed distribution's module, on import; its `__main__` guard only runs a demo, "
                 "so importers get the raise",
        ),
        Case(
            "import torch\ntorch._dynamo.config.accumulated_recompile_limit = 4096\n",
            at=[(2, 1)],
            note="the process-wide total",
        ),
    ]

    def check(self, facts):
        for node in facts.nodes(ast.Assign, ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                key = KEYS.get(facts.resolve(target) or "")
                if key is None:
                    continue
                value = const_int(node.value)
                if value is None:
                    continue
                if isinstance(node, ast.AugAssign):
                    if isinstance(node.op, ast.Add) and value > 0:
                        shown = f"+= {value}"
                    elif isinstance(node.op, ast.Mult) and value > 1:
                        shown = f"*= {value}"
                    else:
                        continue
                elif value > DEFAULTS[key]:
                    shown = f"= {value:_}" if value >= 10_000 else f"= {value}"
                    if self._bounded_in_program(facts, node, key, value):
                        continue
                else:
                    continue
                yield self._finding(facts, node, facts.text(target), key, shown)
        for call in facts.calls_to("builtins.setattr"):
            if len(call.args) == 3 and isinstance(call.args[1], ast.Constant):
                base = facts.resolve(call.args[0])
                key = KEYS.get(f"{base}.{call.args[1].value}") if base else None
                value = const_int(call.args[2])
                if key and value is not None and value > DEFAULTS[key] and not self._bounded_in_program(facts, call, key, value):
                    yield self._finding(facts, call, f"{facts.text(call.args[0])}.{key}", key, f"= {value}")

    def _finding(self, facts, node, target, key, shown):
        stmt = facts.statement_of(node)
        module_level = (facts.enclosing_function(node) is None and not self._in_main_guard(facts, stmt)
                        and not _is_script(facts))
        when = "for every importer" if module_level else "process-wide"
        what = "total recompile limit" if key.startswith("accumulated") else "recompile limit"
        return self.finding(
            facts, node,
            f"Dynamo's {what} raised (`{shown}`, default {DEFAULTS[key]}) {when}: recompile storms go unseen",
        )

    def _bounded_in_program(self, facts, node, key, value) -> bool:
        """A program's own per-frame limit that still binds: a value at or below the
        process-wide total's default (256) still stops a storm (Dynamo warns past it),
        and set by a program for itself it reaches no other program: in a script (its
        import or its `__main__` guard runs the program), under a `__main__` guard, in
        the def that guard runs, or in a module of an application (no package others
        install: `_in_library`)."""
        if key.startswith("accumulated") or value > DEFAULTS["accumulated_recompile_limit"]:
            return False
        return (self._in_main_guard(facts, facts.statement_of(node)) or _in_program_entry(facts, node)
                or _is_script(facts) or not _in_library(facts))

    @staticmethod
    def _in_main_guard(facts, stmt) -> bool:
        for anc in facts.ancestors(stmt):
            if isinstance(anc, ast.If) and isinstance(anc.test, ast.Compare):
                left = anc.test.left
                if isinstance(left, ast.Name) and left.id == "__name__":
                    return True
        return False
