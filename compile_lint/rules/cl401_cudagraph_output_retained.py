from __future__ import annotations

import ast
from dataclasses import dataclass, field
from textwrap import dedent
from typing import Optional

from ..analysis.compiled_values import CompileCall, chain_text, compiled_values
from ..analysis.region_queries import stmt_text
from ..analysis.compiled_values import CompiledValuesFact
from .base import Case, Rule

# Methods whose result shares memory with the receiver (or may be the receiver itself).
ALIAS_METHODS = frozenset(
    {
        "view", "view_as", "reshape", "reshape_as", "permute", "transpose", "t", "T", "mT", "squeeze",
        "unsqueeze", "flatten", "unflatten", "expand", "expand_as", "narrow", "select", "detach",
        "contiguous", "to", "float", "half", "bfloat16", "type_as", "chunk", "split", "unbind",
        "movedim", "swapaxes", "as_strided", "diagonal", "real", "imag", "values", "get", "__getitem__",
        "cuda", "requires_grad_", "detach_", "squeeze_", "unsqueeze_",
    }
)
COPY_TO_HOST = ("cpu", "numpy", "tolist", "item")
STORE_METHODS = frozenset({"append", "extend", "insert", "add", "appendleft", "put", "put_nowait", "setdefault", "update"})
NON_OUTPUT_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout"})


@dataclass
class Out:
    """A value that is (a view of) the output of a CUDA-graph call."""

    origin: ast.AST  # the call that produced it
    cc: CompileCall
    calls_since: int = 0
    bound_at: Optional[ast.AST] = None  # the expression to `.clone()` where it is kept
    tuple_like: bool = False


@dataclass
class State:
    live: dict[str, Out] = field(default_factory=dict)
    calls: int = 0
    temps: list = field(default_factory=list)  # outputs not bound to a name yet (this statement)

    def copy(self) -> "State":
        return State({k: Out(v.origin, v.cc, v.calls_since, v.bound_at, v.tuple_like) for k, v in self.live.items()}, self.calls, list(self.temps))

    def new(self, out: "Out") -> "Out":
        self.temps.append(out)
        return out

    def merge(self, other: "State") -> "State":
        live = dict(other.live)
        for name, out in self.live.items():
            if name not in live or out.calls_since > live[name].calls_since:
                live[name] = out
        return State(live, max(self.calls, other.calls))


class CudagraphOutputRetained(Rule):
    """
    ## What it does
    Finds outputs of a CUDA-graph compiled callable (`torch.compile` with
    `mode="reduce-overhead"`, `mode="max-autotune"` or
    `options={"triton.cudagraphs": True}`, also through `model.compile(...)`, a
    decorator, a project wrapper or an import) that are kept past the next call of
    such a callable without a copy:

    - appended or stored into a container (`outs.append(model(x))`,
      `cache[k] = y`, `outs += [y]`) in a loop, in a non-local container, or with a
      later call;
    - stored on `self`, on another object or in a global (`self.last = model(x)`);
    - read after another call (`a = model(x1); b = model(x2); a + b`, a value carried
      to the next loop iteration, `torch.cat([model(a), model(b)])`,
      `[model(x) for x in batch]`).

    Views (`out[0]`, `.sample`, `.view(...)`, `.detach()`, `.to(...)`) count as the
    output; `.clone()`, `.cpu()`, `.item()`, `.numpy()` and any arithmetic make a new
    tensor and end the hazard. A function of the file that returns such an output is
    treated like the compiled callable itself.

    ## Why is this bad?
    CUDA graphs replay into static memory: the next run writes its outputs where
    the previous ones were. PyTorch detects reads of an overwritten output and raises
    `RuntimeError: Error: accessing tensor output of CUDAGraphs that has been
    overwritten by a subsequent run` (`torch/_inductor/cudagraph_trees.py`). On CPU
    no CUDA graphs are used, so tests pass and the error appears on the GPU.

    ## Example
    ```python
    model = torch.compile(model, mode="reduce-overhead")
    outs = []
    for frame in frames:
        outs.append(model(frame))
    ```

    ## Use instead
    ```python
    outs = []
    for frame in frames:
        outs.append(model(frame).clone())
    ```

    ## Fix safety
    Safe: `.clone()` where the output is kept gives the same values (the ones the
    author expected to keep) and changes no signature. Not offered when the kept value
    may be a tuple, list or dict (an unpacked or tuple-returning call).

    ## References
    - `torch/_inductor/cudagraph_trees.py`: "accessing tensor output of CUDAGraphs that has
      been overwritten by a subsequent run" (CUDA only; `fixtures/verify/cuda_preview_history.py`
      is the GPU check, reported "not checkable" on CPU)
    - pytorch#144386, pytorch#170604, pytorch#104435
    - PyTorch docs, "CUDAGraph Trees" (outputs are overwritten by the next run)
    """

    code = "CL401"
    name = "cudagraph-output-retained"
    summary = "Output of a CUDA-graph compiled call kept past the next call is overwritten"
    fix_safety = "safe"
    codemod = "codemods.clone_cudagraph_output:CloneCudagraphOutput"
    requires = ()  # a compiled callable may be imported from another file
    needs = (CompiledValuesFact,)  # call sites of compiled callables; no region index needed

    valid = [
        Case(
            """
            import torch
            step = torch.compile(model, mode="reduce-overhead")
            x = noise
            for t in timesteps:
                x = step(x, t)
            a = step(x, 0)
            loss = crit(a, target)
            b = step(noise, 1)
            """,
            note="an output fed to the next call, then replaced; `a` consumed before the next call",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="reduce-overhead")
            outs = []
            for frame in frames:
                outs.append(model(frame).clone())
            """,
            note="cloned before keeping",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="max-autotune-no-cudagraphs")
            outs = [model(f) for f in frames]
            """,
            note="no CUDA graphs",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="reduce-overhead")
            for frame in frames:
                out = model(frame)
                save_image(out, "x.png")
                losses.append(out.mean().item())
            """,
            note="used before the next call; a Python number kept",
        ),
        Case(
            """
            import torch
            model = torch.compile(model)
            outs = [model(f) for f in frames]
            """,
            note="default mode: no CUDA graphs",
        ),
        Case(
            """
            import torch

            class Runner:
                def __init__(self, net):
                    self.net = torch.compile(net, mode="reduce-overhead")

                def step(self, x):
                    y = self.net(x)
                    self.preview = y.detach().cpu()
                    self.score = (y * 2).sum()
                    return y
            """,
            note="copies kept, the output returned",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="reduce-overhead")
            prev = None
            for frame in frames:
                out = model(frame)
                if prev is not None:
                    flow(prev, out)
                prev = out.clone()
            """,
            note="carried to the next iteration as a clone",
        ),
    ]
    invalid = [
        Case(
            """
            import torch

            class Predictor:
                def __init__(self, model):
                    self.model = model
                    self.model.image_encoder = torch.compile(self.model.image_encoder, mode="reduce-overhead")

                def set_image(self, img):
                    self.features = self.model.image_encoder(img)

                def predict(self, points):
                    return self.model.decoder(self.features, points)
            """,
            fixed="""
            import torch

            class Predictor:
                def __init__(self, model):
                    self.model = model
                    self.model.image_encoder = torch.compile(self.model.image_encoder, mode="reduce-overhead")

                def set_image(self, img):
                    self.features = self.model.image_encoder(img).clone()

                def predict(self, points):
                    return self.model.decoder(self.features, points)
            """,
            at=[(10, 25)], note="kept across methods of a predictor: the next set_image overwrites the features predict reads",
        ),
        Case(
            """
            import torch

            def train_step(model, x, y):
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                return loss

            step = torch.compile(train_step, mode="reduce-overhead")
            losses = [step(net, x, y) for x, y in loader]
            print(torch.stack(losses).mean())
            """,
            at=[(10, 11)],
            fixed="""
            import torch

            def train_step(model, x, y):
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                return loss

            step = torch.compile(train_step, mode="reduce-overhead")
            losses = [step(net, x, y).clone() for x, y in loader]
            print(torch.stack(losses).mean())
            """,
            note="losses of a compiled train step collected for logging",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="reduce-overhead")
            outs = []
            for frame in frames:
                outs.append(model(frame))
            """,
            at=[(6, 17)],
            fixed="""
            import torch
            model = torch.compile(model, mode="reduce-overhead")
            outs = []
            for frame in frames:
                outs.append(model(frame).clone())
            """,
        ),
        Case(
            """
            import torch

            class Runner:
                def __init__(self, net):
                    self.net = torch.compile(net, options={"triton.cudagraphs": True})

                def step(self, x):
                    y = self.net(x)
                    self.last = y
                    return y
            """,
            at=[(10, 21)],
            fixed="""
            import torch

            class Runner:
                def __init__(self, net):
                    self.net = torch.compile(net, options={"triton.cudagraphs": True})

                def step(self, x):
                    y = self.net(x)
                    self.last = y.clone()
                    return y
            """,
        ),
        Case(
            """
            import torch

            @torch.compile(mode="max-autotune")
            def upscale(x):
                return x.repeat_interleave(2, -1)

            a = upscale(left)
            b = upscale(right)
            stereo = torch.cat([a, b], -1)
            """,
            at=[(8, 5)],
            fixed="""
            import torch

            @torch.compile(mode="max-autotune")
            def upscale(x):
                return x.repeat_interleave(2, -1)

            a = upscale(left).clone()
            b = upscale(right)
            stereo = torch.cat([a, b], -1)
            """,
            note="read after another call",
        ),
        Case(
            """
            import torch
            fast = torch.compile(model, mode="reduce-overhead")
            prev = None
            for frame in frames:
                out = fast(frame).sample
                if prev is not None:
                    flow(prev, out)
                prev = out
            """,
            at=[(9, 12)],
            fixed="""
            import torch
            fast = torch.compile(model, mode="reduce-overhead")
            prev = None
            for frame in frames:
                out = fast(frame).sample
                if prev is not None:
                    flow(prev, out)
                prev = out.clone()
            """,
            note="carried to the next loop iteration",
        ),
        Case(
            """
            import torch
            unet = torch.compile(unet, mode="reduce-overhead")
            both = torch.cat([unet(cond), unet(uncond)])
            frames = torch.stack([unet(z) for z in latents])
            """,
            at=[(4, 19), (5, 23)],
            fixed="""
            import torch
            unet = torch.compile(unet, mode="reduce-overhead")
            both = torch.cat([unet(cond).clone(), unet(uncond)])
            frames = torch.stack([unet(z).clone() for z in latents])
            """,
            note="two calls in one expression; a comprehension",
        ),
        Case(
            """
            import torch

            def run(model, x):
                with torch.no_grad():
                    return model(x)

            net = torch.compile(net, mode="reduce-overhead")
            history = {}
            for i, x in enumerate(xs):
                history[i] = run(net, x)
            """,
            note="through a wrapper that returns the output; no fix needed? (fix applies)",
            fixed="""
            import torch

            def run(model, x):
                with torch.no_grad():
                    return model(x)

            net = torch.compile(net, mode="reduce-overhead")
            history = {}
            for i, x in enumerate(xs):
                history[i] = run(net, x).clone()
            """,
            at=[(11, 18)],
        ),
        Case(
            files={
                "engine.py": dedent("""
                    import torch
                    from blocks import Decoder

                    decoder = torch.compile(Decoder(), mode="reduce-overhead")
                """),
            },
            path="serve.py",
            code="""
            from engine import decoder

            cache = []

            def handle(z):
                img = decoder(z)
                cache.append(img)
                return img
            """,
            at=[(8, 18)],
            fixed="""
            from engine import decoder

            cache = []

            def handle(z):
                img = decoder(z)
                cache.append(img.clone())
                return img
            """,
            note="cross-file: compiled in engine.py, a global list in serve.py",
        ),
    ]

    # -- analysis ------------------------------------------------------------------
    def check(self, facts):
        values = compiled_values(facts)
        if not values.may_call_compiled(cudagraphs=True):
            return
        self.facts = facts
        self.values = values
        self.wrappers: dict[str, CompileCall] = {}
        self._find_wrappers(facts)
        self.reported: set[int] = set()
        self.found = []
        self._globals_cache = {}
        scopes = [facts.tree] + list(facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef))
        for scope in scopes:
            self.scope = scope
            self.retained: list[tuple[Out, ast.AST, str, bool, int]] = []
            try:
                state = self._block(scope.body, State(), loop=False)
            except RecursionError:  # pathologically deep code: skip this scope
                continue
            for out, node, how, always, calls_at in self.retained:
                if always or state.calls > calls_at:
                    self._report(out, node, how)
        yield from self.found

    def _callee(self, call: ast.Call) -> Optional[CompileCall]:
        cc = self.values.callee(call.func, call) if chain_text(call.func) is not None or isinstance(call.func, ast.Call) else None
        if cc is not None and cc.cudagraphs:
            return cc
        if isinstance(call.func, ast.Name) and call.func.id in self.wrappers:
            return self.wrappers[call.func.id]
        return None

    def _find_wrappers(self, facts) -> None:
        """Module-level defs that return (a view of) a CUDA-graph output."""
        defs = [n for n in facts.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for _ in range(3):
            changed = False
            for func in defs:
                if func.name in self.wrappers:
                    continue
                params = [a.arg for a in func.args.posonlyargs + func.args.args]
                for node in ast.walk(func):
                    if isinstance(node, ast.Return) and node.value is not None:
                        expr = node.value
                        while isinstance(expr, (ast.Subscript, ast.Attribute)) or (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in ALIAS_METHODS):
                            expr = expr.value if not isinstance(expr, ast.Call) else expr.func.value
                        if isinstance(expr, ast.Call):
                            cc = self._callee(expr)
                            if cc is None and isinstance(expr.func, ast.Name) and expr.func.id in params:
                                cc = self._param_callee(facts, func, params.index(expr.func.id))
                            if cc is not None:
                                self.wrappers[func.name] = cc
                                changed = True
                                break
            if not changed:
                break

    def _param_callee(self, facts, func, index) -> Optional[CompileCall]:
        """`def run(model, x): return model(x)` called with a CUDA-graph callable."""
        for call in facts.nodes(ast.Call):
            if isinstance(call.func, ast.Name) and call.func.id == func.name and len(call.args) > index:
                arg = call.args[index]
                cc = self.values.callee(arg, call) if chain_text(arg) is not None else None
                if cc is not None and cc.cudagraphs:
                    return cc
        return None

    # statements ------------------------------------------------------------------------
    def _block(self, body, state: State, loop: bool) -> State:
        for stmt in body:
            state = self._stmt(stmt, state, loop)
        return state

    def _stmt(self, stmt, state: State, loop: bool) -> State:
        state.temps = []
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return state
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            head = stmt.iter if isinstance(stmt, (ast.For, ast.AsyncFor)) else stmt.test
            self._use(self._expr(head, state, loop), state)
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                self._unbind(stmt.target, state)
            start = state.copy()
            once = self._block(stmt.body, state, True)
            twice = self._block(stmt.body, once.copy(), True)
            state = start.merge(twice)
            return self._block(stmt.orelse, state, loop)
        if isinstance(stmt, ast.If):
            self._use(self._expr(stmt.test, state, loop), state)
            a = self._block(stmt.body, state.copy(), loop)
            b = self._block(stmt.orelse, state.copy(), loop)
            return a.merge(b)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self._use(self._expr(item.context_expr, state, loop), state)
            return self._block(stmt.body, state, loop)
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            state = self._block(stmt.body, state, loop)
            for handler in stmt.handlers:
                state = state.merge(self._block(handler.body, state.copy(), loop))
            state = self._block(stmt.orelse, state, loop)
            return self._block(stmt.finalbody, state, loop)
        if isinstance(stmt, ast.Assign):
            value = self._expr(stmt.value, state, loop)
            for target in stmt.targets:
                self._assign(target, value, stmt.value, state, loop)
            return state
        if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
            value = self._expr(stmt.value, state, loop)
            if isinstance(stmt, ast.AugAssign):
                if isinstance(stmt.target, ast.Name) and isinstance(stmt.op, ast.Add) and isinstance(stmt.value, (ast.List, ast.Tuple)):
                    for elt, out in zip(stmt.value.elts, value if isinstance(value, list) else []):
                        if isinstance(out, Out):
                            self._retain(out, elt, f"added to `{stmt.target.id}`", state, loop, self._nonlocal(stmt.target))
                    return state
                self._use(value, state)
                self._use(self._expr(stmt.target, state, loop), state)
                return state
            self._assign(stmt.target, value, stmt.value, state, loop)
            return state
        if isinstance(stmt, ast.Return):
            if stmt.value is not None:
                value = self._expr(stmt.value, state, loop)
                self._check_stale(value, state)
            return state
        if isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    state.live.pop(target.id, None)
            return state
        if isinstance(stmt, ast.Global):
            return state
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.expr):
                self._use(self._expr(child, state, loop), state)
        return state

    def _globals(self) -> set:
        cache = self.__dict__.setdefault("_globals_cache", {})
        key = id(self.scope)
        if key not in cache:
            cache[key] = {name for n in ast.walk(self.scope) if isinstance(n, ast.Global) for name in n.names}
        return cache[key]

    def _nonlocal(self, target) -> bool:
        """A container that outlives this call: an attribute, a global, a parameter."""
        if isinstance(target, ast.Attribute):
            return True
        if isinstance(target, ast.Subscript):
            return self._nonlocal(target.value)
        if isinstance(target, ast.Name):
            if self.scope is self.facts.tree:
                return True
            if target.id in self._globals():
                return True
            args = self.scope.args
            if target.id in {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}:
                return True
            assigned = any(
                isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With, ast.NamedExpr))
                and any(isinstance(t, ast.Name) and t.id == target.id for t in ast.walk(n) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store))
                for n in ast.walk(self.scope)
            )
            return not assigned
        return False

    def _assign(self, target, value, value_node, state: State, loop: bool) -> None:
        if isinstance(target, ast.Name):
            is_global = self.scope is not self.facts.tree and target.id in self._globals()
            if isinstance(value, Out):
                out = Out(value.origin, value.cc, value.calls_since, value_node, value.tuple_like)
                state.live[target.id] = out
                if is_global:
                    self._retain(out, value_node, f"stored in the global `{target.id}`", state, loop, True)
            elif isinstance(value, list) and any(isinstance(v, Out) for v in value):
                outs = [v for v in value if isinstance(v, Out)]
                state.live[target.id] = Out(outs[0].origin, outs[0].cc, max(o.calls_since for o in outs), None, True)
            else:
                state.live.pop(target.id, None)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            if isinstance(value, list) and isinstance(value_node, (ast.Tuple, ast.List)) and len(value) == len(elts):
                for elt, v, node in zip(elts, value, value_node.elts):
                    self._assign(elt, v, node, state, loop)
            else:
                for elt in elts:
                    if isinstance(elt, ast.Name):
                        if isinstance(value, Out):
                            state.live[elt.id] = Out(value.origin, value.cc, value.calls_since, None, True)
                        else:
                            state.live.pop(elt.id, None)
            return
        if isinstance(target, ast.Starred):
            return self._assign(target.value, value, value_node, state, loop)
        # attribute or subscript store
        self._use(self._expr(target.value, state, loop), state)
        if isinstance(target, ast.Subscript):
            self._use(self._expr(target.slice, state, loop), state)
        if isinstance(value, Out):
            if isinstance(target, ast.Attribute):
                how = f"stored on `{stmt_text(self.facts, target, 40)}`"
                always = True
            else:
                how = f"stored into `{stmt_text(self.facts, target.value, 40)}`"
                always = self._nonlocal(target)
            self._retain(value, value_node, how, state, loop, always)

    def _unbind(self, target, state: State) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                state.live.pop(node.id, None)

    def _retain(self, out: Out, node, how: str, state: State, loop: bool, always: bool) -> None:
        self.retained.append((out, node, how, always or loop, state.calls))

    # expressions: evaluate in Python's order -----------------------------------------
    def _expr(self, node, state: State, loop: bool):
        """Evaluate `node`: returns an Out (an output or a view of one), a list of
        values (a tuple/list display), or None (anything else)."""
        if node is None:
            return None
        if isinstance(node, ast.Name):
            out = state.live.get(node.id)
            return out
        if isinstance(node, (ast.Tuple, ast.List)):
            return [self._expr(e, state, loop) for e in node.elts]
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            return self._comprehension(node, state, loop)
        if isinstance(node, ast.Subscript):
            base = self._expr(node.value, state, loop)
            self._use(self._expr(node.slice, state, loop), state)
            if isinstance(base, Out):
                return state.new(Out(base.origin, base.cc, base.calls_since, None, False))
            return None
        if isinstance(node, ast.Attribute):
            base = self._expr(node.value, state, loop)
            if isinstance(base, Out) and node.attr not in NON_OUTPUT_ATTRS:
                return state.new(Out(base.origin, base.cc, base.calls_since, None, False))
            self._use(base, state)
            return None
        if isinstance(node, ast.Call):
            return self._call(node, state, loop)
        if isinstance(node, (ast.Lambda,)):
            return None
        if isinstance(node, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            for child in [node.left] + node.comparators:
                self._expr(child, state, loop)  # `x is None` does not touch the data
            return None
        values = [self._expr(child, state, loop) for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr)]
        for value in values:
            self._use(value, state)
        return None

    def _comprehension(self, node, state: State, loop: bool):
        for gen in node.generators:
            self._use(self._expr(gen.iter, state, loop), state)
        inner = state.copy()
        for gen in node.generators:
            self._unbind(gen.target, inner)
        elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for _ in range(2):
            before = inner.calls
            for elt in elements:
                value = self._expr(elt, inner, True)
                if isinstance(value, Out) and inner.calls > before:
                    self._retain(value, elt, "collected by a comprehension", inner, True, True)
                else:
                    self._use(value, inner)
        state.calls = inner.calls
        for name, out in state.live.items():
            if name in inner.live:
                out.calls_since = inner.live[name].calls_since
        return None

    def _call(self, node: ast.Call, state: State, loop: bool):
        func = node.func
        receiver = None
        if isinstance(func, ast.Attribute):
            receiver = self._expr(func.value, state, loop)
        elif not isinstance(func, ast.Name):
            self._use(self._expr(func, state, loop), state)
        args = [self._expr(a.value if isinstance(a, ast.Starred) else a, state, loop) for a in node.args]
        kwargs = [self._expr(k.value, state, loop) for k in node.keywords]
        cc = self._callee(node)
        # a store into a container: `outs.append(y)`
        if isinstance(func, ast.Attribute) and func.attr in STORE_METHODS and receiver is None:
            for arg, arg_node in zip(args, node.args):
                items = arg if isinstance(arg, list) else [arg]
                item_nodes = arg_node.elts if isinstance(arg_node, (ast.List, ast.Tuple)) and isinstance(arg, list) else [arg_node]
                for item, item_node in zip(items, item_nodes):
                    if isinstance(item, Out):
                        self._retain(item, item_node, f"added to `{stmt_text(self.facts, func.value, 40)}` with `.{func.attr}()`", state, loop, self._nonlocal(func.value))
            return None
        for value in args + kwargs:
            self._use(value, state)
        if cc is not None:
            state.calls += 1
            for out in {id(o): o for o in list(state.live.values()) + state.temps}.values():
                out.calls_since += 1
            return state.new(Out(node, cc, 0, node))
        if isinstance(receiver, Out):
            attr = func.attr
            if attr in ALIAS_METHODS and not self._to_host(node):
                return state.new(Out(receiver.origin, receiver.cc, receiver.calls_since, None, attr in ("chunk", "split", "unbind")))
            self._use(receiver, state)
        return None

    def _to_host(self, node: ast.Call) -> bool:
        if node.func.attr != "to":
            return False
        for arg in list(node.args) + [k.value for k in node.keywords if k.arg == "device"]:
            if isinstance(arg, ast.Constant) and arg.value == "cpu":
                return True
        return False

    def _use(self, value, state: State) -> None:
        """`value` is read now: an overwritten output is an error."""
        if isinstance(value, list):
            for v in value:
                self._use(v, state)
            return
        if isinstance(value, Out):
            self._check_stale(value, state)

    def _check_stale(self, value, state: State) -> None:
        if isinstance(value, list):
            for v in value:
                self._check_stale(v, state)
            return
        if not isinstance(value, Out):
            return
        if value.calls_since > 0:
            self._report(value, value.bound_at or value.origin, "read after another call")

    def _report(self, out: Out, node: ast.AST, how: str) -> None:
        key = id(node)
        if key in self.reported or node is None:
            return
        self.reported.add(key)
        facts = self.facts
        callee = stmt_text(facts, out.origin.func, 30) if isinstance(out.origin, ast.Call) else "the call"
        message = (
            f"`{stmt_text(facts, node, 40)}`, output of CUDA-graph compiled `{callee}`, is {how}: "
            "the next replay overwrites it"
        )
        if out.tuple_like or isinstance(node, (ast.Starred, ast.Tuple, ast.List)) or not isinstance(node, ast.expr):
            self.found.append(self.finding(facts, node, message, region=out.cc.region()))
            return
        start, end = facts.source.node_range(node)
        self.found.append(
            self.finding(
                facts, node, message,
                fix="add `.clone()` where the output is kept",
                data={"wrap": [[start.row, start.column, end.row, end.column]], "suffix": ".clone()"},
                region=out.cc.region(),
            )
        )
