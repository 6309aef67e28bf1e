"""``assert_close`` with PyTorch's default tolerances per dtype.

Example:
    >>> import dynagrad as dg
    >>> dg.testing.assert_close(dg.tensor([1.0]), dg.tensor([1.0 + 1e-7]))
"""
from __future__ import annotations

import numpy as np

from .kernels.buffers import host
from .tensor import Tensor

# (rtol, atol) by dtype, as torch.testing.assert_close
_TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
               "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def assert_close(actual, expected, *, rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_dtype: bool = True, check_device: bool = True,
                 msg: str | None = None) -> None:
    """Raise AssertionError unless ``|actual - expected| <= atol + rtol * |expected|`` everywhere."""
    if (rtol is None) != (atol is None):
        raise ValueError("assert_close: rtol and atol must both be given or both omitted")
    if isinstance(actual, Tensor) and isinstance(expected, Tensor) and check_device \
            and actual.device != expected.device:
        raise AssertionError(f"The values for attribute 'device' do not match: "
                             f"{actual.device} != {expected.device}.")
    a = host(actual._data) if isinstance(actual, Tensor) else np.asarray(actual)
    e = host(expected._data) if isinstance(expected, Tensor) else np.asarray(expected)
    if isinstance(actual, Tensor) and isinstance(expected, Tensor) and check_dtype \
            and actual.dtype is not expected.dtype:
        raise AssertionError(f"The values for attribute 'dtype' do not match: "
                             f"{actual.dtype!r} != {expected.dtype!r}.")
    if a.shape != e.shape:
        raise AssertionError(f"The values for attribute 'shape' do not match: {a.shape} != "
                             f"{e.shape}.")
    if rtol is None:  # the looser of the two dtypes' defaults, as PyTorch
        rtol, atol = (max(pair) for pair in zip(_TOLERANCES.get(a.dtype.name, (0.0, 0.0)),
                                                 _TOLERANCES.get(e.dtype.name, (0.0, 0.0))))
    if a.dtype.kind in "biu" and e.dtype.kind in "biu":
        a64, e64 = a.astype(np.float64), e.astype(np.float64)
        bad = a != e
    else:  # (complex values compare as complex: |a - e| is the distance in the plane)
        wide = np.complex128 if "c" in (a.dtype.kind, e.dtype.kind) else np.float64
        a64, e64 = a.astype(wide), e.astype(wide)
        bad = ~np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bad.any():
        n = int(bad.sum())
        diff = np.abs(a64 - e64)[bad]
        raise AssertionError(msg or f"Tensor-likes are not close!\n\nMismatched elements: {n} / "
                             f"{a.size} ({100.0 * n / max(a.size, 1):.1f}%)\nGreatest absolute "
                             f"difference: {diff.max()} (up to {atol} allowed)\n"
                             f"(rtol={rtol}, atol={atol})")
