"""Normalisation (batch, layer, group, instance, RMS) against PyTorch 2.13: outputs, gradients of
input/weight/bias, running statistics over several steps, eval mode, gradcheck, errors, reprs."""
import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn.functional as F
from dynagrad import nn

torch = pytest.importorskip("torch")

# the registered ops these tests cover (tests/test_registry.py)
TESTED_OPS = {"batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm"}

tnn = torch.nn
TF = torch.nn.functional

RTOL, ATOL = 1e-4, 1e-5


def _rng(seed=0):
    return np.random.default_rng(seed)


def _pair(arr, grad=True):
    return dg.tensor(arr, requires_grad=grad), torch.tensor(arr, requires_grad=grad)


def _close(ours, theirs, rtol=RTOL, atol=ATOL):
    a = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    np.testing.assert_allclose(a, theirs.detach().numpy(), rtol=rtol, atol=atol)


def _copy_state(ours, theirs):
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})


def _randomize_affine(module, seed=1):
    rng = _rng(seed)
    with dg.no_grad():
        for p in module.parameters():
            p.copy_(dg.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))


# --- functional batch norm ----------------------------------------------------------------

@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (3, 2, 4, 5)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training_matches_torch(shape, affine):
    rng = _rng()
    x = (rng.standard_normal(shape) * 3 + 1.5).astype(np.float32)
    C = shape[1]
    xo, xt = _pair(x)
    w = rng.standard_normal(C).astype(np.float32)
    b = rng.standard_normal(C).astype(np.float32)
    wo, wt = _pair(w) if affine else (None, None)
    bo, bt = _pair(b) if affine else (None, None)
    rmo, rmt = dg.zeros(C), torch.zeros(C)
    rvo, rvt = dg.ones(C), torch.ones(C)
    yo = F.batch_norm(xo, rmo, rvo, wo, bo, training=True, momentum=0.3, eps=1e-3)
    yt = TF.batch_norm(xt, rmt, rvt, wt, bt, training=True, momentum=0.3, eps=1e-3)
    _close(yo, yt)
    _close(rmo, rmt)
    _close(rvo, rvt)
    g = rng.standard_normal(shape).astype(np.float32)
    yo.backward(dg.tensor(g))
    yt.backward(torch.tensor(g))
    _close(xo.grad, xt.grad)
    if affine:
        _close(wo.grad, wt.grad)
        _close(bo.grad, bt.grad)


def test_batch_norm_eval_uses_running_stats():
    rng = _rng(2)
    x = rng.standard_normal((4, 3, 2, 2)).astype(np.float32)
    rm = rng.standard_normal(3).astype(np.float32)
    rv = rng.uniform(0.5, 2.0, 3).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)
    xo, xt = _pair(x)
    wo, wt = _pair(w)
    bo, bt = _pair(np.zeros(3, np.float32) + 0.5)
    rmo, rvo = dg.tensor(rm), dg.tensor(rv)
    yo = F.batch_norm(xo, rmo, rvo, wo, bo, training=False)
    yt = TF.batch_norm(xt, torch.tensor(rm), torch.tensor(rv), wt, bt, training=False)
    _close(yo, yt)
    # the statistics are constants in eval: the input gradient is a plain scale
    yo.sum().backward()
    yt.sum().backward()
    for ours, theirs in ((xo, xt), (wo, wt), (bo, bt)):
        _close(ours.grad, theirs.grad)
    np.testing.assert_array_equal(rmo.numpy(), rm)  # eval never updates the buffers
    np.testing.assert_array_equal(rvo.numpy(), rv)


def test_batch_norm_without_running_stats_and_float64():
    x = _rng(3).standard_normal((5, 2, 3))
    xo, xt = _pair(x)
    yo = F.batch_norm(xo, None, None, training=True)
    yt = TF.batch_norm(xt, None, None, training=True)
    assert yo.dtype is dg.float64
    _close(yo, yt, rtol=1e-10, atol=1e-12)
    (yo * yo * yo).sum().backward()
    (yt * yt * yt).sum().backward()
    _close(xo.grad, xt.grad, rtol=1e-9, atol=1e-10)


def test_batch_norm_non_contiguous_input():
    x = _rng(4).standard_normal((3, 5, 4, 2)).astype(np.float32)
    xo, xt = _pair(x)
    yo = F.batch_norm(xo.permute(0, 3, 2, 1), None, None, training=True)
    yt = TF.batch_norm(xt.permute(0, 3, 2, 1), None, None, training=True)
    _close(yo, yt)
    yo.pow(2).sum().backward()
    yt.pow(2).sum().backward()
    _close(xo.grad, xt.grad)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradcheck(training):
    rng = _rng(5)
    x = dg.tensor(rng.standard_normal((3, 2, 4)), requires_grad=True)
    w = dg.tensor(rng.standard_normal(2), requires_grad=True)
    b = dg.tensor(rng.standard_normal(2), requires_grad=True)
    rm = dg.tensor(rng.standard_normal(2))
    rv = dg.tensor(rng.uniform(0.5, 2, 2))
    # fresh copies of the buffers per call: training mode updates them in place
    assert dg.autograd.gradcheck(
        lambda x, w, b: F.batch_norm(x, rm.clone(), rv.clone(), w, b, training), (x, w, b))


def test_batch_norm_double_backward_composes_ops():
    rng = _rng(6)
    x = dg.tensor(rng.standard_normal((4, 2, 3)), requires_grad=True)
    w = dg.tensor(rng.standard_normal(2), requires_grad=True)
    b = dg.tensor(rng.standard_normal(2), requires_grad=True)
    assert dg.autograd.gradgradcheck(
        lambda x, w, b: F.batch_norm(x, None, None, w, b, True), (x, w, b))


# --- BatchNorm modules --------------------------------------------------------------------

@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (8, 4)), ("BatchNorm1d", (6, 4, 3)),
                                       ("BatchNorm2d", (5, 4, 3, 3))])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_module_several_steps_then_eval(cls, shape, momentum):
    ours = getattr(nn, cls)(4, momentum=momentum)
    theirs = getattr(tnn, cls)(4, momentum=momentum)
    _randomize_affine(ours)
    _copy_state(ours, theirs)
    rng = _rng(7)
    for step in range(4):
        x = (rng.standard_normal(shape) * (step + 1) + step).astype(np.float32)
        xo, xt = _pair(x)
        yo, yt = ours(xo), theirs(xt)
        _close(yo, yt)
        (yo * yo).sum().backward()
        (yt * yt).sum().backward()
        _close(xo.grad, xt.grad, rtol=1e-4, atol=1e-4)
    _close(ours.weight.grad, theirs.weight.grad, rtol=1e-4, atol=1e-3)
    _close(ours.bias.grad, theirs.bias.grad, rtol=1e-4, atol=1e-3)
    _close(ours.running_mean, theirs.running_mean)
    _close(ours.running_var, theirs.running_var)
    assert int(ours.num_batches_tracked) == int(theirs.num_batches_tracked) == 4
    ours.eval()
    theirs.eval()
    x = rng.standard_normal(shape).astype(np.float32)
    _close(ours(dg.tensor(x)), theirs(torch.tensor(x)))
    before = ours.running_mean.numpy().copy()
    ours(dg.tensor(x))
    np.testing.assert_array_equal(ours.running_mean.numpy(), before)


def test_batchnorm_without_tracking_uses_batch_stats_in_eval():
    ours, theirs = nn.BatchNorm2d(3, track_running_stats=False), tnn.BatchNorm2d(
        3, track_running_stats=False)
    assert ours.running_mean is None and ours.num_batches_tracked is None
    assert list(ours.state_dict()) == ["weight", "bias"]
    ours.eval()
    theirs.eval()
    x = _rng(8).standard_normal((4, 3, 2, 2)).astype(np.float32)
    _close(ours(dg.tensor(x)), theirs(torch.tensor(x)))


def test_batchnorm_affine_false_and_no_bias():
    m = nn.BatchNorm2d(3, affine=False)
    assert m.weight is None and m.bias is None and len(list(m.parameters())) == 0
    nb = nn.BatchNorm1d(3, bias=False)
    assert nb.bias is None and nb.weight is not None
    x = _rng(9).standard_normal((4, 3)).astype(np.float32)
    tb = tnn.BatchNorm1d(3, bias=False)
    _copy_state(nb, tb)
    _close(nb(dg.tensor(x)), tb(torch.tensor(x)))


def test_batchnorm_defaults_and_state_dict_from_torch():
    m = nn.BatchNorm2d(6)
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.ones(6))
    np.testing.assert_array_equal(m.bias.detach().numpy(), np.zeros(6))
    np.testing.assert_array_equal(m.running_var.numpy(), np.ones(6))
    assert m.num_batches_tracked.dtype is dg.int64
    t = tnn.BatchNorm2d(6)
    t(torch.randn(4, 6, 2, 2))
    m.load_state_dict({k: dg.tensor(v.numpy()) for k, v in t.state_dict().items()})
    _close(m.running_mean, t.running_mean)
    assert int(m.num_batches_tracked) == 1
    # a checkpoint without the counter (old format) still loads
    m.load_state_dict({k: dg.tensor(v.numpy()) for k, v in t.state_dict().items()
                       if k != "num_batches_tracked"})
    assert int(m.num_batches_tracked) == 0


def test_batchnorm_reprs_match_torch():
    for args, kw in (((6,), {}), ((3,), {"momentum": None, "affine": False}),
                     ((2,), {"eps": 1e-3, "track_running_stats": False, "bias": False})):
        for name in ("BatchNorm1d", "BatchNorm2d"):
            assert repr(getattr(nn, name)(*args, **kw)) == repr(getattr(tnn, name)(*args, **kw))


def test_batchnorm_errors():
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(dg.randn(2, 3, 4))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(dg.randn(2, 3, 4, 4))
    with pytest.raises(ValueError, match=r"more than 1 value per channel when training, got "
                                         r"input size \[1, 3\]"):
        nn.BatchNorm1d(3)(dg.randn(1, 3))
    with pytest.raises(RuntimeError, match=r"running_mean should contain 4 elements not 3"):
        F.batch_norm(dg.randn(2, 4), dg.zeros(3), dg.ones(4), training=True)
    with pytest.raises(RuntimeError, match=r"weight should contain 2 elements not 5"):
        F.batch_norm(dg.randn(3, 2), None, None, dg.ones(5), training=True)
    with pytest.raises(RuntimeError, match="must be defined in evaluation mode"):
        F.batch_norm(dg.randn(3, 2), None, None, training=False)
    with pytest.raises(RuntimeError, match="floating point"):
        F.batch_norm(dg.ones(3, 2, dtype=dg.int64), None, None, training=True)


# --- layer norm ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape,ns", [((4, 6), (6,)), ((2, 3, 4, 5), (4, 5)), ((7,), 7),
                                      ((3, 200, 300), (300,))])  # rows split among threads
@pytest.mark.parametrize("affine,bias", [(True, True), (True, False), (False, False)])
def test_layer_norm_module_matches_torch(shape, ns, affine, bias):
    ours = nn.LayerNorm(ns, eps=1e-4, elementwise_affine=affine, bias=bias)
    theirs = tnn.LayerNorm(ns, eps=1e-4, elementwise_affine=affine, bias=bias)
    _randomize_affine(ours, 11)
    _copy_state(ours, theirs)
    assert repr(ours) == repr(theirs)
    rng = _rng(12)
    x = (rng.standard_normal(shape) * 2 + 3).astype(np.float32)
    xo, xt = _pair(x)
    yo, yt = ours(xo), theirs(xt)
    _close(yo, yt)
    g = rng.standard_normal(shape).astype(np.float32)
    yo.backward(dg.tensor(g))
    yt.backward(torch.tensor(g))
    _close(xo.grad, xt.grad)
    for (n, p), (n2, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == n2
        _close(p.grad, q.grad)


def test_layer_norm_gradcheck_and_double_backward():
    rng = _rng(13)
    x = dg.tensor(rng.standard_normal((3, 2, 4)), requires_grad=True)
    w = dg.tensor(rng.standard_normal((2, 4)), requires_grad=True)
    b = dg.tensor(rng.standard_normal((2, 4)), requires_grad=True)
    fn = lambda x, w, b: F.layer_norm(x, (2, 4), w, b)  # noqa: E731
    assert dg.autograd.gradcheck(fn, (x, w, b))
    assert dg.autograd.gradgradcheck(fn, (x, w, b))


def test_layer_norm_double_backward_matches_torch():
    x = _rng(14).standard_normal((3, 5))
    xo, xt = _pair(x)
    (go,) = dg.autograd.grad(F.layer_norm(xo, (5,)).pow(3).sum(), xo, create_graph=True)
    (gt,) = torch.autograd.grad(TF.layer_norm(xt, (5,)).pow(3).sum(), xt, create_graph=True)
    _close(go, gt, rtol=1e-9, atol=1e-10)
    go.pow(2).sum().backward()
    gt.pow(2).sum().backward()
    _close(xo.grad, xt.grad, rtol=1e-8, atol=1e-9)


def test_layer_norm_errors():
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with "
                                           r"shape \[\*, 4\], but got input of size \[2, 3\]"):
        F.layer_norm(dg.randn(2, 3), [4])
    with pytest.raises(RuntimeError, match=r"Expected weight to be of same shape as "
                                           r"normalized_shape"):
        F.layer_norm(dg.randn(2, 3), [3], dg.ones(4))
    with pytest.raises(RuntimeError, match="floating point"):
        F.layer_norm(dg.ones(2, 3, dtype=dg.int64), [3])


# --- group / instance / rms ---------------------------------------------------------------

@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 4, 2, 3), 2), ((2, 4), 4),
                                          ((15, 32, 24, 24), 4)])  # threaded, 30-row slices
def test_group_norm_matches_torch(shape, groups):
    ours, theirs = nn.GroupNorm(groups, shape[1]), tnn.GroupNorm(groups, shape[1])
    _randomize_affine(ours, 15)
    _copy_state(ours, theirs)
    assert repr(ours) == repr(theirs)
    x = (_rng(16).standard_normal(shape) + 2).astype(np.float32)
    xo, xt = _pair(x)
    yo, yt = ours(xo), theirs(xt)
    _close(yo, yt)
    (yo * yo).sum().backward()
    (yt * yt).sum().backward()
    _close(xo.grad, xt.grad, atol=1e-4)
    _close(ours.weight.grad, theirs.weight.grad, atol=1e-4)
    _close(ours.bias.grad, theirs.bias.grad, atol=1e-4)


def test_group_norm_gradcheck_and_errors():
    rng = _rng(17)
    x = dg.tensor(rng.standard_normal((2, 4, 3)), requires_grad=True)
    w = dg.tensor(rng.standard_normal(4), requires_grad=True)
    b = dg.tensor(rng.standard_normal(4), requires_grad=True)
    assert dg.autograd.gradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), (x, w, b))
    assert dg.autograd.gradcheck(lambda x, w: F.group_norm(x, 2, w), (x, w))
    assert dg.autograd.gradcheck(lambda x, b: F.group_norm(x, 2, None, b), (x, b))
    # one fused node; its double backward composes ops over (sample, group, channel, position)
    node = F.group_norm(x, 2, w, b).grad_fn.next_functions[0][0]  # (under the reshape back)
    assert type(node).__name__ == "NativeGroupNormBackward0"
    assert dg.autograd.gradgradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), (x, w, b))
    with pytest.raises(RuntimeError, match=r"divisible by num_groups, but got input of shape "
                                           r"\[2, 6, 4\] and num_groups=4"):
        F.group_norm(dg.randn(2, 6, 4), 4)
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(4, 6)


@pytest.mark.parametrize("affine,track", [(False, False), (True, True)])
def test_instance_norm_module_matches_torch(affine, track):
    ours = nn.InstanceNorm2d(3, affine=affine, track_running_stats=track, momentum=0.2)
    theirs = tnn.InstanceNorm2d(3, affine=affine, track_running_stats=track, momentum=0.2)
    _randomize_affine(ours, 18)
    _copy_state(ours, theirs)
    assert repr(ours) == repr(theirs)
    rng = _rng(19)
    for _ in range(3):
        x = (rng.standard_normal((2, 3, 4, 5)) * 2 + 1).astype(np.float32)
        xo, xt = _pair(x)
        yo, yt = ours(xo), theirs(xt)
        _close(yo, yt)
        (yo * yo.detach()).sum().backward()
        (yt * yt.detach()).sum().backward()
        _close(xo.grad, xt.grad)
    if track:
        _close(ours.running_mean, theirs.running_mean)
        _close(ours.running_var, theirs.running_var)
        _close(ours.weight.grad, theirs.weight.grad, atol=1e-4)
        ours.eval()
        theirs.eval()
        x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
        _close(ours(dg.tensor(x)), theirs(torch.tensor(x)))
    # unbatched (C, H, W) input
    x = rng.standard_normal((3, 4, 4)).astype(np.float32)
    _close(ours(dg.tensor(x)), theirs(torch.tensor(x)))


def test_instance_norm_gradcheck_and_errors():
    rng = _rng(20)
    x = dg.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    w = dg.tensor(rng.standard_normal(3), requires_grad=True)
    assert dg.autograd.gradcheck(lambda x, w: F.instance_norm(x, weight=w), (x, w))
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.InstanceNorm2d(3)(dg.randn(3, 4))


@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm_matches_torch(eps):
    ours, theirs = nn.RMSNorm([3, 4], eps=eps), tnn.RMSNorm([3, 4], eps=eps)
    _randomize_affine(ours, 21)
    _copy_state(ours, theirs)
    assert repr(ours) == repr(theirs)
    x = _rng(22).standard_normal((2, 3, 4)).astype(np.float32)
    xo, xt = _pair(x)
    yo, yt = ours(xo), theirs(xt)
    _close(yo, yt)
    yo.pow(2).sum().backward()
    yt.pow(2).sum().backward()
    _close(xo.grad, xt.grad)
    _close(ours.weight.grad, theirs.weight.grad)


def test_rms_norm_gradcheck():
    rng = _rng(23)
    x = dg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = dg.tensor(rng.standard_normal(4), requires_grad=True)
    assert dg.autograd.gradcheck(lambda x, w: F.rms_norm(x, (4,), w, 1e-6), (x, w))
