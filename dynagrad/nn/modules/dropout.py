"""Dropout layers: ``Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout``
(active in training mode only).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> drop = nn.Dropout(p=0.5)
    >>> drop
    Dropout(p=0.5, inplace=False)
    >>> bool((drop.eval()(dg.ones(4)) == 1).all())   # eval: identity
    True
"""
from __future__ import annotations

from ...tensor import Tensor
from ..functional import misc as F
from ..module import Module

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> _ = dg.manual_seed(0)
        >>> y = nn.Dropout(0.2)(dg.ones(10000))
        >>> 0.18 < float((y == 0).float().mean()) < 0.22
        True
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of ``(N, C, L)`` / ``(C, L)`` inputs."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of ``(N, C, H, W)`` inputs (a channel is kept or dropped entirely).

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> y = nn.Dropout2d(0.5)(dg.ones(1, 4, 2, 2))
        >>> sorted(set(y.sum((2, 3)).flatten().tolist())) in ([0.0], [8.0], [0.0, 8.0])
        True
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of ``(N, C, D, H, W)`` / ``(C, D, H, W)`` inputs."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps a SELU network's zero mean and unit variance: dropped units take SELU's
    negative saturation value and the output is rescaled (``F.alpha_dropout``).

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> y = nn.AlphaDropout(0.2)(dg.randn(10000))
        >>> abs(float(y.mean())) < 0.05 and abs(float(y.std()) - 1.0) < 0.05
        True
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(_DropoutNd):
    """``AlphaDropout`` of whole channels (dim 1) of an ``(N, C, ...)`` input."""

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
