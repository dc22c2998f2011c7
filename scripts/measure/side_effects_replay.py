"""Python side effects in a compiled region: are they replayed on every call, and are
global switches set there in effect for the ops of the same graph?

Run: python scripts/measure/side_effects_replay.py   (torch 2.13 CPU)
Part 1, state after the call: each compiled function does a tensor op and one Python
side effect; it is called 3 times (the 2nd and 3rd calls hit the compiled code);
before each call the state is reset, after it the state is read, and the same is done
eagerly. "replayed" = the state after every compiled call equals eager's. Side effects:
a global list append, a global counter `+= 1`, a dict write, writes of
torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.benchmark and
torch.backends.cudnn.allow_tf32, torch.set_float32_matmul_precision("high"), a module
attribute `self.calls += 1`; and a read of a global flag the caller changes.
Part 2, state during the graph: a custom op (opaque to the compiler, run at run time
inside the graph) reads the switch; the function sets the switch (or sets it and
restores it, by hand or in a @contextlib.contextmanager) around that op. Eager sees the new value.
Backends eager, aot_eager and inductor.
"""
import contextlib
import warnings

import torch
from torch._dynamo.utils import counters

from measure_env import header, verdict

warnings.filterwarnings("ignore")
BACKENDS = ("eager", "aot_eager", "inductor")

LOG = []
COUNT = 0
TABLE = {}
FLAG = False


def append_log(x):
    LOG.append("step")
    return x + 1


def bump_counter(x):
    global COUNT
    COUNT += 1
    return x + 1


def dict_write(x):
    TABLE["seen"] = TABLE.get("seen", 0) + 1
    return x + 1


def set_allow_tf32(x):
    torch.backends.cuda.matmul.allow_tf32 = True
    return x + 1


def set_cudnn_benchmark(x):
    torch.backends.cudnn.benchmark = True
    return x + 1


def set_cudnn_tf32(x):
    torch.backends.cudnn.allow_tf32 = False
    return x + 1


def set_matmul_precision(x):
    torch.set_float32_matmul_precision("high")
    return x + 1


def read_flag(x):
    return x + 1 if FLAG else x - 1


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x + 1


def reset_count():
    global COUNT
    COUNT = 0


def reset_tf32():
    torch.backends.cuda.matmul.allow_tf32 = False


def reset_benchmark():
    torch.backends.cudnn.benchmark = False


def reset_cudnn_tf32():
    torch.backends.cudnn.allow_tf32 = True


def reset_precision():
    torch.set_float32_matmul_precision("highest")


CASES = {
    # name: (function, reset before each call, state read after it)
    "global list append": (append_log, LOG.clear, lambda: len(LOG)),
    "global counter += 1": (bump_counter, reset_count, lambda: COUNT),
    "global dict write": (dict_write, TABLE.clear, lambda: TABLE.get("seen")),
    "matmul.allow_tf32 = True": (set_allow_tf32, reset_tf32, lambda: torch.backends.cuda.matmul.allow_tf32),
    "cudnn.benchmark = True": (set_cudnn_benchmark, reset_benchmark, lambda: torch.backends.cudnn.benchmark),
    "cudnn.allow_tf32 = False": (set_cudnn_tf32, reset_cudnn_tf32, lambda: torch.backends.cudnn.allow_tf32),
}
# last: setting the new-style precision API makes later reads of the legacy
# allow_tf32 flag raise ("mix of the legacy and new APIs")
LAST = {"set_float32_matmul_precision('high')": (set_matmul_precision, reset_precision,
                                                 torch.get_float32_matmul_precision)}


@torch.library.custom_op("measure::read_tf32", mutates_args=())
def read_tf32(x: torch.Tensor) -> torch.Tensor:
    return torch.full_like(x, float(torch.backends.cuda.matmul.allow_tf32))


@read_tf32.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("measure::read_benchmark", mutates_args=())
def read_benchmark(x: torch.Tensor) -> torch.Tensor:
    return torch.full_like(x, float(torch.backends.cudnn.benchmark))


@read_benchmark.register_fake
def _(x):
    return torch.empty_like(x)


def tf32_off_around_op(x):
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    y = read_tf32(x)
    torch.backends.cuda.matmul.allow_tf32 = previous
    return y


@contextlib.contextmanager
def full_fp32_matmul():
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


def tf32_off_context_manager(x):
    with full_fp32_matmul():
        return read_tf32(x)


def benchmark_on_before_op(x):
    torch.backends.cudnn.benchmark = True
    return read_benchmark(x)


DURING = {
    "allow_tf32 = False around an op (starts True)": (
        tf32_off_around_op, lambda: setattr(torch.backends.cuda.matmul, "allow_tf32", True),
        lambda: torch.backends.cuda.matmul.allow_tf32),
    "allow_tf32 off in a @contextmanager around an op": (
        tf32_off_context_manager, lambda: setattr(torch.backends.cuda.matmul, "allow_tf32", True),
        lambda: torch.backends.cuda.matmul.allow_tf32),
    "cudnn.benchmark = True before an op (starts False)": (
        benchmark_on_before_op, reset_benchmark, lambda: torch.backends.cudnn.benchmark),
}


def safely(read):
    """A read of the legacy TF32 switch raises when the legacy and new TF32 states disagree."""
    try:
        return read()
    except RuntimeError as error:
        return "RuntimeError: mixed TF32 APIs" if "mix of the legacy and new APIs" in str(error) else repr(error)


def run(fn, reset, read, backend):
    torch.compiler.reset()
    counters.clear()
    call = torch.compile(fn, backend=backend) if backend else fn
    states = []
    for _ in range(3):
        reset()
        try:
            out = call(torch.zeros(1)).item()
        except RuntimeError as error:
            out = "RuntimeError: mixed TF32 APIs" if "mix of the legacy" in str(error) else repr(error)[:80]
        states.append((out, safely(read)))
    return states, counters["stats"].get("unique_graphs", 0), sum(counters["graph_break"].values())


def part_one(cases, lost):
    for text, (fn, reset, read) in cases.items():
        eager = [state for _, state in run(fn, reset, read, None)[0]]
        for backend in BACKENDS:
            states, graphs, breaks = run(fn, reset, read, backend)
            compiled = [state for _, state in states]
            ok = compiled == eager
            if not ok:
                lost.append(f"{text} after the call, {backend} (eager {eager}, compiled {compiled})")
            print(f"{text:38} {backend:9} eager {eager}, compiled {compiled}, graphs {graphs}, breaks {breaks}: "
                  f"{'replayed' if ok else 'NOT REPLAYED'}")


if __name__ == "__main__":
    header("Python side effects in a compiled region")
    lost = []
    print("Part 1: state after each of 3 calls")
    part_one(CASES, lost)
    for backend in BACKENDS:
        torch.compiler.reset()
        module = Counter()
        compiled_module = torch.compile(module, backend=backend)
        for _ in range(3):
            compiled_module(torch.ones(2))
        print(f"{'self.calls += 1 (module attribute)':38} {backend:9} after 3 calls: eager 3, compiled {module.calls}: "
              f"{'replayed' if module.calls == 3 else 'NOT REPLAYED'}")
        if module.calls != 3:
            lost.append(f"self.calls += 1, {backend} ({module.calls} after 3 calls)")
        torch.compiler.reset()
        counters.clear()
        flag_fn = torch.compile(read_flag, backend=backend)
        seen = []
        for value in (False, True, False):
            FLAG = value
            seen.append(flag_fn(torch.zeros(1)).item())
        print(f"{'global flag read, changed by caller':38} {backend:9} outputs {seen} (eager [-1.0, 1.0, -1.0]), "
              f"graphs {counters['stats'].get('unique_graphs', 0)}: {'guarded' if seen == [-1.0, 1.0, -1.0] else 'BAKED'}")
        if seen != [-1.0, 1.0, -1.0]:
            lost.append(f"global flag read baked, {backend}")
    print("Part 2: the switch as seen by an op in the same graph (1.0 = on), and after the call")
    during_lost = []
    for text, (fn, reset, read) in DURING.items():
        eager, _, _ = run(fn, reset, read, None)
        for backend in BACKENDS:
            states, graphs, breaks = run(fn, reset, read, backend)
            ok = states == eager
            print(f"{text:50} {backend:9} (op saw, after) eager {eager[0]}, compiled {states[0]}, graphs {graphs}, "
                  f"breaks {breaks}: {'in effect' if ok else 'NOT IN EFFECT'}")
            if not ok:
                during_lost.append(f"{text}, {backend}: op saw {states[0][0]} (eager {eager[0][0]}), "
                                   f"after {states[0][1]} (eager {eager[0][1]})")
    part_one(LAST, lost)
    print(f"part 1 (after the call): {len(lost)} not replayed: {lost}")
    verdict(bool(lost or during_lost),
            ("; ".join(during_lost) + " | part 1: " + ("; ".join(lost) if lost else "every side effect replayed "
             "after every compiled call and a global flag read is guarded")))
