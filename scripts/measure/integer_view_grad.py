"""CL304: a `torch.where` whose result only reaches integer tensors reaches no backward pass.

Run: python scripts/measure/integer_view_grad.py   (torch 2.13 CPU)

Forge's gguf quantizers (`quantize_blocks_pytorch`) compute `inv = torch.where(d == 0, 0, 1.0 / d)`
and use `inv` only to build integer codes: `torch.trunc(blocks * inv + 8.5).clip(0, 15).to(torch.uint8)`,
packed with bitwise ops into item stores of a uint8 buffer, and the scale reinterpreted as bytes with
`d.to(torch.float16).view(torch.uint8)`. Printed: requires_grad of each of those values for an input
that requires grad. All are False, so no backward pass runs through the where's unselected branch.
"""
import torch


def quantize(blocks):
    d = blocks.abs().amax(dim=-1, keepdim=True) / -8
    inv = torch.where(d == 0, torch.tensor(0.0), 1.0 / d)
    codes = torch.trunc(blocks * inv + 8.5).clip(0, 15).to(torch.uint8)
    packed = torch.zeros((blocks.shape[0], 1), dtype=torch.uint8)
    packed[:, 0] = codes[:, 0] | (codes[:, 1] << 4)
    scale = d.to(torch.float16).view(torch.uint8)
    return {"inv": inv, "codes": codes, "packed": packed, "scale": scale, "out": torch.cat([scale, packed], dim=-1)}


if __name__ == "__main__":
    blocks = torch.tensor([[0.0, 0.0], [1.0, -2.0]], requires_grad=True)
    for name, value in quantize(blocks).items():
        print(f"{name}: dtype {value.dtype}, requires_grad {value.requires_grad}")
