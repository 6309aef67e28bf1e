"""The two-parameter Weibull distribution.

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.Weibull(dg.tensor(2.0), dg.tensor(1.0)).mean)
    2.0
"""
from __future__ import annotations

from typing import ClassVar

from ..ops.special import lgamma
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all

__all__ = ["Weibull"]

_EULER = 0.57721566490153286060


class Weibull(TransformedDistribution):
    """Weibull(scale, concentration): scale * E^(1 / concentration), E ~ Exponential(1)."""

    arg_constraints: ClassVar[dict] = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(self.scale.new_ones(self.scale.shape), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k).pow(k.reciprocal())

    @property
    def variance(self):
        k_inv = self.concentration_reciprocal
        return self.scale.pow(2) * (lgamma(1 + 2 * k_inv).exp()
                                    - (2 * lgamma(1 + k_inv)).exp())

    def entropy(self):
        k = self.concentration
        return (_EULER * (1 - self.concentration_reciprocal) + (self.scale / k).log() + 1)
