"""Kernel template: one float32 matrix product on register tiles, shared by both cores.

OpenBLAS packs both operands for every call and shapes its kernels for many rows. That loses
where few rows meet a weight: a recurrent layer's step multiplies a (B, H) state by W_hh, 35
times per sequence in the LSTM language model (``h @ W_hh.T``, and ``d_gates @ W_hh`` in the
backward pass), and OpenBLAS repacks W_hh every time. ``kernel(a, b, out)`` computes
``out = a @ b`` with ``gemm_tile``'s 14 x 32 or 8 x 32 tiles (8-, 4-, 2- and 1-row tiles for the
last rows, masked tiles for the last columns). It reads A in place and B as
contiguous (K, 32) panels of its columns, and sums k in passes: each pass packs its rows of a
group of panels, which each row block of A then serves while it is in L1. The tiles are shared
among OpenBLAS's own threads, each taking an equal share of the multiply-adds: whole row blocks
where A has more rows than B has columns, whole panels otherwise. ``ops.linalg.matmul_2d`` says
which products go here (the recurrent steps, every linear layer's ``x @ W.T``, and the products
where measurements found the tiles faster than OpenBLAS).

``a`` (M, K) may have any strides. ``b`` is either a (1, K, N) view of B with any strides, whose
panels each thread then packs as it reaches them (16 x 16 in-register transposes where B's
columns are contiguous, as in ``W.T``), or B packed once by ``pack`` for many products (the
recurrent steps). ``out`` is C-contiguous (M, N). The caller checks float32, non-negative strides
and AVX-512 (``gemm_tile.AVAILABLE``).

Example:
    >>> import numpy as np
    >>> from dynagrad.kernels.cpu.gemm import matmul as tile_gemm
    >>> tile_gemm.pack(np.ones((3, 40), np.float32)).shape
    (2, 3, 32)
"""
from __future__ import annotations

import numpy as np
from numba import types

from .. import worker_pool
from .tiles import COLUMNS
from ..templates import HEADER

# Rows of one block. A 14 x 32 tile (28 of the 32 vector registers accumulate) ran faster than
# 8 x 32, on one core and threaded, and other shapes of tile were slower or mixed; but 20 rows
# split 14 + 4 + 2 lost to 8 + 8 + 4, so products of fewer than TALL_FROM rows keep 8-row
# blocks.
ROWS = 14
TALL_FROM = 28
# k is summed in near-equal passes of at most DEPTH rows, and each pass packs its rows of a
# group of panels of at most GROUP_BYTES (L2 holds them): a row block of A then serves the whole
# group from L1, instead of being read again for every panel. On a long k, a single pass lost
# to OpenBLAS; of the sizes tried, these passes and groups beat it by the most. An A read down
# its columns (a weight gradient) takes passes of at most DEPTH_T: its rows of a pass are
# scattered over twice the cache lines.
GROUP_BYTES = 1 << 20
DEPTH = 1024
DEPTH_T = 512
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


def _tile_calls(kind: str, extra: str, indent: str) -> str:
    """Source that runs ``rows`` rows of one panel on the ``kind`` tiles (e.g. ``x32_masked``):
    one ROWS-row tile, or one each of 8, 4, 2 and 1 rows as the bits of ``rows`` say."""
    call = f"(a, a_row, a_col, b, b_row, c, c_row, k, accumulate{extra})"
    lines = [f"if rows == {ROWS}:", f"    tile_{ROWS}{kind}{call}", "    return"]
    for r in (8, 4, 2, 1):
        lines += [f"if rows & {r}:", f"    tile_{r}{kind}{call}",
                  f"    a, c = a + {r} * a_row * 4, c + {r} * c_row * 4"]
    return "".join(indent + line + "\n" for line in lines[:-1])  # (no step after the last)


_TILE_NAMES = ", ".join(f"tile_{r}x32{m}" for m in ("", "_masked") for r in (ROWS, 8, 4, 2, 1))
_TILES = f'''
from dynagrad.kernels.cpu.gemm.tiles import ({_TILE_NAMES}, transpose_16x16)


@numba.njit(nogil=True, error_model="numpy", inline="always")
def block(a, a_row, a_col, b, b_row, c, c_row, k, accumulate, rows, cols):
    """``rows`` <= {ROWS} rows by ``cols`` <= 32 columns of the product from the 32 columns of B
    at ``b`` (rows ``b_row`` elements apart; the last columns of B on masked tiles), added to C
    with ``accumulate``."""
    if cols == {COLUMNS}:
{_tile_calls("x32", "", " " * 8)}    else:
{_tile_calls("x32_masked", ", cols", " " * 8)}

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
from dynagrad.kernels.cpu.worker_pool import pointer{imports}
{_TILES}

# a slice's row of words: first unit, end unit, then a, a_row, a_col, b, b_row, b_col, packed,
# panel buffer, out, m, n, k, rows per block, k per pass, units by rows, panels per group
# (addresses in bytes, strides in elements)
_WORDS = 18


@numba.njit(cache=True, nogil=True, error_model="numpy")
def slice_kernel(row):
    """Units ``[first, end)`` of the product (``_unit`` numbers them). The panels go in groups
    of at most GROUP_BYTES per pass over ``depth`` rows of k: each pass packs its rows of the
    group together into the buffer, and each row block of A then serves the whole group while
    its ``depth`` columns are in L1 (the tiles add to C after the first pass)."""
    w = numba.carray(row, _WORDS, np.int64)
    first, end = w[0], w[1]
    a, a_row, a_col, b, b_row, b_col = w[2], w[3], w[4], w[5], w[6], w[7]
    packed, buffer, c, m, n, k = w[8], w[9], w[10], w[11], w[12], w[13]
    height, depth, by_rows, group = w[14], w[15], w[16], w[17]
    if end <= first:
        return
    blocks = (m + height - 1) // height
    panels = (n + {COLUMNS - 1}) // {COLUMNS}
    # the row blocks and panels the units reach
    b_lo, b_hi, p_lo, p_hi = 0, blocks, 0, panels
    if by_rows:
        b_lo, b_hi = first // panels, (end - 1) // panels + 1
        if b_hi - b_lo == 1:
            p_lo, p_hi = first % panels, (end - 1) % panels + 1
    else:
        p_lo, p_hi = first // blocks, (end - 1) // blocks + 1
        if p_hi - p_lo == 1:
            b_lo, b_hi = first % blocks, (end - 1) % blocks + 1
    for g0 in range(p_lo, p_hi, group):
        g1 = min(g0 + group, p_hi)
        for k0 in range(0, k, depth):
            kk = min(depth, k - k0)
            if packed:  # pack()'s panels, each k rows
                at, panel_rows = b + (g0 * k + k0) * {COLUMNS * 4}, k
            else:
                pack_panels(b, b_row, b_col, n, g0, g1, k0, kk, buffer)
                at, panel_rows = buffer, kk
            for bi in range(b_lo, b_hi):
                row_block(a, a_row, a_col, at, panel_rows, c, m, n, bi, height, g0, g1, k0,
                          kk, first, end, blocks, panels, by_rows)


@numba.njit(nogil=True, error_model="numpy")
def pack_panels(b, b_row, b_col, n, p0, p1, k0, kk, buffer):
    """Rows ``k0 .. k0 + kk`` of panels ``p0 .. p1`` of B, one after another at ``buffer``."""
    b_pass = b + k0 * b_row * 4
    extent = (kk - 1) * b_row + (n - 1) * b_col + 1
    for panel in range(p0, p1):
        j = panel * {COLUMNS}
        pack_panel(b_pass, b_row, b_col, extent, j, min({COLUMNS}, n - j), kk,
                   buffer + (panel - p0) * kk * {COLUMNS * 4})


@numba.njit(nogil=True, error_model="numpy", inline="always")
def row_block(a, a_row, a_col, panel_at, panel_rows, c, m, n, bi, height, p0, p1, k0, kk,
              first, end, blocks, panels, by_rows):
    """Row block ``bi`` of the product over k = ``k0 .. k0 + kk``, for each of panels
    ``p0 .. p1`` whose unit lies in ``[first, end)``; the panels' rows ``k0 ..`` are at
    ``panel_at``, each panel ``panel_rows`` rows apart."""
    i = bi * height
    a_block = a + (i * a_row + k0 * a_col) * 4
    for panel in range(p0, p1):
        u = _unit(bi, panel, blocks, panels, by_rows)
        if u < first or u >= end:
            continue
        j = panel * {COLUMNS}
        block(a_block, a_row, a_col, panel_at + (panel - p0) * panel_rows * {COLUMNS * 4},
              {COLUMNS}, c + (i * n + j) * 4, n, kk, k0, min(height, m - i),
              min({COLUMNS}, n - j))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def kernel(a, b, out):
    m, k = a.shape
    n = out.shape[1]
    if m == 0 or n == 0:
        return
    if k == 0:
        out[:] = 0
        return
    # pack()'s panels, or a (1, k, 32) B whose rows are contiguous: already one panel
    packed = (b.shape[2] == {COLUMNS} and b.strides[2] == 4 and b.strides[1] == {COLUMNS * 4}
              and (b.shape[0] == 1 or b.strides[0] == k * {COLUMNS * 4}))
    height = {ROWS} if m >= {TALL_FROM} else 8
    blocks = (m + height - 1) // height
    panels = (n + {COLUMNS - 1}) // {COLUMNS}
    units = blocks * panels
    slices = min({slices}, units) if m * n * k >= {THREADED_MIN_WORK} else 1
    # k in near-equal passes of at most DEPTH (DEPTH_T for an A read down its columns), whole
    # 16-row blocks but the last
    most = {DEPTH} if a.strides[1] == 4 else {DEPTH_T}
    passes = (k + most - 1) // most
    depth = min(k, ((k + passes - 1) // passes + 15) // 16 * 16)
    # slices of whole row blocks each pack all of B, slices of whole panels each read all of A:
    # the smaller repeat (700x10000x200 in passes of 256: 1.12 by panels, 0.98 by rows)
    by_rows = slices > 1 and m > panels * {COLUMNS}
    rows = np.zeros((slices, _WORDS), np.int64)
    # cut the units where the multiply-adds done so far come nearest to an equal share
    share = m * n / slices
    done, s = 0.0, 1
    for u in range(units):
        bi, panel = (u // panels, u % panels) if by_rows else (u % blocks, u // blocks)
        cost = min(height, m - bi * height) * min({COLUMNS}, n - panel * {COLUMNS})
        if s < slices and abs(done - s * share) <= abs(done + cost - s * share):
            rows[s - 1, 1] = u
            rows[s, 0] = u
            s += 1
        done += cost
    rows[slices - 1, 1] = units
    # panels packed together per pass (a slice's buffer holds one pass of a group)
    group = min(max(1, {GROUP_BYTES} // (depth * {COLUMNS * 4})), panels)
    buffer = np.empty((slices, 1 if packed else group * depth * {COLUMNS}), np.float32)
    for s in range(slices):
        rows[s, 2], rows[s, 3], rows[s, 4] = a.ctypes.data, a.strides[0] // 4, a.strides[1] // 4
        rows[s, 5], rows[s, 6], rows[s, 7] = b.ctypes.data, b.strides[1] // 4, b.strides[2] // 4
        rows[s, 8], rows[s, 9], rows[s, 10] = packed, buffer[s].ctypes.data, out.ctypes.data
        rows[s, 11], rows[s, 12], rows[s, 13] = m, n, k
        rows[s, 14], rows[s, 15], rows[s, 16], rows[s, 17] = height, depth, by_rows, group
    if slices == 1:
        slice_kernel(pointer(rows.ctypes.data))
    else:
        {run}


@numba.njit(inline="always")
def _unit(bi, panel, blocks, panels, by_rows):
    """The number of the unit that is row block ``bi`` of column panel ``panel``: row blocks
    first within a panel, or panels first within a row block (``by_rows``)."""
    return bi * panels + panel if by_rows else panel * blocks + bi
'''


def build() -> tuple:
    """``(source, function name, argument types, description)`` for ``cache.lookup``."""
    operand = types.Array(types.float32, 2, "A", readonly=True)
    signature = (operand, types.Array(types.float32, 3, "A", readonly=True),
                 types.Array(types.float32, 2, "C"))
    return (_source(worker_pool.AVAILABLE), "kernel", signature,
            "float32 matmul on register tiles")
