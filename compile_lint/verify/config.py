"""The `[tool.compile-lint.verify]` table (or `[verify]` in compile-lint.toml), validated.

The linter core hands over the raw table (`Settings.verify`); every key is checked here,
and an unknown one is a one-line error with a did-you-mean (exit 2), never a traceback.

    [tool.compile-lint.verify]
    modes = ["default", "max-autotune-no-cudagraphs"]
    resolutions = ["16x16", "17x23"]
    dtypes = ["float16"]
    timeout = 300

    [[tool.compile-lint.verify.targets]]
    target = "mypkg.grade:LutGrade"          # or "src/mypkg/grade.py:LutGrade"
    kwargs = { size = 17 }
    inputs = [
      { shape = [1, 3, "H", "W"] },                                 # image in [0, 1]
      { shape = [1, 3, 17, 17, 17], range = [0, 1], fill = "ramp" },  # a 3D LUT
    ]
    atol = 1e-4
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Optional

# The forward tolerance of PyTorch's own accuracy harness: `torch._dynamo.utils.same(...,
# tol=1e-4)` and the dynamo benchmarks' float32 inference tolerance. 1e-5 (verify's first
# default) called a clean frame interpolator "diverged" on an H200 (bench/results.md,
# "GPU run"): Triton's grid_sample coordinates stray a few ULPs at pixel scale, 1.8e-05 on
# the output against eager's 8e-07, both far below one 8-bit level (3.9e-03).
FORWARD_TOLERANCE = 1e-4
CPU_MODES = ("default", "reduce-overhead", "max-autotune-no-cudagraphs")
CUDA_ONLY_MODES = ("max-autotune",)
ALL_MODES = CPU_MODES + CUDA_ONLY_MODES
FLOAT_DTYPES = ("float32", "float16", "bfloat16", "float64")
INPUT_DTYPES = FLOAT_DTYPES + ("int64", "int32", "uint8", "bool")
DYNAMIC_CHOICES = {"both": (False, True), "static": (False,), "dynamic": (True,)}
FILLS = ("random", "ramp", "checker", "zeros", "ones")
# Odd and non-square sizes catch what square powers of two hide; 2x3 is where nearest
# resizing by a fractional factor keeps the size and compiled code still resamples
# (hazards.md CL103).
DEFAULT_RESOLUTIONS = ((16, 16), (17, 23), (2, 3))
CHECK_NAMES = (
    "dynamo",
    "forward",
    "gradients",
    "low-precision",
    "traced",
    "frozen-state",
    "recompile-sweep",
    "held-outputs",
    "cudagraph-sizes",
    "input-mutation",
    "latency",
)
# The default plan drops what costs the most compile time for the least news on CPU:
# the modes other than "default" (on CPU reduce-overhead has no CUDA graphs to add, and
# max-autotune-no-cudagraphs benchmarks every conv choice) and the latency check. --full
# runs them all.
FULL_ONLY_CHECKS = ("latency",)
STATUS_NAMES = ("pass", "diverged", "could-not-check", "error", "not-run", "skipped")
# The whole run's default time budget, in seconds: a CI gate that a CPU runner finishes
# in minutes (docs/verify.md, "The budget"). 0 means no budget.
DEFAULT_BUDGET_S = 600.0
GRADIENT_CHOICES = ("auto", "always", "never")


def default_modes(device: str, full: bool) -> list:
    if not full:
        return ["default"]
    return list(CPU_MODES + (CUDA_ONLY_MODES if device == "cuda" else ()))


class VerifyConfigError(Exception):
    """A user error in verify's options or config: one line, exit code 2."""


def _did_you_mean(word: str, choices) -> str:
    hint = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return f" (did you mean {hint[0]!r}?)" if hint else ""


@dataclass
class InputSpec:
    """How to make one argument: a tensor (shape, dtype, range, fill) or a literal value."""

    shape: Optional[list] = None  # ints, or "H" / "W" filled from each resolution
    dtype: str = "float32"
    range: tuple = (0.0, 1.0)
    fill: str = "random"
    value: Any = None  # a non-tensor argument, passed as is
    name: Optional[str] = None  # pass as this keyword argument
    fields: Optional[dict] = None  # a dict argument: key -> InputSpec (`dict = { image = {...} }`)

    def to_json(self) -> dict:
        data = {"shape": self.shape, "dtype": self.dtype, "range": list(self.range), "fill": self.fill,
                "value": self.value, "name": self.name}
        if self.fields is not None:
            data["fields"] = {k: v.to_json() for k, v in self.fields.items()}
        return data

    @classmethod
    def from_json(cls, data: dict) -> "InputSpec":
        data = dict(data)
        fields = data.pop("fields", None)
        spec = cls(**{k: v for k, v in data.items() if k in ("shape", "dtype", "range", "fill", "value", "name")})
        spec.range = tuple(spec.range)
        if fields is not None:
            spec.fields = {k: cls.from_json(v) for k, v in fields.items()}
        return spec

    def uses_resolution(self) -> bool:
        if self.fields is not None:
            return any(f.uses_resolution() for f in self.fields.values())
        return bool(self.shape) and ("H" in self.shape or "W" in self.shape)

    def describe(self) -> str:
        label = f"{self.name}=" if self.name else ""
        if self.fields is not None:
            return label + "{" + ", ".join(f"{k!r}: {v.describe()}" for k, v in self.fields.items()) + "}"
        if self.shape is None:
            return f"{label}{self.value!r}"
        dims = "x".join(str(d) for d in self.shape)
        return f"{label}{self.dtype}[{dims}] {self.fill} in [{self.range[0]:g}, {self.range[1]:g}]"


def call_text(name: str, args: list, kwargs: dict) -> str:
    """`Name(3, 3, nf=32)`, as the code would write the call."""
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    text = f"{name}({', '.join(parts)})"
    return text if len(text) <= 160 else text[:157] + "..."


@dataclass
class TargetSpec:
    """One thing to verify: a function or an nn.Module class, and how to call it."""

    ref: str  # as the user wrote it / as the finding named it
    qualname: str
    module: Optional[str] = None  # dotted module name ("pkg.mod:Name" form)
    file: Optional[str] = None  # absolute file path ("path/file.py:Name" form)
    codes: list = field(default_factory=list)  # lint codes found in it
    region_kinds: list = field(default_factory=list)  # "compiled" / "traced" / "cudagraph"
    # the code's own trace/export calls of this target: {"api", "dynamic", "where"}
    trace_sites: list = field(default_factory=list)
    where: Optional[str] = None  # the compile/trace site or finding that made it a target
    value_range: Optional[list] = None  # [low, high] for synthesised float inputs (default [0, 1])
    range_reason: Optional[str] = None  # why: "config", or the comparison in the code that suggests it
    args: list = field(default_factory=list)  # constructor arguments
    kwargs: dict = field(default_factory=dict)
    inputs: Optional[list] = None  # InputSpec list; None: synthesise
    resolutions: Optional[list] = None
    modes: Optional[list] = None
    dtypes: Optional[list] = None
    checks: Optional[list] = None
    train: Optional[bool] = None
    mutate: dict = field(default_factory=dict)  # attribute -> value for the frozen-state check
    atol: Optional[float] = None
    rtol: Optional[float] = None
    fp64_multiplier: Optional[float] = None
    timeout: Optional[float] = None
    import_root: Optional[str] = None  # folder put on sys.path to import `module`
    # How the project builds it: a factory the code calls for it (sites.py), as
    # {"qualname", "file" | "module", "import_root", "args", "kwargs", "call", "where"}
    factory: Optional[dict] = None
    built: Optional[str] = None  # how it is built, for the report: "RRDBNet(3, 3, nf=32) at train.py:12"
    trained: Optional[str] = None  # where the project trains it (an optimizer over its parameters ...)
    gradients: Optional[bool] = None  # config: check gradients (True) or not (False); None: as the run says
    synthesised_inputs: bool = False  # `inputs` were made by verify, not configured (later stages keep them)

    @property
    def key(self) -> tuple:
        return (self.file or self.module, self.qualname)

    def build_call(self) -> Optional[str]:
        """How it will be built, before a worker builds it (the plan, a target the budget
        left out): the factory or constructor call with its arguments, and where they
        come from. The worker's own `built` (loader.build) replaces it."""
        origin = f" ({self.built})" if self.built else ""
        if self.factory:
            return call_text(self.factory["qualname"], self.factory.get("args") or [],
                             self.factory.get("kwargs") or {}) + origin
        if self.args or self.kwargs:
            return call_text(self.qualname, self.args, self.kwargs) + origin
        return self.built

    def to_json(self) -> dict:
        data = dict(self.__dict__)
        data["inputs"] = None if self.inputs is None else [i.to_json() for i in self.inputs]
        return data


@dataclass
class VerifyOptions:
    """Options for a whole run: config-file values, overridden by the command line."""

    modes: Optional[list] = None  # None: default_modes(): "default", every mode the device supports with `full`
    resolutions: list = field(default_factory=lambda: [list(r) for r in DEFAULT_RESOLUTIONS])
    dtypes: list = field(default_factory=list)  # extra low-precision dtypes for every target
    dynamic: tuple = (False, True)
    checks: Optional[list] = None  # None: every check that applies
    timeout: float = 1800.0  # per target (the worker is killed)
    check_timeout: float = 600.0  # per check (the check is abandoned, the next one runs)
    jobs: int = 1
    device: str = "auto"
    quick: bool = False
    full: bool = False  # every mode and check (default: the plan of FULL_ONLY_CHECKS' comment)
    fail_on: list = field(default_factory=lambda: ["diverged", "error"])  # statuses that exit 1
    atol: float = FORWARD_TOLERANCE
    rtol: float = FORWARD_TOLERANCE
    fp64_multiplier: Optional[float] = None
    seed: int = 0
    targets: list = field(default_factory=list)  # TargetSpec from config
    budget: float = DEFAULT_BUDGET_S  # seconds for the whole run; 0: none
    gradients: str = "auto"  # auto: where the project trains the target; always; never
    allow_nothing_verified: bool = False  # exit 0 (not 3) when no target was verified


# ---- parsing single values (shared by the config file and the command line) ----

def parse_resolution(value, where: str) -> list:
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", value)
        if match:
            h, w = int(match.group(1)), int(match.group(2))
            if h > 0 and w > 0:
                return [h, w]
    elif isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) and v > 0 for v in value):
        return list(value)
    raise VerifyConfigError(f"{where}: resolution {value!r} is not HEIGHTxWIDTH like '17x23'")


def parse_modes(values, where: str) -> list:
    values = _string_list(values, where)
    for mode in values:
        if mode not in ALL_MODES:
            raise VerifyConfigError(f"{where}: unknown mode {mode!r}{_did_you_mean(mode, ALL_MODES)}; "
                                    f"choose from {', '.join(ALL_MODES)}")
    return values


def parse_dtypes(values, where: str) -> list:
    values = [{"fp16": "float16", "half": "float16", "bf16": "bfloat16", "fp32": "float32"}.get(v, v)
              for v in _string_list(values, where)]
    for dtype in values:
        if dtype not in FLOAT_DTYPES:
            raise VerifyConfigError(f"{where}: unknown dtype {dtype!r}{_did_you_mean(dtype, FLOAT_DTYPES)}; "
                                    f"choose from {', '.join(FLOAT_DTYPES)}")
    return values


def parse_checks(values, where: str) -> list:
    values = _string_list(values, where)
    for name in values:
        if name not in CHECK_NAMES:
            raise VerifyConfigError(f"{where}: unknown check {name!r}{_did_you_mean(name, CHECK_NAMES)}; "
                                    f"choose from {', '.join(CHECK_NAMES)}")
    return values


def parse_fail_on(values, where: str) -> list:
    values = _string_list(values, where)
    for name in values:
        if name not in STATUS_NAMES:
            raise VerifyConfigError(f"{where}: unknown status {name!r}{_did_you_mean(name, STATUS_NAMES)}; "
                                    f"choose from {', '.join(STATUS_NAMES)}")
    return values


def parse_budget(value, where: str) -> float:
    """Seconds for the whole run (0: no budget); also "10m", "90s", "none"."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("none", "off", "0"):
            return 0.0
        match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(s|m|min|h)?", text)
        if match:
            return float(match.group(1)) * {None: 1, "s": 1, "m": 60, "min": 60, "h": 3600}[match.group(2)]
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    raise VerifyConfigError(f"{where}: budget {value!r} is not a number of seconds like 600, '10m', or 0 for none")


def parse_gradients(value, where: str) -> str:
    if value not in GRADIENT_CHOICES:
        raise VerifyConfigError(f"{where}: gradients must be one of {', '.join(GRADIENT_CHOICES)}, got {value!r}"
                                f"{_did_you_mean(value, GRADIENT_CHOICES)}")
    return value


def parse_dynamic(value, where: str) -> tuple:
    if value not in DYNAMIC_CHOICES:
        raise VerifyConfigError(f"{where}: dynamic must be one of {', '.join(DYNAMIC_CHOICES)}, got {value!r}")
    return DYNAMIC_CHOICES[value]


def parse_target_ref(ref: str, where: str) -> tuple[Optional[str], Optional[str], str]:
    """'pkg.mod:Name' -> (module, None, qualname); 'path/file.py:Name' -> (None, path, qualname)."""
    if not isinstance(ref, str) or ref.count(":") != 1 and not re.match(r"^[A-Za-z]:[\\/]", ref):
        raise VerifyConfigError(f"{where}: target {ref!r} must look like 'pkg.module:Name' or 'path/to/file.py:Name'")
    location, _, qualname = ref.rpartition(":")
    if not qualname or not all(part.isidentifier() for part in qualname.split(".")):
        raise VerifyConfigError(f"{where}: target {ref!r}: {qualname!r} is not a function or class name")
    if location.endswith(".py") or "/" in location or "\\" in location:
        return None, location, qualname
    if not location or not all(part.isidentifier() for part in location.split(".")):
        raise VerifyConfigError(f"{where}: target {ref!r}: {location!r} is not a module like 'pkg.module'")
    return location, None, qualname


def _string_list(values, where: str) -> list:
    if isinstance(values, str):
        values = [v.strip() for v in values.split(",") if v.strip()]
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise VerifyConfigError(f"{where}: expected a list of strings, got {values!r}")
    return values


def _flag(value, where: str) -> bool:
    if not isinstance(value, bool):
        raise VerifyConfigError(f"{where}: must be true or false")
    return value


def _number(value, where: str, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (positive and value <= 0):
        raise VerifyConfigError(f"{where}: expected a {'positive ' if positive else ''}number, got {value!r}")
    return float(value)


def _check_keys(table: dict, allowed, where: str) -> None:
    if not isinstance(table, dict):
        raise VerifyConfigError(f"{where}: must be a table, got {table!r}")
    for key in table:
        if key not in allowed:
            raise VerifyConfigError(f"{where}: unknown key {key!r}{_did_you_mean(key, allowed)}")


# ---- the table ----

_RUN_KEYS = ("modes", "resolutions", "dtypes", "dynamic", "checks", "timeout", "check-timeout", "jobs", "device",
             "atol", "rtol", "fp64-multiplier", "seed", "targets", "full", "fail-on", "budget", "gradients",
             "allow-nothing-verified")
_TARGET_KEYS = ("target", "args", "kwargs", "inputs", "resolutions", "modes", "dtypes", "checks", "codes",
                "train", "mutate", "atol", "rtol", "fp64-multiplier", "timeout", "range", "gradients")
_INPUT_KEYS = ("shape", "dtype", "range", "fill", "value", "name", "dict")


def parse_verify_table(table: Optional[dict], where: str = "[tool.compile-lint.verify]",
                       root: str = ".") -> VerifyOptions:
    """Validate the raw table. `root` is the folder of the config file: relative target
    paths and module imports start there."""
    options = VerifyOptions()
    if not table:
        return options
    _check_keys(table, _RUN_KEYS, where)
    if "modes" in table:
        options.modes = parse_modes(table["modes"], f"{where} modes")
    if "resolutions" in table:
        options.resolutions = [parse_resolution(r, f"{where} resolutions") for r in _list(table["resolutions"], where)]
    if "dtypes" in table:
        options.dtypes = parse_dtypes(table["dtypes"], f"{where} dtypes")
    if "dynamic" in table:
        options.dynamic = parse_dynamic(table["dynamic"], f"{where} dynamic")
    if "checks" in table:
        options.checks = parse_checks(table["checks"], f"{where} checks")
    if "timeout" in table:
        options.timeout = _number(table["timeout"], f"{where} timeout")
    if "check-timeout" in table:
        options.check_timeout = _number(table["check-timeout"], f"{where} check-timeout")
    if "full" in table:
        options.full = _flag(table["full"], f"{where} full")
    if "fail-on" in table:
        options.fail_on = parse_fail_on(table["fail-on"], f"{where} fail-on")
    if "budget" in table:
        options.budget = parse_budget(table["budget"], f"{where} budget")
    if "gradients" in table:
        options.gradients = parse_gradients(table["gradients"], f"{where} gradients")
    if "allow-nothing-verified" in table:
        options.allow_nothing_verified = _flag(table["allow-nothing-verified"], f"{where} allow-nothing-verified")
    if "jobs" in table:
        options.jobs = int(_number(table["jobs"], f"{where} jobs"))
    if "device" in table:
        if table["device"] not in ("auto", "cpu", "cuda"):
            raise VerifyConfigError(f"{where} device: must be auto, cpu or cuda, got {table['device']!r}")
        options.device = table["device"]
    for key, attr in (("atol", "atol"), ("rtol", "rtol"), ("fp64-multiplier", "fp64_multiplier")):
        if key in table:
            setattr(options, attr, _number(table[key], f"{where} {key}"))
    if "seed" in table:
        options.seed = int(_number(table["seed"], f"{where} seed", positive=False))
    for index, entry in enumerate(_list(table.get("targets", []), f"{where} targets")):
        options.targets.append(parse_target_entry(entry, f"{where} targets[{index}]", root))
    return options


def _list(value, where: str) -> list:
    if not isinstance(value, list):
        raise VerifyConfigError(f"{where}: expected a list, got {value!r}")
    return value


def parse_target_entry(entry: dict, where: str, root: str = ".") -> TargetSpec:
    import os

    _check_keys(entry, _TARGET_KEYS, where)
    if "target" not in entry:
        raise VerifyConfigError(f"{where}: missing 'target = \"pkg.module:Name\"'")
    module, path, qualname = parse_target_ref(entry["target"], where)
    spec = TargetSpec(ref=entry["target"], qualname=qualname, module=module, import_root=os.path.abspath(root))
    if path is not None:
        spec.file = os.path.abspath(os.path.join(root, path))
        if not os.path.isfile(spec.file):
            raise VerifyConfigError(f"{where}: target {entry['target']!r}: no such file {spec.file}")
    spec.args = _list(entry.get("args", []), f"{where} args")
    if not isinstance(entry.get("kwargs", {}), dict):
        raise VerifyConfigError(f"{where} kwargs: expected a table")
    spec.kwargs = dict(entry.get("kwargs", {}))
    if "inputs" in entry:
        spec.inputs = [parse_input_spec(i, f"{where} inputs[{n}]") for n, i in enumerate(_list(entry["inputs"], where))]
    if "resolutions" in entry:
        spec.resolutions = [parse_resolution(r, f"{where} resolutions") for r in _list(entry["resolutions"], where)]
    if "modes" in entry:
        spec.modes = parse_modes(entry["modes"], f"{where} modes")
    if "dtypes" in entry:
        spec.dtypes = parse_dtypes(entry["dtypes"], f"{where} dtypes")
    if "checks" in entry:
        spec.checks = parse_checks(entry["checks"], f"{where} checks")
    if "codes" in entry:
        codes = _string_list(entry["codes"], f"{where} codes")
        bad = [c for c in codes if not re.fullmatch(r"CL\d{3}", c)]
        if bad:
            raise VerifyConfigError(f"{where} codes: {bad[0]!r} is not a lint code like 'CL103'")
        spec.codes = codes
    if "range" in entry:
        rng = _list(entry["range"], f"{where} range")
        if len(rng) != 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in rng) \
                or rng[0] > rng[1]:
            raise VerifyConfigError(f"{where} range: expected [low, high], got {rng!r}")
        spec.value_range, spec.range_reason = [float(rng[0]), float(rng[1])], "config"
    for key in ("train", "gradients"):
        if key in entry:
            setattr(spec, key, _flag(entry[key], f"{where} {key}"))
    if "mutate" in entry:
        if not isinstance(entry["mutate"], dict):
            raise VerifyConfigError(f"{where} mutate: expected a table of attribute = new value")
        spec.mutate = dict(entry["mutate"])
    for key, attr in (("atol", "atol"), ("rtol", "rtol"), ("fp64-multiplier", "fp64_multiplier"),
                      ("timeout", "timeout")):
        if key in entry:
            setattr(spec, attr, _number(entry[key], f"{where} {key}"))
    return spec


def parse_input_spec(entry, where: str) -> InputSpec:
    if not isinstance(entry, dict):
        # A bare literal: a non-tensor argument.
        return InputSpec(value=entry)
    _check_keys(entry, _INPUT_KEYS, where)
    spec = InputSpec(name=entry.get("name"))
    if "dict" in entry:
        if "shape" in entry or "value" in entry:
            raise VerifyConfigError(f"{where}: give 'dict' (a dict argument), 'shape' or 'value', not several")
        if not isinstance(entry["dict"], dict) or not entry["dict"]:
            raise VerifyConfigError(f"{where} dict: expected a table of key = {{ shape = [...] }}")
        spec.fields = {}
        for key, value in entry["dict"].items():
            sub = parse_input_spec(value, f"{where} dict.{key}")
            if sub.name:
                raise VerifyConfigError(f"{where} dict.{key}: a dict entry has no 'name'")
            spec.fields[key] = sub
        return spec
    if "value" in entry:
        if "shape" in entry:
            raise VerifyConfigError(f"{where}: give either 'shape' (a tensor) or 'value' (a literal), not both")
        spec.value = entry["value"]
        return spec
    if "shape" not in entry:
        raise VerifyConfigError(f"{where}: missing 'shape', e.g. shape = [1, 3, \"H\", \"W\"]")
    shape = _list(entry["shape"], f"{where} shape")
    for dim in shape:
        if not (isinstance(dim, int) and not isinstance(dim, bool) and dim >= 0 or dim in ("H", "W")):
            raise VerifyConfigError(f"{where} shape: {dim!r} is neither a size nor \"H\" / \"W\"")
    spec.shape = shape
    if "dtype" in entry:
        if entry["dtype"] not in INPUT_DTYPES:
            raise VerifyConfigError(f"{where} dtype: unknown {entry['dtype']!r}{_did_you_mean(entry['dtype'], INPUT_DTYPES)}")
        spec.dtype = entry["dtype"]
    if "range" in entry:
        rng = _list(entry["range"], f"{where} range")
        if len(rng) != 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in rng) or rng[0] > rng[1]:
            raise VerifyConfigError(f"{where} range: expected [low, high], got {rng!r}")
        spec.range = (float(rng[0]), float(rng[1]))
    if "fill" in entry:
        if entry["fill"] not in FILLS:
            raise VerifyConfigError(f"{where} fill: unknown {entry['fill']!r}{_did_you_mean(entry['fill'], FILLS)}; "
                                    f"choose from {', '.join(FILLS)}")
        spec.fill = entry["fill"]
    return spec


# ---- writing config back: entries to paste (valid TOML, tested by parsing them back) ----

def toml_value(value) -> str:
    """A value in TOML's inline syntax (what a config entry to paste needs)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    if value is None:
        return '""'
    return toml_value(str(value))


def _toml_key(key: str) -> str:
    return key if key.replace("-", "").replace("_", "").isalnum() else toml_value(key)


def input_table(spec: InputSpec) -> dict:
    """One input as the config writes it, without the keys that hold their defaults."""
    if spec.fields is not None:
        table = {"dict": {k: input_table(v) for k, v in spec.fields.items()}}
    elif spec.shape is None:
        table = {"value": spec.value}
    else:
        table = {"shape": list(spec.shape)}
        if spec.dtype != "float32":
            table["dtype"] = spec.dtype
        if tuple(spec.range) != (0.0, 1.0):
            table["range"] = [_plain_number(v) for v in spec.range]
        if spec.fill != "random":
            table["fill"] = spec.fill
    if spec.name:
        table["name"] = spec.name
    return table


def _plain_number(value: float):
    return int(value) if float(value).is_integer() else value


def inputs_entry(specs: list[InputSpec]) -> str:
    """`inputs = [...]` for a [[verify.targets]] entry: pasted back, it makes the same inputs."""
    return "inputs = [" + ", ".join(toml_value(input_table(s)) for s in specs) + "]"
