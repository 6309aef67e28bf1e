"""Multivariate, discrete-vector and composite distributions (against scipy.stats where it has
the law, else torch), reparameterized gradients, and validation errors."""
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


def both(name, grad=False, **params):
    """The same distribution from dg and from torch (float64 tensors for array params), and
    the dg/torch parameter tensors."""
    ours, theirs = {}, {}
    for k, v in params.items():
        if isinstance(v, np.ndarray):
            ours[k] = dg.tensor(v, requires_grad=grad)
            theirs[k] = torch.tensor(v, requires_grad=grad)
        else:
            ours[k] = theirs[k] = v
    return (getattr(D, name)(**ours), getattr(TD, name)(**theirs)), (ours, theirs)


def close(actual, expected, rtol=1e-7, atol=1e-10):
    a = actual.detach().numpy() if hasattr(actual, "detach") else np.asarray(actual)
    e = expected.detach().numpy() if hasattr(expected, "detach") else expected
    np.testing.assert_allclose(a, np.asarray(e, dtype=np.float64), rtol=rtol, atol=atol)


def check_like_torch(name, value, methods=("mean", "variance", "entropy"), rtol=1e-6, **params):
    """log_prob, its parameter gradients, the given methods and the shapes equal torch's."""
    (ours, theirs), (oa, ta) = both(name, grad=True, **params)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    lp = ours.log_prob(dg.tensor(value))
    tlp = theirs.log_prob(torch.tensor(value))
    close(lp, tlp, rtol=rtol)
    lp.sum().backward()
    tlp.sum().backward()
    for k, v in oa.items():
        if isinstance(v, dg.Tensor) and ta[k].grad is not None:
            close(v.grad, ta[k].grad, rtol=10 * rtol, atol=1e-8)
    for m in methods:
        got, want = getattr(ours, m), getattr(theirs, m)
        close(got() if callable(got) else got, want() if callable(want) else want, rtol=rtol)
    for shape in [(), (3,)]:
        assert tuple(ours.sample(shape).shape) == tuple(theirs.sample(shape).shape)
    assert tuple(ours.expand((2,) + tuple(ours.batch_shape)).sample().shape) == \
        tuple(theirs.expand((2,) + tuple(theirs.batch_shape)).sample().shape)
    return ours


# --- against scipy.stats ---------------------------------------------------------------------

def test_multivariate_normal_all_parameterisations():
    mean, cov = np.array([0.5, -1.0, 2.0]), spd(3, 0)
    x = np.array([[0.1, 0.2, 0.3], [1.0, -2.0, 0.5]])
    law = stats.multivariate_normal(mean, cov)
    prec = np.linalg.inv(cov)
    for kw in ({"covariance_matrix": cov}, {"precision_matrix": prec},
               {"scale_tril": np.linalg.cholesky(cov)}):
        d = D.MultivariateNormal(dg.tensor(mean), **{k: dg.tensor(v) for k, v in kw.items()})
        close(d.log_prob(dg.tensor(x)), law.logpdf(x))
        close(d.entropy(), law.entropy())
        close(d.covariance_matrix, cov)
        close(d.precision_matrix, prec, rtol=1e-6)
        close(d.variance, np.diag(cov))
    check_like_torch("MultivariateNormal", x, loc=mean, covariance_matrix=cov)
    check_like_torch("MultivariateNormal", x, loc=mean, precision_matrix=prec)
    dg.manual_seed(0)
    draws = d.sample((3000,)).numpy()
    np.testing.assert_allclose(draws.mean(0), mean, atol=5 * np.sqrt(cov.diagonal().max() / 3000))
    np.testing.assert_allclose(np.cov(draws.T), cov, rtol=0.15, atol=0.3)
    # each draw's Mahalanobis distance is chi-squared with 3 degrees of freedom
    m = np.einsum("ni,ij,nj->n", draws - mean, prec, draws - mean)
    assert stats.kstest(m, stats.chi2(3).cdf).pvalue > 1e-3


def test_lowrank_multivariate_normal():
    rng = np.random.default_rng(1)
    mean, w, diag = rng.normal(size=3), rng.normal(size=(3, 2)), np.array([0.5, 1.0, 2.0])
    cov = w @ w.T + np.diag(diag)
    x = rng.normal(size=(4, 3))
    d = D.LowRankMultivariateNormal(dg.tensor(mean), dg.tensor(w), dg.tensor(diag))
    law = stats.multivariate_normal(mean, cov)
    close(d.log_prob(dg.tensor(x)), law.logpdf(x))
    close(d.entropy(), law.entropy())
    close(d.covariance_matrix, cov)
    close(d.precision_matrix, np.linalg.inv(cov), rtol=1e-6)
    close(d.scale_tril.matmul(d.scale_tril.mT), cov)
    close(d.variance, np.diag(cov))
    check_like_torch("LowRankMultivariateNormal", x, loc=mean, cov_factor=w, cov_diag=diag)
    dg.manual_seed(1)
    draws = d.sample((3000,)).numpy()
    m = np.einsum("ni,ij,nj->n", draws - mean, np.linalg.inv(cov), draws - mean)
    assert stats.kstest(m, stats.chi2(3).cdf).pvalue > 1e-3


def test_dirichlet_and_beta():
    alpha = np.array([[0.7, 2.0, 3.5], [1.5, 1.5, 0.9]])
    x = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    d = D.Dirichlet(dg.tensor(alpha))
    for i in range(2):
        law = stats.dirichlet(alpha[i])
        close(d.log_prob(dg.tensor(x))[i], law.logpdf(x[i]))
        close(d.entropy()[i], law.entropy())
        close(d.mean[i], law.mean())
        close(d.variance[i], law.var())
    check_like_torch("Dirichlet", x, methods=("mean", "variance", "entropy", "mode"),
                     concentration=alpha)
    dg.manual_seed(2)
    draws = d.sample((2000,)).numpy()[:, 0, 0]
    assert stats.kstest(draws, stats.beta(0.7, 5.5).cdf).pvalue > 1e-3


def test_multinomial():
    p = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
    x = np.array([[1.0, 2.0, 1.0], [4.0, 0.0, 0.0]])
    d = D.Multinomial(4, probs=dg.tensor(p))
    for i in range(2):
        law = stats.multinomial(4, p[i])
        close(d.log_prob(dg.tensor(x))[i], law.logpmf(x[i]))
        close(d.entropy()[i], law.entropy(), rtol=1e-6)
        close(d.mean[i], 4 * p[i])
    check_like_torch("Multinomial", x, methods=("mean", "variance", "entropy"), total_count=4,
                     probs=p)
    dg.manual_seed(3)
    draws = d.sample((2000,)).numpy()
    assert (draws.sum(-1) == 4).all()
    np.testing.assert_allclose(draws.mean(0), 4 * p, atol=0.12)


def test_wishart():
    cov = spd(3, 2)
    x = spd(3, 3)
    d = D.Wishart(dg.tensor(5.0, dtype=dg.float64), covariance_matrix=dg.tensor(cov))
    law = stats.wishart(5.0, cov)
    close(d.log_prob(dg.tensor(x)), law.logpdf(x))
    close(d.entropy(), law.entropy(), rtol=1e-6)
    close(d.mean, law.mean())
    close(d.variance, law.var())
    check_like_torch("Wishart", x, methods=("mean", "variance", "entropy", "mode"),
                     df=np.array(5.0), covariance_matrix=cov)
    dg.manual_seed(4)
    draws = d.sample((2000,)).numpy()
    np.testing.assert_allclose(draws.mean(0), 5 * cov, rtol=0.1, atol=1.0)
    # the (0, 0) entry of a Wishart matrix is cov[0, 0] * chi2(df)
    assert stats.kstest(draws[:, 0, 0] / cov[0, 0], stats.chi2(5).cdf).pvalue > 1e-3


# --- against torch (no SciPy law) -----------------------------------------------------------

def test_categorical_and_one_hot():
    p = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
    check_like_torch("Categorical", np.array([1.0, 2.0]), methods=("entropy", "mode"), probs=p)
    check_like_torch("Categorical", np.array([[0.0, 2.0]]), methods=("entropy",),
                     logits=np.log(p))
    check_like_torch("OneHotCategorical", np.eye(3)[[1, 0]], methods=("mean", "variance",
                                                                      "entropy", "mode"), probs=p)
    d = D.Categorical(probs=dg.tensor(p))
    close(d.log_prob(dg.tensor([1, 2])), np.log([0.5, 0.3]))
    assert d.enumerate_support().tolist() == [[0, 0], [1, 1], [2, 2]]
    dg.manual_seed(5)
    draws = d.sample((3000,)).numpy()
    for i in range(2):
        counts = np.bincount(draws[:, i], minlength=3)
        assert stats.chisquare(counts, p[i] * 3000).pvalue > 1e-3
    onehot = D.OneHotCategorical(probs=dg.tensor(p))
    assert tuple(onehot.enumerate_support().shape) == (3, 2, 3)
    st = D.OneHotCategoricalStraightThrough(probs=dg.tensor(p, requires_grad=True))
    sample = st.rsample()
    assert set(sample.detach().numpy().ravel().tolist()) <= {0.0, 1.0}
    (sample * dg.tensor([1.0, 2.0, 3.0], dtype=dg.float64)).sum().backward()


def test_relaxed_and_logistic_normal():
    p = np.array([0.2, 0.5, 0.3])
    t = np.array(0.7)
    check_like_torch("RelaxedOneHotCategorical", np.array([0.1, 0.6, 0.3]), methods=(),
                     temperature=t, probs=p)
    check_like_torch("RelaxedBernoulli", np.array([0.1, 0.6, 0.3]), methods=(), temperature=t,
                     probs=p)
    check_like_torch("LogisticNormal", np.array([0.1, 0.6, 0.3]), methods=(),
                     loc=np.array([0.2, -0.1]), scale=np.array([1.0, 0.5]))
    dg.manual_seed(6)
    r = D.RelaxedOneHotCategorical(dg.tensor(0.7, dtype=dg.float64), probs=dg.tensor(p))
    draws = r.rsample((2000,)).numpy()
    np.testing.assert_allclose(draws.sum(-1), 1.0, rtol=1e-10)
    # as temperature -> 0 the argmax of a sample is Categorical(p)
    cold = D.RelaxedOneHotCategorical(dg.tensor(1e-3, dtype=dg.float64), probs=dg.tensor(p))
    counts = np.bincount(cold.sample((3000,)).numpy().argmax(-1), minlength=3)
    assert stats.chisquare(counts, p * 3000).pvalue > 1e-3


def test_lkj_cholesky():
    d = check_like_torch("LKJCholesky", np.linalg.cholesky(
        np.array([[1.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.0]])), methods=(),
        dim=3, concentration=np.array(1.5))
    dg.manual_seed(7)
    lower = d.sample((2000,)).numpy()
    corr = lower @ np.swapaxes(lower, -1, -2)
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, rtol=1e-10)
    # for LKJ(eta) in dim d each off-diagonal r has (r + 1) / 2 ~ Beta(b, b), b = eta - 1 + d/2
    b = 1.5 - 1 + 3 / 2
    assert stats.kstest((corr[:, 1, 0] + 1) / 2, stats.beta(b, b).cdf).pvalue > 1e-3


def test_mixture_same_family():
    mix = D.Categorical(probs=dg.tensor([0.3, 0.7], dtype=dg.float64))
    comp = D.Normal(dg.tensor([-1.0, 2.0], dtype=dg.float64),
                    dg.tensor([0.5, 1.5], dtype=dg.float64))
    d = D.MixtureSameFamily(mix, comp)
    t = TD.MixtureSameFamily(TD.Categorical(torch.tensor([0.3, 0.7], dtype=torch.float64)),
                             TD.Normal(torch.tensor([-1.0, 2.0], dtype=torch.float64),
                                       torch.tensor([0.5, 1.5], dtype=torch.float64)))
    x = np.array([0.1, -1.2, 3.0])
    close(d.log_prob(dg.tensor(x)), t.log_prob(torch.tensor(x)))
    close(d.cdf(dg.tensor(x)), t.cdf(torch.tensor(x)))
    close(d.mean, t.mean)
    close(d.variance, t.variance)
    dg.manual_seed(8)
    draws = d.sample((2000,)).numpy()
    cdf = lambda v: 0.3 * stats.norm(-1, 0.5).cdf(v) + 0.7 * stats.norm(2, 1.5).cdf(v)
    assert stats.kstest(draws, cdf).pvalue > 1e-3
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(D.Categorical(probs=dg.ones(3)), comp)


def test_independent_and_transformed():
    loc, scale = np.array([[0.1, 0.2], [0.3, 0.4]]), np.array([[1.0, 2.0], [0.5, 1.5]])
    ours = D.Independent(D.Normal(dg.tensor(loc), dg.tensor(scale)), 1)
    theirs = TD.Independent(TD.Normal(torch.tensor(loc), torch.tensor(scale)), 1)
    x = np.array([0.5, -0.5])
    assert tuple(ours.batch_shape) == (2,) and tuple(ours.event_shape) == (2,)
    close(ours.log_prob(dg.tensor(x)), theirs.log_prob(torch.tensor(x)))
    close(ours.entropy(), theirs.entropy())
    base = D.Normal(dg.tensor(loc), dg.tensor(scale))
    affine = D.TransformedDistribution(base, [D.AffineTransform(1.0, 2.0), D.ExpTransform()])
    tbase = TD.Normal(torch.tensor(loc), torch.tensor(scale))
    taffine = TD.TransformedDistribution(tbase, [TD.AffineTransform(1.0, 2.0),
                                                 TD.ExpTransform()])
    y = np.array([[0.5, 1.5], [2.0, 3.0]])
    close(affine.log_prob(dg.tensor(y)), taffine.log_prob(torch.tensor(y)))
    close(affine.cdf(dg.tensor(y)), taffine.cdf(torch.tensor(y)))
    close(affine.icdf(dg.tensor([[0.2, 0.5], [0.7, 0.9]], dtype=dg.float64)),
          taffine.icdf(torch.tensor([[0.2, 0.5], [0.7, 0.9]], dtype=torch.float64)))
    decreasing = D.TransformedDistribution(base, [D.AffineTransform(0.0, -1.0)])
    # P(-X <= y) = 1 - P(X < -y): a decreasing transform flips the cdf
    close(decreasing.cdf(dg.tensor(y)), 1 - stats.norm(loc, scale).cdf(-y))


# --- reparameterized gradients ---------------------------------------------------------------

def test_pathwise_gradients_normal_and_lognormal_are_exact():
    for cls in (D.Normal, D.LogNormal):
        loc = dg.tensor([0.3, -0.5], dtype=dg.float64, requires_grad=True)
        scale = dg.tensor([1.2, 0.4], dtype=dg.float64, requires_grad=True)
        dg.manual_seed(9)
        x = cls(loc, scale).rsample((5,))
        x.sum().backward()
        z = x.detach().numpy() if cls is D.Normal else np.log(x.detach().numpy())
        eps = (z - loc.detach().numpy()) / scale.detach().numpy()
        dx = np.ones_like(z) if cls is D.Normal else x.detach().numpy()  # dx/dz
        close(loc.grad, dx.sum(0))
        close(scale.grad, (dx * eps).sum(0))


def test_gamma_family_reparameterized_gradients():
    """Gamma: dx/drate = -x/rate exactly; Beta and Dirichlet: the average pathwise gradient of
    the sample matches the derivative of the mean."""
    conc = dg.tensor([0.8, 3.0], dtype=dg.float64, requires_grad=True)
    rate = dg.tensor([2.0, 0.5], dtype=dg.float64, requires_grad=True)
    x = D.Gamma(conc, rate).rsample((4,))
    x.sum().backward()
    close(rate.grad, (-x.detach().numpy() / rate.detach().numpy()).sum(0))
    assert np.isfinite(conc.grad.numpy()).all() and (conc.grad.numpy() > 0).all()
    a = dg.tensor(2.0, dtype=dg.float64, requires_grad=True)
    b = dg.tensor(3.0, dtype=dg.float64, requires_grad=True)
    dg.manual_seed(10)
    D.Beta(a, b).rsample((4000,)).mean().backward()
    # d/da a / (a + b) = b / (a + b)^2 = 0.12, d/db = -a / (a + b)^2 = -0.08
    assert abs(a.grad.item() - 0.12) < 0.01 and abs(b.grad.item() + 0.08) < 0.01
    for cls in (D.Chi2, D.StudentT, D.FisherSnedecor, D.Dirichlet, D.InverseGamma):
        args = {D.Chi2: (3.0,), D.StudentT: (3.0,), D.FisherSnedecor: (3.0, 5.0),
                D.Dirichlet: ([1.0, 2.0],), D.InverseGamma: (3.0, 2.0)}[cls]
        params = [dg.tensor(v, dtype=dg.float64, requires_grad=True) for v in args]
        cls(*params).rsample((3,)).sum().backward()
        assert all(np.isfinite(p.grad.numpy()).all() for p in params)


# --- validation ------------------------------------------------------------------------------

def test_validate_args_messages_match_torch():
    def message(fn):
        with pytest.raises(ValueError) as info:
            fn()
        return str(info.value)
    ours = message(lambda: D.Normal(dg.tensor([0.0]), dg.tensor([-1.0])))
    theirs = message(lambda: TD.Normal(torch.tensor([0.0]), torch.tensor([-1.0])))
    assert ours.split("of distribution")[0] == theirs.split("of distribution")[0]
    assert "to satisfy the constraint GreaterThan(lower_bound=0.0)" in ours
    assert message(lambda: D.Bernoulli(probs=dg.tensor(0.5), logits=dg.tensor(0.0))) == \
        message(lambda: TD.Bernoulli(probs=torch.tensor(0.5), logits=torch.tensor(0.0)))
    assert message(lambda: D.Categorical(probs=dg.tensor(0.5))) == \
        message(lambda: TD.Categorical(probs=torch.tensor(0.5)))
    assert message(lambda: D.Uniform(1.0, 0.0)) == message(lambda: TD.Uniform(1.0, 0.0))
    ours = message(lambda: D.Exponential(dg.tensor(1.0)).log_prob(dg.tensor([-1.0])))
    theirs = message(lambda: TD.Exponential(torch.tensor(1.0)).log_prob(torch.tensor([-1.0])))
    assert ours.split("of the distribution")[0] == theirs.split("of the distribution")[0]
    ours = message(lambda: D.MultivariateNormal(dg.zeros(2), dg.eye(2)).log_prob(dg.zeros(3)))
    assert ours.startswith("The right-most size of value must match event_shape")
    assert message(lambda: D.MultivariateNormal(dg.zeros(2))) == \
        message(lambda: TD.MultivariateNormal(torch.zeros(2)))
    D.Normal(dg.tensor([0.0]), dg.tensor([-1.0]), validate_args=False)  # no check
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(dg.tensor([0.0]), dg.tensor([-1.0]))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(dg.tensor([0.0]), dg.tensor([-1.0]))


def test_distribution_base_api():
    d = D.Normal(dg.zeros(2), dg.ones(2))
    assert float(d.perplexity()[0]) == pytest.approx(math.exp(0.5 + 0.5 * math.log(2 * math.pi)))
    with pytest.warns(UserWarning):
        assert tuple(d.sample_n(3).shape) == (3, 2)
    with pytest.raises(NotImplementedError):
        D.Poisson(dg.tensor(1.0)).cdf(dg.tensor(1.0))
    assert D.Bernoulli(dg.tensor([0.3])).enumerate_support().tolist() == [[0.0], [1.0]]
    assert repr(D.Normal(0.0, 1.0)) == repr(TD.Normal(0.0, 1.0))
    assert isinstance(D.Gamma(1.0, 1.0), D.ExponentialFamily)
