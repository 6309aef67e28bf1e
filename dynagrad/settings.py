"""Process-wide settings with PyTorch's names: thread counts, float32 matmul precision, denormal
flushing.

- ``set_num_threads(n)`` sets the threads dynagrad's CPU work runs on: OpenBLAS's (its GEMMs,
  and the worker pool that runs threaded elementwise kernels and batch splits on them) and
  Numba's pool (``prange`` kernels); ``get_num_threads()`` reads OpenBLAS's count (Numba's where
  NumPy has no OpenBLAS).
- Inter-op threads: dynagrad runs ops one after another in the calling thread, so there is one;
  ``set_num_interop_threads`` accepts a positive count and warns that it has no effect.
- ``set_float32_matmul_precision``: "high" and "medium" *allow* a faster, less precise float32
  product (TF32 on CUDA in PyTorch); dynagrad always computes float32 products in float32, which
  every setting allows, and records the setting for ``get_float32_matmul_precision``.
- ``set_flush_denormal`` returns False: dynagrad does not set the CPU's flush-to-zero mode (its
  kernels run on Numba's and OpenBLAS's threads, which a per-thread control register setting in
  the caller would not reach), which is what PyTorch reports where it cannot either.

Example:
    >>> import dynagrad as dg
    >>> dg.get_float32_matmul_precision()
    'highest'
"""
from __future__ import annotations

import warnings

import numba

from ._runtime.blas_threads import _BLAS

_MATMUL_PRECISION = ["highest"]
_PRECISIONS = ("highest", "high", "medium")


def get_num_threads() -> int:
    """The number of threads dynagrad's CPU kernels and BLAS run on."""
    return int(_BLAS[1]()) if _BLAS is not None else numba.get_num_threads()


def set_num_threads(n: int) -> None:
    """Run CPU work on ``n`` threads (OpenBLAS's and Numba's pools; Numba's at most its
    ``NUMBA_NUM_THREADS``)."""
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    if _BLAS is not None:
        _BLAS[0](n)
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))


def get_num_interop_threads() -> int:
    """Threads that run independent ops concurrently: one (dynagrad runs ops in order)."""
    return 1


def set_num_interop_threads(n: int) -> None:
    """Accepted for PyTorch code; dynagrad has no inter-op pool, so a count above 1 warns."""
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if n != 1:
        warnings.warn(f"set_num_interop_threads({n}) has no effect: dynagrad runs ops one after "
                      "another in the calling thread", stacklevel=2)


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision last set ("highest" by default)."""
    return _MATMUL_PRECISION[0]


def set_float32_matmul_precision(precision: str) -> None:
    """Record ``precision`` ("highest", "high" or "medium"); any other value warns and is
    ignored, as in PyTorch. dynagrad computes float32 products in float32 under every setting."""
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", stacklevel=2)
        return
    _MATMUL_PRECISION[0] = precision


def set_flush_denormal(mode: bool) -> bool:
    """Whether flushing denormal floats was configured: False, dynagrad leaves the CPU's mode
    alone (see the module's note)."""
    return False
