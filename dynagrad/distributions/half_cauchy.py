"""The half-Cauchy distribution: |X| for X ~ Cauchy(0, scale).

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.HalfCauchy(1.0).cdf(dg.tensor(1.0)))
    0.5
"""
from __future__ import annotations

import math
from typing import ClassVar

from ..creation import full
from . import constraints
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """HalfCauchy(scale): density 2 Cauchy(x; 0, scale) on [0, inf)."""

    arg_constraints: ClassVar[dict] = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return full(self._extended_shape(), float("inf"), dtype=self.scale.dtype,
                    device=self.scale.device)

    @property
    def mode(self):
        return self.scale.new_zeros(self.scale.shape)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return log_prob.masked_fill(value < 0, float("-inf"))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
