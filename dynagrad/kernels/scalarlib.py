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
def sign(x):
    return (x > 0) - (x < 0)


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
def int_mod(x, y):
    if y == 0:
        return 0
    r = x % y
    return r


@numba.njit(inline="always")
def int_fmod(x, y):
    if y == 0:
        return 0
    r = abs(x) % abs(y)
    return -r if x < 0 else r


@numba.njit(inline="always")
def round_half_even(x):
    r = np.floor(x + 0.5)
    if r - x == 0.5 and r % 2 != 0:  # tie: round to even, as torch.round
        r -= 1.0
    return r


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
def _exp32(x):
    # exp(x) = 2**k * exp(r), |r| <= ln(2)/2; 2**k is applied as two normal powers of two so
    # the result underflows to subnormals and overflows to inf exactly where float32 does
    xc = min(max(x, np.float32(-104.0)), np.float32(89.0))
    k = np.floor(xc * np.float32(1.4426950408889634) + np.float32(0.5))
    r = xc - k * np.float32(0.693359375) - k * np.float32(-2.12194440e-4)
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
    e = (y * _int32_bits_as_float32((k1 + np.int32(127)) << np.int32(23))
         * _int32_bits_as_float32((k2 + np.int32(127)) << np.int32(23)))
    return e if x == x else x


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
