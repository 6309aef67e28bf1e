"""Batch slices run on OpenBLAS's worker threads (dynagrad._runtime.blas_threads): every item
covered once, results in slice order, BLAS's thread count restored (also after an error and across
concurrent callers), and the convolution that uses it equal to its unsplit self."""
import os
import threading

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn.functional as F
from dynagrad._runtime import blas_threads as bp
from dynagrad.ops.nn import conv as conv_op

needs_openblas = pytest.mark.skipif(bp._BLAS is None or bp._BLAS[1]() < 2,
                                    reason="NumPy's bundled OpenBLAS with 2+ threads")


def _blas_threads() -> int:
    return bp._BLAS[1]()


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64])
def test_slices_cover_every_item_once_in_order(n):
    slices = bp.run_split(n, lambda lo, hi: (lo, hi))
    assert slices[0][0] == 0 and slices[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(slices, slices[1:]))
    assert all(lo < hi for lo, hi in slices)
    assert len(slices) == bp.parallel_slices(n) <= n


@needs_openblas
def test_slices_run_on_other_threads_with_single_threaded_blas():
    before = _blas_threads()
    seen = bp.run_split(8, lambda lo, hi: (threading.get_ident(), _blas_threads()))
    assert len(seen) == min(8, before) and len({t for t, _ in seen}) == len(seen)
    assert seen[0][0] == threading.get_ident()   # the first slice runs in the caller
    assert all(n == 1 for _, n in seen)           # BLAS is single-threaded inside a slice
    assert _blas_threads() == before


@needs_openblas
def test_error_in_a_worker_slice_reaches_the_caller_and_restores_blas():
    before = _blas_threads()

    def work(lo, hi):
        if lo > 0:
            raise ValueError(f"slice {lo}:{hi} failed")
        return np.ones((64, 64), np.float32) @ np.ones((64, 64), np.float32)

    with pytest.raises(ValueError, match="failed"):
        bp.run_split(4, work)
    assert _blas_threads() == before
    assert bp.run_split(4, lambda lo, hi: hi - lo) == [2, 2]  # still usable


@needs_openblas
def test_concurrent_callers_get_right_results_and_restore_blas():
    before = _blas_threads()
    a = np.random.default_rng(0).standard_normal((40, 30, 30)).astype(np.float32)
    want = np.matmul(a, a)
    outs, errors = [], []

    def caller():
        try:
            for _ in range(20):
                out = np.empty_like(a)

                def work(lo, hi):
                    np.matmul(a[lo:hi], a[lo:hi], out=out[lo:hi])
                bp.run_split(len(a), work)
                outs.append(out)
        except BaseException as exc:  # noqa: B036 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=caller) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(outs) == 60
    for out in outs:
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    assert _blas_threads() == before


@pytest.mark.parametrize("batch", [2, 5, 9])
def test_split_convolution_equals_unsplit(monkeypatch, batch):
    # odd batch sizes give unequal slices; float64 so both orders of the weight-gradient sum agree
    rng = np.random.default_rng(batch)
    x0 = rng.standard_normal((batch, 3, 9, 8))
    w0, b0 = rng.standard_normal((4, 3, 3, 3)), rng.standard_normal(4)

    def run():
        x, w, b = (dg.tensor(v, requires_grad=True) for v in (x0, w0, b0))
        y = F.conv2d(x, w, b, padding=1, stride=(1, 2))
        (y * y).sum().backward()
        return [t.numpy() for t in (y.detach(), x.grad, w.grad, b.grad)]

    monkeypatch.setattr(conv_op, "SPLIT_MIN_MACS", 0)  # split even these small ones
    split = run()
    monkeypatch.setattr(bp, "_BLAS", None)   # no OpenBLAS control: one slice, as before
    assert bp.parallel_slices(batch) == 1
    for a, b in zip(split, run()):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def _split_in_child(queue):
    queue.put(bp.run_split(6, lambda lo, hi: (lo, hi)))


@needs_openblas
@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork start method")
def test_forked_child_splits_too():
    # a child forked from a process that split before must split too (OpenBLAS restarts its
    # workers lazily) and find BLAS's thread count as the parent left it
    import multiprocessing
    bp.run_split(4, lambda lo, hi: None)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_split_in_child, args=(queue,))
    child.start()
    slices = queue.get(timeout=60)
    child.join(timeout=60)
    assert child.exitcode == 0
    assert slices[0][0] == 0 and slices[-1][1] == 6 and len(slices) == bp.parallel_slices(6)
