"""Which random ops give the same values compiled as eager with the same seed?

Run: python scripts/measure/rng_fallback_ops.py   (torch 2.13 CPU)
Each op alone in a compiled function, then mixed with an op Inductor generates
(`torch.rand`). A helper judging a CL303 finding on `torch.multinomial` (bench/dev40's
discrete_flow_models, session 60) saw its compiled output match eager: Inductor hands
some ops back to the ATen kernel, which draws from the same generator. Not yet used by
CL303 (see the output: a fallback op matches only while no generated op shares its graph).
"""
import warnings

import torch

warnings.filterwarnings("ignore")

probs = torch.softmax(torch.randn(64, 50), -1)
x = torch.rand(64, 50)
ALONE = {
    "torch.multinomial": lambda: torch.multinomial(probs, 4),
    "torch.randperm": lambda: torch.randperm(100) + 0,
    "x.normal_()": lambda: torch.empty(64, 50).normal_(),
    "torch.randint": lambda: torch.randint(0, 100, (64,)),
    "torch.rand": lambda: torch.rand(64, 50),
    "torch.randn_like": lambda: torch.randn_like(x),
    "torch.bernoulli": lambda: torch.bernoulli(x),
    "F.dropout": lambda: torch.nn.functional.dropout(x, 0.5),
}


def mixed():
    noise = torch.rand(64, 50)
    return torch.multinomial(probs + noise * 0, 4), torch.randperm(100) + 0, torch.empty(3).normal_()


def same(fn) -> list:
    torch.compiler.reset()
    torch.manual_seed(0)
    eager = fn()
    compiled = torch.compile(fn)
    torch.manual_seed(0)
    out = compiled()
    pairs = zip(eager, out) if isinstance(eager, tuple) else [(eager, out)]
    return [torch.equal(a.float(), b.float()) for a, b in pairs]


if __name__ == "__main__":
    print("torch", torch.__version__)
    for name, fn in ALONE.items():
        print(f"{name:20} alone: same as eager {same(fn)[0]}")
    print("torch.rand, then multinomial / randperm / normal_ in one graph: same as eager", same(mixed))
