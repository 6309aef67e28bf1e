"""The beta distribution on [0, 1], a two-component Dirichlet.

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.Beta(dg.tensor(1.0), dg.tensor(3.0)).mean)
    0.25
"""
from __future__ import annotations

from numbers import Real
from typing import ClassVar

from ..creation import tensor
from ..ops.movement import stack
from ..ops.special import lgamma
from ..tensor import Size
from . import constraints
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """Beta(concentration1, concentration0): density x^(a-1) (1-x)^(b-1) / B(a, b) with
    a = concentration1, b = concentration0."""

    arg_constraints: ClassVar[dict] = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, Real) and isinstance(concentration0, Real):
            both = tensor([float(concentration1), float(concentration0)])
        else:
            c1, c0 = broadcast_all(concentration1, concentration0)
            both = stack([c1, c0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return lgamma(x) + lgamma(y) - lgamma(x + y)
