"""The multivariate normal with a low-rank plus diagonal covariance W W^T + diag(D), computed
through the r x r capacitance matrix I + W^T D^-1 W (Woodbury), never the n x n covariance.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.LowRankMultivariateNormal(dg.zeros(3), dg.zeros(3, 1), dg.ones(3))
    >>> d.variance.tolist()
    [1.0, 1.0, 1.0]
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ..creation import eye
from ..ops.decompositions import cholesky, solve_triangular
from ..ops.structure import diag_embed
from ..random import randn
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _capacitance_tril(w, d):
    """Cholesky factor of I + W^T D^-1 W."""
    m = w.shape[-1]
    k = (w.mT / d.unsqueeze(-2)).matmul(w)
    return cholesky(k + eye(m, dtype=w.dtype, device=w.device))


def _lowrank_logdet(w, d, capacitance_tril):
    """log det(W W^T + D) = log det(capacitance) + log det(D)."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + d.log().sum(-1))


def _lowrank_mahalanobis(w, d, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x by the Woodbury identity."""
    wt_dinv_x = _batch_mv(w.mT / d.unsqueeze(-2), x)
    return (x.pow(2) / d).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """LowRankMultivariateNormal(loc, cov_factor, cov_diag): covariance
    cov_factor @ cov_factor.mT + diag(cov_diag)."""

    arg_constraints: ClassVar[dict] = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        n = loc.shape[-1]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading "
                             "batch dimensions")
        if cov_factor.shape[-2] != n:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {n} x m")
        if tuple(cov_diag.shape[-1:]) != (n,):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {loc.shape[-1:]}")
        try:
            batch = tuple(np.broadcast_shapes(tuple(loc.shape[:-1]),
                                              tuple(cov_factor.shape[:-2]),
                                              tuple(cov_diag.shape[:-1])))
        except ValueError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc.expand(batch + (n,))
        self.cov_factor = cov_factor.expand(batch + tuple(cov_factor.shape[-2:]))
        self.cov_diag = cov_diag.expand(batch + (n,))
        super().__init__(batch, (n,), validate_args=validate_args)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (w.pow(2).sum(-1) + d).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        # W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2, a Cholesky factor of the middle
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        n = self._event_shape[0]
        d_sqrt = d.sqrt().unsqueeze(-1)
        dw = w / d_sqrt
        k = dw.matmul(dw.mT) + eye(n, dtype=w.dtype, device=w.device)
        return (d_sqrt * cholesky(k)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (w.matmul(w.mT) + diag_embed(d)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^-1 - D^-1 W C^-1 W^T D^-1, C = capacitance
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        a = solve_triangular(self._capacitance_tril, w.mT / d.unsqueeze(-2), upper=False)
        return (diag_embed(d.reciprocal()) - a.mT.matmul(a)).expand(self._matrix_shape())

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        eps_w = randn(shape[:-1] + (w.shape[-1],), dtype=self.loc.dtype, device=self.loc.device)
        eps_d = randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(w, eps_w) + d.sqrt() * eps_d

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        m = _lowrank_mahalanobis(w, d, value - self.loc, self._capacitance_tril)
        log_det = _lowrank_logdet(w, d, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self):
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        log_det = _lowrank_logdet(w, d, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
