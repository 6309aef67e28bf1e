"""The Pareto (type I) distribution: scale * exp(E), E ~ Exponential(alpha).

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.Pareto(dg.tensor(1.0), dg.tensor(2.0)).mean)
    2.0
"""
from __future__ import annotations

from typing import ClassVar

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """Pareto(scale, alpha): density alpha scale^alpha / x^(alpha + 1) on [scale, inf)."""

    arg_constraints: ClassVar[dict] = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(Exponential(self.alpha, validate_args=validate_args),
                         [ExpTransform(), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)  # infinite mean for alpha <= 1
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)  # infinite variance for alpha <= 2
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
