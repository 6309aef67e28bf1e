"""``torch.backends.openmp``: dynagrad does not use OpenMP, so ``is_available()`` is False."""


def is_available() -> bool:
    return False
