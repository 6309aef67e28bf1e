"""Python's cyclic garbage collector, paused while dynagrad creates objects that mostly live on.

Importing dynagrad (and Numba with it) and loading or compiling a kernel each create many
thousands of objects, most of them kept for the life of the process. Each time enough of them pile
up, the collector walks the young ones looking for cycles, and now and then all of them. Paused
there, a warm process spent 0.07-0.10 s instead of 0.12 s collecting up to the end of its first
training step (``import dynagrad`` 0.42 -> 0.39 s, medians of 8 alternating processes), and a
cold one 0.30 s instead of 0.6-0.7 s while compiling its kernels.

Example:
    >>> import gc
    >>> from dynagrad._runtime.gc import collection_paused
    >>> with collection_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collection_paused() -> Iterator[None]:
    """Disable the collector inside the block, and enable it again after (also on an error)
    unless it was already disabled when the block began."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
