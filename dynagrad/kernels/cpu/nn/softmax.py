"""Kernel templates for softmax, log_softmax and cross-entropy over the rows of a ``(R, C)`` array.

Each row is processed while it sits in L1: a max pass, one exponential pass, one output pass,
all in the kernel's own loop. The float32 exponential is scalarlib's ``fexp``, a polynomial LLVM
vectorizes; Numba's ``math.exp`` is a scalar libm call here (no SVML) and would make these
kernels several times slower. float64 keeps ``math.exp``.

Every template returns ``(source, "kernel", argument_types, description)`` for
``dynagrad.kernels.cache.lookup``.

Example:
    >>> src, name, sig, what = softmax_forward("float32", log=False)
    >>> name, len(sig)
    ('kernel', 2)
"""
from __future__ import annotations

from ..templates import HEADER, _arr, _sig

_JIT = '@numba.njit(cache=True, nogil=True, error_model="numpy"{})\n'
# "contract" (one rounding for a*b+c) and "nsz" (the sign of a zero) are safe everywhere. Running
# sums reassociate through ``fsum_add`` alone, so that they vectorize while the exp's range
# reduction keeps its order.
_KERNEL = _JIT.format(', fastmath={"nsz", "contract"}')
_THREADED = _JIT.format(', parallel=True, fastmath={"nsz", "contract"}')

# Row helpers, inlined into each kernel: as functions of their own, their calls and array views
# cost several times a short row's work. ``T`` is the
# dtype's scalar type; ``fexp`` is scalarlib's vectorizable float32 exp (math.exp for float64).
_ROW_HELPERS = """
T = np.{dtype}


@numba.njit(inline="always")
def row_max(xr):
    # eight independent running maxima: a dependency chain of compares is 4x slower
    C = xr.shape[0]
    m0 = xr[0]
    m1 = m0
    m2 = m0
    m3 = m0
    m4 = m0
    m5 = m0
    m6 = m0
    m7 = m0
    k = C // 8
    for j in range(k):
        c = 8 * j
        m0 = max(m0, xr[c])
        m1 = max(m1, xr[c + 1])
        m2 = max(m2, xr[c + 2])
        m3 = max(m3, xr[c + 3])
        m4 = max(m4, xr[c + 4])
        m5 = max(m5, xr[c + 5])
        m6 = max(m6, xr[c + 6])
        m7 = max(m7, xr[c + 7])
    for c in range(8 * k, C):
        m0 = max(m0, xr[c])
    return max(max(max(m0, m1), max(m2, m3)), max(max(m4, m5), max(m6, m7)))


@numba.njit(inline="always")
def exp_row(xr, shift, mult, out):
    # out = mult * exp(xr - shift); returns sum(out)
    s = T(0.0)
    for c in range(xr.shape[0]):
        e = fexp(xr[c] - shift) * mult
        out[c] = e
        s = fsum_add(s, e)
    return s


@numba.njit(inline="always")
def dot(a, b):
    s = T(0.0)
    for c in range(a.shape[0]):
        s = fsum_add(s, a[c] * b[c])
    return s


@numba.njit(inline="always")
def total(a):
    s = T(0.0)
    for c in range(a.shape[0]):
        s = fsum_add(s, a[c])
    return s
"""


def _helpers(dtype: str) -> str:
    return _ROW_HELPERS.format(dtype=dtype)


def _check(dtype: str) -> None:
    if dtype not in ("float32", "float64"):
        raise TypeError(f"softmax kernels support float32 and float64, not {dtype}")


_ROW_CHUNKS = 16  # blocks of rows handed to the thread pool (a few per thread)


def _rows_over_threads(src: str) -> str:
    """Turn a kernel's ``for r in range(R):`` loop into blocks of rows split over threads; the
    per-call scratch set up before that loop moves into each block (one copy per thread)."""
    head, sep, rest = src.rpartition("def kernel(")
    lines = (sep + rest).split("\n")
    i = next(k for k, line in enumerate(lines) if line.strip() == "for r in range(R):")
    n = _ROW_CHUNKS
    threaded = lines[:2] + [f"    for block in numba.prange({n}):"]
    threaded += ["    " + line for line in lines[2:i]]
    threaded.append(f"        for r in range(block * R // {n}, (block + 1) * R // {n}):")
    threaded += ["    " + line if line.strip() else line for line in lines[i + 1:]]
    head = head[:head.rindex(_KERNEL)] + _THREADED
    return head + "\n".join(threaded)


def softmax_forward(dtype: str, log: bool, threaded: bool = False) -> tuple:
    """``out = softmax(x)`` (or ``log_softmax``) over each row of a contiguous ``(R, C)`` array."""
    _check(dtype)
    if log:
        body = """
        lse = m + math.log(exp_row(xr, m, T(1.0), tmp))
        for c in range(C):
            o[c] = xr[c] - lse
"""
    else:
        body = """
        s = exp_row(xr, m, T(1.0), o)
        inv = T(1.0) / s
        for c in range(C):
            o[c] *= inv
"""
    src = HEADER + _helpers(dtype) + "\n\n" + _KERNEL + """\
def kernel(x, out):
    R, C = x.shape
    tmp = np.empty(C, T)
    for r in range(R):
        xr = x[r]
        o = out[r]
        m = row_max(xr)""" + body
    sig = _sig(_arr(dtype, 2, True, True), _arr(dtype, 2, True))
    src = _rows_over_threads(src) if threaded else src
    return src, "kernel", sig, f"{'log_' if log else ''}softmax_forward {dtype}{' threaded' * threaded}"


def softmax_backward(dtype: str, log: bool, threaded: bool = False) -> tuple:
    """Input gradient from the forward output ``y`` and the output gradient ``g`` (rows).

    softmax: ``y * (g - sum(g * y))``; log_softmax: ``g - exp(y) * sum(g)``.
    """
    _check(dtype)
    if log:
        body = """
        sg = total(gr)
        exp_row(yr, T(0.0), sg, o)
        for c in range(C):
            o[c] = gr[c] - o[c]
"""
    else:
        body = """
        d = dot(gr, yr)
        for c in range(C):
            o[c] = yr[c] * (gr[c] - d)
"""
    src = HEADER + _helpers(dtype) + "\n\n" + _KERNEL + """\
def kernel(y, g, out):
    R, C = y.shape
    for r in range(R):
        yr = y[r]
        gr = g[r]
        o = out[r]""" + body
    sig = _sig(_arr(dtype, 2, True, True), _arr(dtype, 2, True, True), _arr(dtype, 2, True))
    src = _rows_over_threads(src) if threaded else src
    return src, "kernel", sig, f"{'log_' if log else ''}softmax_backward {dtype}{' threaded' * threaded}"


def cross_entropy_forward(dtype: str, threaded: bool = False) -> tuple:
    """Per-row cross-entropy with class-index targets, class weights and label smoothing.

    ``loss[r] = (1-eps) w[t] (lse - x[t]) + eps/C * sum_c w[c] (lse - x[c])``, 0 where
    ``t == ignore_index``; ``lse[r]`` (the row's log-sum-exp) is kept for the backward.
    Targets are validated by the caller.
    """
    _check(dtype)
    src = HEADER + _helpers(dtype) + "\n\n" + _KERNEL + """\
def kernel(x, target, weight, ignore_index, eps, loss, lse_out):
    R, C = x.shape
    tmp = np.empty(C, T)
    keep = T(1.0) - T(eps)
    share = T(eps) / T(C)
    wsum = total(weight)
    for r in range(R):
        xr = x[r]
        m = row_max(xr)
        lse = m + math.log(exp_row(xr, m, T(1.0), tmp))
        lse_out[r] = lse
        t = target[r]
        if t == ignore_index:
            loss[r] = T(0.0)
            continue
        val = keep * weight[t] * (lse - xr[t])
        if eps != 0.0:
            val += share * (lse * wsum - dot(weight, xr))
        loss[r] = val
"""
    arr2, arr1 = _arr(dtype, 2, True, True), _arr(dtype, 1, True, True)
    sig = _sig(arr2, _arr("int64", 1, True, True), arr1, "int64", "float64",
               _arr(dtype, 1, True), _arr(dtype, 1, True))
    src = _rows_over_threads(src) if threaded else src
    return src, "kernel", sig, f"cross_entropy_forward {dtype}{' threaded' * threaded}"


def cross_entropy_backward(dtype: str, threaded: bool = False) -> tuple:
    """Input gradient of the per-row loss above, each row scaled by ``coef[r]``:

    ``grad = coef * ((1-eps) w[t] (p - onehot(t)) + eps/C * (W p - w))`` with ``p = exp(x - lse)``
    and ``W = sum(w)``; rows whose target is ``ignore_index`` get 0.
    """
    _check(dtype)
    src = HEADER + _helpers(dtype) + "\n\n" + _KERNEL + """\
def kernel(x, target, weight, lse, coef, ignore_index, eps, out):
    R, C = x.shape
    keep = T(1.0) - T(eps)
    share = T(eps) / T(C)
    wsum = total(weight)
    for r in range(R):
        o = out[r]
        t = target[r]
        if t == ignore_index:
            for c in range(C):
                o[c] = T(0.0)
            continue
        k = coef[r]
        hit = k * keep * weight[t]
        exp_row(x[r], lse[r], hit + k * share * wsum, o)
        if eps != 0.0:
            ks = k * share
            for c in range(C):
                o[c] -= ks * weight[c]
        o[t] -= hit
"""
    arr2, arr1 = _arr(dtype, 2, True, True), _arr(dtype, 1, True, True)
    sig = _sig(arr2, _arr("int64", 1, True, True), arr1, arr1, arr1, "int64", "float64",
               _arr(dtype, 2, True))
    src = _rows_over_threads(src) if threaded else src
    return src, "kernel", sig, f"cross_entropy_backward {dtype}{' threaded' * threaded}"
