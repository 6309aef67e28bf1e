"""Pooling layers: ``MaxPool1d/2d/3d AvgPool1d/2d/3d AdaptiveAvgPool1d/2d/3d AdaptiveMaxPool1d/2d/3d
FractionalMaxPool2d/3d LPPool1d/2d/3d MaxUnpool1d/2d/3d``, with PyTorch's arguments and ``extra_repr``. They hold no
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
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


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


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average pooling of ``(N, C, D, H, W)`` to a fixed ``(oD, oH, oW)``.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.AdaptiveAvgPool3d((1, 2, 2))(dg.ones(1, 3, 4, 5, 6)).shape
        dynagrad.Size([1, 3, 1, 2, 2])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """Max pooling to a fixed output length; optionally returns the indices."""

    def forward(self, input: Tensor):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    """Max pooling of ``(N, C, D, H, W)`` to a fixed ``(oD, oH, oW)``; optionally returns the flat
    indices."""

    def forward(self, input: Tensor):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _FractionalMaxPoolNd(Module):
    _n = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.output_size = output_size
        self.output_ratio = output_ratio
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, "
                             f"or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if output_ratio is not None:
            ratios = (output_ratio if isinstance(output_ratio, (tuple, list))
                      else (output_ratio,) * self._n)
            if not all(0 < r < 1 for r in ratios):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor):
        fn = F.fractional_max_pool2d if self._n == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over ``(N, C, H, W)``; see ``F.fractional_max_pool2d``.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))(dg.randn(1, 1, 10, 8)).shape
        dynagrad.Size([1, 1, 5, 4])
    """
    _n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over ``(N, C, D, H, W)``; see ``F.fractional_max_pool3d``."""
    _n = 3


class _LPPoolNd(Module):
    def __init__(self, norm_type: float, kernel_size, stride=None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling over ``(N, C, L)``: ``(sum over window of x ** p) ** (1 / p)``.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.LPPool1d(2, 2)(dg.tensor([[[3.0, 4.0]]])).tolist()
        [[[5.0]]]
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool1d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over ``(N, C, H, W)``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool2d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over ``(N, C, D, H, W)``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool3d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class _MaxUnpoolNd(Module):
    _n = 1

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = F._tuple(kernel_size, self._n)
        self.stride = F._tuple(stride if stride is not None else kernel_size, self._n)
        self.padding = F._tuple(padding, self._n)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._n - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool1d``: ``forward(input, indices, output_size=None)``.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> out, idx = nn.MaxPool1d(2, return_indices=True)(dg.tensor([[[1.0, 3.0, 2.0, 0.0]]]))
        >>> nn.MaxUnpool1d(2)(out, idx).tolist()
        [[[0.0, 3.0, 2.0, 0.0]]]
    """
    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool2d``."""
    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool3d``."""
    _n = 3
