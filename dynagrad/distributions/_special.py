"""Differentiable special functions the distributions need (lgamma, digamma, polygamma, erfinv,
the scaled Bessel functions i0e/i1e and the regularized incomplete gamma function).

Each is one vectorised SciPy call on the host buffer (a host round trip on CUDA); its gradient
is written with the next function of the family, so gradients of gradients work too. Where the
package's own op exists (``dg.lgamma`` and friends), that op is used instead.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special as sp

from ..autograd.function import Function
from ..kernels.buffers import device_index, host, move_array
from ..ops.registry import FUNCTIONS
from ..tensor import Tensor, _wrap


def _host_call(f, x: Tensor, *args) -> Tensor:
    """``f`` applied to ``x``'s values in float64 on the host, back in ``x``'s dtype and place."""
    with np.errstate(all="ignore"):
        out = np.asarray(f(*args, host(x._data).astype(np.float64)), dtype=x.dtype.np)
    return _wrap(move_array(out, device_index(x._data)), x.dtype)


class _Lgamma(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _host_call(sp.gammaln, x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * digamma(x)


class _Polygamma(Function):
    @staticmethod
    def forward(ctx, n, x):
        ctx.n = n
        ctx.save_for_backward(x)
        return _host_call(sp.digamma, x) if n == 0 else _host_call(sp.polygamma, x, n)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return None, g * polygamma(ctx.n + 1, x)


class _Erfinv(Function):
    @staticmethod
    def forward(ctx, x):
        y = _host_call(sp.erfinv, x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (0.5 * math.sqrt(math.pi)) * (y * y).exp()


class _I0e(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _host_call(sp.i0e, x)

    @staticmethod
    def backward(ctx, g):
        # d/dx [e^-|x| I0(x)] = e^-|x| I1(x) - sign(x) e^-|x| I0(x)
        (x,) = ctx.saved_tensors
        return g * (i1e(x) - x.sign() * i0e(x))


class _I1e(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _host_call(sp.i1e, x)

    @staticmethod
    def backward(ctx, g):
        # I1'(x) = I0(x) - I1(x)/x, so d/dx [e^-|x| I1] = e^-|x| I0 - e^-|x| I1 (1/x + sign(x))
        (x,) = ctx.saved_tensors
        return g * (i0e(x) - i1e(x) * (x.reciprocal() + x.sign()))


class _Gammainc(Function):
    """P(a, x); differentiable in ``x`` only (as in PyTorch, whose igamma has no gradient in a)."""
    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a, x)
        av = host(a._data).astype(np.float64)
        return _host_call(lambda v: sp.gammainc(av, v), x)

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        return None, g * ((a - 1) * x.log() - x - lgamma(a)).exp()


def lgamma(x: Tensor) -> Tensor:
    return FUNCTIONS["lgamma"](x) if "lgamma" in FUNCTIONS else _Lgamma.apply(x)


def digamma(x: Tensor) -> Tensor:
    return FUNCTIONS["digamma"](x) if "digamma" in FUNCTIONS else _Polygamma.apply(0, x)


def polygamma(n: int, x: Tensor) -> Tensor:
    return FUNCTIONS["polygamma"](n, x) if "polygamma" in FUNCTIONS else _Polygamma.apply(n, x)


def erfinv(x: Tensor) -> Tensor:
    return FUNCTIONS["erfinv"](x) if "erfinv" in FUNCTIONS else _Erfinv.apply(x)


def i0e(x: Tensor) -> Tensor:
    return _I0e.apply(x)


def i1e(x: Tensor) -> Tensor:
    return _I1e.apply(x)


def gammainc(a: Tensor, x: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x) (``a`` and ``x`` broadcast)."""
    a, x = a.expand(_shape(a, x)), x.expand(_shape(a, x))
    return _Gammainc.apply(a, x)


def _shape(a: Tensor, x: Tensor) -> tuple:
    return tuple(np.broadcast_shapes(tuple(a.shape), tuple(x.shape)))


def xlogy(x: Tensor, y: Tensor) -> Tensor:
    """x * log(y), 0 where x == 0 (also at y == 0)."""
    return (x * y.log()).masked_fill(x == 0, 0.0)


def mvlgamma(x: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``."""
    from ..creation import arange
    j = arange(p, dtype=x.dtype, device=x.device) * 0.5
    return lgamma(x.unsqueeze(-1) - j).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)
