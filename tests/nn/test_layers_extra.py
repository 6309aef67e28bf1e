"""The padding layers, Fold/Unfold, Softmax2d, LocalResponseNorm, InstanceNorm3d, LP pooling, max
unpooling, 3-D adaptive pooling, fractional max pooling, gumbel_softmax and the multilabel-margin
and triplet-with-distance losses: outputs, indices and input gradients against torch 2.13 in
float64, errors as torch raises them, reprs."""
import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn.functional as F
from dynagrad import nn

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _pair(shape, seed=0, positive=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    if positive:
        a = np.abs(a) + 0.1
    return dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _compare(yd, yt, d, t, seed=1, tol=1e-10):
    """Same outputs (and indices) and, for a random upstream gradient, the same input gradient."""
    if isinstance(yt, tuple):
        np.testing.assert_array_equal(yd[1].numpy(), yt[1].numpy())
        assert yd[1].dtype == dg.int64
        yd, yt = yd[0], yt[0]
    assert tuple(yd.shape) == tuple(yt.shape)
    np.testing.assert_allclose(yd.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(seed).standard_normal(tuple(yt.shape))
    yd.backward(dg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)


def _module_check(name, args, shape, kwargs=None, positive=False, tol=1e-10):
    kwargs = kwargs or {}
    d, t = _pair(shape, positive=positive)
    md, mt = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(md) == repr(mt)
    _compare(md(d), mt(t), d, t, tol=tol)


# --- padding layers ------------------------------------------------------------------------------

PADS = [("ConstantPad1d", (2, 1.5), (2, 3, 4)), ("ConstantPad2d", ((1, 0, 2, 1), -1.0), (2, 3, 4)),
        ("ConstantPad3d", (1, 2.0), (1, 2, 2, 3)), ("ZeroPad1d", ((0, 2),), (3, 4)),
        ("ZeroPad3d", ((1, 0, 0, 1, 2, 0),), (1, 2, 2, 2, 3)),
        ("ReflectionPad1d", ((2, 1),), (2, 3, 4)), ("ReflectionPad2d", (1,), (1, 2, 3, 4)),
        ("ReflectionPad3d", ((1, 0, 1, 1, 0, 1),), (1, 2, 3, 3, 3)),
        ("ReplicationPad1d", (2,), (2, 3, 4)), ("ReplicationPad2d", ((2, 0, 1, 3),), (2, 3, 4)),
        ("ReplicationPad3d", (1,), (1, 1, 2, 3, 2)), ("CircularPad1d", ((1, 2),), (2, 3, 4)),
        ("CircularPad2d", (1,), (1, 2, 3, 4)), ("CircularPad3d", ((1, 0, 0, 1, 1, 1),),
                                                (1, 2, 2, 3, 3))]


@pytest.mark.parametrize("name,args,shape", PADS, ids=[p[0] for p in PADS])
def test_padding_layers_match_torch(name, args, shape):
    _module_check(name, args, shape)


def test_padding_errors_match_torch():
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.CircularPad2d(1)(dg.zeros(3, 3))
    with pytest.raises(RuntimeError):
        torch.nn.ReflectionPad1d(3)(torch.zeros(1, 2, 3))
    with pytest.raises(RuntimeError):
        nn.ReflectionPad1d(3)(dg.zeros(1, 2, 3))
    with pytest.raises(ValueError, match="4-tuple"):
        nn.ConstantPad2d((1, 2, 3), 0.0)


# --- Fold / Unfold, Softmax2d, LocalResponseNorm, InstanceNorm3d ---------------------------------

def test_fold_unfold_modules_match_torch():
    _module_check("Unfold", ((2, 3),), (2, 2, 4, 5), {"padding": 1, "stride": (1, 2)})
    _module_check("Fold", ((4, 5), 2), (2, 8, 12))


def test_softmax2d_matches_torch():
    _module_check("Softmax2d", (), (2, 3, 2, 2))
    _module_check("Softmax2d", (), (3, 2, 4))
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D"):
        nn.Softmax2d()(dg.zeros(2, 3))


@pytest.mark.parametrize("size,shape", [(3, (2, 5, 4)), (4, (1, 6, 2, 3)), (2, (1, 3, 2, 2, 2))])
def test_local_response_norm_matches_torch(size, shape):
    _module_check("LocalResponseNorm", (size, 0.3, 0.6, 1.5), shape)
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality"):
        F.local_response_norm(dg.zeros(3, 4), 2)


def test_instance_norm3d_matches_torch_with_state_dict():
    d, t = _pair((2, 3, 2, 3, 2))
    mt = torch.nn.InstanceNorm3d(3, affine=True, track_running_stats=True).double()
    with torch.no_grad():
        mt.weight.uniform_(0.5, 1.5)
        mt.bias.uniform_(-1, 1)
    md = nn.InstanceNorm3d(3, affine=True, track_running_stats=True, dtype=dg.float64)
    md.load_state_dict({k: dg.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    assert repr(md) == repr(mt)
    _compare(md(d), mt(t), d, t)
    np.testing.assert_allclose(md.weight.grad.numpy(), mt.weight.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(md.running_var.numpy(), mt.running_var.numpy(), atol=1e-12)
    with pytest.raises(ValueError, match=r"expected 4D or 5D input \(got 3D input\)"):
        nn.InstanceNorm3d(2)(dg.zeros(2, 3, 4))


# --- pooling -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,args,shape", [
    ("LPPool1d", (2, 3, 2), (2, 3, 8)), ("LPPool1d", (1.5, 2), (2, 7)),
    ("LPPool2d", (2, (2, 3)), (1, 2, 5, 6)), ("LPPool2d", (3, 2, 1, True), (1, 2, 5, 5)),
    ("LPPool3d", (2, 2), (1, 2, 4, 3, 4))])
def test_lp_pool_matches_torch(name, args, shape):
    _module_check(name, args, shape, positive=True)


@pytest.mark.parametrize("nsp,kernel,stride,padding", [(1, 2, None, 0), (1, 3, 2, 1),
                                                        (2, 2, None, 0), (2, 3, 2, 1),
                                                        (3, 2, None, 0)])
def test_max_unpool_matches_torch(nsp, kernel, stride, padding):
    shape = (2, 2) + (6, 5, 4)[:nsp]
    a = np.random.default_rng(3).standard_normal(shape)
    pool = getattr(TF, f"max_pool{nsp}d")
    out, idx = pool(torch.tensor(a), kernel, stride, padding, return_indices=True)
    d, t = dg.tensor(out.numpy(), requires_grad=True), out.clone().requires_grad_(True)
    md = getattr(nn, f"MaxUnpool{nsp}d")(kernel, stride, padding)
    mt = getattr(torch.nn, f"MaxUnpool{nsp}d")(kernel, stride, padding)
    assert repr(md) == repr(mt)
    _compare(md(d, dg.tensor(idx.numpy()), shape[2:]), mt(t, idx, shape[2:]), d, t)
    _compare(md(d[0], dg.tensor(idx[0].numpy()), shape[2:]), mt(t[0], idx[0], shape[2:]), d, t,
             seed=2)
    # the default output size, (in - 1) * stride - 2 * padding + kernel
    out, idx = pool(torch.ones((1, 1) + (4, 6, 2)[:nsp]), 2, return_indices=True)
    np.testing.assert_array_equal(
        md.__class__(2)(dg.tensor(out.numpy()), dg.tensor(idx.numpy())).numpy(),
        type(mt)(2)(out, idx).numpy())


def test_max_unpool_errors_match_torch():
    idx = torch.tensor([[[[0, 1], [2, 99]]]])
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 99 \(output volumes are "
                                           r"of size 4x4\)"):
        F.max_unpool2d(dg.zeros(1, 1, 2, 2), dg.tensor(idx.numpy()), 2)
    with pytest.raises(RuntimeError, match="Found an invalid max index: 99"):
        TF.max_unpool2d(torch.zeros(1, 1, 2, 2), idx, 2)
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool2d(dg.zeros(1, 1, 2, 2), dg.zeros(1, 1, 2, 2, dtype=dg.int64), 2,
                       output_size=(9, 9))


@pytest.mark.parametrize("kind", ["avg", "max"])
@pytest.mark.parametrize("size", [(2, 3, 2), (5, 4, 6), (3, None, 1), 1])
def test_adaptive_pool3d_matches_torch(kind, size):
    d, t = _pair((2, 2, 5, 4, 6))
    if kind == "avg":
        _compare(F.adaptive_avg_pool3d(d, size), TF.adaptive_avg_pool3d(t, size), d, t)
    else:
        _compare(F.adaptive_max_pool3d(d, size, True), TF.adaptive_max_pool3d(t, size, True), d, t)


def test_adaptive_pool_modules_match_torch():
    _module_check("AdaptiveAvgPool3d", ((2, 1, 3),), (2, 4, 3, 5))
    _module_check("AdaptiveMaxPool3d", (2, True), (1, 2, 4, 3, 5))
    _module_check("AdaptiveMaxPool1d", (3,), (2, 3, 7))
    with pytest.raises(RuntimeError, match="Expected 4D or 5D tensor"):
        F.adaptive_max_pool3d(dg.zeros(2, 3), 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fractional_max_pool_matches_torch_given_samples(dtype):
    tdt = torch.float64 if dtype == np.float64 else torch.float32
    samples = torch.rand(2, 3, 2, dtype=tdt, generator=torch.Generator().manual_seed(0))
    a = np.random.default_rng(4).standard_normal((2, 3, 9, 8)).astype(dtype)
    d, t = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    yd = F.fractional_max_pool2d(d, 2, output_size=(4, 5), return_indices=True,
                                 _random_samples=dg.tensor(samples.numpy()))
    yt = TF.fractional_max_pool2d(t, 2, output_size=(4, 5), return_indices=True,
                                  _random_samples=samples)
    _compare(yd, yt, d, t, tol=1e-6)
    samples = torch.rand(1, 2, 3, dtype=tdt, generator=torch.Generator().manual_seed(1))
    a = np.random.default_rng(5).standard_normal((1, 2, 7, 6, 8)).astype(dtype)
    d, t = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    md = nn.FractionalMaxPool3d((2, 3, 2), output_ratio=0.5, return_indices=True,
                                _random_samples=dg.tensor(samples.numpy()))
    mt = torch.nn.FractionalMaxPool3d((2, 3, 2), output_ratio=0.5, return_indices=True,
                                      _random_samples=samples)
    _compare(md(d), mt(t), d, t, tol=1e-6)


def test_fractional_max_pool_random_and_errors():
    out = nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))(dg.randn(2, 3, 10, 8))
    assert tuple(out.shape) == (2, 3, 5, 4)
    out = F.fractional_max_pool2d(dg.randn(3, 7, 7), 2, output_size=3)
    assert tuple(out.shape) == (3, 3, 3)
    with pytest.raises(ValueError, match="requires specifying either an output size"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match=r"output_ratio must be between 0 and 1 \(got 1.5\)"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(RuntimeError, match="too large relative to input"):
        F.fractional_max_pool2d(dg.randn(1, 1, 4, 4), 3, output_size=3)


# --- gumbel_softmax and the losses ---------------------------------------------------------------

def test_gumbel_softmax_samples_and_gradients():
    dg.manual_seed(0)
    logits = dg.tensor(np.log([[0.7, 0.2, 0.1]]).repeat(4000, 0), requires_grad=True)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and (h.sum(-1) == 1).all()
    # argmax of logits + Gumbel noise draws class i with probability softmax(logits)_i
    np.testing.assert_allclose(h.mean(0), [0.7, 0.2, 0.1], atol=0.03)
    # with the same noise, the hard sample is the one-hot of the soft one's argmax and has its
    # gradient (straight-through)
    w = dg.tensor([1.0, 2.0, 3.0], dtype=dg.float64)
    grads = []
    for hard_flag in (False, True):
        logits.grad = None
        dg.manual_seed(1)
        y = F.gumbel_softmax(logits, tau=0.5, hard=hard_flag)
        (y * w).sum().backward()
        grads.append((y.detach().numpy(), logits.grad.numpy()))
    (soft, g_soft), (hard, g_hard) = grads
    np.testing.assert_allclose(soft.sum(-1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(hard.argmax(-1), soft.argmax(-1))
    np.testing.assert_allclose(g_hard, g_soft, atol=1e-12)
    assert np.abs(g_soft).sum() > 0
    y = F.gumbel_softmax(dg.zeros(2, 3, 4), dim=1)
    np.testing.assert_allclose(y.numpy().sum(1), 1.0, atol=1e-6)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss_matches_torch(reduction):
    d, t = _pair((3, 4))
    target = torch.tensor([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]])
    m = nn.MultiLabelMarginLoss(reduction=reduction)
    _compare(m(d, dg.tensor(target.numpy())),
             torch.nn.MultiLabelMarginLoss(reduction=reduction)(t, target), d, t)
    d, t = _pair((4,), seed=5)
    _compare(F.multilabel_margin_loss(d, dg.tensor([2, 1, -1, 3]), reduction=reduction),
             TF.multilabel_margin_loss(t, torch.tensor([2, 1, -1, 3]), reduction=reduction), d, t)


def test_multilabel_margin_loss_errors_match_torch():
    with pytest.raises(RuntimeError, match="argument #2 'target' is out of range"):
        F.multilabel_margin_loss(dg.zeros(3), dg.tensor([0, -1, 7]))
    with pytest.raises(RuntimeError, match=r"inconsistent target size: \[2, 2\] for input of "
                                           r"size: \[2, 3\]"):
        F.multilabel_margin_loss(dg.zeros(2, 3), dg.tensor([[0, 1], [1, -1]]))
    with pytest.raises(RuntimeError, match="expected scalar type Long"):
        F.multilabel_margin_loss(dg.zeros(2, 3), dg.zeros(2, 3))


@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance_loss_matches_torch(swap):
    (a, ta), (p, tp), (n, tn) = (_pair((4, 5), seed=s) for s in range(3))
    m = nn.TripletMarginWithDistanceLoss(margin=2.0, swap=swap)
    mt = torch.nn.TripletMarginWithDistanceLoss(margin=2.0, swap=swap)
    assert repr(m) == repr(mt)
    yd, yt = m(a, p, n), mt(ta, tp, tn)
    np.testing.assert_allclose(yd.item(), yt.item(), rtol=1e-12)
    yd.backward()
    yt.backward()
    for d, t in ((a, ta), (p, tp), (n, tn)):
        np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), atol=1e-10)
    l1 = F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda x, y: (x - y).abs().sum(-1), reduction="none")
    l1t = TF.triplet_margin_with_distance_loss(
        ta, tp, tn, distance_function=lambda x, y: (x - y).abs().sum(-1), reduction="none")
    np.testing.assert_allclose(l1.detach().numpy(), l1t.detach().numpy(), atol=1e-12)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_with_distance_loss(a, p[0], n)
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_with_distance_loss(a, p, n, margin=0)
