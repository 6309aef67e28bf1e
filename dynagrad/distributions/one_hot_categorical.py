"""One-hot categorical distributions: a Categorical draw as a one-hot vector, and the
straight-through variant whose samples pass the gradient of ``probs``.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.OneHotCategorical(probs=dg.tensor([0.0, 1.0]))
    >>> d.sample().tolist()
    [0.0, 1.0]
"""
from __future__ import annotations

from typing import ClassVar

from ..creation import eye
from ..nn.functional import one_hot
from ..tensor import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """OneHotCategorical(probs=...) or (logits=...): events are one-hot vectors of length K."""

    arg_constraints: ClassVar[dict] = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose ``rsample`` is the one-hot draw plus ``probs - probs.detach()``:
    the value is the draw, the gradient that of ``probs`` (the straight-through estimator)."""

    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
