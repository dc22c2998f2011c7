"""`bool()` of a compiled module (`if model:`, `model or default`, `not model`).

Run: python scripts/measure/compiled_module_bool.py   (torch 2.13 CPU)
For a user-defined module (no `__len__`), an empty and a full nn.ModuleList, an
nn.Sequential and an nn.Linear: bool() of the module, of `torch.compile(module)`, and
of the module after `module.compile()` in place. Also reads OptimizedModule in the
installed torch and 2.14.1/2.15.0 wheels: does it define `__bool__` / `__len__`?
"""
import re
import warnings

import torch

from measure_env import header, torch_sources, verdict

warnings.filterwarnings("ignore")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x)


MODULES = {
    "user module Net()": Net,
    "nn.ModuleList() (empty)": torch.nn.ModuleList,
    "nn.ModuleList([Linear])": lambda: torch.nn.ModuleList([torch.nn.Linear(2, 2)]),
    "nn.Sequential(Linear)": lambda: torch.nn.Sequential(torch.nn.Linear(2, 2)),
    "nn.Linear(2, 2)": lambda: torch.nn.Linear(2, 2),
}


def truth(value) -> str:
    try:
        return str(bool(value))
    except Exception as error:  # what `if model:` raises
        return f"{type(error).__name__}: {error}"


if __name__ == "__main__":
    header("bool() of a compiled module")
    outcomes = {}
    for text, make in MODULES.items():
        plain = truth(make())
        compiled = truth(torch.compile(make()))
        module = make()
        module.compile()
        in_place = truth(module)
        outcomes[text] = (plain, compiled, in_place)
        print(f"{text:26} bool(m) {plain:6} bool(torch.compile(m)) {compiled:50} after m.compile() {in_place}")
    print("OptimizedModule truth methods by release:")
    for version, text in torch_sources("torch/_dynamo/eval_frame.py").items():
        start = text.index("class OptimizedModule")
        body = text[start:text.index("\nclass ", start + 1)]
        methods = re.findall(r"def (__bool__|__len__)\(", body)
        print(f"  {version}: defines {methods or 'neither'}")
    broken = [t for t, (plain, compiled, _) in outcomes.items() if plain != compiled]
    verdict(bool(broken), f"bool() differs for {broken}: user module {outcomes['user module Net()'][1]!r} "
            f"(plain {outcomes['user module Net()'][0]}); in-place .compile() keeps bool()")
