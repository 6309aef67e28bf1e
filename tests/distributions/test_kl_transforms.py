"""kl_divergence for every registered pair, the transforms, constraints and biject_to /
transform_to, each against torch.distributions."""
import numpy as np
import pytest

import dynagrad as dg
import dynagrad.distributions as D
from dynagrad.distributions import constraints, kl

torch = pytest.importorskip("torch")
TD = torch.distributions


def spd(n, seed):
    a = np.random.default_rng(seed).normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


# (p's parameters, q's parameters) per family; the second batch entry of Uniform reaches
# below 0 so that the pairs whose q lives on [0, inf) or [0, 1] give infinity there
PARAMS = {
    "Normal": ({"loc": [0.5, -1.0], "scale": [1.5, 0.7]}, {"loc": [0.0, 1.0], "scale": [1.0, 2.0]}),
    "Laplace": ({"loc": [0.5, -1.0], "scale": [1.5, 0.7]},
                {"loc": [0.0, 1.0], "scale": [1.0, 2.0]}),
    "Cauchy": ({"loc": [0.5, -1.0], "scale": [1.5, 0.7]}, {"loc": [0.0, 1.0], "scale": [1.0, 2.0]}),
    "Gumbel": ({"loc": [0.5, -1.0], "scale": [1.5, 0.7]}, {"loc": [0.0, 1.0], "scale": [1.0, 2.0]}),
    "HalfNormal": ({"scale": [1.5, 0.7]}, {"scale": [1.0, 2.0]}),
    "Uniform": ({"low": [0.1, -0.5], "high": [0.5, 0.9]}, {"low": [-1.0, -2.0], "high": [3.0, 4.0]}),
    "Exponential": ({"rate": [0.5, 2.0]}, {"rate": [1.0, 3.0]}),
    "Gamma": ({"concentration": [0.7, 3.0], "rate": [2.0, 0.5]},
              {"concentration": [1.0, 2.0], "rate": [1.0, 1.5]}),
    "Beta": ({"concentration1": [0.7, 3.0], "concentration0": [2.0, 1.5]},
             {"concentration1": [1.0, 2.0], "concentration0": [1.0, 2.5]}),
    "Pareto": ({"scale": [1.0, 0.5], "alpha": [3.0, 4.5]}, {"scale": [0.5, 0.7], "alpha": [2.0, 3.0]}),
    "Poisson": ({"rate": [0.7, 4.0]}, {"rate": [1.0, 2.0]}),
    "Bernoulli": ({"probs": [0.2, 0.7]}, {"probs": [0.5, 0.6]}),
    "Geometric": ({"probs": [0.2, 0.7]}, {"probs": [0.5, 0.6]}),
    "Binomial": ({"total_count": [5.0, 5.0], "probs": [0.2, 0.7]},
                 {"total_count": [5.0, 5.0], "probs": [0.5, 0.6]}),
    "ContinuousBernoulli": ({"probs": [0.2, 0.7]}, {"probs": [0.5, 0.9]}),
    "Categorical": ({"probs": [[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]]}, {"probs": [[0.1, 0.1, 0.8],
                                                                              [0.3, 0.3, 0.4]]}),
    "OneHotCategorical": ({"probs": [[0.2, 0.5, 0.3]]}, {"probs": [[0.1, 0.1, 0.8]]}),
    "Dirichlet": ({"concentration": [[0.7, 2.0, 3.5]]}, {"concentration": [[1.5, 1.5, 0.9]]}),
    "MultivariateNormal": ({"loc": [0.5, -1.0, 2.0], "covariance_matrix": spd(3, 0)},
                           {"loc": [0.0, 1.0, 0.0], "covariance_matrix": spd(3, 1)}),
    "LowRankMultivariateNormal": (
        {"loc": [0.5, -1.0, 2.0], "cov_factor": [[1.0, 0.2], [0.3, -0.5], [0.0, 0.7]],
         "cov_diag": [0.5, 1.0, 2.0]},
        {"loc": [0.0, 1.0, 0.0], "cov_factor": [[0.4, 0.1], [-0.3, 0.5], [0.2, 0.1]],
         "cov_diag": [1.5, 0.5, 1.0]}),
}


def make(lib, name, which):
    dists = D if lib is dg else TD
    args = {k: lib.tensor(np.asarray(v, dtype=np.float64)) for k, v in PARAMS[name][which].items()}
    return getattr(dists, name)(**args)


def instance(lib, cls, which):
    """A distribution of (a concrete subclass of) ``cls`` for a KL pair."""
    dists = D if lib is dg else TD
    if cls is D.TransformedDistribution:
        return dists.TransformedDistribution(make(lib, "Normal", which), [dists.ExpTransform()])
    if cls is D.Independent:
        return dists.Independent(make(lib, "Normal", which), 1)
    if cls is D.ExponentialFamily:
        return make(lib, "Gamma", which)
    return make(lib, cls.__name__, which)


PAIRS = sorted(kl._KL_REGISTRY, key=lambda pq: (pq[0].__name__, pq[1].__name__))


@pytest.mark.parametrize("pair", PAIRS, ids=lambda pq: f"{pq[0].__name__}-{pq[1].__name__}")
def test_kl_divergence_matches_torch(pair):
    cls_p, cls_q = pair
    p, q = instance(dg, cls_p, 0), instance(dg, cls_q, 1)
    tp, tq = instance(torch, cls_p, 0), instance(torch, cls_q, 1)
    if cls_p is D.ExponentialFamily:  # the Bregman fallback itself, on a Gamma pair
        ours = kl._kl_expfamily_expfamily(p, q)
        theirs = TD.kl._kl_expfamily_expfamily(tp, tq)
    else:
        ours, theirs = D.kl_divergence(p, q), TD.kl_divergence(tp, tq)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6,
                               atol=1e-10)


def test_kl_gradients_and_registry():
    loc = dg.tensor([0.5, -1.0], dtype=dg.float64, requires_grad=True)
    tloc = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    D.kl_divergence(D.Gamma(loc.exp(), 1.0), D.Gamma(2.0, 1.5)).sum().backward()
    TD.kl_divergence(TD.Gamma(tloc.exp(), 1.0), TD.Gamma(2.0, 1.5)).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), tloc.grad.numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p "
                                                  "type VonMises and q type Normal"):
        D.kl_divergence(D.VonMises(0.0, 1.0), D.Normal(0.0, 1.0))

    class MyNormal(D.Normal):
        pass

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == pytest.approx(0.5)

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return p.loc * 0 + 42.0

    try:
        assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == 42.0
    finally:
        del kl._KL_REGISTRY[MyNormal, D.Normal]
        kl._KL_MEMOIZE.clear()
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


def tensors(x):
    return dg.tensor(np.asarray(x, dtype=np.float64)), torch.tensor(np.asarray(x, dtype=np.float64))


def transform_pairs():
    loc, scale = np.array([0.5, -1.0, 2.0]), np.array([2.0, -0.5, 1.5])
    return [
        ("Exp", lambda m: m.ExpTransform(), [0.3, -1.2, 2.0]),
        ("Power", lambda m: m.PowerTransform(2.5), [0.3, 1.2, 2.0]),
        ("Sigmoid", lambda m: m.SigmoidTransform(), [0.3, -1.2, 2.0]),
        ("Tanh", lambda m: m.TanhTransform(), [0.3, -1.2, 2.0]),
        ("Softplus", lambda m: m.SoftplusTransform(), [0.3, -1.2, 2.0]),
        ("Abs", lambda m: m.AbsTransform(), [0.3, -1.2, 2.0]),
        ("Affine", lambda m: m.AffineTransform(1.5, -2.0), [0.3, -1.2, 2.0]),
        ("AffineTensor", lambda m: m.AffineTransform(
            (dg if m is D else torch).tensor(loc), (dg if m is D else torch).tensor(scale),
            event_dim=1), [[0.3, -1.2, 2.0], [1.0, 2.0, 3.0]]),
        ("Softmax", lambda m: m.SoftmaxTransform(), [[0.3, -1.2, 2.0]]),
        ("StickBreaking", lambda m: m.StickBreakingTransform(), [[0.3, -1.2, 2.0]]),
        ("LowerCholesky", lambda m: m.LowerCholeskyTransform(), np.arange(9.0).reshape(3, 3) / 9),
        ("PositiveDefinite", lambda m: m.PositiveDefiniteTransform(),
         np.arange(9.0).reshape(3, 3) / 9),
        ("CorrCholesky", lambda m: m.CorrCholeskyTransform(), [[0.3, -1.2, 2.0]]),
        ("Reshape", lambda m: m.ReshapeTransform((2, 3), (3, 2)), np.arange(12.0).reshape(2, 2, 3)),
        ("Independent", lambda m: m.IndependentTransform(m.ExpTransform(), 1), [[0.3, -1.2]]),
        ("Compose", lambda m: m.ComposeTransform([m.AffineTransform(0.5, 2.0), m.ExpTransform(),
                                                  m.PowerTransform(0.5)]), [0.3, -1.2, 2.0]),
        ("Cat", lambda m: m.CatTransform([m.ExpTransform(), m.AffineTransform(1.0, 3.0)], 0,
                                         [2, 1]), [0.3, -1.2, 2.0]),
        ("Stack", lambda m: m.StackTransform([m.ExpTransform(), m.SigmoidTransform()], 1),
         [[0.3, -1.2], [2.0, 0.1]]),
        ("Inverse", lambda m: m.SigmoidTransform().inv, [0.3, 0.8, 0.5]),
        ("Identity", lambda m: m.identity_transform, [0.3, -1.2, 2.0]),
    ]


@pytest.mark.parametrize("case", transform_pairs(), ids=lambda c: c[0])
def test_transform_matches_torch(case):
    _, build, x = case
    ours, theirs = build(D), build(TD)
    xo, xt = tensors(x)
    y, ty = ours(xo), theirs(xt)
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-10, atol=1e-12)
    if theirs.bijective or isinstance(theirs, (TD.PositiveDefiniteTransform,
                                               TD.LowerCholeskyTransform)):
        np.testing.assert_allclose(ours.inv(y).numpy(), theirs.inv(ty).numpy(), rtol=1e-8,
                                   atol=1e-10)
    try:
        want = theirs.log_abs_det_jacobian(xt, ty)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.log_abs_det_jacobian(xo, y)
    else:
        np.testing.assert_allclose(ours.log_abs_det_jacobian(xo, y).numpy(), want.numpy(),
                                   rtol=1e-8, atol=1e-12)
    assert ours.bijective == theirs.bijective
    assert ours.domain.event_dim == theirs.domain.event_dim
    assert ours.codomain.event_dim == theirs.codomain.event_dim
    assert tuple(ours.forward_shape(tuple(xo.shape))) == tuple(theirs.forward_shape(xt.shape))
    assert tuple(ours.inverse_shape(tuple(y.shape))) == tuple(theirs.inverse_shape(ty.shape))
    assert bool(ours.codomain.check(y).all())


def test_transform_cache_and_equality():
    t = D.ExpTransform(cache_size=1)
    x = dg.tensor([0.1, 0.2], dtype=dg.float64)
    y = t(x)
    assert t.inv(y) is x and t(x) is y
    assert D.ExpTransform() == D.ExpTransform() and D.ExpTransform() != D.SigmoidTransform()
    assert D.ExpTransform().inv == D.ExpTransform().inv and D.ExpTransform().inv.inv == \
        D.ExpTransform()
    assert D.AffineTransform(1.0, 2.0) == D.AffineTransform(1.0, 2.0)
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)
    assert D.ExpTransform().sign == 1 and D.AffineTransform(0.0, -2.0).sign == -1
    cdf = D.CumulativeDistributionTransform(D.Normal(0.0, 1.0))
    np.testing.assert_allclose(cdf(dg.tensor([0.0])).numpy(), [0.5])
    np.testing.assert_allclose(cdf.inv(dg.tensor([0.5])).numpy(), [0.0], atol=1e-7)


CONSTRAINTS = [
    ("real", [0.3, float("nan"), -2.0]),
    ("positive", [0.3, 0.0, -2.0]),
    ("nonnegative", [0.3, 0.0, -2.0]),
    ("unit_interval", [0.3, 1.0, 1.5]),
    ("boolean", [0.0, 1.0, 0.5]),
    ("nonnegative_integer", [0.0, 3.0, 1.5]),
    ("positive_integer", [0.0, 3.0, 1.5]),
    ("simplex", [[0.2, 0.8], [0.5, 0.6]]),
    ("real_vector", [[0.2, float("nan")], [0.5, 0.6]]),
    ("one_hot", [[0.0, 1.0], [1.0, 1.0]]),
    ("lower_triangular", [[[1.0, 0.0], [2.0, 3.0]], [[1.0, 1.0], [2.0, 3.0]]]),
    ("lower_cholesky", [[[1.0, 0.0], [2.0, 3.0]], [[-1.0, 0.0], [2.0, 3.0]]]),
    ("corr_cholesky", [[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [2.0, 3.0]]]),
    ("positive_definite", [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("positive_semidefinite", [[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("symmetric", [[[1.0, 2.0], [2.0, 1.0]], [[1.0, 2.0], [3.0, 1.0]]]),
    ("square", [[[1.0, 2.0], [2.0, 1.0]]]),
]


@pytest.mark.parametrize("name, value", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_constraints_match_torch(name, value):
    ours, theirs = getattr(constraints, name), getattr(TD.constraints, name)
    xo, xt = tensors(value)
    assert ours.check(xo).tolist() == theirs.check(xt).tolist()
    assert ours.event_dim == theirs.event_dim and ours.is_discrete == theirs.is_discrete
    assert repr(ours) == repr(theirs)


def test_parameterised_constraints():
    xo, xt = tensors([0.0, 1.0, 2.5, 3.0])
    for args in ((constraints.interval, TD.constraints.interval, (1.0, 3.0)),
                 (constraints.half_open_interval, TD.constraints.half_open_interval, (1.0, 3.0)),
                 (constraints.greater_than, TD.constraints.greater_than, (1.0,)),
                 (constraints.greater_than_eq, TD.constraints.greater_than_eq, (1.0,)),
                 (constraints.less_than, TD.constraints.less_than, (1.0,)),
                 (constraints.integer_interval, TD.constraints.integer_interval, (1, 3))):
        ours, theirs = args[0](*args[2]), args[1](*args[2])
        assert ours.check(xo).tolist() == theirs.check(xt).tolist()
        assert repr(ours) == repr(theirs)
    ind = constraints.independent(constraints.positive, 1)
    assert ind.check(dg.tensor([[1.0, 2.0], [1.0, -1.0]])).tolist() == [True, False]
    assert ind.event_dim == 1
    cat = constraints.cat([constraints.positive, constraints.real], 0, [1, 2])
    assert cat.check(dg.tensor([1.0, -1.0, -2.0])).tolist() == [True, True, True]
    stack = constraints.stack([constraints.positive, constraints.real], 0)
    assert stack.check(dg.tensor([[-1.0], [-2.0]])).tolist() == [[False], [True]]
    assert constraints.is_dependent(constraints.dependent)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        constraints.dependent.check(dg.zeros(1))


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_biject_to_and_transform_to(registry):
    ours_r, theirs_r = getattr(D, registry), getattr(TD, registry)
    vec = [[0.3, -1.2, 2.0]]
    cases = [("real", vec), ("positive", vec), ("nonnegative", vec), ("unit_interval", vec),
             ("simplex", vec), ("corr_cholesky", vec), ("real_vector", vec)]
    if registry == "transform_to":
        cases += [("lower_cholesky", np.arange(9.0).reshape(3, 3) / 9),
                  ("positive_definite", np.arange(9.0).reshape(3, 3) / 9)]
    for name, x in cases:
        xo, xt = tensors(x)
        ours, theirs = ours_r(getattr(constraints, name)), theirs_r(getattr(TD.constraints, name))
        y = ours(xo)
        np.testing.assert_allclose(y.numpy(), theirs(xt).numpy(), rtol=1e-10, atol=1e-12)
        assert bool(getattr(constraints, name).check(y).all())
    for c, tc in ((constraints.interval(-1.0, 3.0), TD.constraints.interval(-1.0, 3.0)),
                  (constraints.greater_than(2.0), TD.constraints.greater_than(2.0)),
                  (constraints.less_than(2.0), TD.constraints.less_than(2.0))):
        xo, xt = tensors([0.3, -1.2])
        np.testing.assert_allclose(ours_r(c)(xo).numpy(), theirs_r(tc)(xt).numpy(), rtol=1e-10)
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        ours_r(constraints.boolean)
