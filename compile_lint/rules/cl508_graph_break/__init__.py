from __future__ import annotations

import ast
from typing import Optional

from .constructs import (
    CAPTURE_SCALARS, CAPTURE_SHAPES, DATA_DEPENDENT_BOOLS, DYNAMIC_SHAPE_FUNCS, DYNAMIC_SHAPE_METHODS, LOCAL_SCALAR,
    dynamic_shape, print_reorderable, prints_size, python_sequence, statement_cause, tensor_size,
)
from ...analysis.compiled.values import CompiledValuesFact
from ...analysis.project.calls import ProjectFilesFact
from ...analysis.semantic.facts import RegionsFact
from ...analysis.branches.passed_flags import PassedFlagsFact
from ...analysis.graph_breaks.common import Breaks
from ...analysis.reach.queries import CASTS, ClassAttrsFact
from ...analysis.graph_breaks.untraceable_calls import UntraceableCalls
from ..base import Case, Rule


_FLAG_ENCODER = """\
import torch
from torch import nn

class Encoder(nn.Module):
    def __init__(self, dim, dynamic_chunk=False):
        super().__init__()
        self.dynamic_chunk = dynamic_chunk
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        if self.dynamic_chunk:
            size = int(torch.randint(1, x.shape[1], (1,)).item())
            x = x[:, :size]
        return self.proj(x)

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder(8)

    def forward(self, x):
        return self.encoder(x)

model = torch.compile(Model())
"""  # a constructor flag left False by every construction: a valid case, and an invalid one with a construction passing True


class GraphBreak(Rule):
    """
    ## What it does
    Finds, in code that `torch.compile` traces, the constructs that read tensor data into
    Python and so force a graph break, each with the official ID Dynamo gives it (listed
    below): `.item()`, `.tolist()`, `float(t)`, `int(t)`, `bool(t)` of a tensor (also
    `assert bool(t)`); `if`/`while`/`x if t else y` on a tensor value, also one operand of
    `and`/`or` (`if tol is not None and shift ** 2 <= tol:`) and a name bound to one;
    `torch.equal`/`allclose`; operators whose output shape depends on the data
    (`nonzero`, `argwhere`, `torch.where(mask)` with one argument, `masked_select`,
    `unique`, `unique_consecutive`, `bincount`, `repeat_interleave` with tensor repeats and
    no `output_size`); boolean-mask indexing `x[x > 0]`, also through a named mask
    (`keep = (d < th) & valid`, a row `mask[0]`, a reduction over a dimension, a tensor
    made with `dtype=torch.bool`, a name tested `mask.dtype == torch.bool` above) and in an
    augmented assignment `x[mask] += v` (it reads `x[mask]`); a tensor value as the index of
    a Python list, tuple or `nn.ModuleList` (`levels[i]`) or in `range(n)`; `print(...)`;
    and calls Dynamo does not trace (analysis/graph_breaks/untraceable_calls.py): a `logging.Logger`
    method (`logger.warning_once(...)`, the logger from `logging.getLogger` or a project's
    `get_logger` wrapper, by a module-level name or `self.<attr>`), a `logging` module
    function, `warnings.warn`, an `nn.LSTM`/`nn.GRU`/`nn.RNN` module the class (or a
    subclass in the file) assigns to `self.<attr>`, `copy.deepcopy` of a tensor or module,
    and a `torch.Generator` made in compiled code, one of its methods (`g.manual_seed(...)`),
    or one given to an op (`torch.rand(n, generator=g)`).

    Tensors, masks and generators are followed across calls (analysis/tensors/calls.py):
    what a def of the file (or an imported one of the project) returns, by its annotation
    (`-> torch.Tensor`, a tuple element by element) or its `return` values; a parameter
    every caller in the file fills with one (a tuple of tensors element by element:
    transformers' encodec pads by `max(left, right)` of a `(buffer, method())` tuple);
    and `self.<attr>` the class only ever assigns a buffer, a parameter or a tensor. A call
    of `self.<attr>` that the class only ever assigns a module class of the file returns
    what that class's `forward` returns, element by element, instead of tensors
    throughout: surya's `embeddings, dims = self.patch_embeddings(x)` (bench/dev9), whose
    forward returns a tensor and a tuple of ints, gave 2 false "tensor value as a slice
    bound" findings on `dims[0]`. Measured with `bench/oracle/score.py --results
    /work/oracle-run` before (33241b0) and after: the same 178/197 break sites found and
    188/190 findings true on executed code; on corpus M/L, the apps, dev2-dev13 and the
    test set only those 2 findings go. A parameter annotated `int`, `float`, `bool`, `str`
    or `complex` is not filled from its callers: the code says a number, and the caller's
    "tensor" may be a NumPy array (`.reshape` is both): doctr's post-processing
    (`def _lookup_logic(lc_map, x: float, y: float)` given `cell[k][0]`, bench/dev12) gave 6
    findings so. On corpus M/L, the apps, dev2-dev13 and the test set the check output is
    unchanged (doctr's are also outside the region now; the A/B command is in
    bench/results.md, section "2026-12-03 17:22").

    A finding in the body of a `for`/`while` loop says so: Dynamo then gives up on the
    whole function ("graph break in loop", GB7000) and runs it eagerly.

    Left alone: code Dynamo does not trace (under `if not torch.compiler.is_compiling():`,
    also through the project's own wrapper of it, a name bound to it, one operand of
    `and`/`or`, or after an `if is_compiling(): return ...`; the `else` of
    `torch.jit.is_scripting()`/`is_tracing()` is compiled code, both are False under
    torch.compile); code in an `except` handler that always re-raises (`except
    RuntimeError as e: print(x.size()); raise e`: Dynamo traces a handler only when its
    `try` raises, and this one ends the call with the error;
    `scripts/measure/graph_break_in_reraising_except.py` gives one graph and no break, the
    same `print` on the normal path a break. ai-toolkit's 7 `print` findings at 27a03a9,
    judged false in `bench/fresh_reads/`, went; on the 476 development apps CL202, CL205,
    CL303 and CL508 450 -> 449, Real3DPortrait's `print('Failed!')` before a bare `raise`;
    corpus M unchanged); `float(x)`/`int(x)`/`bool(x)` under `if isinstance(x, (int, float)):`,
    `isinstance(x, str)` or `type(x) == str` (also of an element, `type(xs[0]) == str`, for
    the loop variables over `xs`; each operand of an `and`), and a name in the `else` of
    `if isinstance(x, torch.Tensor):` (a Python number there); the body of
    `if isinstance(size, torch.Tensor):` when `size` holds an entry of a tensor's shape
    (`for size in x.shape`, through `enumerate`/`zip`; `h, w = x.shape[-2:]`;
    `x.size(i)`): a branch for `torch.jit.trace`, where shape entries are tensors, that
    Dynamo never enters (StyleGAN's `misc.assert_shape`: 0 graph breaks,
    `scripts/measure/shape_element_isinstance.py`; on the 476 development apps the one
    finding this took, Real3DPortrait's, was judged false, and nothing else moved). A comprehension's loop
    variable is its own name: a tensor when it iterates a tensor or a sequence of tensors
    (`scripts/measure/cl508_comprehension_scope.py`);
    a read of an optional input behind `mask is not None and ...` when `mask` defaults to
    None (it breaks only when a caller passes one); a bare tensor `assert` (Dynamo turns
    it into a runtime check: 1 graph, 0 breaks); `x[mask] = v` (an index_put, no break);
    `torch.where(c, a, b)`; `x.numpy()` (traced as a tensor while NumPy is installed, no
    break). `.item()`, `.tolist()`, casts and tensor sizes are left alone when
    `torch._dynamo.config.capture_scalar_outputs`, the dynamic-shape operators and mask
    indexing when `capture_dynamic_output_shape_ops` is turned on (assignment, `setattr`,
    a `with`/decorator `patch(...)`, or a `patch(...)` returned by a def that a `with` of
    the file calls) in the file or in the file of every compile site of the region
    (Dynamo then keeps them in the graph; the returned patch is kornia's
    `ScaleSpaceDetector._dynamo_config_patch`: 7 false GB0036 findings in
    `spatial_soft_argmax.py` before f69a07b, `bench/judged/verdicts.jsonl`); and so is `print` in a module that
    puts `print` into `torch._dynamo.config.reorderable_logging_functions` (Dynamo then
    runs it after the graph), unless it prints a bare `x.shape`/`x.size()`; logger calls
    in a file that sets `ignore_logging_functions`, `warnings.warn` in one that sets
    `reorderable_logging_functions`, RNN modules when `allow_rnn` is on; `copy.deepcopy`
    of a plain Python object (no break).

    When a recorded run (`compile-lint record`, docs/record.md) saw graph breaks at the
    region's compile site, the message says how many; a recording made with the break
    hooks (every break by ID and line) marks each finding: confirmed (a recorded break on
    its line), compiled without a break there, or not reached (JSON `graph_break.recorded`).

    ## Why is this bad?
    Each one splits the graph: Dynamo compiles the part before it, runs the construct
    in Python, and starts a new graph after it. Fusion stops at the break, CUDA graphs
    cannot span it, and with `fullgraph=True` it is an error. In a loop it costs the whole
    function: `print`, `.item()` or `if tensor:` in a `for` loop of the compiled function
    gave 0 graphs (the frame ran eagerly), the same construct outside a loop 2 graphs
    (`scripts/measure/graph_break_in_loop.py`). Note that `counters["graph_break"]`
    misses data-dependent branches and `torch._dynamo.explain(...).graph_break_count`
    under-counts (it said 0 for 1-3 real breaks); `compile-lint record` and `verify`
    count every break by ID and line.

    Measured on torch 2.13 CPU by `scripts/measure/graph_break_causes.py` (each construct
    above and each look-alike left alone, compiled alone, its breaks and IDs) and
    `scripts/measure/cl508_print_reorderable.py` (a `print` gives 2 graph-break counts
    without `reorderable_logging_functions`, 0 with `print` in it, still 2 for a bare
    `y.shape`). On real models: the oracle bench (bench/oracle/, bench/results.md) runs
    timm, transformers, diffusers, kornia and application models under Dynamo and scores
    every graph-break rule against the breaks it records, per ID.

    Measured on the oracle bench (bench/oracle/, torch 2.13 CPU, 440 models that ran),
    counted codes CL5*, main 5670db4 before and h-breaks 3fe61b9 after, under both judges
    (bench/oracle/README.md "The judge"): the second runs every model in eval, train and
    float16 on fresh builds and calls a finding executed when its own expression ran; the
    first ran the declared mode once and judged by line:

    | judge | break sites | recall before -> after | precision on executed code before -> after |
    |---|---|---|---|
    | second (eval, train, eval:float16; by expression) | 197 | 133 (68%) -> 172 (87%) | 141/144 (98%) -> 182/184 (99%) |
    | first (declared mode; by line) | 114 | 87 (76%) -> 95 (83%) | 95/116 (82%) -> 105/138 (76%) |

    Under the first judge 26 of the 33 false findings after are break sites under the
    second (training-only LayerDrop and feature-encoder branches, float16 clamps and
    router conversions, big_bird's first-call attention switch), 5 sit on code that never
    ran (a generator expression's body over an empty list, an operand `and` skipped), 2
    stay false under both (bloom's second `view(..., kv_length)` in a resumed frame Dynamo
    did not trace; CL507's autocast finding, not a graph break).

    | ID (second judge) | sites | found before | found after | true / false after |
    |---|---|---|---|---|
    | GB0170 branching | 55 | 40 | 53 | 53 / 0 |
    | GB0036 dynamic shape | 47 | 39 | 42 | 50 / 0 |
    | GB0033 data-dependent operator | 31 | 18 | 26 | 30 / 1 |
    | GB0124 `.item()`, casts, list index | 22 | 19 | 20 | 22 / 0 |
    | GB0291 logger call | 16 | 16 | 16 | 16 / 0 |
    | GB0206 `.requires_grad` set | 8 | 0 | 8 | 8 / 0 |
    | GB0264 layer built or converted | 6 | 0 | 4 | 4 / 0 |
    | GB0014 RNN module | 4 | 3 | 3 | 3 / 0 |
    | GB0363, GB4841, GB0007, GB0109, GB8335 | 5 | 3 | 5 | 7 / 0 |
    | GB0088, GB0119, GB0055, GB0142, GB0467, GB4347 | 8 | 0 | 0 | - |

    Reproduce: `python bench/oracle/run.py ...` then `python bench/oracle/score.py
    --results OUT --code .` (bench/oracle/README.md); every remaining false finding and
    missed site, with its cause, is in bench/results.md.

    ## Example
    ```python
    @torch.compile
    def tone_map(x):
        peak = x.amax().item()
        if x.mean() > 0.5:
            x = x * 0.8
        return x / peak
    ```

    ## Use instead
    ```python
    @torch.compile
    def tone_map(x):
        peak = x.amax()
        x = torch.where(x.mean() > 0.5, x * 0.8, x)
        return x / peak
    ```

    ## Fix safety
    No fix: the tensor form of the logic depends on what the code means.

    ## References
    - `scripts/measure/graph_break_causes.py` (every construct and look-alike, with its ID)
    - `scripts/measure/graph_break_in_loop.py` (a break in a loop: the frame runs eagerly)
    - `scripts/measure/cl508_print_reorderable.py` (print and reorderable logging functions)
    - `bench/oracle/` and `bench/results.md` (recall and precision per ID on real models)
    - `bench/judged/` (verdicts.jsonl): on corpus L, kornia guards its eager-only checks
      with its own `is_compiling()` wrapper and casts `float(sigma)` only after
      `isinstance(sigma, (int, float))`; both were false alarms, kept as the negative
      cases above and `fixtures/rules/CL508/clean_guards/`
    - `bench/dev_findings/` (verdicts.jsonl): 16 findings drawn at random from the 476
      development apps (session 59, one per app) were judged 0 true, 11 latent, 5 false.
      Two of the false ones are fixed: a method's `self` is not a tensor because it calls
      `self.norm(...)` (olmoearth's FlexiPatchEmbed: what `self._resolve(...)` returned
      was then taken for a tensor; a valid case above), and `@torch.compile(disable=True)`
      compiles nothing (ArcInstitute's `training_step`, `tests/test_reach.py`). On all
      476 apps these took 2 CL508 findings and added none. A branch every compiled
      caller of its def closes (`if include_norms:` with every compiled call passing
      False; `analysis/branches/passed_flags.py`, shared with CL303,
      `tests/test_passed_flags.py`) is not compiled code, nor a helper every compiled
      call of which sits in such a branch: 5 findings went on the apps (openpi's
      augmentation, boltz's non-inference frames), none came, and on corpus M kornia's
      `_warn_strict_maxima_bonus` `warnings.warn` (judged false in `bench/judged/`: "the
      module forwards never pass it"). Session 60: the test may read `self.<attr>` that
      the class's `__init__` alone sets from a parameter every construction in the
      project leaves at (or passes) a constant (ACE-Step's lyric encoder, built once with
      `use_dynamic_chunk` at its default False: on the 476 apps 4 CL508 and 4 CL303
      findings in its two copies went, the judged one false, none came; corpus M
      identical), and the `isinstance(size, torch.Tensor)` branch over `tensor.shape`
      that only tracing takes is left alone (above). Session 64: `self.training` is such
      a flag where every compile site of the region only ever trains the module it
      compiles (its file calls `.train()` on the names the compiled module is bound to,
      never `.eval()` or a `.train(...)` of another value, and neither hands it to another
      call nor returns it), or compiles it in eval mode (as CL303 reads it); and the calls
      of a method read for it leave out a recursive call and a `self.<name>(...)` of
      another class that defines `<name>` itself and is none of the method's class's
      ancestors. tabicl's trainer (bench/dev41) compiles its model and calls
      `self.model.train()` every step, and its inference path (`else:
      self._inference_forward(...)`, five classes with a method of that name, one
      recursive) never runs compiled: on frame A (dev34-dev50) and `bench/fresh_reads/`
      6 of its findings went (the 2 judged false in `bench/dev_findings/`), nothing else
      moved, and nothing came. Still reported: a model
      compiled in place whose project calls `model.forward(...)` directly (which runs
      eagerly: `scripts/measure/compile_other_method.py`), and a branch closed by a value
      the callers compute rather than pass
    - https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html#graph-breaks
    """

    # PassedFlagsFact: branches compiled callers close; CompiledValuesFact and ProjectFilesFact:
    # the compile sites' files, where a module is put in train or eval mode
    needs = (RegionsFact, ClassAttrsFact, PassedFlagsFact, CompiledValuesFact, ProjectFilesFact)
    code = "CL508"
    name = "graph-break"
    summary = "Construct that forces a graph break in compiled code"
    graph_break_ids = {
        "GB0124": "`.item()`; `float/int/bool(tensor)`, `assert bool(t)`; a tensor value as a slice bound (`x[:n]`) "
                  "or as the index of a Python list, tuple or ModuleList (`levels[i]`)",
        "GB0033": "`.tolist()` (Dynamo says GB0109 when the tensor is floating-point); `torch.equal`, "
                  "`torch.allclose`, `torch.is_nonzero`; a tensor value as a size (`torch.zeros(n)`, `x.view(b, n)`) "
                  "or a padding (`F.pad(x, (0, n))`); `np.random.choice(...)`",
        "GB0170": "`if`/`while`/conditional expression on a tensor value",
        "GB0036": "`nonzero`, `argwhere`, one-argument `torch.where`, `masked_select`, `unique`, "
                  "`unique_consecutive`, `bincount`, `repeat_interleave` with tensor repeats; boolean-mask indexing",
        "GB0059": "`print(...)`; `range(n)` of a tensor value",
        "GB0291": "a `logging.Logger` method (`logger.warning_once(...)`; the logger from `logging.getLogger` "
                  "or a project's `get_logger`)",
        "GB4841": "a `logging` module function (`logging.warning(...)`); re-assigning an `nn.Buffer` attribute to "
                  "a conversion of itself (`self.pe = self.pe.to(x.dtype)`: the buffer itself when nothing changes)",
        "GB0264": "`nn.Parameter(...)` made in compiled code, or a layer that makes parameters (`nn.Linear(...)`); "
                  "a layer converted (`self.proj.to(dtype)`: new parameters when the dtype or device changes)",
        "GB0467": "a module hook registered in compiled code (`m.register_forward_hook(...)`)",
        "GB0206": "setting `.requires_grad` of a tensor (`x.requires_grad = True`)",
        "GB0142": "`with` on a threading lock (`threading.Lock()`)",
        "GB0007": "`warnings.warn(...)` (a function Dynamo skips); `torch._dynamo.config.patch(...)` made in "
                  "compiled code",
        "GB0014": "calling an `nn.LSTM`/`nn.GRU`/`nn.RNN` module",
        "GB4198": "`copy.deepcopy` of a tensor or module",
        "GB0363": "`torch.Generator(...)` made in compiled code",
        "GB7650": "a `torch.Generator` method (`g.manual_seed(...)`, `g.get_state()`, `g.initial_seed()`)",
        "GB0055": "a `torch.Generator` given to an op (`torch.rand(n, generator=g)`)",
        "GB7000": "any of these in the body of a `for`/`while` loop: the function runs eagerly",
    }

    valid = [
        Case(
            """
            import torch

            @torch.compile
            def scale(tensor, multiplier):
                try:
                    result = tensor * multiplier
                except RuntimeError as e:
                    print(e)
                    print(tensor.size(), multiplier.size())
                    raise e
                return result
            """,
            note="prints in an except handler that re-raises: traced only when the try raises "
                 "(ai-toolkit's LoRA forward; scripts/measure/graph_break_in_reraising_except.py: no break)",
        ),
        Case(
            _FLAG_ENCODER,
            note="a flag set in __init__ from a parameter every construction leaves at False (ACE-Step's "
                 "ConformerEncoder use_dynamic_chunk, bench/dev34, judged false)",
        ),
        Case(
            """
            import torch

            def assert_shape(tensor, ref_shape):
                for idx, (size, ref_size) in enumerate(zip(tensor.shape, ref_shape)):
                    if ref_size is None:
                        pass
                    elif isinstance(size, torch.Tensor):
                        assert torch.equal(size, torch.as_tensor(ref_size)), idx
                    elif size != ref_size:
                        raise AssertionError(idx)

            @torch.compile
            def block(x):
                assert_shape(x, [None, 3])
                h, w = x.shape[-2:]
                if isinstance(h, torch.Tensor):
                    print(torch.equal(h, w))
                return x * 2
            """,
            note="a branch for jit.trace, where shape entries are tensors: under Dynamo they are ints or "
                 "SymInts (StyleGAN's misc.assert_shape, in Real3DPortrait, bench/dev28, judged false; "
                 "scripts/measure/shape_element_isinstance.py)",
        ),
        Case(
            "import torch\ntry:\n    from torch import compiler as _compiler\n    _disable = _compiler.disable\n"
            "except Exception:\n    import torch._dynamo as _dynamo\n    _disable = _dynamo.disable\n"
            "@_disable()\ndef log(tag):\n    print(tag)\n"
            "@torch.compile\ndef f(x):\n    log('step')\n    return x\n",
            note="a disable decorator through the alias a `try` body makes, its `except` a fallback for an older "
                 "torch (phazei's ComfyUI-HunyuanVideo-Foley, bench/dev34: the print was reported)",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Patches(nn.Module):\n    def forward(self, x):\n"
            "        h, w = x.shape[-2:]\n        return x.flatten(2), (h, w)\n"
            "class Embed(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.patches = Patches()\n        self.rows = nn.Parameter(torch.zeros(1, 64, 8))\n"
            "    def forward(self, x):\n        emb, dims = self.patches(x)\n"
            "        return emb + self.rows[:, : dims[0], :]\n"
            "m = torch.compile(Embed())\n",
            note="a submodule of this file whose forward returns a tensor and a tuple of ints (surya, bench/dev9)",
        ),
        Case("import torch\ndef eager(x):\n    print(x.sum().item())\n", note="not compiled"),
        Case("import torch\n@torch.compile\ndef f(x, n: int):\n    if n > 2:\n        x = x * 2\n    return x * float(n)\n"),
        Case("import torch\n@torch.compile\ndef f(x):\n    if not torch.compiler.is_compiling():\n        print('eager')\n    return x\n"),
        Case("import torch\n@torch.compile\ndef f(x):\n    x[x > 1] = 1\n    return x\n", note="masked assignment is not a dynamic shape"),
        Case(
            "import torch\n@torch.compile\ndef f(x):\n    if torch.jit.is_tracing():\n        print(x.sum().item())\n    return x\n",
            note="torch.jit.is_tracing() is False under torch.compile: its body never runs compiled",
        ),
        Case("import torch\n@torch.compile\ndef f(x):\n    if x.shape[-1] > 64:\n        x = x[..., ::2]\n    return x\n"),
        Case(
            "import torch\nimport torch._dynamo\ntorch._dynamo.config.reorderable_logging_functions.add(print)\n"
            "@torch.compile\ndef f(x):\n    print('step', x.shape[0], f'{x.shape}', x)\n    return x * 2\n",
            note="print is reorderable: 0 graph breaks (scripts/measure/cl508_print_reorderable.py)",
        ),
        Case(
            "import torch\nfrom torch._dynamo import config as dc\ndc.reorderable_logging_functions.update({print, len})\n"
            "class M(torch.nn.Module):\n    def forward(self, x):\n        print(x.dtype, x)\n        return x\nm = torch.compile(M())\n",
        ),
        Case(
            "import torch\n@torch.compile\ndef blur(x, sigma: float | torch.Tensor):\n"
            "    if isinstance(sigma, (int, float)):\n        sigma = torch.full((1, 1), float(sigma))\n    return x * sigma\n",
            note="`float(sigma)` only runs on a Python number",
        ),
        Case(
            "import torch\nfrom imgkit.env import tracing\n@torch.compile\ndef blur(x, sigma):\n"
            "    if not tracing():\n        assert bool((sigma > 0).all())\n    return x * sigma\n",
            files={
                "imgkit/__init__.py": "",
                "imgkit/env.py": "import torch\n_check = getattr(torch.compiler, 'is_compiling', None)\n"
                "def tracing() -> bool:\n    \"\"\"Under torch.compile?\"\"\"\n    return bool(_check()) if _check is not None else False\n",
            },
            path="imgkit/blur.py",
            note="the project's own wrapper of is_compiling(), imported from another module",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
            "        keep = x[x > 0]\n        return keep.sum() / x.amax().item()\n",
            files={"train.py": "import torch\nimport torch._dynamo\nfrom models import Net\n"
                   "torch._dynamo.config.capture_scalar_outputs = True\nnet = torch.compile(Net())\n"
                   "with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):\n    y = net(torch.randn(4))\n"},
            path="models.py", note="the compiling file keeps .item() and the mask index in the graph",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Peaks(nn.Module):\n    def forward(self, x):\n"
            "        return x.nonzero()\n",
            files={"detector.py": "import torch\nimport torch._dynamo\nfrom models import Peaks\nclass Detector(torch.nn.Module):\n"
                   "    def __init__(self):\n        super().__init__()\n        self.peaks = torch.compile(Peaks())\n"
                   "    def _patch(self):\n        return torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True)\n"
                   "    def forward(self, x):\n        with self._patch():\n            return self.peaks(x)\n"},
            path="models.py", note="a patch returned by a method the compiling file calls in a `with` (kornia's ScaleSpaceDetector)",
        ),
    ]
    valid += [
        Case("import torch\n@torch.compile\ndef mask(x, n, max_length=None):\n    if max_length and max_length > 0:\n"
             "        max_length = max_length * torch.ones(n)\n    return x\n",
             note="a parameter read before the assignment that makes it a tensor (AlgoPerf's SpecAugment)"),
        Case("import torch\ndef lookup(table, x: float, y: float):\n    xi = 0 if x < 0 else int(x)\n"
             "    yi = 0 if y < 0 else int(y)\n    return table[:, yi, xi]\n@torch.compile\ndef run(table, cells):\n"
             "    cell = cells[0].reshape(4, 2)\n    return lookup(table, cell[0][0], cell[0][1])\n",
             note="parameters annotated `float`: what the callers pass is not read (`.reshape` is NumPy's too: "
                  "doctr's post-processing)"),
        Case("import torch\ndef _check_range(labels: torch.Tensor, n: int):\n    low, high = int(labels.min()), int(labels.max())\n"
             "    assert 0 <= low and high < n\n@torch.compile\ndef confusion(pred: torch.Tensor, n: int):\n"
             "    if not torch.compiler.is_compiling() and pred.numel() > 0:\n        _check_range(pred, n)\n    return pred\n",
             note="a private helper every call of which runs only eagerly (kornia's metrics)"),
        Case("import torch\n@torch.compile\ndef f(x: torch.Tensor, w: int):\n    chunks = torch.div(x.size(1), w, rounding_mode='trunc')\n"
             "    return x.view(2, chunks)\n", note="torch.div of Python ints: Dynamo folds it (transformers' longformer)"),
        Case("import torch\n@torch.compile\ndef f(x: torch.Tensor):\n    n = x.shape[-1] // 2\n    k = x.sum()\n"
             "    k = 4\n    return x.view(2, n), x[:, :n], torch.zeros(k), x.new_full((n,), x.amax())\n",
             note="sizes from shapes, a name also bound to an int, and new_full's fill value"),
        Case("import torch\ndef is_torchdynamo_compiling():\n    try:\n        import torch\n"
             "        return torch.compiler.is_compiling()\n    except Exception:\n        return False\n"
             "@torch.compile\ndef f(x: torch.Tensor, ids: torch.Tensor):\n    if torch.jit.is_tracing() or is_torchdynamo_compiling():\n"
             "        return x\n    if (ids == 0).any():\n        print('padding')\n    return x\n",
             note="transformers' wrapper: every return is is_compiling() or False; the code after its early return"),
        Case("import copy\nimport logging\nimport torch\nlogger = logging.getLogger(__name__)\n"
             "torch._dynamo.config.ignore_logging_functions.add(logger.info)\n@torch.compile\ndef f(x, cfg):\n"
             "    logger.info('step')\n    opts = copy.deepcopy(cfg)\n    return x\n",
             note="a logger method Dynamo is told to drop; deepcopy of a Python object (no break)"),
        Case("import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.proj = nn.Linear(4, 4)\n    def forward(self, x, logger=None):\n"
             "        return self.proj(x)\nm = torch.compile(M())\n"
             "import logging\nlogger = logging.getLogger('x')\ndef eager(x):\n    logger.warning('not compiled')\n",
             note="a Linear is traced; a logger call outside compiled code"),
        Case("import torch\n@torch.compile\ndef f(x: torch.Tensor):\n    assert (x > 0).all(), 'negative'\n    return x\n",
             note="a bare tensor assert is a runtime check under Dynamo: 1 graph, 0 breaks"),
        Case("import torch\n@torch.compile\ndef f(x: torch.Tensor):\n    y = torch.where(x > 0, x, -x)\n"
             "    z = torch.repeat_interleave(y, 2)\n    w = torch.repeat_interleave(y, x.long(), output_size=8)\n"
             "    y[x > 1] = 0\n    return z, w\n",
             note="three-argument where, integer repeats, output_size, masked assignment: no break"),
        Case("import torch\n@torch.compile\ndef f(x: torch.Tensor, mask=None):\n"
             "    if mask is not None and mask.sum().item() > 0:\n        x = x * 2\n    return x\n",
             note="an optional input read only when a caller passes one"),
        Case("import torch\n@torch.compile\ndef f(x, clip):\n    if isinstance(clip, torch.Tensor):\n"
             "        x = x * clip.double()\n    elif clip > 0.0:\n        x = x * clip\n    return x\n",
             note="`clip` is not a tensor in the else of the isinstance test"),
        Case("import torch\ndef crop_condition(sizes: list[int]):\n    h = torch.tensor(sizes).unsqueeze(1)\n"
             "    total = sum([int(h) for h in sizes])\n    return h * total\n"
             "class M(torch.nn.Module):\n    def forward(self, x, sizes: list[int]):\n        return x + crop_condition(sizes)\n"
             "m = torch.compile(M())\n",
             note="the comprehension's `h` is its own name, not the tensor `h` beside it "
                  "(scripts/measure/cl508_comprehension_scope.py: 0 breaks)"),
        Case("import torch\ndef crop_condition(heights, widths):\n    if type(heights[0]) == type(widths[0]) == str:\n"
             "        heights = [int(h) for h in heights]\n    return torch.tensor(heights)\n"
             "class M(torch.nn.Module):\n    def forward(self, x: torch.Tensor, heights: torch.Tensor, widths):\n"
             "        return x + crop_condition(heights, widths)\nm = torch.compile(M())\n",
             note="switti (bench/dev25): the elements are strings where the branch runs; on tensors Dynamo "
                  "does not trace it (0 breaks)"),
        Case("import torch\n@torch.compile\ndef f(x: torch.Tensor):\n    compiling = torch.compiler.is_compiling()\n"
             "    if compiling:\n        return x\n    else:\n        return x[: int(x.max())]\n",
             note="a name bound to is_compiling()"),
        Case("import torch\n@torch.compile\ndef f(x: torch.Tensor):\n"
             "    if x.device.type == 'cpu' and not torch.compiler.is_compiling():\n        print(x.amax().item())\n"
             "    return x\n", note="one operand of `and`"),
        Case("import torch\ndef fast(x: torch.Tensor) -> bool:\n    if torch.jit.is_tracing() or torch.compiler.is_compiling():\n"
             "        return False\n    return bool((x > 0).all())\n@torch.compile\ndef f(x: torch.Tensor):\n"
             "    return x * 2 if fast(x) else x\n", note="after an early return whenever Dynamo traces"),
        Case(
            "import torch\ndef _can_stop(x: torch.Tensor) -> bool:\n    if torch.jit.is_scripting():\n        return False\n"
            "    if torch.jit.is_tracing() or torch.compiler.is_compiling():\n        return False\n"
            "    return not x.requires_grad\n@torch.compile\ndef cascade(x: torch.Tensor):\n"
            "    stop_checks = (2, 4) if _can_stop(x) else ()\n    for i in range(8):\n"
            "        if i + 1 in stop_checks and not bool((x > 0).any()):\n            break\n        x = x - 1\n    return x\n",
            note="kornia's distance transform: a def returns False first thing under Dynamo, so `stop_checks` is empty",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass LM(nn.Transformer):\n    def forward(self, src):\n"
            "        mask = torch.log(torch.tril(torch.ones(len(src), len(src))))\n"
            "        return self.encoder(src, mask=mask, is_causal=True) + self.encoder(src, src_key_padding_mask=None)\n"
            "lm = torch.compile(LM())\n",
            note="is_causal given; no mask",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Embed(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer('table', torch.ones(8, 4))\n        self.pos = nn.Buffer(torch.ones(8, 4))\n"
            "    def forward(self, x: torch.Tensor):\n        self.table = self.table.to(x.dtype)\n"
            "        self.pos = self.pos * 1\n        return x + self.table + self.pos\nm = torch.compile(Embed())\n",
            note="a buffer from register_buffer set again; an nn.Buffer set to a new tensor (measured: no break)",
        ),
        Case(
            "import torch\nfrom typing import Optional\nclass Noise(torch.nn.Module):\n"
            "    def forward(self, x: torch.Tensor, generator: Optional[torch.Generator] = None):\n"
            "        return x.to(generator.device) + torch.rand(3, generator=generator) if generator is not None else x\n"
            "m = torch.compile(Noise())\n",
            note="an optional generator no caller here passes (with None, no break); its `.device` is traced",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Pad(nn.Module):\n"
            "    def _amount(self, x: torch.Tensor) -> int:\n        return x.shape[-1] % 4\n"
            "    def _pad(self, x, n):\n        if n > 0:\n            x = x + 1\n        return x\n"
            "    def forward(self, x: torch.Tensor, sizes: list):\n"
            "        levels = [1.0, 2.0]\n        k = max(x.shape[0], 2)\n"
            "        x = self._pad(x, self._amount(x)) + self._pad(x, x.sum())\n"
            "        return x * levels[x.shape[0] % 2] * sizes[k]\n"
            "m = torch.compile(Pad())\n",
            note="a def annotated to return an int; a parameter one caller fills with a tensor and another with an int; "
                 "lists indexed by Python ints",
        ),
        Case(
            """
            import torch
            from torch import nn

            def to_pair(x):
                if isinstance(x, int):
                    return (x, x)
                return tuple(x)

            class PatchEmbed(nn.Module):
                def __init__(self, size: int):
                    super().__init__()
                    self.size = to_pair(size)
                    self.proj = nn.Conv2d(3, 8, self.size, self.size)
                    self.norm = nn.LayerNorm(8)

                def _resolve(self, patch_size):
                    return self.size if not patch_size else to_pair(patch_size * self.spec.factor)

                def forward(self, x, patch_size=None):
                    if self._resolve(patch_size) != self.size:
                        x = x * 2
                    return self.norm(self.proj(x))

            m = torch.compile(PatchEmbed(16))
            """,
            note="olmoearth's FlexiPatchEmbed (bench/dev45, judged false in bench/dev_findings): `self.norm(...)` "
                 "calls a submodule named like a tensor method, which does not make `self` a tensor",
        ),
    ]
    invalid = [
        Case(
            """
            import torch

            @torch.compile
            def scale(tensor, multiplier):
                try:
                    result = tensor * multiplier
                except RuntimeError as e:
                    print(e)
                    result = tensor
                return result
            """,
            at=[(9, 9)],
            note="a handler that goes on after the error: it runs compiled whenever the try raises",
        ),
        Case(
            _FLAG_ENCODER + "other = Encoder(8, dynamic_chunk=True)\n",
            at=[(12, 24)],
            note="a construction elsewhere passes the flag True: the branch may run compiled",
        ),
        Case(
            """
            import torch

            def assert_shape(tensor, ref_shape, size):
                for idx, ref_size in enumerate(ref_shape):
                    if isinstance(size, torch.Tensor):
                        assert torch.equal(size, torch.as_tensor(ref_size)), idx

            @torch.compile
            def block(x):
                assert_shape(x, [None, 3], x.sum())
                return x * 2
            """,
            at=[(7, 20)],
            note="an isinstance test of a parameter, which may hold a tensor",
        ),
        Case("import torch\n@torch.compile\ndef mask(x, n, scale=None):\n    scale = scale * torch.ones(n)\n"
             "    if scale:\n        return x\n    return -x\n",
             at=[(5, 8)], note="the parameter read after the assignment that makes it a tensor"),
        Case(
            "import torch\n@torch.compile\ndef route(h: torch.Tensor, router):\n    mask, probs = router(h)\n"
            "    mask = mask.bool()\n    out = h[mask]\n    other = router(h)\n    if probs is None:\n"
            "        other = other.bool()\n    return out, h[other]\n",
            at=[(6, 11)], note="the binding that reaches the use is a mask (a conditional one is not)",
        ),
        Case(
            "import torch\nimport torch.nn.functional as F\nfrom typing import Optional\n@torch.compile\n"
            "def attend(x: torch.Tensor, cache_position: Optional[torch.LongTensor] = None):\n"
            "    kv_length = cache_position[-1] + 1\n    w = x.view(2, kv_length)\n    m = x[:, :kv_length]\n"
            "    z = torch.zeros((2, kv_length))\n    p = F.pad(x, (0, kv_length))\n    return w, m, z, p\n",
            at=[(7, 19), (8, 15), (9, 25), (10, 22)],
            note="a tensor value as a view size, a slice bound, a factory size and a padding (transformers' bloom)",
        ),
        Case(
            "import torch\nclass Encoder(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
            "        for layer in range(4):\n            p = torch.rand([])\n"
            "            if self.training and (p < 0.1):\n                continue\n            x = x * 2\n        return x\n"
            "enc = torch.compile(Encoder())\n",
            at=[(6, 35)], note="LayerDrop: breaks in training (the message says so), not traced in eval mode",
        ),
        Case(
            "import torch\nimport warnings\nfrom transformers.utils import logging\nlogger = logging.get_logger(__name__)\n"
            "class Block(torch.nn.Module):\n    def forward(self, x, use_cache=True):\n"
            "        if self.training and use_cache:\n            logger.warning_once('use_cache=False with checkpointing')\n"
            "        warnings.warn('deprecated')\n        return x\nblock = torch.compile(Block())\n",
            at=[(8, 13), (9, 9)], note="a logger from a library's get_logger wrapper (GB0291) and warnings.warn (GB0007)",
        ),
        Case(
            "import copy\nimport torch\nfrom torch import nn\nclass Base(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.rnn = nn.Identity()\n    def forward(self, x: torch.Tensor):\n"
            "        y, _ = self.rnn(x)\n        return copy.deepcopy(x) + y\nclass LSTMBlock(Base):\n"
            "    def __init__(self):\n        super().__init__()\n        self.rnn = nn.LSTM(4, 4)\n"
            "class Model(nn.Module):\n    def __init__(self, kind):\n        super().__init__()\n"
            "        if kind in ('LSTM', 'GRU'):\n            self.rnn = getattr(nn, kind)(4, 4)\n"
            "    def forward(self, x):\n        return self.rnn(x)\n"
            "m = torch.compile(LSTMBlock())\nn = torch.compile(Model('GRU'))\n",
            at=[(9, 16), (10, 16), (21, 16)],
            note="an LSTM a subclass assigns, deepcopy of a tensor, getattr(nn, kind) under `kind in ('LSTM', 'GRU')`",
        ),
        Case(
            "import torch\n@torch.compile\ndef match(d: torch.Tensor, th: float):\n    vals, idx = torch.topk(d, 2, dim=1)\n"
            "    keep = vals[:, 0] / vals[:, 1] <= th\n    dists = vals[keep]\n    rows = keep.nonzero(as_tuple=True)[0]\n"
            "    pairs = torch.where(keep)\n    d[keep] += 1\n    return dists, rows, pairs\n",
            at=[(6, 13), (7, 12), (8, 13), (9, 5)],
            note="a named mask, .nonzero(), one-argument where, and `d[keep] += 1` (it reads d[keep])",
        ),
        Case(
            "import torch\n@torch.compile\ndef f(x: torch.Tensor, tol=1e-3):\n    for _ in range(10):\n"
            "        shift = x.std()\n        if tol is not None and shift ** 2 <= tol:\n            break\n        x = x * 0.5\n    return x\n",
            at=[(6, 32)], note="one operand of `and`, in a loop: the message says the whole function runs eagerly",
        ),
        Case(
            "import torch\nimport torch._dynamo\nclass Det(torch.nn.Module):\n    def patch(self):\n"
            "        return torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True)\n"
            "    def forward(self, x: torch.Tensor):\n        return x.nonzero()\ndet = torch.compile(Det())\n",
            at=[(7, 16)], note="a patch built and returned is not one that applies around this compile",
        ),
        Case(
            "import torch\n@torch.compile\ndef canny(x):\n    if torch.jit.is_scripting():\n        return x\n"
            "    else:\n        while bool((x > 0).any()):\n            x = x - 1\n    return x\n",
            at=[(7, 15)],
            note="the else of torch.jit.is_scripting() is what Dynamo compiles (kornia Canny's hysteresis loop: 2 breaks)",
        ),
        Case("import torch\n@torch.compile\ndef f(x):\n    return x / x.amax().item()\n", at=[(4, 16)]),
        Case(
            "import torch\nfrom torch import nn\nclass ToneMap(nn.Module):\n    def forward(self, x):\n        if x.mean() > 0.5:\n            x = x * 0.8\n        print('tone mapped')\n        return x\nmodel = torch.compile(ToneMap())\n",
            at=[(5, 12), (7, 9)],
        ),
        Case("import torch\n@torch.compile(mode='max-autotune')\ndef f(img):\n    luma = img.mean(1)\n    return img[luma > 0.5]\n", at=[(5, 12)]),
        Case("import torch\n@torch.compile\ndef f(x: torch.Tensor):\n    return x * bool(x.any())\n", at=[(4, 16)]),
        Case(
            "import torch\ndef helper(x):\n    return x.tolist()\n@torch.compile\ndef f(x):\n    return helper(x)\n",
            at=[(3, 12)], note="reached through a call",
        ),
        Case(
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor, heights: torch.Tensor):\n"
            "        sizes = [int(h) for h in heights]\n        return x.view(*sizes)\nm = torch.compile(M())\n",
            at=[(4, 18)], note="each element of a tensor iterated is a tensor (1 break, GB0124)",
        ),
        Case(
            "import torch\n@torch.compile\ndef blur(x, sigma, n):\n"
            "    if isinstance(n, (int, float)):\n        x = x * float(x.mean())\n    if isinstance(n, int):\n        print(n)\n    return x\n",
            at=[(5, 17), (7, 9)], note="the isinstance test is about another value; print breaks whatever it prints",
        ),
        Case(
            "import torch\nfrom imgkit.env import debug\n@torch.compile\ndef blur(x):\n    if not debug():\n        x = x / x.amax().item()\n    return x\n",
            files={"imgkit/__init__.py": "", "imgkit/env.py": "import os\ndef debug():\n    return os.environ.get('DEBUG') == '1'\n"},
            path="imgkit/blur.py", at=[(6, 17)], note="a project predicate that is not about compiling",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
            "        keep = x[x > 0]\n        return keep.sum() / x.amax().item()\n",
            files={"train.py": "import torch\nfrom models import Net\ntorch._dynamo.config.capture_scalar_outputs = True\n"
                   "net = torch.compile(Net())\n", "bench.py": "import torch\nfrom models import Net\nfast = torch.compile(Net())\n"},
            path="models.py", at=[(5, 16), (6, 29)], note="one of two compiling files sets capture_scalar_outputs; neither captures the mask",
        ),
        Case(
            "import torch\nimport logging\ntorch._dynamo.config.reorderable_logging_functions.add(logging.info)\n"
            "@torch.compile\ndef f(x):\n    print('step')\n    return x * 2\n",
            at=[(6, 5)], note="another function is reorderable, print is not",
        ),
        Case(
            "import torch\ntorch._dynamo.config.reorderable_logging_functions.add(print)\n"
            "@torch.compile\ndef f(x):\n    print(x.shape)\n    return x * 2\n",
            at=[(5, 5)], note="a bare torch.Size argument cannot be reordered: it still breaks",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Conv(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.padding_total = nn.Buffer(torch.tensor(3), persistent=False)\n"
            "    def _extra(self, h: torch.Tensor) -> torch.Tensor:\n"
            "        return torch.ceil((h.shape[-1] - self.padding_total) / 2).to(torch.int64)\n"
            "    @staticmethod\n    def _pad1d(h: torch.Tensor, paddings: tuple[int, int]):\n"
            "        left, right = paddings\n        widest = max(left, right)\n"
            "        if h.shape[-1] <= widest:\n            h = h + 1\n        return h\n"
            "    def forward(self, h):\n        return self._pad1d(h, (self.padding_total, self._extra(h)))\n"
            "conv = torch.compile(Conv())\n",
            at=[(13, 12)],
            note="transformers' encodec: a buffer and a `-> torch.Tensor` method reach a static method through a tuple",
        ),
        Case(
            "import torch\ndef _candidates(d: torch.Tensor):\n    return d * 2, d.abs() > 0\n"
            "def _polish(kp: torch.Tensor, inliers: torch.Tensor):\n    return kp[inliers]\n"
            "@torch.compile\ndef solve(d: torch.Tensor):\n    cands, valid = _candidates(d)\n"
            "    return cands[valid], _polish(d, d > 0)\n",
            at=[(5, 12), (9, 12)],
            note="kornia's RANSAC: a mask from a def's returned tuple, and one every caller passes",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Sampler(nn.Module):\n    def __init__(self, seed=None):\n"
            "        super().__init__()\n        self.seed = seed\n        self.noise = torch.Generator().manual_seed(0)\n"
            "    def forward(self, x: torch.Tensor):\n        g = None\n        if self.seed is not None:\n"
            "            g = torch.Generator(device=x.device)\n            g.manual_seed(self.seed)\n"
            "        return x + torch.rand(x.shape, generator=g) + torch.randn(x.shape, generator=self.noise)\n"
            "m = torch.compile(Sampler(seed=3))\n",
            at=[(11, 17), (12, 13), (13, 55)],
            note="a generator made in compiled code (GB0363), its method (GB7650), one kept in an attribute given to "
                 "an op (GB0055); `g` is None unless seeded (with None, torch.rand does not break)",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Masker(nn.Module):\n"
            "    def _size(self, n, generator):\n        return int(n * torch.rand(1, generator=generator).item())\n"
            "    def forward(self, x: torch.Tensor):\n        g = torch.Generator()\n"
            "        return x[: self._size(x.shape[0], generator=g)]\n"
            "m = torch.compile(Masker())\n",
            at=[(5, 24), (5, 24), (7, 13)],
            note="a method of the project handed the generator is no op (AnySat's mask collator, bench/fresh_reads "
                 "batch 24): the op inside it breaks (GB0055, with `.item()` GB0124), the generator's making (GB0363)",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Heads(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.heads = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])\n"
            "    def forward(self, x: torch.Tensor):\n        i = (x > 0).sum() // 3\n        levels = [1.0, 2.0, 3.0]\n"
            "        for k in range(x.long()[0]):\n            x = x + k\n"
            "        return self.heads[i](x) * levels[i]\nm = torch.compile(Heads())\n",
            at=[(10, 18), (12, 27), (12, 42)],
            note="a ModuleList and a list indexed by a tensor (GB0124), range() of a tensor (GB0059)",
        ),
        Case(
            "import torch\nfrom geo.homography import sample_is_valid\n@torch.compile\n"
            "def minimal_models(x1: torch.Tensor, x2: torch.Tensor):\n"
            "    oriented = sample_is_valid(x1, x2)\n    return x1[oriented], x2[oriented]\n",
            files={"geo/__init__.py": "", "geo/homography.py": "import torch\n"
                   "def sample_is_valid(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:\n"
                   "    return (a * b).sum(-1) > 0\n"},
            path="geo/ransac.py", at=[(6, 12), (6, 26)],
            note="kornia's RANSAC: a mask another module's def returns",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass LM(nn.Transformer):\n    def __init__(self):\n"
            "        super().__init__(d_model=8, nhead=2)\n        self.head = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2), 1)\n"
            "    def forward(self, src):\n        mask = torch.log(torch.tril(torch.ones(len(src), len(src))))\n"
            "        out = self.encoder(src, mask=mask)\n        return self.head(out, out, mask)\nlm = torch.compile(LM())\n",
            at=[(9, 15), (10, 16)],
            note="pytorch/examples' word_language_model: a mask and no is_causal (torch reads the causality test)",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Embed(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.pos_encoding = nn.Buffer(torch.ones(8, 4), persistent=False)\n"
            "    def forward(self, x: torch.Tensor):\n"
            "        self.pos_encoding = self.pos_encoding.to(device=x.device, dtype=x.dtype)\n"
            "        scale = nn.Parameter(torch.ones(1))\n        return x + self.pos_encoding * scale\nm = torch.compile(Embed())\n",
            at=[(8, 29), (9, 17)],
            note="transformers' ctrl: the conversion returns the buffer itself, set again (GB4841); a Parameter made (GB0264)",
        ),
        Case(
            "import contextlib\nimport torch\nimport torch._dynamo\nfrom torch import nn\nclass Peaks(nn.Module):\n"
            "    def forward(self, x):\n        return x.nonzero()\nclass Detector(nn.Module):\n"
            "    def __init__(self, fast=False):\n        super().__init__()\n        self.fast = fast\n"
            "        self.peaks = torch.compile(Peaks()) if fast else Peaks()\n"
            "    def _patch(self):\n        if self.fast:\n"
            "            return torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True)\n"
            "        return contextlib.nullcontext()\n"
            "    def forward(self, x):\n        with self._patch():\n            return self.peaks(x)\n"
            "det = torch.compile(Detector(fast=FAST))\n",
            at=[(7, 16), (15, 20)],
            note="kornia's ScaleSpaceDetector compiled whole: the patch's `with` runs inside the compiled code "
                 "(a nullcontext there; a patch made there is not traced, GB0007); built with a flag that is "
                 "not a constant (built only as `Detector()`, `self.fast` is always False and the patch never runs)",
        ),
        Case(
            "import torch\nfrom typing import Dict, Tuple\nKEYS = ('brightness', 'contrast')\n@torch.compile\n"
            "def jiggle(x: torch.Tensor, params: Dict[str, torch.Tensor], size: Tuple[int, int]):\n"
            "    factors = tuple(params[key] for key in KEYS)\n    for idx in params['order'].tolist():\n"
            "        if (factors[idx] != 0).any() and size[0] > 1:\n            x = x * factors[idx]\n    return x\n",
            at=[(7, 16), (8, 12)],
            note="kornia's ColorJiggle: items of a Dict[str, torch.Tensor] and of a tuple built from them are tensors",
        ),
        Case(
            "import threading\nimport torch\nfrom torch import nn\n_LOCK = threading.Lock()\nclass Feat(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(4, 4)\n"
            "    def forward(self, x: torch.Tensor):\n        h = x[:, None]\n        if self.training:\n"
            "            h.requires_grad = True\n        with _LOCK:\n"
            "            self.proj.register_forward_hook(lambda m, i, o: None)\n"
            "        head = nn.Linear(4, 2)\n        return head(self.proj(h)), nn.ReLU()(h)\nm = torch.compile(Feat())\n",
            at=[(12, 13), (13, 14), (14, 13), (15, 16)],
            note="requires_grad set (GB0206), a lock entered (GB0142), a hook registered (GB0467), a Linear built "
                 "(GB0264; a ReLU has no parameters)",
        ),
        Case(
            "import numpy as np\nimport torch\ndef _mask_indices(n: int):\n"
            "    return np.random.choice(np.arange(n), 2, replace=False)\n@torch.compile\ndef augment(x: torch.Tensor):\n"
            "    return x + torch.from_numpy(_mask_indices(x.shape[0])).sum()\n",
            at=[(4, 12)], note="transformers' SpecAugment mask indices, drawn with NumPy in training",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Router(nn.Module):\n    def __init__(self, dtype):\n"
            "        super().__init__()\n        self.classifier = nn.Linear(4, 4)\n        self.dtype = dtype\n"
            "    def forward(self, h: torch.Tensor):\n        self.classifier = self.classifier.to(self.dtype)\n"
            "        if not torch.isfinite(h).all():\n            h = h.clamp(-1, 1)\n        return self.classifier(h)\n"
            "r = torch.compile(Router(torch.float16))\n",
            at=[(9, 27), (10, 12)],
            note="a router converted to its dtype (new parameters in float16: GB0264); `if not t.all():` (GB0170)",
        ),
        Case(
            "import torch\nfrom torch import nn\nclass Hiera(nn.Module):\n"
            "    def random_mask(self, x: torch.Tensor, ratio: float) -> torch.Tensor:\n"
            "        batch = x.shape[0]\n        windows = 16\n"
            "        mask = torch.zeros([batch, windows], device=x.device)\n        return mask.bool()\n"
            "    def forward_features(self, x: torch.Tensor, mask=None):\n        if self.training:\n"
            "            mask = self.random_mask(x, ratio=0.5)\n        if mask is not None:\n"
            "            x = x[mask[..., None].tile(1, 1, x.shape[2])]\n        return x\n"
            "    def forward(self, x: torch.Tensor, mask=None):\n        return self.forward_features(x, mask=mask)\n"
            "net = torch.compile(Hiera())\n",
            at=[(13, 17)],
            note="timm's Hiera: the mask `random_mask` returns, asked about while the guesses of its callers "
                 "were still being built (what callers pass is read when asked, so none is half built)",
        ),
    ]

    def check(self, facts):
        if not facts.has_region("compiled"):
            return
        breaks = Breaks(self, facts)
        reorderable = print_reorderable(facts)
        untraceable = UntraceableCalls(facts)
        for call in breaks.compiled_nodes(ast.Call):
            cause = untraceable.cause(call, lambda expr: breaks.is_tensor(call, expr))
            found = breaks.report(call, *cause) if cause else self._call(breaks, facts, call, reorderable)
            if found is not None:
                yield found
        for node in breaks.compiled_nodes(ast.Assign, ast.withitem):
            cause = statement_cause(facts, node, breaks)
            found = breaks.report(*cause) if cause else None
            if found is not None:
                yield found
        for node in breaks.compiled_nodes(ast.If, ast.While, ast.IfExp):
            test = node.test
            # `if a is not None and t.any():`: the tensor operand is what Dynamo branches on
            operands = test.values if isinstance(test, ast.BoolOp) else [test]
            # `if not t.all():` reads the tensor's truth as much as `if t.all():` does
            tensor = next((v for v in operands if breaks.is_tensor(node, v.operand if isinstance(v, ast.UnaryOp)
                                                                    and isinstance(v.op, ast.Not) else v)), None)
            if tensor is not None:
                kind = "while" if isinstance(node, ast.While) else "if"
                found = breaks.report(tensor, f"`{kind}` on a tensor value", "GB0170")
                if found is not None:
                    yield found
        for sub in breaks.compiled_nodes(ast.Subscript):
            parent = facts.parent(sub)
            read = isinstance(sub.ctx, ast.Load) or isinstance(parent, ast.AugAssign) and parent.target is sub
            index = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
            bound = next((b for i in index if isinstance(i, ast.Slice) for b in (i.lower, i.upper, i.step)
                          if b is not None and breaks.only_tensor(sub, b)), None)
            if bound is not None:
                found = breaks.report(bound, "a tensor value as a slice bound", "GB0124", CAPTURE_SCALARS)
                if found is not None:
                    yield found
            if read and any(breaks.is_mask(sub, i) for i in index):
                found = breaks.report(sub, "boolean-mask indexing (a data-dependent shape)", "GB0036",
                                      "capture_dynamic_output_shape_ops", {"cause.func": "aten.nonzero.default"})
                if found is not None:
                    yield found
            elif read and not isinstance(sub.slice, (ast.Slice, ast.Tuple)) and breaks.only_tensor(sub, sub.slice) \
                    and python_sequence(facts, sub, sub.value, breaks):
                # `table[i]` with a tensor `i`: Python needs an int, Dynamo reads it with .item()
                found = breaks.report(sub.slice, "a tensor value as a Python list or tuple index", "GB0124",
                                      CAPTURE_SCALARS)
                if found is not None:
                    yield found

    def _call(self, breaks: Breaks, facts, call: ast.Call, reorderable: bool):
        func = call.func
        dotted = facts.resolve(func)
        if isinstance(func, ast.Attribute) and dotted is None:
            method, receiver = func.attr, func.value
            if isinstance(receiver, ast.Attribute) and receiver.attr == "shape":
                return None
            if method == "item" and not call.args:
                return breaks.report(call, "`.item()`", "GB0124", CAPTURE_SCALARS)
            if method == "tolist" and not call.args:
                return breaks.report(call, "`.tolist()`", "GB0033", CAPTURE_SCALARS, LOCAL_SCALAR)
            op = DYNAMIC_SHAPE_METHODS.get(method)
            if op and (method in ("nonzero", "argwhere") or breaks.is_tensor(call, receiver)) \
                    and dynamic_shape(breaks, call, method, [receiver, *call.args]):
                return breaks.report(call, f"`.{method}()`", "GB0036", CAPTURE_SHAPES, {"cause.func": op})
            if method in DATA_DEPENDENT_BOOLS and breaks.is_tensor(call, receiver):
                return breaks.report(call, f"`.{method}()`", "GB0033", None, {"cause.func": f"aten.{method}.default"})
            return tensor_size(breaks, call, dotted)
        if dotted == "builtins.print":
            if not (reorderable and not prints_size(call)):
                return breaks.report(call, "`print(...)`", "GB0059", fill={"fn.__name__": "print"})
            return None
        if dotted in CASTS and len(call.args) == 1 and breaks.is_tensor(call, call.args[0]):
            return breaks.report(call, f"`{dotted[9:]}(tensor)`", "GB0124", CAPTURE_SCALARS)
        if dotted == "builtins.range" and any(breaks.only_tensor(call, a) for a in call.args):
            return breaks.report(call, "`range(...)` of a tensor value", "GB0059", fill={"fn.__name__": "range"})
        name = dotted[6:] if dotted and dotted.startswith("torch.") and dotted.count(".") == 1 else None
        if name in DYNAMIC_SHAPE_FUNCS and dynamic_shape(breaks, call, name, call.args):
            return breaks.report(call, f"`{dotted}(...)`", "GB0036", CAPTURE_SHAPES, {"cause.func": DYNAMIC_SHAPE_FUNCS[name]})
        if name in DATA_DEPENDENT_BOOLS:
            return breaks.report(call, f"`{dotted}(...)`", "GB0033", None, {"cause.func": f"aten.{name}.default"})
        return tensor_size(breaks, call, dotted)
