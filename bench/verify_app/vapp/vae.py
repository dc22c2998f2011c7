"""A KL autoencoder in the shape of latent diffusion's AutoencoderKL: resnet blocks with
group norm and SiLU, strided-conv downsampling, a mid attention block, nearest
upsampling, and the posterior's mode as the latent (deterministic)."""
import torch
import torch.nn.functional as F
from torch import nn


def norm(channels):
    return nn.GroupNorm(num_groups=4, num_channels=channels, eps=1e-6, affine=True)


class ResnetBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.norm1 = norm(in_channels)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm2 = norm(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        self.skip = nn.Conv2d(in_channels, out_channels, 1) if in_channels != out_channels else nn.Identity()

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class AttnBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = norm(channels)
        self.qkv = nn.Conv2d(channels, 3 * channels, 1)
        self.proj = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, c, h * w).unbind(1)
        attn = torch.softmax(q.transpose(1, 2) @ k / c ** 0.5, dim=-1)
        out = (v @ attn.transpose(1, 2)).reshape(b, c, h, w)
        return x + self.proj(out)


class Downsample(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, stride=2)

    def forward(self, x):
        return self.conv(F.pad(x, (0, 1, 0, 1)))


class Upsample(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))


class Encoder(nn.Module):
    def __init__(self, ch, ch_mult, z_channels, in_channels=3):
        super().__init__()
        self.conv_in = nn.Conv2d(in_channels, ch, 3, padding=1)
        blocks, channels = [], ch
        for level, mult in enumerate(ch_mult):
            blocks.append(ResnetBlock(channels, ch * mult))
            channels = ch * mult
            if level != len(ch_mult) - 1:
                blocks.append(Downsample(channels))
        self.down = nn.Sequential(*blocks)
        self.mid = nn.Sequential(ResnetBlock(channels, channels), AttnBlock(channels), ResnetBlock(channels, channels))
        self.norm_out = norm(channels)
        self.conv_out = nn.Conv2d(channels, 2 * z_channels, 3, padding=1)

    def forward(self, x):
        h = self.mid(self.down(self.conv_in(x)))
        return self.conv_out(F.silu(self.norm_out(h)))


class Decoder(nn.Module):
    def __init__(self, ch, ch_mult, z_channels, out_channels=3):
        super().__init__()
        channels = ch * ch_mult[-1]
        self.conv_in = nn.Conv2d(z_channels, channels, 3, padding=1)
        self.mid = nn.Sequential(ResnetBlock(channels, channels), AttnBlock(channels), ResnetBlock(channels, channels))
        blocks = []
        for level, mult in reversed(list(enumerate(ch_mult))):
            blocks.append(ResnetBlock(channels, ch * mult))
            channels = ch * mult
            if level != 0:
                blocks.append(Upsample(channels))
        self.up = nn.Sequential(*blocks)
        self.norm_out = norm(channels)
        self.conv_out = nn.Conv2d(channels, out_channels, 3, padding=1)

    def forward(self, z):
        h = self.up(self.mid(self.conv_in(z)))
        return self.conv_out(F.silu(self.norm_out(h)))


class AutoencoderKL(nn.Module):
    def __init__(self, ch=128, ch_mult=(1, 2, 4, 4), z_channels=4, embed_dim=4):
        super().__init__()
        self.encoder = Encoder(ch, ch_mult, z_channels)
        self.decoder = Decoder(ch, ch_mult, z_channels)
        self.quant_conv = nn.Conv2d(2 * z_channels, 2 * embed_dim, 1)
        self.post_quant_conv = nn.Conv2d(embed_dim, z_channels, 1)

    def encode(self, x):
        mean, _logvar = self.quant_conv(self.encoder(x)).chunk(2, dim=1)
        return mean  # the posterior's mode

    def decode(self, z):
        return self.decoder(self.post_quant_conv(z))

    def forward(self, x):
        return self.decode(self.encode(x))
