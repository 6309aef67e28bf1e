"""A caching allocator for large CPU outputs.

A fresh multi-megabyte NumPy buffer is mapped from the OS page by page on first write: for a 64 MB
elementwise result the page faults cost several times the arithmetic. Large outputs therefore come
from a pool of raw buffers keyed by size; a buffer is handed out again once no array refers to it
any more (its reference count says so), so no free hook is needed and a live view is never
overwritten.

Example:
    >>> from dynagrad.kernels.cpu import memory
    >>> a = memory.empty((memory.POOL_MIN_BYTES // 4,), "float32")
    >>> a.nbytes == memory.POOL_MIN_BYTES, memory.stats()["pooled_bytes"] >= a.nbytes
    (True, True)
"""
from __future__ import annotations

import math
import sys
import threading

import numpy as np

from ..._runtime import malloc as _malloc

# Smaller buffers come from malloc's own free lists. Once dynagrad has raised glibc's mmap
# threshold (``dynagrad._runtime.malloc``), malloc itself reuses freed blocks below it without page
# faults, and does so with less Python between two kernels (which counts: Numba's workers sleep
# through any gap of a few microseconds): only larger ones are pooled.
POOL_MIN_BYTES = _malloc.MMAP_THRESHOLD_BYTES if _malloc.TUNED else 1 << 21
POOL_MAX_IDLE_BYTES = 1 << 29   # idle buffers kept beyond this are released to the OS
ALIGN_BYTES = 64                # one cache line: a 512-bit store never straddles two (malloc gives 16)

_buckets: dict = {}             # nbytes -> [(raw uint8 buffer, aligned start), ...]
_pooled = [0]                   # total bytes held in the buckets
_IDLE_REFS = 3                  # the bucket's tuple, the loop variable, getrefcount's argument
_lock = threading.Lock()        # two threads must never both take the same idle buffer


def empty(shape: tuple, dtype) -> np.ndarray:
    """``np.empty(shape, dtype)``, reusing an idle pooled buffer for large sizes."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < POOL_MIN_BYTES:
        return np.empty(shape, dtype)
    with _lock:
        bucket = _buckets.get(nbytes)
        if bucket is None:
            bucket = _buckets[nbytes] = []
        for raw, start in bucket:
            if sys.getrefcount(raw) == _IDLE_REFS:
                return raw[start:start + nbytes].view(dtype).reshape(shape)
        if _pooled[0] + nbytes > POOL_MAX_IDLE_BYTES:
            _release_idle_locked()
        raw = np.empty(nbytes + ALIGN_BYTES, np.uint8)
        start = -raw.ctypes.data % ALIGN_BYTES  # its views keep raw as their base
        bucket.append((raw, start))
        _pooled[0] += nbytes
        return raw[start:start + nbytes].view(dtype).reshape(shape)


def release_idle() -> int:
    """Give every idle pooled buffer back to the OS; returns the bytes released."""
    with _lock:
        return _release_idle_locked()


def _release_idle_locked() -> int:
    released = 0
    for nbytes, bucket in _buckets.items():
        keep = []
        for raw, start in bucket:
            if sys.getrefcount(raw) == _IDLE_REFS:
                released += nbytes
            else:
                keep.append((raw, start))
        bucket[:] = keep
    _pooled[0] -= released
    return released


def stats() -> dict:
    """Bytes held by the pool, and how many of them no array uses right now."""
    idle = sum(n for n, bucket in _buckets.items() for raw, _ in bucket
               if sys.getrefcount(raw) == _IDLE_REFS)
    return {"pooled_bytes": _pooled[0], "idle_bytes": idle}
