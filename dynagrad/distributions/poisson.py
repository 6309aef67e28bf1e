"""The Poisson distribution with rate ``rate``.

Example:
    >>> import dynagrad as dg
    >>> round(float(dg.distributions.Poisson(dg.tensor(2.0)).log_prob(dg.tensor(0.0)).exp()), 4)
    0.1353
"""
from __future__ import annotations

from numbers import Number
from typing import ClassVar

from ..autograd import no_grad
from ..ops.special import lgamma, xlogy
from ..random import poisson
from ..tensor import Size
from . import constraints
from .distribution import _expanded
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """Poisson(rate): counts k with probability rate^k exp(-rate) / k!."""

    arg_constraints: ClassVar[dict] = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - lgamma(value + 1)

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()
