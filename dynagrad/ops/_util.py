"""Small helpers shared by the op families: tensor arguments."""
from __future__ import annotations

import numpy as np

from ..dtypes import from_numpy_dtype
from ..errors import describe
from ..tensor import Tensor, _wrap


def as_tensor_arg(x, op: str, name: str = "input") -> Tensor:
    """Accept a Tensor (or a NumPy array / nested list, converted) for a tensor argument."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        return _wrap(x, from_numpy_dtype(x.dtype))
    if isinstance(x, (list, tuple, int, float, bool)):
        from ..creation import tensor
        return tensor(x)
    raise TypeError(f"{op}: argument '{name}' must be a Tensor, got {describe(x)}")
