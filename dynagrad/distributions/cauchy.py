"""The Cauchy (Lorentz) distribution: no mean, no variance.

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.Cauchy(0.0, 1.0).cdf(dg.tensor(1.0)))
    0.75
"""
from __future__ import annotations

import math
from numbers import Number
from typing import ClassVar

from ..creation import empty, full
from ..tensor import Size
from . import constraints
from .distribution import Distribution, _expanded
from .utils import broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Cauchy(loc, scale): the ratio of two independent normals, shifted and scaled."""

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        both_numbers = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(Size() if both_numbers else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Cauchy, batch_shape, _instance, ("loc", "scale"))

    def _full(self, value):
        return full(self._extended_shape(), value, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mean(self):
        return self._full(float("nan"))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._full(float("inf"))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - (z ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
