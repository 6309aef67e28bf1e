"""Tensors and devices: the device an op's tensors share, moving a tensor between devices, and
host values next to device tensors (the buffer-level helpers are ``kernels.buffers``).

Several ops compute small index or weight tables on the host with NumPy (pooling windows, class
weights per target, interpolation indices) and read small tensors back to check them (class
targets, embedding indices). ``like`` puts such a table on a tensor's device (no copy on the CPU);
``host_array`` reads a tensor's values on the host (no copy on the CPU).

Example:
    >>> import dynagrad as dg
    >>> x = dg.ones(2, requires_grad=True)
    >>> x.to("cpu") is x
    True
    >>> import numpy as np
    >>> like(np.arange(3), x).tolist()
    [0, 1, 2]
"""
from __future__ import annotations

import numpy as np

from ..device import CPU, as_device
from ..dtypes import from_numpy_dtype
from ..errors import describe
from ..kernels.buffers import device_index, host, move_array
from ..tensor import Tensor, _wrap


def common_device(op: str, tensors) -> int | None:
    """``None`` when every tensor is on the CPU, the CUDA device index when all are on one GPU;
    a RuntimeError naming both devices when they are mixed."""
    index = first = None
    for t in tensors:
        here = device_index(t._data)
        if first is None:
            first, index = t, here
        elif here != index:
            raise RuntimeError(
                f"{op}: expected all tensors to be on the same device, but found at least two "
                f"devices, {first.device} and {t.device} (got {describe(first)} and "
                f"{describe(t)})")
    return index


def to_device(t: Tensor, device, copy: bool = False) -> Tensor:
    """``t`` on ``device`` (differentiable: the gradient goes back to ``t``'s device)."""
    dev = as_device(device)
    index = None if dev is CPU else dev.index
    src = t._data
    if device_index(src) == index:
        return t.clone() if copy else t
    out = _wrap(move_array(src, index), t.dtype)
    from ..autograd import grad_mode
    if t._requires_grad and grad_mode.GRAD_ENABLED[0]:
        from .movement import _attach, _to_back
        _attach("ToCopyBackward0", t, out, _to_back, src_dtype=t.dtype, src_device=t.device)
    return out


def host_array(t: Tensor) -> np.ndarray:
    """``t``'s values as a NumPy array: its own buffer on the CPU, a host copy of a CUDA one."""
    return host(t._data)


def like(arr: np.ndarray, ref: Tensor, dtype=None) -> Tensor:
    """The host array ``arr`` as a tensor on ``ref``'s device (cast to ``dtype`` when given)."""
    arr = np.asarray(arr)  # arithmetic on a 0-d array gives a NumPy scalar
    if dtype is not None and arr.dtype != dtype.np:
        arr = arr.astype(dtype.np)
    dt = dtype or from_numpy_dtype(arr.dtype)
    data = ref._data
    if type(data) is np.ndarray:
        return _wrap(arr, dt)
    return _wrap(move_array(arr, data.device_index), dt)
