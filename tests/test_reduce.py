"""Reductions and scans: the records of tests/opinfos/reduce.py (forward against float64 NumPy on
three layouts, gradients, PyTorch parity), then ties, zeros, NaN, empty inputs, threaded paths,
errors, parity at ties and double backward.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import dynagrad as dg
from dynagrad.autograd import gradcheck
from harness import assert_values, check_op
from opinfo import OPINFOS, family, params, uniform
from opinfos.reduce import TOL

check = functools.partial(assert_values, tol=TOL)


@pytest.mark.parametrize("info,dtype", params(family("reduce")))
def test_op(info, dtype):
    check_op(info, "cpu", dtype)


def test_max_of_two_tensors_is_maximum():
    a, b = uniform((3,), 1, -2.0, 2.0), uniform((2, 1), 2, -2.0, 2.0)
    check(dg.max(dg.tensor(a), dg.tensor(b)), np.maximum(a, b), dg.float64)
    check(dg.min(dg.tensor(a), other=dg.tensor(b)), np.minimum(a, b), dg.float64)


def test_bool_and_int_reductions():
    m = np.array([[True, False, True], [True, True, True]])
    x = dg.tensor(m)
    check(dg.all(x), np.all(m), dg.bool)
    check(dg.all(x, 1), np.all(m, 1), dg.bool)
    check(dg.any(x, dim=0, keepdim=True), np.any(m, 0, keepdims=True), dg.bool)
    check(dg.sum(x), np.sum(m), dg.int64)
    check(dg.amax(x, 1), np.max(m, 1), dg.bool)
    check(dg.amin(x, 1), np.min(m, 1), dg.bool)
    check(x.max(dim=1).indices, np.argmax(m, 1), dg.int64)
    i = np.array([[3, -7, 2], [5, 5, -1]])
    xi = dg.tensor(i)
    check(dg.sum(xi, 0), np.sum(i, 0), dg.int64)
    check(dg.prod(xi, 1), np.prod(i, 1), dg.int64)
    check(dg.cumsum(xi, 1), np.cumsum(i, 1), dg.int64)
    check(dg.cumprod(xi, 0), np.cumprod(i, 0), dg.int64)
    check(dg.amax(xi, 0), np.max(i, 0), dg.int64)
    check(dg.argmin(xi), np.argmin(i), dg.int64)
    check(dg.any(dg.tensor([[0.0, 0.5], [0.0, 0.0]]), 1), np.array([True, False]), dg.bool)
    check(dg.all(dg.tensor([[1, 2], [0, 3]]), 0), np.array([False, True]), dg.bool)
    check(dg.sum(xi, dtype=dg.float64), np.float64(np.sum(i)), dg.float64)
    check(dg.cumsum(xi, 0, dtype=dg.float32), np.cumsum(i, 0).astype(np.float64), dg.float32)


def test_all_any_on_transposed_and_empty():
    m = np.random.default_rng(5).uniform(size=(3, 4)) > 0.4
    x = dg.tensor(np.ascontiguousarray(m.T)).T
    check(dg.all(x, 0), np.all(m, 0), dg.bool)
    check(dg.any(x, -1), np.any(m, -1), dg.bool)
    check(dg.all(dg.zeros(0, 2)), np.bool_(True), dg.bool)
    check(dg.any(dg.zeros(0, 2), 0), np.zeros(2, bool), dg.bool)


def test_mean_empty_is_nan_and_int_mean_raises():
    check(dg.zeros(0, 3).mean(0), np.full(3, np.nan), dg.float32)
    assert np.isnan(dg.zeros(0).mean().item())
    with pytest.raises(RuntimeError, match="mean"):
        dg.tensor([1, 2]).mean()
    check(dg.tensor([1, 2]).mean(dtype=dg.float64), np.float64(1.5), dg.float64)


# --- gradients with ties, zeros, NaN ------------------------------------------------------

def _grad(fn, arr, dtype=dg.float64):
    x = dg.tensor(arr, dtype=dtype, requires_grad=True)
    out = fn(x)
    out = out.values if isinstance(out, tuple) else out
    out.backward(dg.ones_like(out) * dg.tensor(np.arange(1, out.numel() + 1, dtype=float)
                                               .reshape(tuple(out.shape)), dtype=dtype))
    return x.grad.numpy()


def test_amax_splits_ties_equally():
    a = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    np.testing.assert_allclose(_grad(lambda x: x.amax(1), a),
                               [[0, 0.5, 0.5], [2 / 3, 2 / 3, 2 / 3]])
    np.testing.assert_allclose(_grad(lambda x: x.amin(0), a), [[1, 0, 0], [0, 2, 3]])
    np.testing.assert_allclose(_grad(lambda x: x.max(), a), [[0, 0.5, 0.5], [0, 0, 0]])


def test_max_dim_routes_gradient_to_index():
    a = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    np.testing.assert_allclose(_grad(lambda x: x.max(1), a), [[0, 1, 0], [2, 0, 0]])
    np.testing.assert_allclose(_grad(lambda x: x.min(0, keepdim=True), a),
                               [[1, 0, 0], [0, 2, 3]])


@pytest.mark.parametrize("arr,dim", [([[2.0, 0.0, 3.0], [1.5, 2.0, -1.0]], 1),
                                     ([[0.0, 0.0, 3.0], [1.5, 2.0, -1.0]], 1),
                                     ([[0.0, 0.0, 3.0], [1.5, 0.0, -1.0]], 0),
                                     ([[0.0, 0.5], [2.0, 3.0]], None),
                                     ([[0.0, 0.5], [2.0, 0.0]], None),
                                     (0.0, None)])
def test_prod_with_zeros(arr, dim):
    a = np.array(arr)
    x = dg.tensor(a, dtype=dg.float64, requires_grad=True)
    kw = {} if dim is None else dict(dim=dim)
    assert gradcheck(lambda t: t.prod(**kw), (x,))
    if dim is not None:
        assert gradcheck(lambda t: t.prod(dim, keepdim=True), (x,))
    check(dg.prod(dg.tensor(a), **kw), np.prod(a, axis=dim))


@pytest.mark.parametrize("arr,dim", [([2.0, 0.0, 3.0, 0.5], 0),
                                     ([[0.0, 1.5, 0.0], [1.5, 2.0, 0.0]], 1),
                                     ([[0.0, 1.5, 2.0], [1.5, 0.0, 0.7]], 0),
                                     (0.0, 0)])
def test_cumprod_with_zeros(arr, dim):
    a = np.array(arr)
    x = dg.tensor(a, dtype=dg.float64, requires_grad=True)
    assert gradcheck(lambda t: t.cumprod(dim), (x,))
    check(dg.cumprod(dg.tensor(a, dtype=dg.float64), dim), OPINFOS["cumprod"].ref(a, dim))


@pytest.mark.parametrize("p", [3, 1.5, 0.5, -1.5])
def test_p_norm_gradient_on_a_zero_slice_matches_torch(p):
    # an all-zero row: the general formula is 0/0 (or inf * 0) there; torch's gradient is 0
    torch = pytest.importorskip("torch")
    a = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 3.0]])
    for fn in (lambda m, x: m.norm(x, p, dim=1), lambda m, x: m.linalg.vector_norm(x, p, dim=1)):
        x, tx = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        out, want = fn(dg, x), fn(torch, tx)
        np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-12)
        (out * dg.tensor([2.0, 3.0])).sum().backward()
        (want * torch.tensor([2.0, 3.0])).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)
    x = dg.tensor(a[1:] + 0.5, requires_grad=True)
    assert dg.autograd.gradgradcheck(lambda t: dg.norm(t, p, dim=1), (x,))


def test_norm_gradient_at_zero_is_zero():
    x = dg.zeros(3, dtype=dg.float64, requires_grad=True)
    x.norm().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))
    y = dg.tensor([[0.0, 2.0], [-1.0, 0.5]], requires_grad=True)
    n0 = y.norm(0, 1)  # counts nonzeros: differentiable, with a zero gradient
    check(n0, np.array([1.0, 2.0]), dg.float32)
    n0.sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), np.zeros((2, 2)))


def test_nan_propagates_through_max_min_and_argmax():
    a = np.array([[1.0, np.nan, 3.0], [np.nan, 5.0, np.nan], [0.0, 2.0, -1.0]])
    x = dg.tensor(a)
    check(x.amax(1), np.array([np.nan, np.nan, 2.0]))
    check(x.amin(1), np.array([np.nan, np.nan, -1.0]))
    check(x.max(1).values, np.array([np.nan, np.nan, 2.0]))
    check(x.max(1).indices, np.array([1, 0, 1]))
    check(x.min(1).indices, np.array([1, 0, 2]))
    check(x.argmax(1), np.array([1, 0, 1]))
    check(x.argmin(1), np.array([1, 0, 2]))
    check(x.argmax(), np.int64(1))
    assert np.isnan(x.max().item()) and np.isnan(x.min().item())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_min_of_long_rows_run_vectorized_and_still_propagate_nan(dtype):
    # the float fold is LLVM's NaN-propagating maximum/minimum, vectorized: a NaN anywhere in a
    # long row, in a vector's lanes or in the scalar remainder, still decides the result
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 10_007)).astype(dtype)
    a[1, 5_000] = np.nan
    a[2, 10_006] = np.nan  # the last element: the remainder loop
    a[3, :] = -np.inf
    x = dg.tensor(a)
    np.testing.assert_array_equal(x.amax(1).numpy(), np.max(a, 1))
    np.testing.assert_array_equal(x.amin(1).numpy(), np.min(a, 1))
    np.testing.assert_array_equal(x.amax(0).numpy(), np.max(a, 0))
    assert np.isnan(x.max().item()) and np.isnan(x.min().item())
    clean = dg.tensor(a[[0, 3]])
    assert clean.max().item() == np.max(a[0]) and clean.min().item() == -np.inf


def test_mean_and_sum_over_every_element_of_a_large_array_take_the_threaded_total():
    x = np.random.default_rng(4).standard_normal((4096, 129)).astype(np.float32) + 0.25
    t = dg.tensor(x)
    want = x.astype(np.float64)
    np.testing.assert_allclose(t.mean().item(), want.mean(), rtol=1e-6)
    np.testing.assert_allclose(t.mean((0, 1)).item(), want.mean(), rtol=1e-6)
    np.testing.assert_allclose(t.sum((1, 0)).item(), want.sum(), rtol=1e-6)
    assert t.mean().dtype is dg.float32 and t.mean(keepdim=True, dim=(0, 1)).shape == (1, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_two_norm_folds_squares_in_float64(dtype):
    # one fold of the squares (threaded over every element of a large array, per row or column
    # of a smaller one), float64 accumulation, the same values as NumPy's float64 norm
    x = np.random.default_rng(5).standard_normal((4096, 64)).astype(dtype) * 3
    t = dg.tensor(x, requires_grad=True)
    want = x.astype(np.float64)
    np.testing.assert_allclose(t.norm().item(), np.linalg.norm(want), rtol=1e-6)
    np.testing.assert_allclose(t.norm(dim=1).detach().numpy(), np.linalg.norm(want, axis=1),
                               rtol=1e-6)
    kept = t.norm(2, dim=0, keepdim=True)
    assert kept.shape == (1, 64)
    np.testing.assert_allclose(kept.detach().numpy(), np.linalg.norm(want, axis=0, keepdims=True),
                               rtol=1e-6)
    t.norm().backward()
    np.testing.assert_allclose(t.grad.numpy(), want / np.linalg.norm(want), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (7,), (64, 64), (3, 5, 7)])
def test_full_mean_of_a_small_tensor_matches_the_general_path_and_torch(shape, dtype):
    # x.mean() below the threaded size takes the sum's kernel directly; its backward divides
    # the one gradient value before expanding it: the same values as PyTorch's order
    torch = pytest.importorskip("torch")
    x = np.asarray(np.random.default_rng(6).standard_normal(shape) + 0.5, dtype=dtype)
    t = dg.tensor(x, requires_grad=True)
    m = t.mean()
    assert type(m.grad_fn).__name__ == "MeanBackward0" and m.dtype is t.dtype and m.shape == ()
    general = t.mean(dim=tuple(range(x.ndim))) if x.ndim else t.mean(dim=None, keepdim=True)
    assert m.item() == general.item()
    (m * 3.0).backward()
    tt = torch.tensor(x, requires_grad=True)
    (tt.mean() * 3.0).backward()
    # (our total accumulates in float64, PyTorch's in float32: the means may differ by an ulp)
    np.testing.assert_allclose(m.item(), tt.mean().item(), rtol=3e-7)
    np.testing.assert_array_equal(t.grad.numpy(), tt.grad.numpy())
    t.grad = None
    g, = dg.autograd.grad(t.mean(), t, create_graph=True)  # the differentiable path
    np.testing.assert_array_equal(g.detach().numpy(), np.full(shape, 1 / max(x.size, 1), dtype))


# --- errors --------------------------------------------------------------------------------

@pytest.mark.parametrize("op,kw", [("sum", dict(dim=2)), ("mean", dict(dim=-3)),
                                   ("amax", dict(dim=(0, 5))), ("argmax", dict(dim=2)),
                                   ("max", dict(dim=-3)), ("cumsum", dict(dim=2)),
                                   ("cumprod", dict(dim=-3)), ("prod", dict(dim=2)),
                                   ("var", dict(dim=2)), ("logsumexp", dict(dim=2)),
                                   ("norm", dict(dim=3)), ("all", dict(dim=2)),
                                   ("any", dict(dim=-3)), ("std", dict(dim=(1, 2))),
                                   ("min", dict(dim=2)), ("argmin", dict(dim=-3)),
                                   ("amin", dict(dim=2))])
def test_bad_dim_raises_index_error(op, kw):
    with pytest.raises(IndexError, match="Dimension out of range"):
        getattr(dg, op)(dg.ones(2, 3), **kw)


def test_repeated_dims_and_empty_extremes_raise():
    with pytest.raises(RuntimeError, match="multiple times"):
        dg.sum(dg.ones(2, 3), (1, -1))
    with pytest.raises(IndexError, match="amax"):
        dg.amax(dg.zeros(0, 3))
    with pytest.raises(IndexError, match="argmax"):
        dg.argmax(dg.zeros(2, 0), 1)
    with pytest.raises(IndexError, match="max"):
        dg.zeros(0).max()
    check(dg.amax(dg.zeros(0, 3), 1), np.zeros(0))  # reducing a non-empty dim of an empty tensor


# --- parity with PyTorch ------------------------------------------------------------------

def _torch_grad(fn, arr):
    torch = pytest.importorskip("torch")
    x = torch.tensor(arr, dtype=torch.float64, requires_grad=True)
    out = fn(x)
    out = out.values if isinstance(out, tuple) else out
    out.backward(torch.arange(1, out.numel() + 1, dtype=torch.float64).reshape(out.shape))
    return x.grad.numpy()


TIES = np.array([[1.0, 3.0, 3.0, -2.0], [2.0, 2.0, 2.0, 2.0], [0.0, -1.0, 5.0, 5.0]])

PARITY = [
    ("sum(dim=(0,1))", lambda m, x: m.sum(x, (0, 1))),
    ("amax(1)", lambda m, x: m.amax(x, 1)),
    ("amax(all)", lambda m, x: m.amax(x)),
    ("amin((0,1),keepdim)", lambda m, x: m.amin(x, (0, 1), keepdim=True)),
    ("max(1)", lambda m, x: m.max(x, 1)),
    ("min(0,keepdim)", lambda m, x: m.min(x, 0, keepdim=True)),
    ("max()", lambda m, x: m.max(x)),
    ("min()", lambda m, x: m.min(x)),
    ("prod(1)", lambda m, x: m.prod(x - 2.0, 1)),
    ("prod()", lambda m, x: m.prod(x - 2.0)),
    ("prod(0,keepdim)", lambda m, x: m.prod(x - 1.0, 0, keepdim=True)),
    ("cumprod(1)", lambda m, x: m.cumprod(x - 2.0, 1)),
    ("cumprod(0)", lambda m, x: m.cumprod(x, 0)),
    ("cumsum(-1)", lambda m, x: m.cumsum(x, -1)),
    ("var(1)", lambda m, x: m.var(x, 1)),
    ("std(all)", lambda m, x: m.std(x)),
    ("var(0,correction=0)", lambda m, x: m.var(x, 0, correction=0, keepdim=True)),
    ("logsumexp(1)", lambda m, x: m.logsumexp(x, 1)),
    ("norm()", lambda m, x: m.norm(x)),
    ("norm(inf,1)", lambda m, x: m.norm(x, math.inf, 1)),
    ("norm(1,0)", lambda m, x: m.norm(x - 2.0, 1, 0)),
    ("norm(3,1)", lambda m, x: m.norm(x, 3, 1)),
    ("mean((0,1))", lambda m, x: m.mean(x, (0, 1))),
]


@pytest.mark.parametrize("name,fn", PARITY, ids=[p[0] for p in PARITY])
def test_torch_parity_values_and_grads(name, fn):
    torch = pytest.importorskip("torch")
    ours = fn(dg, dg.tensor(TIES, dtype=dg.float64))
    theirs = fn(torch, torch.tensor(TIES, dtype=torch.float64))
    if isinstance(theirs, tuple):
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
        ours, theirs = ours.values, theirs.values
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_grad(lambda x: fn(dg, x), TIES),
                               _torch_grad(lambda x: fn(torch, x), TIES), rtol=1e-10, atol=1e-12)


def test_torch_parity_arg_indices_with_ties_and_nan():
    torch = pytest.importorskip("torch")
    cases = [TIES, np.array([[np.nan, 1.0, np.nan], [2.0, np.nan, 9.0], [4.0, 4.0, 1.0]]),
             np.array([[-np.inf, -np.inf], [np.inf, np.inf]])]
    for a in cases:
        ta, da = torch.tensor(a), dg.tensor(a, dtype=dg.float64)
        for d in (0, 1):
            for op in ("argmax", "argmin"):
                np.testing.assert_array_equal(getattr(da, op)(d).numpy(),
                                              getattr(ta, op)(d).numpy(), err_msg=f"{op}({d})")
            for op in ("max", "min"):
                ours, theirs = getattr(da, op)(d), getattr(ta, op)(d)
                np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
                np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
            np.testing.assert_array_equal(da.amax(d).numpy(), ta.amax(d).numpy())
        for op in ("argmax", "argmin"):
            assert getattr(da, op)().item() == getattr(ta, op)().item()
        assert tuple(da.argmax(keepdim=True).shape) == tuple(ta.argmax(keepdim=True).shape)


def test_torch_parity_scalar_reductions():
    torch = pytest.importorskip("torch")
    for fn in (lambda m, x: m.sum(x), lambda m, x: m.sum(x, 0, keepdim=True),
               lambda m, x: m.cumsum(x, 0), lambda m, x: m.logsumexp(x, 0),
               lambda m, x: m.max(x, 0).values, lambda m, x: m.argmax(x, 0),
               lambda m, x: m.prod(x), lambda m, x: m.amax(x, 0)):
        ours, theirs = fn(dg, dg.tensor(1.5, dtype=dg.float64)), fn(torch, torch.tensor(1.5))
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())


# --- more argument forms, double backward -------------------------------------------------

def test_argument_forms():
    a = uniform((3, 4), 11, -2.0, 2.0)
    x = dg.tensor(a)
    check(x.sum([]), np.sum(a))
    check(x.sum(keepdim=True), np.sum(a, keepdims=True))
    check(x.amax([]), np.max(a))
    check(x.var(unbiased=False), np.var(a))
    check(dg.var(x, 1, correction=0), np.var(a, 1))
    check(x.std(0, unbiased=True, keepdim=True), np.std(a, 0, ddof=1, keepdims=True))
    check(dg.tensor(a, dtype=dg.float32).mean(1, dtype=dg.float64),
          np.mean(a.astype(np.float32).astype(np.float64), 1), dg.float64)
    check(dg.tensor(a, dtype=dg.float32).norm(dim=1, dtype=dg.float64),
          np.linalg.norm(a.astype(np.float32).astype(np.float64), axis=1), dg.float64)
    check(dg.tensor(a, dtype=dg.float32).sum(0, dtype=dg.float64),
          np.sum(a.astype(np.float32).astype(np.float64), 0), dg.float64)
    inf = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [-np.inf, 0.0]])
    check(dg.tensor(inf).logsumexp(1), np.array([-np.inf, np.inf, 0.0]))


@pytest.mark.parametrize("name,fn", [
    ("sum", lambda x: x.sum(1)), ("mean", lambda x: x.mean(0, keepdim=True)),
    ("prod", lambda x: x.prod(1)), ("prod0", lambda x: (x * x.new_tensor([[1.0, 0.0, 1.0]])).prod()),
    ("cumsum", lambda x: x.cumsum(1)), ("cumprod", lambda x: x.cumprod(1)),
    ("var", lambda x: x.var(1)), ("logsumexp", lambda x: x.logsumexp(1)),
    ("norm", lambda x: x.norm(dim=1)), ("max", lambda x: x.max(1).values),
    ("amax", lambda x: x.amax(0))])
def test_gradgradcheck(name, fn):
    a = np.array([[0.5, -1.2, 2.0], [1.1, 0.3, -0.7]])
    x = dg.tensor(a, dtype=dg.float64, requires_grad=True)
    shape = tuple(fn(x).shape)
    go = dg.tensor(uniform(shape, 4, -2.0, 2.0), dtype=dg.float64, requires_grad=True)
    assert dg.autograd.gradgradcheck(fn, (x,), (go,))


@pytest.mark.parametrize("n", [1 << 19, (1 << 19) + 3])  # threaded two-level sum, and the serial one
def test_large_full_sum_matches_float64(n):
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    t = dg.tensor(x, requires_grad=True)
    s = t.sum()
    assert s.dtype is dg.float32 and s.shape == ()
    np.testing.assert_allclose(float(s), x.astype(np.float64).sum(), rtol=1e-6, atol=1e-3)
    s.backward()
    assert t.grad.shape == (n,) and float(t.grad.min()) == float(t.grad.max()) == 1.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_large_row_reductions_share_rows_among_threads_with_the_same_results(dtype):
    # a fold over the last dim of a large contiguous array runs its rows on the worker pool
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((1000, 700)) * 10).astype(dtype)
    t = dg.tensor(x)
    if dtype == np.bool_:
        np.testing.assert_array_equal(t.any(1).numpy(), x.any(1))
        np.testing.assert_array_equal(t.all(1).numpy(), x.all(1))
        return
    np.testing.assert_array_equal(t.amax(1).numpy(), x.max(1))
    np.testing.assert_array_equal(t.amin(-1).numpy(), x.min(1))
    want = x.astype(np.float64).sum(1)
    np.testing.assert_allclose(t.sum(1).numpy(), want, rtol=1e-6 if dtype != np.int32 else 0)
    if dtype != np.int32:
        np.testing.assert_allclose(t.mean(1).numpy(), want / 700, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("op", ["argmax", "argmin", "max", "min"])
def test_large_arg_reductions_along_any_dim_match_torch(op, dim):
    # rows along the last dim split among the cores; along an outer dim every column keeps its
    # best in a vectorized select: first index among ties, NaN the winner, as PyTorch
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    x = rng.integers(0, 9, (60, 50, 70)).astype(np.float32)
    x[rng.random(x.shape) < 0.001] = np.nan
    got = getattr(dg.tensor(x), op)(dim)
    want = getattr(torch.tensor(x), op)(dim)
    if op.startswith("arg"):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    else:
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
