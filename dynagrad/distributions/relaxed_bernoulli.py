"""The relaxed Bernoulli (binary Concrete) distribution: a differentiable stand-in for a
Bernoulli draw in (0, 1), sharper as ``temperature`` goes to 0.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.RelaxedBernoulli(dg.tensor(0.5), probs=dg.tensor([0.3]))
    >>> 0 < float(d.rsample()) < 1
    True
"""
from __future__ import annotations

import math
from numbers import Number
from typing import ClassVar

from ..random import rand
from ..tensor import Size
from . import constraints
from .distribution import Distribution, _expanded
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import (
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli sample: (logit(p) + logistic noise) / temperature."""

    arg_constraints: ClassVar[dict] = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        value = probs if probs is not None else logits
        (param,) = broadcast_all(value)
        setattr(self, "probs" if probs is not None else "logits", param)
        self._param = param
        batch_shape = Size() if isinstance(value, Number) else param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, LogitRelaxedBernoulli, batch_shape, _instance,
                        ("probs", "logits"))
        new.temperature = self.temperature
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        t = self.temperature
        log_t = math.log(t) if isinstance(t, Number) else t.log()
        return log_t + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """RelaxedBernoulli(temperature, probs=... | logits=...): sigmoid of a
    LogitRelaxedBernoulli sample; ``rsample`` is reparameterized."""

    arg_constraints: ClassVar[dict] = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
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
