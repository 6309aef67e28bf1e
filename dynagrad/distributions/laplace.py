"""The Laplace (double exponential) distribution.

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.Laplace(0.0, 1.0).cdf(dg.tensor(0.0)))
    0.5
"""
from __future__ import annotations

from numbers import Number
from typing import ClassVar

from ..random import rand
from ..tensor import Size
from . import constraints
from .distribution import Distribution, _expanded
from .utils import broadcast_all, eps

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale)."""

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        both_numbers = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(Size() if both_numbers else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        # u uniform in (-1, 1), kept off -1 so that log1p(-|u|) stays finite
        e = eps(self.loc.dtype)
        u = rand(shape, dtype=self.loc.dtype, device=self.loc.device) * (2 - e) + (e - 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
