"""The continuous Bernoulli distribution on [0, 1]: density C(p) p^x (1 - p)^(1 - x), with
C(p) = 2 atanh(1 - 2p) / (1 - 2p) its normaliser (2 at p = 1/2).

Near p = 1/2 the closed forms cancel catastrophically, so for p in ``lims`` the normaliser,
mean and variance use their Taylor series in (p - 1/2) instead.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.ContinuousBernoulli(probs=dg.tensor(0.5))
    >>> round(float(d.log_prob(dg.tensor(0.3)).exp()), 4)
    1.0
"""
from __future__ import annotations

import math
from numbers import Number
from typing import ClassVar

from ..nn.functional import binary_cross_entropy_with_logits
from ..ops.elementwise import where
from ..random import rand
from ..tensor import Size
from . import constraints
from .distribution import _expanded
from .exp_family import ExponentialFamily
from .utils import (
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """ContinuousBernoulli(probs=...) or (logits=...); ``lims`` is the interval around 1/2
    where the Taylor expansions take over."""

    arg_constraints: ClassVar[dict] = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
            is_scalar = isinstance(probs, Number)
        else:
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
            is_scalar = isinstance(logits, Number)
        self._lims = lims
        super().__init__(Size() if is_scalar else self._param.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"))
        new._lims = self._lims
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def _stable(self):
        """Where p is far enough from 1/2 for the closed forms."""
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """p where stable, else a stand-in (lims[0]) so that the unused closed form stays
        finite (and so do its gradients)."""
        return where(self._stable(), self.probs,
                     self.probs.new_full(self.probs.shape, self._lims[0]))

    def _cont_bern_log_norm(self):
        p = self._cut_probs()
        # log C(p) = log|log(1 - p) - log p| - log|1 - 2p|
        log_norm = ((-p).log1p() - p.log()).abs().log() - (1.0 - 2.0 * p).abs().log()
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._stable(), log_norm, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / ((-p).log1p() - p.log())
        d = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * d.pow(2)) * d
        return where(self._stable(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        p = self._cut_probs()
        var = (p * (p - 1.0) / (1.0 - 2.0 * p).pow(2)
               + 1.0 / ((-p).log1p() - p.log()).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._stable(), var, taylor)

    def sample(self, sample_shape=()):
        from ..autograd import no_grad
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        cdfs = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = where(self._stable(), cdfs, value)
        return where((value > 0) & (value < 1), inside.clamp(0.0, 1.0),
                     (value >= 1).to(value.dtype))

    def icdf(self, value):
        p = self._cut_probs()
        closed = (((-p) + value * (2.0 * p - 1.0)).log1p() - (-p).log1p()) \
            / (p.log() - (-p).log1p())
        return where(self._stable(), closed, value)

    def entropy(self):
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log of the normaliser as a function of the natural parameter (the logit)."""
        stable = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(stable, x, x.new_full(x.shape, self._lims[0] - 0.5))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(stable, log_norm, taylor)
