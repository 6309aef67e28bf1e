"""The Kumaraswamy distribution on (0, 1), a Beta look-alike with a closed-form cdf.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.Kumaraswamy(dg.tensor(1.0), dg.tensor(1.0))   # uniform
    >>> float(d.cdf(dg.tensor(0.25)))
    0.25
"""
from __future__ import annotations

from typing import ClassVar

from ..creation import full_like
from ..ops.special import digamma, lgamma
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all

__all__ = ["Kumaraswamy"]

_EULER = 0.57721566490153286060


def _moments(a, b, n):
    """E[X^n] = b B(1 + n / a, b) for X ~ Kumaraswamy(a, b)."""
    arg1 = 1 + n / a
    return b * (lgamma(arg1) + lgamma(b) - lgamma(arg1 + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1=a, concentration0=b): density a b x^(a-1) (1 - x^a)^(b-1),
    sampled as (1 - U^(1/b))^(1/a)."""

    arg_constraints: ClassVar[dict] = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(full_like(self.concentration0, 0), full_like(self.concentration0, 1),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        mode = ((a - 1) / (a * b - 1)).pow(a.reciprocal())
        return mode.masked_fill((a < 1) | (b < 1), float("nan"))

    @property
    def variance(self):
        return (_moments(self.concentration1, self.concentration0, 2)
                - self.mean.pow(2))

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        t1 = 1 - a.reciprocal()
        t0 = 1 - b.reciprocal()
        h0 = digamma(b + 1) + _EULER
        return t0 + t1 * h0 - a.log() - b.log()
