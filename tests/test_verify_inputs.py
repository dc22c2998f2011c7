"""Inputs verify makes by itself, and every config entry it suggests, pasted back.

Each suggestion (the inputs a report shows, the entry to add for an argument it cannot
make, the constructor arguments it needs, the inputs that eager rejects at every size) is
parsed back as the project's config file would be: valid TOML that `parse_verify_table`
accepts, and where verify could make the inputs, the same inputs again. Eager calls only
(no compile): fast.
"""
import json
import os
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from compile_lint.verify.config import InputSpec, inputs_entry, parse_verify_table  # noqa: E402
from compile_lint.verify.inputs import make_inputs, synthesise  # noqa: E402
from compile_lint.verify.loader import TargetProblem  # noqa: E402

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures", "verify")
SYNTAX = {"config_file": "pyproject.toml", "targets_table": "[[tool.compile-lint.verify.targets]]"}


def pasted(entry_text: str, tmp_path, target_file="m.py") -> list:
    """Parse an entry as pyproject.toml would hold it; the target specs it makes."""
    (tmp_path / target_file).write_text("x = 1\n")
    text = entry_text.replace('target = "m.py:', f'target = "{tmp_path / target_file}:')
    table = tomllib.loads(text)
    return parse_verify_table(table["tool"]["compile-lint"]["verify"], root=str(tmp_path)).targets


def round_trip(specs: list, tmp_path) -> list:
    """The report's `inputs = [...]`, pasted into an entry and parsed back."""
    entry = "[[tool.compile-lint.verify.targets]]\ntarget = \"m.py:T\"\n" + inputs_entry(specs) + "\n"
    (target,) = pasted(entry, tmp_path)
    return target.inputs


def runs(module, specs, size=(16, 16)):
    args, kwargs = make_inputs(specs, list(size), 0, "cpu")
    with torch.no_grad():
        module(*args, **kwargs)
    return True


class MaskedInpaint(nn.Module):
    """The image and its mask are concatenated into the first conv: 4 channels."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 3, 3, padding=1)

    def forward(self, image, mask):
        return self.conv(torch.cat([image, mask], 1))


class BatchModel(nn.Module):
    """Takes a data loader's dict."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, batch):
        return self.conv(batch["image"]) * batch["mask"]


class TokenModel(nn.Module):
    def __init__(self, vocab=50):
        super().__init__()
        self.embed = nn.Embedding(vocab, 8)
        self.head = nn.Linear(8, vocab)

    def forward(self, tokens):
        return self.head(self.embed(tokens))


class PatchViT(nn.Module):
    """A linear patch embedding (8x8 patches of RGB: 192 features) and a position
    embedding for a 4x4 grid: it takes 32x32 images only."""

    def __init__(self, patch=8, grid=4, dim=16):
        super().__init__()
        self.patch = patch
        self.embed = nn.Linear(patch * patch * 3, dim)
        self.pos_embedding = nn.Parameter(torch.randn(1, grid * grid + 1, dim))
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.head = nn.Linear(dim, 10)

    def forward(self, img):
        b, c, h, w = img.shape
        p = self.patch
        x = img.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1).reshape(b, (h // p) * (w // p), p * p * c)
        x = torch.cat([self.cls.expand(b, -1, -1), self.embed(x)], 1) + self.pos_embedding
        return self.head(x[:, 0])


def test_an_image_and_a_mask_concatenated_into_the_first_conv_share_its_channels(tmp_path):
    specs, sizes = synthesise(MaskedInpaint().eval(), "m.py:MaskedInpaint", "MaskedInpaint", SYNTAX)
    assert [s.shape for s in specs] == [[1, 3, "H", "W"], [1, 1, "H", "W"]] and sizes is None
    again = round_trip(specs, tmp_path)
    assert [s.to_json() for s in again] == [s.to_json() for s in specs] and runs(MaskedInpaint(), again)


def test_a_dict_argument_gets_the_keys_the_code_reads(tmp_path):
    specs, _ = synthesise(BatchModel().eval(), "m.py:BatchModel", "BatchModel", SYNTAX)
    (batch,) = specs
    assert set(batch.fields) == {"image", "mask"}
    assert batch.fields["image"].shape == [1, 3, "H", "W"] and batch.fields["mask"].shape == [1, 1, "H", "W"]
    assert "dict = {" in inputs_entry(specs)
    again = round_trip(specs, tmp_path)
    assert again[0].to_json() == batch.to_json() and runs(BatchModel(), again)


def test_token_ids_for_an_embedding(tmp_path):
    specs, _ = synthesise(TokenModel().eval(), "m.py:TokenModel", "TokenModel", SYNTAX)
    (tokens,) = specs
    assert tokens.dtype == "int64" and tokens.shape == [1, 16] and tokens.range == (0.0, 49.0)
    again = round_trip(specs, tmp_path)
    assert again[0].to_json() == tokens.to_json() and runs(TokenModel(), again)


def test_a_patch_model_is_fed_an_image_at_the_size_its_positions_fit(tmp_path):
    specs, sizes = synthesise(PatchViT().eval(), "m.py:PatchViT", "PatchViT", SYNTAX)
    assert [s.shape for s in specs] == [[1, 3, "H", "W"]]  # an image, not a [1, 192] vector
    assert sizes == [[32, 32]]
    assert runs(PatchViT(), round_trip(specs, tmp_path), (32, 32))


def test_an_argument_it_cannot_make_is_named_with_an_entry_that_parses(tmp_path):
    sys.path.insert(0, FIXTURES)
    try:
        import lut_grade
    finally:
        sys.path.remove(FIXTURES)
    with pytest.raises(TargetProblem) as problem:
        synthesise(lut_grade.LutGrade(), "m.py:LutGrade", "LutGrade", SYNTAX)
    message = str(problem.value)
    assert problem.value.skipped and "cannot synthesise 'lut'" in message
    entry = message.split("add to pyproject.toml:\n", 1)[1]
    assert entry.startswith("[[tool.compile-lint.verify.targets]]\n")
    (target,) = pasted(entry, tmp_path)
    assert target.inputs[0].shape == [1, 3, "H", "W"] and len(target.inputs) == 2


def test_the_constructor_arguments_it_needs_come_as_an_entry_that_parses_and_builds(tmp_path):
    from compile_lint.verify.loader import LoadedTarget, construct

    class Upscaler(nn.Module):
        def __init__(self, in_channels, features, scale):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, features * scale * scale, 3, padding=1)

        def forward(self, x):
            return self.conv(x)

    with pytest.raises(TargetProblem) as problem:
        construct(LoadedTarget(Upscaler, True), [], {}, "Upscaler", SYNTAX, "m.py:Upscaler")
    entry = str(problem.value).split("check them):\n", 1)[1]
    (target,) = pasted(entry, tmp_path)
    assert target.kwargs == {"in_channels": 3, "features": 16, "scale": 2}
    Upscaler(**target.kwargs)


def test_inputs_eager_rejects_at_every_size_come_as_an_entry_that_parses(tmp_path):
    from compile_lint.verify.worker import Events, run

    (tmp_path / "strict.py").write_text(textwrap.dedent("""
        import torch
        from torch import nn


        class NeedsFive(nn.Module):
            def forward(self, x):
                if x.shape[1] != 5:
                    raise ValueError("five channels")
                return x * 2
    """))
    events_path = tmp_path / "events.jsonl"
    job = {"target": {"ref": "m.py:NeedsFive", "qualname": "NeedsFive", "file": str(tmp_path / "strict.py"),
                      "codes": [], "args": [], "kwargs": {}},
           "options": {"device": "cpu", "resolutions": [[16, 16], [17, 23]], "seed": 0, **SYNTAX}, "steps": []}
    run(job, Events(str(events_path)))
    checks = [json.loads(line)["result"] for line in events_path.read_text().splitlines()
              if json.loads(line).get("event") == "check"]
    (last,) = [c for c in checks if c["name"] == "inputs"]
    assert last["verdict"] == "eager-fails"
    entry = last["message"].split("add to pyproject.toml:\n", 1)[1]
    (target,) = pasted(entry, tmp_path)
    assert target.inputs[0].shape == [1, 3, "H", "W"] and target.resolutions == [[16, 16], [17, 23]]


def test_the_two_frame_and_image_cases_still_hold():
    sys.path.insert(0, os.path.join(FIXTURES, "clean"))
    sys.path.insert(0, FIXTURES)
    try:
        from flow_warp import FlowInterpolator
        import pixel_zoom
    finally:
        sys.path.pop(0)
        sys.path.pop(0)
    specs, _ = synthesise(FlowInterpolator().eval(), "flow_warp.py:FlowInterpolator", "FlowInterpolator")
    assert [s.shape for s in specs] == [[1, 3, "H", "W"], [1, 3, "H", "W"]]
    specs, _ = synthesise(pixel_zoom.PixelArtZoom().eval(), "pixel_zoom.py:PixelArtZoom", "PixelArtZoom")
    assert [s.shape for s in specs] == [[1, 3, "H", "W"]]
    assert InputSpec(shape=[1, 3, "H", "W"]).describe() == "float32[1x3xHxW] random in [0, 1]"
