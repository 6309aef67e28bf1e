"""Where buffers live: moving tensors between devices, and device-agnostic buffer helpers.

A CPU tensor's buffer is a ``numpy.ndarray``, a CUDA tensor's a ``kernels.cuda_array.DeviceArray``;
the helpers here let an op make its output on its input's device without caring which it is.

Example:
    >>> import dynagrad as dg
    >>> x = dg.ones(2, requires_grad=True)
    >>> x.to("cpu") is x
    True
"""
from __future__ import annotations

import numpy as np

from ..device import CPU, as_device, cuda_device
from ..errors import describe
from ..kernels.cuda_array import DeviceArray
from ..tensor import Tensor, _wrap

_DA = DeviceArray  # anything else (ndarray, NumPy scalar) is host memory


def is_host(arr) -> bool:
    return type(arr) is not _DA


def device_of_array(arr):
    return CPU if type(arr) is not _DA else cuda_device(arr.device_index)


def common_device(op: str, tensors) -> int | None:
    """``None`` when every tensor is on the CPU, the CUDA device index when all are on one GPU;
    a RuntimeError naming both devices when they are mixed."""
    index = first = None
    for t in tensors:
        arr = t._data
        here = None if type(arr) is not _DA else arr.device_index
        if first is None:
            first, index = t, here
        elif here != index:
            raise RuntimeError(
                f"{op}: expected all tensors to be on the same device, but found at least two "
                f"devices, {first.device} and {t.device} (got {describe(first)} and "
                f"{describe(t)})")
    return index


def empty(shape: tuple, dtype, device_index: int | None):
    """An uninitialised buffer on the CPU (``None``) or a CUDA device."""
    if device_index is None:
        return np.empty(shape, dtype)
    return DeviceArray.empty(shape, dtype, device_index)


def empty_like_array(arr, shape: tuple, dtype):
    """An uninitialised buffer on ``arr``'s device."""
    return empty(shape, dtype, None if type(arr) is not _DA else arr.device_index)


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


def move_array(arr, device_index: int | None):
    """``arr`` on the CPU (``None``) or CUDA device ``device_index``; a copy only if it moves."""
    here = None if type(arr) is not _DA else arr.device_index
    if here == device_index:
        return arr
    if device_index is None:
        return arr.to_host()
    return DeviceArray.from_host(host(arr), device_index)


def to_device(t: Tensor, device, copy: bool = False) -> Tensor:
    """``t`` on ``device`` (differentiable: the gradient goes back to ``t``'s device)."""
    dev = as_device(device)
    index = None if dev is CPU else dev.index
    src = t._data
    if (None if type(src) is not _DA else src.device_index) == index:
        return t.clone() if copy else t
    out = _wrap(move_array(src, index), t.dtype)
    from ..autograd import grad_mode
    if t._requires_grad and grad_mode.GRAD_ENABLED[0]:
        from .movement import _attach, _to_back
        _attach("ToCopyBackward0", t, out, _to_back, src_dtype=t.dtype, src_device=t.device)
    return out
