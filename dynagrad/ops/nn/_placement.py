"""Which path an nn op takes, and its host tables on the device.

``composed`` picks an op's composed path (CUDA tensors, or any tensor inside
``composed_on_cpu``); ``index_table`` puts a small int64 host table (window positions, taps) on a
tensor's device once per distinct table. The general host / device helpers (``host_array``,
``like``) are ``ops.placement``'s.

Example:
    >>> import numpy as np, dynagrad as dg
    >>> index_table(np.arange(3), dg.zeros(2)).tolist()
    [0, 1, 2]
"""
from __future__ import annotations

import contextlib

import numpy as np

from ...dtypes import int64
from ...kernels.buffers import move_array
from ...tensor import Tensor, _wrap


# [True] while ``composed_on_cpu`` runs: every nn op then takes its composed path on CPU tensors
_COMPOSED_ON_CPU = [False]


def composed(*tensors) -> bool:
    """Whether an nn op takes its composed path (ops instead of its fused CPU kernels): when any
    of ``tensors`` (None allowed) is on a CUDA device, whose ops also report a mix of devices
    clearly, or inside ``composed_on_cpu``."""
    if _COMPOSED_ON_CPU[0]:
        return True
    for t in tensors:  # a loop, not any(...): this runs on every call of the hot nn ops
        if t is not None and t.is_cuda:
            return True
    return False


@contextlib.contextmanager
def composed_on_cpu():
    """Run the composed path of every nn op on CPU tensors, as CUDA tensors take it, so that it
    can be checked against the fused CPU kernels in float64 (``tests/cuda/test_cuda_nn.py``).

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad.ops.nn.softmax import softmax
        >>> with composed_on_cpu():
        ...     softmax(dg.tensor([0.0, 0.0]), 0)
        tensor([0.5000, 0.5000])
    """
    saved = _COMPOSED_ON_CPU[0]
    _COMPOSED_ON_CPU[0] = True
    try:
        yield
    finally:
        _COMPOSED_ON_CPU[0] = saved


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
