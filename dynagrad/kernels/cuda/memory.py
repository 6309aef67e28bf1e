"""The CUDA caching allocator: device memory for CUDA tensors, reused instead of freed.

``cudaMalloc`` costs tens of microseconds and ``cudaFree`` synchronizes the device, so a block
whose last user is gone goes back to a free pool of its device, keyed by its rounded size, and the
next request of that size takes it again. Sizes round up to 512-byte multiples below 1 MiB and to
2 MiB multiples from there, so a training loop's repeated shapes hit the same buckets and
reserved memory stays flat. When the device is full, its pool is emptied and the allocation
retried once before ``OutOfMemoryError`` says how much was requested, allocated and reserved.

On a GPU a block is raw memory from numba's context (``memalloc``); under the simulator
(``NUMBA_ENABLE_CUDASIM=1``) it is a host byte buffer. The raw allocation goes through the
module-level hook ``raw_alloc`` so a test can impose a memory limit.

Example (on a GPU, or under the simulator):
    >>> import numpy as np
    >>> from dynagrad.kernels.cuda import memory as cuda_memory
    >>> block = cuda_memory.allocate(24)
    >>> a = block.array((2, 3), (12, 4), np.float32)  # a numba device array over the block
    >>> block.nbytes                                  # the bucket the request rounded up to
    512
"""
from __future__ import annotations

import threading
from collections import deque

import numpy as np

from . import runtime as _runtime

SMALL_LIMIT = 1 << 20   # below this, sizes round to SMALL_ROUND; from it on, to LARGE_ROUND
SMALL_ROUND = 512
LARGE_ROUND = 2 << 20

__all__ = ["OutOfMemoryError", "Block", "allocate", "round_size", "raw_alloc", "empty_cache",
           "stats", "reset_peak_memory_stats", "memory_summary", "format_bytes"]


class OutOfMemoryError(RuntimeError):
    """A CUDA allocation failed even after the caching allocator emptied its pools and retried."""


def round_size(nbytes: int) -> int:
    """The bucket a request of ``nbytes`` is served from (a zero-byte request gets the smallest)."""
    if nbytes < SMALL_LIMIT:
        return max(-(-nbytes // SMALL_ROUND), 1) * SMALL_ROUND
    return -(-nbytes // LARGE_ROUND) * LARGE_ROUND


def format_bytes(n: float) -> str:
    """``3145728`` -> ``'3.00 MiB'``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024:
            return f"{n} B" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} TiB"


# ---------------------------------------------------------------------------------------------
# Backends: where raw memory comes from and how a view over it becomes a numba device array.

class _SimBackend:
    """The simulator: host byte buffers viewed as numpy arrays inside FakeCUDAArray."""

    def __init__(self):
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
        self._fake = FakeCUDAArray

    def raw_alloc(self, nbytes: int, device_index: int) -> tuple:
        buf = np.empty(nbytes, np.uint8)  # raises MemoryError itself when the host is full
        return buf, buf.ctypes.data

    def flush_frees(self, device_index: int) -> None:
        """Nothing to do: a dropped host buffer is freed at once."""

    def array(self, block: "Block", shape, strides, dtype: np.dtype, offset: int):
        return self._fake(np.asarray(_HostView(block, shape, strides, dtype, offset)))


class _HostView:
    """Describes a view of a block's host buffer to numpy, and keeps the block alive.

    ``np.asarray`` of this object makes an array whose ``base`` is this object (numpy stops
    collapsing view chains at a non-array owner), so every array and slice taken from it holds
    the Block, which returns its memory to the pool only when all of them are gone.
    """

    __slots__ = ("block", "__array_interface__")

    def __init__(self, block: "Block", shape, strides, dtype: np.dtype, offset: int):
        self.block = block
        self.__array_interface__ = {"version": 3, "shape": shape, "strides": strides,
                                    "typestr": dtype.str,
                                    "data": (block.ptr + offset, False)}


class _GpuBackend:
    """A real GPU: raw memory from numba's context, wrapped as DeviceNDArray views."""

    def __init__(self, cuda):
        from numba.cuda.cudadrv import driver as drv
        from numba.cuda.cudadrv.devicearray import DeviceNDArray
        self._cuda = cuda
        self._drv = drv
        self._ndarray = DeviceNDArray
        self._oom = drv.binding.CUresult.CUDA_ERROR_OUT_OF_MEMORY
        self._contexts: dict = {}

    def _context(self, device_index: int):
        ctx = self._contexts.get(device_index)
        if ctx is None:
            ctx = self._contexts[device_index] = \
                self._cuda.gpus[device_index].get_primary_context()
        return ctx

    def raw_alloc(self, nbytes: int, device_index: int) -> tuple:
        # cuMemAlloc allocates in the current context: make the block's device current for it.
        with self._cuda.gpus[device_index]:
            try:
                mem = self._context(device_index).memalloc(nbytes)
            except self._drv.CudaAPIError as err:
                if err.code == self._oom:
                    raise MemoryError(str(err)) from err
                raise
        return mem, mem.device_pointer_value

    def flush_frees(self, device_index: int) -> None:
        """numba queues the cuMemFree of dropped allocations: run the queue to free them now."""
        pending = getattr(self._context(device_index).memory_manager, "deallocations", None)
        if pending is not None:
            with self._cuda.gpus[device_index]:
                pending.clear()

    def array(self, block: "Block", shape, strides, dtype: np.dtype, offset: int):
        # A pointer whose owner is the Block: slices of the array (MemoryPointer.view) inherit
        # that owner, so the Block outlives every view of its memory.
        ptr = self._drv.MemoryPointer(self._context(block.device_index),
                                      self._drv.binding.CUdeviceptr(block.ptr + offset),
                                      block.nbytes - offset, owner=block)
        return self._ndarray(shape, strides, dtype, gpu_data=ptr)


_backend: list = []  # the one backend, made on first allocation


def _get_backend():
    if not _backend:
        cuda = _runtime.require("cuda allocation")
        _backend.append(_SimBackend() if _runtime.is_simulator() else _GpuBackend(cuda))
    return _backend[0]


def raw_alloc(nbytes: int, device_index: int) -> tuple:
    """Reserve ``nbytes`` of fresh device memory: ``(handle, address)``; dropping the handle frees
    it. Raises MemoryError when the device is full. Tests replace this hook to simulate a limit."""
    return _get_backend().raw_alloc(nbytes, device_index)


# ---------------------------------------------------------------------------------------------
# The pool.

class Block:
    """A piece of device memory; ``nbytes`` usable bytes from address ``ptr`` on ``device_index``.

    It returns to its device's free pool when garbage-collected (after every array viewing it).
    The memory's owner (numba's handle) stays in the pool, never in the Block: a Block collected
    as part of a reference cycle would take its handle into that cycle, and the collector runs
    the handle's weakref finalizer (numba's cuMemFree) even though ``__del__`` hands the address
    back to the pool, which would then lend out freed memory.
    """

    __slots__ = ("nbytes", "device_index", "ptr", "_pool", "__weakref__")

    def __init__(self, nbytes: int, device_index: int, ptr: int, pool: "_DevicePool"):
        self.nbytes = nbytes
        self.device_index = device_index
        self.ptr = ptr
        self._pool = pool

    def __del__(self):
        # Only an atomic list append: a collection can run this in any thread, even one inside
        # the allocator holding the lock, and at interpreter exit. The pool settles it later.
        self._pool.pending.append((self.ptr, self.nbytes))

    def array(self, shape: tuple, strides: tuple, dtype, offset: int = 0):
        """A numba device array over bytes ``offset`` on of this block, with byte ``strides``.

        Example: ``block.array((2, 3), (12, 4), np.float32)`` is a C-contiguous 2x3 float32 view;
        ``block.array((4, 3), (0, 4), np.float32)`` repeats one row four times (stride 0).
        """
        dtype = np.dtype(dtype)
        shape, strides = tuple(shape), tuple(strides)
        self._check_view(shape, strides, dtype, offset)
        return _get_backend().array(self, shape, strides, dtype, offset)

    def _check_view(self, shape: tuple, strides: tuple, dtype: np.dtype, offset: int) -> None:
        # A device array indexing past its block corrupts other tensors silently: check first.
        if len(shape) != len(strides):
            raise ValueError(f"Block.array: shape {shape} and strides {strides} differ in length")
        if min(shape, default=0) < 0:
            raise ValueError(f"Block.array: negative dimension in shape {shape}")
        lo = end = offset
        if 0 not in shape:  # an empty view touches no bytes
            for n, s in zip(shape, strides):
                if s < 0:
                    lo += (n - 1) * s
                else:
                    end += (n - 1) * s
            end += dtype.itemsize
        if lo < 0 or offset < 0 or end > self.nbytes:
            raise ValueError(f"Block.array: a {dtype} view of shape {shape}, byte strides {strides}"
                             f" at offset {offset} touches bytes [{lo}, {end}), outside the block's"
                             f" {self.nbytes} bytes")

    def __repr__(self) -> str:
        return f"Block(nbytes={self.nbytes}, device_index={self.device_index}, ptr={self.ptr:#x})"


class ForeignBlock:
    """Device memory another library owns, imported without a copy (``__cuda_array_interface__``,
    DLPack): viewed like a ``Block``, never pooled or counted; ``owner`` (the exporting object or
    its DLPack capsule keeper) stays alive as long as any view does.

    Example: ``ForeignBlock(ptr, nbytes, 0, owner=cupy_array).array((n,), (4,), np.float32)``.
    """

    __slots__ = ("nbytes", "device_index", "ptr", "owner", "__weakref__")

    def __init__(self, ptr: int, nbytes: int, device_index: int, owner):
        self.ptr, self.nbytes, self.device_index, self.owner = ptr, nbytes, device_index, owner

    array = Block.array
    _check_view = Block._check_view

    def __repr__(self) -> str:
        return (f"ForeignBlock(nbytes={self.nbytes}, device_index={self.device_index}, "
                f"ptr={self.ptr:#x}, owner={type(self.owner).__name__})")


class _DevicePool:
    """One device's free lists and exact statistics. Mutated only under ``_lock``."""

    def __init__(self, device_index: int):
        self.index = device_index
        self.free: dict = {}       # bucket size -> [address, ...]
        self.pending = deque()     # (address, size) of collected blocks, not yet pooled
        self.handles: dict = {}    # address -> the backend's owner of every reserved block
        self.allocated = self.reserved = self.peak_allocated = self.peak_reserved = 0
        self.num_allocs = self.num_frees = 0
        self.num_device_allocs = self.num_device_frees = 0
        self.num_alloc_retries = self.num_ooms = 0

    def settle(self) -> None:
        """Move collected blocks into the free lists, oldest first, so the most recently freed is
        reused first (deque appends and pops are atomic against a concurrent ``Block.__del__``)."""
        pending, free = self.pending, self.free
        while pending:
            ptr, size = pending.popleft()
            bucket = free.get(size)
            if bucket is None:
                bucket = free[size] = []
            bucket.append(ptr)
            self.allocated -= size
            self.num_frees += 1

    def release_free(self) -> int:
        """Drop every pooled block (its device memory is freed); returns how many."""
        count = 0
        for size, bucket in self.free.items():
            count += len(bucket)
            self.reserved -= size * len(bucket)
            for ptr in bucket:
                del self.handles[ptr]
        self.free.clear()
        self.num_device_frees += count
        return count


_pools: dict = {}                # device index -> _DevicePool
_lock = threading.RLock()        # reentrant: a raw_alloc hook may read the statistics


def _pool(device_index: int | None, op: str) -> _DevicePool:
    if device_index is None:
        device_index = _runtime.current_index(op)
    pool = _pools.get(device_index)
    if pool is None:
        _runtime.require(op)
        _runtime.check_index(device_index, op)
        with _lock:
            pool = _pools.setdefault(device_index, _DevicePool(device_index))
    return pool


def allocate(nbytes: int, device_index: int | None = None) -> Block:
    """A block of at least ``nbytes`` bytes on ``device_index`` (``None``: the current device).

    Example: ``allocate(1000).nbytes == 1024``; ``allocate(3 << 20).nbytes == 4 << 20``.
    """
    if nbytes < 0:
        raise ValueError(f"cuda allocate: negative size {nbytes}")
    pool = _pool(device_index, "cuda allocate")
    size = round_size(nbytes)
    with _lock:
        pool.settle()
        bucket = pool.free.get(size)
        ptr = bucket.pop() if bucket else _reserve(pool, size, nbytes)
        pool.allocated += size
        pool.num_allocs += 1
        if pool.allocated > pool.peak_allocated:
            pool.peak_allocated = pool.allocated
        return Block(size, pool.index, ptr, pool)


def _reserve(pool: _DevicePool, size: int, requested: int) -> int:
    """The address of fresh device memory for a bucket (its owner kept in ``pool.handles``); on
    out-of-memory, empty the device's pool and retry once."""
    try:
        handle, ptr = raw_alloc(size, pool.index)
    except MemoryError:
        pool.num_alloc_retries += 1
        _empty_pool_locked(pool)
        try:
            handle, ptr = raw_alloc(size, pool.index)
        except MemoryError as err:
            pool.num_ooms += 1
            raise OutOfMemoryError(_oom_message(pool, size, requested, err)) from err
    pool.reserved += size
    pool.num_device_allocs += 1
    if pool.reserved > pool.peak_reserved:
        pool.peak_reserved = pool.reserved
    pool.handles[ptr] = handle
    return ptr


def _oom_message(pool: _DevicePool, size: int, requested: int, err: BaseException) -> str:
    reason = f" ({err})" if str(err) else ""
    return (f"CUDA out of memory on cuda:{pool.index}: tried to allocate {format_bytes(requested)}"
            f" ({requested} bytes, a {format_bytes(size)} block){reason}. dynagrad has "
            f"{format_bytes(pool.allocated)} allocated by live tensors and "
            f"{format_bytes(pool.reserved)} reserved in total by its caching allocator; the cached"
            f" free blocks were released and the allocation retried once. Free tensors you no "
            f"longer need (del them), use smaller batches, or see dg.cuda.memory_summary().")


def _empty_pool_locked(pool: _DevicePool) -> None:
    pool.settle()
    if pool.release_free():
        _get_backend().flush_frees(pool.index)


def empty_cache() -> None:
    """Free every pooled (unused) block on every device; live blocks are untouched.

    Safe to call when nothing was ever allocated on CUDA: then it does nothing.
    """
    with _lock:
        for pool in _pools.values():
            _empty_pool_locked(pool)


def stats(device_index: int | None = None) -> dict:
    """Exact counters of one device (``None``: the current one).

    Keys: allocated_bytes (live blocks), reserved_bytes (live + pooled), pooled_bytes,
    peak_allocated_bytes, peak_reserved_bytes, active_blocks, pooled_blocks, num_allocs, num_frees,
    num_device_allocs, num_device_frees, num_alloc_retries, num_ooms.
    """
    pool = _pool(device_index, "cuda memory stats")
    with _lock:
        pool.settle()
        pooled_blocks = sum(len(b) for b in pool.free.values())
        return {"allocated_bytes": pool.allocated, "reserved_bytes": pool.reserved,
                "pooled_bytes": pool.reserved - pool.allocated,
                "peak_allocated_bytes": pool.peak_allocated,
                "peak_reserved_bytes": pool.peak_reserved,
                "active_blocks": pool.num_allocs - pool.num_frees, "pooled_blocks": pooled_blocks,
                "num_allocs": pool.num_allocs, "num_frees": pool.num_frees,
                "num_device_allocs": pool.num_device_allocs,
                "num_device_frees": pool.num_device_frees,
                "num_alloc_retries": pool.num_alloc_retries, "num_ooms": pool.num_ooms}


def reset_peak_memory_stats(device_index: int | None = None) -> None:
    """Restart the peak counters of one device (``None``: the current one) from current usage."""
    pool = _pool(device_index, "cuda reset_peak_memory_stats")
    with _lock:
        pool.settle()
        pool.peak_allocated = pool.allocated
        pool.peak_reserved = pool.reserved


def memory_summary(device_index: int | None = None) -> str:
    """A text table of one device's statistics (``None``: the current one)."""
    s = stats(device_index)
    index = _runtime.current_index("cuda memory_summary") if device_index is None else device_index
    rows = [("Allocated memory (live blocks)", format_bytes(s["allocated_bytes"]),
             format_bytes(s["peak_allocated_bytes"])),
            ("Reserved memory (live + pooled)", format_bytes(s["reserved_bytes"]),
             format_bytes(s["peak_reserved_bytes"])),
            ("Pooled memory (cached, unused)", format_bytes(s["pooled_bytes"]), ""),
            ("Live blocks", str(s["active_blocks"]), ""),
            ("Pooled blocks", str(s["pooled_blocks"]), ""),
            ("Allocations / frees", f"{s['num_allocs']} / {s['num_frees']}", ""),
            ("Device mallocs / frees", f"{s['num_device_allocs']} / {s['num_device_frees']}", ""),
            ("Out-of-memory retries / errors", f"{s['num_alloc_retries']} / {s['num_ooms']}", "")]
    width = (34, 18, 14)
    rule = "+" + "+".join("-" * (w + 2) for w in width) + "+"
    title = f"dynagrad CUDA memory summary, device cuda:{index}"
    lines = [rule, f"| {title:<{sum(width) + 6}} |", rule,
             _row(("Metric", "Current", "Peak"), width), rule]
    lines += [_row(r, width) for r in rows]
    lines.append(rule)
    return "\n".join(lines)


def _row(cells: tuple, width: tuple) -> str:
    first, *rest = cells
    return "| " + f"{first:<{width[0]}}" + "".join(
        f" | {c:>{w}}" for c, w in zip(rest, width[1:])) + " |"
