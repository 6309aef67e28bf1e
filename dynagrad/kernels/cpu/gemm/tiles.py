"""Register-tile building blocks for float32 matrix products (AVX-512).

A batch of small products, such as attention's 64 ``(128, 64) @ (64, 128)``, runs slowly on
OpenBLAS: it packs both operands for every call, which a product this small never repays.
``tile_8x32`` computes an 8 x 32 block of the product straight from the operands' memory, its
16 accumulators held in registers for the whole sum over k; the LLVM IR is written here because
Numba's loop vectorizer keeps such a tile in memory. The same tile comes with 14, 4, 2 and 1
rows, and masked (``tile_8x32_masked``: only the first ``cols`` columns of B are read and of C
written), so that a kernel can cover any shape. ``transpose_16x16`` lays out a right-hand
operand whose columns are not contiguous (``key.transpose(-2, -1)``) so that the tile can load
its rows as vectors.

All are Numba intrinsics on integer addresses and element strides, for generated kernels
(``kernels/cpu/gemm/batched.py``, ``kernels/cpu/gemm/matmul.py``); callers check ``AVAILABLE`` and
guarantee the shapes and bounds.

Example:
    >>> from dynagrad.kernels.cpu.gemm import tiles as gemm_tile
    >>> gemm_tile.ROWS, gemm_tile.COLUMNS
    (8, 32)
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ...._runtime.cpu_target import compiles_for_avx512
from ..scalarlib import _lane_mask, _masked_load, _masked_store
from ...cache import compiled_into_kernels

compiled_into_kernels(__name__)  # its code compiles into the kernels importing it

AVAILABLE = compiles_for_avx512()  # the tiles' 16-28 accumulators need AVX-512's 32 registers
ROWS, COLUMNS = 8, 32  # of the tile: 8 x 2 vectors of 16 float32 accumulators
_LANES = 16
_F32 = ir.FloatType()
_VEC = ir.VectorType(_F32, _LANES)
_I32, _I64 = ir.IntType(32), ir.IntType(64)
_INDICES = ir.VectorType(_I32, _LANES)


def _address(builder, base, offset):
    """``base + offset`` float32 elements, as a pointer (``base`` an integer address)."""
    return builder.gep(builder.inttoptr(base, _F32.as_pointer()), [offset])


def _vector_at(builder, base, offset):
    return builder.bitcast(_address(builder, base, offset), _VEC.as_pointer())


_INT64S = (types.int64,) * 10


def _tile(rows: int, masked: bool):
    """The intrinsic for a ``rows`` x 32 tile; a ``masked`` one takes a last argument ``cols``
    and reads and writes only the first ``cols`` (< 32) columns of B and C."""
    arity = 10 if masked else 9

    def signature_and_codegen(args):
        if args != _INT64S[:arity]:
            return None

        def codegen(context, builder, signature, values):
            a_, a_row_, a_col_, b_, b_row_, c_, c_row_, k_, accumulate_ = values[:9]
            masks = [_lane_mask(builder, _I64(0), builder.sub(values[9], _I64(h * _LANES)),
                                _LANES) for h in range(2)] if masked else None

            fma = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(_VEC, [_VEC] * 3), "llvm.fma.v16f32")
            # allocas in the entry block: LLVM promotes them to registers
            sums = [cgutils.alloca_once_value(builder, ir.Constant(_VEC, None))
                    for _ in range(rows * 2)]

            def c_vectors():  # (built where used: kept across the loop they cost registers)
                return [_vector_at(builder, c_, builder.add(builder.mul(_I64(r), c_row_),
                                                            _I64(h * _LANES)))
                        for r in range(rows) for h in range(2)]
            with builder.if_else(builder.icmp_signed("!=", accumulate_, _I64(0))) as (
                    add_to_c, overwrite_c):
                with add_to_c:
                    for i, (s, ptr) in enumerate(zip(sums, c_vectors())):
                        builder.store(_load(builder, ptr, masks and masks[i % 2]), s)
                with overwrite_c:
                    for s in sums:
                        builder.store(ir.Constant(_VEC, [0.0] * _LANES), s)
            splat = ir.Constant(_INDICES, [0] * _LANES)
            with cgutils.for_range(builder, k_) as loop:
                p = loop.index
                row = builder.mul(p, b_row_)
                bs = [_load(builder, _vector_at(builder, b_, builder.add(row, _I64(h * _LANES))),
                            masks and masks[h]) for h in range(2)]
                a_p = builder.mul(p, a_col_)
                for r in range(rows):
                    at = builder.add(builder.mul(_I64(r), a_row_), a_p)
                    value = builder.load(_address(builder, a_, at), align=4)
                    lanes = builder.insert_element(ir.Constant(_VEC, ir.Undefined), value,
                                                   _I32(0))
                    lanes = builder.shuffle_vector(lanes, ir.Constant(_VEC, ir.Undefined), splat)
                    for h in range(2):
                        s = sums[2 * r + h]
                        builder.store(builder.call(fma, [lanes, bs[h], builder.load(s)]), s)
            for i, ptr in enumerate(c_vectors()):
                if masks is None:
                    builder.store(builder.load(sums[i]), ptr, align=4)
                else:
                    _masked_store(builder, builder.load(sums[i]), ptr, masks[i % 2], 4)
            return context.get_dummy_value()
        return types.void(*_INT64S[:arity]), codegen

    # (Numba's intrinsics take no *args: one explicit parameter list per arity)
    if masked:
        def typer(typingctx, a, a_row, a_col, b, b_row, c, c_row, k, accumulate, cols):
            return signature_and_codegen((a, a_row, a_col, b, b_row, c, c_row, k, accumulate,
                                          cols))
    else:
        def typer(typingctx, a, a_row, a_col, b, b_row, c, c_row, k, accumulate):
            return signature_and_codegen((a, a_row, a_col, b, b_row, c, c_row, k, accumulate))
    typer.__name__ = f"tile_{rows}x32" + ("_masked" if masked else "")
    return intrinsic(typer)


def _load(builder, ptr, mask):
    """The vector at ``ptr``; with a ``mask``, the masked-off lanes read as zero and touch no
    memory."""
    if mask is None:
        return builder.load(ptr, align=4)
    return _masked_load(builder, ptr, mask, _VEC, 4)


# ``C[r, j] = sum over p < k of A[r, p] * B[p, j]`` for r < rows, j < 32 (or j < cols), where
# ``A[r, p]`` is at ``a + r * a_row + p * a_col``, ``B[p, j]`` at ``b + p * b_row + j`` and
# ``C[r, j]`` at ``c + r * c_row + j`` (addresses in bytes, strides in float32 elements); with
# ``accumulate`` nonzero the sum is added to C instead (a product computed a slice of k at a
# time): tile_8x32(a, a_row, a_col, b, b_row, c, c_row, k, accumulate),
# tile_8x32_masked(..., accumulate, cols), and the same for 14, 4, 2 and 1 rows (``tile_gemm``
# covers any M with them).
tile_14x32, tile_8x32, tile_4x32, tile_2x32, tile_1x32 = (
    _tile(r, False) for r in (14, 8, 4, 2, 1))
tile_14x32_masked, tile_8x32_masked, tile_4x32_masked, tile_2x32_masked, tile_1x32_masked = (
    _tile(r, True) for r in (14, 8, 4, 2, 1))


@intrinsic
def transpose_16x16(typingctx, src, src_row, dst, dst_row):
    """``dst[j * dst_row + i] = src[i * src_row + j]`` for i, j < 16 (integer addresses in
    bytes, row strides in float32 elements): 16 vector loads, 64 two-vector shuffles (at each
    scale 8, 4, 2, 1 the off-diagonal blocks of every 2 x 2 block trade places), 16 stores."""
    if (src, src_row, dst, dst_row) != _INT64S[:4]:
        return None

    def codegen(context, builder, signature, args):
        src_, src_row_, dst_, dst_row_ = args
        rows = [builder.load(_vector_at(builder, src_, builder.mul(_I64(i), src_row_)), align=4)
                for i in range(_LANES)]
        half = _LANES // 2
        while half:
            swapped = list(rows)
            for i in range(_LANES):
                if i & half:
                    continue
                # lanes 0-15 are row i's, 16-31 row (i + half)'s
                top = [c if not c & half else _LANES + c - half for c in range(_LANES)]
                bottom = [c + half if not c & half else _LANES + c for c in range(_LANES)]
                swapped[i] = builder.shuffle_vector(rows[i], rows[i + half],
                                                    ir.Constant(_INDICES, top))
                swapped[i + half] = builder.shuffle_vector(rows[i], rows[i + half],
                                                           ir.Constant(_INDICES, bottom))
            rows = swapped
            half //= 2
        for j in range(_LANES):
            builder.store(rows[j], _vector_at(builder, dst_, builder.mul(_I64(j), dst_row_)),
                          align=4)
        return context.get_dummy_value()
    return types.void(*_INT64S[:4]), codegen
