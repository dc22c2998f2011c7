"""Does `torch.export.export` (and `torch.jit.trace`) bake the module's train/eval mode?

Run: python scripts/measure/export_train_mode.py   (torch 2.13 CPU)
Net = BatchNorm1d(4) then Dropout(0.5). A freshly built module is in train mode
(`training` True) until `.eval()`. Exported (or traced) without `.eval()`, the result
is compared with the eager module in eval mode: max diff and the share of zeroed
outputs (dropout), and whether the running statistics move when the exported module
runs. Then `.eval()` on `ep.module()` and on the traced module: does it switch? Also
reads exported_program.py and the ONNX exporter's _compat.py (the onnx package is not
installed here, so torch.onnx.export is read, not run) of the installed torch and of
2.14.1/2.15.0 wheels.
"""
import warnings

import torch

from measure_env import header, torch_sources, verdict

warnings.filterwarnings("ignore")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.BatchNorm1d(4)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.norm(x))


def compare(name, run, reference, x):
    out = run(x)
    diff = (out - reference).abs().max().item()
    zeros = (out == 0).float().mean().item()
    print(f"{name:52} max diff vs eager eval {diff:.4g}, zeroed {zeros:.0%}")
    return diff


if __name__ == "__main__":
    header("torch.export / torch.jit.trace bake train or eval mode")
    torch.manual_seed(0)
    x = torch.randn(8, 4)
    net = Net()
    print(f"Net() built: training = {net.training}")
    exported = torch.export.export(net, (x,)).module()
    traced = torch.jit.trace(Net(), (x,), check_trace=False)
    reference_net = Net().eval()
    reference = reference_net(x)
    results = {}
    results["export, train mode"] = compare("torch.export.export(Net()) without .eval()", exported, reference, x)
    stats = exported.state_dict()
    before = [v.clone() for k, v in stats.items() if "running_mean" in k]
    exported(x)
    after = [v for k, v in exported.state_dict().items() if "running_mean" in k]
    print(f"{'':52} running_mean moved on a call: {not torch.equal(before[0], after[0])}")
    try:
        exported.eval()
        print("ep.module().eval(): switched")
    except NotImplementedError as error:
        print(f"ep.module().eval(): NotImplementedError: {error}")
    results["trace, train mode"] = compare("torch.jit.trace(Net()) without .eval()", traced, reference, x)
    traced.eval()
    results["trace, .eval() after"] = compare("  ...then traced.eval()", traced, reference, x)
    ok = Net().eval()
    results["export, eval mode"] = compare("torch.export.export(Net().eval())",
                                           torch.export.export(ok, (x,)).module(), reference, x)
    results["trace, eval mode"] = compare("torch.jit.trace(Net().eval())",
                                          torch.jit.trace(Net().eval(), (x,)), reference, x)
    print("ExportedProgram.module() train()/eval() by release:")
    for version, text in torch_sources("torch/export/exported_program.py").items():
        print(f"  {version}: raises 'Calling eval() is not supported yet.': "
              f"{'Calling eval() is not supported yet.' in text}")
    print("torch.onnx.export (dynamo exporter, the default) on a module in train mode, by release:")
    for version, text in torch_sources("torch/onnx/_internal/exporter/_compat.py").items():
        print(f"  {version}: warns 'Exporting a model while it is in training mode': "
              f"{'Exporting a model while it is in training mode' in text}")
    verdict(results["export, train mode"] > 0 and results["export, eval mode"] == 0,
            f"exported without .eval(): diff {results['export, train mode']:.3g} (dropout and batch statistics "
            f"baked), .eval() afterwards raises; traced without .eval(): {results['trace, train mode']:.3g}, after "
            f"traced.eval() {results['trace, .eval() after']:.3g}; with .eval() before: export "
            f"{results['export, eval mode']:.3g}, trace {results['trace, eval mode']:.3g}")
