"""A graph break inside a loop of the compiled frame vs outside any loop.

Run: python scripts/measure/graph_break_in_loop.py   (torch 2.13 CPU, backend="eager")
For each body, counts from torch._dynamo.utils.counters after one call (reset between):
graphs compiled (stats unique_graphs), frames total / ok, graph_break entries, whether
Dynamo's graph_breaks log holds the GB7000 "graph break in loop" record, and which
frame it skipped. A frame whose `total` exceeds `ok` ran eagerly. Breaking constructs:
`print` (a logging function), `x.item()` (a data-dependent scalar), `if x.sum() > 0`
(data-dependent branch); each in the frame's body and in a `for`/`while` loop of that
frame; a break in a loop of a function the frame calls; and a loop of the frame calling
a function that breaks (inlined frames): which frame does the loop send to eager? And a
break of its own after such a loop (never traced: the frame is skipped) and one before it
(traced: a graph up to it, then the resumed rest of the frame is skipped); added in
session 63, not used by CL508 yet: the skip happens only when the loop runs and reaches
its break, which the code after a conditional or possibly empty loop does not show, and
on alphafold3-pytorch (bench/fresh_reads batch 7) the 4 findings after such loops that
the reading would drop were judged true by a helper who did not model the skip. Also reads symbolic_convert.py of the installed torch and 2.14.1/2.15.0 wheels.
"""
import contextlib
import io
import logging
import warnings

import torch
from torch._dynamo.utils import counters

from measure_env import header, torch_sources, verdict

warnings.filterwarnings("ignore")


def body_print(x):
    x = x * 2
    print("step")
    return x + 1


def loop_print(x):
    for _ in range(3):
        x = x * 2
        print("step")
    return x + 1


def body_item(x):
    x = x * 2
    scale = x.sum().item()
    return x * scale


def loop_item(x):
    for _ in range(3):
        x = x * 2
        scale = x.sum().item()
    return x * scale


def body_if(x):
    x = x * 2
    if x.sum() > 0:
        x = x + 1
    return x - 1


def loop_if(x):
    for _ in range(3):
        x = x * 2
        if x.sum() > 0:
            x = x + 1
    return x - 1


def helper_with_loop(x):
    for _ in range(3):
        x = x * 2
        print("step")
    return x


def calls_helper_with_loop(x):
    x = x + 1
    x = helper_with_loop(x)
    return x - 1


def helper_print(x):
    print("step")
    return x * 2


def loop_calls_helper(x):
    for _ in range(3):
        x = helper_print(x)
    return x + 1


def while_print(x):
    n = 0
    while n < 3:
        x = x * 2
        print("step")
        n += 1
    return x + 1


def mask_after_item_loop(x):
    for _ in range(3):
        x = x / x.amax().item()
    return x[x > 0]  # a break of its own (GB0036), after the loop that sends the frame to eager


def mask_before_item_loop(x):
    x = x[x > 0]  # a break before the loop: compiled up to it, then the loop's frame is skipped
    for _ in range(3):
        x = x / x.amax().item()
    return x


CASES = {
    "print, no loop": body_print,
    "print in for loop": loop_print,
    "print in while loop": while_print,
    ".item(), no loop": body_item,
    ".item() in for loop": loop_item,
    "if tensor, no loop": body_if,
    "if tensor in for loop": loop_if,
    "print in a loop of a called function": calls_helper_with_loop,
    "loop calls a function that prints": loop_calls_helper,
    "mask indexing after an .item() loop": mask_after_item_loop,
    "mask indexing before an .item() loop": mask_before_item_loop,
}


class GraphBreakLog(logging.Handler):
    """Dynamo's graph_breaks log: the GB7000 record appears only there."""

    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


LOG = GraphBreakLog()


def measure(fn):
    torch.compiler.reset()
    counters.clear()
    LOG.messages.clear()
    with contextlib.redirect_stdout(io.StringIO()):
        torch.compile(fn, backend="eager")(torch.ones(3))
    skipped = [line.split("frame skipped: ", 1)[1] for message in LOG.messages
               for line in message.splitlines() if "frame skipped: " in line]
    frames = counters["frames"]
    unimplemented = [key.splitlines()[0] for key in counters["unimplemented"]]
    return {
        "graphs": counters["stats"].get("unique_graphs", 0),
        "frames total": frames.get("total", 0),
        "frames ok": frames.get("ok", 0),
        "graph_break": sum(counters["graph_break"].values()),
        "unimplemented": unimplemented,
        "GB7000": "gb7000" in "".join(LOG.messages),
        "skipped": sorted(set(skipped)),
    }


if __name__ == "__main__":
    header("graph break inside a loop of the compiled frame vs outside")
    torch._logging.set_logs(graph_breaks=True)
    logging.getLogger("torch._dynamo").addHandler(LOG)
    results = {}
    for text, fn in CASES.items():
        result = results[text] = measure(fn)
        print(f"{text:38} graphs {result['graphs']}, frames total {result['frames total']} "
              f"ok {result['frames ok']}, graph_break {result['graph_break']}, "
              f"GB7000 logged {result['GB7000']}")
        if result["skipped"]:
            print(f"{'':38} frame skipped: {', '.join(s.split(' (')[0] for s in result['skipped'])}")
    print("the GB7000 frame skip by release (symbolic_convert.py):")
    for version, text in torch_sources("torch/_dynamo/symbolic_convert.py").items():
        print(f"  {version}: 'graph break in loop' raised {text.count('self.raise_loop_graph_break(')} places, "
              f"skip_frame=True: {'Skipping the frame and falling back to eager' in text}")
    eager_frames = [t for t, r in results.items() if r["graphs"] == 0]
    verdict(bool(eager_frames) and results["print, no loop"]["graphs"] > 0,
            f"0 graphs (whole frame eager) for: {', '.join(eager_frames)}; "
            f"outside a loop: print {results['print, no loop']['graphs']} graphs, .item() "
            f"{results['.item(), no loop']['graphs']}, if-tensor {results['if tensor, no loop']['graphs']}")
