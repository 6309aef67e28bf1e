"""Dropout (plain, channel-wise and alpha), embedding, pixel and channel shuffles and
interpolation: the registered ops of ``dynagrad.ops.nn.misc`` re-exported with the compositions of
ops written beside them (torch.nn.functional's names and signatures).

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.nn.functional as F
    >>> F.channel_shuffle(dg.arange(4.0).reshape(1, 4, 1), 2).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
"""
from __future__ import annotations

from ...errors import describe
from ...ops.nn.misc import (dropout, dropout1d, dropout2d, dropout3d, embedding, interpolate,
                            pixel_shuffle, pixel_unshuffle, upsample, upsample_bilinear,
                            upsample_nearest)  # noqa: F401
from ...random import rand
from ...tensor import Tensor

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout", "embedding", "pixel_shuffle", "pixel_unshuffle",
           "channel_shuffle", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

# SELU's negative saturation value, -scale * alpha: the value alpha dropout sets dropped units to
_ALPHA = 1.7580993408473766


def noise_dropout(op: str, input: Tensor, p: float, training: bool, inplace: bool, alpha: bool,
                  feature: bool, error=ValueError) -> Tensor:
    """Dropout with a mask of ``keep ~ Bernoulli(1 - p)`` drawn per element or, ``feature``, per
    channel (shape ``(N, C, 1, ...)``). Plain: ``x * keep / (1 - p)``. ``alpha``: dropped units take
    SELU's saturation value ``-alpha'`` and an affine map ``a * (.) + b`` restores zero mean and
    unit variance, ``a = ((1 - p) (1 + p alpha'^2))^-1/2``, ``b = a alpha' p``. ``p == 1`` gives
    zeros. ``error`` is the exception type of a bad ``p`` (torch.nn.functional raises ValueError,
    the ATen forms RuntimeError)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if p < 0.0 or p > 1.0:
        raise error(f"dropout probability has to be between 0 and 1, but got {p}")
    if feature and input.ndim < 2:
        raise RuntimeError(f"{op}: Feature dropout requires at least 2 dimensions in the input "
                           f"(got {describe(input)})")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    keep = (rand(*shape, dtype=input.dtype, device=input.device) < 1.0 - p).to(input.dtype)
    if not alpha:
        mask = keep * (1.0 / (1.0 - p))
        return input.mul_(mask) if inplace else input * mask
    a = 1.0 / ((_ALPHA * _ALPHA * p + 1.0) * (1.0 - p)) ** 0.5
    shift = (keep - 1.0) * (_ALPHA * a) + _ALPHA * a * p   # a * alpha' * (p - 1) where dropped
    mask = keep * a
    if inplace:
        return input.mul_(mask).add_(shift)
    return input * mask + shift


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: dropped units are set to SELU's negative saturation and the
    result is rescaled so that a zero-mean unit-variance input keeps those statistics.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> y = F.alpha_dropout(dg.randn(10000), 0.2, training=True)
        >>> abs(float(y.mean())) < 0.05 and abs(float(y.std()) - 1.0) < 0.05
        True
    """
    return noise_dropout("alpha_dropout", input, p, training, inplace, True, False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels (dim 1): one draw per ``(sample, channel)``."""
    return noise_dropout("feature_alpha_dropout", input, p, training, inplace, True, True)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the ``C`` channels (dim 1) into ``groups`` groups and interleave them: channel
    ``g * (C / groups) + i`` moves to ``i * groups + g`` (ShuffleNet).

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> F.channel_shuffle(dg.arange(6.0).reshape(1, 6, 1), 3).flatten().tolist()
        [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"channel_shuffle(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c = input.shape[:2]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and "
                           f"{groups} groups.")
    rest = tuple(input.shape[2:])
    x = input.reshape((n, groups, c // groups) + rest).transpose(1, 2)
    return x.reshape((n, c) + rest)
