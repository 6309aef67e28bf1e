"""Activation functions (torch.nn.functional names and signatures).

The pointwise activations and softmax / log_softmax are registered ops (``dynagrad.ops.nn``:
generated kernels forward and backward) re-exported here; the rest are compositions of ops.

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.nn.functional as F
    >>> F.leaky_relu(dg.tensor([-2.0, 3.0]), 0.5)
    tensor([-1.,  3.])
    >>> F.softmax(dg.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
"""
from __future__ import annotations

from ...errors import describe
from ...ops._util import as_tensor_arg
from ...ops.nn.activation import (celu, celu_, elu, elu_, gelu, hardshrink, hardsigmoid,
                                  hardswish, hardtanh, hardtanh_, leaky_relu, leaky_relu_,
                                  logsigmoid, mish, prelu, selu, selu_, silu, softplus,
                                  softshrink, softsign, threshold, threshold_)
from ...ops.elementwise import where
from ...ops.nn.softmax import float_input, log_softmax, softmax, softmax_dim
from ...random import rand
from ...shapes import wrap_dim
from ...tensor import Tensor

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "elu", "elu_", "selu",
           "selu_", "celu", "celu_", "gelu", "silu", "mish", "sigmoid", "tanh", "hardtanh",
           "hardtanh_", "rrelu", "rrelu_", "hardsigmoid", "hardswish", "softplus", "softsign",
           "softshrink", "hardshrink", "tanhshrink", "threshold", "threshold_", "logsigmoid",
           "softmax", "log_softmax", "softmin", "glu", "gumbel_softmax"]


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(x, 0)``."""
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:
    return input.relu_()


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    return input - input.tanh()


def _rrelu(op: str, input, lower: float, upper: float, training: bool, inplace: bool,
           generator=None) -> Tensor:
    x = as_tensor_arg(input, op)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"{op}: \"leaky_relu_cpu\" not implemented for "
                                  f"'{x.dtype}' (got {describe(x)})")
    if training:  # one slope per element, uniform in [lower, upper)
        slope = rand(*x.shape, generator=generator, dtype=x.dtype, device=x.device)
        slope = slope * (upper - lower) + lower
    else:
        slope = (lower + upper) / 2.0
    if inplace:
        return x.copy_(where(x > 0, x, x * slope))
    return where(x > 0, x, x * slope)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: ``x`` where positive, ``a * x`` elsewhere, with ``a`` drawn uniformly
    from ``[lower, upper)`` per element in training and ``(lower + upper) / 2`` otherwise. The
    gradient is the slope used (``a`` at ``x <= 0``).

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> F.rrelu(dg.tensor([-3.0, 2.0]), 0.1, 0.3)
        tensor([-0.6000,  2.0000])
    """
    return _rrelu("rrelu", input, lower, upper, training, inplace)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """``rrelu`` in place."""
    return _rrelu("rrelu_", input, lower, upper, training, True)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)`` where ``a, b`` are the two halves of ``input`` along ``dim``."""
    x = as_tensor_arg(input, "glu")
    if x.ndim == 0:
        raise RuntimeError("glu: does not support scalars because halving size must be even")
    d = wrap_dim(dim, x.ndim, "glu")
    if x.shape[d] % 2:
        raise RuntimeError(f"glu: Halving dimension must be even, but dimension {d} is size "
                           f"{x.shape[d]} (got {describe(x)})")
    a, b = x.chunk(2, d)
    return a * b.sigmoid()


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-x)`` along ``dim``; the result has the input's dtype (or ``dtype``), as
    softmax's."""
    x = float_input(input, "softmin", dtype)
    if dim is None:
        dim = softmax_dim("softmin", x.ndim)
    # -x is exact, so casting it back to a half dtype loses nothing
    return softmax(-x, dim, dtype=dtype or as_tensor_arg(input, "softmin").dtype)


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax (concrete) distribution over ``dim``:
    ``softmax((logits + g) / tau)`` with ``g = -log(E)``, ``E ~ Exponential(1)`` i.i.d. With
    ``hard=True`` the result is the one-hot of its argmax in the forward pass, and the soft
    sample's gradient in the backward pass (straight-through). ``eps`` is unused (PyTorch keeps
    it for compatibility).

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> y = F.gumbel_softmax(dg.zeros(2, 5), tau=0.5, hard=True)
        >>> y.sum(-1).tolist()
        [1.0, 1.0]
    """
    x = as_tensor_arg(logits, "gumbel_softmax")
    # E = -log(U) for U uniform on (0, 1]: 1 - rand lies there, so E is finite
    exp1 = -(1.0 - rand(*x.shape, dtype=x.dtype, device=x.device)).log()
    y = softmax((x - exp1.log()) / tau, dim)
    if not hard:
        return y
    one_hot = (y == y.detach().amax(dim, keepdim=True)).to(y.dtype)
    # a tie keeps only its first position, as argmax does
    first = one_hot.cumsum(dim) == 1
    y_hard = where(first & (one_hot > 0), 1.0, 0.0).to(y.dtype)
    return y_hard - y.detach() + y
