"""The gamma distribution with shape ``concentration`` and inverse scale ``rate``.

``rsample`` is differentiable in both parameters: in ``rate`` directly and in
``concentration`` by implicit reparameterization (``dg._standard_gamma``).

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.Gamma(dg.tensor(2.0), dg.tensor(4.0)).mean)
    0.5
"""
from __future__ import annotations

from numbers import Number
from typing import ClassVar

from ..ops.special import digamma, igamma, lgamma, xlogy
from ..random import _standard_gamma
from ..tensor import Size
from . import constraints
from .distribution import _expanded
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate): density x^(c-1) exp(-rate x) rate^c / Gamma(c)."""

    arg_constraints: ClassVar[dict] = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        both_numbers = isinstance(concentration, Number) and isinstance(rate, Number)
        batch_shape = Size() if both_numbers else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return xlogy(c, r) + xlogy(c - 1, value) - r * value - lgamma(c)

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + lgamma(c) + (1.0 - c) * digamma(c)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return igamma(self.concentration, self.rate * value)
