"""The logistic-normal distribution: a Normal vector mapped onto the simplex by stick breaking.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.LogisticNormal(dg.zeros(2), dg.ones(2))
    >>> tuple(d.sample().shape)
    (3,)
"""
from __future__ import annotations

from typing import ClassVar

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """LogisticNormal(loc, scale): StickBreakingTransform of Normal(loc, scale) vectors
    (events one longer than ``loc``)."""

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
