"""Run CL513's fixtures (fixtures/rules/CL513/hazard.py and clean.py) compiled with
backend="eager" and count what their Grad-CAM hooks captured.

Run: python scripts/measure/cl513_fixture_hooks.py   (torch 2.13 CPU)
hazard.py registers a forward hook on a submodule after the warm-up call and a full
backward hook on the torch.compile wrapper; clean.py registers both on the module
before compiling. Eagerly both would capture 2 activations (warm-up and the real call)
and 1 gradient.
"""
import importlib.util
import os
import warnings

import torch

from measure_env import header, verdict

warnings.filterwarnings("ignore")
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "rules", "CL513")

if __name__ == "__main__":
    header("CL513 fixtures run compiled")
    compile_ = torch.compile
    torch.compile = lambda module, **kw: compile_(module, backend="eager", **kw)
    captured = {}
    for name in ("hazard", "clean"):
        torch.compiler.reset()
        spec = importlib.util.spec_from_file_location(name, os.path.join(FIXTURES, f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        activations, gradients = module.grad_cam(torch.rand(4, 3, 8, 8, requires_grad=True), 1)
        captured[name] = (len(activations), len(gradients))
        print(f"{name}.py: {len(activations)} activations, {len(gradients)} gradients captured")
    torch.compile = compile_
    verdict(captured["hazard"] == (0, 0) and captured["clean"] == (2, 1),
            f"hazard.py captured {captured['hazard']}, clean.py {captured['clean']} (activations, gradients)")
