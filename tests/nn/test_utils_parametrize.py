"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm) and the older
hook-based weight_norm / spectral_norm, vs PyTorch 2.13: state_dict keys, outputs, input and
parameter gradients, buffer updates, and the errors."""
import warnings

import numpy as np
import pytest

import dynagrad as dg
from dynagrad import nn
from dynagrad.nn.utils import parametrizations as P
from dynagrad.nn.utils import parametrize

torch = pytest.importorskip("torch")
TP = torch.nn.utils.parametrizations
tparam = torch.nn.utils.parametrize

RNG = np.random.default_rng(9)


def _np(t):
    return t.detach().numpy()


def _close(a, b, rtol=1e-5, atol=1e-6):
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _to_torch(module):
    return {k: torch.tensor(v.numpy()) for k, v in module.state_dict().items()}


def _compare(ours, theirs, x_shape=(2, 3), steps=1):
    """Same state -> same outputs, input and parameter gradients and state (buffers included),
    over ``steps`` forward/backward passes."""
    assert list(ours.state_dict()) == list(theirs.state_dict())
    theirs.load_state_dict(_to_torch(ours))
    for _ in range(steps):
        x = RNG.standard_normal(x_shape).astype(np.float32)
        xo, xt = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        yo, yt = ours(xo), theirs(xt)
        _close(yo, yt)
        w = RNG.standard_normal(tuple(yt.shape)).astype(np.float32)
        (yo * dg.tensor(w)).sum().backward()
        (yt * torch.tensor(w)).sum().backward()
        _close(xo.grad, xt.grad)
        for (n, p), (m, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert n == m
            _close(p.grad, q.grad)
        for (k, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
            _close(a, b)


# --- parametrize ------------------------------------------------------------------------------
class _Symmetric:
    """A symmetric-matrix parametrization for either library."""

    @staticmethod
    def make(lib_nn):
        class Symmetric(lib_nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).mT
        return Symmetric()


def _scale(lib_nn):
    class Scale(lib_nn.Module):
        def forward(self, X):
            return 3 * X

        def right_inverse(self, Y):
            return Y / 3
    return Scale()


def test_register_parametrization_matches_torch():
    ours = parametrize.register_parametrization(nn.Linear(3, 3), "weight",
                                                _Symmetric.make(nn))
    theirs = tparam.register_parametrization(torch.nn.Linear(3, 3), "weight",
                                             _Symmetric.make(torch.nn))
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedLinear"
    assert isinstance(ours, nn.Linear)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    w = _np(ours.weight)
    np.testing.assert_array_equal(w, w.T)
    _compare(ours, theirs, (2, 3))
    # a second parametrization chains after the first
    parametrize.register_parametrization(ours, "weight", _scale(nn))
    tparam.register_parametrization(theirs, "weight", _scale(torch.nn))
    assert len(ours.parametrizations.weight) == 2
    _compare(ours, theirs, (2, 3))


def test_assignment_goes_through_right_inverse():
    ours = parametrize.register_parametrization(nn.Linear(2, 2), "bias", _scale(nn))
    theirs = tparam.register_parametrization(torch.nn.Linear(2, 2), "bias", _scale(torch.nn))
    original = ours.parametrizations.bias.original
    ours.bias = dg.tensor([3.0, 6.0])
    theirs.bias = torch.tensor([3.0, 6.0])
    assert ours.parametrizations.bias.original is original  # the same tensor, new values
    _close(original, theirs.parametrizations.bias.original)
    _close(ours.bias, theirs.bias)
    # without right_inverse, assignment is refused
    sym = parametrize.register_parametrization(nn.Linear(2, 2), "weight", _Symmetric.make(nn))
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        sym.weight = dg.eye(2)


def test_buffers_and_multi_tensor_originals():
    class Split(nn.Module):
        def forward(self, a, b):
            return a + b

        def right_inverse(self, x):
            return x / 2, x / 2

    m = nn.BatchNorm1d(2)
    parametrize.register_parametrization(m, "running_var", nn.Identity())
    assert "parametrizations.running_var.original" in m.state_dict()
    assert dict(m.named_buffers())["parametrizations.running_var.original"] is \
        m.parametrizations.running_var.original
    lin = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Split())
    assert {"parametrizations.weight.original0", "parametrizations.weight.original1"} <= \
        set(lin.state_dict())
    w = _np(lin.weight).copy()
    with pytest.raises(ValueError, match="sequence of tensors"):
        parametrize.remove_parametrizations(lin, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(lin, "weight")
    assert type(lin) is nn.Linear and isinstance(lin.weight, nn.Parameter)
    np.testing.assert_allclose(_np(lin.weight), w)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    ours = parametrize.register_parametrization(nn.Linear(3, 3), "weight", _scale(nn))
    theirs = tparam.register_parametrization(torch.nn.Linear(3, 3), "weight", _scale(torch.nn))
    theirs.load_state_dict(_to_torch(ours))
    original = ours.parametrizations.weight.original
    parametrize.remove_parametrizations(ours, "weight", leave_parametrized=leave)
    tparam.remove_parametrizations(theirs, "weight", leave_parametrized=leave)
    assert type(ours) is nn.Linear and not hasattr(ours, "parametrizations")
    assert ours.weight is original  # optimizers holding the tensor stay valid
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _close(ours.weight, theirs.weight)
    assert not parametrize.is_parametrized(ours)


def test_is_parametrized_type_before_and_transfer():
    m = nn.Linear(2, 2)
    assert not parametrize.is_parametrized(m)
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    parametrize.register_parametrization(m, "weight", _scale(nn))
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    other = parametrize.transfer_parametrizations_and_params(m, nn.Linear(2, 2))
    assert other.parametrizations.weight.original is m.parametrizations.weight.original
    _close(other.weight, m.weight)
    # a name the target lacks is created from the source's value
    class Bare(nn.Module):
        pass
    bare = parametrize.transfer_parametrizations_and_params(m, Bare(), "weight")
    _close(bare.weight, m.weight)


def test_cached():
    calls = []

    class Count(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 1

    m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Count())
    calls.clear()
    with parametrize.cached():
        a, b = m.weight, m.weight
        with parametrize.cached():
            c = m.weight
    assert a is b is c and len(calls) == 1
    m.weight  # noqa: B018  (outside the block: computed again)
    assert len(calls) == 2


@pytest.mark.parametrize("case", ["shape", "dtype", "missing", "remove", "not_tensor",
                                  "chained_shape"])
def test_parametrize_errors(case):
    def run(lib, lib_nn, reg, remove):
        class Bad(lib_nn.Module):
            def forward(self, X):
                return {"shape": X[0], "dtype": X.double(), "not_tensor": 1,
                        "chained_shape": X.T[:1]}.get(case, X)
        m = lib_nn.Linear(3, 2)
        if case == "missing":
            return lambda: reg(m, "nope", Bad())
        if case == "remove":
            return lambda: remove(m, "weight")
        if case == "chained_shape":
            reg(m, "weight", lib_nn.Identity())
        return lambda: reg(m, "weight", Bad())
    mo, mt = None, None
    with pytest.raises(Exception) as et:
        run(torch, torch.nn, tparam.register_parametrization, tparam.remove_parametrizations)()
    with pytest.raises(type(et.value)) as eo:
        run(dg, nn, parametrize.register_parametrization, parametrize.remove_parametrizations)()
    mo, mt = str(eo.value), str(et.value)
    # the same rule; module reprs, dtype and shape spellings differ between the libraries
    assert mo.split("\n")[0].split("'")[0].split(" Module")[0] == \
        mt.split("\n")[0].split("'")[0].split(" Module")[0]


def test_parametrized_module_pickling_refused():
    import pickle
    m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", nn.Identity())
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)


# --- weight_norm --------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, None, -1, -2])
def test_weight_norm_parametrization(dim):
    ours = P.weight_norm(nn.Conv1d(3, 4, 2), dim=dim)
    theirs = TP.weight_norm(torch.nn.Conv1d(3, 4, 2), dim=dim)
    g = ours.parametrizations.weight.original0
    assert tuple(g.shape) == tuple(theirs.parametrizations.weight.original0.shape)
    _compare(ours, theirs, (2, 3, 5))


def test_weight_norm_old_hook_and_remove():
    with pytest.warns(FutureWarning, match="deprecated"):
        ours = nn.utils.weight_norm(nn.Linear(3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        theirs = torch.nn.utils.weight_norm(torch.nn.Linear(3, 4))
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
            nn.utils.weight_norm(ours)
        dimless = nn.utils.weight_norm(nn.Linear(3, 4), dim=None)
    assert tuple(dimless.weight_g.shape) == ()
    assert list(ours.state_dict()) == ["bias", "weight_g", "weight_v"]
    _compare(ours, theirs)
    nn.utils.remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert isinstance(ours.weight, nn.Parameter)
    _close(ours.weight, theirs.weight)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(ours)


def test_weight_norm_loads_old_keys():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = nn.utils.weight_norm(nn.Linear(3, 4))
    new = P.weight_norm(nn.Linear(3, 4))
    new.load_state_dict(dict(old.state_dict()))
    _close(new.weight, old.weight)


# --- spectral_norm -------------------------------------------------------------------------------
@pytest.mark.parametrize("make,x_shape,kw", [
    (lambda lib: lib.nn.Linear(3, 4), (2, 3), {}),
    (lambda lib: lib.nn.Linear(3, 4), (2, 3), {"n_power_iterations": 3, "eps": 1e-6}),
    (lambda lib: lib.nn.Conv2d(2, 3, 2), (1, 2, 3, 3), {"dim": 1}),
    (lambda lib: lib.nn.ConvTranspose1d(2, 3, 2), (1, 2, 3), {}),
])
def test_spectral_norm_parametrization(make, x_shape, kw):
    ours, theirs = P.spectral_norm(make(dg), **kw), TP.spectral_norm(make(torch), **kw)
    _compare(ours, theirs, x_shape, steps=2)  # u and v move in training mode
    u = _np(ours.parametrizations.weight[0]._u).copy()
    ours.eval()
    theirs.eval()
    _compare(ours, theirs, x_shape)
    np.testing.assert_array_equal(_np(ours.parametrizations.weight[0]._u), u)  # frozen in eval


def test_spectral_norm_bias_vector_and_errors():
    ours = P.spectral_norm(nn.Linear(3, 4), "bias")
    theirs = TP.spectral_norm(torch.nn.Linear(3, 4), "bias")
    _compare(ours, theirs)
    for args, kw in ((("weight",), {"dim": 2}), (("weight",), {"n_power_iterations": 0}),
                     (("nope",), {})):
        with pytest.raises(Exception) as et:
            TP.spectral_norm(torch.nn.Linear(3, 4), *args, **kw)
        with pytest.raises(type(et.value)) as eo:
            P.spectral_norm(nn.Linear(3, 4), *args, **kw)
        assert str(eo.value).split("'")[0] == str(et.value).split("'")[0]


@pytest.mark.parametrize("make,x_shape", [
    (lambda lib: lib.nn.Linear(3, 4), (2, 3)),
    (lambda lib: lib.nn.ConvTranspose1d(2, 3, 2), (1, 2, 3)),
])
def test_spectral_norm_old_hook(make, x_shape):
    ours = nn.utils.spectral_norm(make(dg), n_power_iterations=2)
    theirs = torch.nn.utils.spectral_norm(make(torch), n_power_iterations=2)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _compare(ours, theirs, x_shape, steps=2)
    ours.eval()
    theirs.eval()
    _compare(ours, theirs, x_shape)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(ours)
    nn.utils.remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _close(ours.weight, theirs.weight)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        nn.utils.remove_spectral_norm(ours)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        nn.utils.spectral_norm(make(dg), n_power_iterations=0)


# --- orthogonal ---------------------------------------------------------------------------------
def _orth_pair(shape, mp, triv, batch=()):
    weight = RNG.standard_normal(batch + shape)

    class Holder:
        @staticmethod
        def make(lib, lib_nn):
            m = lib_nn.Linear(1, 1)
            del m.weight
            m.register_parameter("weight", lib_nn.Parameter(lib.tensor(weight)))
            return m
    ours = P.orthogonal(Holder.make(dg, nn), orthogonal_map=mp, use_trivialization=triv)
    theirs = TP.orthogonal(Holder.make(torch, torch.nn), orthogonal_map=mp,
                           use_trivialization=triv)
    return ours, theirs


@pytest.mark.parametrize("shape,mp,triv,batch", [
    ((3, 3), None, True, ()),
    ((3, 3), "cayley", True, (2,)),
    ((4, 2), "matrix_exp", True, ()),
    ((2, 4), "cayley", True, ()),
    ((4, 2), None, True, ()),
    ((2, 4), "householder", False, ()),
    ((3, 3), "householder", False, (2,)),
])
def test_orthogonal_matches_torch(shape, mp, triv, batch):
    ours, theirs = _orth_pair(shape, mp, triv, batch)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    w = _np(ours.weight)
    small = min(shape)
    gram = w @ np.swapaxes(w, -1, -2) if shape[0] < shape[1] else np.swapaxes(w, -1, -2) @ w
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(small), gram.shape), atol=1e-12)
    if triv and shape[0] == shape[1]:  # an orthogonalised copy of the weight: torch's too
        _close(ours.parametrizations.weight[0].base, theirs.parametrizations.weight[0].base,
               atol=1e-10)
    if not triv:  # geqrf's reflectors, as torch stores them
        _close(ours.parametrizations.weight.original, theirs.parametrizations.weight.original,
               atol=1e-10)
    # away from the starting point, the map, its value and gradient against torch
    with dg.no_grad():
        orig = ours.parametrizations.weight.original
        orig.add_(dg.tensor(0.3 * RNG.standard_normal(tuple(orig.shape))))
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    g = RNG.standard_normal(batch + shape)
    (ours.weight * dg.tensor(g)).sum().backward()
    (theirs.weight * torch.tensor(g)).sum().backward()
    _close(ours.weight, theirs.weight, atol=1e-10)
    _close(ours.parametrizations.weight.original.grad,
           theirs.parametrizations.weight.original.grad, atol=1e-10)


def test_orthogonal_assignment_and_errors():
    ours, theirs = _orth_pair((3, 3), None, True)
    q = np.linalg.qr(RNG.standard_normal((3, 3)))[0]
    ours.weight = dg.tensor(q)
    theirs.weight = torch.tensor(q)
    _close(ours.weight, theirs.weight, atol=1e-12)
    _close(ours.weight, torch.tensor(q), atol=1e-12)
    cases = [(lambda lib_nn, mod: mod.orthogonal(lib_nn.Linear(3, 3), orthogonal_map="bad")),
             (lambda lib_nn, mod: mod.orthogonal(lib_nn.Linear(3, 3), "bias")),
             (lambda lib_nn, mod: mod.orthogonal(lib_nn.Linear(3, 3), "nope"))]
    for make in cases:
        with pytest.raises(ValueError) as et:
            make(torch.nn, TP)
        with pytest.raises(ValueError) as eo:
            make(nn, P)
        assert str(eo.value).split("'")[0] == str(et.value).split("'")[0]
    m = P.orthogonal(nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        m.weight = dg.eye(3)
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices of shape"):
        ours.weight = dg.eye(2, dtype=dg.float64)
