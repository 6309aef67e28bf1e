"""``torch.backends.cudnn``: dynagrad does not use cuDNN, so ``is_available()`` is False and the
flags (``enabled benchmark deterministic allow_tf32``, PyTorch's defaults) are recorded with no
effect. ``deterministic`` does not touch ``dg.use_deterministic_algorithms`` (nor does it in
PyTorch)."""
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version() -> None:
    return None
