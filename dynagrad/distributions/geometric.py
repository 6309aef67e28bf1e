"""The geometric distribution: failures before the first success (0, 1, 2, ...).

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.Geometric(probs=dg.tensor(0.5)).mean)
    1.0
"""
from __future__ import annotations

from numbers import Number
from typing import ClassVar

from ..autograd import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from ..random import rand
from ..tensor import Size
from . import constraints
from .distribution import Distribution, _expanded
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits, tiny

__all__ = ["Geometric"]


class Geometric(Distribution):
    """Geometric(probs=p): k failures before a success, probability (1 - p)^k p."""

    arg_constraints: ClassVar[dict] = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        param = self.probs if probs is not None else self.logits
        is_scalar = isinstance(probs if probs is not None else logits, Number)
        super().__init__(Size() if is_scalar else param.size(), validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0  # beyond unit_interval: p = 0 never succeeds
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                    f"{constraints.positive!r}, but found invalid values:\n{value[~valid]}")

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Geometric, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return self.probs.new_zeros(self.probs.shape)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            u = rand(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.clamp(min=tiny(self.probs.dtype))
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 and k = 0: 0 * log(0) is 0 here, not nan
        probs = probs.masked_fill((probs == 1) & (value == 0), 0.0)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs
