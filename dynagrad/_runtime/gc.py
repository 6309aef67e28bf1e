"""Python's cyclic garbage collector, paused while dynagrad creates objects that mostly live on.

Importing dynagrad (and Numba with it) and loading or compiling a kernel each create many
thousands of objects, most of them kept for the life of the process. Each time enough of them pile
up, the collector walks the young ones looking for cycles, and now and then all of them: work
wasted on objects that live on. Paused there, a process spends less time collecting up to the
end of its first training step, whether it loads its kernels warm or compiles them cold.

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
