"""The exponential distribution with rate ``rate`` (mean 1 / rate).

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.Exponential(dg.tensor(2.0)).mean)
    0.5
"""
from __future__ import annotations

from numbers import Number
from typing import ClassVar

from ..creation import empty
from ..tensor import Size
from . import constraints
from .distribution import _expanded
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """Exponential(rate): density rate * exp(-rate * x) on [0, inf)."""

    arg_constraints: ClassVar[dict] = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return self.rate.new_zeros(self.rate.shape)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return empty(shape, dtype=self.rate.dtype, device=self.rate.device).exponential_() \
            / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()
