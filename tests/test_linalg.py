"""Linear algebra: the records of tests/opinfos/linalg.py (forward against float64 NumPy,
gradients, PyTorch parity), then broadcasting and layouts against PyTorch, the threaded and
register-tile products, operator forms, double backward and errors.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import dynagrad as dg
from harness import assert_values, check_op
from opinfo import family, params
from opinfos.linalg import TOL, data

check = functools.partial(assert_values, tol=TOL)


@pytest.mark.parametrize("info,dtype", params(family("linalg")))
def test_op(info, dtype):
    check_op(info, "cpu", dtype)


def test_matmul_torch_parity_with_broadcasting():
    torch = pytest.importorskip("torch")
    for sa, sb in [((4,), (4,)), ((4,), (2, 4, 3)), ((2, 1, 3, 4), (5, 4, 2)), ((3, 4), (4,)),
                   ((1, 3, 4), (2, 4, 2)), ((2, 3, 4), (4,))]:
        a, b = data(sa, 1), data(sb, 2)
        da, db = (dg.tensor(x, dtype=dg.float64, requires_grad=True) for x in (a, b))
        ta, tb = (torch.tensor(x, requires_grad=True) for x in (a, b))
        o, t = da @ db, ta @ tb
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-12)
        w = data(tuple(t.shape), 3)
        o.backward(dg.tensor(w, dtype=dg.float64))
        t.backward(torch.tensor(w))
        np.testing.assert_allclose(da.grad.numpy(), ta.grad.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(db.grad.numpy(), tb.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_transposed_operand_gradients_keep_its_layout():
    # q @ k.transpose(1, 2): k's gradient is computed as a transposed product so that it comes
    # back contiguous (no strided copy); a transposed left operand likewise. Values as torch's.
    torch = pytest.importorskip("torch")
    q, k, w = data((3, 5, 4), 1), data((3, 6, 4), 2), data((3, 5, 6), 3)
    dq, dk = (dg.tensor(x, dtype=dg.float64, requires_grad=True) for x in (q, k))
    tq, tk = (torch.tensor(x, requires_grad=True) for x in (q, k))
    (dq @ dk.transpose(1, 2)).backward(dg.tensor(w, dtype=dg.float64))
    (tq @ tk.transpose(1, 2)).backward(torch.tensor(w))
    assert dk.grad.numpy().flags.c_contiguous
    np.testing.assert_allclose(dk.grad.numpy(), tk.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dq.grad.numpy(), tq.grad.numpy(), rtol=1e-12, atol=1e-12)
    da = dg.tensor(data((3, 4, 5), 4), dtype=dg.float64, requires_grad=True)
    ta = torch.tensor(data((3, 4, 5), 4), requires_grad=True)
    (da.transpose(1, 2) @ dk.detach()[:, :4]).sum().backward()
    (ta.transpose(1, 2) @ tk.detach()[:, :4]).sum().backward()
    assert da.grad.numpy().flags.c_contiguous
    np.testing.assert_allclose(da.grad.numpy(), ta.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sa,sb", [((64, 128, 64), (64, 64, 128)), ((32, 2, 96, 96), (96, 96)),
                                   ((1, 40, 128, 128), (40, 128, 64))])
def test_batched_products_split_across_cores_match_numpy(sa, sb):
    # batches of small float32 products above SPLIT_MIN_BATCH_WORK run as slices of their first
    # batch dim (a broadcast operand is shared): the result must equal one np.matmul, and so
    # must the gradients computed through the same path
    from dynagrad.kernels.cpu.gemm import products as linalg
    a, b = data(sa, 5).astype(np.float32), data(sb, 6).astype(np.float32)
    batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    assert sa[-2] * sa[-1] * sb[-1] * int(np.prod(batch)) >= linalg.SPLIT_MIN_BATCH_WORK
    da, db = (dg.tensor(x, requires_grad=True) for x in (a, b))
    out = da @ db
    np.testing.assert_allclose(out.detach().numpy(), np.matmul(a, b), rtol=1e-5, atol=1e-4)
    assert out.detach().numpy().flags.c_contiguous
    g = data(tuple(out.shape), 7).astype(np.float32)
    out.backward(dg.tensor(g))
    ga = np.matmul(g, np.swapaxes(b, -1, -2))
    gb = np.matmul(np.swapaxes(a, -1, -2), g)
    np.testing.assert_allclose(da.grad.numpy(), ga.reshape((-1,) + sa).sum(0), rtol=1e-4,
                               atol=1e-3)
    np.testing.assert_allclose(db.grad.numpy(), gb.reshape((-1,) + sb).sum(0), rtol=1e-4,
                               atol=1e-3)


def test_batched_small_products_from_register_tiles_match_numpy():
    # float32 batches of whole 8 x 32 tiles run on gemm_tile's AVX-512 tiles straight from the
    # operands: attention's layouts (strided 4-D views, a transposed right operand laid out in
    # 16 x 16 blocks, a transposed left one, a broadcast batch dim) against float64 NumPy
    from dynagrad._runtime.cpu_target import compiles_for_avx512
    from dynagrad.kernels.cpu.gemm import products as linalg
    rng = np.random.default_rng(8)

    def heads(*shape):  # (batch, length, heads, dim) -> (batch, heads, length, dim) view
        return rng.standard_normal(shape, dtype=np.float32).transpose(0, 2, 1, 3)
    q, k, v = heads(16, 128, 4, 64), heads(16, 128, 4, 64), heads(16, 128, 4, 64)
    w = rng.standard_normal((16, 4, 128, 128), dtype=np.float32)
    cases = [(q, k.transpose(0, 1, 3, 2)), (w, v), (w.transpose(0, 1, 3, 2), q),
             (rng.standard_normal((64, 128, 64), dtype=np.float32), k.reshape(64, 128, 64)[:, :64]),
             (rng.standard_normal((1, 4, 128, 64), dtype=np.float32), k[:, :, :64, :32])]
    for a, b in cases:
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
        assert linalg._tiles_fit(a, b, shape, a.shape[-1]) == compiles_for_avx512()
        got = linalg.matmul(a, b)
        want = np.matmul(a.astype(np.float64), b.astype(np.float64))
        assert got.shape == want.shape and got.flags.c_contiguous
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    # what the tiles do not cover goes to NumPy: a partial tile, strided rows and columns
    off = rng.standard_normal((64, 100, 64), dtype=np.float32)
    np.testing.assert_allclose(linalg.matmul(off, k.reshape(64, 128, 64)[:, :64]),
                               np.matmul(off, k.reshape(64, 128, 64)[:, :64]), rtol=1e-5,
                               atol=1e-4)
    strided = w[..., ::2, ::2]
    assert not linalg._tiles_fit(w, strided, w.shape[:-1] + (64,), 64)
    np.testing.assert_allclose(linalg.matmul(w[..., :64], strided),
                               np.matmul(w[..., :64], strided), rtol=1e-5, atol=1e-4)


def test_small_row_products_from_packed_register_tiles_match_numpy():
    # kernels.tile_gemm (recurrent state products, linear layers): every row remainder (14- or
    # 8-row tiles, then 8/4/2/1-row ones), masked last columns, a left operand with a row
    # stride, on one thread and split over OpenBLAS's workers by panels or by row blocks, k
    # summed in passes, against float64 NumPy
    from dynagrad.kernels.cpu.gemm import tiles as gemm_tile, matmul as tile_gemm
    from dynagrad.kernels.cache import lookup
    if not gemm_tile.AVAILABLE:
        pytest.skip("the register tiles need AVX-512")
    kernel = lookup(("tile_gemm",), tile_gemm.build)
    rng = np.random.default_rng(9)
    # (8-row blocks below tile_gemm.TALL_FROM rows, 14-row ones from there: every remainder)
    shapes = [(m, 37, 70) for m in (*range(1, 18), *range(28, 42))] + [
        (20, 200, 800), (20, 800, 200), (5, 3, 1), (64, 96, 384), (128, 784, 256), (9, 0, 40),
        (9, 4500, 70),  # (5 passes over k)
        (300, 2100, 40),  # (slices of row blocks, 3 passes over k)
        (40, 3000, 600)]  # (passes over k, each packing groups of at most 8 panels)
    for m, k, n in shapes:
        a = rng.standard_normal((m, 2 * k), dtype=np.float32)[:, :k]  # rows 2k apart
        w = rng.standard_normal((n, k), dtype=np.float32)
        want = a.astype(np.float64) @ w.T.astype(np.float64)
        # B packed once, B with contiguous rows, B = W.T (packed by transposes), a transposed A
        for left, right in ((a, tile_gemm.pack(w.T)), (a, np.ascontiguousarray(w.T)[None]),
                            (a, w.T[None]), (np.asfortranarray(a), w.T[None, ::1, ::1])):
            out = np.full((m, n), np.nan, np.float32)
            kernel(left, right, out)
            # (float32 sums over k terms: the absolute error grows with k)
            np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4 * max(1.0, k / 1000),
                                       err_msg=str((m, k, n, left.strides, right.strides)))
    packed = tile_gemm.pack(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert packed.shape == (1, 2, 32)
    np.testing.assert_array_equal(packed[0, :, :3], [[0, 1, 2], [3, 4, 5]])
    assert not packed[0, :, 3:].any()  # the padding columns are zeros


def test_linear_and_2d_matmul_with_few_rows_match_float64():
    # float32 products in kernels.cpu.gemm.products.matmul_2d's tile range: F.linear's forward
    # (x @ W.T), input and weight gradients (g @ W, g.T @ x; with few rows) and a plain 2-D
    # matmul of a transposed view, against float64 NumPy
    import dynagrad.nn.functional as F
    from dynagrad.kernels.cpu.gemm import products as linalg
    rng = np.random.default_rng(10)
    for rows, n_in, n_out in [(128, 784, 256), (20, 200, 36), (3, 64, 1000), (300, 64, 128),
                              (600, 64, 96)]:
        assert rows * n_in * n_out >= linalg.TILES_MIN_WORK and n_in >= linalg.TILES_MIN_K
        x = rng.standard_normal((rows, n_in), dtype=np.float32)
        w = rng.standard_normal((n_out, n_in), dtype=np.float32) / np.float32(np.sqrt(n_in))
        b = rng.standard_normal(n_out, dtype=np.float32)
        g = rng.standard_normal((rows, n_out), dtype=np.float32)
        xt = dg.tensor(x, requires_grad=True)
        wt = dg.tensor(w, requires_grad=True)
        out = F.linear(xt, wt, dg.tensor(b))
        out.backward(dg.tensor(g))
        x64, w64, g64 = x.astype(np.float64), w.astype(np.float64), g.astype(np.float64)
        np.testing.assert_allclose(out.detach().numpy(), x64 @ w64.T + b, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(xt.grad.numpy(), g64 @ w64, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(wt.grad.numpy(), g64.T @ x64, rtol=1e-4, atol=2e-4)
        got = dg.matmul(dg.tensor(x), dg.tensor(w).mT)
        np.testing.assert_allclose(got.numpy(), x64 @ w64.T, rtol=1e-4, atol=1e-4)


def test_openblas_avx2_kernels_send_every_product_to_the_tiles(monkeypatch):
    # where NumPy's OpenBLAS runs AVX2 kernels (its Haswell ones, as on AMD's Zen 5) the tiles
    # take the products that OpenBLAS's AVX-512 kernels keep, with the same results
    from dynagrad._runtime.blas_threads import blas_core
    from dynagrad.kernels.cpu.gemm import tiles as gemm_tile
    from dynagrad.kernels.cpu.gemm import products as linalg
    core = blas_core()
    assert linalg.TILES_ALWAYS == (core is not None and core not in linalg.BLAS_AVX512_CORES)
    if not gemm_tile.AVAILABLE:
        pytest.skip("the register tiles need AVX-512")
    rng = np.random.default_rng(11)
    a = rng.standard_normal((700, 400), dtype=np.float32).T  # read down its columns, 400 rows
    b = rng.standard_normal((700, 200), dtype=np.float32)
    monkeypatch.setattr(linalg, "TILES_ALWAYS", False)
    assert not linalg._tiles_faster(a, b)
    monkeypatch.setattr(linalg, "TILES_ALWAYS", True)
    assert linalg._tiles_faster(a, b)
    np.testing.assert_allclose(linalg.matmul_2d(a, b), a.astype(np.float64) @ b, rtol=1e-4,
                               atol=1e-3)


def test_operator_forms_and_double_backward():
    a, b = data((2, 3), 1), data((3, 2), 2)
    x = dg.tensor(a, dtype=dg.float64, requires_grad=True)
    y = dg.tensor(b, dtype=dg.float64, requires_grad=True)
    check(x @ y, a @ b, dg.float64)
    check(x.matmul(y), a @ b, dg.float64)
    check(x.mm(y), a @ b, dg.float64)
    check(b @ x.detach(), b @ a, dg.float64)  # __rmatmul__ with a NumPy array on the left
    go = dg.tensor(data((2, 2), 3), dtype=dg.float64, requires_grad=True)
    assert dg.autograd.gradgradcheck(dg.matmul, (x, y), (go,))
    v = dg.tensor(data((3,), 4), dtype=dg.float64, requires_grad=True)
    assert dg.autograd.gradgradcheck(dg.mv, (x, v), (dg.tensor(data((2,), 5), dtype=dg.float64,
                                                               requires_grad=True),))
    assert dg.autograd.gradgradcheck(lambda p, q: dg.einsum("ij,jk->ik", p, q), (x, y), (go,))


def test_outer_mixed_dtypes_promote():
    out = dg.outer(dg.tensor([1, 2]), dg.tensor([0.5, 1.5, 2.0]))
    check(out, np.outer([1, 2], [0.5, 1.5, 2.0]).astype(np.float32), dg.float32)


# --- errors --------------------------------------------------------------------------------

def test_matmul_shape_mismatch_message():
    with pytest.raises(RuntimeError) as e:
        dg.ones(2, 3) @ dg.ones(4, 5)
    assert str(e.value) == "matmul: shapes (2, 3) and (4, 5) cannot be multiplied (3 != 4)"
    with pytest.raises(RuntimeError, match=r"matmul: shapes \(3,\) and \(4,\) cannot be "):
        dg.matmul(dg.ones(3), dg.ones(4))
    with pytest.raises(RuntimeError, match=r"matmul: shapes \(2, 3, 4\) and \(3,\) cannot be "
                                           r"multiplied \(4 != 3\)"):
        dg.matmul(dg.ones(2, 3, 4), dg.ones(3))


@pytest.mark.parametrize("fn,args,pattern", [
    (dg.matmul, ((), (3,)), "at least 1D"),
    (dg.matmul, ((2, 3, 4), (3, 4, 2)), "not broadcastable"),
    (dg.mm, ((2, 3), (3,)), "2-D"),
    (dg.mm, ((2, 3), (2, 3)), r"mm: shapes \(2, 3\) and \(2, 3\) cannot be multiplied \(3 != 2\)"),
    (dg.bmm, ((2, 3), (3, 2)), "3-D"),
    (dg.bmm, ((2, 3, 4), (3, 4, 2)), "batch sizes differ"),
    (dg.bmm, ((2, 3, 4), (2, 3, 2)), "cannot be multiplied"),
    (dg.mv, ((2, 3), (2,)), "cannot be multiplied"),
    (dg.mv, ((3,), (3,)), "2-D matrix"),
    (dg.dot, ((3,), (4,)), "inconsistent tensor size"),
    (dg.dot, ((2, 2), (2,)), "1D tensors expected"),
    (dg.outer, ((2, 2), (2,)), "1D tensors expected"),
])
def test_shape_errors(fn, args, pattern):
    with pytest.raises(RuntimeError, match=pattern):
        fn(*[dg.ones(s) for s in args])


def test_dtype_and_einsum_errors():
    with pytest.raises(RuntimeError, match="same dtype"):
        dg.ones(2, 2) @ dg.ones(2, 2, dtype=dg.float64)
    with pytest.raises(RuntimeError, match="bool"):
        dg.ones(2, 2, dtype=dg.bool) @ dg.ones(2, 2, dtype=dg.bool)
    with pytest.raises(RuntimeError, match="operands"):
        dg.einsum("ij,jk->ik", dg.ones(2, 2))
    with pytest.raises(RuntimeError, match="number of subscripts"):
        dg.einsum("ijk->i", dg.ones(2, 2))
    with pytest.raises(RuntimeError, match="einsum"):
        dg.einsum("ij,jk->ik", dg.ones(2, 3), dg.ones(4, 2))
