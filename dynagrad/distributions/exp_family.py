"""Exponential families: densities p(x) = h(x) exp(<t(x), theta> - F(theta)), whose entropy
follows from the log normaliser F by Bregman divergence (``ExponentialFamily.entropy``).

Example:
    >>> import dynagrad as dg
    >>> float(dg.distributions.Exponential(dg.tensor(1.0)).entropy())
    1.0
"""
from __future__ import annotations

from ..autograd import grad as _grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of the exponential family. Subclasses give ``_natural_params``,
    ``_log_normalizer`` and ``_mean_carrier_measure``; the entropy then comes for free."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """H = F(theta) - <theta, grad F(theta)> - E[log h(x)], by automatic differentiation."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = _grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
