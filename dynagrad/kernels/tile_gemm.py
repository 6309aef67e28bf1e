"""Kernel template: one float32 matrix product on register tiles, shared by both cores.

OpenBLAS packs both operands for every call and shapes its kernels for many rows. That loses
where few rows meet a weight: a recurrent layer's step multiplies a (B, H) state by W_hh, 35
times per sequence in the LSTM language model, and at B = 20 OpenBLAS spends 51-57 and 63-66 us
on ``h @ W_hh.T`` and ``d_gates @ W_hh`` (2 threads). ``kernel(a, b, out)`` computes
``out = a @ b`` with ``gemm_tile``'s 14 x 32 or 8 x 32 tiles (8-, 4-, 2- and 1-row tiles for the
last rows, masked tiles for the last columns): it reads A in place, B as contiguous (K, 32)
panels of its columns, packed in groups that each row block of A serves while it is in L1,
and shares the tiles among OpenBLAS's own threads, each taking an equal share of the
multiply-adds. ``ops.linalg.matmul_2d`` says which products go here (the recurrent steps, and
every linear layer's ``x @ W.T``, where the tiles beat OpenBLAS at every size measured).

``a`` (M, K) may have any strides. ``b`` is either a (1, K, N) view of B with any strides, whose
panels each thread then packs as it reaches them (16 x 16 in-register transposes where B's
columns are contiguous, as in ``W.T``), or B packed once by ``pack`` for many products (the
recurrent steps). ``out`` is C-contiguous (M, N). The caller checks float32, non-negative strides
and AVX-512 (``gemm_tile.AVAILABLE``).

Example:
    >>> import numpy as np
    >>> from dynagrad.kernels import tile_gemm
    >>> tile_gemm.pack(np.ones((3, 40), np.float32)).shape
    (2, 3, 32)
"""
from __future__ import annotations

import numpy as np
from numba import types

from . import worker_pool
from .gemm_tile import COLUMNS
from .templates import HEADER

# Rows of one block. A 14 x 32 tile (28 of the 32 vector registers accumulate) ran 5-15% faster
# than 8 x 32 on one core with B packed (840x784x384: 129 -> 146-154 GFLOP/s; 840x200x768:
# 151-162 -> 157-158; 8 x 48, 6 x 64, 4 x 96 and 10 x 48 were slower or mixed). In the threaded
# kernel, back to back: 128x784x256 195 -> 187 us, 256x128x784 197 -> 187, 64x400x120 30.6 ->
# 29.3; but 20 rows split 14 + 4 + 2 lost to 8 + 8 + 4 (20x800x200: 32.3 -> 33.3 us), so
# products of fewer than TALL_FROM rows keep 8-row blocks.
ROWS = 14
TALL_FROM = 28
# Panels packed together, at most this many bytes (L2 holds them): each row block of A then
# serves the whole group from L1, instead of being read again for every panel (1024x784x256
# 1366 -> 1263 us, 700x200x10000 12.4 -> 9.0 ms; 256 KiB did the same).
GROUP_BYTES = 1 << 19
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
from dynagrad.kernels.gemm_tile import (tile_14x32, tile_8x32, tile_4x32, tile_2x32, tile_1x32,
                                        tile_14x32_masked, tile_8x32_masked, tile_4x32_masked,
                                        tile_2x32_masked, tile_1x32_masked, transpose_16x16)


@numba.njit(nogil=True, error_model="numpy", inline="always")
def block(a, a_row, a_col, b, c, c_row, k, rows, cols):
    """``rows`` <= {ROWS} rows by ``cols`` <= 32 columns of the product from one panel ``b``:
    one tile, or (fewer rows) one each of 8, 4, 2 and 1 rows as the bits of ``rows`` say."""
    if cols == {COLUMNS}:
        if rows == {ROWS}:
            tile_14x32(a, a_row, a_col, b, {COLUMNS}, c, c_row, k)
            return
        if rows & 8:
            tile_8x32(a, a_row, a_col, b, {COLUMNS}, c, c_row, k)
            a, c = a + 8 * a_row * 4, c + 8 * c_row * 4
        if rows & 4:
            tile_4x32(a, a_row, a_col, b, {COLUMNS}, c, c_row, k)
            a, c = a + 4 * a_row * 4, c + 4 * c_row * 4
        if rows & 2:
            tile_2x32(a, a_row, a_col, b, {COLUMNS}, c, c_row, k)
            a, c = a + 2 * a_row * 4, c + 2 * c_row * 4
        if rows & 1:
            tile_1x32(a, a_row, a_col, b, {COLUMNS}, c, c_row, k)
        return
    if rows == {ROWS}:
        tile_14x32_masked(a, a_row, a_col, b, {COLUMNS}, c, c_row, k, cols)
        return
    if rows & 8:
        tile_8x32_masked(a, a_row, a_col, b, {COLUMNS}, c, c_row, k, cols)
        a, c = a + 8 * a_row * 4, c + 8 * c_row * 4
    if rows & 4:
        tile_4x32_masked(a, a_row, a_col, b, {COLUMNS}, c, c_row, k, cols)
        a, c = a + 4 * a_row * 4, c + 4 * c_row * 4
    if rows & 2:
        tile_2x32_masked(a, a_row, a_col, b, {COLUMNS}, c, c_row, k, cols)
        a, c = a + 2 * a_row * 4, c + 2 * c_row * 4
    if rows & 1:
        tile_1x32_masked(a, a_row, a_col, b, {COLUMNS}, c, c_row, k, cols)


@numba.njit(nogil=True, error_model="numpy")
def pack_panel(b, b_row, b_col, extent, j, cols, k, panel):
    """Columns ``j .. j + cols`` of B (at address ``b``, element strides ``b_row``, ``b_col``,
    ``extent`` elements in reach) as the (k, 32) panel at address ``panel``; columns from
    ``cols`` on are left unset (the masked tiles never read them)."""
    src = numba.carray(pointer(b), extent, np.float32)
    dst = numba.carray(pointer(panel), k * {COLUMNS}, np.float32)
    done = 0
    if b_row == 1:  # B's columns are contiguous (W.T): transpose 16 x 16 blocks of W's rows
        whole = k - k % 16
        done = cols - cols % 16
        for h in range(0, done, 16):
            for p in range(0, whole, 16):
                transpose_16x16(b + ((j + h) * b_col + p) * 4, b_col,
                                panel + (p * {COLUMNS} + h) * 4, {COLUMNS})
            for p in range(whole, k):
                for q in range(h, h + 16):
                    dst[p * {COLUMNS} + q] = src[p + (j + q) * b_col]
    if b_col == 1:  # contiguous rows: a vector copy (a variable stride would keep it scalar)
        for p in range(k):
            row = src[p * b_row + j:p * b_row + j + cols]
            to = dst[p * {COLUMNS}:p * {COLUMNS} + cols]
            for q in range(cols):
                to[q] = row[q]
        return
    for p in range(k):
        row = p * b_row + j * b_col
        for q in range(done, cols):
            dst[p * {COLUMNS} + q] = src[row + q * b_col]
'''


def _source(pooled: bool) -> str:
    """The kernel module's source; ``pooled``: threaded on OpenBLAS's workers."""
    imports = ", run_slices, slice_count" if pooled else ""
    slices = "slice_count()" if pooled else "1"
    run = "run_slices(slice_kernel, rows)" if pooled else "pass"
    return HEADER + f'''
from dynagrad.kernels.worker_pool import pointer{imports}
{_TILES}

# a slice's row of words: first unit, end unit, then a, a_row, a_col, b, b_row, b_col, extent,
# packed, panel buffer, out, m, n, k, rows per block, panels per group (addresses in bytes,
# strides in elements)
_WORDS = 17


@numba.njit(cache=True, nogil=True, error_model="numpy")
def slice_kernel(row):
    """Units ``[first, end)`` of the product; unit u is row block u % blocks of column panel
    u // blocks. The panels go in groups of ``group`` (packed together into the buffer): each
    row block of A then serves the whole group while it is in L1."""
    w = numba.carray(row, _WORDS, np.int64)
    a, a_row, a_col, b, b_row, b_col, extent = w[2], w[3], w[4], w[5], w[6], w[7], w[8]
    packed, buffer, c, m, n, k, height = w[9], w[10], w[11], w[12], w[13], w[14], w[15]
    first, end, group = w[0], w[1], w[16]
    if end <= first:
        return
    blocks = (m + height - 1) // height
    size = k * {COLUMNS * 4}  # bytes of one panel
    for g0 in range(first // blocks, (end - 1) // blocks + 1, group):
        g1 = min(g0 + group, (end - 1) // blocks + 1)
        if not packed:
            for panel in range(g0, g1):
                j = panel * {COLUMNS}
                pack_panel(b, b_row, b_col, extent, j, min({COLUMNS}, n - j), k,
                           buffer + (panel - g0) * size)
        for bi in range(blocks):
            i = bi * height
            for panel in range(g0, g1):
                u = panel * blocks + bi
                if u < first or u >= end:
                    continue
                j = panel * {COLUMNS}
                at = b + panel * size if packed else buffer + (panel - g0) * size
                block(a + i * a_row * 4, a_row, a_col, at, c + (i * n + j) * 4, n, k,
                      min(height, m - i), min({COLUMNS}, n - j))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def kernel(a, b, out):
    m, k = a.shape
    n = out.shape[1]
    if m == 0 or n == 0:
        return
    # pack()'s panels, or a (1, k, 32) B whose rows are contiguous: already one panel
    packed = (b.shape[2] == {COLUMNS} and b.strides[2] == 4 and b.strides[1] == {COLUMNS * 4}
              and (b.shape[0] == 1 or b.strides[0] == k * {COLUMNS * 4}))
    height = {ROWS} if m >= {TALL_FROM} else 8
    blocks = (m + height - 1) // height
    units = blocks * ((n + {COLUMNS - 1}) // {COLUMNS})
    slices = min({slices}, units) if m * n * k >= {THREADED_MIN_WORK} else 1
    rows = np.zeros((slices, _WORDS), np.int64)
    # cut the units where the multiply-adds done so far come nearest to an equal share
    share = m * n / slices
    done, s = 0.0, 1
    for u in range(units):
        cost = _cost(u, blocks, height, m, n)
        if s < slices and abs(done - s * share) <= abs(done + cost - s * share):
            rows[s - 1, 1] = u
            rows[s, 0] = u
            s += 1
        done += cost
    rows[slices - 1, 1] = units
    group = max(1, min({GROUP_BYTES} // max(k * {COLUMNS * 4}, 1), units // blocks))
    panels = np.empty((slices, 1 if packed else group * k * {COLUMNS}), np.float32)
    b_row, b_col = b.strides[1] // 4, b.strides[2] // 4
    for s in range(slices):
        rows[s, 2], rows[s, 3], rows[s, 4] = a.ctypes.data, a.strides[0] // 4, a.strides[1] // 4
        rows[s, 5], rows[s, 6], rows[s, 7] = b.ctypes.data, b_row, b_col
        rows[s, 8] = (k - 1) * b_row + (n - 1) * b_col + 1
        rows[s, 9], rows[s, 10] = packed, panels[s].ctypes.data
        rows[s, 11], rows[s, 12], rows[s, 13], rows[s, 14] = out.ctypes.data, m, n, k
        rows[s, 15], rows[s, 16] = height, group
    if slices == 1:
        slice_kernel(pointer(rows.ctypes.data))
    else:
        {run}


@numba.njit(inline="always")
def _cost(u, blocks, height, m, n):
    i, j = u % blocks * height, u // blocks * {COLUMNS}
    return min(height, m - i) * min({COLUMNS}, n - j)
'''


def build() -> tuple:
    """``(source, function name, argument types, description)`` for ``cache.lookup``."""
    operand = types.Array(types.float32, 2, "A", readonly=True)
    signature = (operand, types.Array(types.float32, 3, "A", readonly=True),
                 types.Array(types.float32, 2, "C"))
    return (_source(worker_pool.AVAILABLE), "kernel", signature,
            "float32 matmul on register tiles")
