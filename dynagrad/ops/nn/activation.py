"""Pointwise activations with PyTorch's functional signatures, over the elementwise table's
activation rows (``ops.elementwise._ACTIVATIONS``: a forward kernel and a fused gradient kernel
each). Registered ops of family ``nn``.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.ops.nn.activation import leaky_relu
    >>> leaky_relu(dg.tensor([-2.0, 3.0]), 0.5)
    tensor([-1.,  3.])
"""
from __future__ import annotations

from ...autograd import grad_mode
from ...errors import describe
from .._util import as_tensor_arg
from ..elementwise import OPS, Elementwise, compute, rebase_inplace, where
from ..registry import register
from ...tensor import Tensor

__all__ = ["leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_", "celu", "celu_", "gelu",
           "silu", "mish", "hardtanh", "hardtanh_", "hardsigmoid", "hardswish", "softplus",
           "softsign", "softshrink", "hardshrink", "threshold", "threshold_", "logsigmoid",
           "prelu"]

_GRAD = grad_mode.GRAD_ENABLED

_GELU, _GELU_TANH, _SILU, _MISH = OPS["gelu"], OPS["gelu_tanh"], OPS["silu"], OPS["mish"]
_SOFTPLUS, _ELU, _LEAKY, _HARDTANH = OPS["softplus"], OPS["elu"], OPS["leaky_relu"], \
    OPS["hardtanh"]
_HARDSIGMOID, _HARDSWISH, _SOFTSIGN = OPS["hardsigmoid"], OPS["hardswish"], OPS["softsign"]
_SOFTSHRINK, _HARDSHRINK, _THRESHOLD = OPS["softshrink"], OPS["hardshrink"], OPS["threshold"]
_LOGSIGMOID = OPS["logsigmoid"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _apply(op: Elementwise, x, params: dict | None = None, inplace: bool = False) -> Tensor:
    """``op(x)`` on a floating ``x`` (an activation has no integer form), in place if asked."""
    if not isinstance(x, Tensor):
        x = as_tensor_arg(x, op.name)
    if not x.dtype.is_floating_point:
        raise TypeError(f"{op.name}: expected a floating point input, got {describe(x)}")
    if inplace:
        return _in_place(op, x, params)
    if params is None:
        return op.unary(x)
    return compute(op, (x,), params)


def _in_place(op: Elementwise, x: Tensor, params) -> Tensor:
    """``x`` <- op(x), recorded in the graph when ``x`` requires grad."""
    if _GRAD[0] and x._requires_grad:
        if x.grad_fn is None:
            raise RuntimeError(f"{op.name}_: a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
        return rebase_inplace(x, lambda old: compute(op, (old,), params))
    return compute(op, (x,), params, out=x)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere."""
    return _apply(_LEAKY, input, {"negative_slope": negative_slope}, inplace)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    return _apply(_ELU, input, {"alpha": alpha, "scale": 1.0, "input_scale": 1.0}, inplace)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    return _apply(_ELU, input, {"alpha": _SELU_ALPHA, "scale": _SELU_SCALE, "input_scale": 1.0},
                  inplace)


def selu_(input: Tensor) -> Tensor:
    return selu(input, True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise ValueError("celu: alpha must not be zero (the input is divided by it)")
    return _apply(_ELU, input, {"alpha": alpha, "scale": 1.0, "input_scale": 1.0 / alpha},
                  inplace)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, True)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)``; ``approximate='tanh'`` uses the tanh approximation."""
    if approximate == "none":
        return _apply(_GELU, input)
    if approximate == "tanh":
        return _apply(_GELU_TANH, input)
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (swish)."""
    return _apply(_SILU, input, None, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    return _apply(_MISH, input, None, inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """Clamp to ``[min_val, max_val]`` (gradient 0 outside the open interval)."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val "
                         f"({max_val})")
    return _apply(_HARDTANH, input, {"min_val": min_val, "max_val": max_val}, inplace)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, True)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``clamp(x / 6 + 1/2, 0, 1)``."""
    return _apply(_HARDSIGMOID, input, None, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * hardsigmoid(x)``."""
    return _apply(_HARDSWISH, input, None, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``; linear where ``beta * x > threshold``."""
    return _apply(_SOFTPLUS, input, {"beta": beta, "threshold": threshold})


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    return _apply(_SOFTSIGN, input)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """Shrink toward 0 by ``lambd``; 0 inside ``[-lambd, lambd]``."""
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be "
                           f"{lambd}.")
    return _apply(_SOFTSHRINK, input, {"lambd": lambd})


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` outside ``[-lambd, lambd]``, 0 inside."""
    return _apply(_HARDSHRINK, input, {"lambd": lambd})


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, ``value`` elsewhere."""
    return _apply(_THRESHOLD, input, {"threshold": threshold, "value": value}, inplace)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _apply(_THRESHOLD, input, {"threshold": threshold, "value": value}, True)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, stable for large ``|x|``."""
    return _apply(_LOGSIGMOID, input)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` has 1 entry or one per channel
    (dim 1, or dim 0 of a 1-D input). A composition of ops, so its gradients (both arguments,
    any order) come from them.

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([-2.0, 3.0]).prelu(dg.tensor([0.25]))
        tensor([-0.5000,  3.0000])
    """
    x = as_tensor_arg(input, "prelu")
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu(): argument 'weight' (position 2) must be Tensor, not "
                        f"{type(weight).__name__}")
    n = weight.numel()
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: weight must be 0-D or 1-D (got {describe(weight)})")
    if n != 1:
        channels = x.shape[1] if x.ndim >= 2 else (x.shape[0] if x.ndim == 1 else 1)
        if n != channels:
            raise RuntimeError(f"prelu: Mismatch of parameter numbers and input channel size. "
                               f"Found parameter numbers = {n} and channel size = {channels} (a "
                               f"parameter count that is neither 1 nor the channels; got input "
                               f"{describe(x)}, weight {describe(weight)})")
        if x.ndim >= 2:
            weight = weight.reshape((1, n) + (1,) * (x.ndim - 2))
    elif weight.ndim:
        weight = weight.reshape(())
    return where(x > 0, x, x * weight)


# the Tensor methods and dg.<name> functions PyTorch has
for _fn, _method, _functional in (
        (leaky_relu, False, False), (elu, False, False), (selu, False, True),
        (celu, False, True), (gelu, False, False), (silu, False, False), (mish, False, False),
        (hardtanh, False, False), (hardsigmoid, False, False), (hardswish, False, False),
        (softplus, False, False), (softsign, False, False), (softshrink, False, False),
        (hardshrink, True, True), (threshold, False, True), (logsigmoid, False, False),
        (prelu, True, True)):
    register(_fn.__name__, _fn, "nn", method=_method, functional=_functional)
