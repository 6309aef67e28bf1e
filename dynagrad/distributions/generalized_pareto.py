"""The generalized Pareto distribution (peaks over a threshold): exponential tails for
concentration 0, heavy (Pareto) tails above it, a bounded support below it.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.GeneralizedPareto(0.0, 1.0, 0.0)   # Exponential(1)
    >>> round(float(d.cdf(dg.tensor(1.0))), 4)
    0.6321
"""
from __future__ import annotations

from numbers import Number
from typing import ClassVar

from ..ops.elementwise import where
from ..random import rand
from ..tensor import Size
from . import constraints
from .distribution import Distribution, _expanded
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GeneralizedPareto(loc, scale, concentration): survival (1 + c z)^(-1/c) for
    z = (x - loc) / scale (exp(-z) at c = 0)."""

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        numbers = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(Size() if numbers else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, GeneralizedPareto, batch_shape, _instance,
                         ("loc", "scale", "concentration"))

    def _zero_and_safe(self):
        """Where the concentration is 0 (to float tolerance), and a concentration safe to divide
        by (1 there, so that the unused branch stays finite)."""
        c = self.concentration
        zero = c.abs() <= 1e-8
        return zero, c.masked_fill(zero, 1.0)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._zero_and_safe()
        power = 1 / c + 1
        tail = (power * (c * z).log1p()).masked_fill(power == 0, 0.0)
        return -self.scale.log() - where(zero, z, tail)

    def log_survival_function(self, value):
        """log P(X > value)."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._zero_and_safe()
        return where(zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        zero, c = self._zero_and_safe()
        log_u = (-value).log1p()
        return where(zero, self.loc - self.scale * log_u,
                     self.loc + self.scale / c * (-c * log_u).expm1())

    @property
    def mean(self):
        c = self.concentration
        valid = c < 1
        result = self.loc + self.scale / (1 - c.masked_fill(~valid, 0.5))
        return result.masked_fill(~valid, float("nan"))

    @property
    def variance(self):
        c = self.concentration
        valid = c < 0.5
        safe = c.masked_fill(~valid, 0.25)
        result = self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe))
        return result.masked_fill(~valid, float("nan"))

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        c = self.concentration
        upper = (self.loc - self.scale / c).masked_fill(c >= 0, float("inf"))
        return constraints.interval(self.loc, upper)
