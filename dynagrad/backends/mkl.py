"""``torch.backends.mkl``: dynagrad does not use Intel MKL, so ``is_available()`` is False."""


def is_available() -> bool:
    return False
