"""Indexing: the records of tests/opinfos/indexing.py (gather/scatter, index_select/index_add/
index_put, masks, nonzero, sort/topk: forward against NumPy, in-place variants, gradients, PyTorch
parity), then x[key] and x[key] = v, large inputs, ties and NaN against PyTorch, and bounds errors
raised before any kernel.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import dynagrad as dg
from dynagrad.autograd import gradcheck
from harness import assert_values, check_op, laid_out
from opinfo import family, index as idx, params, uniform
from opinfos.indexing import vals

DTYPES = [dg.float32, dg.float64, dg.int64]
check = functools.partial(assert_values, tol=None)  # indexing is exact


@pytest.mark.parametrize("info,dtype", params(family("indexing")))
def test_op(info, dtype):
    check_op(info, "cpu", dtype)


# --- x[key] -------------------------------------------------------------------------------------

def _np_key(key):
    """The same key for NumPy: tensors become arrays."""
    if isinstance(key, tuple):
        return tuple(_np_key(k) for k in key)
    return key.numpy() if isinstance(key, dg.Tensor) else key


SHAPE = (4, 3, 2)
_M = vals(SHAPE, 1) > 0
KEYS = [
    ("int", 1), ("neg-int", -1), ("ints", (1, 2)), ("all-ints", (3, -1, 0)),
    ("slice", slice(1, 3)), ("step", (slice(None), slice(None, None, 2))),
    ("slice-int", (slice(None), 0)), ("ellipsis", (Ellipsis, 1)), ("none", (None, 1)),
    ("none-mid", (slice(None), None, 1)), ("empty-tuple", ()), ("slice-out-of-range", slice(2, 9)),
    ("tensor-int-0d", dg.tensor(2)), ("tensor", idx([0, 2, 2])), ("tensor-neg", idx([-1, 0])),
    ("tensor-2d", idx([[0, 1], [3, 3]])), ("list", [1, 0]), ("tensor-pair", (idx([0, 3]), idx([2, 0]))),
    ("slice-tensor", (slice(None), idx([2, 0, 2]))), ("int-tensor", (1, idx([0, 0]))),
    ("separated", (idx([0, 1]), slice(None), idx([1, 0]))), ("broadcast", (idx([[0], [1]]), idx([0, 2]))),
    ("ellipsis-tensor", (Ellipsis, idx([1, 1, 0]))), ("mask", dg.tensor(_M)),
    ("mask-first-dim", dg.tensor(np.array([True, False, True, True]))),
    ("mask-2d-then-int", (dg.tensor(_M[:, :, 0]), 1)), ("mask-list", [True, False, False, True]),
    ("bool-true", True), ("bool-false", False), ("int-bool", (0, True)),
    ("empty-tensor", idx(np.zeros(0, np.int64))), ("empty-mask", dg.tensor(np.zeros(4, bool))),
    ("np-array", np.array([3, 1])), ("np-0d", np.array(2)),
]


@pytest.mark.parametrize("layout", ["C", "T"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name,key", KEYS, ids=[k[0] for k in KEYS])
def test_getitem_forward(name, key, dtype, layout):
    a = vals(SHAPE, 2)
    out = laid_out(a, dtype, layout)[key]
    check(out, a.astype(dtype.np)[_np_key(key)], dtype)


@pytest.mark.parametrize("name,key", KEYS, ids=[k[0] for k in KEYS])
def test_getitem_gradcheck(name, key):
    x = dg.tensor(uniform(SHAPE, 3), dtype=dg.float64, requires_grad=True)
    assert gradcheck(lambda t: t[key], (x,))
    xt = dg.tensor(np.ascontiguousarray(uniform(SHAPE, 3).T), dtype=dg.float64, requires_grad=True)
    assert gradcheck(lambda t: t.T[key], (xt,))


def test_getitem_repeated_index_accumulates_gradient():
    x = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[idx([2, 0, 2, 2])].backward(dg.tensor([1.0, 10.0, 100.0, 1000.0]))
    check(x.grad, [10.0, 0.0, 1101.0], dg.float32)


def test_getitem_views_and_copies():
    x = dg.tensor(np.arange(6.0).reshape(2, 3))
    basic, adv, elem = x[1, 1:], x[idx([1])], x[1, 2]
    x.add_(10.0)
    check(basic, [14.0, 15.0], dg.float64)   # a view sees the write
    check(elem, 15.0, dg.float64)            # so does a 0-d view from an all-int key
    check(adv, [[3.0, 4.0, 5.0]], dg.float64)  # an advanced index copied
    check(x[0][2], 12.0, dg.float64)
    x[0][2].fill_(-1.0)  # writing through a 0-d view reaches the base
    x[1, 0].mul_(2.0)
    check(x, [[10.0, 11.0, -1.0], [26.0, 14.0, 15.0]], dg.float64)


# --- x[key] = v ------------------------------------------------------------------------------

SET_KEYS = [
    ("int", 1, (3, 2)), ("int-broadcast", 1, (2,)), ("scalar-value", (0, 1), ()),
    ("slice", slice(1, 3), (2, 3, 2)), ("slice-broadcast", (slice(None), 0), (1,)),
    ("step", (slice(None, None, 2), 1, 0), (2,)), ("ellipsis", (Ellipsis, 1), (4, 3)),
    ("leading-one", 2, (1, 3, 2)), ("tensor", idx([0, 3]), (2, 3, 2)),
    ("tensor-pair", (idx([0, 3]), idx([2, 0])), (2,)), ("tensor-bcast", (slice(None), idx([2, 0])), (2, 1)),
    ("mask", dg.tensor(_M), ()), ("mask-values", dg.tensor(_M), (int(_M.sum()),)),
    ("mask-first-dim", dg.tensor(np.array([True, False, True, True])), (3, 2)),
    ("list", [3, 1], (3, 2)),
]


@pytest.mark.parametrize("layout", ["C", "T"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name,key,vshape", SET_KEYS, ids=[k[0] for k in SET_KEYS])
def test_setitem_forward(name, key, vshape, dtype, layout):
    a, v = vals(SHAPE, 4), vals(vshape, 5)
    x = laid_out(a, dtype, layout)
    version = x._version
    x[key] = laid_out(v, dtype)
    expected = a.astype(dtype.np).copy()
    expected[_np_key(key)] = v.astype(dtype.np)
    check(x, expected, dtype)
    assert x._version == version + 1
    y = laid_out(a, dtype, layout)
    y[key] = 7  # a Python number
    expected = a.astype(dtype.np).copy()
    expected[_np_key(key)] = 7
    check(y, expected, dtype)


@pytest.mark.parametrize("name,key,vshape", SET_KEYS, ids=[k[0] for k in SET_KEYS])
def test_setitem_gradcheck(name, key, vshape):
    def fn(x, v):
        y = x.clone()
        y[key] = v
        return y
    x = dg.tensor(uniform(SHAPE, 6), dtype=dg.float64, requires_grad=True)
    v = dg.tensor(uniform(vshape, 7), dtype=dg.float64, requires_grad=True)
    assert gradcheck(fn, (x, v))
    assert gradcheck(lambda x, v: fn(x * 2, v.exp()), (x, v))


def test_setitem_gradients_to_x_and_v():
    x = dg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    v = dg.tensor([5.0, 6.0], requires_grad=True)
    y = x.clone()
    y[0] = v * 2
    assert y.grad_fn is not None
    (y * dg.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    check(x.grad, [[0.0, 0.0], [3.0, 4.0]], dg.float32)
    check(v.grad, [2.0, 4.0], dg.float32)
    check(y.detach(), [[10.0, 12.0], [3.0, 4.0]], dg.float32)


def test_setitem_into_plain_tensor_from_value_requiring_grad():
    y = dg.zeros(3)
    v = dg.tensor(2.0, dtype=dg.float64, requires_grad=True)  # cast to y's dtype
    y[idx([0, 2])] = v
    check(y.detach(), [2.0, 0.0, 2.0], dg.float32)
    y.sum().backward()
    check(v.grad, 2.0, dg.float64)


def test_setitem_errors():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x[0] = 3.0
    with pytest.raises(IndexError, match="out of bounds"):
        dg.zeros(2, 3)[1, 3] = 1.0
    with pytest.raises(IndexError, match="out of bounds"):
        dg.zeros(2, 3)[idx([0, 2])] = 1.0
    with pytest.raises(RuntimeError, match="index assignment"):
        dg.zeros(2, 3)[0] = dg.ones(2)
    with pytest.raises(RuntimeError, match="index assignment"):
        dg.zeros(1, 3).expand(2, 3)[0] = 1.0


def test_mask_get_set_with_gradients():
    a = uniform((3, 4), 8)
    x = dg.tensor(a, dtype=dg.float64, requires_grad=True)
    m = x.detach() > 0
    sel = x[m]
    check(sel, a[a > 0], dg.float64)
    (sel * sel).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(a > 0, 2 * a, 0))

    v = dg.tensor(1.5, dtype=dg.float64, requires_grad=True)
    y = x * 1.0
    y[y < 0] = v
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(a > 0, 2 * a, 0) + (a >= 0))
    assert v.grad.item() == (a < 0).sum()
    check(y.detach(), np.where(a < 0, 1.5, a), dg.float64)


@pytest.mark.parametrize("dim", [0, 1])
def test_index_select_large_rows_and_gradient(dim):
    """Row copies and the backward's adds into fresh zeros, with repeated positions, on a
    transposed float32 input as large models select rows and columns."""
    a = vals((300, 200), 8).astype(np.float32)
    positions = np.random.default_rng(9).integers(0, a.shape[dim], 150)
    positions[:10] = positions[10]  # repeated positions add up
    x = dg.tensor(np.ascontiguousarray(a.T), requires_grad=True)
    y = x.t().index_select(dim, idx(positions))
    np.testing.assert_array_equal(y.detach().numpy(), np.take(a, positions, axis=dim))
    g = vals(tuple(y.shape), 10).astype(np.float32)
    y.backward(dg.tensor(g))
    expected = np.zeros_like(a)
    np.add.at(expected, (positions, slice(None)) if dim == 0 else (slice(None), positions), g)
    np.testing.assert_allclose(x.grad.numpy(), expected.T, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [dg.float32, dg.float64, dg.int64], ids=lambda d: d.name)
@pytest.mark.parametrize("case", ["elements", "rows", "rows-slice", "none", "all", "transposed"])
def test_mask_select_and_its_gradient(case, dtype):
    """x[mask] through the mask kernels (element and row masks, empty and full masks, strided
    inputs and masks) against NumPy; the gradient puts g back where the mask is true."""
    a = vals((60, 7, 5), 11)
    rng = np.random.default_rng(12)
    x_np = a.transpose(2, 0, 1) if case == "transposed" else a
    mask = {"elements": rng.random(x_np.shape) < 0.5, "rows": rng.random(x_np.shape[:2]) < 0.3,
            "rows-slice": rng.random(x_np.shape[:1]) < 0.6,
            "none": np.zeros(x_np.shape, bool), "all": np.ones(x_np.shape[:1], bool),
            "transposed": (rng.random(x_np.shape[::-1]) < 0.5).T}[case]
    base = dg.tensor(a.astype(dtype.np), requires_grad=dtype is not dg.int64)
    x = base.permute(2, 0, 1) if case == "transposed" else base
    key = (dg.tensor(mask), slice(None)) if case == "rows-slice" else dg.tensor(mask)
    y = x[key]
    expected = x_np.astype(dtype.np)[mask]
    assert tuple(y.shape) == expected.shape
    np.testing.assert_array_equal(y.detach().numpy(), expected)
    if dtype is dg.int64:
        return
    g = vals(expected.shape, 13)
    y.backward(dg.tensor(g, dtype=dtype))
    grad = np.zeros(x_np.shape)
    grad[mask] = g
    grad = grad.transpose(1, 2, 0) if case == "transposed" else grad
    np.testing.assert_allclose(base.grad.numpy(), grad.astype(dtype.np), rtol=1e-6)


def test_integer_row_index_gradient_adds_repeats():
    x = dg.tensor(vals((6, 4), 14), requires_grad=True)
    rows = np.array([5, 0, 5, -1, 2])
    y = x[dg.tensor(rows)]
    g = vals((5, 4), 15)
    y.backward(dg.tensor(g))
    expected = np.zeros((6, 4))
    np.add.at(expected, rows, g)
    np.testing.assert_allclose(x.grad.numpy(), expected.astype(np.float32), rtol=1e-6)


def test_masked_errors():
    with pytest.raises(RuntimeError, match="bool mask"):
        dg.ones(2).masked_fill(dg.tensor([1, 0]), 0.0)
    with pytest.raises(RuntimeError, match="0-dimensional value"):
        dg.ones(2).masked_fill(dg.tensor([True, False]), dg.ones(2))
    with pytest.raises(RuntimeError, match="must broadcast to the input"):
        dg.ones(2).masked_fill(dg.ones(3, 2, dtype=dg.bool), 0.0)
    with pytest.raises(RuntimeError, match="not broadcastable"):
        dg.ones(2).masked_select(dg.ones(3, dtype=dg.bool))


def test_nonzero_torch_parity_scalars():
    torch = pytest.importorskip("torch")
    for v in (0.0, 2.0):
        ours, theirs = dg.tensor(v).nonzero(), torch.tensor(v).nonzero()
        assert tuple(ours.shape) == tuple(theirs.shape)
        ot, tt = dg.tensor(v).nonzero(as_tuple=True), torch.tensor(v).nonzero(as_tuple=True)
        assert [tuple(t.shape) for t in ot] == [tuple(t.shape) for t in tt]


# --- sort / argsort / topk ---------------------------------------------------------------------

TIES = [np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [0.0, 0.0, -1.0, 0.0, 5.0]]),
        np.array([[np.nan, 1.0, np.nan, -np.inf, 2.0], [4.0, np.inf, 4.0, np.nan, 0.0]])]
NO_TIES = [np.array([[0.5, np.nan, -2.0, 7.0, 1.0], [3.0, -np.inf, 2.5, 0.0, np.inf]])]


def _torch_pair(call, a):
    """(ours, theirs) for ``call`` on ``a``, with input gradients from the same upstream weights."""
    torch = pytest.importorskip("torch")
    x, tx = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (ov, oi), (tv, ti) = call(x), call(tx)
    w = uniform(tuple(tv.shape), 1)
    ov.backward(dg.tensor(w))
    tv.backward(torch.tensor(w))
    return (ov.detach().numpy(), oi.numpy(), x.grad.numpy()), \
        (tv.detach().numpy(), ti.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("call", [lambda t: t.sort(dim=1, stable=True),
                                  lambda t: t.sort(dim=1, descending=True, stable=True),
                                  lambda t: t.sort(dim=0, stable=True),
                                  lambda t: t.sort(dim=0, descending=True, stable=True)])
def test_sort_torch_parity_ties_nan_and_grads(call):
    for a in TIES + NO_TIES:
        ours, theirs = _torch_pair(call, a)
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(o, t)
        np.testing.assert_array_equal(dg.tensor(a).argsort(1).numpy(),
                                      np.argsort(a, 1, kind="stable"))


@pytest.mark.parametrize("call,d", [(lambda t: t.topk(3, 1), 1), (lambda t: t.topk(2, 1, False), 1),
                                    (lambda t: t.topk(1, 0), 0),
                                    (lambda t: t.topk(2, 0, largest=False), 0)])
def test_topk_torch_parity_ties_nan_and_grads(call, d):
    for a in NO_TIES:  # without ties indices and gradients are fully determined
        ours, theirs = _torch_pair(call, a)
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(o, t)
    for a in TIES:  # with ties PyTorch leaves the order unspecified: same values, valid indices
        (ov, oi, _), (tv, ti, _) = _torch_pair(call, a)
        np.testing.assert_array_equal(ov, tv)
        np.testing.assert_array_equal(np.take_along_axis(a, oi, d), ov)
        assert all(len(set(r)) == len(r) for r in np.moveaxis(oi, d, -1).reshape(-1, oi.shape[d]))


def test_gather_scatter_torch_parity_grads():
    torch = pytest.importorskip("torch")
    a, s = uniform((3, 4), 1), uniform((3, 2), 2)
    index = [[0, 3], [1, 1], [2, 0]]
    for fn in (lambda x, u, i: x.gather(1, i) * 1, lambda x, u, i: x.scatter_add(1, i, u),
               lambda x, u, i: x.index_select(1, i[1]) * 1,
               lambda x, u, i: x.index_add(1, i[2], u, alpha=2),
               lambda x, u, i: x[i[:, 0], i[:, 1]] * 1):
        x, u = dg.tensor(a, requires_grad=True), dg.tensor(s, requires_grad=True)
        tx, tu = torch.tensor(a, requires_grad=True), torch.tensor(s, requires_grad=True)
        o, r = fn(x, u, idx(index)), fn(tx, tu, torch.tensor(index))
        np.testing.assert_allclose(o.detach().numpy(), r.detach().numpy(), rtol=1e-12)
        w = uniform(tuple(r.shape), 3)
        o.backward(dg.tensor(w))
        r.backward(torch.tensor(w))
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
        if tu.grad is not None:
            np.testing.assert_allclose(u.grad.numpy(), tu.grad.numpy(), rtol=1e-12)


def test_setitem_torch_parity_grads():
    torch = pytest.importorskip("torch")
    a = uniform((3, 4), 1)
    for key in ((slice(0, 2),), ([2, 0],), (slice(None), [3, 1]), ([0, 2], [3, 0]), (1, 2)):
        dkey = tuple(idx(k) if isinstance(k, list) else k for k in key)
        tkey = tuple(torch.tensor(k) if isinstance(k, list) else k for k in key)
        vv = uniform(tuple(torch.tensor(a)[tkey].shape), 2)
        x, u = dg.tensor(a, requires_grad=True), dg.tensor(vv, requires_grad=True)
        tx, tu = torch.tensor(a, requires_grad=True), torch.tensor(vv, requires_grad=True)
        y, ty = x.clone(), tx.clone()
        y[dkey] = u * 3
        ty[tkey] = tu * 3
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
        w = uniform((3, 4), 3)
        y.backward(dg.tensor(w))
        ty.backward(torch.tensor(w))
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
        np.testing.assert_allclose(u.grad.numpy(), tu.grad.numpy())


# --- errors: checked before any kernel runs ------------------------------------------------------

@pytest.mark.parametrize("fn,pattern", [
    (lambda x: x[3], "index 3 is out of bounds for dimension 0 with size 3"),
    (lambda x: x[-4], "index -4 is out of bounds for dimension 0 with size 3"),
    (lambda x: x[0, 4], "index 4 is out of bounds for dimension 1 with size 4"),
    (lambda x: x[..., -5], "out of bounds for dimension 1"),
    (lambda x: x[None, 0, 4], "out of bounds for dimension 1"),
    (lambda x: x[idx([0, 3])], "index 3 is out of bounds for dimension 0 with size 3"),
    (lambda x: x[idx([-4])], "index -4 is out of bounds"),
    (lambda x: x[:, idx([1, 4])], "index 4 is out of bounds for dimension 1 with size 4"),
    (lambda x: x[[0, 5]], "out of bounds"),
    (lambda x: x[dg.tensor(3)], "out of bounds"),
    (lambda x: x[0, 0, 0], "too many indices"),
    (lambda x: x[..., ...], "single ellipsis"),
    (lambda x: x[dg.tensor([True, False])], "shape of the mask"),
    (lambda x: x[dg.tensor([0.0])], "must be long"),
    (lambda x: x["a"], "only integers"),
    (lambda x: x.gather(1, idx([[0, 4]])), "index 4 is out of bounds for dimension 1 with size 4"),
    (lambda x: x.gather(0, idx([[-1]])), "index -1 is out of bounds"),
    (lambda x: x.gather(2, idx([[0]])), "Dimension out of range"),
    (lambda x: x.scatter(1, idx([[4]]), 0.0), "out of bounds"),
    (lambda x: x.scatter_add(0, idx([[3]]), dg.ones(1, 1)), "out of bounds"),
    (lambda x: x.index_select(1, idx([0, 4])), "index 4 is out of range for dimension 1"),
    (lambda x: x.index_select(0, idx([-4])), "out of range"),
    (lambda x: x.index_select(2, idx([0])), "Dimension out of range"),
    (lambda x: x.index_select(0, dg.tensor([0.0])), "1-D int64"),
    (lambda x: x.index_add(0, idx([3]), dg.ones(1, 4)), "out of range"),
    (lambda x: dg.index_put(x, (idx([3]),), dg.tensor(1.0)), "out of bounds"),
    (lambda x: x.sort(2), "Dimension out of range"),
    (lambda x: x.topk(1, -3), "Dimension out of range"),
    (lambda x: x.argsort(5), "Dimension out of range"),
])
def test_index_errors(fn, pattern):
    x = dg.tensor(uniform((3, 4), 1))
    before = x.numpy().copy()
    with pytest.raises(IndexError, match=pattern):
        fn(x)
    np.testing.assert_array_equal(x.numpy(), before)


@pytest.mark.parametrize("fn,exc,pattern", [
    (lambda x: x.scatter_(1, idx([[0, 4]]), 1.0), IndexError, "out of bounds"),
    (lambda x: x.scatter_add_(0, idx([[5, 0]]), dg.ones(1, 2, dtype=dg.float64)), IndexError,
     "out of bounds"),
    (lambda x: x.index_add_(1, idx([9]), dg.ones(3, 1, dtype=dg.float64)), IndexError,
     "out of range"),
    (lambda x: x.masked_fill_(dg.ones(4, dtype=dg.bool), 0.0), None, None),
    (lambda x: x.__setitem__(idx([0, 7]), 1.0), IndexError, "out of bounds"),
    (lambda x: x.gather(1, dg.tensor([[0, 1]], dtype=dg.int32)), RuntimeError,
     "Expected dtype int64"),
    (lambda x: x.gather(1, idx([0, 1])), RuntimeError, "same number of dimensions"),
    (lambda x: x.gather(1, idx([[0], [1], [2], [0]])), RuntimeError, "Size does not match"),
    (lambda x: x.scatter(1, idx([[0, 1]]), dg.ones(1, 1, dtype=dg.float64)), RuntimeError,
     "smaller than src"),
    (lambda x: x.index_add(0, idx([0]), dg.ones(2, 4)), RuntimeError, "should have shape"),
    (lambda x: x.topk(5), RuntimeError, "out of range"),
])
def test_inplace_errors_leave_input_untouched(fn, exc, pattern):
    x = dg.tensor(uniform((3, 4), 1))
    before = x.numpy().copy()
    if exc is None:  # masked_fill_ with a broadcasting mask works in place
        fn(x)
        check(x, np.zeros((3, 4)), dg.float64)
        return
    with pytest.raises(exc, match=pattern):
        fn(x)
    np.testing.assert_array_equal(x.numpy(), before)


def test_index_select_and_add_refuse_negative_positions_like_torch():
    x = dg.arange(12.0).reshape(4, 3)
    with pytest.raises(IndexError, match=r"index_select\(\): index -1 is out of range"):
        x.index_select(0, dg.tensor([-1, 1]))
    with pytest.raises(IndexError, match=r"index_add\(\): index -1 is out of range"):
        x.index_add(0, dg.tensor([-1, 1]), dg.ones(2, 3))
    assert x.tolist() == np.arange(12.0).reshape(4, 3).tolist()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_of_small_k_keeps_the_stable_sort_order_with_ties_and_nan(dtype, largest):
    # small k keeps each row's best in a buffer; the result must be the stable sort's prefix:
    # NaN largest, equal values in their original order, any dim
    from dynagrad.kernels.cpu.backend import _argsort_array
    rng = np.random.default_rng(8)
    x = rng.integers(0, 6, (7, 9, 50)).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        x[rng.random(x.shape) < 0.05] = np.nan
        x[2, 3] = np.nan
    t = dg.tensor(x)
    for dim in (0, 1, 2, -1):
        n = x.shape[dim]
        for k in (0, 1, 3, min(n, 20)):
            got = t.topk(k, dim, largest=largest)
            want = np.take(_argsort_array(x, dim % 3, largest), np.arange(k), axis=dim)
            np.testing.assert_array_equal(got.indices.numpy(), want)
            np.testing.assert_array_equal(got.values.numpy(), np.take_along_axis(x, want, dim))


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_large_sorts_split_among_threads_match_torchs_stable_sort(dim, descending):
    # from SORT_SPLIT_MIN_ELEMENTS the lines sort in slices on all cores: the result is still
    # the one stable order (ties in original order, NaN largest) along any dim
    torch = pytest.importorskip("torch")
    from dynagrad.kernels.cpu.backend import SORT_SPLIT_MIN_ELEMENTS
    rng = np.random.default_rng(9)
    x = rng.integers(0, 50, (37, 300, 8)).astype(np.float32)
    x[rng.random(x.shape) < 0.02] = np.nan
    assert x.size >= SORT_SPLIT_MIN_ELEMENTS
    got = dg.tensor(x).sort(dim, descending=descending)
    want = torch.tensor(x).sort(dim=dim, descending=descending, stable=True)
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
