"""Kernel template: a batch of small float32 matrix products from 8 x 32 register tiles.

``kernel(a, b, out, lo, hi)`` computes products ``lo..hi`` (flattened over the two batch dims)
of ``out[p, q] = a[p, q] @ b[p, q]``; ``a`` and ``b`` may have any strides (0 for a broadcast
batch dim), ``out`` is C-contiguous. Each product is tiled by ``gemm_tile.tile_8x32`` straight
from the operands, with no packing; a right-hand operand whose rows are not contiguous (a
transposed view, as attention's ``key.transpose(-2, -1)``) is first laid out row by row in a
per-call buffer with ``transpose_16x16``. The caller (``ops.linalg``) checks the shapes:
M a multiple of ``ROWS``, N of ``COLUMNS``, and for a transposed right operand K and N multiples
of 16.

Example:
    >>> src, name, sig, what = build()
    >>> name, what
    ('kernel', 'batched small float32 matmul (8x32 register tiles)')
"""
from __future__ import annotations

from numba import types

from .tiles import COLUMNS, ROWS
from ..templates import HEADER

_BODY = f'''
from dynagrad.kernels.cpu.gemm.tiles import tile_8x32, transpose_16x16


@numba.njit(cache=True, nogil=True, error_model="numpy")
def kernel(a, b, out, lo, hi):
    n_q, m, n = out.shape[1], out.shape[2], out.shape[3]
    k = a.shape[3]
    a_row, a_col = a.strides[2] // 4, a.strides[3] // 4
    b_row, b_col = b.strides[2] // 4, b.strides[3] // 4
    laid_out = b_col != 1  # then b_row == 1: the caller checked
    laid = np.empty(k * n if laid_out else 1, np.float32)  # B, row by row
    # addresses as int64: ctypes.data is unsigned, and unsigned + signed is a float in Numba
    a_at, b_at, c_at = np.int64(a.ctypes.data), np.int64(b.ctypes.data), np.int64(out.ctypes.data)
    laid_at = np.int64(laid.ctypes.data)
    for f in range(lo, hi):
        p, q = f // n_q, f % n_q
        a0 = a_at + p * a.strides[0] + q * a.strides[1]
        b0 = b_at + p * b.strides[0] + q * b.strides[1]
        c0 = c_at + (p * n_q + q) * m * n * 4
        b_step = b_row
        if laid_out:
            for j in range(0, n, 16):
                for kk in range(0, k, 16):
                    transpose_16x16(b0 + (j * b_col + kk) * 4, b_col,
                                    laid_at + (kk * n + j) * 4, n)
            b0, b_step = laid_at, n
        for i in range(0, m, {ROWS}):
            for j in range(0, n, {COLUMNS}):
                tile_8x32(a0 + i * a_row * 4, a_row, a_col, b0 + j * 4, b_step,
                          c0 + (i * n + j) * 4, n, k, 0)
'''


def build() -> tuple:
    """``(source, function name, argument types, description)`` for ``cache.lookup``."""
    operand = types.Array(types.float32, 4, "A", readonly=True)
    signature = (operand, operand, types.Array(types.float32, 4, "C"), types.int64, types.int64)
    return (HEADER + _BODY, "kernel", signature,
            "batched small float32 matmul (8x32 register tiles)")
