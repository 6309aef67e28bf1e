"""nn.init: gains, fans, distribution statistics, exact fills, orthogonality, generators."""
import math
from statistics import NormalDist

import numpy as np
import pytest

import dynagrad as dg
from dynagrad import nn
from dynagrad.nn import init

torch = pytest.importorskip("torch")
tinit = torch.nn.init


@pytest.mark.parametrize("name,param", [
    ("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
    ("conv_transpose2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
    ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 1), ("selu", None)])
def test_calculate_gain_matches_torch(name, param):
    assert init.calculate_gain(name, param) == pytest.approx(tinit.calculate_gain(name, param),
                                                             rel=1e-15)


def test_calculate_gain_errors_match_torch():
    for args in (("softmax",), ("leaky_relu", "x"), ("leaky_relu", True)):
        with pytest.raises(ValueError) as ours:
            init.calculate_gain(*args)
        with pytest.raises(ValueError) as theirs:
            tinit.calculate_gain(*args)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape", [(3, 4), (8, 3, 5), (6, 2, 3, 3), (2, 4, 1, 2, 3)])
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(dg.empty(*shape)) == \
        tinit._calculate_fan_in_and_fan_out(torch.empty(*shape))


def test_fan_errors():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(dg.empty(5))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_normal_(dg.empty(3, 3), mode="fan_avg")


def _stats(t):
    a = t.detach().numpy().astype(np.float64)
    return a.mean(), a.std(), a.min(), a.max()


def test_uniform_and_normal():
    mean, std, lo, hi = _stats(init.uniform_(dg.empty(200, 100), -2.0, 3.0))
    assert -2.0 <= lo and hi < 3.0
    assert abs(mean - 0.5) < 0.05 and abs(std - 5 / math.sqrt(12)) < 0.03
    mean, std, _, _ = _stats(init.normal_(dg.empty(200, 100), 1.5, 0.5))
    assert abs(mean - 1.5) < 0.02 and abs(std - 0.5) < 0.01


def test_constant_ones_zeros_eye_dirac_match_torch():
    assert init.constant_(dg.empty(2, 3), 0.25).tolist() == [[0.25] * 3] * 2
    assert init.ones_(dg.empty(3)).tolist() == [1.0] * 3
    assert init.zeros_(dg.empty(2, 2, dtype=dg.float64)).tolist() == [[0.0, 0.0]] * 2
    for shape in ((3, 5), (4, 2)):
        np.testing.assert_array_equal(init.eye_(dg.empty(*shape)).numpy(),
                                      tinit.eye_(torch.empty(*shape)).numpy())
    for shape, groups in (((4, 2, 3), 1), ((6, 3, 3, 3), 2), ((2, 4, 3, 3, 3), 1)):
        np.testing.assert_array_equal(init.dirac_(dg.empty(*shape), groups).numpy(),
                                      tinit.dirac_(torch.empty(*shape), groups).numpy())
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(dg.empty(2, 2, 2))


def test_xavier_statistics():
    fan_in, fan_out = 150, 250
    w = init.xavier_uniform_(dg.empty(fan_out, fan_in), gain=2.0)
    bound = 2.0 * math.sqrt(6.0 / (fan_in + fan_out))
    mean, std, lo, hi = _stats(w)
    assert -bound <= lo and hi <= bound and hi > 0.95 * bound
    assert abs(std - bound / math.sqrt(3)) < 0.02 * bound and abs(mean) < 0.01 * bound
    w = init.xavier_normal_(dg.empty(fan_out, fan_in))
    mean, std, _, _ = _stats(w)
    target = math.sqrt(2.0 / (fan_in + fan_out))
    assert abs(std - target) < 0.02 * target and abs(mean) < 0.02 * target


@pytest.mark.parametrize("mode,nonlinearity,a", [("fan_in", "leaky_relu", 0),
                                                  ("fan_out", "relu", 0),
                                                  ("fan_in", "leaky_relu", math.sqrt(5))])
def test_kaiming_statistics(mode, nonlinearity, a):
    shape = (64, 16, 3, 3)
    fan = 16 * 9 if mode == "fan_in" else 64 * 9
    std_target = init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    w = init.kaiming_uniform_(dg.empty(*shape), a=a, mode=mode, nonlinearity=nonlinearity)
    mean, std, lo, hi = _stats(w)
    bound = math.sqrt(3.0) * std_target
    assert -bound <= lo and hi <= bound
    assert abs(std - std_target) < 0.03 * std_target
    w = init.kaiming_normal_(dg.empty(*shape), a=a, mode=mode, nonlinearity=nonlinearity)
    mean, std, _, _ = _stats(w)
    assert abs(std - std_target) < 0.03 * std_target and abs(mean) < 0.03 * std_target


def test_kaiming_zero_element_warns():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(dg.empty(0, 3))


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (5, 5), (3, 2, 2, 2)])
def test_orthogonal(shape):
    w = init.orthogonal_(dg.empty(*shape, dtype=dg.float64), gain=1.5).numpy()
    flat = w.reshape(shape[0], -1) / 1.5
    rows, cols = flat.shape
    gram = flat @ flat.T if rows <= cols else flat.T @ flat
    np.testing.assert_allclose(gram, np.eye(min(rows, cols)), atol=1e-12)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
        init.orthogonal_(dg.empty(3))


def _truncnorm_moments(mean, std, a, b):
    nd = NormalDist()
    al, be = (a - mean) / std, (b - mean) / std
    z = nd.cdf(be) - nd.cdf(al)
    pa, pb = nd.pdf(al), nd.pdf(be)
    m = mean + std * (pa - pb) / z
    var = std ** 2 * (1 + (al * pa - be * pb) / z - ((pa - pb) / z) ** 2)
    return m, math.sqrt(var)


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.0, 0.02, -0.04, 0.04),
                                          (1.0, 2.0, 0.0, 10.0), (0.0, 1.0, 3.0, 4.0),
                                          (0.0, 1.0, -5.0, -4.0)])
def test_trunc_normal_moments(mean, std, a, b):
    n = 40000
    ours = init.trunc_normal_(dg.empty(n, dtype=dg.float64), mean, std, a, b).numpy()
    assert ours.min() >= a and ours.max() <= b
    m, s = _truncnorm_moments(mean, std, a, b)
    assert abs(ours.mean() - m) < 0.03 * s
    assert abs(ours.std() - s) < 0.03 * s


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.0, 0.02, -0.04, 0.04),
                                          (1.0, 2.0, 0.0, 10.0)])
def test_trunc_normal_quartiles_match_torch(mean, std, a, b):
    # (torch's own sampler is only trusted when the mean is within 2 std of [a, b]); seeded:
    # unseeded, the draws depended on the tests before and now and then missed the tolerance
    n = 40000
    dg.manual_seed(0)
    torch.manual_seed(0)
    ours = init.trunc_normal_(dg.empty(n, dtype=dg.float64), mean, std, a, b).numpy()
    theirs = tinit.trunc_normal_(torch.empty(n, dtype=torch.float64), mean, std, a, b).numpy()
    np.testing.assert_allclose(np.quantile(ours, [0.1, 0.25, 0.5, 0.75, 0.9]),
                               np.quantile(theirs, [0.1, 0.25, 0.5, 0.75, 0.9]),
                               atol=0.05 * theirs.std())


def test_trunc_normal_rejects_empty_interval():
    with pytest.raises(ValueError, match="expected a < b"):
        init.trunc_normal_(dg.empty(3), a=1.0, b=1.0)


def test_normal_quantile_approximation():
    from dynagrad.nn.init import _norm_ppf
    p = np.array([1e-300, 1e-12, 1e-5, 0.01, 0.02425, 0.3, 0.5, 0.9, 0.99, 1 - 1e-9])
    ref = np.array([NormalDist().inv_cdf(float(v)) for v in p])
    np.testing.assert_allclose(_norm_ppf(p), ref, rtol=2e-9, atol=1e-12)


@pytest.mark.parametrize("fn,args", [
    (init.uniform_, ()), (init.normal_, ()), (init.trunc_normal_, ()),
    (init.xavier_uniform_, ()), (init.xavier_normal_, ()), (init.kaiming_uniform_, ()),
    (init.kaiming_normal_, ()), (init.orthogonal_, ())])
def test_generator_makes_draws_reproducible(fn, args):
    def draw(seed):
        g = dg.Generator()
        g.manual_seed(seed)
        return fn(dg.empty(4, 5), *args, generator=g).tolist()

    assert draw(3) == draw(3)
    assert draw(3) != draw(4)


def test_init_on_parameters_records_no_history():
    p = nn.Parameter(dg.empty(3, 4))
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
               init.orthogonal_, init.trunc_normal_, init.zeros_, init.ones_, init.eye_):
        out = fn(p)
        assert out is p and p.grad_fn is None and p.requires_grad and p.is_leaf
    v = p._version
    init.constant_(p, 3.0)
    assert p._version > v  # in place: autograd sees the modification
