"""The Wishart distribution over positive definite matrices: the scatter matrix of ``df``
normal vectors with covariance ``covariance_matrix``.

``rsample`` uses the Bartlett decomposition (chi-squared diagonal, normal lower triangle);
the chi-squared draws are implicitly reparameterized, so gradients reach ``df`` too.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.Wishart(dg.tensor(4.0), covariance_matrix=dg.eye(2))
    >>> d.mean.tolist()
    [[4.0, 0.0], [0.0, 4.0]]
"""
from __future__ import annotations

import math
from numbers import Number
from typing import ClassVar

import numpy as np

from ..creation import arange, tensor
from ..ops.decompositions import cholesky, solve_triangular
from ..ops.special import digamma, mvlgamma
from ..ops.structure import diag_embed
from ..random import randn
from ..tensor import Size
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .multivariate_normal import ScaleTrilMatrices, _precision_to_scale_tril

__all__ = ["Wishart"]


def _mvdigamma(x, p: int):
    """The multivariate digamma function: sum_i digamma(x - i / 2), i = 0 .. p-1."""
    j = arange(p, dtype=x.dtype, device=x.device) * 0.5
    return digamma(x.unsqueeze(-1) - j).sum(-1)


class Wishart(ScaleTrilMatrices, Distribution):
    """Wishart(df, covariance_matrix=... | precision_matrix=... | scale_tril=...), df > p - 1."""

    arg_constraints: ClassVar[dict] = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky,
                       "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril "
                             "may be specified.")
        name, matrix = next((n, m) for n, m in (("scale_tril", scale_tril),
                                                ("covariance_matrix", covariance_matrix),
                                                ("precision_matrix", precision_matrix))
                            if m is not None)
        if matrix.dim() < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional leading "
                             "batch dimensions")
        if isinstance(df, Number):
            df = tensor(float(df), dtype=matrix.dtype, device=matrix.device)
        batch_shape = tuple(np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(df.shape)))
        event_shape = tuple(matrix.shape[-2:])
        self.df = df.expand(batch_shape)
        setattr(self, name, matrix.expand(batch_shape + event_shape))
        p = event_shape[-1]
        if validate_args is not False and bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        # chi2(df - i) for the Bartlett diagonal, i = 0 .. p-1
        offsets = arange(p, dtype=self.df.dtype, device=self.df.device)
        self._dist_chi2 = Chi2(self.df.unsqueeze(-1) - offsets)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new._dist_chi2 = self._dist_chi2.expand(tuple(batch_shape) + (self.event_shape[-1],))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @property
    def mean(self):
        return self.df.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = factor.masked_fill(factor <= 0, float("nan"))
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        v = self.covariance_matrix
        diag_v = v.diagonal(dim1=-2, dim2=-1)
        df = self.df.reshape(tuple(self._batch_shape) + (1, 1))
        return df * (v.pow(2) + diag_v.unsqueeze(-1) * diag_v.unsqueeze(-2))

    def _bartlett_factor(self, sample_shape):
        """A: sqrt(chi2(df - i)) on the diagonal, standard normals below it."""
        p = self._event_shape[-1]
        shape = tuple(self._extended_shape(sample_shape))
        noise = randn(shape, dtype=self.df.dtype, device=self.df.device).tril(-1)
        diag = self._dist_chi2.rsample(sample_shape).sqrt()
        return noise + diag_embed(diag.expand(shape[:-1])) if p else noise

    def rsample(self, sample_shape=(), max_try_correction=None):
        a = self._bartlett_factor(Size(sample_shape))
        la = self._unbroadcasted_scale_tril.matmul(a)
        return la.matmul(la.mT)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        lower = self._unbroadcasted_scale_tril
        log_det_sigma = 2 * lower.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        log_det_x = 2 * cholesky(value).diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # tr(Sigma^-1 X) = ||L^-1 chol(X)||_F^2
        m = solve_triangular(lower, cholesky(value), upper=False)
        trace = m.pow(2).sum((-2, -1))
        return (-nu * p * math.log(2) / 2 - nu / 2 * log_det_sigma - mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * log_det_x - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * math.log(2) / 2 + half_log_det) + mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)
