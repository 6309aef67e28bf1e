"""Scalar helpers that generated kernels call (compiled into each kernel by Numba).

Changing this file changes every kernel's cache key (see cache.py), so edits are always picked up.
"""
import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload


@numba.njit(inline="always")
def sigmoid(x):
    # split on the sign so exp never overflows
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@numba.njit(inline="always")
def floor_div(x, y):
    # PyTorch's floating floor division: exact quotient from fmod, then floor; x / 0 gives inf/nan
    if y == 0:
        return x / y
    m = np.fmod(x, y)
    d = (x - m) / y
    if m != 0 and (y < 0) != (m < 0):
        d -= 1.0
    f = np.floor(d)
    if d - f > 0.5:
        f += 1.0
    return f


@numba.njit(inline="always")
def py_mod(x, y):
    # remainder with the sign of the divisor (torch.remainder)
    r = np.fmod(x, y)
    if r != 0 and ((r < 0) != (y < 0)):
        r += y
    return r


@numba.njit(inline="always")
def int_fmod(x, y):
    if y == 0:
        return 0
    r = abs(x) % abs(y)
    return -r if x < 0 else r


@numba.njit(inline="always")
def round_half_even(x):
    return np.rint(x)  # the current rounding mode: to nearest, ties to even (as torch.round)


@numba.njit(inline="always")
def frac(x):
    return x - np.trunc(x)


@numba.njit(inline="always")
def nan_to_num(x, nan, posinf, neginf):
    if x != x:
        return nan
    if x == math.inf:
        return posinf
    if x == -math.inf:
        return neginf
    return x


@numba.njit(inline="always")
def fmax_nan(x, y):
    # torch.maximum propagates NaN from either side
    if x != x or y != y:
        return x + y
    return x if x >= y else y


@numba.njit(inline="always")
def fmin_nan(x, y):
    if x != x or y != y:
        return x + y
    return x if x <= y else y


@numba.njit(inline="always")
def clamp(x, lo, hi):
    # torch.clamp: NaN stays NaN; min applied first, then max
    if x != x:
        return x
    if x < lo:
        x = lo
    if x > hi:
        x = hi
    return x


@numba.njit(inline="always")
def int_pow(x, y):
    if y < 0:
        return 1 if x == 1 else (1 if (x == -1 and y % 2 == 0) else (-1 if x == -1 else 0))
    r = 1
    while y:
        if y & 1:
            r *= x
        x *= x
        y >>= 1
    return r


# --- vectorizable float32 transcendentals ------------------------------------------------------
# pip's llvmlite has no SVML, so math.exp / math.tanh are scalar libm calls that stop LLVM from
# vectorizing a loop. For float32 these branch-light polynomial forms (Cephes' expf / tanhf
# coefficients) vectorize and stay within ~1 ulp of the float64 result; float64 keeps libm.

@intrinsic
def _int32_bits_as_float32(typingctx, value):
    """Reinterpret the low 32 bits of an integer as a float32 (builds 2**k exactly)."""
    if not isinstance(value, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        bits = args[0]
        if value.bitwidth != 32:
            bits = builder.trunc(bits, ir.IntType(32))
        return builder.bitcast(bits, ir.FloatType())
    return types.float32(value), codegen


@numba.njit(inline="always")
def _exp32_scaled(r, k):
    """exp(r) * 2**k for |r| <= ln(2)/2 (float32 polynomial). 2**k is applied as two normal
    powers of two so the result underflows to subnormals and overflows to inf where float32 does."""
    y = np.float32(1.9875691500e-4)
    y = y * r + np.float32(1.3981999507e-3)
    y = y * r + np.float32(8.3334519073e-3)
    y = y * r + np.float32(4.1665795894e-2)
    y = y * r + np.float32(1.6666665459e-1)
    y = y * r + np.float32(5.0000001201e-1)
    y = y * r * r + r + np.float32(1.0)
    ki = np.int32(k)
    k1 = ki >> np.int32(1)
    k2 = ki - k1
    return (y * _int32_bits_as_float32((k1 + np.int32(127)) << np.int32(23))
            * _int32_bits_as_float32((k2 + np.int32(127)) << np.int32(23)))


@numba.njit(inline="always")
def _exp32(x):
    xc = min(max(x, np.float32(-104.0)), np.float32(89.0))
    k = np.floor(xc * np.float32(1.4426950408889634) + np.float32(0.5))
    r = xc - k * np.float32(0.693359375) - k * np.float32(-2.12194440e-4)
    e = _exp32_scaled(r, k)
    return e if x == x else x


@numba.njit(inline="always")
def _exp32_neg_square(a):
    """exp(-a*a) without the rounding of a*a: the square and the range reduction run in
    float64 (a*a is exact there), the polynomial in float32."""
    s = -np.float64(min(a, np.float32(11.0))) ** 2
    k = np.floor(s * 1.4426950408889634 + 0.5)
    return _exp32_scaled(np.float32(s - k * 0.6931471805599453), np.float32(k))


def fexp(x):
    """exp(x); vectorizable polynomial for float32 (use inside kernels)."""
    return math.exp(x)


@overload(fexp, inline="always")
def _fexp(x):
    if x == types.float32:
        return lambda x: _exp32(x)
    return lambda x: math.exp(x)


@numba.njit(inline="always")
def _tanh32(x):
    ax = abs(x)
    z = x * x
    p = np.float32(-5.70498872745e-3)
    p = p * z + np.float32(2.06390887954e-2)
    p = p * z - np.float32(5.37397155531e-2)
    p = p * z + np.float32(1.33314422036e-1)
    p = p * z - np.float32(3.33332819422e-1)
    small = p * z * x + x
    big = np.float32(1.0) - np.float32(2.0) / (_exp32(min(np.float32(2.0) * ax,
                                                         np.float32(88.0))) + np.float32(1.0))
    big = big if x >= 0 else -big
    return small if ax < np.float32(0.625) else big


def ftanh(x):
    """tanh(x); vectorizable for float32 (use inside kernels)."""
    return math.tanh(x)


@overload(ftanh, inline="always")
def _ftanh(x):
    if x == types.float32:
        return lambda x: _tanh32(x) if x == x else x
    return lambda x: math.tanh(x)


def fsigmoid(x):
    """1 / (1 + exp(-x)) without overflow; vectorizable for float32."""
    return sigmoid(x)


@overload(fsigmoid, inline="always")
def _fsigmoid(x):
    if x == types.float32:
        def impl(x):
            e = _exp32(-abs(x))  # in (0, 1]: never overflows
            s = np.float32(1.0) / (np.float32(1.0) + e)
            return s if x >= 0 else (e * s if x == x else x)  # e/(1+e): no cancellation
        return impl
    return lambda x: sigmoid(x)


# erf / erfc for float32: |x| < 1 uses erf(x)/x as a polynomial in x*x; |x| >= 1 uses
# erfc(x) = exp(-x*x) * Q(1/x). Coefficients are least-squares fits (float64) evaluated in float32:
# erf within ~2.5 ulp; erfc keeps its relative accuracy in the tail (no 1 - erf cancellation).

@numba.njit(inline="always")
def _erf_small32(x):  # |x| < 1
    z = x * x
    p = np.float32(8.006874122656882e-05)
    p = p * z - np.float32(0.0008053751080296934)
    p = p * z + np.float32(0.005192957818508148)
    p = p * z - np.float32(0.0268560703843832)
    p = p * z + np.float32(0.11283634603023529)
    p = p * z - np.float32(0.3761262893676758)
    p = p * z + np.float32(1.128379225730896)
    return x * p


@numba.njit(inline="always")
def _erfc_tail32(a):  # a >= 1 (smaller values are clamped by the callers' selects)
    a = max(a, np.float32(1.0))
    t = np.float32(1.0) / a
    q = np.float32(-0.0015416835667565465)
    q = q * t - np.float32(0.042964573949575424)
    q = q * t + np.float32(0.3251135051250458)
    q = q * t - np.float32(0.9998416304588318)
    q = q * t + np.float32(1.737575650215149)
    q = q * t - np.float32(1.846451997756958)
    q = q * t + np.float32(1.1176754236221313)
    q = q * t - np.float32(0.16821789741516113)
    q = q * t - np.float32(0.2554369866847992)
    q = q * t - np.float32(0.0026637257542461157)
    q = q * t + np.float32(0.564341127872467)
    q = q * t - np.float32(3.7222889659460634e-06)
    return _exp32_neg_square(a) * q


@numba.njit(inline="always")
def _erfc32(u):
    a = abs(u)
    small = np.float32(1.0) - _erf_small32(u)
    tail = _erfc_tail32(a)
    tail = tail if u >= 0 else np.float32(2.0) - tail
    r = small if a < np.float32(1.0) else tail
    return r if u == u else u


def fgelu(x):
    """GELU, x * Phi(x) (exact form); vectorizable for float32 (use inside kernels)."""
    return 0.5 * x * math.erfc(-x * 0.7071067811865476)


@overload(fgelu, inline="always")
def _fgelu(x):
    if x == types.float32:
        return lambda x: np.float32(0.5) * x * _erfc32(-x * np.float32(0.7071067811865476))
    return lambda x: 0.5 * x * math.erfc(-x * 0.7071067811865476)


def fgelu_grad(x, g):
    """g * d/dx GELU(x) = g * (Phi(x) + x * phi(x))."""
    return g * (0.5 * math.erfc(-x * 0.7071067811865476)
                + x * 0.3989422804014327 * math.exp(-0.5 * x * x))


@overload(fgelu_grad, inline="always")
def _fgelu_grad(x, g):
    if x == types.float32:
        def impl(x, g):
            cdf = np.float32(0.5) * _erfc32(-x * np.float32(0.7071067811865476))
            pdf = np.float32(0.3989422804014327) * _exp32(np.float32(-0.5) * x * x)
            return g * (cdf + x * pdf)
        return impl
    return lambda x, g: g * (0.5 * math.erfc(-x * 0.7071067811865476)
                             + x * 0.3989422804014327 * math.exp(-0.5 * x * x))


def ferf(x):
    """erf(x); vectorizable for float32 (use inside kernels)."""
    return math.erf(x)


@overload(ferf, inline="always")
def _ferf(x):
    if x == types.float32:
        def impl(x):
            a = abs(x)
            tail = np.float32(1.0) - _erfc_tail32(a)
            tail = tail if x >= 0 else -tail
            r = _erf_small32(x) if a < np.float32(1.0) else tail
            return r if x == x else x
        return impl
    return lambda x: math.erf(x)
