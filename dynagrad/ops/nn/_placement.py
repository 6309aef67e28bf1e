"""Which path an nn op takes, and its host tables on the device.

``any_cuda`` picks an op's composed path (CUDA tensors); ``index_table`` puts a small int64 host
table (window positions, taps) on a tensor's device once per distinct table. The general host /
device helpers (``host_array``, ``like``) are ``ops.placement``'s.

Example:
    >>> import numpy as np, dynagrad as dg
    >>> index_table(np.arange(3), dg.zeros(2)).tolist()
    [0, 1, 2]
"""
from __future__ import annotations

import numpy as np

from ...dtypes import int64
from ...kernels.buffers import move_array
from ...tensor import Tensor, _wrap


def any_cuda(*tensors) -> bool:
    """Whether any of ``tensors`` (None allowed) is on a CUDA device: such a call takes the
    composed path, whose ops also report a mix of devices clearly."""
    return any(t is not None and t.is_cuda for t in tensors)


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
