"""Matrix products of NumPy buffers (NumPy's matmul rules): BLAS, or the register tiles of
``matmul`` / ``batched`` where those are faster, and small batches split across the cores.

Example:
    >>> import numpy as np
    >>> from dynagrad.kernels.cpu.gemm.products import matmul
    >>> matmul(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).tolist()[0]
    [3.0, 3.0, 3.0, 3.0]
"""
from __future__ import annotations

import math

import numpy as np

from ...._runtime.blas_threads import blas_core, parallel_slices, run_split
from ...cache import _memory, lookup
from . import batched as batched_gemm, matmul as tile_gemm, tiles as gemm_tile


# A batch of products is split across the cores (each slice one BLAS thread) when every product
# is small and there are many: OpenBLAS threads each small GEMM on its own and pays a hand-off per
# call. Large products thread better inside BLAS; a short batch does not repay the split's own
# hand-off.
SPLIT_MAX_PRODUCT = 1 << 24   # m * k * n of one product
SPLIT_MIN_BATCH_WORK = 1 << 25  # m * k * n summed over the batch


# Which float32 2-D products run on tile_gemm's register tiles: those where the tiles beat
# OpenBLAS. A right operand whose columns are contiguous (``W.T``, every linear layer's forward)
# is packed by 16 x 16 transposes, and there the tiles won at every size measured. A right
# operand with contiguous rows is packed by copies. With A's rows contiguous too (an input
# gradient), the tiles won where k or n is small (ROW_PACKED_MAX) and lost where both are
# long. With A transposed (a weight gradient, A read down its columns) they won with few rows
# and a short k or a narrow B (the TRANSPOSED_A bounds), and tied or lost beyond them, most with
# many rows. Products with a short k lose everywhere (TILES_MIN_K), as do the tiniest
# (TILES_MIN_WORK).
#
# Those bounds hold where OpenBLAS runs AVX-512 kernels of its own (its SkylakeX kernels). On a
# CPU for which it picks AVX2 kernels (its Haswell ones, which OpenBLAS 0.3.31 also runs on
# AMD's AVX-512 Zen 5), the tiles won every product of the benchmark models, those OpenBLAS
# kept above included; there every product the tiles can take goes to them (past the smallest,
# below).
BLAS_AVX512_CORES = ("SkylakeX", "Cooperlake", "SapphireRapids")
# (blas_core() is None where NumPy does not bundle OpenBLAS: the rules above stand)
TILES_ALWAYS = blas_core() not in (None, *BLAS_AVX512_CORES)
TILES_MIN_K = 32
TILES_MIN_WORK = 1 << 17              # m * k * n
ROW_PACKED_MAX = (256, 512)           # (k, n): a B with contiguous rows within either bound
TRANSPOSED_A_MAX_M = 256              # and, A's rows not contiguous: m, k, and the shorter
TRANSPOSED_A_MAX_K = 2048             # of k and n within these bounds
TRANSPOSED_A_SHORT_MAX = 256


def matmul_2d(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.matmul(a, b, out=out)`` for 2-D ``a`` and ``b`` (``out`` C-contiguous and apart
    from both, or None); float32 products run on ``kernels/cpu/gemm/matmul.py``'s register tiles
    where those are faster (above).

    Example:
        >>> import numpy as np
        >>> matmul_2d(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).tolist()[0]
        [3.0, 3.0, 3.0, 3.0]
    """
    if not _tiles_faster(a, b):
        return np.matmul(a, b, out=out)
    if out is None:
        out = np.empty((a.shape[0], b.shape[1]), np.float32)
    tile_gemm_kernel()(a, b[None], out)
    return out


def tile_gemm_kernel():
    """The compiled ``tile_gemm`` kernel (built or loaded on first use)."""
    return _memory.get(("tile_gemm",)) or lookup(("tile_gemm",), tile_gemm.build)


def _tiles_faster(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a @ b`` (2-D) goes to the register tiles, by the rules above."""
    m, k = a.shape
    n = b.shape[1]
    work = m * k * n
    # (the cheapest tests first: most small products, per-op matmul's included, stop at one)
    if work < TILES_MIN_WORK or k < TILES_MIN_K or not gemm_tile.AVAILABLE \
            or a.dtype != np.float32 or b.dtype != np.float32 \
            or min(a.strides) < 0 or any(s % 4 for s in a.strides):
        return False
    b_row, b_col = b.strides
    if b_row == 4:  # B's columns are contiguous (W.T): packed by transposes
        return b_col >= 0
    if b_col != 4 or b_row < 0:
        return False
    if TILES_ALWAYS:
        return True
    # B's rows are contiguous: packed by copies
    if a.strides[1] == 4:
        return k <= ROW_PACKED_MAX[0] or n <= ROW_PACKED_MAX[1]
    # A read down its columns (a weight gradient): few rows, and a short k or a narrow B
    return (m <= TRANSPOSED_A_MAX_M and k <= TRANSPOSED_A_MAX_K
            and min(k, n) <= TRANSPOSED_A_SHORT_MAX)


def _tiles_fit(ad: np.ndarray, bd: np.ndarray, shape: tuple, k: int) -> bool:
    """Whether ``batched_gemm`` takes this batch of small products: float32 on AVX-512, 3-D or
    4-D, whole tiles (M % 8, N % 32), float32-aligned strides, and a right operand whose rows
    are contiguous, or whose columns are (a transposed view, laid out in 16 x 16 blocks)."""
    if not (gemm_tile.AVAILABLE and ad.dtype == np.float32 and len(shape) in (3, 4) and ad.ndim >= 3
            and bd.ndim >= 3 and shape[-2] % gemm_tile.ROWS == 0
            and shape[-1] % gemm_tile.COLUMNS == 0
            and all(s % 4 == 0 for s in ad.strides + bd.strides)):
        return False
    b_row, b_col = bd.strides[-2], bd.strides[-1]
    return b_col == 4 or (b_row == 4 and k % 16 == 0)


def matmul(ad: np.ndarray, bd: np.ndarray) -> np.ndarray:
    """``np.matmul(ad, bd)``; a batch of small float products runs as ``run_split`` slices of
    its first batch dim."""
    if ad.ndim == 2 and bd.ndim == 2:
        return matmul_2d(ad, bd)
    if ad.ndim < 2 or bd.ndim < 2 or max(ad.ndim, bd.ndim) < 3 or ad.dtype != bd.dtype \
            or ad.dtype.type not in (np.float32, np.float64):
        return np.matmul(ad, bd)
    m, k, n = ad.shape[-2], ad.shape[-1], bd.shape[-1]
    shape = np.broadcast_shapes(ad.shape[:-2], bd.shape[:-2]) + (m, n)
    work = m * k * n
    if work > SPLIT_MAX_PRODUCT or work * math.prod(shape[:-2]) < SPLIT_MIN_BATCH_WORK \
            or parallel_slices(shape[0]) < 2:
        return np.matmul(ad, bd)
    out = np.empty(shape, ad.dtype)
    if _tiles_fit(ad, bd, shape, k):
        batch = shape[:-2] if len(shape) == 4 else (1,) + shape[:-2]
        a4 = np.broadcast_to(ad, shape[:-2] + (m, k)).reshape(batch + (m, k))
        b4 = np.broadcast_to(bd, shape[:-2] + (k, n)).reshape(batch + (k, n))
        out4 = out.reshape(batch + (m, n))
        kernel = lookup(("batched_gemm",), batched_gemm.build)
        run_split(math.prod(batch), lambda lo, hi: kernel(a4, b4, out4, lo, hi))
        return out

    def part(x: np.ndarray, lo: int, hi: int) -> np.ndarray:
        # an operand with its own first batch dim is sliced; a broadcast one is shared
        return x[lo:hi] if x.ndim == len(shape) and x.shape[0] == shape[0] else x

    run_split(shape[0], lambda lo, hi: np.matmul(part(ad, lo, hi), part(bd, lo, hi),
                                                 out=out[lo:hi]))
    return out
