"""Fast neural style transfer's image transformation network (reflection-padded convs,
instance norm, residual blocks, upsample-then-conv decoding)."""
import torch
import torch.nn.functional as F
from torch import nn


class ConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.pad = nn.ReflectionPad2d(kernel_size // 2)
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        return self.conv(self.pad(x))


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = ConvLayer(channels, channels, 3, 1)
        self.in1 = nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, 3, 1)
        self.in2 = nn.InstanceNorm2d(channels, affine=True)

    def forward(self, x):
        out = F.relu(self.in1(self.conv1(x)))
        return self.in2(self.conv2(out)) + x


class UpsampleConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, upsample=None):
        super().__init__()
        self.upsample = upsample
        self.conv = ConvLayer(in_channels, out_channels, kernel_size, 1)

    def forward(self, x):
        if self.upsample:
            x = F.interpolate(x, mode="nearest", scale_factor=self.upsample)
        return self.conv(x)


class TransformerNet(nn.Module):
    def __init__(self, width=32, blocks=5):
        super().__init__()
        self.conv1 = ConvLayer(3, width, 9, 1)
        self.in1 = nn.InstanceNorm2d(width, affine=True)
        self.conv2 = ConvLayer(width, 2 * width, 3, 2)
        self.in2 = nn.InstanceNorm2d(2 * width, affine=True)
        self.res = nn.Sequential(*[ResidualBlock(2 * width) for _ in range(blocks)])
        self.deconv1 = UpsampleConvLayer(2 * width, width, 3, upsample=2)
        self.in3 = nn.InstanceNorm2d(width, affine=True)
        self.deconv2 = ConvLayer(width, 3, 9, 1)

    def forward(self, x):
        y = F.relu(self.in1(self.conv1(x)))
        y = F.relu(self.in2(self.conv2(y)))
        y = self.res(y)
        y = F.relu(self.in3(self.deconv1(y)))
        return self.deconv2(y)
