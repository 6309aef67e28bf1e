"""Pooling layers: ``MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d
AdaptiveAvgPool2d AdaptiveMaxPool2d``, with PyTorch's arguments and ``extra_repr``. They hold no
parameters.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> pool = nn.MaxPool2d(2)
    >>> pool
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(dg.zeros(1, 3, 8, 8)).shape
    dynagrad.Size([1, 3, 4, 4])
"""
from __future__ import annotations

from ...tensor import Tensor
from ..functional import pooling as F
from ..module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveMaxPool2d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over ``(N, C, L)``; ``stride`` defaults to ``kernel_size``."""

    def forward(self, input: Tensor):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over ``(N, C, H, W)``; with ``return_indices=True`` returns
    ``(output, indices)`` (flat ``h * W + w`` indices, as PyTorch)."""

    def forward(self, input: Tensor):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over ``(N, C, D, H, W)``; with ``return_indices=True`` returns
    ``(output, indices)`` (flat ``d * H * W + h * W + w`` indices, as PyTorch).

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.MaxPool3d(2)(dg.zeros(1, 2, 4, 4, 6)).shape
        dynagrad.Size([1, 2, 2, 2, 3])
    """

    def forward(self, input: Tensor):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(Module):
    """1-D average pooling over ``(N, C, L)``.

    Example:
        >>> from dynagrad import nn
        >>> nn.AvgPool1d(3, stride=2)
        AvgPool1d(kernel_size=(3,), stride=(2,), padding=(0,))
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _single(v) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class AvgPool2d(Module):
    """2-D average pooling over ``(N, C, H, W)``; ``count_include_pad`` counts the zero padding in
    the divisor, ``divisor_override`` replaces the divisor."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """3-D average pooling over ``(N, C, D, H, W)``; the arguments of ``AvgPool2d``.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.AvgPool3d(2, stride=1)(dg.ones(1, 1, 3, 3, 3)).shape
        dynagrad.Size([1, 1, 2, 2, 2])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptivePool(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling to a fixed output length."""

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    """Average pooling to a fixed ``(H_out, W_out)`` (``None`` keeps that input size).

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.AdaptiveAvgPool2d((1, 1))(dg.ones(2, 3, 7, 7)).shape
        dynagrad.Size([2, 3, 1, 1])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveMaxPool2d(_AdaptivePool):
    """Max pooling to a fixed ``(H_out, W_out)``; optionally returns the flat indices."""

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)
