"""Kernel template: one float32 matrix product with few rows, on register tiles and both cores.

A recurrent layer's step multiplies a (B, H) state by a weight, ``h @ W_hh.T`` forward and
``d_gates @ W_hh`` backward, 35 times per sequence in the LSTM language model. At B = 20 OpenBLAS
spends 58 and 69 us on these (2 threads): it packs both operands for every call, and its
kernels are shaped for many rows. ``kernel(a, b, out)`` computes ``out = a @ b`` straight from
the operands' memory with ``gemm_tile``'s 8 x 32 tiles (4-, 2- and 1-row tiles for the last
rows, masked tiles for the last columns) and shares the tiles among OpenBLAS's own threads,
each taking an equal share of the multiply-adds.

``a`` (M, K) may have any row stride but contiguous rows; ``b`` comes packed by ``pack``, once
for all the steps that share it (its tiles then read their 32 columns of B as one stream: 20%
faster on one core than through B's row stride); ``out`` is C-contiguous (M, N). The caller
checks float32 and AVX-512 (``gemm_tile.AVAILABLE``).

Example:
    >>> import numpy as np
    >>> from dynagrad.kernels import small_gemm
    >>> small_gemm.pack(np.ones((3, 40), np.float32)).shape
    (2, 3, 32)
"""
from __future__ import annotations

import numpy as np
from numba import types

from . import worker_pool
from .gemm_tile import COLUMNS, ROWS
from .templates import HEADER

# Below this many multiply-adds one thread runs the product: handing a slice to a second costs
# a few microseconds.
THREADED_MIN_WORK = 1 << 18

def pack(b: np.ndarray) -> np.ndarray:
    """``b`` (K, N) float32 as ``ceil(N / 32)`` contiguous (K, 32) panels of its columns, the
    last one padded with zeros."""
    k, n = b.shape
    whole, rest = divmod(n, COLUMNS)
    panels = np.empty((whole + (rest > 0), k, COLUMNS), np.float32)
    panels[:whole].transpose(1, 0, 2)[...] = b[:, :whole * COLUMNS].reshape(k, whole, COLUMNS)
    if rest:
        panels[whole, :, :rest] = b[:, whole * COLUMNS:]
        panels[whole, :, rest:] = 0
    return panels


_TILES = f'''
from dynagrad.kernels.gemm_tile import (tile_8x32, tile_4x32, tile_2x32, tile_1x32,
                                        tile_8x32_masked, tile_4x32_masked, tile_2x32_masked,
                                        tile_1x32_masked)


@numba.njit(nogil=True, error_model="numpy", inline="always")
def block(a, a_row, b, b_row, c, c_row, k, rows, cols):
    """``rows`` <= 8 rows by ``cols`` <= 32 columns of the product: one tile, or (rows below
    8) one each of 4, 2 and 1 rows as the bits of ``rows`` say."""
    if cols == {COLUMNS}:
        if rows == {ROWS}:
            tile_8x32(a, a_row, 1, b, b_row, c, c_row, k)
            return
        if rows & 4:
            tile_4x32(a, a_row, 1, b, b_row, c, c_row, k)
            a, c = a + 4 * a_row * 4, c + 4 * c_row * 4
        if rows & 2:
            tile_2x32(a, a_row, 1, b, b_row, c, c_row, k)
            a, c = a + 2 * a_row * 4, c + 2 * c_row * 4
        if rows & 1:
            tile_1x32(a, a_row, 1, b, b_row, c, c_row, k)
        return
    if rows == {ROWS}:
        tile_8x32_masked(a, a_row, 1, b, b_row, c, c_row, k, cols)
        return
    if rows & 4:
        tile_4x32_masked(a, a_row, 1, b, b_row, c, c_row, k, cols)
        a, c = a + 4 * a_row * 4, c + 4 * c_row * 4
    if rows & 2:
        tile_2x32_masked(a, a_row, 1, b, b_row, c, c_row, k, cols)
        a, c = a + 2 * a_row * 4, c + 2 * c_row * 4
    if rows & 1:
        tile_1x32_masked(a, a_row, 1, b, b_row, c, c_row, k, cols)
'''

def _source(pooled: bool) -> str:
    """The kernel module's source; ``pooled``: threaded on OpenBLAS's workers."""
    imports = ", run_slices, slice_count" if pooled else ""
    slices = "slice_count()" if pooled else "1"
    run = "run_slices(slice_kernel, rows)" if pooled else "pass"
    return HEADER + f'''
from dynagrad.kernels.worker_pool import pointer{imports}
{_TILES}

_WORDS = 9  # of a slice's row: first unit, end unit, a, a_row, b, c, m, n, k


@numba.njit(cache=True, nogil=True, error_model="numpy")
def slice_kernel(row):
    """Units ``[first, end)`` of the product; unit u is row block u % blocks of column tile
    u // blocks (so a thread's consecutive units reuse one column tile of B from L1)."""
    w = numba.carray(row, _WORDS, np.int64)
    a, a_row, b, c, m, n, k = w[2], w[3], w[4], w[5], w[6], w[7], w[8]
    blocks = (m + {ROWS - 1}) // {ROWS}
    for u in range(w[0], w[1]):
        i, panel = u % blocks * {ROWS}, u // blocks
        j = panel * {COLUMNS}
        block(a + i * a_row * 4, a_row, b + panel * k * {COLUMNS * 4}, {COLUMNS},
              c + (i * n + j) * 4, n, k, min({ROWS}, m - i), min({COLUMNS}, n - j))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def kernel(a, b, out):
    m, k = a.shape
    n = out.shape[1]
    blocks = (m + {ROWS - 1}) // {ROWS}
    units = blocks * ((n + {COLUMNS - 1}) // {COLUMNS})
    slices = min({slices}, units) if m * n * k >= {THREADED_MIN_WORK} else 1
    rows = np.zeros((slices, _WORDS), np.int64)
    # cut the units where the multiply-adds done so far come nearest to an equal share
    share = m * n / slices
    done, s = 0.0, 1
    for u in range(units):
        if s < slices and abs(done - s * share) <= abs(done + _cost(u, blocks, m, n) - s * share):
            rows[s - 1, 1] = u
            rows[s, 0] = u
            s += 1
        done += _cost(u, blocks, m, n)
    rows[slices - 1, 1] = units
    for s in range(slices):
        rows[s, 2], rows[s, 3], rows[s, 4] = a.ctypes.data, a.strides[0] // 4, b.ctypes.data
        rows[s, 5], rows[s, 6], rows[s, 7], rows[s, 8] = out.ctypes.data, m, n, k
    if slices == 1:
        slice_kernel(pointer(rows.ctypes.data))
    else:
        {run}


@numba.njit(inline="always")
def _cost(u, blocks, m, n):
    i, j = u % blocks * {ROWS}, u // blocks * {COLUMNS}
    return min({ROWS}, m - i) * min({COLUMNS}, n - j)
'''


def build() -> tuple:
    """``(source, function name, argument types, description)`` for ``cache.lookup``."""
    signature = (types.Array(types.float32, 2, "A", readonly=True),
                 types.Array(types.float32, 3, "C", readonly=True),
                 types.Array(types.float32, 2, "C"))
    return (_source(worker_pool.AVAILABLE), "kernel", signature,
            "float32 matmul with few rows (register tiles)")
