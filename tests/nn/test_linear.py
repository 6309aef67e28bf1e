"""Identity, Linear, Bilinear, Flatten, Unflatten and functional linear/bilinear vs PyTorch 2.13."""
import math

import numpy as np
import pytest

import dynagrad as dg
from dynagrad import nn
from dynagrad.nn.functional.linear import bilinear, linear

torch = pytest.importorskip("torch")

# the registered ops these tests cover (tests/test_registry.py)
TESTED_OPS = {"linear"}

tnn = torch.nn

RNG = np.random.default_rng(7)


def _pair(ours, theirs):
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})


def _check_grads(ours, theirs, rtol=1e-5, atol=1e-6):
    for (n, p), (n2, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == n2
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 3), (3,)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(shape, bias):
    ours, theirs = nn.Linear(3, 4, bias=bias), tnn.Linear(3, 4, bias=bias)
    _pair(ours, theirs)
    x = RNG.standard_normal(shape).astype(np.float32)
    xo, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    assert tuple(yo.shape) == tuple(yt.shape)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = RNG.standard_normal(tuple(yt.shape)).astype(np.float32)
    yo.backward(dg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
    _check_grads(ours, theirs)


def test_linear_non_contiguous_input_and_float64():
    ours, theirs = nn.Linear(3, 2).double(), tnn.Linear(3, 2).double()
    _pair(ours, theirs)
    x = RNG.standard_normal((3, 4))
    xo = dg.tensor(x, dtype=dg.float64, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo.T), theirs(xt.T)  # a transposed view
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    (yo * yo).sum().backward()
    (yt * yt).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    _check_grads(ours, theirs, rtol=1e-12, atol=1e-12)


def test_linear_gradcheck_and_double_backward():
    x = dg.randn(2, 3, 3, dtype=dg.float64, requires_grad=True)
    w = dg.randn(4, 3, dtype=dg.float64, requires_grad=True)
    b = dg.randn(4, dtype=dg.float64, requires_grad=True)
    assert dg.autograd.gradcheck(lambda x, w, b: linear(x, w, b), (x, w, b))
    assert dg.autograd.gradcheck(lambda x, w: linear(x, w), (x, w))
    # second order: d/dw of sum(grad_x^2), compared with torch
    xt, wt, bt = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (x, w, b))
    (gx,) = dg.autograd.grad(linear(x, w, b).pow(3).sum(), (x,), create_graph=True)
    (gxt,) = torch.autograd.grad(torch.nn.functional.linear(xt, wt, bt).pow(3).sum(), (xt,),
                                 create_graph=True)
    (gx * gx).sum().backward()
    (gxt * gxt).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(b.grad.numpy(), bt.grad.numpy(), rtol=1e-10)


def test_linear_only_some_inputs_need_grad():
    w = nn.Parameter(dg.randn(2, 3))
    x = dg.randn(4, 3)
    linear(x, w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.tile(x.numpy().sum(0), (2, 1)), rtol=1e-5)
    x.requires_grad_(True)
    w.requires_grad_(False)
    linear(x, w, dg.zeros(2)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.tile(w.detach().numpy().sum(0), (4, 1)),
                               rtol=1e-5)


def test_linear_grad_fn_names():
    x = dg.randn(2, 3, requires_grad=True)
    assert linear(x, dg.ones(4, 3), dg.ones(4)).grad_fn.name() == "AddmmBackward0"
    assert linear(x, dg.ones(4, 3)).grad_fn.name() == "MmBackward0"
    with dg.no_grad():
        assert linear(x, dg.ones(4, 3)).grad_fn is None


def test_linear_rare_forms_compose():
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    w1 = RNG.standard_normal(3).astype(np.float32)
    out = linear(dg.tensor(x), dg.tensor(w1))  # 1-D weight: a matrix-vector product
    ref = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w1))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5)
    w = RNG.standard_normal((4, 3)).astype(np.float32)
    b = RNG.standard_normal((2, 4)).astype(np.float32)  # a bias that broadcasts like the output
    xo = dg.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    out = linear(xo, dg.tensor(w), dg.tensor(b))
    ref = torch.nn.functional.linear(xt, torch.tensor(w), torch.tensor(b))
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-5)
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-5)


def test_linear_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(5x3 and 4x2\)"):
        linear(dg.ones(5, 3), dg.ones(2, 4))
    with pytest.raises(RuntimeError, match="same dtype"):
        linear(dg.ones(5, 3), dg.ones(2, 3, dtype=dg.float64))
    with pytest.raises(TypeError, match="argument 'weight' must be Tensor"):
        linear(dg.ones(5, 3), [[1.0]])


def test_linear_default_init_statistics():
    fan_in = 200
    m = nn.Linear(fan_in, 300)
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform(a=sqrt(5)) gives the same bound
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound
    assert abs(w.mean()) < 0.02 * bound
    assert np.abs(b).max() > 0.8 * bound  # spread over the whole interval
    assert m.weight.dtype is dg.float32
    assert nn.Linear(2, 2, dtype=dg.float64).weight.dtype is dg.float64
    assert nn.Linear(2, 2, device="cpu").weight.device == dg.device("cpu")  # cuda: tests/cuda


def test_linear_repr_and_no_bias():
    for args in ((3, 4), (3, 4, False)):
        assert repr(nn.Linear(*args)) == repr(tnn.Linear(*args))
    m = nn.Linear(3, 4, bias=False)
    assert m.bias is None and [n for n, _ in m.named_parameters()] == ["weight"]
    assert list(m.state_dict()) == ["weight"]


# --- Bilinear -----------------------------------------------------------------------------

@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_matches_torch(bias):
    ours, theirs = nn.Bilinear(3, 2, 4, bias=bias), tnn.Bilinear(3, 2, 4, bias=bias)
    _pair(ours, theirs)
    a = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    c = RNG.standard_normal((2, 5, 2)).astype(np.float32)
    ao, co = dg.tensor(a, requires_grad=True), dg.tensor(c, requires_grad=True)
    at, ct = torch.tensor(a, requires_grad=True), torch.tensor(c, requires_grad=True)
    yo, yt = ours(ao, co), theirs(at, ct)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    yo.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(ao.grad.numpy(), at.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(co.grad.numpy(), ct.grad.numpy(), rtol=1e-5, atol=1e-5)
    _check_grads(ours, theirs, atol=1e-5)
    assert repr(ours) == repr(theirs)


def test_bilinear_gradcheck_init_and_errors():
    a = dg.randn(3, 2, dtype=dg.float64, requires_grad=True)
    c = dg.randn(3, 4, dtype=dg.float64, requires_grad=True)
    w = dg.randn(5, 2, 4, dtype=dg.float64, requires_grad=True)
    b = dg.randn(5, dtype=dg.float64, requires_grad=True)
    assert dg.autograd.gradcheck(bilinear, (a, c, w, b))
    m = nn.Bilinear(100, 4, 50)
    bound = 1 / math.sqrt(100)
    wd = m.weight.detach().numpy()
    assert np.abs(wd).max() <= bound and abs(wd.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound
    with pytest.raises(RuntimeError, match="input batch dimensions do not match"):
        bilinear(dg.ones(3, 2), dg.ones(4, 4), dg.ones(5, 2, 4))
    with pytest.raises(RuntimeError, match="expected weight of shape"):
        bilinear(dg.ones(3, 2), dg.ones(3, 4), dg.ones(5, 4, 2))


# --- Identity / Flatten / Unflatten -------------------------------------------------------

def test_identity():
    x = dg.ones(2)
    m = nn.Identity(54, unused="x")
    assert m(x) is x and repr(m) == "Identity()"


@pytest.mark.parametrize("args", [(), (0,), (1, 2), (-3, -2)])
def test_flatten_matches_torch(args):
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    ours, theirs = nn.Flatten(*args), tnn.Flatten(*args)
    np.testing.assert_array_equal(ours(dg.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy())
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("dim,size", [(1, (3, 4)), (-1, [2, -1]), (0, (2, 1))])
def test_unflatten_matches_torch(dim, size):
    x = RNG.standard_normal((2, 12)).astype(np.float32)
    ours, theirs = nn.Unflatten(dim, size), tnn.Unflatten(dim, size)
    xo = dg.tensor(x, requires_grad=True)
    yo = ours(xo)
    yt = theirs(torch.tensor(x))
    np.testing.assert_array_equal(yo.detach().numpy(), yt.numpy())
    yo.sum().backward()
    assert xo.grad.tolist() == np.ones((2, 12)).tolist()
    assert repr(ours) == repr(theirs)
    with pytest.raises(TypeError, match="unflattened_size must be tuple of ints"):
        nn.Unflatten(1, 3)
