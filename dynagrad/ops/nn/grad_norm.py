"""Norms of whole tensors as Python floats, accumulated in float64: what gradient clipping
(``nn.utils.clip_grad_norm_``, ``get_total_norm``) reads.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.ops.nn.grad_norm import tensor_norm
    >>> tensor_norm(dg.tensor([3.0, 4.0]), 2.0)
    5.0
"""
from __future__ import annotations

import math

import numpy as np

from ...dtypes import float64
from ...kernels.cpu import backend as cpu
from ...tensor import Tensor


def _sum_of_squares(arr: np.ndarray) -> float:
    """Sum of squares of a float32/float64 array, in float64, by a generated fold with no float64
    copy of the data (such a copy made clip_grad_norm_ several times slower)."""
    flat = np.ascontiguousarray(arr).reshape(-1)
    if flat.size >= cpu.FLAT_PARALLEL_MIN_ELEMENTS and flat.size % cpu.TOTAL_CHUNKS == 0:
        return cpu.threaded_total(flat, cpu.SQUARES)
    out = np.empty((1, 1), np.float64)
    cpu.reduce_kernel(("0", cpu.SQUARES, "acc", "float64"), cpu.type_name(flat.dtype), "float64")(
        flat.reshape(1, -1, 1), out)
    return float(out[0, 0])


def vector_norm(arr: np.ndarray, p: float) -> float:
    """The p-norm of ``arr`` viewed as a flat vector, accumulated in float64 (PyTorch's
    ``vector_norm`` conventions for p = 0, inf and -inf)."""
    if p == 2 and arr.dtype in (np.float32, np.float64) and arr.size:
        return math.sqrt(_sum_of_squares(arr))
    a = np.abs(np.asarray(arr, dtype=np.float64).reshape(-1))
    if p == math.inf:
        return float(a.max()) if a.size else 0.0
    if p == -math.inf:
        return float(a.min()) if a.size else math.inf
    if p == 0:
        return float(np.count_nonzero(a))
    if p == 1:
        return float(a.sum())
    if p == 2:
        return math.sqrt(float(np.dot(a, a)))
    return float(np.sum(a ** p) ** (1.0 / p))


def tensor_norm(t: Tensor, p: float) -> float:
    """``vector_norm`` of ``t``'s values; a CUDA tensor's is reduced on its device in float64
    (only the result comes to the host)."""
    if not t.is_cuda:
        return vector_norm(t._data, p)
    a = t.detach().reshape(-1).to(float64).abs()
    if a.numel() == 0:
        return vector_norm(np.zeros(0), p)
    if p == math.inf:
        return float(a.amax().item())
    if p == -math.inf:
        return float(a.amin().item())
    if p == 0:
        return float((a != 0).sum().item())
    if p == 1:
        return float(a.sum().item())
    if p == 2:
        return math.sqrt(float((a * a).sum().item()))
    return float((a ** p).sum().item()) ** (1.0 / p)
