"""CL304: a sparse tensor carries a gradient only through its values, not its indices.

Run: python scripts/measure/sparse_values_grad.py   (torch 2.13 CPU)

PyTorch3D's mesh Laplacian (copied into EasyVolcap's `mesh_utils.py`, bench/fresh_reads
batch 28) builds an adjacency `A = torch.sparse.FloatTensor(idx, ones, (V, V))` with
`ones = torch.ones(...)`, takes degrees `deg = torch.sparse.sum(A, dim=1).to_dense()` and
then `torch.where(deg0 > 0.0, 1.0 / deg0, deg0)`. Printed: requires_grad of the degrees and
of the where, for integer indices (indices are never differentiable) with values of ones,
then with values that require grad. Only the second require grad: the where over the first
reaches no backward pass.
"""
import torch


def degrees(values: torch.Tensor, size: int = 3) -> dict:
    idx = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    legacy = torch.sparse.FloatTensor(idx, values, (size, size))
    coo = torch.sparse_coo_tensor(idx, values, (size, size))
    out = {}
    for name, adjacency in (("legacy", legacy), ("coo", coo)):
        deg = torch.sparse.sum(adjacency, dim=1).to_dense()
        out[name] = deg
        out[name + "_inverse"] = torch.where(deg > 0.0, 1.0 / deg, deg)
    return out


if __name__ == "__main__":
    for label, values in (("ones", torch.ones(4)), ("values requiring grad", torch.rand(4, requires_grad=True))):
        for name, value in degrees(values).items():
            print(f"{label}: {name} requires_grad {value.requires_grad}")
