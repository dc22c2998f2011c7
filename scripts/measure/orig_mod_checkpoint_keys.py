"""`_orig_mod.` checkpoint keys: what `state_dict()` of a compiled module holds, and
what loading it back does.

Run: python scripts/measure/orig_mod_checkpoint_keys.py   (torch 2.13 CPU, backend="eager")
Cases: `m = torch.compile(net)` saved and loaded strictly (and with strict=False) into a
fresh plain model; the compiled model loading plain keys; EMA-style code that matches
keys of a plain copy against the compiled module's state_dict; torch.optim.swa_utils.
AveragedModel of the compiled module; `net.compile()` in place; an owner module that
holds a compiled submodule (`self.net = torch.compile(Net())`); `m._orig_mod.state_dict()`.
Also reads OptimizedModule in the installed torch and in 2.14.1/2.15.0 wheels: does any
release strip the prefix (a state_dict hook on OptimizedModule)?
"""
import copy
import io
import warnings

import torch
from torch.optim.swa_utils import AveragedModel

from measure_env import header, torch_sources, verdict

warnings.filterwarnings("ignore")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x)


class Owner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.compile(Net(), backend="eager")

    def forward(self, x):
        return self.net(x)


def roundtrip(state):
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer)


def strict_load(target, state) -> str:
    try:
        target.load_state_dict(state)
        return "loads"
    except RuntimeError as error:
        lines = [line.strip() for line in str(error).splitlines()[1:]]
        return "RuntimeError: " + " ".join(lines)


if __name__ == "__main__":
    header("_orig_mod. checkpoint keys")
    compiled = torch.compile(Net(), backend="eager")
    compiled(torch.ones(1, 4))
    keys = list(compiled.state_dict())
    print(f"torch.compile(net).state_dict() keys: {keys}")
    saved = roundtrip(compiled.state_dict())
    print(f"Net().load_state_dict(saved)            -> {strict_load(Net(), saved)}")
    fresh = Net()
    before = fresh.proj.weight.clone()
    result = fresh.load_state_dict(saved, strict=False)
    print(f"Net().load_state_dict(saved, strict=False) -> missing {result.missing_keys}, "
          f"unexpected {result.unexpected_keys}, weights changed: {not torch.equal(before, fresh.proj.weight)}")
    plain = Net().state_dict()
    print(f"torch.compile(Net()).load_state_dict(plain keys) -> {strict_load(torch.compile(Net()), plain)}")

    ema = copy.deepcopy(Net())
    model_state = compiled.state_dict()
    matched = [k for k in ema.state_dict() if k in model_state]
    print(f"EMA: keys of a plain copy found in compiled.state_dict(): {len(matched)} of {len(ema.state_dict())}")
    try:
        with torch.no_grad():
            for name, value in ema.state_dict().items():
                value.mul_(0.9).add_(model_state[name], alpha=0.1)
        print("EMA: update by key: ran")
    except KeyError as error:
        print(f"EMA: update by key: KeyError {error}")
    averaged = AveragedModel(compiled)
    averaged.update_parameters(compiled)
    print(f"AveragedModel(compiled).state_dict() keys: {list(averaged.state_dict())}")
    print(f"compiled.named_parameters(): {[name for name, _ in compiled.named_parameters()]}")

    in_place = Net()
    in_place.compile(backend="eager")
    in_place(torch.ones(1, 4))
    in_place_keys = list(in_place.state_dict())
    print(f"net.compile() in place: type {type(in_place).__name__}, keys {in_place_keys}, "
          f"Net().load_state_dict -> {strict_load(Net(), roundtrip(in_place.state_dict()))}")
    owner_keys = list(Owner().state_dict())
    print(f"Owner holding self.net = torch.compile(Net()): keys {owner_keys}")
    print(f"compiled._orig_mod.state_dict(): keys {list(compiled._orig_mod.state_dict())}, "
          f"Net().load_state_dict -> {strict_load(Net(), roundtrip(compiled._orig_mod.state_dict()))}")

    print("OptimizedModule state_dict hooks by release (a hook could strip the prefix):")
    for version, text in torch_sources("torch/_dynamo/eval_frame.py").items():
        start = text.index("class OptimizedModule")
        end = text.index("\nclass ", start + 1)
        body = text[start:end]
        hooks = [word for word in ("state_dict", "_register_state_dict_hook", "_register_load_state_dict_pre_hook")
                 if word in body]
        print(f"  {version}: OptimizedModule mentions {hooks or 'no state_dict hook'}")
    for version, text in torch_sources("torch/nn/modules/module.py").items():
        print(f"  {version}: nn.Module.load_state_dict knows the prefix: {'_orig_mod' in text}")

    prefixed = all(k.startswith("_orig_mod.") for k in keys) and all(k.startswith("net._orig_mod.") for k in owner_keys)
    verdict(prefixed and "RuntimeError" in strict_load(Net(), saved) and not matched,
            f"keys {keys[0]!r}..., strict load into Net fails, EMA matches {len(matched)} of "
            f"{len(ema.state_dict())} keys, strict=False loads nothing; net.compile() keeps {in_place_keys[0]!r}")
