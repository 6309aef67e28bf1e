"""``torch.backends.mps``: dynagrad does not use Apple's Metal, so ``is_available()`` is False."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
