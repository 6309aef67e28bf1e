"""The Dirichlet distribution over the probability simplex.

Example:
    >>> import dynagrad as dg
    >>> dg.distributions.Dirichlet(dg.tensor([1.0, 3.0])).mean.tolist()
    [0.25, 0.75]
"""
from __future__ import annotations

from typing import ClassVar

from ..nn.functional import one_hot
from ..ops.elementwise import where
from ..ops.special import digamma, lgamma, xlogy
from ..random import _standard_gamma
from . import constraints
from .distribution import _expanded
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration): vectors on the simplex (the last dim of ``concentration``).

    ``rsample`` normalises Gamma draws, each reparameterized implicitly, so gradients reach
    ``concentration``.
    """

    arg_constraints: ClassVar[dict] = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = concentration.shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        gammas = _standard_gamma(self.concentration.expand(shape))
        return gammas / gammas.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, keepdim=True)
        # every concentration below 1: the density peaks at a vertex (the largest one)
        vertex = one_hot(self.concentration.argmax(-1), cm1.shape[-1]).to(mode.dtype)
        all_below = (self.concentration < 1).all(-1, keepdim=True)
        return where(all_below, vertex, mode)

    @property
    def variance(self):
        c = self.concentration
        c0 = c.sum(-1, keepdim=True)
        return c * (c0 - c) / (c0.pow(2) * (c0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return (lgamma(c).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0)
                - ((c - 1.0) * digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))
