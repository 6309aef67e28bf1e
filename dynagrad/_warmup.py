"""Precompile (or load from disk) the kernels a typical float32 training step uses.

``dg.warmup()`` and ``python -m dynagrad.kernels warmup``. It runs ops, so it sits above the
kernel layer (which only caches what the ops build).

Example:
    >>> import dynagrad as dg
    >>> dg.warmup()["compiles"] >= 0
    True
"""
from __future__ import annotations

import time

from .dtypes import from_name
from .kernels.cache import cache_stats
from .random import rand


def warmup(dtypes=("float32",), verbose: bool = False) -> dict:
    """Run the common ops once per dtype so their kernels are compiled and on disk.

    Returns ``cache_stats()`` after the run plus ``seconds`` taken.
    """
    t0 = time.perf_counter()
    for name in dtypes:
        dt = from_name(name)
        a = rand(4, 4, dtype=dt, requires_grad=True)
        b = rand(4, 4, dtype=dt)
        for y in (a + b, a - b, a * b, a / (b + 1), a * 2.0, a + 1.0, 1.0 - a, a.relu(),
                  a.exp(), a.tanh(), a.sigmoid(), a.log1p(), a.sqrt(), a @ b, a + b[0], a ** 2):
            y.sum().backward()
        a.sum(0).mean()
        a.max(1)
        a.detach().argmax(1)
        a.detach().cumsum(0)
        (a.detach() > b).any()
    stats = cache_stats()
    stats["seconds"] = time.perf_counter() - t0
    if verbose:
        print(f"warmup: {stats['compiles']} compiled, {stats['disk_loads']} loaded from disk in "
              f"{stats['seconds']:.1f}s")
    return stats
