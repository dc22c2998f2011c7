from __future__ import annotations

import ast
from typing import Optional

from ..analysis.semantic.signatures import parameter_names
from ..analysis.semantic.walk import walk as _walk
from ..analysis.semantic.walk import walk_scope as _walk_scope
from ..analysis.torch_api import COMPILE_FUNCS
from .base import Case, Rule

COMPILE = COMPILE_FUNCS
COMPILE_LAST = frozenset(dotted.rpartition(".")[2] for dotted in COMPILE)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _stored(nodes) -> set[str]:
    out: set[str] = set()
    for node in nodes:
        for sub in _walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                out.add(sub.id)
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(sub.name)
    return out


def loop_scope(facts, node: ast.AST) -> tuple[Optional[ast.AST], set[str]]:
    """The innermost loop or comprehension that runs `node` once per iteration
    (within its function), and the names that change per iteration there: loop
    targets and names the loop body assigns."""
    child = node
    loop, names = None, set()
    for anc in facts.ancestors(node):
        if isinstance(anc, FUNCTION_NODES) or isinstance(anc, ast.ClassDef):
            break
        if isinstance(anc, (ast.For, ast.AsyncFor)) and child in anc.body:
            loop = loop or anc
            names |= _stored([anc.target]) | _stored(anc.body)
        elif isinstance(anc, ast.While) and child in anc.body:
            loop = loop or anc
            names |= _stored(anc.body)
        elif isinstance(anc, COMPREHENSIONS) and not any(child is g.iter for g in anc.generators[:1]):
            loop = loop or anc
            names |= _stored([g.target for g in anc.generators])
        child = anc
    return loop, names


def _free_loads(func: ast.AST) -> set[str]:
    """Names a lambda/def reads from outside: in its body and its defaults."""
    if isinstance(func, ast.Lambda):
        body = [func.body]
    else:
        body = func.body
    args = func.args
    params = parameter_names(args)
    if args.vararg:
        params.add(args.vararg.arg)
    if args.kwarg:
        params.add(args.kwarg.arg)
    local = _stored(body) if not isinstance(func, ast.Lambda) else set()
    loads = {n.id for b in body for n in _walk(b) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    default_loads = {
        n.id
        for d in list(args.defaults) + [d for d in args.kw_defaults if d is not None]
        for n in _walk(d)
        if isinstance(n, ast.Name)
    }
    return (loads - params - local) | default_loads


class CompileInLoop(Rule):
    """
    ## What it does
    Finds `torch.compile(...)` (through aliases and `functools.partial`) called in a
    loop or comprehension on a function that is made anew in each iteration and
    captures something that changes per iteration:
    - a lambda or nested `def` that reads the loop variable (or a name the loop body
      assigns), in its body or its defaults:
      `torch.compile(lambda x: F.interpolate(x, scale_factor=s))`;
    - `functools.partial(fn, s)` with a per-iteration value;
    - a `def` decorated with `@torch.compile` inside the loop that reads such a name.

    ## Why is this bad?
    Dynamo caches compiled code per code object and guards on the values a function
    closes over. A closure over the loop variable fails the guards each iteration
    and compiles a new graph: 6 iterations gave 6 graphs and 7.9 s, while compiling
    once outside the loop with the value passed as an argument gave 2 graphs and
    1.3 s (ints become dynamic after one recompile). Past 8 values the frame hits
    the recompile limit and runs eagerly.

    ## Example
    ```python
    outputs = []
    for s in (1.25, 1.5, 2.0, 3.0):
        up = torch.compile(lambda x: F.interpolate(x, scale_factor=s, mode="bilinear"))
        outputs.append(up(image))
    ```

    ## Use instead
    ```python
    @torch.compile
    def up(x, s):
        return F.interpolate(x, scale_factor=s, mode="bilinear")

    outputs = [up(image, s) for s in (1.25, 1.5, 2.0, 3.0)]
    ```

    ## Fix safety
    No fix: hoisting changes the function's signature and its callers.

    Not reported: compiling each of N distinct modules once in a setup loop
    (`for name, m in model.named_children(): setattr(model, name, torch.compile(m))`,
    `[torch.compile(m) for m in heads]`), compiling a function defined outside the
    loop, and closures that capture nothing that changes per iteration.

    ## References
    - measured on torch 2.13 CPU: 6 iterations compile 6 graphs (7.9 s); hoisted with the
      value as an argument, 2 graphs (1.3 s). `fixtures/rules/CL203/` holds both shapes
    - https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html (recompilations)
    """

    needs = ()
    code = "CL203"
    name = "compile-in-loop"
    summary = "torch.compile of a closure over the loop variable recompiles every iteration"
    fix_safety = "none"
    requires = (b"compile",)

    valid = [
        Case(
            """\
            import torch
            from torch import nn
            model = nn.Sequential(nn.Conv2d(3, 3, 1), nn.ReLU())
            for name, child in model.named_children():
                setattr(model, name, torch.compile(child))
            heads = [nn.Conv2d(3, 1, 1) for _ in range(3)]
            compiled_heads = [torch.compile(h) for h in heads]
            """,
            note="N distinct modules compiled once each in a setup loop",
        ),
        Case(
            """\
            import torch
            import torch.nn.functional as F
            @torch.compile
            def up(x, s):
                return F.interpolate(x, scale_factor=s, mode="bilinear")
            outs = [up(torch.rand(1, 3, 8, 8), s) for s in (1.5, 2.0, 3.0)]
            """,
            note="hoisted, the value passed as an argument",
        ),
        Case(
            """\
            import torch
            def blur(x):
                return x.mean()
            for step in range(3):
                f = torch.compile(lambda x: blur(x) * 2)
            """,
            note="a lambda that captures nothing that changes per iteration",
        ),
        Case(
            """\
            import re
            for pattern in ("a+", "b+"):
                rx = re.compile(pattern)
            """,
            note="not torch's compile",
        ),
    ]
    invalid = [
        Case(
            """\
            import torch
            import torch.nn.functional as F
            outputs = []
            image = torch.rand(1, 3, 32, 32)
            for s in (1.25, 1.5, 2.0, 3.0):
                up = torch.compile(lambda x: F.interpolate(x, scale_factor=s, mode="bilinear"))
                outputs.append(up(image))
            """,
            at=[(6, 10)],
        ),
        Case(
            """\
            import functools
            from torch import compile as tc
            def grade(x, gamma):
                return x.clamp(0, 1) ** (1 / gamma)
            graders = [tc(functools.partial(grade, gamma=g)) for g in (1.8, 2.2, 2.4)]
            """,
            at=[(5, 12)],
            note="partial over the comprehension variable, compile imported under another name",
        ),
        Case(
            """\
            import functools
            import torch
            fast = functools.partial(torch.compile, mode="max-autotune")
            def render(frames, strengths):
                out = []
                for frame, strength in zip(frames, strengths):
                    def stylize(x):
                        return x * strength + (1 - strength) * x.mean()
                    out.append(fast(stylize)(frame))
                return out
            """,
            at=[(9, 20)],
            note="a nested def capturing the loop variable, through a partial of torch.compile",
        ),
        Case(
            """\
            import torch
            def sweep(x, thresholds):
                results = []
                for t in thresholds:
                    @torch.compile
                    def key(img):
                        return torch.where(img > t, img, 0.0)
                    results.append(key(x))
                return results
            """,
            at=[(5, 10)],
            note="@torch.compile on a def inside the loop",
        ),
    ]

    def check(self, facts):
        for call in facts.nodes(ast.Call):
            if not call.args or (isinstance(call.func, ast.Attribute) and call.func.attr not in COMPILE_LAST):
                continue  # cheap: `<x>.<attr>(...)` resolves to "<x>.<attr>"
            if facts.resolve(call.func) not in COMPILE:
                continue
            loop, names = loop_scope(facts, call)
            if loop is None or not names:
                continue
            captured = self._captured(facts, call.args[0], names, loop)
            if captured:
                yield self._finding(facts, call, loop, captured, facts.text(call.func))
        for func in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            decos = [d for d in func.decorator_list if facts.resolve(d.func if isinstance(d, ast.Call) else d) in COMPILE]
            if not decos:
                continue
            loop, names = loop_scope(facts, func)
            if loop is None:
                continue
            captured = sorted(_free_loads(func) & (names - {func.name}))
            if captured:
                yield self._finding(facts, decos[0], loop, captured, "@" + facts.text(decos[0]))

    def _captured(self, facts, arg, names: set[str], loop) -> list[str]:
        """Per-iteration names the compiled callable captures."""
        if isinstance(arg, ast.Lambda):
            return sorted(_free_loads(arg) & names)
        if isinstance(arg, ast.Call) and facts.resolve(arg.func) == "functools.partial":
            bound = list(arg.args[1:]) + [k.value for k in arg.keywords]
            return sorted({n.id for b in bound for n in _walk(b) if isinstance(n, ast.Name)} & names)
        if isinstance(arg, ast.Name) and arg.id in names:
            # a def or lambda made in the loop body
            made = self._made_in_loop(loop, arg.id)
            if made is not None:
                return self._captured(facts, made, names - {arg.id}, loop) if not isinstance(
                    made, (ast.FunctionDef, ast.AsyncFunctionDef)
                ) else sorted(_free_loads(made) & (names - {arg.id}))
        return []

    @staticmethod
    def _made_in_loop(loop, name: str):
        body = loop.body if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) else []
        for node in _walk_scope(body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return node
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                if isinstance(node.value, (ast.Lambda, ast.Call)):
                    return node.value
        return None

    def _finding(self, facts, node, loop, captured, spelled):
        if isinstance(loop, (ast.For, ast.AsyncFor)):
            where = f"a `for {facts.text(loop.target)}` loop"
        elif isinstance(loop, ast.While):
            where = "a `while` loop"
        else:
            where = "a comprehension"
        names = ", ".join(f"`{n}`" for n in captured)
        return self.finding(
            facts, node,
            f"`{spelled}` in {where} compiles a new function capturing {names} each time: it recompiles every iteration",
        )
