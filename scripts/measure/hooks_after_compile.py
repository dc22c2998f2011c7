"""Hooks registered after the first compiled call: are they run?

Run: python scripts/measure/hooks_after_compile.py   (torch 2.13 CPU, backend="eager")
Net = a Linear(4, 4) with identity weight and no bias, input ones(2, 4). Each hook
doubles what it sees, so its effect is exact: a forward hook or forward pre-hook doubles
the output sum (8 -> 16), a full backward hook or backward pre-hook doubles the input
gradient sum (8 -> 16). For each hook kind, target (the compiled module itself, a
submodule `net.proj`, the OptimizedModule wrapper), spelling (`torch.compile(net)`,
`net.compile()`), and `torch._dynamo.config.skip_nnmodule_hook_guards` (default True, and
False), the hook is registered before the first call or after it. "seen" = the doubled
value, as eager gives; "IGNORED" = the value without the hook.
Also reads the config default in the installed torch and in 2.14.1/2.15.0 wheels.
"""
import re
import warnings

import torch

from measure_env import header, torch_sources, verdict

warnings.filterwarnings("ignore")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4, bias=False)
        with torch.no_grad():
            self.proj.weight.copy_(torch.eye(4))

    def forward(self, x):
        return self.proj(x)


HOOKS = {
    "forward hook": lambda t: t.register_forward_hook(lambda mod, args, out: out * 2),
    "forward pre-hook": lambda t: t.register_forward_pre_hook(lambda mod, args: (args[0] * 2,)),
    "full backward hook": lambda t: t.register_full_backward_hook(lambda mod, gin, gout: (gin[0] * 2,)),
    "backward pre-hook": lambda t: t.register_full_backward_pre_hook(lambda mod, gout: (gout[0] * 2,)),
}
BACKWARD = {"full backward hook", "backward pre-hook"}


def run(kind: str, target: str, spelling: str, skip_guards: bool, after: bool) -> float:
    """The value the hook should double: output sum (forward hooks) or input grad sum."""
    torch.compiler.reset()
    net = Net()
    if spelling == "torch.compile(net)":
        model = torch.compile(net, backend="eager")
    else:
        net.compile(backend="eager")
        model = net
    where = {"compiled module": net, "submodule net.proj": net.proj, "OptimizedModule wrapper": model}[target]
    with torch._dynamo.config.patch(skip_nnmodule_hook_guards=skip_guards):
        if after:
            # first call: compiles, with an input like the second's (a requires_grad
            # change alone would recompile and so pick the hook up)
            model(torch.ones(2, 4, requires_grad=True)).sum().backward()
        HOOKS[kind](where)
        x = torch.ones(2, 4, requires_grad=True)
        out = model(x)
        out.sum().backward()
    return x.grad.sum().item() if kind in BACKWARD else out.sum().item()


if __name__ == "__main__":
    header("hooks registered after the first compiled call")
    ignored = {}
    print(f"{'hook':20} {'target':24} {'spelling':19} {'skip_guards':11} {'before':>7} {'after':>7}")
    for kind in HOOKS:
        for target in ("compiled module", "submodule net.proj", "OptimizedModule wrapper"):
            for spelling in ("torch.compile(net)", "net.compile()"):
                if spelling == "net.compile()" and target == "OptimizedModule wrapper":
                    continue
                for skip_guards in (True, False):
                    before = run(kind, target, spelling, skip_guards, after=False)
                    after = run(kind, target, spelling, skip_guards, after=True)
                    state = lambda value: "seen" if value == 16.0 else ("IGNORED" if value == 8.0 else f"{value}")
                    print(f"{kind:20} {target:24} {spelling:19} {str(skip_guards):11} "
                          f"{state(before):>7} {state(after):>7}   ({before} / {after})")
                    ignored[(kind, target, spelling, skip_guards)] = (before, after)
    for skip_guards in (True, False):
        torch.compiler.reset()
        net = Net()
        model = torch.compile(net, backend="eager")
        with torch._dynamo.config.patch(skip_nnmodule_hook_guards=skip_guards):
            handle = HOOKS["forward hook"](net.proj)
            model(torch.ones(2, 4))
            handle.remove()
            value = model(torch.ones(2, 4)).sum().item()
        print(f"forward hook on net.proj removed after the first call, skip_guards={skip_guards}: "
              f"output sum {value} ({'still applied' if value == 16.0 else 'gone'})")
    for legacy in (False, True):
        torch.compiler.reset()
        wrapper = torch.compile(Net(), backend="eager")
        calls = []
        register = wrapper.register_backward_hook if legacy else wrapper.register_full_backward_hook
        register(lambda mod, gin, gout: calls.append(1))
        wrapper(torch.ones(2, 4, requires_grad=True)).sum().backward()
        name = "register_backward_hook (legacy)" if legacy else "register_full_backward_hook"
        print(f"{name} on the OptimizedModule wrapper, before any call: ran {len(calls)} times (eager: 1)")
    print("skip_nnmodule_hook_guards default by release:")
    for version, text in torch_sources("torch/_dynamo/config.py").items():
        match = re.search(r"^skip_nnmodule_hook_guards\s*=\s*(\S+)", text, re.M)
        print(f"  {version}: {match.group(1) if match else 'absent'}")
    lost = sorted({k for k, (b, a) in ignored.items() if b == 16.0 and a == 8.0 and k[3]})
    lost_strict = sorted({k for k, (b, a) in ignored.items() if b == 16.0 and a == 8.0 and not k[3]})
    text = (f"{len(lost)} of {sum(1 for k in ignored if k[3])} default-config combinations run the hook only "
            f"when registered before the first call: "
            + "; ".join(f"{k[0]} on {k[1]} ({k[2]})" for k in lost)
            + f". With skip_nnmodule_hook_guards=False: {len(lost_strict)} "
            + ("(" + "; ".join(f"{k[0]} on {k[1]} ({k[2]})" for k in lost_strict) + ")" if lost_strict else ""))
    wrapper = ignored[("full backward hook", "OptimizedModule wrapper", "torch.compile(net)", True)]
    text += f". A full backward hook on the OptimizedModule wrapper never runs (before: {wrapper[0]}, after: {wrapper[1]})"
    verdict(bool(lost), text)
