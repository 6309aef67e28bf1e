"""Padding layers over the last 1, 2 or 3 dims: ``ConstantPad1d/2d/3d ZeroPad1d/3d
ReflectionPad1d/2d/3d ReplicationPad1d/2d/3d CircularPad1d/2d/3d`` (``ZeroPad2d`` lives in
``upsample.py``), each a ``F.pad`` call with PyTorch's arguments and reprs. ``padding`` is an int
(every side) or ``2 * n`` ints ``(left, right, top, bottom, front, back)`` from the last dim on.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> nn.ReflectionPad1d(2)(dg.tensor([[[0.0, 1.0, 2.0]]])).tolist()
    [[[2.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0]]]
"""
from __future__ import annotations

from ...ops.movement import pad
from ...tensor import Tensor
from ..module import Module

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad3d",
]


class _PadNd(Module):
    _n = 1          # number of padded trailing dims
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * (2 * self._n)
        padding = tuple(int(p) for p in padding)
        if len(padding) != 2 * self._n:
            raise ValueError(f"{type(self).__name__}: padding must be an int or a "
                             f"{2 * self._n}-tuple, got {padding}")
        self.padding = padding

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``: ``padding`` is an int or ``(left, right)``."""
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``: ``(left, right, top, bottom)``."""
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``: ``(left, right, top, bottom, front, back)``."""
    _n = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros: ``(left, right)``."""
    _n = 1


class ZeroPad3d(_ZeroPadNd):
    """Pad the last three dims with zeros: ``(left, right, top, bottom, front, back)``."""
    _n = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection about the edge (the edge not repeated); each pad
    must be smaller than the padded dim."""
    _n, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Reflection padding of the last two dims; see ``ReflectionPad1d``."""
    _n, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Reflection padding of the last three dims; see ``ReflectionPad1d``."""
    _n, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge values."""
    _n, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Replication padding of the last two dims."""
    _n, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Replication padding of the last three dims."""
    _n, _mode = 3, "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (self._n + 1, self._n + 2):
            raise ValueError(f"expected {self._n + 1}D or {self._n + 2}D input (got "
                             f"{input.ndim}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around (the values from the other end)."""
    _n = 1


class CircularPad2d(_CircularPadNd):
    """Circular padding of the last two dims."""
    _n = 2


class CircularPad3d(_CircularPadNd):
    """Circular padding of the last three dims."""
    _n = 3
