"""The samplers dg.random adds for distributions: poisson, binomial, the gamma and Dirichlet draws,
the in-place fills (random_ exponential_ geometric_ cauchy_ log_normal_), Tensor.bernoulli and
Tensor.multinomial, normal with tensors and fork_rng.

Every check uses a fixed seed: moments within a few standard errors and a goodness-of-fit test
(Kolmogorov-Smirnov for continuous laws, chi-square for discrete ones) at a 1e-3 level, so the
outcome is the same on every run and a wrong law fails it.
"""
import numpy as np
import pytest
from scipy import stats

import dynagrad as dg

N = 4000


def gen(seed=0):
    return dg.Generator().manual_seed(seed)


def chisquare_pvalue(draws, pmf, support):
    """p-value of a chi-square test of integer ``draws`` against ``pmf`` on ``support``, the
    last bin taking the tail."""
    counts = np.array([(draws == k).sum() for k in support[:-1]] + [(draws >= support[-1]).sum()])
    probs = pmf(np.asarray(support[:-1]))
    probs = np.append(probs, 1 - probs.sum())
    return stats.chisquare(counts, probs * draws.size).pvalue


def test_poisson_law_dtype_and_seed():
    rates = dg.full((N,), 3.5, dtype=dg.float64)
    x = dg.poisson(rates, generator=gen()).numpy()
    assert dg.poisson(rates, generator=gen()).dtype is dg.float64
    assert abs(x.mean() - 3.5) < 4 * np.sqrt(3.5 / N)
    assert chisquare_pvalue(x, lambda k: stats.poisson.pmf(k, 3.5), list(range(10))) > 1e-3
    assert (dg.poisson(rates, generator=gen()).numpy() == x).all()
    assert dg.poisson(dg.tensor([0.0, 0.0]), generator=gen()).tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-neg"):
        dg.poisson(dg.tensor([-1.0]))


def test_binomial_law_and_errors():
    n, p = dg.full((N,), 8.0), dg.full((N,), 0.3)
    x = dg.binomial(n, p, generator=gen(1)).numpy()
    assert abs(x.mean() - 2.4) < 4 * np.sqrt(8 * 0.3 * 0.7 / N)
    assert chisquare_pvalue(x, lambda k: stats.binom.pmf(k, 8, 0.3), list(range(7))) > 1e-3
    assert dg.binomial(dg.tensor([5.0, 5.0]), dg.tensor([0.0, 1.0])).tolist() == [0.0, 5.0]
    with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for count"):
        dg.binomial(dg.tensor([2]), dg.tensor([0.5]))


@pytest.mark.parametrize("alpha", [0.4, 2.5])
def test_standard_gamma_law(alpha):
    x = dg._standard_gamma(dg.full((N,), alpha, dtype=dg.float64), generator=gen(2)).numpy()
    assert stats.kstest(x, stats.gamma(alpha).cdf).pvalue > 1e-3
    assert abs(x.mean() - alpha) < 4 * np.sqrt(alpha / N)


def test_standard_gamma_gradient_is_the_quantile_derivative():
    """dx/dalpha at a fixed quantile u = P(alpha, x): a central difference of SciPy's inverse
    incomplete gamma function; torch's _standard_gamma_grad (an approximation good to ~1e-4)
    agrees too."""
    from scipy import special
    torch = pytest.importorskip("torch")
    a = dg.tensor([0.3, 1.0, 2.5, 7.0], dtype=dg.float64, requires_grad=True)
    x = dg._standard_gamma(a, generator=gen(3))
    x.sum().backward()
    al, xs = np.array(a.tolist()), np.array(x.tolist())
    u, h = special.gammainc(al, xs), 1e-6
    want = (special.gammaincinv(al + h, u) - special.gammaincinv(al - h, u)) / (2 * h)
    np.testing.assert_allclose(a.grad.numpy(), want, rtol=1e-6)
    theirs = torch._standard_gamma_grad(torch.tensor(al), torch.tensor(xs))
    np.testing.assert_allclose(a.grad.numpy(), theirs.numpy(), rtol=3e-4)


def test_sample_dirichlet_moments():
    alpha = np.array([0.5, 2.0, 3.5])
    x = dg._sample_dirichlet(dg.tensor(np.tile(alpha, (N, 1))), generator=gen(4)).numpy()
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    mean = alpha / alpha.sum()
    var = mean * (1 - mean) / (alpha.sum() + 1)
    assert (np.abs(x.mean(0) - mean) < 4 * np.sqrt(var / N)).all()
    assert stats.kstest(x[:, 0], stats.beta(0.5, 5.5).cdf).pvalue > 1e-3


@pytest.mark.parametrize("fill, law", [
    (lambda t, g: t.exponential_(2.0, generator=g), stats.expon(scale=0.5)),
    (lambda t, g: t.cauchy_(1.0, 0.5, generator=g), stats.cauchy(1.0, 0.5)),
    (lambda t, g: t.log_normal_(0.5, 0.25, generator=g), stats.lognorm(0.25, scale=np.exp(0.5))),
])
def test_continuous_fills(fill, law):
    t = dg.empty(N, dtype=dg.float64)
    assert fill(t, gen(5)) is t
    assert stats.kstest(t.numpy(), law.cdf).pvalue > 1e-3
    again = fill(dg.empty(N, dtype=dg.float64), gen(5))
    assert (again.numpy() == t.numpy()).all()


def test_geometric_fill_counts_trials():
    t = dg.empty(N).geometric_(0.3, generator=gen(6))
    x = t.numpy()
    assert x.min() >= 1 and np.all(x == np.round(x))
    assert chisquare_pvalue(x, lambda k: stats.geom.pmf(k, 0.3), list(range(1, 12))) > 1e-3


def test_random_fill_ranges():
    x = dg.empty(N, dtype=dg.int64).random_(2, 7, generator=gen(7)).numpy()
    assert set(x.tolist()) == {2, 3, 4, 5, 6}
    assert stats.chisquare(np.bincount(x)[2:]).pvalue > 1e-3
    assert set(dg.empty(200).random_(3, generator=gen(8)).tolist()) == {0.0, 1.0, 2.0}
    big = dg.empty(200).random_(generator=gen(9)).numpy()
    assert big.max() <= 2 ** 24 and big.max() > 2 ** 23 and np.all(big == np.round(big))
    u8 = dg.empty(500, dtype=dg.uint8).random_(generator=gen(9)).numpy()
    assert u8.max() > 240 and u8.dtype == np.uint8
    assert dg.empty(3).random_(**{"from": 5}).min().item() >= 5


@pytest.mark.parametrize("call, match", [
    (lambda: dg.empty(3).random_(5, 2), "random_ expects .from. to be less than .to., but got from=5"),
    (lambda: dg.empty(3).exponential_(-1), "exponential_ expects lambda > 0.0, but found lambda=-1"),
    (lambda: dg.empty(3).geometric_(0), r"geometric_ expects p to be in \(0, 1\), but got p=0"),
    (lambda: dg.empty(3).cauchy_(0, -1), "cauchy_ expects sigma > 0.0, but found sigma=-1"),
    (lambda: dg.empty(3).log_normal_(0, -1), "log_normal_ expects std > 0.0, but found std=-1"),
    (lambda: dg.empty(3, dtype=dg.int64).exponential_(), "dtype must be a floating point"),
])
def test_fill_errors_match_torch(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


def test_bernoulli_and_multinomial_methods():
    p = dg.tensor([0.1, 0.5, 0.9] * 400)
    assert p.bernoulli(generator=gen(10)).tolist() == dg.bernoulli(p, generator=gen(10)).tolist()
    draws = p.bernoulli(generator=gen(10)).numpy().reshape(-1, 3)
    assert (np.abs(draws.mean(0) - [0.1, 0.5, 0.9]) < 0.05).all()
    assert set(p.bernoulli(0.0).tolist()) == {0.0}
    w = dg.tensor([[1.0, 0.0, 3.0], [0.0, 1.0, 0.0]])
    idx = w.multinomial(400, True, generator=gen(11)).numpy()
    assert idx.shape == (2, 400) and set(idx[1].tolist()) == {1}
    assert abs((idx[0] == 2).mean() - 0.75) < 0.08 and not (idx[0] == 1).any()
    assert sorted(w[0].multinomial(2, generator=gen(12)).tolist()) == [0, 2]


def test_normal_with_tensors_broadcasts():
    torch = pytest.importorskip("torch")
    mean = dg.tensor([0.0, 10.0, -5.0], dtype=dg.float64)
    std = dg.tensor([[1.0], [0.1]], dtype=dg.float32)
    x = dg.normal(mean, std, generator=gen(13))
    want = torch.normal(torch.zeros(3, dtype=torch.float64), torch.ones(2, 1))
    assert x.shape == tuple(want.shape) and x.dtype.name == str(want.dtype).split(".")[1]
    big = dg.normal(dg.full((N,), 2.0), dg.full((N,), 3.0), generator=gen(14)).numpy()
    assert stats.kstest(big, stats.norm(2.0, 3.0).cdf).pvalue > 1e-3
    assert dg.normal(1.0, dg.full((N,), 0.5), generator=gen(14)).shape == (N,)


def test_fork_rng_restores_state():
    dg.manual_seed(21)
    with dg.random.fork_rng():
        inside = dg.rand(4).tolist()
        dg.manual_seed(0)
    assert dg.rand(4).tolist() == inside
    with dg.random.fork_rng(enabled=False):
        dg.rand(1)
    dg.manual_seed(21)
    dg.rand(4)
    after = dg.rand(1).tolist()
    dg.manual_seed(21)
    with dg.random.fork_rng(devices=[]):
        dg.rand(4)
    dg.rand(4)
    assert dg.rand(1).tolist() == after


def test_cuda_fills_match_cpu_for_one_seed():
    """The same seed gives the same numbers on CPU and CUDA (the simulator without a GPU)."""
    if not dg.cuda.is_available():
        pytest.skip("numba-cuda missing")
    for fill in (lambda t, g: t.exponential_(generator=g), lambda t, g: t.random_(10, generator=g),
                 lambda t, g: t.log_normal_(generator=g)):
        cpu = fill(dg.empty(5), gen(15))
        cuda = fill(dg.empty(5, device="cuda"), dg.Generator("cuda").manual_seed(15))
        assert cuda.cpu().tolist() == cpu.tolist()
    rates = dg.tensor([1.0, 4.0, 9.0])
    assert (dg.poisson(rates.cuda(), generator=gen(16)).cpu().tolist()
            == dg.poisson(rates, generator=gen(16)).tolist())


def test_thread_safe_generator_is_none_outside_thread_workers():
    import torch
    # dynagrad's DataLoader workers are processes: PyTorch answers None there and in the main
    # process alike
    assert dg.thread_safe_generator() is None
    assert torch.thread_safe_generator() is None
