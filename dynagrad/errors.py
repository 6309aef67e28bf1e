"""Helpers that build error messages naming the op and each argument's shape, dtype and device."""
from __future__ import annotations


def describe(x) -> str:
    """``Tensor(shape=(2, 3), dtype=float32, device=cpu)`` for tensors, ``repr`` for the rest."""
    shape = getattr(x, "shape", None)
    if shape is not None and hasattr(x, "dtype") and hasattr(x, "device"):
        return f"Tensor(shape={tuple(shape)}, dtype={x.dtype.name}, device={x.device})"
    return repr(x)


