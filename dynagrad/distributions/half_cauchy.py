"""The half-Cauchy distribution: |X| for X ~ Cauchy(0, scale).

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.HalfCauchy(1.0).cdf(dg.tensor(1.0)))
    0.5
"""
from __future__ import annotations

from ..creation import full
from ._folded import FoldedAtZero
from .cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(FoldedAtZero):
    """HalfCauchy(scale): density 2 Cauchy(x; 0, scale) on [0, inf)."""

    base = Cauchy

    @property
    def mean(self):
        return full(self._extended_shape(), float("inf"), dtype=self.scale.dtype,
                    device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance
