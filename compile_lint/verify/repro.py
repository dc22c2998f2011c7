"""A standalone repro script per real divergence, written with the report.

Each script imports the model from the project's own source (the file and line are named
at its top), builds it as verify did (the same seed, constructor arguments or factory),
makes the same inputs (the same seeds and value ranges, by plain torch code), makes the
same compile call, and compares: it prints the numbers and exits 1 when the divergence
shows, 0 when it does not. It needs torch and the project, not compile-lint: small
enough to attach to an upstream issue. No torch here (it writes text).
"""
from __future__ import annotations

import os
import re
from typing import Optional

from .config import FORWARD_TOLERANCE
from .results import DIVERGED, CheckResult, TargetResult

REPRO_CHECKS = ("forward", "dynamo", "low-precision", "gradients", "traced", "frozen-state")

_INPUTS = '''
def make_input(shape, dtype, low, high, fill, seed, resolution, cast=None):
    """An input as compile-lint verify made it (compile_lint/verify/inputs.py make_tensor)."""
    height, width = resolution or (16, 16)
    shape = [height if d == "H" else width if d == "W" else d for d in shape]
    generator = torch.Generator().manual_seed(seed)
    if fill == "zeros":
        values = torch.full(shape, low if low > 0 else 0.0, dtype=torch.float64)
    elif fill == "ones":
        values = torch.full(shape, high, dtype=torch.float64)
    elif fill == "ramp":
        values = torch.linspace(low, high, math.prod(shape), dtype=torch.float64).reshape(shape)
    elif fill == "checker":
        rows = torch.arange(shape[-2] if len(shape) > 1 else 1).view(-1, 1)
        cols = torch.arange(shape[-1]).view(1, -1)
        values = (((rows + cols) % 2).to(torch.float64) * (high - low) + low).expand(shape).clone()
    else:
        values = torch.rand(shape, generator=generator, dtype=torch.float64) * (high - low) + low
    dtype = getattr(torch, dtype)
    if dtype == torch.bool:
        return (values > (low + high) / 2).to(DEVICE)
    if not dtype.is_floating_point:
        return values.round().to(dtype).to(DEVICE)
    return values.to(cast or dtype).to(DEVICE)


def make_value(spec, seed, index, resolution, cast):
    """The index-th input as verify makes it (compile_lint/verify/inputs.py make_inputs)."""
    if spec.get("fields") is not None:  # a dict argument: each entry its own seed
        return {key: make_value(sub, seed * 1000 + 100 * (index + 1) + n, 0, resolution, cast)
                for n, (key, sub) in enumerate(spec["fields"].items())}
    if spec.get("shape") is None:
        return spec.get("value")
    floating = getattr(torch, spec["dtype"]).is_floating_point
    return make_input(spec["shape"], spec["dtype"], spec["range"][0], spec["range"][1], spec["fill"],
                      seed * 1000 + index, resolution, cast if floating else None)


def make_inputs(resolution, cast=None):
    args, kwargs = [], {}
    for index, spec in enumerate(INPUTS):
        value = make_value(spec, SEED, index, resolution, cast)
        if spec.get("name"):
            kwargs[spec["name"]] = value
        else:
            args.append(value)
    return args, kwargs


def call(fn, args, kwargs):
    """One seeded call without autograd; the tensors it returns, flattened."""
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    kwargs = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    torch.manual_seed(SEED)
    with torch.no_grad():
        out = fn(*args, **kwargs)
    return [t for t in torch.utils._pytree.tree_flatten(out)[0] if isinstance(t, torch.Tensor)]


def unwrap(obj):
    for attr in ("_torchdynamo_orig_callable", "_orig_mod"):
        if getattr(obj, attr, None) is not None:
            return unwrap(getattr(obj, attr))
    return obj


def report(name, eager, compiled):
    """Print how far compiled is from eager; True when it diverges (beyond the tolerance,
    or non-finite values where eager has none)."""
    diverged = len(eager) != len(compiled)
    for i, (e, c) in enumerate(zip(eager, compiled)):
        if e.shape != c.shape:
            print(f"{name} output {i}: shape {tuple(c.shape)} compiled, {tuple(e.shape)} eager")
            diverged = True
            continue
        e64, c64 = e.detach().double(), c.detach().double()
        bad = (~c64.isfinite() & e64.isfinite()).sum().item()
        diff = (e64 - c64).abs().nan_to_num(nan=math.inf)
        diff = torch.where(e64.isnan() & c64.isnan(), torch.zeros_like(diff), diff)
        close = torch.allclose(e64, c64, atol=ATOL, rtol=RTOL, equal_nan=True)
        print(f"{name} output {i}: max |compiled - eager| = {diff.max().item():.4g} on "
              f"{(diff > 0).double().mean().item():.2%} of {diff.numel()} elements; "
              f"non-finite in compiled only: {bad}" + ("" if close else f" (beyond atol={ATOL:g}, rtol={RTOL:g})"))
        diverged = diverged or not close or bad > 0
    return diverged
'''


def _module_import(spec: dict) -> tuple[str, str]:
    """(folder for sys.path, dotted module) the way the worker imports the target."""
    if spec.get("file"):
        folder, filename = os.path.split(os.path.abspath(spec["file"]))
        parts = [os.path.splitext(filename)[0]]
        while os.path.isfile(os.path.join(folder, "__init__.py")):
            folder, package = os.path.split(folder)
            parts.insert(0, package)
        return folder, ".".join(parts)
    return spec.get("import_root") or os.getcwd(), spec["module"]


def _source_line(spec: dict) -> str:
    """`path:line` of the target's def, found by reading the file (no import)."""
    path = spec.get("file")
    if not path or not os.path.isfile(path):
        return spec.get("ref", "")
    name = spec["qualname"].split(".")[-1]
    pattern = re.compile(rf"^\s*(class|def|async def)\s+{re.escape(name)}\b")
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if pattern.match(line):
                return f"{path}:{number}"
    return path


def _build_lines(spec: dict, train: bool) -> list:
    folder, dotted = _module_import(spec)
    lines = [f"sys.path.insert(0, {folder!r})", f"import {dotted} as target_module  # {_source_line(spec)}", ""]
    factory = spec.get("factory")
    lines.append("torch.manual_seed(SEED)  # the weights verify built")
    if factory:
        f_folder, f_dotted = _module_import(factory)
        if (f_folder, f_dotted) != (folder, dotted):
            lines.insert(2, f"import {f_dotted} as factory_module")
            lines.insert(0, f"sys.path.insert(0, {f_folder!r})")
        owner = "factory_module" if (f_folder, f_dotted) != (folder, dotted) else "target_module"
        call = _call_text(f"{owner}.{factory['qualname']}", factory.get("args") or [], factory.get("kwargs") or {})
        lines.append(f"target = unwrap({call})  # as the project builds it ({factory.get('where') or 'a factory'})")
    elif spec.get("kind") == "class":
        call = _call_text(f"target_module.{spec['qualname']}", spec.get("args") or [], spec.get("kwargs") or {})
        lines.append(f"target = {call}")
    else:
        lines.append(f"target = unwrap(target_module.{spec['qualname']})")
    lines += ["if isinstance(target, torch.nn.Module):",
              f"    target = target.to(DEVICE).train({train})"]
    return lines


def _call_text(callee: str, args: list, kwargs: dict) -> str:
    return f"{callee}({', '.join([repr(a) for a in args] + [f'{k}={v!r}' for k, v in kwargs.items()])})"


def _compile_text(check: CheckResult) -> str:
    backend = check.backend or "inductor"
    if backend != "inductor":
        return f"torch.compile(target, backend={backend!r}, dynamic={bool(check.dynamic)})"
    mode = None if (check.mode or "default") == "default" else check.mode
    return f"torch.compile(target, mode={mode!r}, dynamic={bool(check.dynamic)})"


def _forward_body(check: CheckResult) -> list:
    detail = check.detail or {}
    cast = "None" if (check.dtype or "float32") == "float32" else f"torch.{check.dtype}"
    lines = []
    if cast != "None":
        lines += [f"target = target.to({cast}) if isinstance(target, torch.nn.Module) else target"]
    lines += [f"compiled = {_compile_text(check)}",
              f"for size in {detail.get('sizes_before') or []!r}:  # the sizes verify called it at first, in order",
              f"    call(compiled, *make_inputs(size, {cast}))",
              f"args, kwargs = make_inputs({detail.get('resolution')!r}, {cast})",
              "eager = call(target, args, kwargs)",
              "result = call(compiled, args, kwargs)",
              f"sys.exit(1 if report({check.name!r}, eager, result) else 0)"]
    return lines


def _gradients_body(check: CheckResult) -> list:
    return [
        f"args, kwargs = make_inputs({(check.detail or {}).get('resolution')!r})",
        "",
        "def gradients(fn):",
        "    \"\"\"Input and parameter gradients of a weighted sum of the outputs (the weights seeded).\"\"\"",
        "    leaf_args = [a.detach().clone().requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]",
        "    leaf_kwargs = {k: v.detach().clone().requires_grad_(True) if isinstance(v, torch.Tensor) and v.is_floating_point() else v for k, v in kwargs.items()}",
        "    params = [p for p in target.parameters() if p.requires_grad] if isinstance(target, torch.nn.Module) else []",
        "    torch.manual_seed(SEED)",
        "    outputs = [o for o in torch.utils._pytree.tree_flatten(fn(*leaf_args, **leaf_kwargs))[0] if isinstance(o, torch.Tensor) and o.requires_grad]",
        "    weights = torch.Generator().manual_seed(SEED + 7)",
        "    loss = sum((o * torch.rand(o.shape, generator=weights, dtype=torch.float64).to(o.device, o.dtype)).sum() for o in outputs)",
        "    wrt = [t for t in list(leaf_args) + list(leaf_kwargs.values()) if isinstance(t, torch.Tensor) and t.requires_grad]",
        "    found = torch.autograd.grad(loss, wrt + params, allow_unused=True)",
        "    return [torch.zeros_like(t) if g is None else g for t, g in zip(wrt + params, found)]",
        "",
        "eager = gradients(target)",
        f"result = gradients({_compile_text(check)})",
        "ATOL = RTOL = max(ATOL, 1e-3)  # gradients: the training tolerance of PyTorch's accuracy harness",
        "sys.exit(1 if report('gradients', eager, result) else 0)",
    ]


def _traced_body(check: CheckResult) -> list:
    detail = check.detail or {}
    tracer, trace_at, run_at = detail.get("tracer"), detail.get("trace_at"), detail.get("run_at")
    if tracer == "jit.trace":
        make = "program = torch.jit.trace(target, tuple(example_args), check_trace=False, strict=False)"
    elif tracer == "export":
        dims = "None"
        if detail.get("dynamic"):
            dims = ("tuple({i: torch.export.Dim.AUTO for i, d in enumerate(s['shape']) if d in ('H', 'W')} or None "
                    "for s in INPUTS if 'shape' in s and not s.get('name'))")
        make = ("module = target if isinstance(target, torch.nn.Module) else None\n"
                f"program = torch.export.export(module, tuple(example_args), dynamic_shapes={dims}).module()")
    else:
        return ["print('no standalone repro for this tracer')", "sys.exit(2)"]
    return [f"example_args, example_kwargs = make_inputs({trace_at!r})",
            *make.split("\n"),
            f"args, kwargs = make_inputs({run_at!r})",
            "eager = call(target, args, kwargs)",
            "try:",
            "    result = call(program, args, kwargs)",
            "except Exception as exc:  # the traced program fails where eager works",
            f"    print(f'traced at {trace_at}, run at {run_at}: {{type(exc).__name__}}: {{exc}}'[:600])",
            "    sys.exit(1)",
            "sys.exit(1 if report('traced', eager, result) else 0)"]


def _frozen_body(check: CheckResult) -> list:
    detail = check.detail or {}
    attribute = detail.get("attribute")
    if not attribute or "value" not in detail and not detail.get("reverse_modules"):
        return ["print('no standalone repro for this change')", "sys.exit(2)"]
    if detail.get("reverse_modules"):
        new = f"type(getattr(target, {attribute!r}))(list(getattr(target, {attribute!r}))[::-1])"
    else:
        new = f"tuple({detail['value']!r})" if detail.get("tuple") else repr(detail["value"])
    tracer = check.mode or "jit.trace"
    make = ("program = torch.jit.trace(target, tuple(args), check_trace=False, strict=False)" if tracer == "jit.trace"
            else "program = torch.export.export(target, tuple(args)).module()")
    return [f"args, kwargs = make_inputs({(check.detail or {}).get('resolution') or None!r})",
            make,
            f"setattr(target, {attribute!r}, {new})  # changed after tracing, as the code does",
            "eager = call(target, args, kwargs)",
            "result = call(program, args, kwargs)",
            "sys.exit(1 if report('frozen-state', eager, result) else 0)"]


def repro_script(spec: dict, result: TargetResult, check: CheckResult, inputs: list, options: dict,
                 resolutions: Optional[list] = None) -> Optional[str]:
    """The text of a repro for one diverged check, or None when there is no standalone
    way to show it."""
    if check.name not in REPRO_CHECKS or check.verdict in ("fell-back-to-eager", "trace-fails"):
        return None
    train = bool(spec.get("train")) if spec.get("train") is not None else "CL303" in (spec.get("codes") or [])
    if check.name == "frozen-state" and "resolution" not in (check.detail or {}):
        check.detail = dict(check.detail or {}, resolution=(resolutions or [None])[0])
    body = {"gradients": _gradients_body, "traced": _traced_body, "frozen-state": _frozen_body}.get(
        check.name, _forward_body)(check)
    message = " ".join((check.message or check.verdict).split())
    header = [
        '"""Repro: compiled code differs from eager (written by compile-lint verify).',
        "",
        f"Target:  {spec['ref']}  ({_source_line(spec)})",
        f"Built:   {result.built or '?'}",
        f"Inputs:  {'; '.join(result.inputs)}",
        f"Check:   {check.name} {check.backend or ''} mode={check.mode} dynamic={check.dynamic} dtype={check.dtype} "
        f"shape={check.shape}",
        f"Seen:    {message[:400]}",
        "",
        "Needs torch and the project's source, not compile-lint. Exits 1 when the divergence",
        "shows, 0 when it does not.",
        '"""',
        "import math",
        "import sys",
        "",
        "import torch",
        "import torch.utils._pytree",
        "",
        f"SEED = {int(options.get('seed', 0))}",
        f"DEVICE = {options.get('device', 'cpu')!r}",
        f"ATOL, RTOL = {float(spec.get('atol') or options.get('atol', FORWARD_TOLERANCE))!r}, "
        f"{float(spec.get('rtol') or options.get('rtol', FORWARD_TOLERANCE))!r}",
        f"INPUTS = {[{k: v for k, v in i.items() if v is not None} for i in inputs]!r}",
    ]
    return "\n".join(header + _INPUTS.split("\n") + ["", ""] + _build_lines(spec, train) + [""] + body) + "\n"


def write_repros(results: list, specs_by_ref: dict, state_by_ref: dict, options: dict, folder: str) -> list:
    """Write one repro per diverged (target, check kind); set `check.repro`. Returns the
    paths. `state_by_ref`: what the workers said about each target (runner.Runner.state:
    its inputs, and whether it is a class, a function or made by a factory)."""
    written = []
    for result in results:
        spec = specs_by_ref.get(result.target)
        state = state_by_ref.get(result.target) or {}
        found = state.get("inputs") or {}
        if spec is None or found.get("specs") is None:
            continue
        spec = dict(spec, kind=state.get("kind"))
        seen = set()
        for check in result.checks:
            if check.status != DIVERGED:
                continue
            kind = (check.name, check.backend, check.dtype, check.mode if check.name == "traced" else None)
            if kind in seen:
                continue
            text = repro_script(spec, result, check, found["specs"], options, found.get("resolutions"))
            if text is None:
                continue
            seen.add(kind)
            os.makedirs(folder, exist_ok=True)
            stem = os.path.splitext(os.path.basename(spec.get("file") or spec.get("module") or "target"))[0]
            parts = [stem, spec["qualname"], check.name] + ([check.backend] if check.backend not in (None, "inductor")
                                                              else []) + ([check.dtype] if check.dtype not in (
                                                                  None, "float32") else [])
            name = re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(p for p in parts if p))
            path = os.path.join(folder, f"{name}.py")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            rel = os.path.relpath(path)
            check.repro = path if rel.startswith("..") else rel
            written.append(path)
    return written
