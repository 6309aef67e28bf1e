"""The kernel layer: generated Numba kernels, cached in memory and on disk.

Example:
    >>> import dynagrad as dg
    >>> stats = dg.kernels.cache_stats()
    >>> {"hits", "misses", "compiles", "disk_loads", "compile_seconds"} <= set(stats)
    True
"""
from .cache import cache_dir, cache_stats, clear_cache, reset_stats

__all__ = ["cache_dir", "cache_stats", "clear_cache", "reset_stats"]
