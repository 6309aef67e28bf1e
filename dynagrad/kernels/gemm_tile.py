"""Register-tile building blocks for small float32 matrix products (AVX-512).

A small product, such as one of attention's 64 ``(128, 64) @ (64, 128)``, costs OpenBLAS
about 21 us on one core (100 GFLOP/s): it packs both operands for every call, which a product
this small never repays. ``tile`` computes a block of up to 8 x 32 of the product straight from
the operands' memory, its 16 accumulators held in registers for the whole sum over k; the LLVM
IR is written here because Numba's loop vectorizer keeps such a tile in memory.
``transpose_16x16`` lays out a right-hand operand whose columns are not contiguous
(``key.transpose(-2, -1)``) so that the tile can load its rows as vectors.

Both are Numba intrinsics on integer addresses and element strides, for generated kernels
(``kernels/batched_gemm.py``); callers guarantee the shapes and bounds.

Example:
    >>> from dynagrad.kernels import gemm_tile
    >>> gemm_tile.ROWS, gemm_tile.COLUMNS
    (8, 32)
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

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


_TILE_ARGS = (types.int64,) * 10


def _lanes_below(builder, count):
    """The mask of the lanes l < count (count clamped to 0..16), as <16 x i1>."""
    count = builder.select(builder.icmp_signed("<", count, _I64(0)), _I64(0), count)
    count = builder.select(builder.icmp_signed(">", count, _I64(_LANES)), _I64(_LANES), count)
    bits = builder.sub(builder.shl(_I32(1), builder.trunc(count, _I32)), _I32(1))
    return builder.bitcast(builder.trunc(bits, ir.IntType(_LANES)),
                           ir.VectorType(ir.IntType(1), _LANES))


def _llvm_function(builder, name: str, fnty):
    return cgutils.get_or_insert_function(builder.module, fnty, name)


@intrinsic
def tile(typingctx, a, a_row, a_col, b, b_row, c, c_row, k, rows, cols):
    """``C[r, j] = sum over p < k of A[r, p] * B[p, j]`` for r < rows <= 8, j < cols <= 32,
    where ``A[r, p]`` is at ``a + r * a_row + p * a_col``, ``B[p, j]`` at ``b + p * b_row + j``
    and ``C[r, j]`` at ``c + r * c_row + j`` (addresses in bytes, strides in float32 elements).
    A partial tile reads its last row again for the missing ones and masks the missing columns:
    nothing outside the operands is read or written."""
    if (a, a_row, a_col, b, b_row, c, c_row, k, rows, cols) != _TILE_ARGS:
        return None

    def codegen(context, builder, signature, args):
        a_, a_row_, a_col_, b_, b_row_, c_, c_row_, k_, rows_, cols_ = args
        mask_ty = ir.VectorType(ir.IntType(1), _LANES)
        fma = _llvm_function(builder, "llvm.fma.v16f32", ir.FunctionType(_VEC, [_VEC] * 3))
        load = _llvm_function(builder, "llvm.masked.load.v16f32.p0", ir.FunctionType(
            _VEC, [_VEC.as_pointer(), _I32, mask_ty, _VEC]))
        store = _llvm_function(builder, "llvm.masked.store.v16f32.p0", ir.FunctionType(
            ir.VoidType(), [_VEC, _VEC.as_pointer(), _I32, mask_ty]))
        masks = [_lanes_below(builder, builder.sub(cols_, _I64(h * _LANES))) for h in range(2)]
        last_row = builder.sub(rows_, _I64(1))
        # allocas in the entry block: LLVM promotes them to registers
        sums = [cgutils.alloca_once_value(builder, ir.Constant(_VEC, None))
                for _ in range(ROWS * 2)]
        for s in sums:
            builder.store(ir.Constant(_VEC, [0.0] * _LANES), s)
        splat = ir.Constant(_INDICES, [0] * _LANES)
        zeros = ir.Constant(_VEC, [0.0] * _LANES)
        a_rows = []
        for r in range(ROWS):
            row = builder.select(builder.icmp_signed("<", _I64(r), rows_), _I64(r), last_row)
            a_rows.append(builder.mul(row, a_row_))
        with cgutils.for_range(builder, k_) as loop:
            p = loop.index
            row = builder.mul(p, b_row_)
            bs = [builder.call(load, [_vector_at(builder, b_, builder.add(row, _I64(h * _LANES))),
                                      _I32(4), masks[h], zeros]) for h in range(2)]
            a_p = builder.mul(p, a_col_)
            for r in range(ROWS):
                value = builder.load(_address(builder, a_, builder.add(a_rows[r], a_p)), align=4)
                lanes = builder.insert_element(ir.Constant(_VEC, ir.Undefined), value, _I32(0))
                lanes = builder.shuffle_vector(lanes, ir.Constant(_VEC, ir.Undefined), splat)
                for h in range(2):
                    s = sums[2 * r + h]
                    builder.store(builder.call(fma, [lanes, bs[h], builder.load(s)]), s)
        no_lanes = ir.Constant(mask_ty, [0] * _LANES)
        for r in range(ROWS):
            present = builder.icmp_signed("<", _I64(r), rows_)
            for h in range(2):
                at = builder.add(builder.mul(_I64(r), c_row_), _I64(h * _LANES))
                builder.call(store, [builder.load(sums[2 * r + h]), _vector_at(builder, c_, at),
                                     _I32(4), builder.select(present, masks[h], no_lanes)])
        return context.get_dummy_value()
    return types.void(*_TILE_ARGS), codegen


@intrinsic
def transpose_16x16(typingctx, src, src_row, dst, dst_row):
    """``dst[j * dst_row + i] = src[i * src_row + j]`` for i, j < 16 (integer addresses in
    bytes, row strides in float32 elements): 16 vector loads, 64 two-vector shuffles (at each
    scale 8, 4, 2, 1 the off-diagonal blocks of every 2 x 2 block trade places), 16 stores."""
    if (src, src_row, dst, dst_row) != _TILE_ARGS[:4]:
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
    return types.void(*_TILE_ARGS[:4]), codegen
