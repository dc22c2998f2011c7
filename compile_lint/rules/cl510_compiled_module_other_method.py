from __future__ import annotations

import ast
from typing import Optional

from ..analysis.semantic.walk import walk_scope as _walk_scope
from ..analysis.compiled.calls import is_compile_call
from ..model import Related
from .base import Case, Rule

# nn.Module methods that do not run the model: calling them on the wrapper is fine
MODULE_API = frozenset({
    "eval", "train", "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "requires_grad_",
    "parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children",
    "modules", "named_modules", "state_dict", "load_state_dict", "zero_grad", "apply", "register_buffer",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook", "share_memory",
    "extra_repr", "type", "to_empty", "get_submodule", "get_parameter", "get_buffer", "save_pretrained",
    "compile", "forward", "__call__",
})


class CompiledModuleOtherMethod(Rule):
    """
    ## What it does
    Finds `m = torch.compile(model)` where the code then calls only other methods of
    `m` (`m.generate(...)`, `m.sample(...)`, `m.encode(...)`) and never `m(...)` itself,
    in the same scope, with `m` not passed on, returned or stored elsewhere. `model` is a
    module built right there (`GPT(cfg)`, `GPT.from_pretrained(...)`), or a name that every
    earlier assignment in the scope binds to one (`model = GPT(cfg)` in one branch,
    `model = GPT.from_pretrained(name)` in the other, then `model = torch.compile(model)`);
    uses of the name before the compile do not count.

    ## Why is this bad?
    `torch.compile(model)` returns a wrapper that compiles calls of the wrapper only
    (`m(x)`, which runs `forward`). Any other attribute is looked up on the original
    module, so `m.generate(x)` is the original, eager `generate`, and the `self(x)` it
    makes inside goes to the original module too: nothing is compiled, with no
    warning. Measured on torch 2.13 CPU by
    `scripts/measure/compile_other_method.py`: `m(x)` gives 1 frame and 1 graph;
    `m.generate(x)` (calling `self(x)` or `self.forward(x)` inside) gives 0 frames and
    0 graphs; after the in-place `model.compile()`, `model.generate(x)` calling `self(x)`
    compiles (2 graphs), one calling `self.forward(x)` still does not (0).

    ## Example
    ```python
    model = torch.compile(Sampler())
    images = model.sample(noise, steps=50)
    ```

    ## Use instead
    ```python
    model = Sampler()
    model.compile()          # compiles model(...) and the self(...) calls in sample()
    images = model.sample(noise, steps=50)
    ```
    or compile the method itself: `model.sample = torch.compile(model.sample)`.

    Not reported for `torch.compile(..., disable=True)` (the literal): torch returns the
    module itself, so its other methods run as they always did
    (`analysis/compiled/calls.is_compile_call`, shared with CL503 and CL509; on frame A and
    the fresh reads no finding of this rule moved).

    ## Fix safety
    No fix: which calls should be compiled is the author's decision.

    ## References
    - `scripts/measure/compile_other_method.py` (frames and graphs per spelling)
    - `torch/_dynamo/eval_frame.py` (`OptimizedModule.__getattr__` forwards to `_orig_mod`)
    - `bench/judged/` (verdicts.jsonl): nanoGPT's `sample.py` compiles `model` (built as
      `GPT(...)` or `GPT.from_pretrained(...)` in two branches) and then only calls
      `model.generate(...)`: the sampling runs eagerly
    """

    code = "CL510"
    name = "compiled-module-other-method"
    summary = "Only calls of a `torch.compile`d module are compiled: its other methods run eagerly"
    requires = (b"compile",)

    valid = [
        Case("import torch\nm = torch.compile(Net())\ny = m(x)\nz = m.generate(x)\n", note="the module is called too"),
        Case("import torch\nm = torch.compile(Net(), disable=True)\nm.eval()\nz = m.generate(x)\n",
             note="`disable=True` returns the module itself"),
        Case("import torch\nm = torch.compile(Net())\nm.eval()\ntrainer.fit(m)\nm.generate(x)\n", note="passed on: its use is elsewhere"),
        Case("import torch\ndef build():\n    m = torch.compile(Net())\n    m.eval()\n    return m\n", note="returned"),
        Case("import torch\nstep = torch.compile(train_step)\nstep.__name__\n", note="a function, not a module"),
        Case("import torch\nm = Net()\nm.compile()\nm.generate(x)\n", note="in-place compile: self(x) inside generate is compiled"),
        Case("import torch\nm = torch.compile(Net())\nm.eval().to('cuda')\nm.load_state_dict(sd)\n", note="module API only, never run here"),
        Case("import torch\nm = torch.compile(Net())\ndef run(x):\n    return m(x)\nm.warmup(x)\n", note="called in a closure"),
        Case("import torch\nmodel = torch.load(path)\nmodel = torch.compile(model)\nmodel.generate(x)\n", note="not known to be a module"),
        Case("import torch\ndef sample(model, x):\n    model = Net() if model is None else model\n    model = torch.compile(model)\n    return model.generate(x)\n",
             note="a parameter: could be anything"),
    ]
    invalid = [
        Case(
            "import torch\nmodel = torch.compile(GPT(cfg))\nmodel.eval()\nout = model.generate(idx, max_new_tokens=100)\n",
            at=[(4, 7)],
        ),
        Case(
            "import torch as T\ndef main(cfg):\n    sampler = T.compile(Sampler(cfg), mode='max-autotune')\n"
            "    for noise in batches:\n        images = sampler.sample(noise, steps=50)\n",
            at=[(5, 18)], note="inside a function and a loop",
        ),
        Case(
            "import torch\nif resume:\n    model = GPT(cfg)\n    model.load_state_dict(sd)\nelse:\n    model = GPT.from_pretrained(name)\n"
            "model.eval()\nif use_compile:\n    model = torch.compile(model)\nwith torch.no_grad():\n    for _ in range(n):\n"
            "        y = model.generate(x, 100)\n",
            at=[(12, 13)], note="the name is bound to a module in every branch; the compile sits in an `if`",
        ),
        Case(
            "import torch\nnet = Net()\nnet = net.to('cuda')\nnet = torch.compile(net)\nout = net.enhance(img)\n",
            at=[(5, 7)], note="rebound to itself on the way",
        ),
    ]

    def check(self, facts):
        for node in facts.nodes(ast.Assign):
            if not (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
                continue
            call = node.value
            if not (isinstance(call, ast.Call) and is_compile_call(facts, call) and call.args):
                continue
            scope = _scope_of(facts, node)
            if scope is None or not self._module_instance(call.args[0], scope, node):
                continue
            uses = list(ast.walk(scope))  # nested defs too: a closure may call it
            found = self._only_other_methods(facts, uses, node.targets[0].id, node)
            if found is not None:
                yield self.finding(
                    facts, found,
                    f"`{facts.text(found.func)}(...)` runs eagerly: `torch.compile` compiles only calls of "
                    f"`{node.targets[0].id}(...)`",
                    related=[Related(facts.path, call.lineno, call.col_offset + 1, "compiled here")],
                )

    @classmethod
    def _module_instance(cls, arg, scope, assign, seen=frozenset()) -> bool:
        """`GPT(cfg)`, `Net().to(dev)`, `GPT.from_pretrained(...)`: a class built right there
        (a capitalised callee, or a method of a capitalised name); or a local name that every
        assignment before `assign` in the scope binds to one (`model = GPT(cfg)` in each branch)."""
        while isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr in ("to", "eval", "cuda", "half", "float", "train"):
            arg = arg.func.value
        if isinstance(arg, ast.Name):
            if arg.id in seen:
                return True  # `model = model.to(dev)`: as good as the other bindings
            params = {a.arg for a in ast.walk(scope.args) if isinstance(a, ast.arg)} if hasattr(scope, "args") else set()
            bound = [n.value for n in _walk_scope(scope.body) if isinstance(n, ast.Assign) and n.lineno < assign.lineno
                     and any(isinstance(t, ast.Name) and t.id == arg.id for t in n.targets)]
            return arg.id not in params and bool(bound) and all(cls._module_instance(b, scope, assign, seen | {arg.id}) for b in bound)
        if not isinstance(arg, ast.Call):
            return False
        func = arg.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id[:1].isupper():
            return True  # GPT.from_pretrained(...): a class's constructor method
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return last[:1].isupper()

    @staticmethod
    def _only_other_methods(facts, nodes, name: str, assign) -> Optional[ast.Call]:
        """The first `name.method(...)` call, when every use of `name` after `assign` is
        such a call (or module API) and the name is never rebound, called or passed on."""
        first = None
        own = {id(n) for n in ast.walk(assign)}
        for node in nodes:
            if not (isinstance(node, ast.Name) and node.id == name) or id(node) in own or node.lineno < assign.lineno:
                continue  # the compile itself, or a use of the module before it was compiled
            if not isinstance(node.ctx, ast.Load):
                return None  # rebound
            parent = facts.parent(node)
            if not (isinstance(parent, ast.Attribute) and parent.value is node):
                return None  # called, passed, returned or stored
            grand = facts.parent(parent)
            if not (isinstance(grand, ast.Call) and grand.func is parent):
                return None  # an attribute read: unknown use
            if parent.attr in MODULE_API:
                continue
            if first is None or (node.lineno, node.col_offset) < (first.lineno, first.col_offset):
                first = grand
        return first


def _scope_of(facts, node: ast.AST) -> Optional[ast.AST]:
    """The module or def whose own code holds `node` (None in a class body: not looked at)."""
    for anc in facts.ancestors(node):
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return anc
        if isinstance(anc, ast.ClassDef):
            return None
    return facts.tree
