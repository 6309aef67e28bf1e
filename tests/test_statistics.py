"""Order statistics, NaN-aware reductions, running extremes, sets, histograms, searches and
differences: the records of tests/opinfos/statistics.py (forward against float64 NumPy, gradients
by finite differences, PyTorch parity), then PyTorch parity at ties, NaN and empty inputs,
numerically hard inputs, in-place forms and errors.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import dynagrad as dg
from harness import assert_values, check_op
from opinfo import family, params
from opinfos.statistics import TOL

check = functools.partial(assert_values, tol=TOL)
torch = pytest.importorskip("torch")


@pytest.mark.parametrize("info,dtype", params(family("statistics")))
def test_op(info, dtype):
    check_op(info, "cpu", dtype)


# --- PyTorch parity beyond the records: ties, NaN, empty inputs, dtypes -------------------------

NAN = math.nan


def _to(module, a):
    return dg.tensor(a) if module is dg else torch.tensor(a)


def _flat(out):
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flat(o)]
    return [out]


def assert_like_torch(fn, *arrays, outputs=None):
    """``fn(module, *tensors)`` gives the same shapes, dtypes and values with ``dg`` as with
    ``torch`` (NaN matching NaN); ``outputs`` picks the outputs compared (indices PyTorch leaves
    unspecified at ties are left out)."""
    ours = _flat(fn(dg, *[_to(dg, a) for a in arrays]))
    theirs = _flat(fn(torch, *[_to(torch, a) for a in arrays]))
    assert len(ours) == len(theirs)
    for k in outputs if outputs is not None else range(len(ours)):
        o, t = ours[k], theirs[k]
        what = f"output {k}"
        if not isinstance(t, torch.Tensor):
            assert o == t, what
            continue
        assert o.dtype.name == str(t.dtype).removeprefix("torch."), what
        assert_values(o, t.detach().numpy(), None, TOL, what)


TIES = np.asarray([[2.0, 1.0, 2.0, 3.0, 1.0, 2.0], [5.0, 5.0, 5.0, 5.0, 5.0, 5.0]])
WITH_NAN = np.asarray([[1.0, NAN, 3.0, 2.0], [NAN, NAN, NAN, NAN], [4.0, 1.0, 0.5, NAN]])


# (call, outputs compared at ties: the values, and the indices where PyTorch defines them)
PARITY = [
    (lambda m, x: m.median(x), None), (lambda m, x: x.median(1), [0]),
    (lambda m, x: x.median(0), [0]), (lambda m, x: m.nanmedian(x), None),
    (lambda m, x: x.nanmedian(1).values, None), (lambda m, x: x.kthvalue(3, 1), [0]),
    (lambda m, x: x.kthvalue(2, 0), [0]), (lambda m, x: m.quantile(x, 0.3, 1), None),
    (lambda m, x: m.nanquantile(x, 0.7, 1), None),
    (lambda m, x: m.quantile(x, 0.5, 1, interpolation="nearest"), None),
    (lambda m, x: m.quantile(x, 0.5), None), (lambda m, x: m.nansum(x, 1), None),
    (lambda m, x: m.nanmean(x, 0), None), (lambda m, x: m.nanmean(x), None),
    (lambda m, x: x.cummax(1), None), (lambda m, x: x.cummin(0), None),
    (lambda m, x: x.logcumsumexp(1), None), (lambda m, x: m.aminmax(x, dim=1), None),
    (lambda m, x: m.count_nonzero(x, 0), None), (lambda m, x: m.msort(x), None),
    (lambda m, x: m.unique(x, return_inverse=True, return_counts=True), None),
    (lambda m, x: m.unique_consecutive(x.reshape(-1), return_counts=True), None),
    (lambda m, x: m.diff(x, 2, 0), None), (lambda m, x: m.trapezoid(x, dx=0.5, dim=0), None),
    (lambda m, x: m.cumulative_trapezoid(x), None), (lambda m, x: m.histc(x, 4, -1, 6), None),
]


@pytest.mark.parametrize("call,at_ties", PARITY)
@pytest.mark.parametrize("data", [TIES, WITH_NAN, np.zeros((2, 0))],
                         ids=["ties", "nan", "empty"])
def test_torch_parity_at_ties_nan_and_empty(call, at_ties, data):
    try:
        call(torch, torch.tensor(data))
    except (RuntimeError, IndexError) as e:  # (empty inputs some ops refuse: so must we)
        with pytest.raises(type(e)):
            call(dg, dg.tensor(data))
        return
    assert_like_torch(call, data, outputs=at_ties if data is TIES else None)


def test_mode_at_ties_and_with_nan():
    # the smallest of the most frequent values, at its last occurrence (as PyTorch)
    assert_like_torch(lambda m, x: x.mode(1), TIES)
    assert_like_torch(lambda m, x: x.mode(0), TIES.T)
    assert_like_torch(lambda m, x: x.mode(1), np.zeros((0, 2)))
    # each NaN counts once (PyTorch's result with NaN depends on its sort's arbitrary order)
    out = dg.tensor([[NAN, NAN, 1.0], [2.0, NAN, 2.0]]).mode(1)
    check(out, (np.asarray([1.0, 2.0]), np.asarray([2, 2])), [dg.float32, dg.int64])


def test_selection_indices_with_nan_follow_torch():
    x = np.asarray([[1.0, NAN, 2.0, NAN, 0.0], [3.0, 1.0, NAN, 2.0, 5.0]])
    assert_like_torch(lambda m, t: t.median(1), x)
    assert_like_torch(lambda m, t: t.nanmedian(1), x)
    assert_like_torch(lambda m, t: t.kthvalue(5, 1), x)  # NaN is the largest
    assert_like_torch(lambda m, t: t.cummax(1), x)
    assert_like_torch(lambda m, t: t.cummin(1), x)
    # an all-NaN row of nanmedian: NaN (PyTorch's index there follows no rule)
    assert_like_torch(lambda m, t: t.nanmedian(1).values, np.full((2, 5), NAN))


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float32"])
def test_integer_and_bool_dtypes_follow_torch(dtype):
    x = np.asarray([[3, 0, 2, 2], [1, 1, 0, 4]]).astype(dtype)
    for call in (lambda m, t: t.median(1).values, lambda m, t: m.median(t),
                 lambda m, t: t.kthvalue(2, 1).values, lambda m, t: t.mode(1),
                 lambda m, t: m.nansum(t, 0), lambda m, t: m.count_nonzero(t),
                 lambda m, t: t.cummax(1), lambda m, t: m.msort(t), lambda m, t: m.unique(t),
                 lambda m, t: m.diff(t, dim=0), lambda m, t: m.isin(t, t[0]),
                 lambda m, t: m.aminmax(t), lambda m, t: m.trapezoid(t)):
        try:
            call(torch, torch.tensor(x))
        except (RuntimeError, NotImplementedError):
            continue  # torch has no kernel for this dtype
        assert_like_torch(call, x)


def test_var_mean_std_mean_positional_unbiased():
    x = np.random.default_rng(3).uniform(-1, 1, (3, 4))
    assert_like_torch(lambda m, t: m.var_mean(t, 1, False, True), x)
    assert_like_torch(lambda m, t: m.std_mean(t, False), x)
    assert_like_torch(lambda m, t: m.std_mean(t, (0, 1), correction=2, keepdim=True), x)


def test_integer_searches_and_counts():
    seq, v = np.asarray([1, 3, 3, 7], np.int64), np.asarray([[0.5, 3.0], [7.0, 9.0]])
    assert_like_torch(lambda m, s, t: m.searchsorted(s, t, right=True), seq, v)
    assert_like_torch(lambda m, s, t: m.searchsorted(s, t, out_int32=True), seq, v)
    assert_like_torch(lambda m, s, t: m.bucketize(t, s, right=True), seq, v)
    assert_like_torch(lambda m, t: m.bincount(t, minlength=9), seq)
    assert_like_torch(lambda m, t: m.bincount(t[:0]), seq)
    assert_like_torch(lambda m, t: m.searchsorted(t, 3), seq)
    assert_like_torch(lambda m, t: m.bucketize(5, t), seq)


def test_batched_searchsorted_follows_torch():
    # every row merged at once: ties, both sides, empty rows and an empty batch
    rng = np.random.default_rng(7)
    for lead, m, k in (((3,), 5, 4), ((2, 2), 3, 6), ((2,), 0, 3), ((0,), 4, 2), ((3,), 4, 0)):
        seq = np.sort(rng.integers(-3, 4, lead + (m,)).astype(float), -1)
        values = rng.integers(-4, 5, lead + (k,)).astype(float)
        if values.size:
            values.flat[0] = NAN
        for right in (False, True):
            assert_like_torch(lambda mod, s, v: mod.searchsorted(s, v, right=right), seq, values)


def test_histograms_follow_torch():
    x = np.asarray([-1.5, 0.2, 0.2, 7.0, NAN, 2.5, 3.0, -3.0], np.float32)
    assert_like_torch(lambda m, t: m.histc(t, 5, -2, 3), x)  # outside and NaN: not counted
    assert_like_torch(lambda m, t: m.histogram(t[:4], 3), x)
    assert_like_torch(lambda m, t: m.histogram(t[:4], 3, density=True), x)
    assert_like_torch(lambda m, t: m.histogram(t, 4, range=(-2.0, 3.0)), x)
    assert_like_torch(lambda m, t: m.histc(t[1:3]), x)  # one value: the range widened by 1
    pts = np.asarray([[0.1, 1.0], [0.4, -1.0], [0.9, 0.5], [0.2, 0.2]])
    assert_like_torch(lambda m, t: m.histogramdd(t, [2, 3]), pts)
    assert_like_torch(lambda m, t: m.histogramdd(t, 2, weight=t[:, 0], density=True), pts)


# --- numerics -----------------------------------------------------------------------------------

def test_logcumsumexp_far_apart_values_and_infinities():
    x = np.asarray([[-1000.0, 0.0, 1000.0, -math.inf], [-math.inf, -math.inf, 3.0, math.inf]])
    assert_like_torch(lambda m, t: t.logcumsumexp(1), x)
    assert_like_torch(lambda m, t: t.logcumsumexp(0), x)
    # the gradient of far-apart values: no overflow, the weights exp(x_j - out_i)
    a = np.asarray([-800.0, 0.0, 700.0, 690.0])
    xd, xt = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    w = np.asarray([1.0, -2.0, 0.5, 3.0])
    (xd.logcumsumexp(0) * dg.tensor(w)).sum().backward()
    (xt.logcumsumexp(0) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-300)


def test_logcumsumexp_double_backward():
    x = dg.tensor(np.random.default_rng(0).uniform(-2, 2, (2, 4)), requires_grad=True)
    g = dg.tensor(np.random.default_rng(1).uniform(0.5, 2, (2, 4)), requires_grad=True)
    assert dg.autograd.gradgradcheck(lambda t: t.logcumsumexp(1), (x,), (g,))


def test_quantile_float32_ranks_follow_torch():
    x = np.random.default_rng(2).uniform(-1, 1, (3, 41)).astype(np.float32)
    for q in (0.1, 0.3, 0.7, 0.95):
        for method in ("linear", "lower", "higher", "midpoint", "nearest"):
            assert_like_torch(lambda m, t: m.quantile(t, q, 1, interpolation=method), x)


def test_full_median_gradient_is_shared_by_ties():
    x = dg.tensor([3.0, 1.0, 2.0, 2.0, 5.0], requires_grad=True)
    x.median().backward()
    check(x.grad, np.asarray([0.0, 0.0, 0.5, 0.5, 0.0]), dg.float32)


@pytest.mark.parametrize("call,nan", [
    (lambda m, x: m.aminmax(x, dim=1)[0] * 2 + m.aminmax(x, dim=1)[1] * 3, False),
    (lambda m, x: m.aminmax(x)[0] * 2 + m.aminmax(x)[1] * 3, False),
    (lambda m, x: x.nanmedian(), True), (lambda m, x: m.nansum(x, 1), True),
    (lambda m, x: m.nanmean(x, 0), True), (lambda m, x: x.median(), True),
])
def test_gradients_at_ties_and_nan_follow_torch(call, nan):
    a = np.asarray([[1.0, 3.0, 3.0, NAN, 0.0], [2.0, 2.0, 2.0, 2.0, 2.0]])
    a = a if nan else np.nan_to_num(a, nan=0.0)
    xd, xt = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    call(dg, xd).sum().backward()
    call(torch, xt).sum().backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


# --- in-place forms -----------------------------------------------------------------------------

def test_cumsum_cumprod_renorm_in_place():
    a = np.asarray([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]])
    for name, args in (("cumsum_", (1,)), ("cumprod_", (0,)), ("renorm_", (2, 0, 1.0))):
        x, t = dg.tensor(a), torch.tensor(a)
        assert getattr(x, name)(*args) is x
        getattr(t, name)(*args)
        check(x, t.numpy(), dg.float64)
    xi = dg.tensor([1, 2, 3])
    xi.cumsum_(0)
    check(xi, np.asarray([1, 3, 6]), dg.int64)
    # through autograd: the in-place scan of a non-leaf differentiates like the out-of-place one
    leaf = dg.tensor(a, requires_grad=True)
    y = leaf * 2
    y.cumprod_(1)
    y.sum().backward()
    tl = torch.tensor(a, requires_grad=True)
    (tl * 2).cumprod(1).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), tl.grad.numpy(), rtol=1e-12)


def test_methods_exactly_where_torch_has_them():
    names = ("median nanmedian kthvalue mode quantile nanquantile nansum nanmean aminmax "
             "count_nonzero msort var_mean std_mean cummax cummin logcumsumexp unique "
             "unique_consecutive isin bincount histc histogram histogramdd searchsorted "
             "bucketize diff trapezoid trapz cumulative_trapezoid renorm renorm_ cumsum_ "
             "cumprod_ norm_except_dim").split()
    for name in names:
        assert hasattr(dg.Tensor, name) == hasattr(torch.Tensor, name), name
        assert hasattr(dg, name) == hasattr(torch, name), name


# --- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda m, x: x.median(2), lambda m, x: x.median(0)[:0].median(0),
    lambda m, x: m.zeros(2, 0).median(1), lambda m, x: x.kthvalue(4, 1),
    lambda m, x: x.kthvalue(0), lambda m, x: m.zeros(0, 2).kthvalue(1, 0),
    lambda m, x: m.zeros(2, 0).mode(1), lambda m, x: x.cummax(3),
    lambda m, x: x.logcumsumexp(-3), lambda m, x: m.quantile(x, 1.5),
    lambda m, x: m.quantile(x, m.tensor([0.5, -0.1], dtype=x.dtype)),
    lambda m, x: m.quantile(x, m.tensor([[0.5]], dtype=x.dtype)),
    lambda m, x: m.quantile(x, m.tensor([0.5], dtype=m.float32)),
    lambda m, x: m.quantile(x, 0.5, interpolation="cubic"),
    lambda m, x: m.quantile(x.long(), 0.5), lambda m, x: m.quantile(x[:0], 0.5),
    lambda m, x: m.nanmean(x.long()), lambda m, x: m.aminmax(x[:, :0], dim=1),
    lambda m, x: m.aminmax(x[:0]), lambda m, x: m.bincount(x.long()),
    lambda m, x: m.bincount(x.long().abs()[0], minlength=-1),
    lambda m, x: m.bincount(x.long().abs()[0], weights=x[0, :2]), lambda m, x: m.bincount(x[0]),
    lambda m, x: m.histc(x, bins=0), lambda m, x: m.histc(x, 3, 2, 1),
    lambda m, x: m.histc(x.long()),
    lambda m, x: m.searchsorted(x, x[:1]), lambda m, x: m.searchsorted(x, 1.0),
    lambda m, x: m.searchsorted(x[0], x, side="left", right=True),
    lambda m, x: m.searchsorted(x[0], x[0], sorter=m.tensor([0, 1])),
    lambda m, x: m.bucketize(x[0], x), lambda m, x: m.diff(x[0, 0]),
    lambda m, x: m.diff(x, -1), lambda m, x: m.diff(x, prepend=x[0]),
    lambda m, x: m.trapezoid(x, x[0, :2]), lambda m, x: m.trapezoid(x, x[0], dx=1.0),
    lambda m, x: m.cumulative_trapezoid(x, x[0], dx=1.0), lambda m, x: m.renorm(x, 0, 0, 1.0),
    lambda m, x: m.renorm(x, 2, 0, -1.0), lambda m, x: m.renorm(x, 2, 5, 1.0),
    lambda m, x: m.renorm(x[0], 2, 0, 1.0),
    lambda m, x: m.unique(x, dim=4), lambda m, x: m.logcumsumexp(x.long(), 0),
    lambda m, x: (x > 1).median(), lambda m, x: (x > 1).median(0),
    lambda m, x: (x > 1).nanmedian(), lambda m, x: (x > 1).kthvalue(1),
    lambda m, x: m.isin(x > 1, x > 0), lambda m, x: m.searchsorted(x[0] > 1, x[0] > 1),
    lambda m, x: m.bincount((x > 1)[0]),
])
def test_errors_match_torch(call):
    x = np.asarray([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
    with pytest.raises(Exception) as theirs:
        call(torch, torch.tensor(x))
    with pytest.raises(theirs.type) as ours:
        call(dg, dg.tensor(x))
    # the message names the op and the rule as torch's does (theirs may add C++ context)
    first = str(theirs.value).splitlines()[0]
    assert str(ours.value).splitlines()[0] == first or theirs.type in (IndexError, TypeError), \
        f"ours: {ours.value!s:.200}\ntorch: {first:.200}"
