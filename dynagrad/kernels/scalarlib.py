"""Scalar helpers that generated kernels call (compiled into each kernel by Numba).

Changing this file changes every kernel's cache key (see cache.py), so edits are always picked up.
"""
import math

import numba
import numpy as np


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
