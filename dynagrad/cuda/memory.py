"""The caching allocator's controls and statistics, with PyTorch's names.

All sizes are bytes of the allocator's blocks (requests round up to 512-byte or 2 MiB buckets).
``device`` is an index, ``"cuda:N"``, ``"cuda"`` or a ``dg.device``; ``None`` is the current one.

Example:
    >>> import dynagrad as dg
    >>> if dg.cuda.is_available():
    ...     before = dg.cuda.memory_allocated()
    ...     x = dg.zeros(1000, device="cuda")   # 4000 bytes -> one 4096-byte block
    ...     assert dg.cuda.memory_allocated() - before == 4096
"""
from __future__ import annotations

from ..kernels.cuda import memory as _mem
from ..kernels.cuda import runtime as _runtime

OutOfMemoryError = _mem.OutOfMemoryError

__all__ = ["OutOfMemoryError", "empty_cache", "memory_allocated", "memory_reserved",
           "max_memory_allocated", "max_memory_reserved", "reset_peak_memory_stats",
           "memory_stats", "memory_summary"]


def _stat(device, key: str, op: str) -> int:
    if device is None and not _runtime.is_available():
        return 0  # as PyTorch: without CUDA nothing is allocated (naming a device still raises)
    return _mem.stats(_runtime.resolve(device, op))[key]


def empty_cache() -> None:
    """Give the cached free blocks of every device back to the driver, so other processes can use
    that memory; tensors still alive keep theirs. Does nothing when CUDA was never used.

    Example: ``del activations; dg.cuda.empty_cache()``.
    """
    _mem.empty_cache()


def memory_allocated(device=None) -> int:
    """Bytes held by live CUDA tensors on ``device``. Example: ``dg.cuda.memory_allocated(0)``."""
    return _stat(device, "allocated_bytes", "dg.cuda.memory_allocated")


def memory_reserved(device=None) -> int:
    """Bytes the allocator holds on ``device``: live blocks plus cached free ones."""
    return _stat(device, "reserved_bytes", "dg.cuda.memory_reserved")


def max_memory_allocated(device=None) -> int:
    """The peak of ``memory_allocated`` since start or the last ``reset_peak_memory_stats``."""
    return _stat(device, "peak_allocated_bytes", "dg.cuda.max_memory_allocated")


def max_memory_reserved(device=None) -> int:
    """The peak of ``memory_reserved`` since start or the last ``reset_peak_memory_stats``."""
    return _stat(device, "peak_reserved_bytes", "dg.cuda.max_memory_reserved")


def reset_peak_memory_stats(device=None) -> None:
    """Restart the peaks from current usage. Example: reset, run one step, read the step's peak
    with ``dg.cuda.max_memory_allocated()``."""
    _mem.reset_peak_memory_stats(_runtime.resolve(device, "dg.cuda.reset_peak_memory_stats"))


def memory_stats(device=None) -> dict:
    """Every counter of the allocator for ``device`` (see ``kernels.cuda_memory.stats``)."""
    return _mem.stats(_runtime.resolve(device, "dg.cuda.memory_stats"))


def memory_summary(device=None) -> str:
    """A printable table of the allocator's statistics.

    Example: ``print(dg.cuda.memory_summary())``.
    """
    return _mem.memory_summary(_runtime.resolve(device, "dg.cuda.memory_summary"))
