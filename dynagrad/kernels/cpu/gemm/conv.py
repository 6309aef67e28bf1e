"""Kernel template: a float32 convolution's forward and backward passes on register tiles.

The im2col engine (``ops/nn/conv.py``) hands each sample's columns to one OpenBLAS GEMM,
``weight (O, C*taps) @ cols (C*taps, L)``, which for a convolution's few output channels runs far
below its peak: OpenBLAS packs both operands for every call (LeNet-5's ``(16, 150) @ (150, 100)``
is too small to repay it). This module's two kernels instead run each sample's products on
``tile_gemm``'s register tiles, straight from buffers that stay in the cache, with im2col and
col2im fused in; the samples are shared out among OpenBLAS's workers.

``forward(x, weight, geom, bias, out, kept)``: im2col, then ``weight @ cols`` (each output row
starting from its bias, if any). ``x`` is the ``(N, C, D, H, W)`` input, ``weight``
``(G, O/G, C/G*taps)``, ``geom`` ``nn_conv``'s geometry array, ``bias`` ``(O,)`` or empty,
``out`` ``(N, O, L)``; ``kept`` is ``(N, C*taps, L)`` to keep every sample's columns for the
weight gradient, or empty.

``backward(x, wt, geom, gout, kept, gx, gwt, gb)`` writes the input gradient ``gx``
``(N, C, D, H, W)``, the transposed weight gradient ``gwt`` ``(G, C/G*taps, O/G)`` and the bias
gradient ``gb`` ``(O,)``, each only where it is not empty, from the output gradient ``gout``
``(N, O, L)`` (N > 0), the transposed weight ``wt`` ``(G, C/G*taps, O/G)`` and the input ``x`` or
the forward pass's ``kept`` columns (``x`` is read only for a weight gradient without them).

Both come from one module (``build()``), so the helpers they share compile once. All arrays
are C-contiguous; the caller checks float32 and ``gemm_tile.AVAILABLE``.

Example:
    >>> src, names, sigs, what = build()
    >>> names, what
    (('forward', 'backward'), 'float32 convolution on register tiles')
"""
from __future__ import annotations

from . import matmul as tile_gemm
from .. import worker_pool
from .tiles import COLUMNS
from ..nn.conv import IM2COL_BODY, col2im_body
from ..templates import HEADER, _arr, _decorator

# Below this many multiply-adds one thread runs the convolution (as tile_gemm).
THREADED_MIN_WORK = tile_gemm.THREADED_MIN_WORK

# a forward slice's row of words: first sample, end sample, then x, weight, geom, bias (0: none),
# out, columns (addresses in bytes), whether the columns are kept per sample, C, D, H, W, G, O/G,
# C/G*taps, L, rows per block, k per pass
_FORWARD_WORDS = 19


def _helpers(pooled: bool) -> str:
    """The start of the module: imports, ``tile_gemm``'s blocks, im2col and col2im for one
    sample (as ``nn_conv``'s kernels); ``pooled``: the samples shared out among OpenBLAS's
    workers."""
    imports = ", run_slices, slice_count" if pooled else ""
    plain = _decorator().replace("cache=True, ", "")
    return HEADER + f'''from numba import uint64 as U
from dynagrad.kernels.cpu.worker_pool import pointer{imports}
{tile_gemm._TILES}

@numba.njit(nogil=True, error_model="numpy")
def product(a, a_row, b, b_row, c, c_row, m, n, k, accumulate, height, depth):
    """C (m, n) = A (m, k) @ B (k, n), or C += with ``accumulate`` (addresses in bytes; rows
    ``a_row``, ``b_row``, ``c_row`` elements apart, columns contiguous) on the tiles: a strip of
    32 columns of B at a time, k in passes of at most ``depth``, every row block of at most
    ``height`` rows of A after the other while the strip is in L1."""
    for j in range(0, n, {COLUMNS}):
        for k0 in range(0, k, depth):
            kk = min(depth, k - k0)
            for i in range(0, m, height):
                block(a + (i * a_row + k0) * 4, a_row, 1, b + (k0 * b_row + j) * 4, b_row,
                      c + (i * c_row + j) * 4, c_row, kk, 1 if accumulate or k0 > 0 else 0,
                      min(height, m - i), min({COLUMNS}, n - j))


@numba.njit(nogil=True, error_model="numpy")
def slice_rows(n, work, words, m):
    """The slices' rows of ``words`` int64 words for ``n`` samples of ``work`` multiply-adds in
    all (one slice below {THREADED_MIN_WORK}): each row starts with its share of the samples and
    ends with the tiles' rows per block (for products of ``m`` rows) and k per pass."""
    slices = {"min(slice_count(), n)" if pooled else "1"} if work >= {THREADED_MIN_WORK} else 1
    rows = np.zeros((slices, words), np.int64)
    for s in range(slices):
        rows[s, 0], rows[s, 1] = n * s // slices, n * (s + 1) // slices
        rows[s, words - 2] = {tile_gemm.ROWS} if m >= {tile_gemm.TALL_FROM} else 8
        rows[s, words - 1] = {tile_gemm.DEPTH}
    return rows


{plain}def im2col(x, geom, cols):
{IM2COL_BODY}

{plain}def col2im(cols, geom, x):
{col2im_body("float32")}
'''


def _run(pooled: bool, slice_kernel: str) -> str:
    """Source that runs ``slice_kernel`` once per row of ``rows`` (indented for a driver)."""
    many = f"run_slices({slice_kernel}, rows)" if pooled else "pass"
    return f"""    if rows.shape[0] == 1:
        {slice_kernel}(pointer(rows.ctypes.data))
    else:
        {many}"""


def _forward_source(pooled: bool) -> str:
    """The forward kernel's source."""
    return f'''
@numba.njit(cache=True, nogil=True, error_model="numpy")
def forward_slice(row):
    """Samples ``[first, end)``: im2col, then each group's product on the tiles, a strip of 32
    columns at a time (k in passes of at most ``depth``), every row block of the weight after
    the other while the strip is in L1."""
    w = numba.carray(row, {_FORWARD_WORDS}, np.int64)
    first, end, x, weight, geom_at, bias, out, cols = (w[0], w[1], w[2], w[3], w[4], w[5],
                                                       w[6], w[7])
    per_sample, c, d, h, wd, groups, og, cgk, length = (w[8], w[9], w[10], w[11], w[12],
                                                        w[13], w[14], w[15], w[16])
    height, depth = w[17], w[18]
    geom = numba.carray(pointer(geom_at), 15, np.int64)
    rows = groups * cgk
    for n in range(first, end):
        at = cols + n * rows * length * 4 if per_sample else cols
        im2col(numba.carray(pointer(x + n * c * d * h * wd * 4), (1, c, d, h, wd), np.float32),
               geom, numba.carray(pointer(at), (1, rows, length), np.float32))
        o = out + n * groups * og * length * 4
        if bias != 0:
            b = numba.carray(pointer(bias), groups * og, np.float32)
            planes = numba.carray(pointer(o), (groups * og, length), np.float32)
            for r in range(groups * og):
                for t in range(length):
                    planes[r, t] = b[r]
        for g in range(groups):
            product(weight + g * og * cgk * 4, cgk, at + g * cgk * length * 4, length,
                    o + g * og * length * 4, length, og, length, cgk, bias != 0, height, depth)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def forward(x, weight, geom, bias, out, kept):
    n, c, d, h, wd = x.shape
    groups, og, cgk = weight.shape
    length = out.shape[2]
    if n == 0 or length == 0 or og == 0:
        return
    per_sample = kept.shape[0] == n
    rows = slice_rows(n, n * groups * og * cgk * length, {_FORWARD_WORDS}, og)
    buffer = np.empty((rows.shape[0], 0 if per_sample else groups * cgk * length), np.float32)
    for s in range(rows.shape[0]):
        rows[s, 2], rows[s, 3], rows[s, 4] = x.ctypes.data, weight.ctypes.data, geom.ctypes.data
        rows[s, 5] = bias.ctypes.data if bias.shape[0] > 0 else 0
        rows[s, 6] = out.ctypes.data
        rows[s, 7] = kept.ctypes.data if per_sample else buffer[s].ctypes.data
        rows[s, 8], rows[s, 9], rows[s, 10], rows[s, 11], rows[s, 12] = per_sample, c, d, h, wd
        rows[s, 13], rows[s, 14], rows[s, 15], rows[s, 16] = groups, og, cgk, length
{_run(pooled, "forward_slice")}
'''


# a backward slice's row of words: first sample, end sample, then x, the transposed weight,
# geom, the output gradient, the kept columns (0: none), the input gradient (0: not wanted), the
# slice's weight- and bias-gradient sums (0: not wanted), its columns buffer, its padded and
# transposed output-gradient buffers (addresses in bytes), C, D, H, W, G, O/G, C/G*taps, L, rows
# per block, k per pass
_BACKWARD_WORDS = 23


def _backward_source(pooled: bool) -> str:
    """The backward kernel's source."""
    return f'''

@numba.njit(nogil=True, error_model="numpy", fastmath={{"reassoc", "contract"}})
def add_row_sums(src, rows, length, sums):
    """``sums[r] += src[r, :].sum()`` for the (rows, length) array at address ``src``."""
    a = numba.carray(pointer(src), (rows, length), np.float32)
    s = numba.carray(pointer(sums), rows, np.float32)
    for r in range(rows):
        total = np.float32(0.0)
        for t in range(length):
            total += a[r, t]
        s[r] += total


@numba.njit(nogil=True, error_model="numpy")
def transpose(src, rows, length, padded, dst, rows16, length16):
    """The (rows, length) array at ``src`` as the (length16, rows16) array at ``dst``, in 16 x 16
    blocks: the rows go first into the (rows16, length16) buffer ``padded``, whose other entries
    stay zero."""
    a = numba.carray(pointer(src), (rows, length), np.float32)
    p = numba.carray(pointer(padded), (rows16, length16), np.float32)
    for r in range(rows):
        for t in range(length):
            p[r, t] = a[r, t]
    for r in range(0, rows16, 16):
        for t in range(0, length16, 16):
            transpose_16x16(padded + (r * length16 + t) * 4, length16,
                            dst + (t * rows16 + r) * 4, rows16)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def backward_slice(row):
    """Samples ``[first, end)``. Bias gradient: the output gradient's row sums. Weight gradient
    (transposed, per group): columns (C/G*taps, L) @ output gradient^T (L, O/G), the columns kept
    by the forward pass or from im2col, the output gradient transposed in 16 x 16 blocks so that
    the tiles read its rows. Input gradient: weight^T (C/G*taps, O/G) @ output gradient
    (O/G, L) into the columns buffer, then col2im."""
    w = numba.carray(row, {_BACKWARD_WORDS}, np.int64)
    first, end, x, wt, geom_at, gout, kept, gx = w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]
    sums_w, sums_b, buffer, padded, transposed = w[8], w[9], w[10], w[11], w[12]
    c, d, h, wd, groups, og, cgk, length = w[13], w[14], w[15], w[16], w[17], w[18], w[19], w[20]
    height, depth = w[21], w[22]
    geom = numba.carray(pointer(geom_at), 15, np.int64)
    rows, outs = groups * cgk, groups * og
    outs16, length16 = (outs + 15) // 16 * 16, (length + 15) // 16 * 16
    plane = c * d * h * wd
    for n in range(first, end):
        g_n = gout + n * outs * length * 4
        if sums_b != 0:
            add_row_sums(g_n, outs, length, sums_b)
        if sums_w != 0:
            cols = kept + n * rows * length * 4 if kept != 0 else buffer
            if kept == 0:
                im2col(numba.carray(pointer(x + n * plane * 4), (1, c, d, h, wd), np.float32),
                       geom, numba.carray(pointer(buffer), (1, rows, length), np.float32))
            transpose(g_n, outs, length, padded, transposed, outs16, length16)
        # the weight gradient, then the input gradient (one call of the tiles for both)
        for part in range(2):
            if (sums_w if part == 0 else gx) == 0:
                continue
            for g in range(groups):
                if part == 0:  # columns (C/G*taps, L) @ output gradient^T (L, O/G), added
                    a, a_row = cols + g * cgk * length * 4, length
                    b, b_row = transposed + g * og * 4, outs16
                    out, out_row, n_cols, k, add = sums_w + g * cgk * og * 4, og, og, length, True
                else:  # weight^T (C/G*taps, O/G) @ output gradient (O/G, L)
                    a, a_row = wt + g * cgk * og * 4, og
                    b, b_row = g_n + g * og * length * 4, length
                    out, out_row, n_cols, k, add = (buffer + g * cgk * length * 4, length, length,
                                                    og, False)
                product(a, a_row, b, b_row, out, out_row, cgk, n_cols, k, add, height, depth)
        if gx != 0:
            zeros = numba.carray(pointer(gx + n * plane * 4), plane, np.float32)
            for t in range(plane):
                zeros[t] = 0
            col2im(numba.carray(pointer(buffer), (1, rows, length), np.float32), geom,
                   numba.carray(pointer(gx + n * plane * 4), (1, c, d, h, wd), np.float32))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def backward(x, wt, geom, gout, kept, gx, gwt, gb):
    n, length = gout.shape[0], gout.shape[2]
    groups, cgk, og = wt.shape
    want_input, want_weight, want_bias = gx.shape[0] > 0, gwt.shape[0] > 0, gb.shape[0] > 0
    dims = gx.shape if want_input else x.shape
    c, d, h, wd = dims[1], dims[2], dims[3], dims[4]
    rows = slice_rows(n, n * groups * og * cgk * length, {_BACKWARD_WORDS}, cgk)
    slices = rows.shape[0]
    outs16, length16 = (groups * og + 15) // 16 * 16, (length + 15) // 16 * 16
    weight_words = groups * cgk * og if want_weight else 1
    sums_w = np.zeros((slices, weight_words), np.float32)
    sums_b = np.zeros((slices, groups * og if want_bias else 1), np.float32)
    buffer = np.empty((slices, groups * cgk * length), np.float32)
    padded = np.zeros((slices, outs16 * length16 if want_weight else 1), np.float32)
    transposed = np.empty((slices, length16 * outs16 if want_weight else 1), np.float32)
    per_sample = kept.shape[0] == n
    for s in range(slices):
        rows[s, 2], rows[s, 3], rows[s, 4] = x.ctypes.data, wt.ctypes.data, geom.ctypes.data
        rows[s, 5] = gout.ctypes.data
        rows[s, 6] = kept.ctypes.data if per_sample else 0
        rows[s, 7] = gx.ctypes.data if want_input else 0
        rows[s, 8] = sums_w[s].ctypes.data if want_weight else 0
        rows[s, 9] = sums_b[s].ctypes.data if want_bias else 0
        rows[s, 10], rows[s, 11] = buffer[s].ctypes.data, padded[s].ctypes.data
        rows[s, 12] = transposed[s].ctypes.data
        rows[s, 13], rows[s, 14], rows[s, 15], rows[s, 16] = c, d, h, wd
        rows[s, 17], rows[s, 18], rows[s, 19], rows[s, 20] = groups, og, cgk, length
{_run(pooled, "backward_slice")}
    add_up(sums_w, gwt.reshape(-1))
    add_up(sums_b, gb)


@numba.njit(nogil=True, error_model="numpy")
def add_up(parts, total):
    """``total[t] = parts[:, t].sum()`` for the first ``len(total)`` columns (a loop: array
    expressions cost seconds of compile time)."""
    for t in range(total.shape[0]):
        value = parts[0, t]
        for s in range(1, parts.shape[0]):
            value += parts[s, t]
        total[t] = value
'''


def build() -> tuple:
    """``(source, function names, argument types, description)`` for ``cache.lookup``: the
    module of both kernels."""
    pooled = worker_pool.AVAILABLE
    f32 = [_arr("float32", n, True, True) for n in range(6)]  # read-only, by rank
    out = [_arr("float32", n, True) for n in range(6)]
    geom = _arr("int64", 1, True, True)
    forward = (f32[5], f32[3], geom, f32[1], out[3], out[3])
    backward = (f32[5], f32[3], geom, f32[3], f32[3], out[5], out[3], out[1])
    return (_helpers(pooled) + _forward_source(pooled) + _backward_source(pooled),
            ("forward", "backward"), (forward, backward), "float32 convolution on register tiles")
