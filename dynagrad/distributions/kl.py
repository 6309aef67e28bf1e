"""KL divergences KL(p || q) between distributions, looked up by the pair of types.

``register_kl(TypeP, TypeQ)`` adds an implementation; ``kl_divergence(p, q)`` picks the most
specific registered pair for ``type(p), type(q)`` by their method resolution orders.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.distributions import Normal, kl_divergence
    >>> float(kl_divergence(Normal(0.0, 1.0), Normal(0.0, 1.0)))
    0.0
"""
from __future__ import annotations

import math
import warnings

from ..autograd import grad as _grad
from ..nn.functional import softplus
from ..ops.decompositions import solve_triangular
from ..ops.special import digamma, lgamma, xlogy
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _lowrank_logdet,
    _lowrank_mahalanobis,
)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}  # (type_p, type_q) -> function(p, q)
_KL_MEMOIZE: dict = {}   # (type(p), type(q)) -> the chosen function

_EULER = 0.57721566490153286060
_INF = float("inf")


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for subclasses of ``type_p`` and
    ``type_q``.

    Example::

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q):
            ...
    """
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # a new entry may be more specific than a remembered choice
        return fun

    return decorator


def _dispatch_kl(type_p, type_q):
    """The registered function for the most specific pair of superclasses; warns when the most
    specific by p and the most specific by q differ."""
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented

    def depth(m):
        return type_p.__mro__.index(m[0]), type_q.__mro__.index(m[1])

    left = min(matches, key=depth)
    right = min(matches, key=lambda m: depth(m)[::-1])
    if _KL_REGISTRY[left] is not _KL_REGISTRY[right]:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please "
                      f"register_kl({left[0].__name__}, {right[1].__name__})", RuntimeWarning,
                      stacklevel=3)
    return _KL_REGISTRY[left]


def kl_divergence(p: Distribution, q: Distribution):
    """KL(p || q) = E_p[log p(x) - log q(x)], batched over the common batch shape."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _KL_MEMOIZE[type(p), type(q)] = _dispatch_kl(type(p), type(q))
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(t):
    return t.new_full(tuple(t.shape), _INF)


# --- same family ----------------------------------------------------------------------------

@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, _INF).masked_fill(p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, _INF).masked_fill(p.probs == 1, 0.0)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # only defined here for equal total counts; q.total_count < p's gives infinity
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is "
                                  "not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return kl.masked_fill(p.total_count > q.total_count, _INF)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand_as(t), _INF)
    t = t.masked_fill((p.probs == 0).expand_as(t), 0.0)
    return t.sum(-1)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = lgamma(sum_p) - lgamma(sum_q)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = digamma(p.concentration) - digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normaliser between the natural parameters."""
    if not type(p) is type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_nparams = [n.detach().requires_grad_() for n in p._natural_params]
    q_nparams = q._natural_params
    lg_normal = p._log_normalizer(*p_nparams)
    gradients = _grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        result = result - _sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * _EULER
    t3 = (ct2 + lgamma(1 + ct1) - ct3).exp()
    return t1 + t2 + t3 - (1 + _EULER)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


def _check_same_event(p, q, what):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with different event shapes cannot "
                         "be computed")


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmvn_lowrankmvn(p, q):
    _check_same_event(p, q, "Low Rank Multivariate Normals")
    return _kl_mvn_any(p, q, p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrankmvn(p, q):
    _check_same_event(p, q, "(Low Rank) Multivariate Normals")
    return _kl_mvn_any(p, q, None, None)


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmvn_mvn(p, q):
    _check_same_event(p, q, "(Low Rank) Multivariate Normals")
    return _kl_mvn_any(p, q, p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    _check_same_event(p, q, "Multivariate Normals")
    return _kl_mvn_any(p, q, None, None)


def _kl_mvn_any(p, q, p_factor, p_diag):
    """KL between Gaussians: (tr(S_q^-1 S_p) + m^T S_q^-1 m - n + log det S_q - log det S_p) / 2,
    each term through the Cholesky factors (or the Woodbury form of a low-rank q)."""
    n = p.event_shape[0]
    diff = q.loc - p.loc
    if isinstance(q, LowRankMultivariateNormal):
        qw, qd = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
        log_det_q = _lowrank_logdet(qw, qd, q._capacitance_tril)
        mahalanobis = _lowrank_mahalanobis(qw, qd, diff, q._capacitance_tril)
        trace = _lowrank_trace(q, p, p_factor, p_diag)
    else:
        lq = q._unbroadcasted_scale_tril
        log_det_q = 2 * lq.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        mahalanobis = _batch_mahalanobis(lq, diff)
        p_root = _p_root(p, p_factor, p_diag)
        trace = solve_triangular(lq, p_root, upper=False).pow(2).sum((-2, -1))
    if p_factor is not None:
        log_det_p = _lowrank_logdet(p_factor, p_diag, p._capacitance_tril)
    else:
        log_det_p = 2 * p._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    return 0.5 * (trace + mahalanobis - n + log_det_q - log_det_p)


def _p_root(p, p_factor, p_diag):
    """A matrix R with R R^T = covariance of p."""
    if p_factor is None:
        return p._unbroadcasted_scale_tril
    from ..ops.movement import cat
    from ..ops.structure import diag_embed
    return cat([p_factor, diag_embed(p_diag.sqrt())], -1)


def _lowrank_trace(q, p, p_factor, p_diag):
    """tr((W W^T + D)^-1 S_p) for low-rank q, by Woodbury: tr(D^-1 S_p) - ||C^-1 W^T D^-1 R||^2
    with R R^T = S_p and C the capacitance factor."""
    qw, qd = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    root = _p_root(p, p_factor, p_diag)
    t1 = (root.pow(2) / qd.unsqueeze(-1)).sum((-2, -1))
    wt_dinv_root = (qw.mT / qd.unsqueeze(-2)).matmul(root)
    t2 = solve_triangular(q._capacitance_tril, wt_dinv_root, upper=False).pow(2).sum((-2, -1))
    return t1 - t2


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return result.masked_fill(p.scale < q.scale, _INF)  # p puts mass where q has none


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist),
                          len(p.event_shape) - len(p.base_dist.event_shape))


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill((q.low > p.low) | (q.high < p.high), _INF)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


# --- across families: -H(p) - E_p[log q], with E_p of q's sufficient statistics -----------

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return (xlogy(p.probs, p.probs) + xlogy(1 - p.probs, 1 - p.probs) + q.rate
            - p.probs * q.rate.log())


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    e_log_x = -_EULER - p.rate.log()
    e_log_q = (q.concentration * q.rate.log() + (q.concentration - 1) * e_log_x
               - q.rate / p.rate - lgamma(q.concentration))
    return -p.entropy() - e_log_q


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    # E[exp(-(x - loc) / scale)] for x ~ Exp(rate) = exp(loc / scale) rate / (rate + 1 / scale)
    e_exp = (q.loc / q.scale).exp() * p.rate / (p.rate + q.scale.reciprocal())
    e_z = (p.rate.reciprocal() - q.loc) / q.scale
    return -p.entropy() + q.scale.log() + e_z + e_exp


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    e_sq = 2 / p.rate.pow(2) - 2 * q.loc / p.rate + q.loc.pow(2)  # E[(x - loc)^2]
    return -p.entropy() + q.scale.log() + _LOG_SQRT_2PI + e_sq / (2 * q.scale.pow(2))


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    mean, var = p.mean, p.variance
    e_sq = var + (mean - q.loc).pow(2)
    return -p.entropy() + q.scale.log() + _LOG_SQRT_2PI + e_sq / (2 * q.scale.pow(2))


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    mean = p.loc + p.scale * _EULER
    var = (math.pi ** 2 / 6) * p.scale.pow(2)
    e_sq = var + (mean - q.loc).pow(2)
    return -p.entropy() + q.scale.log() + _LOG_SQRT_2PI + e_sq / (2 * q.scale.pow(2))


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    e_sq = 2 * p.scale.pow(2) + (p.loc - q.loc).pow(2)
    return -p.entropy() + q.scale.log() + _LOG_SQRT_2PI + e_sq / (2 * q.scale.pow(2))


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    d = (p.loc - q.loc) / q.scale
    e_exp = (-d + p.scale.pow(2) / (2 * q.scale.pow(2))).exp()
    return -p.entropy() + q.scale.log() + d + e_exp


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    d = p.loc - q.loc
    # E|x - loc_q| for x ~ N(loc_p, s^2): s sqrt(2/pi) exp(-d^2 / 2s^2) + d erf(d / (s sqrt 2))
    e_abs = (p.scale * math.sqrt(2 / math.pi) * (-d.pow(2) / (2 * p.scale.pow(2))).exp()
             + d * (d / (p.scale * math.sqrt(2))).erf())
    return -p.entropy() + (2 * q.scale).log() + e_abs / q.scale


@register_kl(Poisson, Bernoulli)
def _kl_poisson_bernoulli(p, q):
    return _infinite_like(p.rate)  # a Poisson puts mass on 2, 3, ... where a Bernoulli has none


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = -p.entropy() - q.rate.log() + q.rate * (p.high + p.low) / 2
    return result.masked_fill(p.low < 0, _INF)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    e_log_x = (xlogy(p.high, p.high) - xlogy(p.low, p.low)) / width - 1
    e_log_q = (q.concentration * q.rate.log() - lgamma(q.concentration)
               + (q.concentration - 1) * e_log_x - q.rate * (p.high + p.low) / 2)
    return (-p.entropy() - e_log_q).masked_fill(p.low < 0, _INF)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    width = p.high - p.low
    e_z = ((p.high + p.low) / 2 - q.loc) / q.scale
    e_exp = (q.scale * ((-(p.low - q.loc) / q.scale).exp() - (-(p.high - q.loc) / q.scale).exp())
             / width)
    return -p.entropy() + q.scale.log() + e_z + e_exp


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    e_sq = width.pow(2) / 12 + ((p.high + p.low) / 2 - q.loc).pow(2)
    return -p.entropy() + q.scale.log() + _LOG_SQRT_2PI + e_sq / (2 * q.scale.pow(2))


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    e_log_x = (xlogy(p.high, p.high) - xlogy(p.low, p.low)) / width - 1
    one_minus_low, one_minus_high = 1 - p.low, 1 - p.high
    e_log_1mx = (xlogy(one_minus_low, one_minus_low)
                 - xlogy(one_minus_high, one_minus_high)) / width - 1
    a, b = q.concentration1, q.concentration0
    log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
    e_log_q = (a - 1) * e_log_x + (b - 1) * e_log_1mx - log_beta
    return (-p.entropy() - e_log_q).masked_fill((p.low < 0) | (p.high > 1), _INF)
