"""Buffers on either target: a CPU buffer is a ``numpy.ndarray``, a CUDA buffer a
``kernels.cuda.device_array.DeviceArray``. These helpers let a caller make, fill, copy and move a
buffer without asking which it is.

Example:
    >>> import numpy as np
    >>> from dynagrad.kernels import buffers
    >>> filled = buffers.full_like_array(np.zeros(2), (3,), 7, np.int64)
    >>> buffers.is_host(filled), filled.tolist()
    (True, [7, 7, 7])
"""
from __future__ import annotations

import numpy as np

from ..device import CPU, cuda_device
from .cuda.device_array import DeviceArray

_DA = DeviceArray  # anything else (ndarray, NumPy scalar) is host memory


def device_index(arr) -> int | None:
    """``None`` for a CPU buffer, the CUDA device index for a CUDA one."""
    return None if type(arr) is not _DA else arr.device_index


def is_host(arr) -> bool:
    return type(arr) is not _DA


def device_of_array(arr):
    return CPU if type(arr) is not _DA else cuda_device(arr.device_index)


def empty(shape: tuple, dtype, index: int | None):
    """An uninitialised buffer on the CPU (``index=None``) or CUDA device ``index``."""
    if index is None:
        return np.empty(shape, dtype)
    return DeviceArray.empty(shape, dtype, index)


def empty_like_array(arr, shape: tuple, dtype):
    """An uninitialised buffer on ``arr``'s device."""
    return empty(shape, dtype, device_index(arr))


def full_like_array(arr, shape: tuple, value, dtype):
    """A buffer on ``arr``'s device filled with ``value``."""
    out = empty_like_array(arr, shape, dtype)
    out[...] = value
    return out


def contiguous(arr):
    """``arr`` if it is C-contiguous, else a contiguous copy on its device."""
    if arr.flags.c_contiguous:
        return arr
    return np.asarray(arr, order="C") if type(arr) is not _DA else arr.copy()


def host(arr) -> np.ndarray:
    """The buffer itself on the CPU; a host copy of a CUDA buffer."""
    return arr if type(arr) is not _DA else arr.to_host()


def move_array(arr, index: int | None):
    """``arr`` on the CPU (``index=None``) or CUDA device ``index``; a copy only if it moves."""
    if device_index(arr) == index:
        return arr
    if index is None:
        return arr.to_host()
    return DeviceArray.from_host(host(arr), index)
