"""The multinomial distribution: counts of ``total_count`` categorical draws.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.Multinomial(4, probs=dg.tensor([0.5, 0.5]))
    >>> float(d.sample().sum())
    4.0
"""
from __future__ import annotations

from typing import ClassVar

from ..creation import tensor, zeros
from ..ops.special import lgamma
from ..tensor import Size
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Multinomial(total_count, probs=...) or (total_count, logits=...): count vectors over the
    categories of the last dimension, summing to ``total_count``."""

    arg_constraints: ClassVar[dict] = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        draws = draws.movedim(0, -1)  # (sample + batch, total_count)
        shape = self._extended_shape(sample_shape)
        counts = zeros(shape, dtype=self.probs.dtype, device=self.probs.device)
        ones = counts.new_ones(tuple(draws.shape))
        return counts.scatter_add(-1, draws, ones)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        # a category of probability 0 counted 0 times contributes 0, not 0 * -inf
        logits = logits.masked_fill((value == 0) & (logits == float("-inf")), 0.0)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self):
        n = tensor(float(self.total_count), dtype=self.probs.dtype, device=self.probs.device)
        term1 = n * self._categorical.entropy() - lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = lgamma(support + 1)
        return term1 + (binomial_probs * weights).sum(0).sum(-1)
