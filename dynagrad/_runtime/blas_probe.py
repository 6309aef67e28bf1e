"""Keep SciPy's import out of the first kernel load.

When Numba's CPU target starts (the first kernel a process compiles or loads from disk), it
imports ``numba.np.arraymath``, which probes for BLAS at once by importing
``scipy.linalg.cython_blas``: SciPy's whole ``linalg`` package, a large share of a warm start-up
to the first trained step. The probe only decides whether
``np.dot`` inside jitted code may call BLAS; no dynagrad kernel does.

``defer_blas_probe`` lets that one start-up probe answer from where SciPy lies on disk, and puts
Numba's own check back for every later call: jitted code that does call ``np.dot`` still imports
SciPy and checks its BLAS then, when it is typed. Nothing changes if Numba's target had started
before dynagrad was imported, or if Numba's internals are not where this expects them.

Example:
    >>> from dynagrad._runtime.blas_probe import _scipy_blas_on_disk
    >>> _scipy_blas_on_disk() in (True, False)
    True
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def defer_blas_probe() -> None:
    """Answer Numba's start-up BLAS probe without importing SciPy (see the module docstring)."""
    if "numba.np.arraymath" in sys.modules:  # the probe has run already
        return
    try:
        from numba.np import linalg
    except ImportError:
        return
    check = getattr(linalg, "ensure_blas", None)
    if check is None:
        return

    def start_up_probe() -> None:
        linalg.ensure_blas = check  # later calls check for real
        arraymath = sys.modules.get("numba.np.arraymath")
        if arraymath is None or hasattr(arraymath, "_HAVE_BLAS"):
            return check()  # not arraymath's import-time probe: the real check
        if not _scipy_blas_on_disk():
            raise ImportError("scipy 0.16+ is required for linear algebra")
    linalg.ensure_blas = start_up_probe


def _scipy_blas_on_disk() -> bool:
    """Whether ``scipy.linalg.cython_blas`` is installed, found without importing SciPy."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or not spec.submodule_search_locations:
        return False
    return any(any((Path(root) / "linalg").glob("cython_blas.*"))
               for root in spec.submodule_search_locations)
