"""The CUDA caching allocator (dynagrad.kernels.cuda.memory).

Under the simulator (NUMBA_ENABLE_CUDASIM=1, set by tests/cuda/conftest.py when no GPU is present) a
block is a host byte buffer and views are the simulator's FakeCUDAArray, so these tests cover the
pool (bucketing, reuse, statistics, out-of-memory retry through the ``raw_alloc`` hook, thread
safety) and the view geometry exactly. They do not cover the real-GPU backend: numba's
``memalloc``, the driver's out-of-memory error turning into MemoryError, the flush of numba's
deferred ``cuMemFree`` queue, and DeviceNDArray views over a MemoryPointer owned by the Block; those
run when the same tests run on a GPU without the simulator.

Statistics are compared as differences from a baseline taken after a garbage collection, with the
collector paused, so blocks that other tests leave behind cannot change them mid-test.
"""
import gc
import threading
import weakref

import numpy as np
import pytest
from numba import cuda  # a module global, so the simulator can stand in for it inside kernels

from dynagrad.kernels.cuda import memory as cm

MiB = 1 << 20


@pytest.fixture(autouse=True)
def quiet_gc():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def stats():
    return cm.stats(0)


def host_bytes(block):
    """The block's bytes, read back through a device array (copy_to_host)."""
    return block.array((block.nbytes,), (1,), np.uint8).copy_to_host()


def fill(block, data: np.ndarray):
    """Write ``data``'s bytes at the start of ``block`` through a device array."""
    raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
    block.array(raw.shape, (1,), np.uint8).copy_to_device(raw)


@pytest.mark.parametrize("nbytes, bucket", [
    (0, 512), (1, 512), (512, 512), (513, 1024), (4000, 4096), (MiB - 1, MiB),
    (MiB, 2 * MiB), (2 * MiB, 2 * MiB), (2 * MiB + 1, 4 * MiB), (3 * MiB, 4 * MiB)])
def test_round_size_buckets(nbytes, bucket):
    assert cm.round_size(nbytes) == bucket


def test_allocate_gives_a_rounded_block_on_the_current_device():
    block = cm.allocate(1000)
    assert (block.nbytes, block.device_index) == (1024, 0)
    assert isinstance(block.ptr, int) and block.ptr != 0
    zero = cm.allocate(0)  # a zero-byte request still gives a valid minimal block
    assert zero.nbytes == 512
    assert zero.array((0,), (4,), np.float32).copy_to_host().shape == (0,)


def test_freed_block_memory_is_reused():
    block = cm.allocate(3000)
    ptr, device_allocs = block.ptr, stats()["num_device_allocs"]
    del block
    again = cm.allocate(2900)  # same 3072-byte bucket
    assert again.ptr == ptr
    assert stats()["num_device_allocs"] == device_allocs
    other = cm.allocate(5000)  # another bucket: fresh memory, not the pooled block
    assert other.ptr != again.ptr


def test_statistics_are_exact_across_alloc_free_empty_cache_and_peak_reset():
    cm.empty_cache()
    base = stats()
    assert base["reserved_bytes"] == base["allocated_bytes"]  # nothing pooled after empty_cache

    def delta():
        s = stats()
        return {k: s[k] - base[k] for k in ("allocated_bytes", "reserved_bytes", "num_allocs",
                                            "num_frees", "num_device_allocs", "num_device_frees")}

    a, b = cm.allocate(100), cm.allocate(3 * MiB)
    assert delta() == {"allocated_bytes": 512 + 4 * MiB, "reserved_bytes": 512 + 4 * MiB,
                       "num_allocs": 2, "num_frees": 0, "num_device_allocs": 2,
                       "num_device_frees": 0}
    assert stats()["peak_allocated_bytes"] >= base["allocated_bytes"] + 512 + 4 * MiB
    del b
    assert delta() == {"allocated_bytes": 512, "reserved_bytes": 512 + 4 * MiB, "num_allocs": 2,
                       "num_frees": 1, "num_device_allocs": 2, "num_device_frees": 0}
    assert stats()["pooled_bytes"] == 4 * MiB
    cm.reset_peak_memory_stats(0)
    s = stats()
    assert (s["peak_allocated_bytes"], s["peak_reserved_bytes"]) == \
        (s["allocated_bytes"], s["reserved_bytes"])
    c = cm.allocate(600)  # a 1024-byte bucket: the peak grows by exactly that
    assert stats()["peak_allocated_bytes"] == base["allocated_bytes"] + 512 + 1024
    del c
    assert stats()["peak_allocated_bytes"] == base["allocated_bytes"] + 512 + 1024
    cm.empty_cache()
    assert delta() == {"allocated_bytes": 512, "reserved_bytes": 512, "num_allocs": 3,
                       "num_frees": 2, "num_device_allocs": 3, "num_device_frees": 2}
    assert stats()["pooled_blocks"] == 0
    del a


def test_many_alloc_free_cycles_keep_reserved_flat():
    sizes = [4 * 96, 4 * 96 * 10, 3 * MiB, 17, 4 * 96 * 10]  # one "training step"'s buffers

    def step():
        live = [cm.allocate(n) for n in sizes]
        live.pop(0)  # free some mid-step, as activations die during backward
        live.append(cm.allocate(sizes[0]))
        return sum(b.nbytes for b in live)

    step()
    first = stats()
    for _ in range(50):
        step()
    last = stats()
    assert last["reserved_bytes"] == first["reserved_bytes"]
    assert last["num_device_allocs"] == first["num_device_allocs"]
    assert last["allocated_bytes"] == first["allocated_bytes"]
    assert last["num_allocs"] - first["num_allocs"] == 50 * (len(sizes) + 1)


def test_views_read_and_write_the_right_bytes():
    block = cm.allocate(256)
    ref = np.arange(64, dtype=np.float32)
    fill(block, ref)
    # a transposed 2-D view starting at element 4, and a broadcast row (stride 0)
    t = block.array((3, 5), (4, 12), np.float32, offset=16).copy_to_host()
    np.testing.assert_array_equal(t, ref[4:4 + 15].reshape(5, 3).T)
    row = block.array((4, 3), (0, 4), np.float32, offset=8).copy_to_host()
    np.testing.assert_array_equal(row, np.broadcast_to(ref[2:5], (4, 3)))
    # other dtypes over the same bytes
    as_i32 = block.array((4,), (4,), np.int32).copy_to_host()
    np.testing.assert_array_equal(as_i32, ref[:4].view(np.int32))
    # writes through a strided view land on exactly the bytes it covers
    view = block.array((2, 2), (32, 8), np.float64, offset=8)
    view[:] = np.array([[1.5, -2.0], [3.25, 4.0]])
    expect = ref.view(np.uint8).copy()
    expect.view(np.float64)[[1, 2, 5, 6]] = [1.5, -2.0, 3.25, 4.0]
    np.testing.assert_array_equal(host_bytes(block)[:256], expect)


def test_a_kernel_writes_through_a_block_view():
    """One tiny launch: device arrays from Block.array are valid kernel arguments."""
    @cuda.jit
    def scale(src, dst):
        i = cuda.grid(1)
        if i < dst.shape[0]:
            dst[i] = src[i] * 2.0

    block = cm.allocate(64)
    fill(block, np.arange(4, dtype=np.float32))
    src = block.array((4,), (4,), np.float32)
    dst = block.array((4,), (8,), np.float32, offset=16)  # every other float after the source
    scale[1, 4](src, dst)
    out = block.array((12,), (4,), np.float32).copy_to_host()
    np.testing.assert_array_equal(out[:4], [0, 1, 2, 3])
    np.testing.assert_array_equal(out[4::2], [0, 2, 4, 6])


def test_views_keep_their_block_alive():
    block = cm.allocate(4096)
    ptr, alive = block.ptr, weakref.ref(block)
    view = block.array((8,), (4,), np.float32)
    part = view[2:]
    del block, view
    assert alive() is not None  # the slice still holds it: its memory must not be reused
    other = cm.allocate(4096)
    assert other.ptr != ptr
    del part
    assert alive() is None
    assert cm.allocate(4096).ptr == ptr


@pytest.mark.parametrize("shape, strides, offset", [
    ((200,), (4,), 0),          # runs past the end of a 512-byte block
    ((2, 2), (-8, 4), 0),       # reaches before byte 0
    ((4,), (4,), 500),          # starts inside, ends outside
    ((1,), (4,), -4),           # negative offset
])
def test_views_outside_the_block_are_refused(shape, strides, offset):
    block = cm.allocate(512)
    with pytest.raises(ValueError, match="outside the block's 512 bytes"):
        block.array(shape, strides, np.float32, offset)


def test_view_argument_errors():
    block = cm.allocate(512)
    with pytest.raises(ValueError, match="differ in length"):
        block.array((2, 2), (8,), np.float32)
    with pytest.raises(ValueError, match="negative dimension"):
        block.array((-1,), (4,), np.float32)
    with pytest.raises(ValueError, match="negative size"):
        cm.allocate(-1)
    with pytest.raises(RuntimeError, match="invalid CUDA device ordinal 3"):
        cm.allocate(8, 3)


def test_out_of_memory_empties_the_pools_retries_once_then_raises(monkeypatch):
    """A 6 MiB device, simulated by a ``raw_alloc`` hook that refuses to go over the limit."""
    cm.empty_cache()
    base = stats()["reserved_bytes"]
    limit = base + 6 * MiB
    calls = []
    real = cm.raw_alloc

    def limited(nbytes, device_index):
        calls.append(nbytes)
        if stats()["reserved_bytes"] + nbytes > limit:
            raise MemoryError("simulated: device full")
        return real(nbytes, device_index)

    monkeypatch.setattr(cm, "raw_alloc", limited)
    keep = cm.allocate(2 * MiB)
    pooled = cm.allocate(2 * MiB)
    del pooled  # 4 MiB reserved, 2 MiB of it cached
    before = stats()
    fits_after_emptying = cm.allocate(4 * MiB)
    after = stats()
    assert calls == [2 * MiB, 2 * MiB, 4 * MiB, 4 * MiB]  # failed, emptied, retried once
    assert after["num_alloc_retries"] - before["num_alloc_retries"] == 1
    assert after["num_device_frees"] - before["num_device_frees"] == 1
    assert after["pooled_bytes"] == 0 and after["reserved_bytes"] == limit
    assert after["num_ooms"] == before["num_ooms"]

    calls.clear()
    with pytest.raises(cm.OutOfMemoryError) as info:
        cm.allocate(3 * MiB)
    assert calls == [4 * MiB, 4 * MiB]  # one retry, no more
    assert stats()["num_ooms"] == after["num_ooms"] + 1
    assert isinstance(info.value, RuntimeError)
    msg = str(info.value)
    allocated = cm.format_bytes(stats()["allocated_bytes"])
    for part in ("CUDA out of memory", "cuda:0", "tried to allocate 3.00 MiB", "3145728 bytes",
                 f"{allocated} allocated", f"{cm.format_bytes(limit)} reserved",
                 "simulated: device full", "retried once"):
        assert part in msg, (part, msg)
    # the failure left the pool consistent: freeing makes room again
    del keep, fits_after_emptying
    cm.empty_cache()
    assert cm.allocate(3 * MiB).nbytes == 4 * MiB


def test_concurrent_threads_never_share_a_live_block():
    live, lock = [], threading.Lock()
    base = stats()

    def work():
        mine = []
        for i in range(200):
            mine.append(cm.allocate(512 * (1 + i % 3)))
            if i % 2:
                mine.pop(0)
        with lock:
            live.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({b.ptr for b in live}) == len(live)
    s = stats()
    assert s["allocated_bytes"] - base["allocated_bytes"] == sum(b.nbytes for b in live)
    assert s["num_allocs"] - base["num_allocs"] == 800
    assert s["num_frees"] - base["num_frees"] == 800 - len(live)
    del live
    assert stats()["allocated_bytes"] == base["allocated_bytes"]


def test_memory_summary_is_a_table_of_the_statistics():
    block = cm.allocate(3 * MiB)
    text = cm.memory_summary(0)
    assert "cuda:0" in text
    line = next(ln for ln in text.splitlines() if "Allocated memory" in ln)
    assert cm.format_bytes(stats()["allocated_bytes"]) in line
    assert "Reserved memory" in text and "Out-of-memory" in text
    del block


def test_format_bytes():
    assert [cm.format_bytes(n) for n in (0, 1023, 1536, 3 * MiB, 5 << 30)] == \
        ["0 B", "1023 B", "1.50 KiB", "3.00 MiB", "5.00 GiB"]


def test_a_block_collected_in_a_reference_cycle_keeps_its_memory_reserved(monkeypatch):
    """numba frees device memory from a weakref finalizer on its owning handle. A Block that dies
    in a reference cycle (a tensor in an autograd graph, say) must not take that handle into the
    cycle: the collector would run the finalizer while ``__del__`` hands the address back to the
    pool, which would then lend out freed memory (seen on a GPU as CUDA_ERROR_INVALID_VALUE)."""
    freed = []
    real = cm.raw_alloc

    class Handle:  # stands for numba's owning pointer, with its cuMemFree finalizer
        def __init__(self, inner):
            self.inner = inner

    def tracked(nbytes, device_index):
        inner, ptr = real(nbytes, device_index)
        handle = Handle(inner)
        weakref.finalize(handle, freed.append, ptr)
        return handle, ptr

    monkeypatch.setattr(cm, "raw_alloc", tracked)
    cm.empty_cache()
    block = cm.allocate(3 * MiB)
    ptr = block.ptr
    cycle = [block]
    cycle.append(cycle)
    del block, cycle
    gc.collect()
    assert freed == []                      # the memory is still reserved ...
    again = cm.allocate(3 * MiB)
    assert again.ptr == ptr                 # ... and lent again from the pool
    del again
    cm.empty_cache()
    gc.collect()
    assert freed == [ptr]                   # freed once the pool lets it go
