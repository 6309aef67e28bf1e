"""``dg.cuda``: NVIDIA GPUs through numba-cuda, with PyTorch's ``torch.cuda`` names.

Importing this module does not start CUDA (numba.cuda is imported on first use). Without numba-cuda
or a GPU, ``is_available()`` is False and the functions that need a device raise a RuntimeError
saying how to fix it. ``NUMBA_ENABLE_CUDASIM=1`` (set before first use) runs everything on numba's
simulator instead, which is how the test suite covers the CUDA path on machines without a GPU.

Example:
    >>> import dynagrad as dg
    >>> dev = "cuda" if dg.cuda.is_available() else "cpu"
    >>> x = dg.ones(3, device=dev)
"""
from .devices import (current_device, device, device_count, get_device_capability, get_device_name,
                      is_available, set_device, synchronize)
from .memory import (OutOfMemoryError, empty_cache, max_memory_allocated, max_memory_reserved,
                     memory_allocated, memory_reserved, memory_stats, memory_summary,
                     reset_peak_memory_stats)
from .random import manual_seed, manual_seed_all
from .streams import Event, Stream

__all__ = ["is_available", "device_count", "current_device", "set_device", "device", "synchronize",
           "get_device_name", "get_device_capability", "manual_seed", "manual_seed_all",
           "empty_cache", "memory_allocated", "memory_reserved", "max_memory_allocated",
           "max_memory_reserved", "reset_peak_memory_stats", "memory_stats", "memory_summary",
           "OutOfMemoryError", "Stream", "Event"]
