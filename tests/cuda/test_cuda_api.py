"""The public ``dg.cuda`` module: devices, memory statistics, streams, events, seeding, errors.

Under the simulator (NUMBA_ENABLE_CUDASIM=1) there is exactly one device, kernels finish before
they return, streams are synchronous and events carry the host clock's time. So these tests cover
the API's behaviour and errors, but not: switching between several GPUs (set_device with a context
stack), a stream that is still busy (query() False), cross-stream waits on the device, or device
event timing. The "no CUDA" behaviour is checked in a subprocess where numba.cuda cannot be
imported, which holds on any machine.
"""
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import dynagrad as dg
from dynagrad.kernels.cuda import memory as cm

MiB = 1 << 20


def run_python(code: str, **env) -> str:
    """Run ``code`` in a fresh interpreter (the repository on its path); its stdout."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    full_env = {**os.environ, "PYTHONPATH": root, **env}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, env=full_env, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_importing_dynagrad_does_not_start_cuda():
    out = run_python("""
        import sys
        import dynagrad as dg
        print('numba.cuda' in sys.modules, hasattr(dg, 'cuda'))
    """)
    assert out.split() == ["False", "True"]


def test_without_numba_cuda_is_available_is_false_and_errors_say_how_to_fix():
    out = run_python("""
        import sys
        sys.modules['numba.cuda'] = None   # as if numba-cuda were not installed
        import dynagrad as dg
        print(dg.cuda.is_available(), dg.cuda.device_count())
        dg.cuda.empty_cache()              # allowed, as torch.cuda.empty_cache: nothing to free
        print(dg.cuda.memory_allocated(), dg.cuda.memory_reserved(),
              dg.cuda.max_memory_allocated())  # 0 0 0, as PyTorch without CUDA
        for call in (dg.cuda.current_device, dg.cuda.synchronize,
                     lambda: dg.cuda.memory_allocated(0),
                     dg.cuda.Stream, dg.cuda.Event, lambda: dg.cuda.set_device(0)):
            try:
                call()
            except RuntimeError as err:
                print("ERR", err)
            else:
                print("NO ERROR")
    """)
    lines = out.splitlines()
    assert lines[0] == "False 0" and lines[1] == "0 0 0"
    assert len(lines) == 8 and all(line.startswith("ERR dg.cuda.") for line in lines[2:])
    for line in lines[2:]:
        assert "CUDA is not available" in line and "numba-cuda" in line
        assert "NUMBA_ENABLE_CUDASIM=1" in line and "device='cpu'" in line


def test_devices():
    assert dg.cuda.is_available() is True
    n = dg.cuda.device_count()
    assert n >= 1
    assert 0 <= dg.cuda.current_device() < n
    assert isinstance(dg.cuda.get_device_name(), str) and dg.cuda.get_device_name(0)
    major, minor = dg.cuda.get_device_capability("cuda:0")
    assert isinstance(major, int) and isinstance(minor, int) and major >= 3
    dg.cuda.synchronize()
    dg.cuda.synchronize("cuda:0")
    dg.cuda.synchronize(dg.device("cuda"))


def test_set_device_and_device_context():
    start = dg.cuda.current_device()
    for spec in (0, "cuda:0", "cuda", dg.device("cuda:0")):
        dg.cuda.set_device(spec)
        assert dg.cuda.current_device() == 0
    with dg.cuda.device(0) as ctx:
        assert dg.cuda.current_device() == 0 and ctx.idx == 0
    with dg.cuda.device(None), dg.cuda.device(-1):  # no-ops, as torch.cuda.device
        assert dg.cuda.current_device() == 0
    dg.cuda.set_device(start)


@pytest.mark.parametrize("call", [
    dg.cuda.set_device, dg.cuda.synchronize, dg.cuda.get_device_name,
    dg.cuda.get_device_capability, dg.cuda.memory_allocated, dg.cuda.memory_reserved,
    dg.cuda.max_memory_allocated, dg.cuda.reset_peak_memory_stats, dg.cuda.memory_summary,
    dg.cuda.device, dg.cuda.Stream])
def test_device_ordinal_past_the_last_device_is_refused(call):
    bad = dg.cuda.device_count()
    with pytest.raises(RuntimeError, match=f"invalid CUDA device ordinal {bad}"):
        call(f"cuda:{bad}")
    with pytest.raises(RuntimeError, match=f"invalid CUDA device ordinal {bad}"):
        call(bad)


def test_device_arguments_of_the_wrong_kind():
    with pytest.raises(ValueError, match="expected a CUDA device, got cpu"):
        dg.cuda.set_device("cpu")
    with pytest.raises(TypeError, match="expected a device like"):
        dg.cuda.memory_allocated(1.5)
    with pytest.raises(RuntimeError, match="unknown device type"):
        dg.cuda.synchronize("gpu:0")


def test_memory_functions_match_the_allocator_statistics():
    cm.empty_cache()
    base = dg.cuda.memory_allocated()
    assert dg.cuda.memory_reserved() == base  # nothing cached right after empty_cache
    block = cm.allocate(3 * MiB)
    small = cm.allocate(10)
    assert dg.cuda.memory_allocated() == dg.cuda.memory_allocated("cuda:0") == base + 4 * MiB + 512
    assert dg.cuda.max_memory_allocated(0) >= base + 4 * MiB + 512
    del block
    assert dg.cuda.memory_allocated() == base + 512
    assert dg.cuda.memory_reserved() == base + 4 * MiB + 512
    dg.cuda.reset_peak_memory_stats()
    assert dg.cuda.max_memory_allocated() == base + 512
    assert dg.cuda.max_memory_reserved() == base + 4 * MiB + 512
    dg.cuda.empty_cache()
    assert dg.cuda.memory_reserved() == base + 512
    stats = dg.cuda.memory_stats()
    assert stats["allocated_bytes"] == dg.cuda.memory_allocated()
    assert "Allocated memory" in dg.cuda.memory_summary()
    del small


def test_out_of_memory_error_is_exported():
    assert dg.cuda.OutOfMemoryError is cm.OutOfMemoryError
    assert issubclass(dg.cuda.OutOfMemoryError, RuntimeError)


def test_stream_basics():
    s = dg.cuda.Stream()
    assert s.device == dg.device("cuda:0") and s.device_index == 0
    assert dg.cuda.Stream("cuda:0").device_index == 0
    s.synchronize()
    assert s.query() is True  # nothing queued
    other = dg.cuda.Stream()
    ev = other.record_event()
    assert isinstance(ev, dg.cuda.Event)
    s.wait_event(ev)
    s.wait_stream(other)
    s.synchronize()
    assert "dg.cuda.Stream" in repr(s)


def test_event_timing():
    start, end = dg.cuda.Event(enable_timing=True), dg.cuda.Event(enable_timing=True)
    start.record()
    time.sleep(0.02)
    end.record(dg.cuda.Stream())
    end.synchronize()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0.0
    from dynagrad.kernels.cuda import runtime
    if runtime.is_simulator():
        assert ms >= 19.0  # the simulator's events carry the host clock
    assert start.query() and end.query()


def test_event_errors():
    plain, timed = dg.cuda.Event(), dg.cuda.Event(enable_timing=True)
    plain.record()
    timed.record()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        plain.elapsed_time(timed)
    fresh = dg.cuda.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="must be recorded"):
        timed.elapsed_time(fresh)
    with pytest.raises(TypeError, match="expected a dg.cuda.Stream"):
        fresh.record(stream=0)
    fresh.wait()
    fresh.synchronize()


def test_manual_seed_seeds_the_current_gpu_and_manual_seed_all_every_gpu(monkeypatch):
    import dynagrad.random as random
    seen = []

    def record(seed, device_index=None):
        seen.append((seed, device_index))

    monkeypatch.setattr(random, "manual_seed_cuda", record, raising=False)
    dg.cuda.manual_seed(7)
    dg.cuda.manual_seed_all(np.int64(8))
    assert seen == [(7, dg.cuda.current_device()), (8, None)]
    assert all(type(seed) is int for seed, _ in seen)
    monkeypatch.delattr(random, "manual_seed_cuda")
    with pytest.raises(RuntimeError, match="manual_seed_cuda is missing"):
        dg.cuda.manual_seed(1)
