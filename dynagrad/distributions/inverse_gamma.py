"""The inverse gamma distribution: 1 / X for X ~ Gamma(concentration, rate).

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.InverseGamma(dg.tensor(3.0), dg.tensor(4.0)).mean)
    2.0
"""
from __future__ import annotations

from typing import ClassVar

from ..ops.special import digamma, lgamma
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """InverseGamma(concentration, rate): density rate^c x^(-c-1) exp(-rate / x) / Gamma(c)."""

    arg_constraints: ClassVar[dict] = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base.rate.new_ones(())
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        result = self.rate / (self.concentration - 1)
        return result.masked_fill(self.concentration <= 1, float("inf"))

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        c = self.concentration
        result = self.rate.pow(2) / ((c - 1).pow(2) * (c - 2))
        return result.masked_fill(c <= 2, float("inf"))

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + lgamma(c) - (1 + c) * digamma(c)
