"""Run slices of a batch on all cores at once, each slice calling a single-threaded BLAS.

A convolution runs many small GEMMs (one ``(64, 288) @ (288, 576)`` per sample in the MNIST CNN)
with im2col/col2im loops between them. OpenBLAS splits each small GEMM across its threads, which
costs a hand-off per call and leaves the loops between them on one core. Giving each core its own
slice of the samples, with BLAS told to use one thread, runs the loops on every core too and
saves the hand-offs.

The slices run on OpenBLAS's own worker threads (its exported ``gotoblas_pthread``), not on a
pool of ours: after every multi-threaded GEMM those workers busy-wait for about 0.1 s, and a
second pool competing with them for the cores ran the convolution slower than not splitting it.

OpenBLAS's thread count is process-wide (``openblas_set_num_threads_local`` too, in NumPy's
build: measured), so it is lowered to one while any split runs (a GEMM
inside a slice then runs in that slice's thread instead of queueing for a busy worker) and
restored when the last split ends; another thread calling BLAS meanwhile runs single-threaded,
slower but correct. Without NumPy's bundled OpenBLAS (NumPy built on MKL or Accelerate) the work
runs unsplit, as one slice.

Example:
    >>> from dynagrad._runtime.blas_threads import run_split
    >>> run_split(10, lambda lo, hi: hi - lo)[0] > 0
    True
"""
from __future__ import annotations

import ctypes
import glob
import os
import threading
from typing import Callable, TypeVar

import numpy as np

T = TypeVar("T")

# Where NumPy wheels keep their OpenBLAS, and its symbol prefixes/suffixes: NumPy 2 bundles
# scipy-openblas (prefixed, 64-bit-integer symbols), older wheels a plain ``openblas_*``.
_LIB_PATTERNS = (os.path.join(os.pardir, "numpy.libs", "*openblas*"),
                 os.path.join(".dylibs", "*openblas*"))
_SYMBOLS = (("scipy_openblas", "64_"), ("scipy_openblas", ""), ("openblas", ""))
_SLICE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # what gotoblas_pthread calls, per slice


def _find_openblas() -> tuple | None:
    """``(set_num_threads, get_num_threads, gotoblas_pthread, get_corename)`` of NumPy's
    OpenBLAS, or None."""
    root = os.path.dirname(np.__file__)
    for pattern in _LIB_PATTERNS:
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            try:
                lib = ctypes.CDLL(path)  # already loaded by NumPy: the same handle
            except OSError:
                continue
            pthread = getattr(lib, "gotoblas_pthread", None)
            for prefix, suffix in _SYMBOLS:
                setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                if setter is not None and getter is not None and pthread is not None:
                    setter.argtypes, setter.restype = [ctypes.c_int], None
                    getter.argtypes, getter.restype = [], ctypes.c_int
                    # (slices, function, first argument, argument stride): slice i gets
                    # first + i * stride, here simply its index
                    pthread.argtypes = [ctypes.c_int, _SLICE_FN, ctypes.c_void_p, ctypes.c_int]
                    pthread.restype = ctypes.c_int
                    corename = getattr(lib, f"{prefix}_get_corename{suffix}", None)
                    if corename is not None:
                        corename.argtypes, corename.restype = [], ctypes.c_char_p
                    return setter, getter, pthread, corename
    return None


_BLAS = _find_openblas()
_lock = threading.Lock()
_state = {"active": 0, "saved": 1}


def _blas_single_threaded(enter: bool) -> None:
    """Count splits in flight: the first lowers BLAS to one thread, the last restores it."""
    setter, getter = _BLAS[:2]
    with _lock:
        if enter:
            if _state["active"] == 0:
                _state["saved"] = getter()
                setter(1)
            _state["active"] += 1
        else:
            _state["active"] -= 1
            if _state["active"] == 0:
                setter(_state["saved"])


def _after_fork_in_child() -> None:
    """A forked child has one thread: no split is in flight there, whatever the parent's state
    (OpenBLAS restarts its own workers lazily after a fork)."""
    global _lock
    _lock = threading.Lock()  # the parent may have held it at the fork
    if _state["active"] and _BLAS is not None:
        _BLAS[0](_state["saved"])
    _state["active"] = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def blas_core() -> str | None:
    """The CPU type whose kernels NumPy's OpenBLAS runs here (e.g. ``'Haswell'``,
    ``'SkylakeX'``), or None where that is not known."""
    if _BLAS is None or _BLAS[3] is None:
        return None
    return _BLAS[3]().decode("ascii", "replace").strip()


def parallel_slices(n: int) -> int:
    """How many slices ``run_split`` would cut ``n`` items into now: BLAS's thread count (1 while
    another split holds it, so splits never nest or oversubscribe), at most ``n``."""
    if _BLAS is None:
        return 1
    return max(1, min(n, _BLAS[1]()))


def run_split(n: int, work: Callable[[int, int], T], split: bool = True) -> list[T]:
    """``[work(lo, hi), ...]`` over consecutive slices covering ``range(n)``, run concurrently
    with single-threaded BLAS; the first slice runs in the calling thread. ``work`` must release
    the GIL for its heavy parts (BLAS and ``nogil`` kernels do) and write only its own slice.
    ``split=False`` (work too small to repay the hand-off) runs ``[work(0, n)]`` here."""
    parts = parallel_slices(n) if split else 1
    if parts < 2:
        return [work(0, n)]
    bounds = [n * i // parts for i in range(parts + 1)]
    results: list = [None] * parts
    errors: list = []

    def one_slice(index) -> None:
        i = index or 0  # ctypes passes a null pointer (slice 0) as None
        try:
            results[i] = work(bounds[i], bounds[i + 1])
        except BaseException as exc:  # noqa: B036 - re-raised below, in the caller's thread
            errors.append(exc)

    _blas_single_threaded(True)
    try:
        _BLAS[2](parts, _SLICE_FN(one_slice), None, 1)  # returns once every slice has ended
    finally:
        _blas_single_threaded(False)
    if errors:
        raise errors[0]
    return results
