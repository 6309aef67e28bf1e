"""The relaxed one-hot categorical (Concrete / Gumbel-softmax) distribution: a differentiable
stand-in for a one-hot draw, on the simplex, sharper as ``temperature`` goes to 0.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.RelaxedOneHotCategorical(dg.tensor(0.5), probs=dg.tensor([0.3, 0.7]))
    >>> round(float(d.rsample().sum()), 5)
    1.0
"""
from __future__ import annotations

import math
from numbers import Number
from typing import ClassVar

from ..random import rand
from ..tensor import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical sample: log-softmax((logits + Gumbel) / T)."""

    arg_constraints: ClassVar[dict] = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        t = self.temperature
        log_t = math.log(t) if isinstance(t, Number) else t.log()
        log_scale = math.lgamma(k) + (k - 1) * log_t
        score = self.logits - value * t
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """RelaxedOneHotCategorical(temperature, probs=... | logits=...); ``rsample`` is
    reparameterized (the Gumbel-softmax trick)."""

    arg_constraints: ClassVar[dict] = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
