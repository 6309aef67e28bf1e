"""Host values next to device tensors, for the nn ops that mix the two.

Several nn ops compute small index or weight tables on the host with NumPy (pooling windows,
class weights per target, interpolation indices) and read small tensors back to check them (class
targets, embedding indices). ``like`` puts such a table on a tensor's device (no copy on the CPU);
``host_array`` reads a tensor's values on the host (no copy on the CPU).

Example:
    >>> import numpy as np, dynagrad as dg
    >>> like(np.arange(3), dg.zeros(2)).tolist()
    [0, 1, 2]
"""
from __future__ import annotations

import numpy as np

from ...dtypes import from_numpy_dtype, int64
from ...kernels.buffers import host, move_array
from ...tensor import Tensor, _wrap


def any_cuda(*tensors) -> bool:
    """Whether any of ``tensors`` (None allowed) is on a CUDA device: such a call takes the
    composed path, whose ops also report a mix of devices clearly."""
    return any(t is not None and t.is_cuda for t in tensors)


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


_TABLES: dict = {}   # (device, dtype, shape, bytes) -> the table on that device
_TABLES_MAX = 256    # tables are small (window positions): keep the recent ones


def index_table(arr: np.ndarray, ref: Tensor) -> Tensor:
    """The int64 host table ``arr`` (window positions, taps) on ``ref``'s device, uploaded once
    per distinct table and device rather than on every call. The result is shared: read only."""
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    data = ref._data
    if type(data) is np.ndarray:
        return _wrap(arr, int64)
    key = (data.device_index, arr.shape, arr.tobytes())
    table = _TABLES.get(key)
    if table is None:
        if len(_TABLES) >= _TABLES_MAX:
            _TABLES.pop(next(iter(_TABLES)))
        table = _TABLES[key] = _wrap(move_array(arr, data.device_index), int64)
    return table
