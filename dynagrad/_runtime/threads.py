"""Which thread pool runs dynagrad's parallel kernels, chosen before Numba starts its pool.

Numba tries its threading layers in the order TBB, OpenMP, workqueue. With pip, TBB's runtime
(the ``tbb`` wheel, a dependency on Linux x86-64) lands in ``<prefix>/lib``, which the dynamic
loader does not search, so Numba silently falls back to OpenMP. TBB matters on small machines:
its workers wake in microseconds and then sleep, while GNU OpenMP either busy-waits (and steals
the cores from BLAS and everything else) or, told to wait passively, is slow to wake its threads
on every parallel call.
So dynagrad loads the TBB runtime by path where the wheel put it; Numba then picks it itself,
and still falls back on its own if that fails. Without TBB, OpenMP is told to wait passively.

Set ``NUMBA_THREADING_LAYER`` to choose a layer yourself (``omp`` then also waits passively).

Example:
    >>> import dynagrad as dg, numba
    >>> _ = dg.ones(1 << 20).exp()  # a parallel kernel starts the pool
    >>> numba.threading_layer()  # on Linux x86-64 with the tbb wheel
    'tbb'
"""
from __future__ import annotations

import ctypes
import os
import site
import sys

_TBB = "libtbb.so.12"  # the soname Numba's TBB pool links against
_TBB_MIN_INTERFACE = 12060  # TBB 2021.6, the oldest Numba accepts


def _tbb_runtime() -> str | None:
    """The path of the pip-installed TBB runtime, if any (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    for prefix in (sys.prefix, site.getuserbase(), sys.base_prefix):
        path = os.path.join(prefix, "lib", _TBB)
        if os.path.exists(path):
            return path
    return None


def choose_threading_layer() -> None:
    """Make TBB loadable for Numba, or else ask OpenMP to wait passively."""
    chosen = os.environ.get("NUMBA_THREADING_LAYER", "default")
    pool = sys.modules.get("numba.np.ufunc.parallel")
    started = pool is not None and pool._is_initialized  # Numba loads its layer on first use
    if chosen in ("default", "tbb") and not started:
        path = _tbb_runtime()
        if path is not None:
            try:
                # global symbols: Numba's tbbpool extension, loaded later, finds its soname here
                lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                # Numba refuses TBB older than 2021.6 and would fall back to OpenMP: then OpenMP
                # must still be told to wait passively
                if lib.TBB_runtime_interface_version() >= _TBB_MIN_INTERFACE:
                    return
            except (OSError, AttributeError):
                pass
    # GNU OpenMP busy-waits between parallel calls unless told otherwise; it reads this once,
    # when its pool starts
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
