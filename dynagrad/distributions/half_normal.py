"""The half-normal distribution: |X| for X ~ Normal(0, scale).

Example:
    >>> import dynagrad as dg
    >>> round(float(dg.distributions.HalfNormal(1.0).cdf(dg.tensor(1.0))), 4)
    0.6827
"""
from __future__ import annotations

import math

from ._folded import FoldedAtZero
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(FoldedAtZero):
    """HalfNormal(scale): density 2 N(x; 0, scale) on [0, inf)."""

    base = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
