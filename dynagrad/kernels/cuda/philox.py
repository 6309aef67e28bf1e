"""Uniform random numbers drawn on a GPU, bit for bit the numbers NumPy's Philox stream gives
(the stream maths is ``kernels.philox``; each GPU thread computes its own words).

Example:
    >>> from dynagrad.kernels.cuda.philox import uniform_kernel
    >>> uniform_kernel("float32")[1:]  # doctest: +ELLIPSIS
    ('kernel', (...), 'philox uniform float32')
"""
from __future__ import annotations


def uniform_kernel(dtype: str) -> tuple:
    """``(source, name, signature, description)`` of the uniform kernel for float32 / float64."""
    from numba.core import types
    u64 = types.uint64
    signature = (types.Array(getattr(types, dtype), 1, "C"), types.Array(u64, 2, "C"),
                 u64, u64, u64, u64, u64, u64, u64, u64, types.int64, types.int64, u64)
    if dtype == "float32":
        draw = """\
        if has and j == 0:
            u = uint
        else:
            m = j - has
            word = _word(m >> 1, keys, c0, c1, c2, c3, b0, b1, b2, b3, pos)
            u = (word >> _U32) if (m & 1) else (word & _LOW)
        out[j] = np.float32(u >> _U8) * np.float32(5.9604644775390625e-08)"""
    else:
        draw = """\
        word = _word(j, keys, c0, c1, c2, c3, b0, b1, b2, b3, pos)
        out[j] = np.float64(word >> _U11) * 1.1102230246251565e-16"""
    src = _PRELUDE + f"""\
@cuda.jit(cache=True)
def kernel(out, keys, c0, c1, c2, c3, b0, b1, b2, b3, pos, has, uint):
    for j in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
{draw}
"""
    return src, "kernel", signature, f"philox uniform {dtype}"


# Device code shared by both kernels. 64x64 -> 128-bit products are built from 32-bit limbs, so
# no intermediate overflows (the same code then runs on the simulator's NumPy scalars).
_PRELUDE = """\
import numpy as np
from numba import cuda

_LOW = np.uint64(0xFFFFFFFF)
_U32 = np.uint64(32)
_U8 = np.uint64(8)
_U11 = np.uint64(11)
_M0 = np.uint64(0xD2E7470EE14C6C93)
_M1 = np.uint64(0xCA5A826395121157)


@cuda.jit(device=True)
def _mulhilo(a, b):
    a_lo, a_hi = a & _LOW, a >> _U32
    b_lo, b_hi = b & _LOW, b >> _U32
    p0, p1, p2, p3 = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
    mid = (p0 >> _U32) + (p1 & _LOW) + (p2 & _LOW)
    return p3 + (p1 >> _U32) + (p2 >> _U32) + (mid >> _U32), ((mid & _LOW) << _U32) | (p0 & _LOW)


@cuda.jit(device=True)
def _philox(keys, x0, x1, x2, x3, lane):
    for r in range(keys.shape[0]):
        hi0, lo0 = _mulhilo(_M0, x0)
        hi1, lo1 = _mulhilo(_M1, x2)
        x0, x1, x2, x3 = hi1 ^ x1 ^ keys[r, 0], lo1, hi0 ^ x3 ^ keys[r, 1], lo0
    if lane == 0:
        return x0
    if lane == 1:
        return x1
    if lane == 2:
        return x2
    return x3


@cuda.jit(device=True)
def _word(w, keys, c0, c1, c2, c3, b0, b1, b2, b3, pos):
    # the w-th 64-bit word from now: first what is left of the buffered block, then new blocks
    # (the counter steps before each block, as NumPy's Philox does)
    left = 4 - pos
    if w < left:
        i = pos + w
        if i == 0:
            return b0
        if i == 1:
            return b1
        if i == 2:
            return b2
        return b3
    t = w - left
    n0 = c0 + np.uint64(t // 4 + 1)
    n1 = c1 + np.uint64(1) if n0 < c0 else c1
    return _philox(keys, n0, n1, c2, c3, t % 4)


"""
