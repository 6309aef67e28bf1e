"""The Bernoulli distribution: 1 with probability ``probs``, else 0.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.Bernoulli(probs=dg.tensor([0.25]))
    >>> d.log_prob(dg.tensor([1.0])).exp().tolist()
    [0.25]
"""
from __future__ import annotations

from numbers import Number
from typing import ClassVar

from ..autograd import no_grad
from ..creation import arange
from ..nn.functional import binary_cross_entropy_with_logits, softplus
from ..random import bernoulli
from ..tensor import Size
from . import constraints
from .distribution import _expanded
from .exp_family import ExponentialFamily
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


def _probs_or_logits(dist, probs, logits, name):
    """Store whichever of ``probs``/``logits`` is given (exactly one must be); returns whether it
    was a plain number."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    value = probs if probs is not None else logits
    (tensor,) = broadcast_all(value)
    setattr(dist, "probs" if probs is not None else "logits", tensor)
    dist._param = tensor
    return isinstance(value, Number)


class Bernoulli(ExponentialFamily):
    """Bernoulli(probs=p) or Bernoulli(logits=log(p / (1 - p)))."""

    arg_constraints: ClassVar[dict] = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        is_scalar = _probs_or_logits(self, probs, logits, "Bernoulli")
        super().__init__(Size() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, Bernoulli, batch_shape, _instance, ("probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        return softplus(x)
