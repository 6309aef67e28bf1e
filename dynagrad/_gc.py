"""Python's cyclic garbage collector, paused while dynagrad creates objects that all live on.

Importing dynagrad (and Numba with it) and loading or compiling a kernel each create hundreds of
thousands of objects, nearly all kept for the life of the process. Each time enough of them pile
up, the collector walks them looking for cycles; it finds none worth freeing, yet those walks
took about a fifth of ``import dynagrad`` (0.46-0.55 -> 0.36 s on this machine) and of a warm
process's first training step.

Example:
    >>> import gc
    >>> from dynagrad._gc import collection_paused
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
