"""``Fold`` and ``Unfold``: Modules over ``F.fold`` (col2im) and ``F.unfold`` (im2col).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> nn.Unfold(2)(dg.zeros(1, 3, 4, 5)).shape
    dynagrad.Size([1, 12, 12])
    >>> nn.Fold((4, 5), 2)(dg.zeros(1, 12, 12)).shape
    dynagrad.Size([1, 3, 4, 5])
"""
from __future__ import annotations

from ...ops.nn.conv import fold, unfold
from ...tensor import Tensor
from ..module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sum sliding blocks ``(N, C * prod(kernel_size), L)`` back into ``(N, C, *output_size)``."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extract sliding blocks of ``(N, C, H, W)`` as columns ``(N, C * prod(kernel_size), L)``."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
