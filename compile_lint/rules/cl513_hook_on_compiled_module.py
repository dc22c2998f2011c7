from __future__ import annotations

import ast
from typing import Optional

from ..analysis.compiled.values import chain_root, chain_text, compiled_values
from ..analysis.compiled.wrappers import CompiledWrappersFact, compiled_wrappers
from ..model import Related
from .base import Case, Rule

HOOKS = frozenset({
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_backward_hook",
})
BACKWARD_ON_WRAPPER = frozenset({"register_full_backward_hook", "register_backward_hook"})


class HookOnCompiledModule(Rule):
    """
    ## What it does
    Finds module hooks that compiled code does not run:
    - a backward hook (`register_full_backward_hook`, `register_backward_hook`)
      registered on the wrapper `torch.compile(model)` returns (a value that may hold
      it, followed as for CL511);
    - a hook registered on a submodule (`net.encoder.register_forward_hook(...)`,
      also through the wrapper: `compiled.encoder...`) after the compiled module was
      already called in the same function: `m = torch.compile(net)` or
      `net.compile()`, then `m(x)`, then the registration.

    ## Why is this bad?
    Measured on torch 2.13 CPU (`scripts/measure/hooks_after_compile.py`, output in
    `scripts/measure/out/hooks_after_compile.txt`), with hooks that double what they
    see (8 -> 16): with the default `torch._dynamo.config.skip_nnmodule_hook_guards =
    True` (also in 2.14.1 and 2.15.0), a forward hook, forward pre-hook, full backward
    hook or backward pre-hook on a submodule registered after the first call is not
    run (8 of 20 combinations; registered before the first call, all run; with the
    guard on, none is lost). Hooks on the compiled module itself run. A full or
    legacy backward hook on the `OptimizedModule` wrapper never runs, before or after
    the first call (0 calls; eager: 1). A recompile for another reason picks a late
    hook up, so the loss is intermittent: feature maps that stay empty, gradient
    clipping or masking hooks that do nothing.

    `fixtures/rules/CL513/hazard.py` (Grad-CAM hooks added after a warm-up call,
    and a backward hook on the wrapper) run compiled captures 0 activations and 0
    gradients; `clean.py`, registering on the module before compiling, captures 2
    and 1 (`scripts/measure/cl513_fixture_hooks.py`). On real code (`bench/judged/`:
    corpus L and the 24 apps): no finding.

    ## Example
    ```python
    model = torch.compile(net)
    model(warmup)
    features = []
    net.backbone.register_forward_hook(lambda m, i, o: features.append(o))
    model(x)        # features stays empty
    ```

    ## Use instead
    ```python
    features = []
    net.backbone.register_forward_hook(lambda m, i, o: features.append(o))
    model = torch.compile(net)
    model(x)
    ```
    For a backward hook, register it on the original module
    (`getattr(model, "_orig_mod", model).register_full_backward_hook(...)`).

    ## Fix safety
    Safe for a backward hook on the wrapper: `getattr(m, "_orig_mod", m)` is `m`
    when it is not compiled, and makes the hook run when it is (what registering it
    meant). No fix for a late hook: where to register it is the author's choice.

    ## References
    - `scripts/measure/hooks_after_compile.py`, `scripts/measure/out/hooks_after_compile.txt`,
      `scripts/measure/cl513_fixture_hooks.py`
    - `torch/_dynamo/config.py` (`skip_nnmodule_hook_guards`); pytorch#117758, #115750, #117265
    - `docs/hazards-measured.md`
    """

    code = "CL513"
    name = "hook-on-compiled-module"
    summary = "Module hook that compiled code never runs (backward hook on the wrapper, or added after the first call)"
    fix_safety = "safe"
    codemod = "codemods.unwrap_compiled_module:UnwrapCompiledHook"
    requires = (b"register_",)
    needs = (CompiledWrappersFact,)
    verify_target = False  # nothing an eager-vs-compiled run of the function shows

    valid = [
        Case("import torch\nnet = Net()\nnet.encoder.register_forward_hook(keep)\nm = torch.compile(net)\nm(x)\n",
             note="registered before compiling"),
        Case("import torch\nm = torch.compile(Net())\nm.encoder.register_forward_hook(keep)\nm(x)\n",
             note="registered before the first call"),
        Case("import torch\nm = torch.compile(Net())\nm(x)\nm.register_forward_hook(keep)\n",
             note="a forward hook on the compiled module itself runs (outside the compiled frame)"),
        Case("import torch\nnet = Net()\nnet.register_full_backward_hook(clip)\nm = torch.compile(net)\n",
             note="on the original module"),
        Case("import torch\nstep = torch.compile(train_step)\nstep(x)\nnet.head.register_forward_hook(keep)\n",
             note="another object"),
    ]
    invalid = [
        Case(
            "import torch\nmodel = torch.compile(Net())\nmodel.register_full_backward_hook(clip_grads)\n",
            fixed="import torch\nmodel = torch.compile(Net())\ngetattr(model, \"_orig_mod\", model).register_full_backward_hook(clip_grads)\n",
            at=[(3, 1)],
        ),
        Case(
            "import torch\ndef run(net, batches):\n    model = torch.compile(net)\n    model(batches[0])\n    feats = []\n"
            "    net.backbone.register_forward_hook(lambda m, i, o: feats.append(o))\n    for b in batches:\n        model(b)\n",
            at=[(6, 5)], note="a submodule of the compiled module, after its first call",
        ),
        Case(
            "import torch\nnet = Net()\nnet.compile()\nnet(x)\nnet.head.register_forward_pre_hook(scale)\n",
            at=[(5, 1)], note="compiled in place",
        ),
    ]

    def check(self, facts):
        wrappers = None
        values = None
        for call in facts.nodes(ast.Call):
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr in HOOKS):
                continue
            if wrappers is None:
                wrappers, values = compiled_wrappers(facts), compiled_values(facts)
            target = func.value
            held = wrappers.wrapper(target) if func.attr in BACKWARD_ON_WRAPPER else None
            if held is not None:
                fixable = chain_text(target) is not None
                yield self.finding(
                    facts, call,
                    f"`{func.attr}` on `{facts.text(target)}`, a `torch.compile` wrapper: the hook never runs",
                    fix=f"register on the original module: `getattr({facts.text(target)}, \"_orig_mod\", {facts.text(target)})`" if fixable else None,
                    data={"method": func.attr},
                    related=[Related(held.call.path, held.call.row, held.call.node.col_offset + 1, "compiled here")],
                )
                continue
            first = _earlier_compiled_call(facts, values, target, call) if isinstance(target, ast.Attribute) else None
            if first is not None:
                yield self.finding(
                    facts, call,
                    f"hook on `{facts.text(target)}` registered after the compiled module ran: compiled calls do not run it",
                    related=[Related(facts.path, first.lineno, first.col_offset + 1, "first compiled call")],
                )


def _earlier_compiled_call(facts, values, target: ast.Attribute, hook: ast.Call) -> Optional[ast.Call]:
    """A call, earlier in the same def (or module) than `hook`, of a compiled module
    that `target` is a submodule of: `root` itself when it holds a compiled module
    (a wrapper, or compiled in place), or a wrapper made of `root` there
    (`m = torch.compile(root)`)."""
    root = chain_root(target)
    if root is None:
        return None
    scope = facts.enclosing_function(hook)
    body = scope if scope is not None else facts.tree
    here = (hook.lineno, hook.col_offset)
    holders = {root.id} if values.callee(root, hook) is not None else set()
    for node in ast.walk(body):
        if isinstance(node, ast.Assign) and facts.enclosing_function(node) is scope:
            cc = values.compile_call(node.value)
            if cc is not None and cc.target is not None and chain_text(cc.target) == root.id:
                holders.update(chain_text(t) for t in node.targets if chain_text(t))
    if not holders:
        return None
    earlier = [
        node for node in ast.walk(body)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in holders
        and facts.enclosing_function(node) is scope and (node.lineno, node.col_offset) < here
        and values.callee(node.func, node) is not None
    ]
    return min(earlier, key=lambda n: (n.lineno, n.col_offset), default=None)
