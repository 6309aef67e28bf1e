"""Kernel templates for convolution (im2col / col2im) and pooling.

Every template returns ``(source, "kernel", argument_types, description)`` for
``dynagrad.kernels.cache.lookup`` and specializes on the dtype only: 1-D and 2-D convolutions run
the 3-D kernels with size-1 leading spatial dims, and 1-D pooling runs the 2-D kernels with
``H == 1``.

Column layout (``cols``): for each sample one row per ``(channel, kd, kh, kw)`` tap and one column
per ``(od, oh, ow)`` output position, i.e. shape ``(N, C * KD * KH * KW, OD * OH * OW)``; then
``weight (O, C*K) @ cols[n]`` is output sample ``n`` in NC(DHW) layout with no transpose. Callers
pass a few samples at a time so that ``cols`` stays in the L2 cache between im2col and the GEMM
(measured: this beats one whole-batch GEMM plus output transposes, and a direct Numba loop).

``geom`` is an int64 array ``(KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW, OD, OH, OW)``:
kernel size, stride, leading padding, dilation and output size along each spatial dim.

Example:
    >>> src, name, sig, what = im2col("float32")
    >>> what
    'im2col float32'
"""
from __future__ import annotations

import textwrap

import numpy as np

from ..templates import HEADER, VECTOR_BYTES, _arr, _decorator, _sig

# Loop nest shared by im2col and col2im: for every tap row and output row (od, oh), ``BODY`` moves
# the run of values between ``x[n, c, z, y, lo*SW+off : hi*SW+off : SW]`` and
# ``cols[n, row, col+lo : col+hi]``. Out-of-range positions (the zero padding) are cut off by index
# arithmetic, not by a branch per element. Inner loops index flat views with unsigned integers:
# Numba then emits no negative-index wraparound. Unit-stride runs move as masked vectors
# (scalarlib's ``copy_run``) in im2col: a run is often shorter than one vector, which LLVM's
# own vectorized loop would leave to its scalar remainder.
_PROLOGUE = """\
    N, C, D, H, W = x.shape
    KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW, OD, OH, OW = (
        geom[0], geom[1], geom[2], geom[3], geom[4], geom[5], geom[6], geom[7], geom[8],
        geom[9], geom[10], geom[11], geom[12], geom[13], geom[14])
    xf = x.reshape(-1)
    cf = cols.reshape(-1)
    R = cols.shape[1]
    L = OD * OH * OW
"""
_TAP_NEST = """\
    usw = U(SW)
    for n in range(N):
        row = 0
        for c in range(C):
            for a in range(KD):
                for b in range(KH):
                    for e in range(KW):
                        off = e * DW - PW
                        # [lo, hi): the output columns whose input column ow * SW + off is in [0, W)
                        lo = min(OW, (SW - 1 - off) // SW) if off < 0 else 0
                        hi = min(OW, (W - 1 - off) // SW + 1) if W - 1 - off >= 0 else 0
                        lo = min(lo, hi)
                        ulo = U(lo)
                        for od in range(OD):
                            z = od * SD - PD + a * DD
                            zin = 0 <= z < D
                            for oh in range(OH):
                                y = oh * SH - PH + b * DH
                                inside = zin and 0 <= y < H
                                d = U((n * R + row) * L + (od * OH + oh) * OW) + ulo
                                s = U((((n * C + c) * D + z) * H + y) * W + off + lo * SW) \\
                                    if inside else U(0)
{BODY}
                        row += 1
"""
# im2col of 2-D taps at unit stride and dilation (most convolutions), without the general nest's
# per-row depth and bounds tests: each tap's rows above and below the input are one zero fill,
# and every other row is one run copied between its two zero edges: faster than the general
# nest on the convolutions measured.
_IM2COL_PLANAR = """\
    if KD == 1 and D == 1 and SH == 1 and SW == 1 and DH == 1 and DW == 1:
        for n in range(N):
            row = 0
            for c in range(C):
                plane = U((n * C + c) * H * W)
                for b in range(KH):
                    # [oh_lo, oh_hi): the output rows whose input row oh - PH + b is in [0, H)
                    oh_lo = min(OH, max(0, PH - b))
                    oh_hi = max(oh_lo, min(OH, H + PH - b))
                    for e in range(KW):
                        off = e - PW
                        # [lo, hi): the output columns whose input column ow + off is in [0, W)
                        lo = min(OW, max(0, -off))
                        hi = max(lo, min(OW, W - off))
                        run = U(hi - lo)
                        first = U((n * R + row) * L)
                        for t in range(U(oh_lo * OW)):
                            cf[first + t] = 0
                        for t in range(U(oh_hi * OW), U(L)):
                            cf[first + t] = 0
                        for oh in range(oh_lo, oh_hi):
                            d = first + U(oh * OW)
                            for t in range(U(lo)):
                                cf[d + t] = 0
                            copy_run(cf, d + U(lo), xf, plane + U((oh - PH + b) * W + off + lo),
                                     run)
                            for t in range(U(hi), U(OW)):
                                cf[d + t] = 0
                        row += 1
        return
"""

_IM2COL_BODY = """\
                                if inside:
                                    for t in range(ulo):
                                        cf[d - ulo + t] = 0
                                    if SW == 1:
                                        copy_run(cf, d, xf, s, U(hi - lo))
                                    else:
                                        for t in range(U(hi - lo)):
                                            cf[d + t] = xf[s + t * usw]
                                    for t in range(U(hi - lo), U(OW - lo)):
                                        cf[d + t] = 0
                                else:
                                    for t in range(U(OW)):
                                        cf[d - ulo + t] = 0"""

_COL2IM_BODY = """\
                                if inside:
                                    if SW == 1:
                                        for t in range(U(hi - lo)):
                                            xf[s + t] += cf[d + t]
                                    else:
                                        for t in range(U(hi - lo)):
                                            xf[s + t * usw] += cf[d + t]"""

# col2im for input rows of at most one vector (``VECTOR_BYTES``: 16 float32 or 8 float64
# columns) with unit stride and dilation along W, gathered: the KW taps that land on a row
# add up in a register (scalarlib's ``add_tap_sums``) and the row is read and written once. Input
# column j takes tap e from output column j - e + PW, which must lie in [0, OW). Short rows gain;
# longer ones lost, and keep the loop over taps.
_COL2IM_GATHER = """\
    for n in range(N):
        for c in range(C):
            for a in range(KD):
                for b in range(KH):
                    row = ((c * KD + a) * KH + b) * KW
                    for od in range(OD):
                        z = od * SD - PD + a * DD
                        if z < 0 or z >= D:
                            continue
                        for oh in range(OH):
                            y = oh * SH - PH + b * DH
                            if y < 0 or y >= H:
                                continue
                            s = (((n * C + c) * D + z) * H + y) * W
                            d = (n * R + row) * L + (od * OH + oh) * OW
                            add_tap_sums(xf, s, cf, d + PW, L - 1, KW, -PW, OW - PW, W)"""

_CONV_HEADER = HEADER + "from numba import uint64 as U\n\n"


# The body of ``im2col(x, geom, cols)`` (also compiled into ``conv_tiles``' fused kernels)
IM2COL_BODY = _PROLOGUE + _IM2COL_PLANAR + _TAP_NEST.replace("{BODY}", _IM2COL_BODY)


def im2col(dtype: str) -> tuple:
    """``cols[n, (c, a, b, e), (od, oh, ow)] =
    x[n, c, od*SD-PD+a*DD, oh*SH-PH+b*DH, ow*SW-PW+e*DW]``, zero where that is in the padding."""
    src = _CONV_HEADER + _decorator() + "def kernel(x, geom, cols):\n" + IM2COL_BODY
    sig = _sig(_arr(dtype, 5, True, True), _arr("int64", 1, True, True), _arr(dtype, 3, True))
    return src, "kernel", sig, f"im2col {dtype}"


def col2im_body(dtype: str) -> str:
    """The body of ``col2im(cols, geom, x)`` for ``dtype`` (also compiled into ``conv_tiles``'
    fused kernels)."""
    lanes = VECTOR_BYTES // np.dtype(dtype).itemsize  # add_tap_sums' row width
    return (_PROLOGUE + f"    if SW == 1 and DW == 1 and W <= {lanes}:\n"
            + textwrap.indent(_COL2IM_GATHER, "    ") + "\n    else:\n"
            + textwrap.indent(_TAP_NEST.replace("{BODY}", _COL2IM_BODY), "    "))


def col2im(dtype: str) -> tuple:
    """The adjoint of ``im2col``: every column entry is added into the input position it was read
    from (``x`` must start zeroed)."""
    src = _CONV_HEADER + _decorator() + "def kernel(cols, geom, x):\n" + col2im_body(dtype)
    sig = _sig(_arr(dtype, 3, True, True), _arr("int64", 1, True, True), _arr(dtype, 5, True))
    return src, "kernel", sig, f"col2im {dtype}"


# --- pooling --------------------------------------------------------------------------------
# Windows are given per axis by the caller: the first in-range tap ``hs[i]``, the number of in-range
# taps ``hk[i]`` and the tap step (dilation). Regular and adaptive pooling share these kernels.

def max_pool(dtype: str) -> tuple:
    """``out[b, i, j]`` = max over the window of ``x[b]``; ``idx`` = its flat index ``y * W + w``.
    NaN wins over any number (as PyTorch); among equal values the first is kept."""
    src = HEADER + _decorator() + """\
def kernel(x, hs, hk, ws, wk, dh, dw, out, idx):
    B, H, W = x.shape
    OH = hs.shape[0]
    OW = ws.shape[0]
    for b in range(B):
        for i in range(OH):
            for j in range(OW):
                best = -np.inf
                where = hs[i] * W + ws[j]
                for t in range(hk[i]):
                    y = hs[i] + t * dh
                    for u in range(wk[j]):
                        w = ws[j] + u * dw
                        v = x[b, y, w]
                        if v > best or v != v:
                            best = v
                            where = y * W + w
                out[b, i, j] = best
                idx[b, i, j] = where
"""
    sig = _sig(_arr(dtype, 3, True, True), *[_arr("int64", 1, True, True)] * 4, "int64", "int64",
               _arr(dtype, 3, True), _arr("int64", 3, True))
    return src, "kernel", sig, f"max_pool {dtype}"


def max_pool_2x2(dtype: str) -> tuple:
    """``max_pool`` for the common 2x2 windows at stride 2 with no padding, every window whole:
    a vector of windows at a time (scalarlib's ``max_pool_pairs``). Same results, including NaN
    and tie rules."""
    src = _CONV_HEADER + _decorator() + """\
def kernel(x, out, idx):
    B, H, W = x.shape
    OH = out.shape[1]
    OW = out.shape[2]
    xf = x.reshape(-1)
    of = out.reshape(-1)
    jf = idx.reshape(-1)
    for b in range(B):
        for i in range(OH):
            top = 2 * i * W  # flat index of the window row in the plane
            o = (b * OH + i) * OW
            p = b * H * W + top
            j = 0
            while j < OW:
                j += max_pool_pairs(of, o + j, jf, xf, p + 2 * j, W, top + 2 * j, OW - j)
"""
    sig = _sig(_arr(dtype, 3, True, True), _arr(dtype, 3, True), _arr("int64", 3, True))
    return src, "kernel", sig, f"max_pool_2x2 {dtype}"


def max_pool_backward(dtype: str) -> tuple:
    """``gx[b, idx[b, k]] += g[b, k]`` (``gx`` starts zeroed; ``idx`` comes from ``max_pool``)."""
    src = HEADER + _decorator() + """\
def kernel(g, idx, gx):
    B, K = g.shape
    for b in range(B):
        for k in range(K):
            gx[b, idx[b, k]] += g[b, k]
"""
    sig = _sig(_arr(dtype, 2, True, True), _arr("int64", 2, True, True), _arr(dtype, 2, True))
    return src, "kernel", sig, f"max_pool_backward {dtype}"


def avg_pool_2x2(dtype: str) -> tuple:
    """``avg_pool`` for the common 2x2 windows at stride 2 with no padding (every window whole):
    a row pair at a time, vectorized (the general kernel's window loops stay scalar, many times
    slower). Same float64 sums and scaling."""
    dt = "np." + dtype
    src = HEADER + _decorator() + f"""\
def kernel(x, scale, out):
    B, H, W = x.shape
    OH = out.shape[1]
    OW = out.shape[2]
    for b in range(B):
        for i in range(OH):
            r0 = x[b, 2 * i]
            r1 = x[b, 2 * i + 1]
            s = scale[i]
            o = out[b, i]
            for j in range(OW):
                o[j] = {dt}((np.float64(r0[2 * j]) + np.float64(r0[2 * j + 1])
                             + np.float64(r1[2 * j]) + np.float64(r1[2 * j + 1])) * s[j])
"""
    sig = _sig(_arr(dtype, 3, True, True), _arr("float64", 2, True, True), _arr(dtype, 3, True))
    return src, "kernel", sig, f"avg_pool_2x2 {dtype}"


def avg_pool_2x2_backward(dtype: str) -> tuple:
    """The adjoint of ``avg_pool_2x2``: each window of ``gx`` gets ``g * scale`` (stored, not
    added: the windows do not overlap), and a last odd row or column, in no window, zeros."""
    dt = "np." + dtype
    src = HEADER + _decorator() + f"""\
def kernel(g, scale, gx):
    B, H, W = gx.shape
    OH = g.shape[1]
    OW = g.shape[2]
    for b in range(B):
        for i in range(OH):
            gr = g[b, i]
            s = scale[i]
            r0 = gx[b, 2 * i]
            r1 = gx[b, 2 * i + 1]
            for j in range(OW):
                v = {dt}(np.float64(gr[j]) * s[j])
                r0[2 * j] = v
                r0[2 * j + 1] = v
                r1[2 * j] = v
                r1[2 * j + 1] = v
            for w in range(2 * OW, W):
                r0[w] = 0
                r1[w] = 0
        for y in range(2 * OH, H):
            gx[b, y, :] = 0
"""
    sig = _sig(_arr(dtype, 3, True, True), _arr("float64", 2, True, True), _arr(dtype, 3, True))
    return src, "kernel", sig, f"avg_pool_2x2_backward {dtype}"


def _avg_pool_sig(dtype: str) -> tuple:
    """Argument types of ``avg_pool`` and its adjoint: ``(x or g, hs, hk, ws, wk, scale, out or
    gx)``."""
    return _sig(_arr(dtype, 3, True, True), *[_arr("int64", 1, True, True)] * 4,
                _arr("float64", 2, True, True), _arr(dtype, 3, True))


def avg_pool(dtype: str) -> tuple:
    """``out[b, i, j] = scale[i, j] * sum(window of x[b])`` (windows with unit step)."""
    src = HEADER + _decorator() + """\
def kernel(x, hs, hk, ws, wk, scale, out):
    B, H, W = x.shape
    OH = hs.shape[0]
    OW = ws.shape[0]
    for b in range(B):
        for i in range(OH):
            for j in range(OW):
                acc = 0.0
                for y in range(hs[i], hs[i] + hk[i]):
                    for w in range(ws[j], ws[j] + wk[j]):
                        acc += x[b, y, w]
                out[b, i, j] = acc * scale[i, j]
"""
    return src, "kernel", _avg_pool_sig(dtype), f"avg_pool {dtype}"


def avg_pool_backward(dtype: str) -> tuple:
    """The adjoint of ``avg_pool``: ``g[b, i, j] * scale[i, j]`` is added over each window of
    ``gx[b]`` (``gx`` must start zeroed)."""
    src = HEADER + _decorator() + """\
def kernel(g, hs, hk, ws, wk, scale, gx):
    B, H, W = gx.shape
    OH = hs.shape[0]
    OW = ws.shape[0]
    for b in range(B):
        for i in range(OH):
            for j in range(OW):
                v = g[b, i, j] * scale[i, j]
                for y in range(hs[i], hs[i] + hk[i]):
                    for w in range(ws[j], ws[j] + wk[j]):
                        gx[b, y, w] += v
"""
    return src, "kernel", _avg_pool_sig(dtype), f"avg_pool_backward {dtype}"
