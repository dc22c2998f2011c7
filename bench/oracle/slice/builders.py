"""Build the CI slice's entries (bench/oracle/slice/models.py)."""


def net(name: str, shape=(2, 4)):
    import torch
    from oracle_slice import nets

    target = getattr(nets, name)
    if isinstance(target, type):
        target = target()
    return target, (torch.randn(*shape),), {}
