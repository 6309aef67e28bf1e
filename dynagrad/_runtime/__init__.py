"""Process set-up that must happen before Numba starts, in one stated order.

``configure()`` runs once, as the first thing ``import dynagrad`` does. The order matters:

1. ``cpu_target``: let LLVM use 512-bit vectors on AVX-512 CPUs. Numba reads its CPU target once,
   when it is imported. Opt out: ``DYNAGRAD_PREFER_256_BIT=1`` (or set ``NUMBA_CPU_NAME`` /
   ``NUMBA_CPU_FEATURES`` yourself).
2. ``threads``: make the pip-installed TBB runtime loadable so Numba picks TBB for its thread pool,
   else ask OpenMP to wait passively. Numba starts its pool once. Opt out: set
   ``NUMBA_THREADING_LAYER``.
3. ``malloc``: raise glibc's mmap and trim thresholds, so a training step reuses the last step's
   freed buffers instead of page-faulting fresh ones. Opt out: ``DYNAGRAD_MALLOC_TUNING=0`` (or set
   any ``MALLOC_*`` variable or ``GLIBC_TUNABLES`` malloc setting yourself).
4. ``blas_probe`` (after Numba is imported): answer Numba's start-up BLAS probe without importing
   SciPy. Nothing to opt out of: later BLAS checks run for real.

The rest of this package holds process-wide machinery the layers above share: ``gc`` (pausing the
collector while long-lived objects appear) and ``blas_threads`` (OpenBLAS's thread count and
running work split over its workers; opt out of pooled kernels: ``DYNAGRAD_WORKER_POOL=0``).

Example:
    >>> from dynagrad import _runtime
    >>> _runtime.configure()  # a second call does nothing
"""
from __future__ import annotations

_done: list = []


def configure() -> None:
    """Set up the process for Numba and the kernels (see the module docstring for the order)."""
    if _done:
        return
    _done.append(True)
    from .cpu_target import prefer_wide_vectors
    from .malloc import tune_malloc
    from .threads import choose_threading_layer
    prefer_wide_vectors()
    choose_threading_layer()
    tune_malloc()
    import numba  # noqa: F401  (starts Numba with the target and thread layer chosen above)
    from .blas_probe import defer_blas_probe
    defer_blas_probe()
