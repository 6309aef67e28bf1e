"""The normal (Gaussian) distribution N(loc, scale**2).

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.Normal(dg.tensor([0.0]), dg.tensor([1.0]))
    >>> round(float(d.log_prob(dg.tensor([0.0]))), 4)
    -0.9189
"""
from __future__ import annotations

import math
from numbers import Real
from typing import ClassVar

from ..ops.special import erfinv
from ..random import randn
from ..tensor import Size
from . import constraints
from .distribution import _expanded
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """Normal(loc, scale): mean ``loc``, standard deviation ``scale``."""

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        both_numbers = isinstance(loc, Real) and isinstance(scale, Real)
        super().__init__(Size() if both_numbers else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Normal, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def icdf(self, value):
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
