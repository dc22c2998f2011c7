"""The app's inference server: every model compiled once at start-up."""
import torch

from vapp.classifier import ResNet18
from vapp.compositing import Compositor
from vapp.grain import FilmGrain
from vapp.keying import LumaKey
from vapp.sr import RRDBNet
from vapp.style import TransformerNet
from vapp.unet import UNet
from vapp.vae import AutoencoderKL

TINY_VAE = {"ch": 8, "ch_mult": (1, 2), "z_channels": 4, "embed_dim": 4}


def build_upscaler(scale=4):
    return RRDBNet(3, 3, 16, 1, gc=8, scale=scale)


def load_vae(config=TINY_VAE):
    return AutoencoderKL(**config).eval()


def start(device="cpu"):
    models = {
        "upscale": torch.compile(build_upscaler(scale=2).to(device).eval()),
        "stylize": torch.compile(TransformerNet(width=8, blocks=2).eval()),
        "denoise": torch.compile(UNet(3, 3, base=8, depth=2).eval()),
        "vae": torch.compile(load_vae()),
        "classify": torch.compile(ResNet18().eval()),
        "composite": torch.compile(Compositor()),
        "key": torch.compile(LumaKey(0.6)),
        "grain": torch.compile(FilmGrain()),
    }
    return models
