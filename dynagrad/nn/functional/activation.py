"""Activation functions (torch.nn.functional names and signatures).

Pointwise activations are pairs of generated elementwise kernels: one for the forward value and one
fused kernel for the input gradient (``grad * f'(x)``), so a backward step is one kernel, not a
chain of small ops. The gradient kernel is itself an op whose derivative is written with dynagrad
ops, so double backward works. ``softmax``/``log_softmax`` run fused row kernels
(dynagrad/kernels/nn_softmax.py) forward and backward on the CPU; their double backward composes
ops. On CUDA, ``softmax_composite`` builds them from reductions and elementwise ops.

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.nn.functional as F
    >>> F.leaky_relu(dg.tensor([-2.0, 3.0]), 0.5)
    tensor([-1.,  3.])
    >>> F.softmax(dg.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
"""
from __future__ import annotations

import math
import re
import warnings

import numpy as np

from ... import dtypes
from ..._runtime.blas_threads import parallel_slices, run_split
from ...autograd import grad_mode
from ...autograd.function import Node, record
from ...errors import describe
from ...kernels import cache as kernel_cache
from ...kernels.cpu import memory
from ...kernels.cpu.nn import softmax as nn_softmax
from ...kernels.cpu.backend import PARALLEL_MIN_ELEMENTS
from ...ops._util import as_tensor_arg
from ...shapes import wrap_dim
from ...ops.elementwise import (Elementwise, compute, fast_binary, fast_unary, logical_and,
                                rebase_inplace, where)
from ...tensor import Tensor, _wrap

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "elu", "elu_", "selu",
           "selu_", "celu", "celu_", "gelu", "silu", "mish", "sigmoid", "tanh", "hardtanh",
           "hardtanh_", "hardsigmoid", "hardswish", "softplus", "softsign", "softshrink",
           "hardshrink", "tanhshrink", "threshold", "threshold_", "logsigmoid", "softmax",
           "log_softmax", "softmin", "glu"]

_GRAD = grad_mode.GRAD_ENABLED


# --- pointwise activations: a forward kernel and a fused gradient kernel per activation ---------

class _Pointwise:
    """``fwd``: expression of ``x``; ``bwd``: expression of ``x`` and the output gradient (written
    ``g``); ``second(gg, x, g, p)``: the gradient of ``g * f'(x)`` with respect to ``x`` (dynagrad
    ops, for double backward), or None when ``f`` is piecewise linear (``f'' = 0``)."""

    def __init__(self, name: str, fwd: str, bwd: str, second=None, params: tuple = ()):
        camel = "".join(p.capitalize() for p in name.split("_"))
        self.params = params
        bwd_expr = re.sub(r"\bg\b", "y", bwd)  # kernel operands are named x, y in order
        self.bwd = Elementwise(name + "_backward", {"f": bwd_expr}, "promote",
                               (self._grad_x, self._grad_g), {0, 1},
                               f"{camel}BackwardBackward0", params)
        self.fwd = Elementwise(name, {"f": fwd}, "promote", (self._grad,), {0},
                               f"{camel}Backward0", params)
        self.second = second

    def _grad(self, g, x, out, **p):
        if not p and g.dtype is x.dtype:
            return fast_binary(self.bwd, x, g)
        return compute(self.bwd, (x, g), p)

    def _grad_x(self, gg, x, g, out, **p):
        if self.second is None:
            return x * 0.0
        return self.second(gg, x, g, p)

    def _grad_g(self, gg, x, g, out, **p):
        return self._grad(gg, x, out, **p)

    def __call__(self, x: Tensor, params: dict | None = None, inplace: bool = False) -> Tensor:
        if not isinstance(x, Tensor):
            x = as_tensor_arg(x, self.fwd.name)
        if not x.dtype.is_floating_point:
            raise TypeError(f"{self.fwd.name}: expected a floating point input, got {describe(x)}")
        if inplace:
            return _in_place(self.fwd, x, params)
        if params is None:
            return fast_unary(self.fwd, x)
        return compute(self.fwd, (x,), params)


def _in_place(op: Elementwise, x: Tensor, params) -> Tensor:
    """``x`` <- op(x), recorded in the graph when ``x`` requires grad."""
    if _GRAD[0] and x._requires_grad:
        if x.grad_fn is None:
            raise RuntimeError(f"{op.name}_: a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
        return rebase_inplace(x, lambda old: compute(op, (old,), params))
    return compute(op, (x,), params, out=x)


def _only_where(cond, value):
    return where(cond, value, 0.0)


def _sig(x):
    return x.sigmoid()


_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_ARG = "(0.7978845608028654 * (x + 0.044715 * x * x * x))"
# softplus(x) as in torch's mish. Expressions call scalarlib's vectorizable float32 forms
# (fexp, flog1p, ftanh, ...), each at most once: two inlined copies of one in a kernel trip a
# Numba IR warning, so gradients that need one twice have a scalarlib function of their own.
_SP = "(x if x > 20.0 else flog1p(fexp(x)))"


def _gelu_second(gg, x, g, p):
    phi = (x * x * -0.5).exp() * _INV_SQRT_2PI
    return gg * g * phi * (2.0 - x * x)


def _gelu_tanh_second(gg, x, g, p):
    t = ((x + x * x * x * 0.044715) * 0.7978845608028654).tanh()
    du = (x * x * 0.134145 + 1.0) * 0.7978845608028654
    ddu = x * (0.7978845608028654 * 6.0 * 0.044715)
    return gg * g * (1.0 - t * t) * (du - x * t * du * du + x * ddu * 0.5)


def _silu_second(gg, x, g, p):
    s = _sig(x)
    return gg * g * s * (1.0 - s) * (2.0 + x * (1.0 - 2.0 * s))


def _mish_second(gg, x, g, p):
    s = _sig(x)
    t = softplus(x).tanh()
    return gg * g * (1.0 - t * t) * s * (2.0 + x * (1.0 - s) - 2.0 * x * s * t)


def _softplus_second(gg, x, g, p):
    beta, th = p["beta"], p["threshold"]
    s = _sig(x * beta)
    return _only_where(x * beta <= th, gg * g * s * (1.0 - s) * beta)


def _elu_second(gg, x, g, p):
    a, sc, isc = p["alpha"], p["scale"], p["input_scale"]
    return _only_where(x <= 0, gg * g * (x * isc).exp() * (a * sc * isc * isc))


def _hardswish_second(gg, x, g, p):
    return _only_where(logical_and(x > -3.0, x < 3.0), gg * g / 3.0)


def _softsign_second(gg, x, g, p):
    d = x.abs() + 1.0
    return gg * g * x.sign() * -2.0 / (d * d * d)


def _logsigmoid_second(gg, x, g, p):
    s = _sig(x)
    return -(gg * g * s * (1.0 - s))


_GELU = _Pointwise("gelu", "fgelu(x)", "fgelu_grad(x, g)", _gelu_second)
_GELU_TANH = _Pointwise("gelu_tanh", f"0.5 * x * (1.0 + ftanh({_TANH_ARG}))",
                        "fgelu_tanh_grad(x, g)", _gelu_tanh_second)
_SILU = _Pointwise("silu", "x * fsigmoid(x)", "fsilu_grad(x, g)", _silu_second)
_MISH = _Pointwise("mish", f"x * ftanh({_SP})", "fmish_grad(x, g)", _mish_second)
_SOFTPLUS = _Pointwise(
    "softplus", "x if x * beta > threshold else flog1p(fexp(x * beta)) / beta",
    "g if x * beta > threshold else g * fsigmoid(x * beta)", _softplus_second,
    ("beta", "threshold"))
_ELU = _Pointwise(
    "elu", "x * scale if x > 0 else alpha * scale * fexpm1(x * input_scale)",
    "g * scale if x > 0 else g * alpha * scale * input_scale * fexp(x * input_scale)",
    _elu_second, ("alpha", "scale", "input_scale"))
_LEAKY = _Pointwise("leaky_relu", "x if x > 0 else x * negative_slope",
                    "g if x > 0 else g * negative_slope", None, ("negative_slope",))
_HARDTANH = _Pointwise("hardtanh", "min_val if x < min_val else (max_val if x > max_val else x)",
                       "g if (x > min_val and x < max_val) else 0.0", None, ("min_val", "max_val"))
_HARDSIGMOID = _Pointwise(
    "hardsigmoid", "0.0 if x <= -3.0 else (1.0 if x >= 3.0 else x / 6.0 + 0.5)",
    "g / 6.0 if (x > -3.0 and x < 3.0) else 0.0")
_HARDSWISH = _Pointwise(
    "hardswish", "0.0 if x <= -3.0 else (x if x >= 3.0 else x * (x + 3.0) / 6.0)",
    "0.0 if x <= -3.0 else (g * (x / 3.0 + 0.5) if x < 3.0 else g)", _hardswish_second)
_SOFTSIGN = _Pointwise("softsign", "x / (1.0 + abs(x))", "g / ((1.0 + abs(x)) * (1.0 + abs(x)))",
                       _softsign_second)
_SOFTSHRINK = _Pointwise(
    "softshrink", "x - lambd if x > lambd else (x + lambd if x < -lambd else 0.0 * x)",
    "g if (x > lambd or x < -lambd) else 0.0", None, ("lambd",))
_HARDSHRINK = _Pointwise("hardshrink", "x if (x > lambd or x < -lambd) else 0.0 * x",
                         "g if (x > lambd or x < -lambd) else 0.0", None, ("lambd",))
_THRESHOLD = _Pointwise("threshold", "value if x <= threshold else x",
                        "0.0 if x <= threshold else g", None, ("threshold", "value"))
_LOGSIGMOID = _Pointwise("logsigmoid", "min(x, 0.0) - flog1p(fexp(-abs(x)))",
                         "g * (1.0 - fsigmoid(x))", _logsigmoid_second)

_ALL_POINTWISE = (_GELU, _GELU_TANH, _SILU, _MISH, _SOFTPLUS, _ELU, _LEAKY, _HARDTANH,
                  _HARDSIGMOID, _HARDSWISH, _SOFTSIGN, _SOFTSHRINK, _HARDSHRINK, _THRESHOLD,
                  _LOGSIGMOID)
# the fast path keeps compiled entry points per op: forget them with the kernel cache
kernel_cache._clear_hooks.append(
    lambda: [(a.fwd.fast.clear(), a.bwd.fast.clear()) for a in _ALL_POINTWISE])

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(x, 0)``."""
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:
    return input.relu_()


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere."""
    return _LEAKY(input, {"negative_slope": negative_slope}, inplace)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    return _ELU(input, {"alpha": alpha, "scale": 1.0, "input_scale": 1.0}, inplace)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    return _ELU(input, {"alpha": _SELU_ALPHA, "scale": _SELU_SCALE, "input_scale": 1.0}, inplace)


def selu_(input: Tensor) -> Tensor:
    return selu(input, True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise ValueError("celu: alpha must not be zero (the input is divided by it)")
    return _ELU(input, {"alpha": alpha, "scale": 1.0, "input_scale": 1.0 / alpha}, inplace)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, True)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)``; ``approximate='tanh'`` uses the tanh approximation."""
    if approximate == "none":
        return _GELU(input)
    if approximate == "tanh":
        return _GELU_TANH(input)
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (swish)."""
    return _SILU(input, None, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    return _MISH(input, None, inplace)


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """Clamp to ``[min_val, max_val]`` (gradient 0 outside the open interval)."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val "
                         f"({max_val})")
    return _HARDTANH(input, {"min_val": min_val, "max_val": max_val}, inplace)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, True)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``clamp(x / 6 + 1/2, 0, 1)``."""
    return _HARDSIGMOID(input, None, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * hardsigmoid(x)``."""
    return _HARDSWISH(input, None, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``; linear where ``beta * x > threshold``."""
    return _SOFTPLUS(input, {"beta": beta, "threshold": threshold})


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    return _SOFTSIGN(input)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """Shrink toward 0 by ``lambd``; 0 inside ``[-lambd, lambd]``."""
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be "
                           f"{lambd}.")
    return _SOFTSHRINK(input, {"lambd": lambd})


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` outside ``[-lambd, lambd]``, 0 inside."""
    return _HARDSHRINK(input, {"lambd": lambd})


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    return input - input.tanh()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, ``value`` elsewhere."""
    return _THRESHOLD(input, {"threshold": threshold, "value": value}, inplace)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _THRESHOLD(input, {"threshold": threshold, "value": value}, True)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, stable for large ``|x|``."""
    return _LOGSIGMOID(input)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` has 1 or ``C`` (dim 1) entries."""
    x = as_tensor_arg(input, "prelu")
    n = weight.numel()
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: weight must be 0-D or 1-D (got {describe(weight)})")
    if n != 1:
        channels = x.shape[1] if x.ndim >= 2 else (x.shape[0] if x.ndim == 1 else 1)
        if n != channels:
            raise RuntimeError(f"prelu: mismatch in parameter count: weight has {n} entries but "
                               f"the input has {channels} channels (got input {describe(x)}, "
                               f"weight {describe(weight)})")
        if x.ndim >= 2:
            weight = weight.reshape((1, n) + (1,) * (x.ndim - 2))
    elif weight.ndim:
        weight = weight.reshape(())
    return where(x > 0, x, x * weight)


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


# --- softmax family: fused row kernels ----------------------------------------------------------

def _softmax_dim(name: str, ndim: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


# The arguments of each row kernel that hold one entry per row (the others are shared): a split
# call hands each slice its rows of these.
_ROW_ARGS = {"softmax_forward": (0, 1), "softmax_backward": (0, 1, 2),
             "cross_entropy_forward": (0, 1, 5, 6), "cross_entropy_backward": (0, 1, 3, 4, 7)}


def _kernel(kind: str, dtype: str, *flag, rows: np.ndarray | None = None):
    """The row kernel ``kind``; given large ``rows``, a callable that runs it on all cores.

    Slices of rows go to OpenBLAS's workers (``run_split``), as the BLAS work around these
    kernels does: on Numba's own threads, the LSTM LM's cross-entropy forward right after its
    decoder GEMM took 8.6 ms (2.1 alone), fighting OpenBLAS's busy-waiting workers; as slices on
    those workers, ~4 ms. Alone, the slices cost ~10% more than Numba's threads (1.32 vs 1.17 ms
    on (4096, 1000)). Without NumPy's OpenBLAS, Numba's threaded variant runs."""
    large = rows is not None and rows.size >= PARALLEL_MIN_ELEMENTS and rows.shape[0] >= 16
    split = large and parallel_slices(rows.shape[0]) >= 2
    threaded = large and not split
    key = ("nn_softmax", kind, dtype, threaded) + flag
    k = kernel_cache._memory.get(key)
    if k is None:
        k = kernel_cache.lookup(key, lambda: getattr(nn_softmax, kind)(dtype, *flag,
                                                                       threaded=threaded))
    if not split:
        return k
    per_row = _ROW_ARGS[kind]

    def on_slices(*args) -> None:
        run_split(rows.shape[0], lambda lo, hi: k(*[a[lo:hi] if i in per_row else a
                                                    for i, a in enumerate(args)]))
    return on_slices


def to_rows(arr: np.ndarray, dim: int) -> np.ndarray:
    """``arr`` with ``dim`` moved last, as a contiguous ``(rows, arr.shape[dim])`` array."""
    if arr.ndim == 0:
        return arr.reshape(1, 1)
    if dim != arr.ndim - 1:
        arr = np.moveaxis(arr, dim, -1)
    return np.ascontiguousarray(arr).reshape(-1, arr.shape[-1])


def from_rows(rows: np.ndarray, shape: tuple, dim: int) -> np.ndarray:
    """Inverse of ``to_rows``: a contiguous array of ``shape``."""
    if len(shape) == 0:
        return rows.reshape(())
    if dim == len(shape) - 1:
        return rows.reshape(shape)
    moved = shape[:dim] + shape[dim + 1:] + (shape[dim],)
    return np.ascontiguousarray(np.moveaxis(rows.reshape(moved), -1, dim))


def _float_input(input, name: str, dtype) -> Tensor:
    x = as_tensor_arg(input, name)
    if dtype is not None and x.dtype is not dtype:
        x = x.to(dtype)
    if x.dtype not in (dtypes.float32, dtypes.float64):
        if x.dtype.is_floating_point:  # float16 / bfloat16: compute in float32
            return x.to(dtypes.float32)
        raise TypeError(f"{name}: expected a floating point input (or dtype=), got {describe(x)}")
    return x


class _SoftmaxNode(Node):
    """Backward of softmax / log_softmax: one fused row kernel; composes ops under create_graph."""

    log = False

    def backward(self, g):
        (y,) = self.saved_tensors
        dim = self.dim
        if _GRAD[0]:  # double backward: the formula in ops, reading y as this node's output
            y = y._alias()
            y.grad_fn, y._output_nr, y._requires_grad = self, 0, True
            if self.log:
                return (g - y.exp() * g.sum(dim, keepdim=True)),
            return (y * (g - (g * y).sum(dim, keepdim=True))),
        shape = tuple(y.shape)
        ga = g._data if g.dtype is y.dtype else g._data.astype(y.dtype.np)
        y2, g2 = to_rows(y._data, dim), to_rows(ga, dim)
        out = memory.empty(y2.shape, y2.dtype)
        if out.size:
            _kernel("softmax_backward", y.dtype.name, self.log, rows=y2)(y2, g2, out)
        res = _wrap(from_rows(out, shape, dim), y.dtype)
        return (res if res.dtype is self.in_dtype else res.to(self.in_dtype)),


class SoftmaxBackward0(_SoftmaxNode):
    pass


class LogSoftmaxBackward0(_SoftmaxNode):
    log = True


def _softmax(input, dim, dtype, log: bool) -> Tensor:
    name = "log_softmax" if log else "softmax"
    x = _float_input(input, name, dtype)
    if dim is None:
        dim = _softmax_dim(name, x.ndim)
    d = wrap_dim(dim, x.ndim, name)
    if x.is_cuda:
        return softmax_composite(x, d, log)
    shape = tuple(x.shape)
    rows = to_rows(x._data, d)
    out = memory.empty(rows.shape, rows.dtype)  # pooled: a fresh large one page-faults
    if out.size:
        _kernel("softmax_forward", x.dtype.name, log, rows=rows)(rows, out)
    res = _wrap(from_rows(out, shape, d), x.dtype)
    if _GRAD[0] and x._requires_grad:
        node = (LogSoftmaxBackward0 if log else SoftmaxBackward0)()
        node.dim, node.in_dtype = d, x.dtype
        node.save(res._alias())
        record(node, (x,), (res,))
    return res


def softmax_composite(x: Tensor, dim: int, log: bool) -> Tensor:
    """``softmax`` / ``log_softmax`` of a float tensor along ``dim`` built from reductions and
    elementwise ops (any device; autograd gives the gradient). The row maximum is subtracted
    first, so large logits do not overflow; it carries no gradient since the result does not
    depend on it."""
    if x.ndim == 0:
        return softmax_composite(x.reshape(1), 0, log).reshape(())
    with grad_mode.no_grad():
        m = x.amax(dim, keepdim=True)
    z = x - m
    e = z.exp()
    if log:
        return z - e.sum(dim, keepdim=True).log()
    return e / e.sum(dim, keepdim=True)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim`` (one fused kernel forward and backward).

    Example:
        >>> import dynagrad as dg
        >>> softmax(dg.tensor([[1.0, 1.0, 1.0, 1.0]]), dim=-1)
        tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
    """
    return _softmax(input, dim, dtype, False)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype=None) -> Tensor:
    """``x - logsumexp(x)`` along ``dim`` (one fused kernel forward and backward)."""
    return _softmax(input, dim, dtype, True)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-x)`` along ``dim``."""
    x = _float_input(input, "softmin", dtype)
    if dim is None:
        dim = _softmax_dim("softmin", x.ndim)
    return _softmax(-x, dim, None, False)
