"""Resampling and padding layers: ``Upsample UpsamplingNearest2d UpsamplingBilinear2d
PixelShuffle PixelUnshuffle ChannelShuffle ZeroPad2d``.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> up = nn.Upsample(scale_factor=2)
    >>> up
    Upsample(scale_factor=2.0, mode='nearest')
    >>> up(dg.ones(1, 1, 2, 2)).shape
    dynagrad.Size([1, 1, 4, 4])
"""
from __future__ import annotations

from ...ops.movement import pad
from ...tensor import Tensor
from ..functional import misc as F
from ..module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle",
           "PixelUnshuffle", "ChannelShuffle", "ZeroPad2d"]


class Upsample(Module):
    """Resize ``(N, C, *spatial)`` inputs to ``size`` or by ``scale_factor`` (see
    ``functional.interpolate`` for the modes)."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(s) for s in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor is not None else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode="nearest")`` for 4-D inputs."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(mode="bilinear", align_corners=True)`` for 4-D inputs."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """``(*, C*r*r, H, W) -> (*, C, H*r, W*r)``.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.PixelShuffle(2)(dg.randn(1, 8, 3, 3)).shape
        dynagrad.Size([1, 2, 6, 6])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H*r, W*r) -> (*, C*r*r, H, W)``, the inverse of ``PixelShuffle``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave the channels of ``groups`` groups: ``(N, g * k, ...)`` read as ``(N, g, k, ...)``
    and transposed to ``(N, k, g, ...)`` (ShuffleNet).

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.ChannelShuffle(2)(dg.arange(4.0).reshape(1, 4, 1)).flatten().tolist()
        [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class ZeroPad2d(Module):
    """Pad the last two dims with zeros: ``padding`` is an int or ``(left, right, top, bottom)``.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.ZeroPad2d((1, 0, 0, 2))(dg.ones(1, 2, 2)).shape
        dynagrad.Size([1, 4, 3])
    """

    def __init__(self, padding) -> None:
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * 4
        padding = tuple(int(p) for p in padding)
        if len(padding) != 4:
            raise ValueError(f"ZeroPad2d: padding must be an int or a 4-tuple (left, right, top, "
                             f"bottom), got {padding}")
        self.padding = padding

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, "constant", 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"
