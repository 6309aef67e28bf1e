"""The multivariate normal distribution, parameterised by a covariance matrix, a precision
matrix or a lower Cholesky factor of the covariance.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.MultivariateNormal(dg.zeros(2), dg.eye(2))
    >>> round(float(d.log_prob(dg.zeros(2))), 4)
    -1.8379
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ..creation import eye
from ..ops.decompositions import cholesky, cholesky_inverse, solve_triangular
from ..random import randn
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(mat, vec):
    """Matrix-vector products with broadcast batch dims."""
    return mat.matmul(vec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(lower, x):
    """x^T (L L^T)^-1 x for Cholesky factors ``lower`` and vectors ``x`` (batches broadcast)."""
    y = solve_triangular(lower, x.unsqueeze(-1), upper=False).squeeze(-1)
    return y.pow(2).sum(-1)


def _precision_to_scale_tril(precision):
    """The lower Cholesky factor of the covariance, from the precision matrix P: with
    flip(P) = Lf Lf^T, P^-1 = (flip(Lf)^-T)(flip(Lf)^-1) and flip(Lf)^-T is lower."""
    lf = cholesky(precision.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).mT
    n = precision.shape[-1]
    return solve_triangular(l_inv, eye(n, dtype=precision.dtype, device=precision.device),
                            upper=False)


class ScaleTrilMatrices:
    """The matrices a distribution parametrized by a lower Cholesky factor
    ``_unbroadcasted_scale_tril`` (L) offers, expanded to ``_matrix_shape()``: L itself, L L^T
    and its inverse."""

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        lower = self._unbroadcasted_scale_tril
        return lower.matmul(lower.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())


class MultivariateNormal(ScaleTrilMatrices, Distribution):
    """MultivariateNormal(loc, covariance_matrix=... | precision_matrix=... | scale_tril=...)."""

    arg_constraints: ClassVar[dict] = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril "
                             "may be specified.")
        name, matrix = next((n, m) for n, m in (("scale_tril", scale_tril),
                                                ("covariance_matrix", covariance_matrix),
                                                ("precision_matrix", precision_matrix))
                            if m is not None)
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        batch_shape = tuple(np.broadcast_shapes(tuple(matrix.shape[:-2]),
                                                tuple(loc.shape[:-1])))
        setattr(self, name, matrix.expand(batch_shape + tuple(matrix.shape[-2:])))
        self.loc = loc.expand(batch_shape + (loc.shape[-1],))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
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

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
