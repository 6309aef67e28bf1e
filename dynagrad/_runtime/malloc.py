"""glibc's malloc set to keep freed buffers for reuse instead of handing them back to the OS.

glibc serves a block above its mmap threshold (128 KiB at start) with freshly mapped pages and
gives the top of its heap back to the OS above its trim threshold (128 KiB): a training step that
frees and reallocates megabyte-sized buffers then page-faults on every page it writes, every step.
glibc raises both thresholds by itself once a large mapped block is freed, up to 32 MiB and twice
that; a process that happened to do so (one that had run a PyTorch convolution) ran dynagrad's
training steps clearly faster. dynagrad sets those maxima at import, so every process gets the
fast case.

Blocks above 32 MiB are still mapped and unmapped one by one. ``DYNAGRAD_MALLOC_TUNING=0`` leaves
malloc alone, as do glibc's own ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` settings.

Example:
    >>> import dynagrad
    >>> from dynagrad._runtime import malloc as _malloc
    >>> isinstance(_malloc.TUNED, bool)
    True
"""
from __future__ import annotations

import ctypes
import os
import sys

_M_TRIM_THRESHOLD = -1   # mallopt parameters, from glibc's malloc.h
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 32 << 20  # glibc's own dynamic maximum on 64-bit systems
TRIM_THRESHOLD_BYTES = 64 << 20  # twice that, as glibc's dynamic adjustment sets it
_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")

TUNED = False  # whether tune_malloc changed the thresholds in this process


def tune_malloc() -> bool:
    """Raise glibc's mmap and trim thresholds (Linux with glibc only; see the module docstring).
    Returns whether they were set."""
    global TUNED
    if not sys.platform.startswith("linux") or os.environ.get("DYNAGRAD_MALLOC_TUNING") == "0":
        return False
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if any(name in os.environ for name in _USER_SETTINGS) or "malloc." in tunables:
        return False  # the user chose malloc's behaviour
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc (e.g. musl)
        return False
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    TUNED = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
                 and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
    return TUNED
