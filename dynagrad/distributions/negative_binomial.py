"""The negative binomial distribution: successes before ``total_count`` failures.

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.NegativeBinomial(dg.tensor(2.0), probs=dg.tensor(0.5)).mean)
    2.0
"""
from __future__ import annotations

from typing import ClassVar

from ..autograd import no_grad
from ..nn.functional import logsigmoid
from ..ops.special import lgamma
from ..random import poisson
from . import constraints
from .distribution import Distribution, _expanded
from .gamma import Gamma
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """NegativeBinomial(total_count, probs=p): each trial succeeds with probability p; counts
    the successes before the ``total_count``-th failure."""

    arg_constraints: ClassVar[dict] = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, NegativeBinomial, batch_shape, _instance,
                        ("total_count", "probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def _gamma(self):
        # a Poisson whose rate is Gamma(total_count, (1 - p) / p) is negative binomial
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape=()):
        with no_grad():
            return poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized = n * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = -lgamma(n + value) + lgamma(1.0 + value) + lgamma(n)
        # total_count = 0 and value = 0: a point mass at 0 (the lgammas alone are nan)
        log_normalization = log_normalization.masked_fill(n + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
