"""The LKJ distribution over Cholesky factors of correlation matrices: density proportional to
det(L L^T)^(concentration - 1). Sampled by the onion method.

Example:
    >>> import dynagrad as dg
    >>> d = dg.distributions.LKJCholesky(3, dg.tensor(2.0))
    >>> tuple(d.sample().shape)
    (3, 3)
"""
from __future__ import annotations

import math
from typing import ClassVar

from ..creation import arange
from ..ops.movement import cat
from ..ops.special import lgamma, mvlgamma
from ..ops.structure import diag_embed
from ..random import randn
from ..tensor import Size
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all, tiny

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJCholesky(dim, concentration=1.0): lower Cholesky factors of dim x dim correlation
    matrices (concentration 1: uniform over correlation matrices)."""

    arg_constraints: ClassVar[dict] = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found "
                             f"dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        # row i's squared norm below the diagonal is Beta(i / 2, conc + (dim - 2 - i) / 2)
        # (the onion method); row 0 gets a dummy Beta(1/2, ...) whose draw is discarded
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype,
                        device=self.concentration.device)
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        from ..autograd import no_grad
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
            norm = u.pow(2).sum(-1, keepdim=True).sqrt()
            # row 0 has no entries below the diagonal: 0 / 0 there becomes 0
            direction = (u / norm).nan_to_num(0.0)
            w = y.sqrt() * direction
            diag = (1 - w.pow(2).sum(-1)).clamp(min=tiny(w.dtype)).sqrt()
            return w + diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        order = arange(2, self.dim + 1, dtype=value.dtype, device=value.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        # the normaliser of Lewandowski, Kurowicka and Joe (2009), with mvlgamma's own pi term
        normalize = 0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1) - lgamma(alpha) * dm1
        return unnormalized - normalize
