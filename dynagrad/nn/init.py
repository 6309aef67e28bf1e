"""Parameter initialisation, in place and without recording gradients (PyTorch's ``nn.init``).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> w = dg.empty(256, 128)
    >>> _ = nn.init.kaiming_uniform_(w, nonlinearity="relu")
    >>> bound = (6 / 128) ** 0.5             # gain * sqrt(3 / fan_in)
    >>> bool(w.abs().max() <= bound)
    True
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..creation import empty
from ..errors import describe
from ..ops.placement import host_array
from ..random import Generator, randperm
from ..tensor import Tensor, _wrap

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
           "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_"]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended scale for weights feeding ``nonlinearity`` (PyTorch's table):
    1 for linear/conv/sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for
    leaky_relu, 3/4 for selu."""
    if nonlinearity in _LINEAR_FNS:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4  # PyTorch's value, chosen for self-normalising networks
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _check_tensor(tensor, fn: str) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"nn.init.{fn}: expected a Tensor, got {describe(tensor)}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out): dims 1 and 0 times the receptive field (the product of dims 2...)."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: Generator | None = None) -> Tensor:
    """Fill with samples of U(a, b)."""
    _check_tensor(tensor, "uniform_")
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: Generator | None = None) -> Tensor:
    """Fill with samples of N(mean, std^2)."""
    _check_tensor(tensor, "normal_")
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


# Acklam's rational approximation of the standard normal quantile (relative error < 1.2e-9);
# NumPy has no erfinv, and this keeps trunc_normal_ exact in the tails without rejection loops.
_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
      1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00)
_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
      6.680131188771972e+01, -1.328068155288572e+01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
      -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
      3.754408661907416e+00)
_P_LOW = 0.02425


def _poly(coefs, x):
    out = np.zeros_like(x)
    for c in coefs:
        out = out * x + c
    return out


def _norm_ppf(p: np.ndarray) -> np.ndarray:
    """Standard normal quantile of ``p`` in (0, 1) (float64)."""
    out = np.empty_like(p)
    lo, hi = p < _P_LOW, p > 1 - _P_LOW
    mid = ~(lo | hi)
    q = p[mid] - 0.5
    r = q * q
    out[mid] = _poly(_A, r) * q / (_poly(_B, r) * r + 1)
    with np.errstate(divide="ignore"):
        ql = np.sqrt(-2 * np.log(p[lo]))
        qh = np.sqrt(-2 * np.log1p(-p[hi]))
    out[lo] = _poly(_C, ql) / (_poly(_D, ql) * ql + 1)
    out[hi] = -_poly(_C, qh) / (_poly(_D, qh) * qh + 1)
    return out


def _norm_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Generator | None = None) -> Tensor:
    """Fill with N(mean, std^2) samples conditioned on lying in [a, b] (inverse-CDF sampling;
    ``a`` and ``b`` are absolute bounds, as in PyTorch)."""
    _check_tensor(tensor, "trunc_normal_")
    if not a < b:
        raise ValueError(f"trunc_normal_: expected a < b, got a={a}, b={b}")
    alpha, beta = (a - mean) / std, (b - mean) / std
    flip = alpha > 0  # sample the mirrored interval: the lower tail keeps the CDF precise
    if flip:
        alpha, beta = -beta, -alpha
    lo, hi = _norm_cdf(alpha), _norm_cdf(beta)
    # drawn from the tensor's device's generator (the same stream on every device)
    u = empty(tuple(tensor.shape), dtype=dtypes.float64, device=tensor.device).uniform_(
        lo, hi, generator=generator)
    z = _norm_ppf(np.clip(host_array(u), np.nextafter(0, 1), 1.0))
    if flip:
        z = -z
    values = np.clip(mean + std * z, a, b)
    with no_grad():
        return tensor.copy_(_wrap(values, dtypes.float64))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    _check_tensor(tensor, "constant_")
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity (ones on the main diagonal, zeros elsewhere)."""
    _check_tensor(tensor, "eye_")
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    values = np.eye(*tensor.shape, dtype=tensor.dtype.np)
    with no_grad():
        return tensor.copy_(_wrap(values, tensor.dtype))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3/4/5-D convolution weight so the convolution is the identity (per group)."""
    _check_tensor(tensor, "dirac_")
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per_group = tensor.shape[0] // groups
    if tensor.shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    min_dim = min(out_per_group, tensor.shape[1])
    values = np.zeros(tuple(tensor.shape), dtype=tensor.dtype.np)
    centre = tuple(s // 2 for s in tensor.shape[2:])
    for g in range(groups):
        for d in range(min_dim):
            values[(g * out_per_group + d, d) + centre] = 1
    with no_grad():
        return tensor.copy_(_wrap(values, tensor.dtype))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: Generator | None = None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: Generator | None = None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str, fn: str) -> float | None:
    _check_tensor(tensor, fn)
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op")
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015); ``a`` is the
    leaky_relu negative slope used for the gain."""
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_uniform_")
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def _default_layer_init_(weight: Tensor, bias: Tensor | None, *,
                         zero_bias_without_fan_in: bool) -> None:
    """PyTorch's default for Linear and Conv layers: weight ~ kaiming_uniform(a=sqrt(5)), i.e.
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and bias ~ the same U. With no fan-in Linear still
    fills the bias (U(0, 0): zeros) while Conv leaves it untouched, as PyTorch; the flag picks."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is None:
        return
    fan_in, _ = _calculate_fan_in_and_fan_out(weight)
    if fan_in == 0 and not zero_bias_without_fan_in:
        return
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
    uniform_(bias, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_")
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian one, times ``gain``;
    tensors with more than 2 dims are flattened to (shape[0], rest)."""
    _check_tensor(tensor, "orthogonal_")
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = host_array(empty(rows, cols, dtype=tensor.dtype, device=tensor.device).normal_(
        0.0, 1.0, generator=generator))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    # fix the signs so the result is uniformly (Haar) distributed
    q = q * np.sign(np.diagonal(r))
    if rows < cols:
        q = q.T
    values = np.ascontiguousarray(q.reshape(tuple(tensor.shape)) * gain, dtype=tensor.dtype.np)
    with no_grad():
        return tensor.copy_(_wrap(values, tensor.dtype))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01,
            generator: Generator | None = None) -> Tensor:
    """A sparse 2-D matrix (Martens, 2010): N(0, std^2) values with ``ceil(sparsity * rows)``
    zeros in every column, at rows drawn at random per column.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> w = nn.init.sparse_(dg.empty(4, 3), sparsity=0.5)
        >>> (w == 0).sum(0).tolist()
        [2, 2, 2]
    """
    _check_tensor(tensor, "sparse_")
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0.0, std, generator=generator)
        for col in range(cols):
            zero_rows = randperm(rows, generator=generator, device=tensor.device)[:num_zeros]
            tensor[zero_rows, col] = 0
    return tensor
