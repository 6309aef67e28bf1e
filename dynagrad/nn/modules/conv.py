"""Convolution layers: ``Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d``,
with PyTorch's arguments, attributes, ``extra_repr`` and default initialisation (weight ~
kaiming_uniform(a=sqrt(5)), bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> conv = nn.Conv2d(1, 6, 5)
    >>> conv
    Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
    >>> conv(dg.zeros(2, 1, 28, 28)).shape
    dynagrad.Size([2, 6, 24, 24])
"""
from __future__ import annotations

from ...creation import empty
from ...ops.movement import pad
from ...tensor import Tensor
from .. import init
from ..functional import conv as F
from ..module import Module
from ..parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n: int) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    """Shared state of the convolution layers (as PyTorch's ``_ConvNd``)."""

    _nsp = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None, output_padding=0):
        super().__init__()
        name, n = type(self).__name__, self._nsp
        if groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer (got {groups})")
        if in_channels % groups:
            raise ValueError(f"{name}: in_channels must be divisible by groups (got "
                             f"in_channels={in_channels}, groups={groups})")
        if out_channels % groups:
            raise ValueError(f"{name}: out_channels must be divisible by groups (got "
                             f"out_channels={out_channels}, groups={groups})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.dilation = _ntuple(dilation, n)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "['valid', 'same']")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _ntuple(padding, n)
        self.output_padding = _ntuple(output_padding, n)
        self.transposed = self._transposed
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's argument for the non-zero padding modes: last dim first, (left, right) each
        if padding == "same":
            twice = []
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                twice += [total // 2, total - total // 2]
            self._reversed_padding_repeated_twice = twice
        elif padding == "valid":
            self._reversed_padding_repeated_twice = [0, 0] * n
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding)
                                                     for _ in range(2)]
        shape = ((in_channels, out_channels // groups) if self._transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(empty(*shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init._default_layer_init_(self.weight, self.bias, zero_bias_without_fan_in=False)

    def extra_repr(self) -> str:
        n = self._nsp
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _fn = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias) -> Tensor:
        fn = type(self)._fn
        if self.padding_mode != "zeros":
            padded = pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over ``(N, C_in, L)``; see ``dynagrad.nn.functional.conv1d``."""

    _nsp = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D convolution over ``(N, C_in, H, W)``; see ``dynagrad.nn.functional.conv2d``.

    Example:
        >>> from dynagrad import nn
        >>> nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=2, bias=False)
        Conv2d(4, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), groups=2, bias=False)
    """

    _nsp = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-D convolution over ``(N, C_in, D, H, W)``; see ``dynagrad.nn.functional.conv3d``."""

    _nsp = 3
    _fn = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _transposed = True
    _fn = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        """``output_padding`` that makes the output ``output_size`` (PyTorch's rule)."""
        if output_size is None:
            return self.output_padding
        n = self._nsp
        non_spatial = 2 if input.ndim == n + 2 else 1
        output_size = tuple(int(v) for v in output_size)
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have "
                             f"{n} or {non_spatial + n} elements (got {len(output_size)})")
        result = []
        for d in range(n):
            lo = ((input.shape[d + non_spatial] - 1) * self.stride[d] - 2 * self.padding[d]
                  + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            hi = lo + self.stride[d] - 1
            if not lo <= output_size[d] <= hi:
                raise ValueError(f"requested an output size of {list(output_size)}, but valid "
                                 f"sizes range from {lo} to {hi} (for an input of "
                                 f"{list(input.shape[non_spatial:])})")
            result.append(output_size[d] - lo)
        return tuple(result)

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding,
                              output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution; weight is ``(in_channels, out_channels / groups, kW)``."""

    _nsp = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution; ``forward(input, output_size=None)`` picks the
    ``output_padding`` that yields ``output_size`` when given.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
        >>> up(dg.zeros(1, 4, 5, 5), output_size=(10, 10)).shape
        dynagrad.Size([1, 2, 10, 10])
    """

    _nsp = 2
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution; weight is ``(in_channels, out_channels / groups, kD, kH, kW)``.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.ConvTranspose3d(2, 3, 2, stride=2)(dg.zeros(1, 2, 2, 3, 3)).shape
        dynagrad.Size([1, 3, 4, 6, 6])
    """

    _nsp = 3
    _fn = staticmethod(F.conv_transpose3d)
