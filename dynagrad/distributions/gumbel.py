"""The Gumbel (type-I extreme value) distribution.

Example:
    >>> import dynagrad as dg
    >>> round(float(dg.distributions.Gumbel(0.0, 1.0).mean), 4)
    0.5772
"""
from __future__ import annotations

import math
from numbers import Number
from typing import ClassVar

from ..creation import full_like
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, eps, tiny

__all__ = ["Gumbel"]

_EULER = 0.57721566490153286060


class Gumbel(TransformedDistribution):
    """Gumbel(loc, scale): loc - scale * log(-log U) for U uniform on (0, 1)."""

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        dt = self.loc.dtype
        if isinstance(loc, Number) and isinstance(scale, Number):
            base = Uniform(tiny(dt), 1 - eps(dt), validate_args=validate_args)
        else:
            base = Uniform(full_like(self.loc, tiny(dt)), full_like(self.loc, 1 - eps(dt)),
                           validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-self.scale.new_ones(
            self.scale.shape)), ExpTransform().inv, AffineTransform(loc=self.loc,
                                                                    scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * _EULER

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + _EULER)
