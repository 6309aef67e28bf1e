"""Student's t distribution with ``df`` degrees of freedom, location and scale.

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.StudentT(dg.tensor(3.0)).variance)
    3.0
"""
from __future__ import annotations

import math
from typing import ClassVar

from ..ops.special import digamma, lgamma
from ..random import randn
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution, _expanded
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """StudentT(df, loc=0, scale=1): loc + scale * Z / sqrt(V / df), Z normal, V chi-squared."""

    arg_constraints: ClassVar[dict] = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, StudentT, batch_shape, _instance, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return self.loc.masked_fill(self.df <= 1, float("nan"))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        v = finite.masked_fill(df <= 2, float("inf"))
        return v.masked_fill(df <= 1, float("nan"))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = randn(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi)
             + lgamma(0.5 * df) - lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * (y.pow(2) / df).log1p() - z

    def entropy(self):
        df = self.df
        lbeta = lgamma(0.5 * df) + math.lgamma(0.5) - lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (digamma(0.5 * (df + 1))
                                                      - digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)
