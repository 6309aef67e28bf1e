"""The categorical distribution over ``0 .. K-1`` (K = the last dimension of probs/logits).

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.Categorical(probs=dg.tensor([0.5, 0.25, 0.25]))
    >>> d.log_prob(dg.tensor(1)).exp().item()
    0.25
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..creation import arange, full
from ..random import multinomial
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Categorical(probs=...) (non-negative, normalised over the last dim) or
    Categorical(logits=...) (unnormalised log-probabilities)."""

    arg_constraints: ClassVar[dict] = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        param_shape = tuple(batch_shape) + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return full(self._extended_shape(), float("nan"), dtype=self.probs.dtype,
                    device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return full(self._extended_shape(), float("nan"), dtype=self.probs.dtype,
                    device=self.probs.device)

    def sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        n = int(np.prod(sample_shape, dtype=np.int64))
        samples_2d = multinomial(probs_2d, n, True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = np.broadcast_shapes(tuple(value.shape), tuple(self.logits.shape))
        log_pmf = self.logits.expand(shape)
        index = value.expand(tuple(shape[:-1]) + (1,))
        return log_pmf.gather(-1, index).squeeze(-1)

    def entropy(self):
        min_real = float(np.finfo(self.logits.dtype.np).min)
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = arange(self._num_events, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
