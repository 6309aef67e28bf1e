"""The memory layout of a new elementwise result: PyTorch's ``preserve_format``.

An elementwise op on transposed or permuted tensors returns a tensor laid out like them, as in
PyTorch (``x.t().relu()`` has the strides of ``x.t()``, ``x.t() + y`` those of ``x.t()``,
``y + x.t()`` C order). The kernel then runs one flat pass over memory instead of a strided loop
or a transposing copy.

Example:
    >>> import numpy as np
    >>> x = np.zeros((4, 6), np.float32).T          # shape (6, 4), strides (4, 24)
    >>> output_dim_order((6, 4), [x])
    (1, 0)
    >>> empty_in_order((6, 4), (1, 0), np.dtype(np.float32)).strides
    (4, 24)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .kernels.cpu import memory

if TYPE_CHECKING:
    from .tensor import Tensor


def output_dim_order(shape: tuple, arrays: list) -> tuple | None:
    """The output's dims from outermost to innermost in memory, or None for plain C order.

    Follows PyTorch's TensorIterator: the dims are sorted by the operands' strides, the first
    operand that tells two dims apart deciding (a broadcast dim tells nothing; equal strides put
    the smaller dim inside); C order stands where none does.
    """
    nd = len(shape)
    if nd < 2 or all(in_c_order(a) for a in arrays):
        return None
    strides = [_aligned_strides(a, shape) for a in arrays]

    def should_swap(d0: int, d1: int) -> int:
        """1 if dim ``d0``, now inside ``d1``, belongs outside it; -1 if not; 0 if no operand
        tells them apart."""
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:  # equal strides: the smaller dim inside
                return 1
        return 0

    # insertion sort, innermost first, that leaves the dims no operand orders where they are
    inner = list(range(nd - 1, -1, -1))
    for i in range(1, nd):
        j = i
        for k in range(i - 1, -1, -1):
            c = should_swap(inner[k], inner[j])
            if c > 0:
                inner[k], inner[j] = inner[j], inner[k]
                j = k
            elif c < 0:
                break
    order = inner[::-1]
    return None if order == sorted(order) else tuple(order)


def in_c_order(a: np.ndarray) -> bool:
    """Whether ``a``'s dims lie in memory outermost first (contiguous, sliced or broadcast, not
    transposed or permuted): every result shaped like ``a`` then takes C order."""
    last = None
    for s, n in zip(a.strides, a.shape):
        if n == 1 or s == 0:  # no say in the order
            continue
        s = abs(s)
        if last is not None and s >= last:  # (equal strides: see should_swap)
            return False
        last = s
    return True


def input_dim_order(arr: np.ndarray) -> tuple | None:
    """The dims of a transposed or permuted ``arr`` (sliced too), outermost first in memory: the
    order ``output_dim_order`` gives a result of ``arr`` alone (without its insertion sort where
    the strides are distinct); None where that is C order or where the dims so ordered are not
    in C order."""
    if arr.ndim == 2 and arr.flags.f_contiguous:  # a transposed matrix, the common case
        return _TRANSPOSED
    steps = [abs(s) for s in arr.strides]
    if 1 in arr.shape or 0 in steps or len(set(steps)) < len(steps):
        order = output_dim_order(arr.shape, [arr])  # ties and broadcast dims: the full rule
    else:
        order = tuple(sorted(range(arr.ndim), key=lambda d: -steps[d]))
    return order if order is not None and in_c_order(arr.transpose(order)) else None


_TRANSPOSED = (1, 0)


def _aligned_strides(a: np.ndarray, shape: tuple) -> list:
    """``a``'s strides over the output's dims, 0 where ``a`` broadcasts."""
    pad = len(shape) - a.ndim
    return [0] * pad + [abs(s) if n != 1 or shape[pad + i] == 1 else 0
                        for i, (s, n) in enumerate(zip(a.strides, a.shape))]


def empty_in_order(shape: tuple, order: tuple, dtype) -> np.ndarray:
    """An uninitialised (pooled) array of ``shape`` whose dims lie in memory as ``order`` says."""
    base = memory.empty(tuple(shape[d] for d in order), dtype)
    return base.transpose(np.argsort(order))


def laid_out_like(make, shape: tuple, like) -> Tensor:
    """``make(shape)``, a new Tensor, laid out like the array ``like`` where that is transposed
    or permuted (the ``preserve_format`` of ``zeros_like`` and the other ``*_like``)."""
    order = output_dim_order(shape, [like]) if type(like) is np.ndarray else None
    if order is None:
        return make(shape)
    t = make(tuple(shape[d] for d in order))
    t._data = t._data.transpose(np.argsort(order))
    return t
