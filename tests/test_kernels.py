"""The kernel layer: in-memory and disk caching, the no-compile switch, concurrency, corruption."""
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import dynagrad as dg
from dynagrad.kernels import cache
from dynagrad.kernels.cpu import backend as cpu, templates

WORKLOAD = textwrap.dedent("""
    import json, sys
    import dynagrad as dg
    x = dg.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    y = (x * x + 1.0).tanh().sum(1).mean()
    y.backward()
    print(json.dumps({"grad": x.grad.tolist(), "stats": dg.kernels.cache_stats()}))
""")


def run_workload(cache_dir: Path, **env) -> dict:
    import json
    full_env = dict(os.environ, DYNAGRAD_CACHE_DIR=str(cache_dir), **env)
    proc = subprocess.run([sys.executable, "-c", WORKLOAD], env=full_env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_second_process_loads_everything_from_disk(tmp_path):
    first = run_workload(tmp_path)
    assert first["stats"]["compiles"] > 0
    assert first["stats"]["disk_loads"] == 0
    second = run_workload(tmp_path, DYNAGRAD_FORBID_COMPILE="1")
    assert second["stats"]["compiles"] == 0
    assert second["stats"]["disk_loads"] == first["stats"]["compiles"]
    assert second["grad"] == first["grad"]


def test_forbid_compile_raises_naming_the_kernel(tmp_path):
    env = dict(os.environ, DYNAGRAD_CACHE_DIR=str(tmp_path), DYNAGRAD_FORBID_COMPILE="1")
    proc = subprocess.run([sys.executable, "-c", WORKLOAD], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode != 0
    assert "RuntimeError: DYNAGRAD_FORBID_COMPILE is set but kernel elementwise[" in proc.stderr


def test_two_processes_compiling_at_once_into_one_empty_cache(tmp_path):
    env = dict(os.environ, DYNAGRAD_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", WORKLOAD], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [e for _, e in outputs]
    third = run_workload(tmp_path, DYNAGRAD_FORBID_COMPILE="1")
    assert third["stats"]["compiles"] == 0 and third["stats"]["disk_loads"] > 0


def test_corrupted_cache_entries_are_discarded_and_rebuilt(tmp_path):
    first = run_workload(tmp_path)
    folder = next(tmp_path.iterdir())
    sources = sorted(folder.glob("k_*.py"))
    machine_code = sorted((folder / "__pycache__").glob("*.nb*"))
    assert sources and machine_code
    sources[0].write_text("this is not python (")           # damaged generated source
    for f in machine_code[:3]:
        f.write_bytes(b"\x00garbage" * 10)                    # damaged Numba index / data
    again = run_workload(tmp_path)
    assert again["grad"] == first["grad"]
    assert again["stats"]["compiles"] >= 1
    clean = run_workload(tmp_path, DYNAGRAD_FORBID_COMPILE="1")
    assert clean["grad"] == first["grad"]


def test_in_memory_cache_counts_hits_and_specializes_little():
    x = dg.rand(5, 3)
    (x * 2.0).exp()
    before = dg.kernels.cache_stats()
    for shape in [(7,), (2, 9), (4, 4, 4)]:  # contiguous: same kernel for every shape
        y = dg.rand(*shape)
        (y * 2.0).exp()
    after = dg.kernels.cache_stats()
    assert after["misses"] == before["misses"]
    assert after["hits"] >= before["hits"] + 6
    # broadcasting and strided views share one kernel per op and dtype, whatever the rank
    for a, b in [((3, 1), (4,)), ((2, 3, 1), (1, 5)), ((2, 1, 2, 3, 1), (4,))]:
        dg.rand(*a) + dg.rand(*b)
    mid = dg.kernels.cache_stats()
    for a, b in [((5, 1), (2,)), ((1, 2, 3, 1, 2, 1), (3,))]:
        dg.rand(*a) + dg.rand(*b)
    assert dg.kernels.cache_stats()["misses"] == mid["misses"]


def test_large_tensors_take_the_parallel_kernel():
    n = cpu.FLAT_PARALLEL_MIN_ELEMENTS
    a = dg.rand(n + 1)
    np.testing.assert_allclose((a + a).numpy(), 2 * a.numpy())
    keys = [k for k in cache._memory if k[0] == "x + y" and k[4] == "p"]
    assert keys


@pytest.mark.parametrize("extra", [0, 1, templates.BLOCK - 1])
def test_blocked_parallel_kernels_cover_the_tail_and_run_in_place(extra):
    # a transcendental's threaded kernel runs whole blocks and a tail (in its driver, or in
    # the flat kernel for the prange fallback): every element must be written once, also when
    # the output is the input itself
    import dynagrad.nn.functional as F
    n = cpu.FLAT_PARALLEL_MIN_ELEMENTS + extra
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    assert templates.is_heavy("ftanh(x)") and not templates.is_heavy("x + y")
    t = dg.tensor(x)
    first = t.tanh().numpy()
    np.testing.assert_allclose(first, np.tanh(x), rtol=1e-6, atol=1e-7)
    # again: whole blocks now take the hot path's remembered threaded kernel, a tail compute's
    np.testing.assert_array_equal(t.tanh().numpy(), first)
    x64 = x.astype(np.float64)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(x64 / np.sqrt(2)))
    for _ in range(2):
        np.testing.assert_allclose(F.gelu(t).numpy(), x64 * cdf, rtol=1e-5, atol=1e-7)
    t.tanh_()  # in place: a block or tail run twice would apply tanh twice
    np.testing.assert_allclose(t.numpy(), np.tanh(x), rtol=1e-6, atol=1e-7)
    xt = dg.tensor(x, requires_grad=True)
    g = np.linspace(-1, 1, n).astype(np.float32)
    F.gelu(xt).backward(dg.tensor(g))  # two array operands: x and the incoming gradient
    phi = np.exp(-x64 * x64 / 2) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(xt.grad.numpy(), g * (cdf + x64 * phi), rtol=1e-5, atol=1e-6)
    leaky = F.leaky_relu(dg.tensor(x), 0.25).numpy()  # a parameterized light kernel: not blocked
    np.testing.assert_array_equal(leaky, np.where(x > 0, x, np.float32(0.25) * x))


def test_generated_source_is_readable_and_hash_named(tmp_path, monkeypatch):
    src, name, sig, what = templates.elementwise("x * y", ("a", "s"), ("float64", "float64"),
                                                 "float64", "c")
    assert "def kernel(a0, a1, out):" in src and "x * y" in src
    monkeypatch.setenv("DYNAGRAD_CACHE_DIR", str(tmp_path))
    disp = cache.lookup(("test-kernel",), lambda: (src, name, sig, what))
    out = np.empty(3)
    disp(np.arange(3.0), 2.0, out)
    assert out.tolist() == [0.0, 2.0, 4.0]
    files = list(cache.cache_dir().glob("k_*.py"))
    assert len(files) == 1 and files[0].read_text() == src
    cache._memory.pop(("test-kernel",))


TWO_FUNCTIONS = textwrap.dedent("""
    import numba


    @numba.njit
    def shared(x):
        return x * 3.0


    @numba.njit(cache=True)
    def triple(x):
        return shared(x)


    @numba.njit(cache=True)
    def plus_triple(x, y):
        return shared(x) + y
""")


def test_several_functions_of_one_module_compile_once_then_load(tmp_path, monkeypatch):
    # a tuple of names gives a tuple of dispatchers from one module (conv_tiles' forward and
    # backward share their helpers this way); a second lookup loads both from disk
    from numba import types
    monkeypatch.setenv("DYNAGRAD_CACHE_DIR", str(tmp_path))
    build = lambda: (TWO_FUNCTIONS, ("triple", "plus_triple"),  # noqa: E731
                     ((types.float64,), (types.float64, types.float64)), "test pair")
    before = cache.cache_stats()
    triple, plus_triple = cache.lookup(("test-pair",), build)
    assert triple(2.0) == 6.0 and plus_triple(2.0, 1.0) == 7.0
    after = cache.cache_stats()
    assert after["compiles"] - before["compiles"] == 2
    cache._memory.pop(("test-pair",))
    again = cache.lookup(("test-pair",), build)
    assert cache.cache_stats()["disk_loads"] - after["disk_loads"] == 2
    assert again[1](1.0, 0.5) == 3.5
    assert len(list(cache.cache_dir().glob("k_*.py"))) == 1
    cache._memory.pop(("test-pair",))


def test_cli_stats_and_warmup(tmp_path):
    env = dict(os.environ, DYNAGRAD_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-m", "dynagrad.kernels", "warmup"], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "compiled" in out.stdout
    stats = subprocess.run([sys.executable, "-m", "dynagrad.kernels", "stats"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert '"kernels_on_disk"' in stats.stdout
    import json
    assert json.loads(stats.stdout)["kernels_on_disk"] > 10
    cleared = subprocess.run([sys.executable, "-m", "dynagrad.kernels", "clear"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert cleared.returncode == 0 and not any(tmp_path.glob("*/k_*.py"))


def test_clear_cache_in_process_forgets_kernels(monkeypatch, tmp_path):
    monkeypatch.setenv("DYNAGRAD_CACHE_DIR", str(tmp_path))
    saved = dict(cache._memory)
    try:
        cache.clear_cache(disk=True)
        assert cache.cache_stats()["kernels"] == 0
        before = cache.cache_stats()["compiles"]
        assert (dg.ones(2) + dg.ones(2)).tolist() == [2.0, 2.0]
        assert cache.cache_stats()["compiles"] == before + 1
    finally:
        cache._memory.update(saved)


@pytest.mark.parametrize("expr", ["x + y"])
def test_no_thread_spin_penalty_for_small_tensors(expr):
    # small tensors never touch the thread pool: their kernel is the serial layout
    a = dg.rand(100)
    a + a
    small = [k for k in cache._memory if k[0] == expr and k[4] in ("c", "p")]
    assert any(k[4] == "c" for k in small)


_IDLE_POOL_PROBE = """
import os, resource, time, numba, dynagrad as dg
from dynagrad.kernels.cpu import backend as cpu
@numba.njit(parallel=True)
def total(x):  # what dynagrad's prange kernels run on without OpenBLAS
    acc = 0.0
    for i in numba.prange(x.shape[0]):
        acc += x[i]
    return acc
total(dg.rand(cpu.PARALLEL_MIN_ELEMENTS * 2).numpy())  # starts Numba's pool
time.sleep(0.05)
before = resource.getrusage(resource.RUSAGE_SELF)
time.sleep(0.3)
after = resource.getrusage(resource.RUSAGE_SELF)
busy = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
print(numba.threading_layer(), os.environ.get("OMP_WAIT_POLICY"), busy)
"""


@pytest.mark.parametrize("layer", ["default", "omp"])
def test_thread_pool_sleeps_between_calls(layer):
    # on a 2-core machine a pool that busy-waits between parallel calls steals the cores from
    # BLAS and everything else: TBB sleeps by itself, OpenMP must be told to wait passively
    from dynagrad._runtime import threads as _threads
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_THREADING_LAYER", "OMP_WAIT_POLICY")}
    if layer != "default":
        env["NUMBA_THREADING_LAYER"] = layer
    out = subprocess.run([sys.executable, "-c", _IDLE_POOL_PROBE], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    used, policy, busy = out[0], out[1], float(out[2])
    if layer == "default":  # the TBB wheel is a dependency on Linux x86-64: when dynagrad
        # finds it, Numba must use it (without it, a TBB on the loader path may still be used)
        assert used == "tbb" if _threads._tbb_runtime() is not None else used in ("tbb", "omp")
    else:
        assert used == "omp"
    if used == "omp":
        assert policy == "PASSIVE"
    assert busy < 0.1, f"{busy:.2f}s of CPU burnt while idle: the {used} pool is spinning"


_IDLE_WORKERS_PROBE = """
import resource, time, dynagrad as dg
from dynagrad.kernels.cpu import backend as cpu
a = dg.rand(cpu.PARALLEL_MIN_ELEMENTS * 2)
(a + a).exp()  # threaded elementwise kernels run on OpenBLAS's workers
time.sleep(0.3)  # they busy-wait ~0.1 s after each call, then sleep
before = resource.getrusage(resource.RUSAGE_SELF)
time.sleep(0.3)
after = resource.getrusage(resource.RUSAGE_SELF)
print((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
"""


def test_worker_pool_sleeps_when_idle():
    busy = float(subprocess.run([sys.executable, "-c", _IDLE_WORKERS_PROBE], capture_output=True,
                                text=True, check=True).stdout)
    assert busy < 0.1, f"{busy:.2f}s of CPU burnt while idle: OpenBLAS's workers are spinning"


def test_large_outputs_reuse_idle_buffers_but_never_live_ones():
    from dynagrad.kernels.cpu import memory
    n = memory.POOL_MIN_BYTES // 4
    a = dg.rand(n)
    first = a + 1.0
    ptr = first.data_ptr()
    assert ptr % memory.ALIGN_BYTES == 0  # whole cache lines for vector stores
    view = first[10:20]  # a live view keeps the buffer busy
    del first
    second = a + 2.0
    assert second.data_ptr() != ptr
    assert view.tolist() == (a[10:20] + 1.0).tolist()  # untouched by the second result
    del view
    third = a + 3.0  # now the first buffer is idle: it is reused
    assert third.data_ptr() == ptr
    np.testing.assert_allclose(third.numpy(), a.numpy() + 3.0, rtol=1e-6)
    del second, third
    assert memory.release_idle() >= 2 * n * 4
    assert memory.stats()["idle_bytes"] == 0


def test_large_hot_path_outputs_stay_intact_and_strided_inputs_are_read_right():
    # tensor-tensor and unary ops on large inputs take the hot path with a pooled output
    n = cpu.FLAT_PARALLEL_MIN_ELEMENTS
    a, b = dg.rand(n) - 0.5, dg.rand(n)
    first, relu = a + b, a.relu()
    second = a * b  # may not take first's (or relu's) buffer while they live
    assert len({first.data_ptr(), relu.data_ptr(), second.data_ptr()}) == 3
    np.testing.assert_allclose(first.numpy(), a.numpy() + b.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(relu.numpy(), np.maximum(a.numpy(), 0))
    np.testing.assert_allclose(second.numpy(), a.numpy() * b.numpy(), rtol=1e-6)
    m = dg.rand(512, 1024)
    t = m.t()  # large and transposed: the strided kernel, never a flat read of the memory
    np.testing.assert_allclose((t + t).numpy(), 2 * m.numpy().T, rtol=1e-6)
    np.testing.assert_array_equal(t.neg().numpy(), -m.numpy().T)


@pytest.mark.parametrize("env, expect_wide", [({}, True), ({"DYNAGRAD_PREFER_256_BIT": "1"}, False),
                                              ({"NUMBA_CPU_NAME": "generic"}, False)])
def test_wide_vectors_are_requested_on_avx512_cpus_unless_told_otherwise(env, expect_wide):
    from llvmlite import binding
    avx512 = bool(binding.get_host_cpu_features().get("avx512f"))
    base = {k: v for k, v in os.environ.items()
            if k not in ("NUMBA_CPU_FEATURES", "NUMBA_CPU_NAME", "DYNAGRAD_PREFER_256_BIT")}
    code = "import os, dynagrad; print(os.environ.get('NUMBA_CPU_FEATURES', ''))"
    out = subprocess.run([sys.executable, "-c", code], env={**base, **env}, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith(",-prefer-256-bit") == (expect_wide and avx512)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_copy_run_moves_exactly_the_run_at_any_length_and_position(dtype):
    import numba

    from dynagrad.kernels.cpu.scalarlib import copy_run

    @numba.njit
    def copy(dst, d, src, s, n):
        copy_run(dst, np.uint64(d), src, np.uint64(s), np.uint64(n))

    rng = np.random.default_rng(0)
    for n in (0, 1, 7, 8, 9, 15, 16, 17, 33, 100):
        for d, s in ((0, 0), (3, 5), (200 - n, 300 - n)):  # the last: both runs end their array
            src, dst = rng.random(300).astype(dtype), rng.random(200).astype(dtype)
            expected = dst.copy()
            expected[d:d + n] = src[s:s + n]
            copy(dst, d, src, s, n)
            np.testing.assert_array_equal(dst, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_tap_sums_adds_each_tap_on_its_lanes_only(dtype):
    import numba

    from dynagrad.kernels.cpu.scalarlib import add_tap_sums

    @numba.njit
    def add(dst, d, src, s, step, taps, lo, hi, limit):
        add_tap_sums(dst, d, src, s, step, taps, lo, hi, limit)

    lanes = templates.VECTOR_BYTES // np.dtype(dtype).itemsize
    rng = np.random.default_rng(1)
    for _ in range(200):
        src, dst = rng.random(400).astype(dtype), rng.random(100).astype(dtype)
        taps, step = int(rng.integers(0, 6)), int(rng.integers(0, 30))
        lo = int(rng.integers(-20, 5))
        hi, limit = lo + int(rng.integers(0, 25)), int(rng.integers(0, lanes + 1))
        s, d = int(rng.integers(20, 200)), int(rng.integers(0, 100 - lanes))
        expected = dst.copy()
        for e in range(taps):
            for lane in range(max(lo + e, 0), min(hi + e, limit)):
                expected[d + lane] += src[s + e * step + lane]
        add(dst, d, src, s, step, taps, lo, hi, limit)
        np.testing.assert_allclose(dst, expected, rtol=1e-6 if dtype == np.float32 else 1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool_pairs_writes_each_window_on_its_lanes_only(dtype):
    # one vector of 2 x 2 windows (nn_conv's max_pool_2x2): every count up to the lane count,
    # windows ending at the very end of the input, the last NaN winning over numbers (as
    # max_pool's scan), the first of equal values winning; lanes past the count untouched
    import numba

    from dynagrad.kernels.cpu.scalarlib import max_pool_pairs

    @numba.njit
    def pool(out, o, idx, src, s, width, base, n):
        return max_pool_pairs(out, o, idx, src, s, width, base, n)

    lanes = 64 // np.dtype(dtype).itemsize
    rng = np.random.default_rng(3)
    for n in range(1, lanes + 1):
        width = 2 * n + 1
        src = rng.integers(0, 4, 2 * width).astype(dtype)  # small integers: many ties
        src[rng.integers(0, 2 * width, 2)] = np.nan
        out, idx = np.full(lanes + 2, -7, dtype), np.full(lanes + 2, -7, np.int64)
        assert pool(out, 1, idx, src, 0, width, 100, n) == lanes
        for lane in range(n):
            offsets = (0, 1, width, width + 1)
            window = [src[2 * lane + off] for off in offsets]
            nans = [k for k, v in enumerate(window) if v != v]
            first = nans[-1] if nans else int(np.argmax(window))  # the first maximum
            np.testing.assert_array_equal(out[1 + lane], window[first])
            assert idx[1 + lane] == 100 + 2 * lane + offsets[first]
        assert (out[[0, *range(n + 1, lanes + 2)]] == -7).all()
        assert (idx[[0, *range(n + 1, lanes + 2)]] == -7).all()


def test_an_operand_repeating_one_value_runs_as_a_scalar_in_the_flat_kernel():
    # a stride-0 view of one value (a sum's or mean's gradient, an expanded 0-dim tensor) is
    # passed as a scalar: the result is the flat kernel's, and every other layout still works
    rng = np.random.default_rng(5)
    x = rng.standard_normal((300, 700)).astype(np.float32)
    one = np.broadcast_to(np.float32(1.5), x.shape)
    out = np.empty_like(x)
    cpu.elementwise("x * y", ("a", "a"), ("float32", "float32"), "float32", (x, one), out)
    np.testing.assert_array_equal(out, x * np.float32(1.5))
    row = np.broadcast_to(x[:1], x.shape)  # strides (0, 4): not one value, stays strided
    cpu.elementwise("x - y", ("a", "a"), ("float32", "float32"), "float32", (x, row), out)
    np.testing.assert_array_equal(out, x - x[:1])
    t = dg.tensor(x, requires_grad=True)
    dg.nn.functional.silu(t).sum().backward()  # the gradient arrives as one value, expanded
    x64 = x.astype(np.float64)
    s = 1 / (1 + np.exp(-x64))
    np.testing.assert_allclose(t.grad.numpy(), s * (1 + x64 * (1 - s)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("a_shape,b_shape", [
    ((512, 300), (512, 1)), ((512, 300), (300,)), ((8, 64, 16, 16), (64, 1, 1)),
    ((8, 64, 16, 16), (8, 64, 1, 1)), ((8, 64, 16, 16), (8, 1, 16, 16)),
    ((1, 1200, 120), (1200, 1)), ((4, 3, 8, 5, 280), (3, 1, 5, 1)),
    ((2, 5, 3, 7, 11, 60), (5, 1, 7, 1, 60))])
def test_large_broadcasts_take_the_vectorized_layout_with_the_same_results(a_shape, b_shape):
    rng = np.random.default_rng(6)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    assert np.broadcast_shapes(a_shape, b_shape) and a.size >= cpu.BROADCAST_LAYOUT_MIN_ELEMENTS
    A, B = dg.tensor(a), dg.tensor(b)
    np.testing.assert_array_equal((A - B).numpy(), a - b)
    np.testing.assert_array_equal((B * A + 1.5).numpy(), b * a + np.float32(1.5))
    np.testing.assert_array_equal(dg.where(A > B, A, B).numpy(), np.where(a > b, a, b))
    np.testing.assert_array_equal((A.to(dg.int32) + B.to(dg.int32)).numpy(),
                                  a.astype(np.int32) + b.astype(np.int32))
    # a transposed (non-contiguous) operand keeps the strided layout, with the same results
    t = np.ascontiguousarray(np.swapaxes(a, -1, -2))
    np.testing.assert_array_equal((dg.tensor(t).transpose(-1, -2) - B).numpy(), a - b)


@pytest.mark.parametrize("shape,other_shape,layout", [
    ((7, 13), (7, 13), "c"), ((cpu.FLAT_PARALLEL_MIN_ELEMENTS + 5,), None, "p"),
    ((512, 300), (300,), "b")])
def test_inplace_ops_read_their_output_from_out(shape, other_shape, layout):
    # the operand that is the output is read from ``out`` (kind "o"), so that LLVM's overlap
    # check lets the loop vectorize; results match the out-of-place ops exactly, on the first
    # call (general path) and the second (the hot path's remembered kernel for small tensors)
    rng = np.random.default_rng(9)
    x = rng.standard_normal(shape).astype(np.float32)
    z = rng.standard_normal(other_shape or shape).astype(np.float32)
    X, Z = dg.tensor(x), dg.tensor(z)
    for _ in range(2):
        y = X.clone()
        assert y.add_(Z) is y
        np.testing.assert_array_equal(y.numpy(), (X + Z).numpy())
        y.mul_(1.5)
        y -= Z
        np.testing.assert_array_equal(y.numpy(), ((X + Z) * 1.5 - Z).numpy())
        if other_shape is None:  # unary ops, and ops whose other operand is self
            y.relu_()
            np.testing.assert_array_equal(y.numpy(), np.maximum(((x + z) * np.float32(1.5) - z), 0))
            y.tanh_()
            np.testing.assert_allclose(y.numpy(), np.tanh(np.maximum((x + z) * 1.5 - z, 0)),
                                       rtol=1e-6, atol=1e-7)
            y.mul_(y)
            y.sub_(y)
            assert not y.numpy().any()
    keys = [k for k in cache._memory
            if k[:3] == ("x + y", ("o", "a"), ("float32", "float32")) and k[3] == "float32"]
    assert [k[4] for k in keys].count(layout) == 1
    if layout in "cp":  # remembered for the hot path
        assert ("o", dg.float32, layout) in dg.ops.elementwise.OPS["add"].fast
        assert ("o", dg.float32, float, layout) in dg.ops.elementwise.OPS["mul"].fast


def test_an_output_operand_needs_a_layout_that_reads_out():
    with pytest.raises(ValueError, match="layout c, p or b"):
        templates.elementwise("x + y", ("o", "a"), ("float32", "float32"), "float32", "s")
    source = templates.elementwise("x + y", ("o", "a"), ("float32", "float32"), "float32",
                                   "c")[0]
    assert "def kernel(a1, out):" in source and "x = out[i]" in source


_COPY_CASES = [  # (source shape, view of it), each copied to a contiguous array
    ((32, 64, 33, 17), lambda a: a.transpose(0, 2, 3, 1)),  # NCHW -> NHWC, tiles with edges
    ((37, 50), lambda a: a.T),  # a 2-D transpose, one tile row and column partial
    ((700, 513), lambda a: a.T),  # threaded tiles
    ((16, 128, 8, 32), lambda a: a.transpose(0, 2, 1, 3)),  # attention heads: rows of 32
    ((64, 130, 8, 64), lambda a: a.transpose(0, 2, 1, 3)),  # threaded rows
    ((6, 7, 8, 9, 10), lambda a: a.transpose(4, 0, 2, 1, 3)),  # five dims, none merge: fallback
    ((300, 200), lambda a: a[::2, 1:]),  # sliced: rows with a gap
    ((300, 200), lambda a: a[:, ::2]),  # no unit step: fallback
    ((300, 200), lambda a: a[::-1]),  # a negative step: fallback
    ((300, 1), lambda a: np.broadcast_to(a, (300, 200))),  # a stride-0 last dim: fallback
    ((3, 1, 200, 40), lambda a: np.broadcast_to(a, (3, 5, 200, 40)).transpose(0, 1, 3, 2)),
    ((3, 1, 40), lambda a: np.broadcast_to(a, (3, 200, 40))),  # a stride-0 outer dim: rows
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.bool_])
@pytest.mark.parametrize("case", range(len(_COPY_CASES)))
def test_strided_copies_move_every_element_once(case, dtype):
    # .contiguous() of permuted, sliced and broadcast views: rows, tiled transposes (partial
    # tiles, threaded or not) and the elementwise fallback all give NumPy's copy
    from dynagrad.kernels.cpu import strided_copy
    shape, view = _COPY_CASES[case]
    a = np.random.default_rng(case).standard_normal(shape) * 100
    src = view(a.astype(dtype))
    out = np.full(src.shape, 7, dtype)
    applies = strided_copy.copy(src, out)
    assert applies == (case not in (5, 7, 8, 9))
    if applies:
        np.testing.assert_array_equal(out, src)
    from dynagrad.ops.movement import copy_array  # what .contiguous() and clone() call
    out2 = np.empty(src.shape, dtype)
    copy_array(src, out2)
    np.testing.assert_array_equal(out2, src)


_SLICE_CASES = [  # (source view, output view of a larger array), as cat and setitem write
    (lambda a: a[:, :40], lambda o: o[:, 10:50]),                     # rows into rows
    (lambda a: a[:, :40].T.copy().T, lambda o: o[:, 50:90]),          # a transpose into rows
    (lambda a: a[:, :40], lambda o: o[:, 40:0:-1]),                   # a reversed output: no
    (lambda a: a[:, :40], lambda o: o[:, 10:90:2]),                    # no unit output step: no
]


@pytest.mark.parametrize("threaded", [False, True])
@pytest.mark.parametrize("case", range(len(_SLICE_CASES)))
def test_strided_copies_into_slices_of_a_larger_output(case, threaded):
    from dynagrad.kernels.cpu import strided_copy
    rows = 30_000 if threaded else 300  # 40 columns: 1.2M elements, past both thresholds
    a = np.random.default_rng(case).standard_normal((rows, 200)).astype(np.float32)
    src_view, out_view = _SLICE_CASES[case]
    src = src_view(a)
    full = np.full((rows, 300), 7, np.float32)
    out = out_view(full)
    expected = full.copy()
    out_view(expected)[...] = src
    applies = strided_copy.copy(src, out)
    assert applies == (case < 2)
    if applies:
        np.testing.assert_array_equal(full, expected)  # the slice written, the rest untouched


def test_overlapping_copies_read_before_writing():
    x = dg.arange(10.0)
    x[1:] = x[:-1]
    assert x.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    big = dg.arange(float(1 << 14)).reshape(128, 128)
    big[:, 1:] = big[:, :-1]
    expected = np.arange(float(1 << 14)).reshape(128, 128)
    expected[:, 1:] = expected[:, :-1].copy()
    np.testing.assert_array_equal(big.numpy(), expected)


def test_cat_of_large_parts_matches_numpy():
    rng = np.random.default_rng(9)
    parts = [rng.standard_normal((16, c, 64, 64)).astype(np.float32) for c in (32, 8, 24)]
    ts = [dg.tensor(p, requires_grad=True) for p in parts]
    y = dg.cat(ts, 1)
    np.testing.assert_array_equal(y.detach().numpy(), np.concatenate(parts, 1))
    g = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(dg.tensor(g))
    for t, lo, hi in zip(ts, (0, 32, 40), (32, 40, 64)):
        np.testing.assert_array_equal(t.grad.numpy(), g[:, lo:hi])


def test_contiguous_of_permuted_tensors_and_its_gradient():
    a = np.random.default_rng(2).standard_normal((8, 16, 20, 24)).astype(np.float32)
    t = dg.tensor(a, requires_grad=True)
    y = t.permute(0, 2, 3, 1).contiguous()
    assert y.is_contiguous()
    np.testing.assert_array_equal(y.detach().numpy(), a.transpose(0, 2, 3, 1))
    g = np.random.default_rng(3).standard_normal(y.shape).astype(np.float32)
    y.backward(dg.tensor(g))
    np.testing.assert_array_equal(t.grad.numpy(), g.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(dg.tensor(a).transpose(1, 2).contiguous().numpy(),
                                  np.ascontiguousarray(a.transpose(0, 2, 1, 3)))


def test_large_elementwise_ops_copy_strided_operands_first():
    # operands shaped like the output but transposed or sliced are copied to contiguous arrays
    # (rows or tiled transposes), then the flat or broadcast kernels run; results as NumPy's
    rng = np.random.default_rng(12)
    a = rng.standard_normal((700, 400)).astype(np.float32)
    b = rng.standard_normal((400, 700)).astype(np.float32)
    A, B = dg.tensor(a), dg.tensor(b)
    assert a.size >= cpu.BROADCAST_LAYOUT_MIN_ELEMENTS
    np.testing.assert_array_equal((A.t() + B).numpy(), a.T + b)
    np.testing.assert_array_equal(A.t().relu().numpy(), np.maximum(a.T, 0))
    np.testing.assert_array_equal((A[:, :200] * A[:, 200:]).numpy(), a[:, :200] * a[:, 200:])
    bias = rng.standard_normal(700).astype(np.float32)
    np.testing.assert_array_equal((A.t() - dg.tensor(bias)).numpy(), a.T - bias)
    np.testing.assert_allclose(A.t().tanh().numpy(), np.tanh(a.T), rtol=1e-6, atol=1e-7)
    y = B.clone()
    y.t().add_(A)  # the output itself is strided: written in place through the view
    np.testing.assert_array_equal(y.numpy(), b + a.T)
