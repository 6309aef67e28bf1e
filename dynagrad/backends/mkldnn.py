"""``torch.backends.mkldnn``: dynagrad does not use oneDNN (MKL-DNN), so ``is_available()`` is False."""


def is_available() -> bool:
    return False
enabled = True  # recorded, no effect
