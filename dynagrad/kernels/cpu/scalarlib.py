"""Scalar helpers that generated kernels call (compiled into each kernel by Numba).

Changing this file changes every kernel's cache key (see cache.py), so edits are always picked up.
"""
import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from ..._runtime.cpu_target import compiles_for_avx512
from .templates import VECTOR_BYTES
from ..cache import compiled_into_kernels
from ..float_functions import ROWS

# its code, and the float functions' rows, compile into the kernels importing it
compiled_into_kernels(__name__, "dynagrad.kernels.float_functions")


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
def ranks_before(v, w, largest):
    """Whether ``v`` sorts strictly before ``w`` in a descending (``largest``) or ascending
    order where NaN is the largest value (topk's order; equal values keep their positions)."""
    if largest:
        return v > w or (v != v and w == w)
    return v < w or (w != w and v == v)


def fold_max(acc, v):
    """max()'s fold step: the larger, NaN if either is NaN (of two zeros, either)."""
    return fmax_nan(acc, v)


def fold_min(acc, v):
    """min()'s fold step: the smaller, NaN if either is NaN (of two zeros, either)."""
    return fmin_nan(acc, v)


def _nan_propagating(llvm_name: str):
    """LLVM's ``llvm.maximum`` / ``llvm.minimum`` on two floats of one type: the NaN-propagating
    extreme as one intrinsic, which LLVM vectorizes as a reduction; fmax_nan's branches keep a
    fold scalar. (It orders -0 below +0,
    where torch.maximum returns its first argument of two zeros: elementwise ops keep fmax_nan.)"""
    @intrinsic
    def extreme(typingctx, a, b):
        if not (isinstance(a, types.Float) and a == b):
            return None

        def codegen(context, builder, signature, args):
            ty = context.get_value_type(a)
            fnty = ir.FunctionType(ty, [ty, ty])
            name = f"llvm.{llvm_name}.f{a.bitwidth}"
            return builder.call(cgutils.get_or_insert_function(builder.module, fnty, name), args)
        return a(a, b), codegen
    return extreme


_fmaximum, _fminimum = _nan_propagating("maximum"), _nan_propagating("minimum")


@overload(fold_max, inline="always")
def _fold_max(acc, v):
    if isinstance(acc, types.Float) and acc == v:
        return lambda acc, v: _fmaximum(acc, v)
    return lambda acc, v: fmax_nan(acc, v)


@overload(fold_min, inline="always")
def _fold_min(acc, v):
    if isinstance(acc, types.Float) and acc == v:
        return lambda acc, v: _fminimum(acc, v)
    return lambda acc, v: fmin_nan(acc, v)


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


@intrinsic
def fsum_add(typingctx, total, value):
    """``total + value`` that LLVM may reassociate: a running sum built from it vectorizes
    (split into lanes) while the rest of the kernel keeps strict order, which an exp's range
    reduction needs. Numba's ``fastmath`` flags cover a whole function instead."""
    if not (total == value and isinstance(total, types.Float)):
        return None

    def codegen(context, builder, signature, args):
        return builder.fadd(args[0], args[1], flags=("reassoc", "nsz", "contract"))
    return total(total, value), codegen


# --- vectorizable float32 transcendentals ------------------------------------------------------
# pip's llvmlite has no SVML, so math.exp / math.tanh are scalar libm calls that stop LLVM from
# vectorizing a loop. For float32 these branch-light polynomial forms (exp and expm1: a minimax
# polynomial; tanh built on that expm1; erf and the normal CDF: a rational; all fitted for
# dynagrad) vectorize and stay within a few ulp of the float64 result; float64 keeps libm.

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


@intrinsic
def _float32_bits(typingctx, value):
    """The bits of a float32 as an int32 (the inverse of ``_int32_bits_as_float32``)."""
    if value != types.float32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.int32(value), codegen


@intrinsic
def _ldexp32(typingctx, value, power):
    """``value * 2**power`` (float32, int32) as LLVM's ldexp: one ``vscalefps`` per 16 lanes with
    AVX-512, with float32's own underflow to subnormals and overflow to inf."""
    if value != types.float32 or power != types.int32:
        return None

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.FloatType(), [ir.FloatType(), ir.IntType(32)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.ldexp.f32.i32")
        return builder.call(fn, args)
    return types.float32(value, power), codegen


if compiles_for_avx512():
    @numba.njit(inline="always")
    def _times_pow2(y, k):
        return _ldexp32(y, np.int32(k))
else:  # without AVX-512, LLVM's ldexp is a libm call per element: build the powers of two
    @numba.njit(inline="always")
    def _times_pow2(y, k):
        # two normal powers of two, so the result underflows and overflows where float32 does
        ki = np.int32(k)
        k1 = ki >> np.int32(1)
        k2 = ki - k1
        return (y * _int32_bits_as_float32((k1 + np.int32(127)) << np.int32(23))
                * _int32_bits_as_float32((k2 + np.int32(127)) << np.int32(23)))


# exp(r) = 1 + r + r*r * P(r) on |r| <= ln(2)/2: P of degree 4, fitted for dynagrad (minimax in
# exp's relative error: 3.1e-9, a twentieth of a float32 ulp; Cephes' expf carries a degree-5 P
# for accuracy float32 cannot hold)
_EXP_P = (0.4999999343217183, 0.16666520411470948, 0.04166839094725888, 0.008368743645515852,
          0.001381451990886791)
_EP2, _EP3, _EP4, _EP5, _EP6 = (np.float32(c) for c in _EXP_P)


@numba.njit(inline="always")
def _expm1_32_reduced(r):
    """exp(r) - 1 for |r| <= ln(2)/2 (float32 polynomial; no cancellation for small r)."""
    y = _EP6 * r + _EP5
    y = y * r + _EP4
    y = y * r + _EP3
    y = y * r + _EP2
    return y * r * r + r


# ln 2 in two parts for Cody-Waite reduction: k * _LN2_HI is exact for the k that occur
_LN2_HI, _LN2_LO = np.float32(0.693359375), np.float32(-2.12194440e-4)


@numba.njit(inline="always")
def _minus_k_ln2(y, k):
    """y - k * ln(2), with k * ln(2) in two parts (Cody-Waite)."""
    return y - k * _LN2_HI - k * _LN2_LO


@numba.njit(inline="always")
def _reduce_ln2(y):
    """``(r, k)`` with y = k * ln(2) + r, |r| <= ln(2)/2 (k a float)."""
    k = np.floor(y * np.float32(1.4426950408889634) + np.float32(0.5))
    return _minus_k_ln2(y, k), k


@numba.njit(inline="always")
def _exp32(x):
    r, k = _reduce_ln2(min(max(x, np.float32(-104.0)), np.float32(89.0)))
    e = _times_pow2(_expm1_32_reduced(r) + np.float32(1.0), k)  # exp(r) * 2**k
    return e if x == x else x


@intrinsic
def _fma32(typingctx, a, b, c):
    """``a * b + c`` (float32) with one rounding: LLVM's fma, one instruction on FMA hardware
    (a libm call on x86-64 CPUs older than Haswell, correct but unvectorized)."""
    if not (a == b == c == types.float32):
        return None

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.FloatType(), [ir.FloatType()] * 3)
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.fma.f32")
        return builder.call(fn, args)
    return types.float32(a, b, c), codegen


# The Gaussian factor exp(-v*v/2) of erf, erfc, GELU and its gradient. Its polynomial is exp's,
# one degree lower (1 + r + r*r * P(r), P of degree 3 fitted for dynagrad: minimax relative error
# 1.05e-7 on |r| <= ln(2)/2; the factor is multiplied by a rational anyway, so exp's twentieth of
# an ulp would be wasted), in powers of 2r: v*v is reduced by 2*ln(2), which saves two halvings.
# It is evaluated monic (leading coefficient 1, so Horner's first step is an add, not an FMA);
# the factor comes out scaled by _GAUSS_SCALE, which callers fold into a constant they multiply
# by anyway. These kernels are bound by FMA units, so every operation saved counts.
_GAUSS_EXP_P = (0.499992318017404, 0.16667114537234037, 0.04189011197616271, 0.00831251631976733)
_GAUSS_TERMS = (1.0, 0.5) + tuple(c / 2.0 ** i for i, c in enumerate(_GAUSS_EXP_P, 2))
_GAUSS_LEAD = _GAUSS_TERMS[-1]
_G0, _G1, _G2, _G3, _G4 = (np.float32(c / _GAUSS_LEAD) for c in _GAUSS_TERMS[:-1])
# 2**64: the power of two is built with 64 added to k (see _gauss_scaled32)
_ROUND_TO_POW2_PLUS_64 = np.float32(2.0 ** 23 + 127 + 64)
_GAUSS_SCALE = 2.0 ** 64 / _GAUSS_LEAD


@numba.njit(inline="always")
def _gauss_scaled32(v):
    """exp(-v*v/2) * _GAUSS_SCALE for float32 0 <= v <= 15, without the rounding of v*v: the
    reduced argument 2r = k * (-2 ln2) - v*v comes from one fma of v*v against the exact
    k * 2 ln2_hi. The 2**64 in the scale keeps the factor normal (exp(-112.5) would underflow) and
    lets 2**(k + 64) be built from bits as in _tanh32: k + 64 + 127 stays within 29..191 here.
    Callers fold 1/_GAUSS_SCALE into a constant, so their product rounds once, subnormals
    included."""
    biased = (v * v) * np.float32(-0.5 * 1.4426950408889634) + _ROUND_TO_POW2_PLUS_64
    k = biased - _ROUND_TO_POW2_PLUS_64
    r2 = _fma32(-v, v, k * np.float32(-2.0 * _LN2_HI))
    r2 = _fma32(k, np.float32(-2.0 * _LN2_LO), r2)
    y = r2 + _G4
    y = y * r2 + _G3
    y = y * r2 + _G2
    y = y * r2 + _G1
    y = y * r2 + _G0
    return y * _int32_bits_as_float32(_float32_bits(biased) << np.int32(23))


# tanh for float32: tanh(a) = expm1(2a) / (expm1(2a) + 2) for a = |x|, with the sign put back.
# expm1 is exp's own reduction and polynomial without the final "+ 1", so it keeps its relative
# accuracy for small a and needs no separate small-|x| branch; 2**k - 1 is exact for the k that
# occur (|x| is clamped at 9, where tanh already rounds to 1). Within ~2.4 ulp, and cheaper than a
# float64-evaluated rational.
_ROUND_TO_POW2 = np.float32(8388735.0)  # 2^23 + 127: see _tanh32


@numba.njit(inline="always")
def _tanh32(x):
    a = abs(x)
    a = np.float32(9.0) if a > np.float32(9.0) else a  # written so that NaN passes through
    y = a + a
    # 0 <= y/ln2 <= 26: adding 2^23 + 127 rounds it to the integer k and leaves k + 127 in the
    # low bits, so 2^k is those bits shifted into the exponent field: 3 operations instead of a
    # floor, two int conversions and two scalings
    t = y * np.float32(1.4426950408889634) + _ROUND_TO_POW2
    k = t - _ROUND_TO_POW2
    r = _minus_k_ln2(y, k)
    p2 = _int32_bits_as_float32(_float32_bits(t) << np.int32(23))
    em1 = _expm1_32_reduced(r) * p2 + (p2 - np.float32(1.0))
    return math.copysign(em1 / (em1 + np.float32(2.0)), x)


# expm1 and log1p for float32 (ELU, softplus, mish, logsigmoid): math.expm1 and math.log1p are
# libm calls, which keep a loop scalar. Both within a few ulp.

@numba.njit(inline="always")
def _expm1_32(x):
    # x = k ln2 + r with |r| <= ln2/2: expm1(x) = 2^k expm1(r) + (2^k - 1), where 2^k - 1 is
    # exact for the k that matter, so small results keep their relative accuracy. Below -30 the
    # result rounds to -1; from k = 127 (x > 87.7) 2^k leaves float32 and the -1 is far below an
    # ulp: there the scaled exp instead
    a = min(max(x, np.float32(-30.0)), np.float32(89.0))
    r, k = _reduce_ln2(a)
    e = _expm1_32_reduced(r)
    p2 = _int32_bits_as_float32((np.int32(min(k, np.float32(126.0))) + np.int32(127))
                                << np.int32(23))
    near = e * p2 + (p2 - np.float32(1.0))
    res = near if k < np.float32(127.0) else _times_pow2(e + np.float32(1.0), k)
    return res if x == x else x


_SQRT_HALF_BITS = np.int32(0x3F3504F3)  # float32 sqrt(1/2): u's mantissa is split around it
# log(1 + f) = f - f*f/2 + f**3 * P(f) on sqrt(1/2) - 1 <= f < sqrt(2) - 1: P of degree 6, fitted
# for dynagrad (minimax relative error 3.1e-8); no division, unlike the atanh series
_LOG_P = (0.33333910728544497, -0.25001337005322977, 0.1996306417119248, -0.16577585842095785,
          0.14914764825141122, -0.14267476914008112, 0.08700432875063124)
_LP0, _LP1, _LP2, _LP3, _LP4, _LP5, _LP6 = (np.float32(c) for c in _LOG_P)


@numba.njit(inline="always")
def _log_split32(u):
    """``(k, log(m))`` for a positive normal float32 u = m * 2**k, m in [sqrt(1/2), sqrt(2)).
    f = m - 1 is exact, so log(m) keeps its relative accuracy near m = 1."""
    # int32 throughout: Numba widens int32 arithmetic to int64, and int64 lanes cost conversions
    # and twice the vector operations
    bits = _float32_bits(u)
    k = np.int32(np.int32(bits - _SQRT_HALF_BITS) >> np.int32(23))
    f = _int32_bits_as_float32(np.int32(bits - np.int32(k << np.int32(23)))) - np.float32(1.0)
    p = _LP6 * f + _LP5
    p = p * f + _LP4
    p = p * f + _LP3
    p = p * f + _LP2
    p = p * f + _LP1
    p = p * f + _LP0
    return np.float32(k), (f * f) * (f * p - np.float32(0.5)) + f


@numba.njit(inline="always")
def _log1p32(x):
    # log(1 + x) of the rounded u = 1 + x; the rounding, x - (u - 1), adds its share divided by u
    u = np.float32(1.0) + x
    kf, log_m = _log_split32(u)
    lost = (x - (u - np.float32(1.0))) / u
    res = kf * _LN2_HI + (log_m + (kf * _LN2_LO + lost))
    if x > np.float32(-1.0) and x < np.float32(np.inf):
        return res
    return x if x == np.float32(np.inf) else (np.float32(-np.inf) if x == np.float32(-1.0)
                                               else np.float32(np.nan))


_TINY32 = np.float32(2.0 ** -126)  # the smallest normal float32


@numba.njit(inline="always")
def _log_parts32(x):
    """``_log_split32`` of any positive float32: a subnormal x is scaled by 2**23 into the normal
    range first, and 23 taken off k."""
    subnormal = x < _TINY32
    kf, log_m = _log_split32(x * np.float32(2.0 ** 23) if subnormal else x)
    return (kf - np.float32(23.0) if subnormal else kf), log_m


@numba.njit(inline="always")
def _log_or_special32(x, res):
    """``res`` for a positive finite x, else a logarithm's value there: inf at inf, -inf at 0,
    nan below 0 and at nan."""
    if x > np.float32(0.0) and x < np.float32(np.inf):
        return res
    return x if x == np.float32(np.inf) else (np.float32(-np.inf) if x == np.float32(0.0)
                                               else np.float32(np.nan))


@numba.njit(inline="always")
def _log32(x):
    kf, log_m = _log_parts32(x)
    return _log_or_special32(x, kf * _LN2_HI + (log_m + kf * _LN2_LO))


def _split32(c: float) -> tuple:
    """``c`` as float32 ``(hi, lo)`` with hi + lo closer to c than float32 holds."""
    hi = np.float32(c)
    return hi, np.float32(c - float(hi))


# log2(x) = k + log(m) / ln 2, exact at powers of two; log10(x) = k log10(2) + log(m) / ln 10,
# with k * log10(2) in two parts as log's k * ln 2 (_LOG10_2_HI has 12 bits: k times it is exact)
_INV_LN2_HI, _INV_LN2_LO = _split32(1.0 / math.log(2.0))
_INV_LN10_HI, _INV_LN10_LO = _split32(1.0 / math.log(10.0))
_LOG10_2_HI = np.float32(2466.0 / 8192.0)
_LOG10_2_LO = np.float32(math.log10(2.0) - 2466.0 / 8192.0)


@numba.njit(inline="always")
def _log2_32(x):
    kf, log_m = _log_parts32(x)
    return _log_or_special32(x, kf + _fma32(log_m, _INV_LN2_HI, log_m * _INV_LN2_LO))


@numba.njit(inline="always")
def _log10_32(x):
    kf, log_m = _log_parts32(x)
    scaled = _fma32(log_m, _INV_LN10_HI, log_m * _INV_LN10_LO)
    return _log_or_special32(x, kf * _LOG10_2_HI + (scaled + kf * _LOG10_2_LO))


@numba.njit(inline="always")
def _exp2_32(x):
    # 2**x = 2**k * exp(r ln 2) with k the nearest integer: r = x - k is exact, and integer x
    # give exact powers of two; beyond [-151, 129] the result has under- or overflowed already
    c = min(max(x, np.float32(-151.0)), np.float32(129.0))
    k = np.floor(c + np.float32(0.5))
    e = _times_pow2(_expm1_32_reduced((c - k) * np.float32(math.log(2.0))) + np.float32(1.0), k)
    return e if x == x else x


def _float_function(row):
    """``row``'s function for kernels (a row of ``kernels/float_functions.py``): its float32 body
    for float32 (vectorizable), its libm expression, computed in float64, for the rest."""
    namespace = {"math": math, "np": np, "sigmoid": sigmoid, "T": np.float64}
    exec(f"def libm(x):\n    x = T(x)\n    return {row.libm}\n", namespace)
    libm = numba.njit(inline="always")(namespace["libm"])
    impl32 = globals()[row.float32] if row.float32 else libm

    def helper(x):
        return libm(x)
    helper.__name__ = helper.__qualname__ = row.name
    helper.__doc__ = row.doc + " For use inside kernels."

    @overload(helper, inline="always")
    def _helper(x):
        if x == types.float32:
            return lambda x: impl32(x)
        return lambda x: libm(x)
    return helper


# sin, cos and tan for float32 arguments up to SINCOS_BOUND in magnitude, in float64: libm's
# sinf/cosf keep a loop scalar. x = k pi/2
# + r: pi/2 is split so that k * _PIO2_HI is exact for |k| < 2^20 (33 significant bits) and the
# reduction's error, |k| * 2^-86, stays ~2^-37 of the smallest |r| a float32 below the bound
# leaves; then sin(r) and cos(r) for |r| <= pi/4 by their Taylor series (terms to r^15 and r^16;
# the next ones are below 2^-45 there), and the quadrant k mod 4 picks and signs one of them (tan:
# their quotient). Within 0.5 ulp (as rounding the float64 result: tests/test_elementwise.py).
# Larger arguments take libm: the ops check the bound first (``Elementwise.bounded``).
SINCOS_BOUND = 524288.0  # 2^19
_TWO_OVER_PI = 2.0 / math.pi
_PIO2_HI = 1.5707963267341256  # pi/2 to 33 bits
_PIO2_LO = 6.077100506506192e-11  # pi/2 - _PIO2_HI to double precision
_SIN = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(1, 8))
_COS = tuple((-1) ** k / math.factorial(2 * k) for k in range(1, 9))


@numba.njit(inline="always")
def _reduced_sin_cos(x, quarter_turns):
    """``(sin r, cos r, q)`` in float64 for ``x + quarter_turns * pi/2 = k pi/2 + r`` (a float32
    ``x`` within SINCOS_BOUND), ``|r| <= pi/4`` and the quadrant ``q = k mod 4`` (a float)."""
    xd = np.float64(x)
    k = np.floor(xd * _TWO_OVER_PI + 0.5)  # (np.floor: a float, so NaN passes through)
    r = (xd - k * _PIO2_HI) - k * _PIO2_LO
    r2 = r * r
    s = r + r * r2 * (_SIN[0] + r2 * (_SIN[1] + r2 * (_SIN[2] + r2 * (
        _SIN[3] + r2 * (_SIN[4] + r2 * (_SIN[5] + r2 * _SIN[6]))))))
    c = 1.0 + r2 * (_COS[0] + r2 * (_COS[1] + r2 * (_COS[2] + r2 * (_COS[3] + r2 * (
        _COS[4] + r2 * (_COS[5] + r2 * (_COS[6] + r2 * _COS[7])))))))
    q = k + quarter_turns
    return s, c, q - 4.0 * np.floor(q * 0.25)


@numba.njit(inline="always")
def _sin_cos_32(x, quarter_turns):
    """sin(x + quarter_turns * pi/2) for a float32 ``x`` within SINCOS_BOUND, as a float32."""
    s, c, q = _reduced_sin_cos(x, quarter_turns)
    v = c if (q == 1.0 or q == 3.0) else s
    return np.float32(-v if q >= 2.0 else v)


@numba.njit(inline="always")
def _sin32(x):
    return x if x == 0 else _sin_cos_32(x, 0.0)  # (sin(-0.0) is -0.0; the reduction loses it)


@numba.njit(inline="always")
def _cos32(x):
    return _sin_cos_32(x, 1.0)


@numba.njit(inline="always")
def _tan32(x):
    s, c, q = _reduced_sin_cos(x, 0.0)
    t = np.float32(-c / s if (q == 1.0 or q == 3.0) else s / c)
    return x if x == 0 else t  # (as sin: the reduction loses the sign of -0.0)


# atan for float32, evaluated in float64: atan(x) = pi/2 - atan(1/x) brings |x| into [0, 1], and
# atan(z) = pi/4 + atan((z - 1) / (z + 1)) into |t| <= tan(pi/8), where atan(t) = t P(t^2) with a
# degree-7 polynomial fitted here (relative least squares against mpmath: error 7.5e-13).
# libm's atanf keeps a loop scalar.
_TAN_PI_8 = 0.41421356237309503
_ATAN = (0.9999999999992528, -0.33333333277312843, 0.19999993088617002, -0.14285387754286002,
         0.11103476611477364, -0.08992719459949658, 0.06974897309438563, -0.03766666766395028)


@numba.njit(inline="always")
def _atan32(x):
    a = abs(np.float64(x))
    inverted = a > 1.0
    z = 1.0 / a if inverted else a  # (NaN stays NaN, inf becomes 0)
    shifted = z > _TAN_PI_8
    t = (z - 1.0) / (z + 1.0) if shifted else z
    t2 = t * t
    p = t * (_ATAN[0] + t2 * (_ATAN[1] + t2 * (_ATAN[2] + t2 * (_ATAN[3] + t2 * (
        _ATAN[4] + t2 * (_ATAN[5] + t2 * (_ATAN[6] + t2 * _ATAN[7])))))))
    r = p + math.pi / 4 if shifted else p
    r = math.pi / 2 - r if inverted else r
    return np.float32(math.copysign(r, np.float64(x)))


@numba.njit(inline="always")
def _sigmoid32(x):
    e = _exp32(-abs(x))  # in (0, 1]: never overflows
    s = np.float32(1.0) / (np.float32(1.0) + e)
    return s if x >= 0 else (e * s if x == x else x)  # e/(1+e): no cancellation


# erf / erfc and the normal CDF for float32: |x| < 1 uses erf(x)/x as a polynomial in x*x
# (least-squares fit, within ~2.5 ulp); beyond, the Gaussian factor times a fitted rational. The
# tail keeps its relative accuracy: there is no 1 - erf cancellation.

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


# Phi(-v) * exp(v*v/2) for 0 <= v <= 15 (the normal tail over its Gaussian factor), a (4, 5)
# rational fitted for dynagrad (relative error 6.3e-9; all coefficients positive, so Horner in
# float32 stays within a few ulp). erfc(a) = 2 * Phi(-a*sqrt(2)) uses it too.
_PHI_P = (0.5000000031636863, 0.43928150828280554, 0.18396761043586893, 0.040880582515293286,
          0.004153140558948616)
_PHI_Q = (1.0, 1.6764480235749413, 1.205542158556437, 0.4714046386868183, 0.10247854077694735,
          0.010410267883382712)
# The denominator is evaluated monic (its first Horner step an add); the numerator carries its
# leading coefficient and 1/_GAUSS_SCALE, undoing the Gaussian factor's scale for free.
_PP0, _PP1, _PP2, _PP3, _PP4 = (np.float32(c / _PHI_Q[-1] / _GAUSS_SCALE) for c in _PHI_P)
_PQ0, _PQ1, _PQ2, _PQ3, _PQ4 = (np.float32(c / _PHI_Q[-1]) for c in _PHI_Q[:-1])


@numba.njit(inline="always")
def _phi_tail_num32(v):
    """The rational's numerator (times 1/_GAUSS_SCALE) for float32 0 <= v <= 15."""
    return (((_PP4 * v + _PP3) * v + _PP2) * v + _PP1) * v + _PP0


@numba.njit(inline="always")
def _phi_tail_den32(v):
    return ((((v + _PQ4) * v + _PQ3) * v + _PQ2) * v + _PQ1) * v + _PQ0


@numba.njit(inline="always")
def _erfc_pos32(a):
    """erfc(a) for a >= 0 (the rounding of a*sqrt(2) is far below erf's ulp where it is used)."""
    v = min(a * np.float32(1.4142135623730951), np.float32(15.0))  # 0 in float32 from v ~ 14.3
    return np.float32(2.0) * _gauss_scaled32(v) * (_phi_tail_num32(v) / _phi_tail_den32(v))


@numba.njit(inline="always")
def _clamped_abs32(x):
    """min(|x|, 15): Phi(-v) and phi(v) are 0 in float32 from v ~ 14.3."""
    return min(abs(x), np.float32(15.0))


@numba.njit(inline="always")
def _positive_part32(x):
    """x for x >= 0 (either zero keeps its sign, NaN passes), -0.0 for x < 0: one vmaxps."""
    return np.float32(-0.0) if np.float32(-0.0) > x else x


@numba.njit(inline="always")
def _gelu32(x):
    """x * Phi(x) = max(x, -0) - |x| * Phi(-|x|). The second term multiplies |x| into the scaled
    Gaussian factor first: only the final product can be subnormal (Phi(-|x|) alone is subnormal
    for |x| > 13, where x * Phi(x) is not yet, and 1/_GAUSS_SCALE * |x| for tiny |x|). The
    Gaussian factor reads x itself: exp(-a*a) of the rounded a = |x|/sqrt(2) would be off by up to
    2*a*a float32 roundings. GELU(+inf) = inf and GELU(-inf) = -0, the limits."""
    v = _clamped_abs32(x)
    tail = (_gauss_scaled32(v) * v) * (_phi_tail_num32(v) / _phi_tail_den32(v))
    return _positive_part32(x) - tail


_PHI_SCALED_DENSITY = np.float32(0.3989422804014327 / _GAUSS_SCALE)  # 1/sqrt(2 pi) / scale


def fgelu_grad(x, g):
    """g * d/dx GELU(x) = g * (Phi(x) + x * phi(x))."""
    return g * (0.5 * math.erfc(-x * 0.7071067811865476)
                + x * 0.3989422804014327 * math.exp(-0.5 * x * x))


@overload(fgelu_grad, inline="always")
def _fgelu_grad(x, g):
    if x == types.float32:
        def impl(x, g):
            v = _clamped_abs32(x)
            e = _gauss_scaled32(v)
            lower = e * (_phi_tail_num32(v) / _phi_tail_den32(v))  # Phi(-|x|)
            cdf = lower if x < 0 else np.float32(1.0) - lower
            return g * (cdf + x * (_PHI_SCALED_DENSITY * e))
        return impl
    return lambda x, g: g * (0.5 * math.erfc(-x * 0.7071067811865476)
                             + x * 0.3989422804014327 * math.exp(-0.5 * x * x))


# Gradients of the activations whose derivative reads one transcendental twice: written once
# here, each calls it once (two inlined copies of one overload in a kernel trip a Numba IR
# warning, and cost twice). Constants take x's float type, so float32 stays float32.
_GELU_TANH_C = (0.7978845608028654, 0.044715, 0.134145)  # sqrt(2/pi), the cubic's, 3x it


def _consts(x, *values):
    """``values`` as constants of ``x``'s float type (for an overload's implementation)."""
    return tuple(np.float32(v) if x == types.float32 else float(v) for v in values)


def fsilu_grad(x, g):
    """g * d/dx (x sigmoid(x)) = g * s (1 + x (1 - s)), s = sigmoid(x) (use inside kernels)."""
    s = sigmoid(x)
    return g * s * (1.0 + x * (1.0 - s))


@overload(fsilu_grad, inline="always")
def _fsilu_grad(x, g):
    one, = _consts(x, 1.0)

    def impl(x, g):
        s = fsigmoid(x)
        return g * s * (one + x * (one - s))
    return impl


def fgelu_tanh_grad(x, g):
    """g * d/dx of GELU's tanh form 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3)."""
    c, a, b = _GELU_TANH_C
    t = math.tanh(c * (x + a * x * x * x))
    return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + b * x * x))


@overload(fgelu_tanh_grad, inline="always")
def _fgelu_tanh_grad(x, g):
    c, a, b, half, one = _consts(x, *_GELU_TANH_C, 0.5, 1.0)

    def impl(x, g):
        t = ftanh(c * (x + a * x * x * x))
        return g * (half * (one + t) + half * x * (one - t * t) * (c * (one + b * x * x)))
    return impl


def fmish_grad(x, g):
    """g * d/dx (x tanh(softplus(x))) = g (t + x sigmoid(x) (1 - t^2)), t = tanh(softplus(x)),
    softplus(x) = x above 20 as in torch's mish."""
    t = math.tanh(x if x > 20.0 else math.log1p(math.exp(x)))
    return g * (t + x * sigmoid(x) * (1.0 - t * t))


@overload(fmish_grad, inline="always")
def _fmish_grad(x, g):
    twenty, one = _consts(x, 20.0, 1.0)

    def impl(x, g):
        t = ftanh(x if x > twenty else flog1p(fexp(x)))
        return g * (t + x * fsigmoid(x) * (one - t * t))
    return impl


@numba.njit(inline="always")
def _erf32(x):
    a = abs(x)
    tail = np.float32(1.0) - _erfc_pos32(a)
    tail = tail if x >= 0 else -tail
    r = _erf_small32(x) if a < np.float32(1.0) else tail
    return r if x == x else x


# asinh for float32: log1p(a + a^2 / (1 + sqrt(1 + a^2))) for a = |x| (the same value as
# log(a + sqrt(a^2 + 1)) without its cancellation near 0), and log(2a) from a > 2^12, where the
# terms dropped are below 2^-27 relative; the sign put back. Within a few ulp, vectorizable.
@numba.njit(inline="always")
def _asinh32(x):
    a = abs(x)
    big = a > np.float32(4096.0)
    s = np.float32(0.0) if big else a * a
    near = _log1p32(a + s / (np.float32(1.0) + math.sqrt(s + np.float32(1.0))))
    r = _log32(a) + np.float32(math.log(2.0)) if big else near
    return math.copysign(r, x)


# the f* functions op expressions call: a row each in kernels/float_functions.py
for _row in ROWS:
    globals()[_row.name] = _float_function(_row)
del _row


# --- short contiguous runs as masked vector moves -------------------------------------------------
# im2col copies rows only a few elements long (10 for LeNet-5's second convolution): LLVM's
# vectorized copy loop needs a whole vector and runs such a row as its scalar remainder. This moves
# one vector's worth (64 bytes) with a lane mask instead, so a 10-element run is one masked load
# and one masked store (AVX-512; other CPUs get LLVM's generic masked moves). Masked-off lanes are
# never read or written, so a run may end at the very end of an array. (col2im's adding form lost:
# its runs overlap from one tap to the next, and a masked load that reads a masked store still in
# flight cannot take its value from the store buffer, which made it slower than a plain loop.)


def _lanes(context, dtype) -> tuple:
    """``(lanes in one vector, vector type)`` of a float dtype."""
    ety = context.get_value_type(dtype)
    lanes = VECTOR_BYTES // context.get_abi_sizeof(ety)
    return lanes, ir.VectorType(ety, lanes)


def _lane_mask(builder, first, end, lanes: int):
    """The mask of the lanes ``first <= l < end`` (int64 bounds, clamped to [0, lanes]), built as
    the bits (1 << end) - (1 << first)."""
    i32, i64 = ir.IntType(32), ir.IntType(64)

    def clamp(value, low, high):
        value = builder.select(builder.icmp_signed("<", value, low), low, value)
        return builder.select(builder.icmp_signed(">", value, high), high, value)
    end = clamp(end, i64(0), i64(lanes))
    first = clamp(first, i64(0), end)
    bits = builder.sub(builder.shl(i32(1), builder.trunc(end, i32)),
                       builder.shl(i32(1), builder.trunc(first, i32)))
    return builder.bitcast(builder.trunc(bits, ir.IntType(lanes)),
                           ir.VectorType(ir.IntType(1), lanes))


def _element_ptr(context, builder, array_type, array, index):
    """A pointer to ``array[index]`` (1-D). Not inbounds: masked-off lanes around a run may lie
    outside the array, as long as they are never touched."""
    data = cgutils.create_struct_proxy(array_type)(context, builder, value=array).data
    return builder.gep(data, [index])


def _masked_load(builder, ptr, mask, vty, align):
    """Masked-off lanes read as zero."""
    name = f"llvm.masked.load.v{vty.count}{vty.element.intrinsic_name}.p0"
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(
        vty, [ptr.type, ir.IntType(32), mask.type, vty]), name)
    return builder.call(fn, [ptr, ir.IntType(32)(align), mask, ir.Constant(vty, None)])


def _masked_store(builder, value, ptr, mask, align):
    vty = value.type
    name = f"llvm.masked.store.v{vty.count}{vty.element.intrinsic_name}.p0"
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(
        ir.VoidType(), [vty, ptr.type, ir.IntType(32), mask.type]), name)
    builder.call(fn, [value, ptr, ir.IntType(32)(align), mask])


def _float_arrays_and_ints(dst, src, ints) -> bool:
    return (isinstance(dst, types.Array) and isinstance(src, types.Array)
            and dst.dtype == src.dtype and dst.dtype in (types.float32, types.float64)
            and dst.ndim == src.ndim == 1 and all(isinstance(i, types.Integer) for i in ints))


def _int64_args(context, builder, values, value_types) -> list:
    return [context.cast(builder, v, t, types.int64) for v, t in zip(values, value_types)]


@intrinsic
def _masked_copy(typingctx, dst, d, src, s, n):
    """One vector of ``dst[d + l] = src[s + l]`` for the lanes ``l < n``; returns the lane count.
    Both arrays are 1-D, C-ordered, of one float dtype."""
    ints = (d, s, n)
    if not _float_arrays_and_ints(dst, src, ints):
        return None

    def codegen(context, builder, signature, args):
        d_, s_, n_ = _int64_args(context, builder, args[1:2] + args[3:], ints)
        lanes, vty = _lanes(context, dst.dtype)
        align = vty.element.get_abi_size(context.target_data)
        mask = _lane_mask(builder, ir.IntType(64)(0), n_, lanes)
        value = _masked_load(builder, _element_ptr(context, builder, src, args[2], s_), mask,
                             vty, align)
        _masked_store(builder, value, _element_ptr(context, builder, dst, args[0], d_), mask,
                      align)
        return ir.IntType(64)(lanes)
    return types.int64(dst, d, src, s, n), codegen


@numba.njit(inline="always")
def copy_run(dst, d, src, s, n):
    """``dst[d:d+n] = src[s:s+n]`` for 1-D contiguous float arrays, a vector at a time."""
    done = 0
    while done < n:
        done += _masked_copy(dst, d + done, src, s + done, n - done)


@intrinsic
def add_tap_sums(typingctx, dst, d, src, s, step, taps, lo, hi, limit):
    """One vector of ``dst[d + l] += sum(src[s + e*step + l] for e < taps)``, where tap ``e``
    covers the lanes ``l`` in ``[lo + e, hi + e)`` and every lane is below ``limit`` (<= the lane
    count). The taps add up in a register and ``dst`` is read and written once, instead of once per
    tap: col2im's taps overlap, and a masked load cannot take the value of an overlapping masked
    store still in flight (an adding form of ``copy_run`` was slower than a plain loop)."""
    ints = (d, s, step, taps, lo, hi, limit)
    if not _float_arrays_and_ints(dst, src, ints):
        return None

    def codegen(context, builder, signature, args):
        d_, s_, step_, taps_, lo_, hi_, limit_ = _int64_args(context, builder,
                                                             args[1:2] + args[3:], ints)
        lanes, vty = _lanes(context, dst.dtype)
        align = vty.element.get_abi_size(context.target_data)
        total = cgutils.alloca_once_value(builder, ir.Constant(vty, None))
        with cgutils.for_range(builder, taps_) as loop:
            e = loop.index
            end = builder.add(hi_, e)
            end = builder.select(builder.icmp_signed("<", end, limit_), end, limit_)
            mask = _lane_mask(builder, builder.add(lo_, e), end, lanes)
            ptr = _element_ptr(context, builder, src, args[2],
                               builder.add(s_, builder.mul(e, step_)))
            builder.store(builder.fadd(builder.load(total),
                                       _masked_load(builder, ptr, mask, vty, align)), total)
        mask = _lane_mask(builder, ir.IntType(64)(0), limit_, lanes)
        ptr = _element_ptr(context, builder, dst, args[0], d_)
        _masked_store(builder, builder.fadd(_masked_load(builder, ptr, mask, vty, align),
                                            builder.load(total)), ptr, mask, align)
        return context.get_dummy_value()
    return types.none(dst, d, src, s, step, taps, lo, hi, limit), codegen


@intrinsic
def max_pool_pairs(typingctx, out, o, idx, src, s, width, base, n):
    """One vector of 2 x 2 max pooling: for the lanes ``l < n`` (at most one vector's count),
    ``out[o + l]`` is the largest of ``src[s + 2l]``, ``src[s + 2l + 1]`` and the two values
    ``width`` further on (the row below), and ``idx[o + l]`` is ``base + 2l`` plus that value's
    offset (0, 1, ``width`` or ``width + 1``); returns the lane count. The first window value
    wins ties and a NaN wins over numbers, as in ``max_pool``. A pooling row's windows are often
    fewer than a vector (LeNet-5's 14), which leaves a vectorized loop to its scalar remainder:
    here two masked loads per input row and two shuffles take the windows' even and odd columns
    apart."""
    ints = (o, s, width, base, n)
    if not (_float_arrays_and_ints(out, src, ints) and isinstance(idx, types.Array)
            and idx.dtype == types.int64 and idx.ndim == 1):
        return None

    def codegen(context, builder, signature, args):
        o_, s_, width_, base_, n_ = _int64_args(context, builder, args[1:2] + args[4:], ints)
        lanes, vty = _lanes(context, out.dtype)
        align = vty.element.get_abi_size(context.target_data)
        i64 = ir.IntType(64)
        ity = ir.VectorType(i64, lanes)
        halves = [_lane_mask(builder, i64(0), builder.sub(builder.add(n_, n_), i64(h * lanes)),
                             lanes) for h in range(2)]

        def columns(start):
            """The even and odd columns of 2n values from ``src[start]``."""
            lo, hi = (_masked_load(builder, _element_ptr(context, builder, src, args[3],
                                                         builder.add(start, i64(h * lanes))),
                                   halves[h], vty, align) for h in range(2))
            return [builder.shuffle_vector(lo, hi, ir.Constant(ir.VectorType(ir.IntType(32),
                                                                              lanes),
                                                               list(range(odd, 2 * lanes, 2))))
                    for odd in range(2)]

        def splat(value):
            vec = builder.insert_element(ir.Constant(ity, ir.Undefined), value, ir.IntType(32)(0))
            return builder.shuffle_vector(vec, ir.Constant(ity, ir.Undefined),
                                          ir.Constant(ir.VectorType(ir.IntType(32), lanes),
                                                      [0] * lanes))
        a, b = columns(s_)
        c, d = columns(builder.add(s_, width_))
        best, where = a, ir.Constant(ity, [0] * lanes)
        for value, offset in ((b, i64(1)), (c, width_), (d, builder.add(width_, i64(1)))):
            take = builder.or_(builder.fcmp_ordered(">", value, best),
                               builder.fcmp_unordered("uno", value, value))
            best = builder.select(take, value, best)
            where = builder.select(take, splat(offset), where)
        mask = _lane_mask(builder, i64(0), n_, lanes)
        _masked_store(builder, best, _element_ptr(context, builder, out, args[0], o_), mask,
                      align)
        where = builder.add(builder.add(where, splat(base_)),
                            ir.Constant(ity, list(range(0, 2 * lanes, 2))))
        _masked_store(builder, where, _element_ptr(context, builder, idx, args[2], o_), mask, 8)
        return i64(lanes)
    return types.int64(out, o, idx, src, s, width, base, n), codegen
