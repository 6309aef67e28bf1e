"""Kernel template: a float32 convolution's forward pass on register tiles, im2col fused in.

The im2col engine (``nn/functional/conv.py``) hands each sample's columns to one OpenBLAS GEMM,
``weight (O, C*taps) @ cols (C*taps, L)``, which for a convolution's few output channels runs far
below its peak: OpenBLAS packs both operands for every call (LeNet-5's ``(16, 150) @ (150, 100)``:
7.1 us, 67 GFLOP/s on one core). ``kernel(x, weight, geom, bias, out, kept)`` instead runs, for
each sample, im2col into a buffer that stays in the cache and then ``tile_gemm``'s register
tiles straight from it: the weight read in place, the columns 32 at a time with no packing,
every row block of the weight served by one strip of columns while it is in L1. With a bias,
each output row starts from it. The samples are shared out among OpenBLAS's workers.

``x`` is the ``(N, C, D, H, W)`` input, ``weight`` ``(G, O/G, C/G*taps)``, ``geom``
``nn_conv``'s geometry array, ``bias`` ``(O,)`` or empty, ``out`` ``(N, O, L)``; ``kept`` is
``(N, C*taps, L)`` to keep every sample's columns for the weight gradient, or empty. All are
C-contiguous; the caller checks float32 and ``gemm_tile.AVAILABLE``.

Example:
    >>> src, name, sig, what = forward()
    >>> name, what
    ('kernel', 'float32 convolution forward on register tiles')
"""
from __future__ import annotations

from numba import types

from . import tile_gemm, worker_pool
from .gemm_tile import COLUMNS
from .nn_conv import IM2COL_BODY
from .templates import HEADER, _arr, _decorator

# Below this many multiply-adds one thread runs the convolution (as tile_gemm).
THREADED_MIN_WORK = tile_gemm.THREADED_MIN_WORK

# a slice's row of words: first sample, end sample, then x, weight, geom, bias (0: none), out,
# columns (addresses in bytes), whether the columns are kept per sample, C, D, H, W, G, O/G,
# C/G*taps, L, rows per block, k per pass
_WORDS = 19


def _source(pooled: bool) -> str:
    """The kernel module's source; ``pooled``: the samples shared out among OpenBLAS's workers."""
    imports = ", run_slices, slice_count" if pooled else ""
    slices = "min(slice_count(), n)" if pooled else "1"
    run = "run_slices(slice_kernel, rows)" if pooled else "pass"
    return HEADER + f'''from numba import uint64 as U
from dynagrad.kernels.worker_pool import pointer{imports}
{tile_gemm._TILES}

{_decorator().replace("cache=True, ", "")}def im2col(x, geom, cols):
{IM2COL_BODY}

# a slice's row of words (see conv_tiles._WORDS)
_WORDS = {_WORDS}


@numba.njit(cache=True, nogil=True, error_model="numpy")
def slice_kernel(row):
    """Samples ``[first, end)``: im2col, then each group's product on the tiles, a strip of 32
    columns at a time (k in passes of at most ``depth``), every row block of the weight after
    the other while the strip is in L1."""
    w = numba.carray(row, _WORDS, np.int64)
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
                planes[r, :] = b[r]
        for g in range(groups):
            for j in range(0, length, {COLUMNS}):
                for k0 in range(0, cgk, depth):
                    kk = min(depth, cgk - k0)
                    for i in range(0, og, height):
                        block(weight + ((g * og + i) * cgk + k0) * 4, cgk, 1,
                              at + ((g * cgk + k0) * length + j) * 4, length,
                              o + ((g * og + i) * length + j) * 4, length, kk,
                              1 if k0 > 0 or bias != 0 else 0, min(height, og - i),
                              min({COLUMNS}, length - j))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def kernel(x, weight, geom, bias, out, kept):
    n, c, d, h, wd = x.shape
    groups, og, cgk = weight.shape
    length = out.shape[2]
    if n == 0 or length == 0 or og == 0:
        return
    per_sample = kept.shape[0] == n and n > 0
    slices = {slices} if n * groups * og * cgk * length >= {THREADED_MIN_WORK} else 1
    buffer = np.empty((1 if per_sample else slices, groups * cgk * length), np.float32)
    rows = np.zeros((slices, _WORDS), np.int64)
    for s in range(slices):
        rows[s, 0], rows[s, 1] = n * s // slices, n * (s + 1) // slices
        rows[s, 2], rows[s, 3], rows[s, 4] = x.ctypes.data, weight.ctypes.data, geom.ctypes.data
        rows[s, 5] = bias.ctypes.data if bias.shape[0] > 0 else 0
        rows[s, 6] = out.ctypes.data
        rows[s, 7] = kept.ctypes.data if per_sample else buffer[s].ctypes.data
        rows[s, 8], rows[s, 9], rows[s, 10], rows[s, 11], rows[s, 12] = per_sample, c, d, h, wd
        rows[s, 13], rows[s, 14], rows[s, 15], rows[s, 16] = groups, og, cgk, length
        rows[s, 17] = {tile_gemm.ROWS} if og >= {tile_gemm.TALL_FROM} else 8
        rows[s, 18] = {tile_gemm.DEPTH}
    if slices == 1:
        slice_kernel(pointer(rows.ctypes.data))
    else:
        {run}
'''


def forward() -> tuple:
    """``(source, function name, argument types, description)`` for ``cache.lookup``."""
    signature = (_arr("float32", 5, True, True), _arr("float32", 3, True, True),
                 _arr("int64", 1, True, True), _arr("float32", 1, True, True),
                 _arr("float32", 3, True), _arr("float32", 3, True))
    return (_source(worker_pool.AVAILABLE), "kernel", signature,
            "float32 convolution forward on register tiles")
