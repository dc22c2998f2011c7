"""Which random ops give the same values compiled as eager with the same seed?

Run: python scripts/measure/rng_fallback_ops.py   (torch 2.13 CPU)
Each op alone in a compiled function, then mixed with an op Inductor generates
(`torch.rand`). A helper judging a CL303 finding on `torch.multinomial` (bench/dev40's
discrete_flow_models, session 60) saw its compiled output match eager: Inductor hands
some ops back to the ATen kernel, which draws from the same generator. Not yet used by
CL303 (see the output: a fallback op matches only while no generated op shares its graph,
and only while no generated op ran in an earlier compiled graph either: Inductor seeds its
own draws from the generator, so every later draw moves; an eager draw before it does not
change the match. Session 63 added those two runs and a sampling loop, after two more
`torch.multinomial` findings were judged false in bench/fresh_reads: nari-labs/dia and
x-transformers, whose compiled samplers run no generated draw).
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


def rand_graph_then_multinomial_graph(compile_: bool) -> torch.Tensor:
    """A compiled function that draws with `torch.rand`, then another that samples."""
    add_noise = lambda t: t + torch.rand(64, 50)  # noqa: E731
    sample = lambda p: torch.multinomial(p, 4)  # noqa: E731
    if compile_:
        torch.compiler.reset()
        add_noise, sample = torch.compile(add_noise), torch.compile(sample)
    torch.manual_seed(0)
    add_noise(torch.zeros(64, 50))
    return sample(probs)


def eager_draw_then_compiled_multinomial(compile_: bool) -> torch.Tensor:
    sample = lambda p: torch.multinomial(p, 4)  # noqa: E731
    if compile_:
        torch.compiler.reset()
        sample = torch.compile(sample)
    torch.manual_seed(0)
    torch.rand(3)
    return sample(probs)


def sampling_loop(compile_: bool) -> torch.Tensor:
    """A model step without draws and a multinomial sampler, compiled together, five times."""
    lin = torch.nn.Linear(50, 50)
    lin.load_state_dict({"weight": torch.eye(50), "bias": torch.zeros(50)})

    def step(h):
        return torch.multinomial(torch.softmax(lin(h), -1), 1)

    if compile_:
        torch.compiler.reset()
        step = torch.compile(step)
    torch.manual_seed(0)
    h = probs[:8]
    return torch.cat([step(h) for _ in range(5)])


if __name__ == "__main__":
    print("torch", torch.__version__)
    for name, fn in ALONE.items():
        print(f"{name:20} alone: same as eager {same(fn)[0]}")
    print("torch.rand, then multinomial / randperm / normal_ in one graph: same as eager", same(mixed))
    for fn in (rand_graph_then_multinomial_graph, eager_draw_then_compiled_multinomial, sampling_loop):
        print(f"{fn.__name__}: multinomial same as eager {torch.equal(fn(False), fn(True))}")
