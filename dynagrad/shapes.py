"""Shape rules every layer shares: broadcasting, dim wrapping, and shape arguments.

Example:
    >>> from dynagrad.shapes import broadcast_shapes, wrap_dim
    >>> broadcast_shapes("add", (3, 1), (4,)), wrap_dim(-1, 3, "sum")
    ((3, 4), 2)
"""
from __future__ import annotations

import operator

import numpy as np

def broadcast_shapes(op: str, *shapes) -> tuple:
    """The shape all ``shapes`` broadcast to, or a RuntimeError naming the op and the clash."""
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s, ndim - len(s)):
            if d != out[i]:
                if out[i] == 1:
                    out[i] = d
                elif d != 1:
                    raise RuntimeError(
                        f"{op}: shapes " + " and ".join(str(tuple(x)) for x in shapes)
                        + f" are not broadcastable (dimension {i - ndim}: {out[i]} vs {d})")
    return tuple(out)


def wrap_dim(dim, ndim: int, op: str) -> int:
    n = max(ndim, 1)
    if not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    if not -n <= dim < n:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return int(dim) + n if dim < 0 else int(dim)


def wrap_dims(dim, ndim: int, op: str) -> tuple:
    """Normalise ``dim`` (None, int, or sequence) to a sorted tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        dims = (wrap_dim(dim, ndim, op),)
    else:
        dims = tuple(wrap_dim(d, ndim, op) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{op}: dim {tuple(dim)} appears multiple times in the list of dims")
        if not dims:
            return tuple(range(ndim))
    return tuple(sorted(dims)) if ndim else ()


def shape_arg(args, op: str) -> tuple:
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` all mean shape (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    try:  # ints, NumPy integers and integer 0-dim tensors all implement __index__
        return tuple(map(operator.index, args))
    except TypeError:
        raise TypeError(f"{op}: size must be a sequence of ints, got {args!r}") from None
