"""Activation layers: thin Modules over dynagrad.nn.functional.activation (PyTorch's names,
arguments and ``extra_repr``).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> nn.LeakyReLU(0.2)
    LeakyReLU(negative_slope=0.2)
    >>> nn.Softmax(dim=-1)(dg.zeros(1, 2))
    tensor([[0.5000, 0.5000]])
"""
from __future__ import annotations

from ...creation import empty
from ...autograd import grad_mode
from ..functional import activation as F
from ..module import Module
from ..parameter import Parameter
from ...tensor import Tensor

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "PReLU", "RReLU", "ELU", "SELU", "CELU", "GELU", "SiLU",
           "Mish", "Sigmoid", "Tanh", "Hardtanh", "Hardsigmoid", "Hardswish", "Softplus",
           "Softsign", "Softshrink", "Hardshrink", "Tanhshrink", "Threshold", "LogSigmoid",
           "Softmax", "LogSoftmax", "Softmin", "GLU", "Softmax2d"]


class _Inplace(Module):
    """An activation with only the ``inplace`` flag."""

    _fn = None

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _Plain(Module):
    """An activation without arguments."""

    _fn = None

    def forward(self, input):
        return type(self)._fn(input)


class ReLU(_Inplace):
    """``max(x, 0)``."""
    _fn = staticmethod(F.relu)


class ReLU6(_Inplace):
    """``min(max(x, 0), 6)``."""
    _fn = staticmethod(F.relu6)


class SELU(_Inplace):
    _fn = staticmethod(F.selu)


class SiLU(_Inplace):
    _fn = staticmethod(F.silu)


class Mish(_Inplace):
    _fn = staticmethod(F.mish)


class Hardsigmoid(_Inplace):
    _fn = staticmethod(F.hardsigmoid)


class Hardswish(_Inplace):
    _fn = staticmethod(F.hardswish)


class Sigmoid(_Plain):
    _fn = staticmethod(F.sigmoid)


class Tanh(_Plain):
    _fn = staticmethod(F.tanh)


class Softsign(_Plain):
    _fn = staticmethod(F.softsign)


class Tanhshrink(_Plain):
    _fn = staticmethod(F.tanhshrink)


class LogSigmoid(_Plain):
    _fn = staticmethod(F.logsigmoid)


class LeakyReLU(Module):
    """``x`` where positive, ``negative_slope * x`` elsewhere."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class GELU(Module):
    """``x * Phi(x)``; ``approximate='tanh'`` for the tanh approximation."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) cannot be greater than max_val "
                             f"({max_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else "")


class PReLU(Module):
    """``x`` where positive, ``weight * x`` elsewhere; ``num_parameters`` is 1 or the channels."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with grad_mode.no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU: in training each negative input is scaled by a slope drawn from
    ``U(lower, upper)``; in eval by ``(lower + upper) / 2`` (``F.rrelu``).

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.RReLU(0.1, 0.3).eval()(dg.tensor([-1.0, 2.0]))
        tensor([-0.2000,  2.0000])
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()  # (lower > upper raises in forward, as in PyTorch)
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                           else "")


class _DimModule(Module):
    _fn = None

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_DimModule):
    """``softmax`` along ``dim`` (fused kernel forward and backward)."""
    _fn = staticmethod(F.softmax)


class LogSoftmax(_DimModule):
    _fn = staticmethod(F.log_softmax)


class Softmin(_DimModule):
    _fn = staticmethod(F.softmin)


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels (dim ``-3``) of a ``(N, C, H, W)`` or ``(C, H, W)`` input.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.Softmax2d()(dg.zeros(1, 2, 1, 1)).flatten().tolist()
        [0.5, 0.5]
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             f"instead")
        return F.softmax(input, -3)
