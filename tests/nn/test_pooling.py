"""Pooling (functional and modules): parity with torch 2.13 for outputs, indices and input
gradients, float64 gradcheck, NaN handling, error messages and reprs."""
import itertools

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn as nn
import dynagrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# the registered ops these tests cover (tests/test_registry.py)
TESTED_OPS = {"max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
              "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d"}


def _check(name, shape, args=(), kwargs=None, dtype=np.float64, tol=1e-10, seed=0):
    kwargs = kwargs or {}
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    d, t = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    yd, yt = getattr(F, name)(d, *args, **kwargs), getattr(TF, name)(t, *args, **kwargs)
    if isinstance(yt, tuple):
        assert yd[1].dtype == dg.int64
        np.testing.assert_array_equal(yd[1].numpy(), yt[1].numpy())
        yd, yt = yd[0], yt[0]
    assert tuple(yd.shape) == tuple(yt.shape)
    np.testing.assert_allclose(yd.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(seed + 1).standard_normal(tuple(yt.shape)).astype(dtype)
    yd.backward(dg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)


# kernel, stride, padding, dilation, ceil_mode over two input sizes; configurations torch rejects
# (padding > kernel / 2, empty output) are covered by the error tests below
MAX_CASES = [c for c in itertools.product((1, 2, 3), (None, 1, 2, 3), (0, 1), (1, 2),
                                          (False, True)) if c[2] <= c[0] // 2]


@pytest.mark.parametrize("k,s,p,d,ceil", MAX_CASES)
def test_max_pool2d_parity(k, s, p, d, ceil):
    _check("max_pool2d", (2, 3, 7, 6), (k, s, p, d, ceil), dict(return_indices=True))


@pytest.mark.parametrize("k,s,p,d,ceil", MAX_CASES)
def test_max_pool1d_parity(k, s, p, d, ceil):
    _check("max_pool1d", (2, 3, 8), (k, s, p, d, ceil), dict(return_indices=True))


@pytest.mark.parametrize("args,kwargs", [
    (((3, 2), (2, 1), (1, 0), (2, 1)), dict(ceil_mode=True)),
    ((2,), {}),
    ((3, 2, 1), dict(return_indices=True)),
])
def test_max_pool2d_asymmetric_and_unbatched(args, kwargs):
    _check("max_pool2d", (2, 3, 9, 8), args, kwargs)
    _check("max_pool2d", (3, 9, 8), args, kwargs)
    _check("max_pool2d", (2, 3, 9, 8), args, kwargs, dtype=np.float32, tol=1e-6)


AVG_CASES = [c for c in itertools.product((1, 2, 3), (None, 1, 2), (0, 1), (False, True),
                                          (True, False)) if c[2] <= c[0] // 2]


@pytest.mark.parametrize("k,s,p,ceil,cip", AVG_CASES)
def test_avg_pool2d_parity(k, s, p, ceil, cip):
    _check("avg_pool2d", (2, 3, 7, 6), (k, s, p, ceil, cip))


@pytest.mark.parametrize("shape,args", [
    ((2, 3, 8, 6), (2,)), ((2, 3, 7, 5), (2, 2)),                # every window whole; odd sizes
    ((2, 3, 6, 6), (2, 2, 0, False, True, 3)),                    # divisor_override
    ((4, 64, 64, 66), (2,)),                                      # threaded planes
])
def test_avg_pool2d_2x2_windows(shape, args):
    """The 2x2-at-stride-2 kernels (stored, not accumulated, gradients; a last odd row or
    column zeroed) against PyTorch, in float32 as models run them."""
    _check("avg_pool2d", shape, args, dtype=np.float32, tol=1e-6)


@pytest.mark.parametrize("k,s,p,ceil,cip", AVG_CASES)
def test_avg_pool1d_parity(k, s, p, ceil, cip):
    _check("avg_pool1d", (2, 3, 8), (k, s, p, ceil, cip))


@pytest.mark.parametrize("args", [(3, 2, 1, True, False, 5), (2, 1, 1, False, True, 3),
                                  ((3, 2), (2, 1), (1, 0), True, True, 2)])
def test_avg_pool2d_divisor_override(args):
    _check("avg_pool2d", (2, 3, 7, 6), args)
    _check("avg_pool2d", (3, 7, 6), args, dtype=np.float32, tol=1e-6)


@pytest.mark.parametrize("out", [1, 2, 3, 4, 5, 7, (2, 3), (None, 2), (3, None), (9, 1)])
def test_adaptive_pool2d_parity(out):
    _check("adaptive_avg_pool2d", (2, 3, 7, 5), (out,))
    _check("adaptive_max_pool2d", (2, 3, 7, 5), (out,), dict(return_indices=True))


@pytest.mark.parametrize("out", [1, 2, 3, 5, 7, 10])
def test_adaptive_pool1d_parity(out):
    _check("adaptive_avg_pool1d", (2, 3, 7), (out,))
    _check("adaptive_max_pool1d", (2, 3, 7), (out,), dict(return_indices=True))
    _check("adaptive_avg_pool1d", (3, 7), (out,), dtype=np.float32, tol=1e-6)


@pytest.mark.parametrize("name,shape,args", [
    ("max_pool2d", (0, 3, 4, 4), (2,)), ("max_pool1d", (0, 3, 6), (3,)),
    ("adaptive_max_pool2d", (0, 2, 5, 5), (2,)), ("avg_pool2d", (0, 3, 4, 4), (2,)),
])
def test_empty_batch(name, shape, args):
    # no samples: an empty output and input gradient
    _check(name, shape, args)


def test_max_pool_nan_and_ties():
    x = np.array([[[[1.0, np.nan, 3.0, 3.0], [0.0, 2.0, -np.inf, -np.inf]]]])
    for k in ((2, 2), (2, 1), (1, 2)):
        d, idx_d = F.max_pool2d(dg.tensor(x), k, return_indices=True)
        t, idx_t = TF.max_pool2d(torch.tensor(x), k, return_indices=True)
        np.testing.assert_array_equal(d.numpy(), t.numpy())
        np.testing.assert_array_equal(idx_d.numpy(), idx_t.numpy())


def test_max_pool_2x2_fast_path_matches_torch_in_float32():
    # whole 2x2 windows at stride 2 run an unrolled kernel: same values, indices (first of ties,
    # NaN wins) and gradients as PyTorch, with odd sizes leaving the last row/column out
    x = np.random.default_rng(3).integers(-3, 3, (4, 3, 9, 12)).astype(np.float32)
    x[0, 0, 0, 1] = x[1, 2, 5, 5] = np.nan
    d = dg.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    (yd, id_), (yt, it) = (F.max_pool2d(d, 2, return_indices=True),
                           TF.max_pool2d(t, 2, return_indices=True))
    np.testing.assert_array_equal(yd.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(id_.numpy(), it.numpy())
    yd.sum().backward()
    yt.sum().backward()
    np.testing.assert_array_equal(d.grad.numpy(), t.grad.numpy())


def test_max_pool_gradient_goes_to_one_tied_element():
    x = dg.ones(1, 1, 2, 2, requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    assert x.grad.numpy().sum() == 1.0 and x.grad.numpy()[0, 0, 0, 0] == 1.0


def test_overlapping_windows_accumulate_gradient():
    _check("max_pool2d", (1, 2, 6, 6), (3, 1))
    _check("avg_pool2d", (1, 2, 6, 6), (3, 1, 1))


@pytest.mark.parametrize("fn,args", [
    (F.avg_pool2d, (3, 2, 1, True, False)),
    (F.avg_pool1d, (2, 1, 1)),
    (F.adaptive_avg_pool2d, ((2, 3),)),
    (F.adaptive_avg_pool1d, (3,)),
    (F.max_pool2d, (2, 1, 1, 2)),
    (F.adaptive_max_pool2d, (2,)),
])
def test_gradcheck(fn, args):
    # distinct, well separated values keep finite differences away from max-pool ties
    x = dg.tensor(np.random.default_rng(2).permutation(40).reshape(1, 2, 4, 5) * 0.1,
                  dtype=dg.float64, requires_grad=True)
    if fn in (F.avg_pool1d, F.adaptive_avg_pool1d):
        x = dg.tensor(x.detach().numpy().reshape(2, 4, 5), requires_grad=True)
    assert dg.autograd.gradcheck(lambda t: fn(t, *args), (x,))


def test_grad_fn_names_and_no_grad():
    x = dg.randn(1, 1, 4, 4, requires_grad=True)
    assert type(F.max_pool2d(x, 2).grad_fn).__name__ == "MaxPool2DWithIndicesBackward0"
    assert type(F.avg_pool2d(x, 2).grad_fn).__name__ == "AvgPool2DBackward0"
    assert type(F.adaptive_avg_pool2d(x, 2).grad_fn).__name__ == "AdaptiveAvgPool2DBackward0"
    # to 1 x 1 it is a mean over the spatial dims, as PyTorch computes it (MeanBackward1 there)
    assert type(F.adaptive_avg_pool2d(x, 1).grad_fn).__name__.startswith("MeanBackward")
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    assert idx.requires_grad is False and out.requires_grad
    with dg.no_grad():
        assert F.max_pool2d(x, 2).grad_fn is None


def test_double_backward_raises():
    x = dg.randn(1, 1, 4, 4, dtype=dg.float64, requires_grad=True)
    y = (F.avg_pool2d(x, 2) ** 2).sum()
    with pytest.raises(RuntimeError, match="double backward"):
        dg.autograd.grad(y, x, create_graph=True)


@pytest.mark.parametrize("call,match", [
    (lambda: F.max_pool2d(dg.randn(1, 1, 4, 4), 2, padding=2), "pad should be at most half"),
    (lambda: F.avg_pool2d(dg.randn(1, 1, 4, 4), 3, padding=2), "pad should be at most half"),
    (lambda: F.max_pool2d(dg.randn(1, 1, 2, 2), 3), "Output size is too small"),
    (lambda: F.max_pool2d(dg.randn(4, 4), 2), r"Expected 3D or 4D \(batch mode\) tensor"),
    (lambda: F.max_pool1d(dg.randn(1, 1, 4), 2, stride=0), "stride must be greater than zero"),
    (lambda: F.max_pool2d(dg.randn(1, 1, 4, 4), 2, dilation=0), "dilation must be greater"),
    (lambda: F.avg_pool2d(dg.randn(1, 1, 4, 4), 2, divisor_override=0), "divisor must be not zero"),
    (lambda: F.max_pool2d(dg.ones(1, 1, 4, 4, dtype=dg.int64), 2), "float32 or float64"),
    (lambda: F.adaptive_avg_pool2d(dg.randn(1, 1, 4, 4), (1, 2, 3)), "output_size must be 2"),
])
def test_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


@pytest.mark.parametrize("make,text", [
    (lambda: nn.MaxPool2d(2), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, "
                              "ceil_mode=False)"),
    (lambda: nn.MaxPool1d(3, 2, 1, ceil_mode=True),
     "MaxPool1d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=True)"),
    (lambda: nn.AvgPool2d((2, 3), padding=1), "AvgPool2d(kernel_size=(2, 3), stride=(2, 3), "
                                              "padding=1)"),
    (lambda: nn.AvgPool1d(3, stride=2), "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(0,))"),
    (lambda: nn.AdaptiveAvgPool2d((1, None)), "AdaptiveAvgPool2d(output_size=(1, None))"),
    (lambda: nn.AdaptiveAvgPool1d(4), "AdaptiveAvgPool1d(output_size=4)"),
    (lambda: nn.AdaptiveMaxPool2d(3, return_indices=True), "AdaptiveMaxPool2d(output_size=3)"),
])
def test_module_repr_matches_torch(make, text):
    assert repr(make()) == text


@pytest.mark.parametrize("cls,args,kwargs,shape", [
    ("MaxPool2d", (3, 2, 1), dict(ceil_mode=True), (2, 3, 7, 7)),
    ("MaxPool1d", (2,), dict(dilation=2), (2, 3, 9)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, count_include_pad=False), (2, 3, 7, 6)),
    ("AvgPool2d", (2,), dict(divisor_override=3, ceil_mode=True), (2, 3, 5, 5)),
    ("AvgPool1d", (3, 2, 1), dict(ceil_mode=True), (2, 3, 8)),
    ("AdaptiveAvgPool2d", ((3, 2),), {}, (2, 3, 7, 5)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 3, 7)),
    ("AdaptiveMaxPool2d", (2,), {}, (2, 3, 5, 5)),
])
def test_module_parity(cls, args, kwargs, shape):
    a = np.random.default_rng(0).standard_normal(shape)
    d, t = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    yd, yt = getattr(nn, cls)(*args, **kwargs)(d), getattr(torch.nn, cls)(*args, **kwargs)(t)
    np.testing.assert_allclose(yd.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-10)
    (yd * yd).sum().backward()
    (yt * yt).sum().backward()
    np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_module_return_indices():
    x = dg.randn(1, 2, 4, 4)
    out, idx = nn.MaxPool2d(2, return_indices=True)(x)
    ref_out, ref_idx = TF.max_pool2d(torch.tensor(x.numpy()), 2, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), ref_idx.numpy())
    np.testing.assert_array_equal(out.numpy(), ref_out.numpy())
    out, idx = nn.AdaptiveMaxPool2d(3, return_indices=True)(x)
    assert tuple(idx.shape) == (1, 2, 3, 3)
    assert list(nn.MaxPool2d(2).parameters()) == []


@pytest.mark.parametrize("kwargs", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                    dict(kernel_size=2, return_indices=True)])
def test_max_pools_split_across_cores_match_torch(monkeypatch, kwargs):
    # large pools run their planes in slices (each slice zeroes and fills its own gradient rows):
    # the 2x2 and the general kernel, forward, indices and backward must match PyTorch's
    from dynagrad.ops.nn import pooling
    monkeypatch.setattr(pooling, "SPLIT_MIN_ELEMENTS", 0)
    _check("max_pool2d", (5, 3, 8, 9), (), kwargs)
    _check("max_pool2d", (2, 4, 7, 6), (), kwargs, dtype=np.float32, tol=1e-6)
