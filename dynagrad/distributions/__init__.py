"""Probability distributions (PyTorch's ``torch.distributions``): parameterised families with
``sample``/``rsample``, ``log_prob``, ``cdf``/``icdf``, ``entropy`` and moments, the
``constraints`` and ``transforms`` they are built from, and ``kl_divergence``.

Reparameterized samples (``rsample``) carry gradients to the parameters: by a pathwise formula
(Normal, LogNormal, Uniform, ...) or by implicit reparameterization of the gamma draws (Gamma,
Beta, Dirichlet, Chi2, StudentT, ...).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.distributions import Normal, kl_divergence
    >>> loc = dg.tensor([0.5], requires_grad=True)
    >>> kl_divergence(Normal(loc, 1.0), Normal(0.0, 1.0)).sum().backward()
    >>> loc.grad.tolist()
    [0.5]
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .student_t import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli",
    "Dirichlet", "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma",
    "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent",
    "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
    "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
    "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT",
    "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart", "biject_to",
    "constraints", "kl_divergence", "register_kl", "transform_to", "transforms",
]
__all__.extend(transforms.__all__)
