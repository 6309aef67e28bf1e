"""The Fisher-Snedecor (F) distribution: (X1 / df1) / (X2 / df2) for chi-squared X1, X2.

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.FisherSnedecor(dg.tensor(4.0), dg.tensor(6.0)).mean)
    1.5
"""
from __future__ import annotations

from numbers import Number
from typing import ClassVar

from ..ops.special import lgamma
from ..tensor import Size
from . import constraints
from .distribution import Distribution, _expanded
from .gamma import Gamma
from .utils import broadcast_all, tiny

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """FisherSnedecor(df1, df2)."""

    arg_constraints: ClassVar[dict] = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        both_numbers = isinstance(df1, Number) and isinstance(df2, Number)
        super().__init__(Size() if both_numbers else self.df1.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = self.df2
        return (df2 / (df2 - 2)).masked_fill(df2 <= 2, float("nan"))

    @property
    def mode(self):
        d1, d2 = self.df1, self.df2
        mode = (d1 - 2) / d1 * d2 / (d2 + 2)
        return mode.masked_fill(d1 <= 2, float("nan"))

    @property
    def variance(self):
        d1, d2 = self.df1, self.df2
        var = 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))
        return var.masked_fill(d2 <= 4, float("nan"))

    def rsample(self, sample_shape=()):
        # each Gamma(df / 2, df) is chi2(df) / df already
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape).clamp(min=tiny(self.df1.dtype))
        return (x1 / x2).clamp(min=tiny(self.df1.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        h1, h2 = self.df1 * 0.5, self.df2 * 0.5
        log_beta = lgamma(h1) + lgamma(h2) - lgamma(h1 + h2)
        return (h1 * self.df1.log() + h2 * self.df2.log() + (h1 - 1) * value.log()
                - (h1 + h2) * (self.df2 + self.df1 * value).log() - log_beta)
