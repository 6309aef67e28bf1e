"""nn.utils fusion (fuse_conv_bn_*, fuse_linear_bn_*), skip_init, clip_grad_norm and
stateless.functional_call vs PyTorch 2.13."""
import warnings

import numpy as np
import pytest

import dynagrad as dg
from dynagrad import nn

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(3)


def _np(t):
    return t.detach().numpy()


def _close(a, b, rtol=1e-5, atol=1e-6):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _load(theirs, ours):
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})


def _bn_pair(kind, n, affine=True):
    ours = getattr(nn, kind)(n, affine=affine)
    with dg.no_grad():  # non-trivial statistics and affine parameters
        ours.running_mean.copy_(dg.tensor(RNG.standard_normal(n).astype(np.float32)))
        ours.running_var.copy_(dg.tensor(RNG.uniform(0.5, 2, n).astype(np.float32)))
        if affine:
            ours.weight.copy_(dg.tensor(RNG.standard_normal(n).astype(np.float32)))
            ours.bias.copy_(dg.tensor(RNG.standard_normal(n).astype(np.float32)))
    theirs = getattr(torch.nn, kind)(n, affine=affine)
    _load(theirs, ours)
    return ours.eval(), theirs.eval()


@pytest.mark.parametrize("conv,bn,x_shape,transpose,bias,affine", [
    ("Conv2d", "BatchNorm2d", (1, 2, 4, 4), False, True, True),
    ("Conv1d", "BatchNorm1d", (2, 2, 5), False, False, False),
    ("ConvTranspose2d", "BatchNorm2d", (1, 2, 3, 3), True, True, True),
])
def test_fuse_conv_bn_eval(conv, bn, x_shape, transpose, bias, affine):
    c_o = getattr(nn, conv)(2, 3, 2, bias=bias).eval()
    c_t = getattr(torch.nn, conv)(2, 3, 2, bias=bias).eval()
    _load(c_t, c_o)
    b_o, b_t = _bn_pair(bn, 3, affine)
    f_o = nn.utils.fuse_conv_bn_eval(c_o, b_o, transpose)
    f_t = torch.nn.utils.fuse_conv_bn_eval(c_t, b_t, transpose)
    assert f_o is not c_o and type(f_o) is type(c_o)
    assert isinstance(f_o.weight, nn.Parameter) and isinstance(f_o.bias, nn.Parameter)
    _close(f_o.weight, f_t.weight)
    _close(f_o.bias, f_t.bias)
    x = RNG.standard_normal(x_shape).astype(np.float32)
    _close(f_o(dg.tensor(x)), b_o(c_o(dg.tensor(x))), atol=1e-5)
    w, b = nn.utils.fuse_conv_bn_weights(c_o.weight, c_o.bias, b_o.running_mean,
                                         b_o.running_var, b_o.eps, b_o.weight, b_o.bias,
                                         transpose)
    _close(w, f_t.weight)
    _close(b, f_t.bias)


def test_fuse_linear_bn_eval_and_errors():
    l_o, l_t = nn.Linear(3, 4).eval(), torch.nn.Linear(3, 4).eval()
    _load(l_t, l_o)
    b_o, b_t = _bn_pair("BatchNorm1d", 4)
    f_o = nn.utils.fuse_linear_bn_eval(l_o, b_o)
    f_t = torch.nn.utils.fuse_linear_bn_eval(l_t, b_t)
    _close(f_o.weight, f_t.weight)
    _close(f_o.bias, f_t.bias)
    w, b = nn.utils.fuse_linear_bn_weights(l_o.weight, None, b_o.running_mean, b_o.running_var,
                                           b_o.eps, b_o.weight, b_o.bias)
    wt, bt = torch.nn.utils.fuse_linear_bn_weights(l_t.weight, None, b_t.running_mean,
                                                   b_t.running_var, b_t.eps, b_t.weight,
                                                   b_t.bias)
    _close(w, wt)
    _close(b, bt)
    assert w.requires_grad == wt.requires_grad
    assert b.requires_grad == bt.requires_grad
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_linear_bn_eval(l_o.train(), b_o)
    with pytest.raises(AssertionError, match="To fuse, linear.out_features == bn.num_features"):
        nn.utils.fuse_linear_bn_eval(l_o.eval(), _bn_pair("BatchNorm1d", 3)[0])
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(nn.Conv1d(2, 3, 1), b_o)


def test_skip_init():
    m = nn.utils.skip_init(nn.Linear, 5, 1, bias=False)
    assert type(m) is nn.Linear and tuple(m.weight.shape) == (1, 5) and m.bias is None
    assert m.weight.device.type == "cpu"

    class NoDevice(nn.Module):
        def __init__(self):
            super().__init__()

    for bad, msg in ((NoDevice, "Module must support a 'device' arg to skip initialization"),
                     (int, "Expected a Module; got <class 'int'>")):
        with pytest.raises(RuntimeError) as et:
            torch.nn.utils.skip_init(torch.nn.Module if bad is NoDevice else int)
        with pytest.raises(RuntimeError, match=msg):
            nn.utils.skip_init(bad)
        assert str(et.value) == msg


def test_clip_grad_norm_deprecated_alias():
    g = RNG.standard_normal(5).astype(np.float32)
    po, pt = nn.Parameter(dg.zeros(5)), torch.nn.Parameter(torch.zeros(5))
    po.grad, pt.grad = dg.tensor(g), torch.tensor(g)
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        no = nn.utils.clip_grad_norm([po], 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        nt = torch.nn.utils.clip_grad_norm([pt], 0.5)
    _close(no, nt)
    _close(po.grad, pt.grad)


def test_stateless_functional_call():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.bn = nn.BatchNorm1d(2)

        def forward(self, x, scale=1.0):
            return self.bn(self.fc(x)) * scale

    ours = Net()
    new_w = RNG.standard_normal((2, 3)).astype(np.float32)
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    w = dg.tensor(new_w, requires_grad=True)
    before = _np(ours.fc.weight).copy()
    with pytest.warns(FutureWarning, match="deprecated"):
        out = nn.utils.stateless.functional_call(ours, {"fc.weight": w}, (dg.tensor(x),),
                                                 {"scale": 2.0})
    ref = torch.nn.functional.batch_norm(
        torch.nn.functional.linear(torch.tensor(x), torch.tensor(new_w),
                                   torch.tensor(_np(ours.fc.bias))),
        None, None, training=True) * 2.0
    _close(out, ref, atol=1e-5)
    out.sum().backward()
    assert w.grad is not None and ours.fc.weight.grad is None
    np.testing.assert_array_equal(_np(ours.fc.weight), before)  # restored
    assert isinstance(ours.fc.weight, nn.Parameter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(RuntimeError, match="Missing key"):
            nn.utils.stateless.functional_call(ours, {"fc.weight": w}, dg.tensor(x), strict=True)
        # tied weights: one value replaces every tied name
        tied = nn.Sequential(nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False))
        tied[1].weight = tied[0].weight
        eye = dg.eye(2)
        y = nn.utils.stateless.functional_call(tied, {"0.weight": eye}, dg.tensor([[1.0, 2.0]]))
        assert y.tolist() == [[1.0, 2.0]]
        y = nn.utils.stateless.functional_call(tied, {"0.weight": eye}, dg.tensor([[1.0, 2.0]]),
                                               tie_weights=False)
        assert y.tolist() != [[1.0, 2.0]]
        with pytest.raises(ValueError, match="which are tied"):
            nn.utils.stateless.functional_call(tied, {"0.weight": eye, "1.weight": 2 * eye},
                                               dg.tensor([[1.0, 2.0]]))
