"""PyTorch-style printing: ``tensor([1., 2.], requires_grad=True)``."""
from __future__ import annotations

import numpy as np

from . import dtypes


def _float_formatter(arr: np.ndarray):
    finite = np.abs(arr[np.isfinite(arr)].astype(np.float64))
    if finite.size == 0:
        return lambda v: _special(v) or f"{v:.4f}"
    nonzero = finite[finite != 0]
    if np.all(finite == np.round(finite)) and (finite.size == 0 or finite.max() < 1e8):
        return lambda v: _special(v) or f"{v:.0f}."
    if nonzero.size and (nonzero.max() / nonzero.min() > 1000.0 or nonzero.max() > 1e8
                         or nonzero.min() < 1e-4):
        return lambda v: _special(v) or f"{v:.4e}"
    return lambda v: _special(v) or f"{v:.4f}"


def _special(v) -> str:
    if v != v:
        return "nan"
    if v in (np.inf, -np.inf):
        return "inf" if v > 0 else "-inf"
    return ""


def tensor_repr(t) -> str:
    arr = t._data
    if arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    suffix = []
    if arr.size == 0 and arr.ndim != 1:
        body = "[]"
        suffix.append(f"size={tuple(arr.shape)}")
    else:
        if arr.dtype.kind == "f":
            fmt = _float_formatter(arr)
        elif arr.dtype.kind == "b":
            fmt = lambda v: "True" if v else "False"  # noqa: E731
        else:
            fmt = lambda v: str(int(v))  # noqa: E731
        body = np.array2string(arr, separator=", ", formatter={"all": fmt}, prefix="tensor(",
                               max_line_width=80, threshold=1000, edgeitems=3)
    if t.dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
        suffix.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        suffix.append("requires_grad=True")
    return "tensor(" + ", ".join([body] + suffix) + ")"
