"""The classes a project's YAML configurations name (analysis/reach/configured.py): the
reader, and a cached `check` that follows a YAML edit."""
import json
import os
import subprocess
import sys
import textwrap

from conftest import ROOT

from compile_lint.analysis.reach.configured import UNREAD, ConfiguredEntry, configured_targets, read_entries
from compile_lint.analysis.reach.declared import declarations_for
from compile_lint.config import Settings


def entries(text, path="configs/x.yaml"):
    return [(e.key, e.target, e.owner, e.hydra) for e in read_entries(textwrap.dedent(text), path)]


def test_keys_owners_and_the_two_spellings_of_a_target():
    assert entries("""
        model:
          target: ldm.models.diffusion.ddpm.LatentDiffusion   # a comment
          params:
            unet_config:
              target: "ldm.modules.openaimodel.UNetModel"
              params: {ch: 4}
            first_stage_config:
              target: 'ldm.models.autoencoder.AutoencoderKL'
        data:
          target: main.DataModuleFromConfig
        """) == [
        ("model", "ldm.models.diffusion.ddpm.LatentDiffusion", None, False),
        ("unet_config", "ldm.modules.openaimodel.UNetModel", "ldm.models.diffusion.ddpm.LatentDiffusion", False),
        ("first_stage_config", "ldm.models.autoencoder.AutoencoderKL", "ldm.models.diffusion.ddpm.LatentDiffusion", False),
        ("data", "main.DataModuleFromConfig", None, False),
    ]
    # Hydra: `_target_`, nested entries owned by the nearest entry around them
    assert entries("""
        model:
          _target_: sam2.modeling.sam2_base.SAM2Base
          image_encoder:
            _target_: sam2.modeling.backbones.image_encoder.ImageEncoder
            trunk:
              _target_: sam2.modeling.backbones.hieradet.Hiera
        """) == [
        ("model", "sam2.modeling.sam2_base.SAM2Base", None, True),
        ("image_encoder", "sam2.modeling.backbones.image_encoder.ImageEncoder", "sam2.modeling.sam2_base.SAM2Base", True),
        ("trunk", "sam2.modeling.backbones.hieradet.Hiera", "sam2.modeling.backbones.image_encoder.ImageEncoder", True),
    ]


def test_an_entry_knows_the_key_around_it_or_its_files_group():
    """`parent`: the key of the mapping around the one that names a class; for a file's
    top-level mapping, the file's folder (a Hydra config group): `cfg.model.instance` asks
    the `instance` entries of the `model` group, not those of `model/network/*.yaml`."""
    found = read_entries(textwrap.dedent("""
        instance:
          _target_: src.models.module.Module
          head:
            _target_: src.models.heads.Head
        """), "configs/model/classif.yaml")
    assert [(e.key, e.parent) for e in found] == [("instance", "model"), ("head", "instance")]
    found = read_entries("instance:\n  _target_: src.nets.Fine\n", "configs/model/network/fine.yaml")
    assert [(e.key, e.parent) for e in found] == [("instance", "network")]
    assert [e.parent for e in read_entries("_target_: models.unet.UNet\n", "conf/model/unet.yaml")] == [None]


def test_group_files_list_items_and_hyperpyyaml_tags():
    # a Hydra config-group file sets `_target_` at its top: the group is its folder
    assert entries("_target_: models.unet.UNet\nch: 4\n", "conf/model/unet.yaml") == [("model", "models.unet.UNet", None, True)]
    # a list of mappings: the entries sit past the dash
    assert entries("""
        callbacks:
          - target: pl.callbacks.ModelCheckpoint
            every: 1
        """) == [("callbacks", "pl.callbacks.ModelCheckpoint", None, False)]
    # hyperpyyaml (CosyVoice, SpeechBrain): `key: !new:pkg.Class`, built before its owner
    assert entries("""
        flow: !new:cosyvoice.flow.flow.MaskedDiffWithXvec
            encoder: !new:cosyvoice.transformer.encoder.ConformerEncoder
                output_size: 512
        """) == [
        ("flow", "cosyvoice.flow.flow.MaskedDiffWithXvec", None, True),
        ("encoder", "cosyvoice.transformer.encoder.ConformerEncoder", "cosyvoice.flow.flow.MaskedDiffWithXvec", True),
    ]


def test_what_is_no_dotted_class_name_is_not_an_entry():
    assert entries("""
        other:
          target: 0.5
        plain:
          target: UNet
        flow: {target: a.b.C}
        """) == []


def test_a_target_the_reader_cannot_follow_is_an_entry_not_seen():
    # an interpolation, and a name relative to a package the loader computes (Hunyuan3D's
    # ComfyUI wrapper): kept, marked, so that what the key builds is not all seen
    assert entries("""
        model:
          target: ${oc.env:MODEL}
        vae:
          target: .hy3dgen.shapegen.models.ShapeVAE
        """) == [("model", UNREAD + "${oc.env:MODEL}", None, False),
                 ("vae", UNREAD + ".hy3dgen.shapegen.models.ShapeVAE", None, False)]


def test_only_the_projects_own_yaml_is_read(tmp_path):
    for rel in ("configs/a.yaml", ".git/b.yaml", "venv/lib/c.yaml", "node_modules/d.yml", "deep/x/e.yml"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"model:\n  target: pkg.{path.stem}.Net\n")
    (tmp_path / "big.yaml").write_text("model:\n  target: pkg.big.Net\n" + "# pad\n" * 200_000)
    found = configured_targets([str(tmp_path)])
    assert sorted(e.target for e in found.entries) == ["pkg.a.Net", "pkg.e.Net"]
    assert isinstance(found.entries[0], ConfiguredEntry) and found.entries[0].where.endswith("a.yaml:2")


def test_the_region_index_key_follows_the_yaml(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text("import torch\n")
    yaml = tmp_path / "configs" / "m.yaml"
    yaml.parent.mkdir()
    settings = Settings(root=str(tmp_path))
    yaml.write_text("model:\n  target: pkg.nets.Net\n")
    first = declarations_for([(settings, str(tmp_path / "train.py"))])
    again = declarations_for([(settings, str(tmp_path / "train.py"))])
    assert again.key() == first.key()
    # the key is the files' signatures: a warm run stats them and reads none
    assert again.configured._entries is None and [e.target for e in again.configured.entries] == ["pkg.nets.Net"]
    yaml.write_text("model:\n  target: pkg.nets.Other\n")
    assert declarations_for([(settings, str(tmp_path / "train.py"))]).key() != first.key()


NETS = """
import torch
from torch import nn


class Branchy(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


class Plain(nn.Module):
    def forward(self, x):
        return x * 2
"""

BUILD = """
import importlib

import torch
from omegaconf import OmegaConf


def instantiate_from_config(config):
    module, cls = config["target"].rsplit(".", 1)
    return getattr(importlib.import_module(module), cls)(**config.get("params", dict()))


model = torch.compile(instantiate_from_config(OmegaConf.load("configs/m.yaml").model))
"""


def test_a_cached_check_follows_an_edit_of_the_yaml(tmp_path):
    """Default options (the cache on): the finding in the class the YAML names comes and
    goes with the YAML, though no Python file changed."""
    (tmp_path / "pyproject.toml").write_text("[tool.compile-lint]\nselect = ['CL508']\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "nets.py").write_text(NETS)
    (tmp_path / "build.py").write_text(BUILD)
    (tmp_path / "configs").mkdir()
    yaml = tmp_path / "configs" / "m.yaml"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def rows():
        proc = subprocess.run([sys.executable, "-m", "compile_lint", "check", ".", "--output-format", "json"],
                              capture_output=True, text=True, cwd=str(tmp_path), env=env)
        assert proc.returncode in (0, 1), proc.stderr
        return sorted((os.path.basename(f["filename"]), f["location"]["row"], f["code"]) for f in json.loads(proc.stdout))

    yaml.write_text("model:\n  target: pkg.nets.Branchy\n")
    assert rows() == [("nets.py", 8, "CL508")]
    yaml.write_text("model:\n  target: pkg.nets.Plain\n")
    assert rows() == []
    yaml.write_text("model:\n  target: pkg.nets.Branchy\n")
    assert rows() == [("nets.py", 8, "CL508")]
    assert (tmp_path / ".compile_lint_cache").is_dir()


def test_a_configuration_kept_elsewhere_still_reads_the_yaml_beside_the_code(tmp_path):
    """`check --config ci/lint.toml src/` from another folder: the project root is the
    configuration's folder, which holds none of the files; their YAML is read."""
    code, ci = tmp_path / "code", tmp_path / "ci"
    (code / "configs").mkdir(parents=True)
    ci.mkdir()
    (code / "train.py").write_text("import torch\n")
    (code / "configs" / "m.yaml").write_text("model:\n  target: nets.Net\n")
    (ci / "lint.toml").write_text("[tool.compile-lint]\n")
    settings = Settings(root=str(ci), source=str(ci / "lint.toml"))
    found = declarations_for([(settings, str(code / "train.py"))], [str(code / "train.py")]).configured
    assert [e.target for e in found.entries] == ["nets.Net"]
    # the files under the root: its YAML only, not a folder above it
    (ci / "m.yaml").write_text("model:\n  target: other.Net\n")
    inside = declarations_for([(settings, str(ci / "x.py"))], [str(ci / "x.py")]).configured
    assert [e.target for e in inside.entries] == ["other.Net"]


def test_every_scalar_is_a_value_of_its_key_and_what_is_not_read_is_none():
    from compile_lint.analysis.reach.configured import read_names

    assert read_names(textwrap.dedent("""
        MODEL:
          NAME: DDRNet         # the model
          BACKBONE: "MiT-B0"
          PRETRAINED: checkpoints/backbones/mit_b0.pth
          DEPTH: 18
        model: ResNet34
        amp: true
        note: a sentence, not a name
        dataset: null
        tags: [a, b]
        """)) == [("MODEL", "NAME", "DDRNet"), ("MODEL", "BACKBONE", "MiT-B0"),
                  ("MODEL", "PRETRAINED", "checkpoints/backbones/mit_b0.pth"), ("MODEL", "DEPTH", "18"),
                  (None, "model", "ResNet34"), (None, "amp", "true"), (None, "note", "a sentence, not a name"),
                  (None, "dataset", "null"), (None, "tags", None)]


def test_a_key_whose_entries_are_not_all_read_is_partial(tmp_path):
    """A YAML key that one file fills with a class the reader follows and another with a
    name it cannot (relative to a package a loader computes): the site is partial, with a
    reason, not resolved to the one entry read (Hunyuan3D's ComfyUI wrapper, whose training
    configs gave the compiled denoiser's key a class it never builds)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "nets.py").write_text(NETS)
    # which file a run loads is the command line's choice: every file's entries under the key
    (tmp_path / "build.py").write_text(BUILD.replace('OmegaConf.load("configs/m.yaml")', "OmegaConf.load(sys.argv[1])")
                                       .replace("import importlib\n", "import importlib\nimport sys\n"))
    (tmp_path / "configs").mkdir()
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def site():
        proc = subprocess.run([sys.executable, "-m", "compile_lint", "regions", "--no-cache", ".", "--output-format", "json"],
                              capture_output=True, text=True, cwd=str(tmp_path), env=env)
        assert proc.returncode == 0, proc.stderr
        found = [s for s in json.loads(proc.stdout)["sites"] if s["path"] == "build.py"]
        assert len(found) == 1
        return found[0]["resolution"], [t["qualname"] for t in found[0]["targets"]], found[0].get("unresolved")

    (tmp_path / "configs" / "m.yaml").write_text("model:\n  target: pkg.nets.Plain\n")
    assert site() == ("resolved", ["Plain"], None)
    (tmp_path / "configs" / "other.yaml").write_text("model:\n  target: .pkg.nets.Branchy\n")
    resolution, targets, why = site()
    assert (resolution, targets) == ("partial", ["Plain"])
    assert "`.pkg.nets.Branchy` under `model`" in why
