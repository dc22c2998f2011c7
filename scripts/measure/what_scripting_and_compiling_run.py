"""What `torch.jit.script` and `torch.compile` of a module run, for two idioms the region
index does not follow yet (bench/dev39, bench/dev13; issue 19's closing notes):

1. A module that defines no `forward`, holding a submodule: `torch.jit.script` compiles
   every submodule's `forward`, called or not. The outer module scripts (it has no
   `forward` of its own), and a submodule whose `forward` holds an `import` fails it.
2. `self.forward = <one of the class's methods>` set in `__init__`: the instance attribute
   shadows the class's `forward`, and both compiling and scripting run the method it holds.

Run: python scripts/measure/what_scripting_and_compiling_run.py   (torch 2.13 CPU)
Measured on 2.13 (scripts/measure/out/what_scripting_and_compiling_run.txt):
  no forward, scripted: ok, submodule forward compiled: True
  no forward, a submodule with an import: UnsupportedNodeError
  self.forward = self.forward_b, scripted: [2.0, 2.0] (forward_b doubles)
  self.forward = self.forward_inference, compiled: [4.0, 4.0] (forward_inference adds 3)
"""
import torch
from torch import nn


class Sub(nn.Module):
    def forward(self, x):
        return x * 2


class Unscriptable(nn.Module):
    def forward(self, x):
        import os  # TorchScript has no import statement
        return x


class NoForward(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.net = inner

    def detect(self, x):
        return self.net(x)


class Switch(nn.Module):
    def __init__(self, method="b"):
        super().__init__()
        table = {"a": self.forward_a, "b": self.forward_b}
        self.forward = table[method]

    def forward_a(self, x):
        return x + 1

    def forward_b(self, x):
        return x * 2


class Infer(nn.Module):
    def __init__(self):
        super().__init__()
        self.forward = self.forward_inference

    def forward(self, x):
        return x - 1

    def forward_inference(self, x):
        return x + 3


def main():
    x = torch.ones(2)
    scripted = torch.jit.script(NoForward(Sub()))
    print("no forward, scripted: ok, submodule forward compiled:", "forward" in scripted.net.code)
    try:
        torch.jit.script(NoForward(Unscriptable()))
        print("no forward, a submodule with an import: ok")
    except Exception as e:  # (torch.jit.frontend.UnsupportedNodeError)
        print("no forward, a submodule with an import:", type(e).__name__)
    print("self.forward = self.forward_b, scripted:", torch.jit.script(Switch())(x).tolist(), "(forward_b doubles)")
    compiled = torch.compile(Infer(), backend="eager")
    print("self.forward = self.forward_inference, compiled:", compiled(x).tolist(), "(forward_inference adds 3)")


if __name__ == "__main__":
    main()
