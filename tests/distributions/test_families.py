"""Every distribution family against scipy.stats (float64) and torch.distributions.

One table row per family: its parameters, the matching frozen scipy.stats law (or None when
SciPy has none; then torch is the oracle), test values and the methods to check. Each test is
parametrized over the rows: log_prob/cdf/icdf/entropy/mean/variance against SciPy, log_prob and
its parameter gradients against torch, shapes and expand against torch, and the sampler by
moments and a goodness-of-fit test with a fixed seed.
"""
import math

import numpy as np
import pytest
from scipy import stats

import dynagrad as dg
import dynagrad.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions


def spd(n, seed):
    a = np.random.default_rng(seed).normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


class Row:
    def __init__(self, name, params, scipy=None, x=None, checks="", q=None, n=2000, fit=None,
                 kwargs=None, torch32=False):
        self.name, self.params, self.scipy, self.x = name, params, scipy, x
        self.checks, self.q, self.n, self.fit, self.kwargs = checks.split(), q, n, fit, kwargs or {}
        # torch's own GeneralizedPareto fails in float64 (it compares with a float32 zero)
        self.torch_dtype = torch.float32 if torch32 else torch.float64
        self.rtol = 2e-5 if torch32 else 1e-6

    def __repr__(self):
        return self.name

    def make(self, lib, params=None, grad=False):
        """The distribution made by ``lib`` (dg or torch) from float64 copies of the params."""
        params = self.params if params is None else params
        args = {}
        for k, v in params.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k in self.kwargs:
                args[k] = v
            elif isinstance(v, (list, np.ndarray)):
                arr = np.asarray(v, dtype=np.float64)
                args[k] = (dg.tensor(arr, requires_grad=grad) if lib is dg
                           else torch.tensor(arr, dtype=self.torch_dtype, requires_grad=grad))
            else:
                args[k] = v
        dist = getattr(dg.distributions if lib is dg else TD, self.name)
        return dist(**args), args

    def value(self, lib):
        x = np.asarray(self.x, dtype=np.float64)
        return dg.tensor(x) if lib is dg else torch.tensor(x, dtype=self.torch_dtype)


def P(*v):
    return list(v)


ROWS = [
    Row("Normal", {"loc": P(0.5, -1.0), "scale": P(1.5, 0.7)},
        lambda p: stats.norm(p["loc"], p["scale"]), x=P(0.3, -2.0),
        checks="cdf icdf entropy mean variance", q={"loc": P(0.0, 1.0), "scale": P(1.0, 2.0)}),
    Row("Uniform", {"low": P(0.0, -1.0), "high": P(2.0, 3.0)},
        lambda p: stats.uniform(p["low"], p["high"] - p["low"]), x=P(0.3, 2.5),
        checks="cdf icdf entropy mean variance", q={"low": P(-1.0, -2.0), "high": P(3.0, 4.0)}),
    Row("Exponential", {"rate": P(0.5, 2.0)}, lambda p: stats.expon(scale=1 / p["rate"]),
        x=P(0.3, 1.7), checks="cdf icdf entropy mean variance", q={"rate": P(1.0, 3.0)}),
    Row("Laplace", {"loc": P(0.5, -1.0), "scale": P(1.5, 0.7)},
        lambda p: stats.laplace(p["loc"], p["scale"]), x=P(0.3, -2.0),
        checks="cdf icdf entropy mean variance", q={"loc": P(0.0, 1.0), "scale": P(1.0, 2.0)}),
    Row("Cauchy", {"loc": P(0.5, -1.0), "scale": P(1.5, 0.7)},
        lambda p: stats.cauchy(p["loc"], p["scale"]), x=P(0.3, -2.0),
        checks="cdf icdf entropy", q={"loc": P(0.0, 1.0), "scale": P(1.0, 2.0)}),
    Row("Gumbel", {"loc": P(0.5, -1.0), "scale": P(1.5, 0.7)},
        lambda p: stats.gumbel_r(p["loc"], p["scale"]), x=P(0.3, -2.0),
        checks="cdf icdf entropy mean variance", q={"loc": P(0.0, 1.0), "scale": P(1.0, 2.0)}),
    Row("HalfNormal", {"scale": P(1.5, 0.7)}, lambda p: stats.halfnorm(scale=p["scale"]),
        x=P(0.3, 2.0), checks="cdf icdf entropy mean variance", q={"scale": P(1.0, 2.0)}),
    Row("HalfCauchy", {"scale": P(1.5, 0.7)}, lambda p: stats.halfcauchy(scale=p["scale"]),
        x=P(0.3, 2.0), checks="cdf icdf entropy"),
    Row("LogNormal", {"loc": P(0.5, -1.0), "scale": P(0.5, 0.7)},
        lambda p: stats.lognorm(p["scale"], scale=np.exp(p["loc"])), x=P(0.3, 2.0),
        checks="cdf icdf entropy mean variance", q={"loc": P(0.0, 1.0), "scale": P(1.0, 2.0)}),
    Row("Gamma", {"concentration": P(0.7, 3.0), "rate": P(2.0, 0.5)},
        lambda p: stats.gamma(p["concentration"], scale=1 / p["rate"]), x=P(0.3, 4.0),
        checks="cdf entropy mean variance", q={"concentration": P(1.0, 2.0), "rate": P(1.0, 1.5)}),
    Row("Chi2", {"df": P(1.5, 4.0)}, lambda p: stats.chi2(p["df"]), x=P(0.3, 4.0),
        checks="cdf entropy mean variance"),
    Row("Beta", {"concentration1": P(0.7, 3.0), "concentration0": P(2.0, 1.5)},
        lambda p: stats.beta(p["concentration1"], p["concentration0"]), x=P(0.3, 0.8),
        checks="entropy mean variance", q={"concentration1": P(1.0, 2.0),
                                               "concentration0": P(1.0, 2.5)}),
    Row("StudentT", {"df": P(3.0, 5.5), "loc": P(0.5, -1.0), "scale": P(1.5, 0.7)},
        lambda p: stats.t(p["df"], p["loc"], p["scale"]), x=P(0.3, -2.0),
        checks="entropy mean variance"),
    Row("Pareto", {"scale": P(1.0, 0.5), "alpha": P(3.0, 4.5)},
        lambda p: stats.pareto(p["alpha"], scale=p["scale"]), x=P(1.3, 2.0),
        checks="cdf icdf entropy mean variance", q={"scale": P(0.5, 0.2), "alpha": P(2.0, 3.0)}),
    Row("Weibull", {"scale": P(1.0, 2.5), "concentration": P(0.8, 3.0)},
        lambda p: stats.weibull_min(p["concentration"], scale=p["scale"]), x=P(0.3, 2.0),
        checks="cdf icdf entropy mean variance"),
    Row("InverseGamma", {"concentration": P(3.0, 4.5), "rate": P(2.0, 0.5)},
        lambda p: stats.invgamma(p["concentration"], scale=p["rate"]), x=P(0.3, 2.0),
        checks="cdf entropy mean variance"),
    Row("FisherSnedecor", {"df1": P(3.0, 6.0), "df2": P(5.0, 9.0)},
        lambda p: stats.f(p["df1"], p["df2"]), x=P(0.3, 2.0), checks="mean variance"),
    Row("VonMises", {"loc": P(0.5, -1.0), "concentration": P(0.8, 4.0)},
        lambda p: stats.vonmises(p["concentration"], p["loc"]), x=P(0.3, -2.0), checks="mean"),
    Row("GeneralizedPareto", {"loc": P(0.5, -1.0), "scale": P(1.5, 0.7),
                                  "concentration": P(0.2, -0.3)},
        lambda p: stats.genpareto(p["concentration"], p["loc"], p["scale"]), x=P(0.9, 0.5),
        checks="cdf icdf entropy mean variance", torch32=True),
    Row("Kumaraswamy", {"concentration1": P(0.7, 3.0), "concentration0": P(2.0, 1.5)}, None,
        x=P(0.3, 0.8), checks="entropy mean variance"),
    Row("ContinuousBernoulli", {"probs": P(0.2, 0.7)}, None, x=P(0.3, 0.8),
        checks="cdf icdf entropy mean variance", q={"probs": P(0.5, 0.9)}),
    Row("Poisson", {"rate": P(0.7, 4.0)}, lambda p: stats.poisson(p["rate"]), x=P(0.0, 3.0),
        checks="mean variance", q={"rate": P(1.0, 2.0)}),
    Row("Binomial", {"total_count": P(5.0, 5.0), "probs": P(0.2, 0.7)},
        lambda p: stats.binom(p["total_count"], p["probs"]), x=P(0.0, 3.0),
        checks="entropy mean variance", q={"total_count": P(5.0, 5.0), "probs": P(0.5, 0.6)}),
    Row("Geometric", {"probs": P(0.2, 0.7)}, lambda p: stats.geom(p["probs"], loc=-1),
        x=P(0.0, 3.0), checks="entropy mean variance", q={"probs": P(0.5, 0.6)}),
    Row("NegativeBinomial", {"total_count": P(2.0, 4.5), "probs": P(0.2, 0.7)},
        lambda p: stats.nbinom(p["total_count"], 1 - p["probs"]), x=P(0.0, 3.0),
        checks="mean variance"),
    Row("Bernoulli", {"probs": P(0.2, 0.7)}, lambda p: stats.bernoulli(p["probs"]),
        x=P(0.0, 1.0), checks="entropy mean variance", q={"probs": P(0.5, 0.6)}),
]
CONTINUOUS = {"Normal", "Uniform", "Exponential", "Laplace", "Cauchy", "Gumbel", "HalfNormal",
              "HalfCauchy", "LogNormal", "Gamma", "Chi2", "Beta", "StudentT", "Pareto", "Weibull",
              "InverseGamma", "FisherSnedecor", "VonMises", "GeneralizedPareto"}
BY_NAME = {r.name: r for r in ROWS}


def np64(params):
    return {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}


def close(actual, expected, rtol=1e-7, atol=1e-10):
    a = actual.detach().numpy() if hasattr(actual, "detach") else np.asarray(actual)
    np.testing.assert_allclose(a, np.asarray(expected, dtype=np.float64), rtol=rtol, atol=atol)


@pytest.mark.parametrize("row", [r for r in ROWS if r.scipy is not None], ids=repr)
def test_against_scipy(row):
    d, _ = row.make(dg)
    law = row.scipy(np64(row.params))
    x = np.asarray(row.x)
    discrete = row.name not in CONTINUOUS
    close(d.log_prob(row.value(dg)), law.logpmf(x) if discrete else law.logpdf(x))
    if "cdf" in row.checks:
        close(d.cdf(row.value(dg)), law.cdf(x))
    if "icdf" in row.checks:
        u = np.array([0.2, 0.7])
        close(d.icdf(dg.tensor(u)), law.ppf(u), rtol=1e-6)
    if "entropy" in row.checks:
        close(d.entropy(), law.entropy(), rtol=1e-6)
    if "mean" in row.checks:
        close(d.mean, law.mean())
    if "variance" in row.checks:
        close(d.variance, law.var(), rtol=1e-6)
        close(d.stddev, law.std(), rtol=1e-6)


METHODS = ("mean", "mode", "variance", "entropy", "cdf", "icdf")


@pytest.mark.parametrize("row", ROWS, ids=repr)
def test_against_torch(row):
    """log_prob, its gradients in every parameter, the other methods, and shapes."""
    ours, our_args = row.make(dg, grad=True)
    theirs, their_args = row.make(torch, grad=True)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    lp, tlp = ours.log_prob(row.value(dg)), theirs.log_prob(row.value(torch))
    close(lp, tlp.detach(), rtol=row.rtol)
    lp.sum().backward()
    tlp.sum().backward()
    for k, v in our_args.items():
        if isinstance(v, dg.Tensor) and their_args[k].grad is not None:
            close(v.grad, their_args[k].grad, rtol=10 * row.rtol, atol=1e-7)
    for name in METHODS:
        if name == "mode" and row.name == "Kumaraswamy":
            continue  # torch's Kumaraswamy.mode is nan where the mode exists: checked below
        if name in ("cdf", "icdf"):
            arg = row.value(torch) if name == "cdf" else torch.tensor([0.2, 0.7],
                                                                      dtype=row.torch_dtype)
            try:
                want = getattr(theirs, name)(arg)
            except NotImplementedError:
                continue
            got = getattr(ours, name)(dg.tensor(arg.numpy().astype(np.float64)))
        else:
            try:
                want = getattr(theirs, name)
                want = want() if callable(want) else want
            except NotImplementedError:
                continue
            got = getattr(ours, name)
            got = got() if callable(got) else got
        close(got, want.detach(), rtol=row.rtol, atol=1e-9)
    for shape in [(), (4,), (2, 3)]:
        assert tuple(ours.sample(shape).shape) == tuple(theirs.sample(shape).shape)
    big = ours.expand((3, 2))
    assert tuple(big.batch_shape) == (3, 2)
    close(big.log_prob(row.value(dg)), theirs.expand((3, 2)).log_prob(row.value(torch))
          .detach(), rtol=row.rtol)
    assert ours.has_rsample == theirs.has_rsample
    assert ours.support.is_discrete == theirs.support.is_discrete


@pytest.mark.parametrize("row", [r for r in ROWS if r.scipy is not None], ids=repr)
def test_sampler_fits_the_law(row):
    """KS (continuous) or chi-square (discrete) on one batch element, fixed seed."""
    dg.manual_seed(1234)
    d, _ = row.make(dg)
    draws = d.sample((row.n,)).numpy()[:, 1]
    law = row.scipy({k: np.asarray(v)[1] for k, v in np64(row.params).items()})
    if row.name == "VonMises":  # SciPy's von Mises cdf is slow: integrate the pdf on a grid
        from scipy.integrate import cumulative_trapezoid
        grid = np.linspace(-math.pi, math.pi, 20001)
        cdf = cumulative_trapezoid(law.pdf(grid), grid, initial=0)
        assert stats.kstest(draws, lambda v: np.interp(v, grid, cdf)).pvalue > 1e-3
    elif row.name in CONTINUOUS:
        assert stats.kstest(draws, law.cdf).pvalue > 1e-3
    else:
        support = np.arange(0, int(law.ppf(0.995)) + 1)
        counts = np.array([(draws == k).sum() for k in support[:-1]]
                          + [(draws >= support[-1]).sum()])
        probs = law.pmf(support[:-1])
        probs = np.append(probs, 1 - probs.sum())
        keep = probs * row.n >= 5
        assert stats.chisquare(counts[keep], probs[keep] / probs[keep].sum()
                               * counts[keep].sum()).pvalue > 1e-3
    if "variance" in row.checks and np.isfinite(law.var()):
        assert abs(draws.mean() - law.mean()) < 5 * math.sqrt(law.var() / row.n)


def test_kumaraswamy_density_and_sampler():
    """No SciPy law: the density a b x^(a-1) (1 - x^a)^(b-1), its integral and the sampler."""
    from scipy import integrate
    a, b = 0.7, 2.0
    d = D.Kumaraswamy(dg.tensor(a, dtype=dg.float64), dg.tensor(b, dtype=dg.float64))
    x = np.array([0.1, 0.5, 0.9])
    close(d.log_prob(dg.tensor(x)).exp(), a * b * x ** (a - 1) * (1 - x ** a) ** (b - 1))
    mean = integrate.quad(lambda v: v * a * b * v ** (a - 1) * (1 - v ** a) ** (b - 1), 0, 1)[0]
    close(d.mean, mean, rtol=1e-6)
    b2 = D.Kumaraswamy(dg.tensor(3.0, dtype=dg.float64), dg.tensor(1.5, dtype=dg.float64))
    grid = np.linspace(0.01, 0.99, 9801)
    assert abs(float(b2.mode) - grid[np.argmax(b2.log_prob(dg.tensor(grid)).numpy())]) < 1e-3
    assert math.isnan(float(d.mode))  # a < 1: the density has no interior maximum
    dg.manual_seed(3)
    draws = d.sample((2000,)).numpy()
    assert stats.kstest(draws, lambda v: 1 - (1 - v ** a) ** b).pvalue > 1e-3
