"""The continuous uniform distribution on [low, high).

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.Uniform(0.0, 4.0).cdf(dg.tensor(1.0)))
    0.25
"""
from __future__ import annotations

from numbers import Number

from ..random import rand
from ..tensor import Size
from . import constraints
from .distribution import Distribution, _expanded
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform(low, high): constant density on the half-open interval [low, high)."""

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        both_numbers = isinstance(low, Number) and isinstance(high, Number)
        super().__init__(Size() if both_numbers else self.low.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Uniform, batch_shape, _instance, ("low", "high"))

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * float("nan")

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
