"""Threaded flat kernels on OpenBLAS's workers (kernels/worker_pool.py, templates.pooled_kernel).

Each threaded kernel (elementwise "p" layout, optimizer update, bias add, total) is checked
element for element against its serial counterpart, which the rest of the suite checks against
NumPy and PyTorch: the threaded one must cut the work into slices and hand every operand, scalar
and parameter over intact.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import dynagrad as dg
from dynagrad._runtime import blas_threads as _batch_parallel
from dynagrad.kernels import cache, optim_updates as fused_update
from dynagrad.kernels.cpu import backend as cpu, templates, worker_pool

pytestmark = pytest.mark.skipif(not worker_pool.AVAILABLE,
                                reason="NumPy without its bundled OpenBLAS: no worker pool")

N = cpu.FLAT_PARALLEL_MIN_ELEMENTS


def _operand(kind: str, type_name: str, n: int, rng):
    if kind == "s":
        return {"bool": True, "int64": np.int64(-3), "int32": np.int32(7)}.get(
            type_name, np.dtype(type_name).type(1.75))
    if type_name == "bool":
        return rng.random(n) > 0.5
    if type_name.startswith("int"):
        return rng.integers(-50, 50, n).astype(type_name)
    return (rng.standard_normal(n) * 3).astype(type_name)


CASES = [  # expr, kinds, operand types, output type, params (name, type, value)
    ("x + y", ("a", "a"), ("float32", "float32"), "float32", ()),
    ("x * y + z", ("a", "s", "a"), ("float64", "float64", "float64"), "float64", ()),
    ("ftanh(x)", ("a",), ("float32",), "float32", ()),  # blocked loop, tail in the driver
    ("fgelu(x) * y", ("a", "s"), ("float64", "float64"), "float64", ()),
    ("clamp(x, lo, hi)", ("a",), ("float32",), "float32",
     (("lo", "float32", np.float32(-0.5)), ("hi", "float32", np.float32(0.25)))),
    ("x * y - w", ("a", "a", "a", "s"), ("int64", "int64", "int64", "int64"), "int64", ()),
    ("x + y", ("a", "s"), ("int32", "int32"), "int32", ()),
    ("x != y", ("a", "s"), ("bool", "bool"), "bool", ()),
    ("x > y", ("a", "a"), ("float32", "float32"), "bool", ()),
]


@pytest.mark.parametrize("extra", [0, 37, 3 * N // 2 + 5])
@pytest.mark.parametrize("case", CASES, ids=[c[0] + "/" + c[2][0] for c in CASES])
def test_threaded_kernel_equals_serial_kernel(case, extra):
    expr, kinds, types, out_type, params = case
    n = N + extra
    rng = np.random.default_rng(extra)
    operands = tuple(_operand(k, t, n, rng) for k, t in zip(kinds, types))
    threaded = np.empty(n, out_type)
    cpu.elementwise(expr, kinds, types, out_type, operands, threaded, params)
    serial = np.empty(n, out_type)
    key = (expr, kinds, types, out_type, "c", tuple(p[:2] for p in params))
    cpu._build(key, expr, kinds, types, out_type, "c", params)(
        *operands, *(p[2] for p in params), serial)
    np.testing.assert_array_equal(threaded, serial)


def test_slices_cover_every_element_once():
    # in place, y += 1 over several slices: an element no slice wrote keeps its value, one that
    # two slices wrote gains 2
    n = 2 * N + 3 * templates.BLOCK + 11
    x = np.arange(n, dtype=np.float64)
    y = x.copy()
    cpu.elementwise("x + y", ("a", "s"), ("float64", "float64"), "float64", (y, 1.0), y)
    np.testing.assert_array_equal(y, x + 1)


def test_one_slice_while_a_batch_split_holds_blas():
    # inside run_split OpenBLAS has one thread: the kernel runs as one slice in the caller
    a = dg.randn(N + 7)
    expected = (a.tanh() * 2).numpy()

    def work(lo, hi):
        return ((a.tanh() * 2).numpy() == expected).all()
    assert all(_batch_parallel.run_split(2, work))  # the slices themselves call threaded kernels


def test_prange_kernel_without_openblas(monkeypatch):
    # NumPy on MKL or Accelerate has no gotoblas_pthread: threaded kernels use Numba's prange,
    # and a transcendental's covers whole blocks, leaving the tail to its caller
    monkeypatch.setattr(worker_pool, "AVAILABLE", False)
    source = templates.elementwise("ftanh(x)", ("a",), ("float32",), "float32", "p")[0]
    assert "numba.prange" in source and "run_slices" not in source
    assert templates.whole_blocks_only("ftanh(x)") and not templates.whole_blocks_only("x + y")
    x = np.linspace(-4, 4, N + 5, dtype=np.float32)
    out = np.empty_like(x)
    held = {k: cache._memory.pop(k) for k in list(cache._memory) if k[0] == "ftanh(x)"}
    try:  # (in memory, the pooled kernels of the same keys would be found first)
        cpu.elementwise("ftanh(x)", ("a",), ("float32",), "float32", (x,), out)
    finally:
        for k in [k for k in cache._memory if k[0] == "ftanh(x)"]:
            del cache._memory[k]
        cache._memory.update(held)
    np.testing.assert_allclose(out, np.tanh(x.astype(np.float64)), rtol=2e-6, atol=1e-7)


_LOAD_FROM_DISK = """
import numpy as np, dynagrad as dg
from dynagrad.kernels import cache_stats
from dynagrad.kernels.cpu import backend as cpu
x = np.linspace(-3, 3, cpu.FLAT_PARALLEL_MIN_ELEMENTS + 9).astype(np.float32)
got = dg.tensor(x).tanh().numpy()
err = float(np.max(np.abs(got.astype(np.float64) - np.tanh(x.astype(np.float64)))))
print(cache_stats()["disk_loads"], cache_stats()["compiles"], err)
"""


def test_threaded_kernel_loads_from_disk_in_a_new_process(tmp_path):
    # the driver reaches OpenBLAS through symbols registered in each process: a kernel compiled
    # in one process must load and run in another, where the addresses differ
    env = dict(os.environ, DYNAGRAD_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", _LOAD_FROM_DISK], env=env, check=True,
                           capture_output=True, text=True).stdout.split() for _ in range(2)]
    assert int(runs[0][1]) >= 1  # the first process compiled
    assert int(runs[1][1]) == 0 and int(runs[1][0]) >= 1  # the second only loaded
    assert float(runs[0][2]) < 1e-6 and float(runs[1][2]) < 1e-6


_OPTIONS = {"sgd": (True, True), "adam": (True,), "rmsprop": (True, True)}


@pytest.mark.parametrize("family", sorted(fused_update._FAMILIES))
def test_threaded_optimizer_update_equals_serial_update(family):
    # every array of the update (parameter, gradient, state buffers) is cut into the same slices
    options = _OPTIONS.get(family, ())
    buffers, scalars, _ = fused_update._FAMILIES[family](*options)
    n = N + 37
    rng = np.random.default_rng(1)
    arrays = [rng.random(n).astype(np.float32) + 0.5 for _ in range(2 + len(buffers))]
    values = [(i % 2 == 0) if s in fused_update._FLAGS else np.float32(0.9 - 0.07 * i)
              for i, s in enumerate(scalars)]
    results = []
    for target in ("cpu", "cpu-threaded"):
        kernel = cache.lookup(("test-optim", family, target), lambda: fused_update.update_kernel(
            family, "float32", *options, target=target))
        work = [a.copy() for a in arrays]
        kernel(*work, *values)
        results.append(work)
    for serial, threaded in zip(*results):
        np.testing.assert_array_equal(threaded, serial)


def test_large_parameters_update_on_the_workers():
    w = dg.nn.Parameter(dg.randn(N))
    opt = dg.optim.Adam([w], lr=0.1)
    w.grad = dg.ones(N)
    before = w.detach().numpy().copy()
    opt.step()
    assert any(k[:4] == ("optim", "adam", "float32", "cpu-threaded") for k in cache._memory)
    np.testing.assert_allclose(w.detach().numpy(), before - 0.1, rtol=1e-5, atol=1e-6)


def test_concurrent_callers_get_right_results():
    # several Python threads hand slices to the same few OpenBLAS workers at once (each driver
    # releases the GIL): every caller must get its own, complete result
    import threading
    x = np.linspace(-3, 3, N + 11).astype(np.float32)
    expected = dg.tensor(x).tanh().numpy()
    failures = []

    def caller(k: int) -> None:
        t = dg.tensor(x * 1.0)
        for _ in range(20):
            if not np.array_equal((t.tanh() + k).numpy() - k, expected + np.float32(k) - k):
                failures.append(k)
    threads = [threading.Thread(target=caller, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads) and not failures


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_runs_threaded_kernels():
    # DataLoader workers are forked: OpenBLAS restarts its workers in the child on first use
    import multiprocessing
    x = dg.tensor(np.linspace(-3, 3, N + 11).astype(np.float32))
    expected = x.tanh().numpy()  # the parent's workers are running
    with multiprocessing.get_context("fork").Pool(1) as pool:
        got = pool.apply(_tanh_in_child, (x.numpy(),))
    np.testing.assert_array_equal(got, expected)


def _tanh_in_child(x: np.ndarray) -> np.ndarray:
    return dg.tensor(x).tanh().numpy()


@pytest.mark.parametrize("rows, cols, dtype", [(N // 100 + 3, 100, np.float32),
                                               (3, N // 2 + 7, np.float64),
                                               (N + 5, 1, np.float32), (N // 63, 63, np.float64)])
def test_add_rows_adds_the_vector_to_every_row(rows, cols, dtype):
    # slices start at multiples of BLOCK elements, so they start and end inside rows
    rng = np.random.default_rng(rows)
    out = rng.standard_normal((rows, cols)).astype(dtype)
    v = rng.standard_normal(2 * cols).astype(dtype)[::2]  # a strided vector is copied first
    expected = out + v
    cpu.add_rows(out, v)
    np.testing.assert_array_equal(out, expected)


def test_large_linear_adds_its_bias_on_the_workers():
    import dynagrad.nn.functional as F
    rng = np.random.default_rng(3)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((512, 64), (300, 64), (300,)))
    got = F.linear(dg.tensor(x), dg.tensor(w), dg.tensor(b)).numpy()
    assert ("add_rows", "float32") in cache._memory
    np.testing.assert_allclose(got, x.astype(np.float64) @ w.T.astype(np.float64) + b,
                               rtol=1e-4, atol=1e-4)


def test_threaded_total_does_not_depend_on_the_thread_count(monkeypatch):
    # each of the TOTAL_CHUNKS rows is folded whole by one thread: one slice or several give
    # the same float64 total to the last bit; Numba's prange variant (no OpenBLAS) agrees
    x = np.random.default_rng(4).standard_normal(cpu.TOTAL_CHUNKS * 40_001).astype(np.float32)
    squares = "acc += np.float64(v) * np.float64(v)"
    threaded = cpu.threaded_total(x, squares)
    _batch_parallel._blas_single_threaded(True)
    try:
        one_slice = cpu.threaded_total(x, squares)
    finally:
        _batch_parallel._blas_single_threaded(False)
    monkeypatch.setattr(worker_pool, "AVAILABLE", False)
    source, name, signature, _ = templates.reduce_rows_parallel(
        "0", squares, "acc", "float32", "float64", "float64")
    assert "numba.prange" in source
    partial = np.empty(cpu.TOTAL_CHUNKS)
    cache.lookup(("test-prange-total", squares), lambda: (source, name, signature, "total"))(
        x, x.size // cpu.TOTAL_CHUNKS, partial)
    assert threaded == one_slice
    np.testing.assert_allclose(float(partial.sum()), threaded, rtol=1e-14)
    np.testing.assert_allclose(threaded, np.sum(x.astype(np.float64) ** 2), rtol=1e-12)


_WITHOUT_POOL = """
import json, numpy as np, dynagrad as dg
import dynagrad.nn.functional as F
from dynagrad.kernels.cpu import backend as cpu, worker_pool
rng = np.random.default_rng(5)
x = rng.standard_normal((1400, 401)).astype(np.float32)  # 2^19 and more, not whole blocks
w = rng.standard_normal((300, 401)).astype(np.float32)
b = rng.standard_normal(300).astype(np.float32)
t = dg.tensor(x)
p = dg.nn.Parameter(dg.tensor(rng.standard_normal(cpu.PARALLEL_MIN_ELEMENTS).astype(np.float32)))
opt = dg.optim.SGD([p], lr=0.5, momentum=0.9)
p.grad = dg.ones(cpu.PARALLEL_MIN_ELEMENTS)
before = p.detach().numpy().copy()
opt.step()
u = t.clone()
u.tanh_()  # in place: the output is an operand (kind "o"), blocked with a tail where prange
u.mul_(t)
print(json.dumps({"inplace": u.numpy()[-1][-50:].tolist(), "pooled": worker_pool.AVAILABLE, "threshold": cpu.FLAT_PARALLEL_MIN_ELEMENTS,
                  "tanh": (t.tanh() * 2 + t).numpy().tolist()[0][:50],
                  "gelu": F.gelu(t).numpy()[-1][-50:].tolist(),
                  "linear": F.linear(t, dg.tensor(w), dg.tensor(b)).numpy()[::97, ::31].tolist(),
                  "sum": float(dg.tensor(np.tile(x, (4, 1))).sum()),
                  "step": (before - p.detach().numpy())[:50].tolist()}))
"""


def test_the_pool_can_be_switched_off_and_the_fallbacks_agree():
    # DYNAGRAD_WORKER_POOL=0 (and NumPy without OpenBLAS) take the prange / one-thread kernels
    import json
    runs = {}
    for switch in ("1", "0"):
        env = dict(os.environ, DYNAGRAD_WORKER_POOL=switch)
        runs[switch] = json.loads(subprocess.run([sys.executable, "-c", _WITHOUT_POOL], env=env,
                                                 check=True, capture_output=True,
                                                 text=True).stdout)
    on, off = runs["1"], runs["0"]
    assert on["pooled"] and not off["pooled"]
    assert off["threshold"] == cpu.PARALLEL_MIN_ELEMENTS > on["threshold"]
    for key in ("tanh", "gelu", "linear", "step", "inplace"):
        np.testing.assert_array_equal(np.array(on[key]), np.array(off[key]), err_msg=key)
    np.testing.assert_allclose(on["sum"], off["sum"], rtol=1e-6)
    last = np.random.default_rng(5).standard_normal((1400, 401)).astype(np.float32)[-1, -50:]
    np.testing.assert_allclose(on["inplace"], np.tanh(last) * last, rtol=1e-6, atol=1e-7)
