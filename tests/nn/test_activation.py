"""Activations: the records of tests/opinfos/nn.py (values and input gradients against torch in
float64 and float32, gradcheck / gradgradcheck), then float32 accuracy over the whole range, fused
nodes, in-place variants, modules (extra_repr and parity), softmax family edge cases and errors."""
import warnings

import numpy as np
import pytest

import dynagrad as dg
import dynagrad.nn as nn
import dynagrad.nn.functional as F
from dynagrad.kernels.cpu.backend import PARALLEL_MIN_ELEMENTS
from harness import check_op
from opinfo import NN_OPINFOS, params
from opinfos.nn import X

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(1)


@pytest.mark.parametrize("info,dtype", params(NN_OPINFOS.values()))
def test_op(info, dtype):
    check_op(info, "cpu", dtype)


@pytest.mark.parametrize("name,kw", [
    ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}),
    ("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 3.0}), ("elu", {"alpha": 0.7}),
    ("celu", {"alpha": 1.3}), ("logsigmoid", {})], ids=lambda v: str(v))
def test_float32_activations_match_float64_over_their_range(name, kw):
    # the float32 forms (scalarlib's vectorizable exp, expm1, log1p, tanh, sigmoid, one-call
    # gradients) must stay within float32 rounding of PyTorch's float64 result from -30 to 30,
    # and compile without Numba's IR warnings (the threaded kernels from 2^17 elements run the
    # same expression; this size reuses the serial kernels the records compile)
    from numba.core.errors import NumbaIRAssumptionWarning
    x = np.linspace(-30, 30, (1 << 16) + 3)
    g = RNG.standard_normal(x.shape)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        xd = dg.tensor(x.astype(np.float32), requires_grad=True)
        y = getattr(F, name)(xd, **kw)
        y.backward(dg.tensor(g.astype(np.float32)))
    assert not [w for w in caught if issubclass(w.category, NumbaIRAssumptionWarning)]
    xt = torch.tensor(x, requires_grad=True)
    yt = getattr(TF, name)(xt, **kw)
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    # the tanh form's gradient subtracts two terms of ~1e-3 in its tails: float32 keeps ~1e-6 of
    # it (PyTorch's float32 kernel as well), times the incoming gradient
    gatol = 1e-5 if kw.get("approximate") == "tanh" else 1e-6
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=gatol)


def test_relu_gradient_at_zero_and_nan_matches_torch():
    # one fused kernel, PyTorch's threshold_backward rule: zero gradient where the output is
    # <= 0, the incoming gradient elsewhere (a NaN output passes it on)
    x = np.array([-1.0, 0.0, 2.0, np.nan, 3.0])
    xd, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (F.relu(xd) * 2.0).sum().backward()
    (TF.relu(xt) * 2.0).sum().backward()
    np.testing.assert_array_equal(xd.grad.numpy(), xt.grad.numpy())


def test_fused_nodes_are_single_kernels():
    x = dg.randn(4, 3, requires_grad=True)
    assert type(F.gelu(x).grad_fn).__name__ == "GeluBackward0"
    assert type(F.softmax(x, -1).grad_fn).__name__ == "SoftmaxBackward0"
    assert type(F.log_softmax(x, -1).grad_fn).__name__ == "LogSoftmaxBackward0"
    y = F.silu(x)
    (g,) = dg.autograd.grad(y.sum(), x, create_graph=True)
    assert type(g.grad_fn).__name__ == "SiluBackwardBackward0"


@pytest.mark.parametrize("name,kw", [("relu", {}), ("relu6", {}), ("leaky_relu", {}),
                                     ("elu", {}), ("selu", {}), ("celu", {}), ("silu", {}),
                                     ("mish", {}), ("hardtanh", {}), ("hardsigmoid", {}),
                                     ("hardswish", {}),
                                     ("threshold", {"threshold": 0.5, "value": 9.0})])
def test_inplace(name, kw):
    ref = getattr(TF, name)(torch.tensor(X), **kw).numpy()
    x = dg.tensor(X.copy())
    out = getattr(F, name)(x, inplace=True, **kw)
    assert out is x
    np.testing.assert_allclose(x.numpy(), ref, rtol=1e-12)
    # on a non-leaf inside a graph: gradient flows as through the out-of-place op
    a = dg.tensor(X, requires_grad=True)
    b = a * 1.0
    getattr(F, name)(b, inplace=True, **kw).sum().backward()
    at = torch.tensor(X, requires_grad=True)
    getattr(TF, name)(at * 1.0, **kw).sum().backward()
    # (torch's hardsigmoid gradient uses a float32 1/6, see tests/opinfos/nn.py)
    np.testing.assert_allclose(a.grad.numpy(), at.grad.numpy(), rtol=1e-6)


def test_inplace_on_leaf_requiring_grad_raises():
    with pytest.raises(RuntimeError, match="leaf Variable"):
        F.elu(dg.randn(3, requires_grad=True), inplace=True)
    assert F.relu_ is not None and F.leaky_relu_(dg.tensor([-1.0]), 0.5).tolist() == [-0.5]


def test_prelu_matches_torch_with_weight_grad():
    x = RNG.standard_normal((2, 3, 4))
    w = np.array([0.1, 0.2, 0.3])
    xd, wd = dg.tensor(x, requires_grad=True), dg.tensor(w, requires_grad=True)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    F.prelu(xd, wd).sum().backward()
    TF.prelu(xt, wt).sum().backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy())
    np.testing.assert_allclose(wd.grad.numpy(), wt.grad.numpy())
    with pytest.raises(RuntimeError, match="parameter count"):
        F.prelu(xd, dg.ones(4))


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_family_keeps_float16_like_torch(name):
    # half input (or dtype=float16) computes in float32 and returns float16, as torch; the
    # gradient reaches the input in float16
    a = np.random.default_rng(2).standard_normal((3, 5)).astype(np.float16)
    x, tx = dg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ours, theirs = getattr(F, name)(x, dim=-1), getattr(TF, name)(tx, dim=-1)
    assert ours.dtype is dg.float16 and theirs.dtype is torch.float16
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=2e-3)
    (ours * dg.tensor(a)).sum().backward()
    (theirs * torch.tensor(a)).sum().backward()
    assert x.grad.dtype is dg.float16
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=2e-3)
    a32 = dg.tensor(a.astype(np.float32))
    assert getattr(F, name)(a32, dim=-1, dtype=dg.float16).dtype is dg.float16
    if name != "softmin":
        assert getattr(dg, name)(dg.tensor(a), -1).dtype is dg.float16


def test_softmax_edge_cases():
    x = np.array([[1.0, -np.inf, 2.0], [-np.inf, -np.inf, 0.0], [np.nan, 1.0, 2.0]], np.float32)
    for fn in ("softmax", "log_softmax"):
        got = getattr(F, fn)(dg.tensor(x), dim=1).numpy()
        want = getattr(TF, fn)(torch.tensor(x), dim=1).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
    # large magnitudes do not overflow; 0-dim and empty inputs
    big = dg.tensor([[1000.0, 1000.0], [-1000.0, 0.0]])
    np.testing.assert_allclose(F.softmax(big, 1).numpy(), [[0.5, 0.5], [0.0, 1.0]])
    assert F.softmax(dg.tensor(3.0), 0).item() == 1.0
    assert tuple(F.log_softmax(dg.zeros(0, 4), 1).shape) == (0, 4)
    # 4-D, middle dim, and the dtype= argument
    x4 = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(F.softmax(dg.tensor(x4), 2, dtype=dg.float64).numpy(),
                               TF.softmax(torch.tensor(x4), 2, dtype=torch.float64).numpy(),
                               rtol=1e-6)


def test_softmax_float32_wide_rows_match_torch():
    x = RNG.standard_normal((16, 1000)).astype(np.float32) * 8
    g = RNG.standard_normal((16, 1000)).astype(np.float32)
    for fn in ("softmax", "log_softmax"):
        xd, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        yd, yt = getattr(F, fn)(xd, -1), getattr(TF, fn)(xt, -1)
        yd.backward(dg.tensor(g))
        yt.backward(torch.tensor(g))
        np.testing.assert_allclose(yd.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_softmax_implicit_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension"):
        y = F.softmax(dg.zeros(2, 3))
    np.testing.assert_allclose(y.numpy(), np.full((2, 3), 1 / 3), rtol=1e-6)


def test_errors():
    with pytest.raises(TypeError, match="floating point"):
        F.gelu(dg.tensor([1, 2]))
    with pytest.raises(TypeError, match="softmax"):
        F.softmax(dg.tensor([1, 2]), 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.softmax(dg.zeros(2, 3), 2)
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(dg.zeros(2, 3))
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(dg.zeros(2), approximate="fast")
    with pytest.raises(ValueError, match="min_val"):
        F.hardtanh(dg.zeros(2), 1.0, -1.0)


MODULES = [
    ("ReLU", (), {}), ("ReLU", (), {"inplace": True}), ("ReLU6", (), {}),
    ("LeakyReLU", (0.2,), {}), ("LeakyReLU", (), {"inplace": True}), ("PReLU", (), {}),
    ("PReLU", (3,), {"init": 0.1}), ("ELU", (0.5,), {}), ("ELU", (), {"inplace": True}),
    ("SELU", (), {}), ("CELU", (), {"alpha": 2.0}), ("GELU", (), {}),
    ("GELU", (), {"approximate": "tanh"}), ("SiLU", (), {}), ("Mish", (), {}), ("Sigmoid", (), {}),
    ("Tanh", (), {}), ("Hardtanh", (-2.0, 3.0), {}), ("Hardsigmoid", (), {}),
    ("Hardswish", (), {}), ("Softplus", (2.0, 10.0), {}), ("Softsign", (), {}),
    ("Softshrink", (0.3,), {}), ("Hardshrink", (), {}), ("Tanhshrink", (), {}),
    ("Threshold", (0.1, 20.0), {}), ("LogSigmoid", (), {}), ("Softmax", (), {"dim": 1}),
    ("LogSoftmax", (0,), {}), ("Softmin", (), {"dim": -1}), ("GLU", (), {}),
]


@pytest.mark.parametrize("name,args,kw", MODULES, ids=[f"{m[0]}{m[1]}{m[2]}" for m in MODULES])
def test_module_repr_and_parity(name, args, kw):
    md, mt = getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
    assert repr(md) == repr(mt)
    assert md.extra_repr() == mt.extra_repr()
    x = RNG.standard_normal((2, 3, 4))
    md.load_state_dict({k: dg.tensor(v.detach().double().numpy()) for k, v in
                        mt.state_dict().items()})
    md.double()
    mt.double()
    xd, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yd, yt = md(xd * 1.0), mt(xt * 1.0)
    np.testing.assert_allclose(yd.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    yd.sum().backward()
    yt.sum().backward()
    # 1e-6: torch's CELU/Hardsigmoid gradients use float32 constants (see tests/opinfos/nn.py)
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-12)
    for (n, pd), (_, pt) in zip(md.named_parameters(), mt.named_parameters()):
        np.testing.assert_allclose(pd.grad.numpy(), pt.grad.numpy(), rtol=1e-12, err_msg=n)


def test_prelu_default_init():
    m = nn.PReLU(4)
    assert [p.shape for p in m.parameters()] == [(4,)]
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.full(4, 0.25, np.float32))


def test_softmax_and_log_softmax_are_tensor_methods_and_top_level():
    x = dg.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    np.testing.assert_allclose(x.softmax(-1).numpy(), F.softmax(x, -1).numpy())
    np.testing.assert_allclose(dg.log_softmax(x, 1).numpy(), x.log_softmax(1).numpy())
    np.testing.assert_allclose(x.softmax(1).sum(1).numpy(), [1.0, 1.0], rtol=1e-6)


@pytest.mark.parametrize("openblas_pool", [True, False])
def test_large_inputs_take_the_threaded_row_kernels_with_the_same_results(monkeypatch,
                                                                          openblas_pool):
    # >= PARALLEL_MIN_ELEMENTS elements and >= 16 rows: slices of rows run on OpenBLAS's
    # workers, or, without NumPy's OpenBLAS, Numba's threaded kernels split them
    if not openblas_pool:
        from dynagrad._runtime import blas_threads as _batch_parallel
        monkeypatch.setattr(_batch_parallel, "_BLAS", None)
    rng = np.random.default_rng(11)
    rows = PARALLEL_MIN_ELEMENTS // 1000 + 1
    x = rng.standard_normal((rows, 1000)).astype(np.float32)
    target = rng.integers(0, 1000, rows)
    g = rng.standard_normal((rows, 1000)).astype(np.float32)
    for fn, tfn in ((F.softmax, torch.softmax), (F.log_softmax, torch.log_softmax)):
        ours = dg.tensor(x, requires_grad=True)
        theirs = torch.tensor(x, requires_grad=True)
        y, ty = fn(ours, 1), tfn(theirs, 1)
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
        y.backward(dg.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-6)
    ours = dg.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    target[::7] = -100  # ignored rows
    weight = rng.uniform(0.5, 2.0, 1000).astype(np.float32)  # shared by every slice
    loss = F.cross_entropy(ours, dg.tensor(target), dg.tensor(weight), label_smoothing=0.1)
    tloss = torch.nn.functional.cross_entropy(theirs, torch.tensor(target), torch.tensor(weight),
                                              label_smoothing=0.1)
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5)
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-8)
