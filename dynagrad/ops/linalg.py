"""Linear algebra: ``matmul``/``@`` (1-D, 2-D, batched with broadcasting), mm, bmm, mv, dot,
outer, einsum. Products go to NumPy's BLAS (the fastest GEMM on this CPU); the gradients are
products again.

Example:
    >>> import dynagrad as dg
    >>> (dg.ones(2, 3) @ dg.ones(3)).tolist()
    [3.0, 3.0]
"""
from __future__ import annotations

import math
import string

import numpy as np

from .._batch_parallel import blas_core, parallel_slices, run_split
from ..autograd import grad_mode
from ..autograd.function import edge_of, node_class, record
from ..dtypes import float32, float64
from ..errors import describe
from ..kernels import batched_gemm, gemm_tile, gpu, tile_gemm
from ..kernels.cache import _memory, lookup
from ..tensor import TENSOR_TYPES, Tensor, _wrap
from ._util import as_tensor_arg, broadcast_shapes
from .elementwise import sum_to
from .placement import common_device
from .registry import register


def _check_same_dtype(op: str, a: Tensor, b: Tensor) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{op}: expected both arguments to have the same dtype, but got "
                           f"{describe(a)} and {describe(b)}")
    if a.dtype.name == "bool":
        raise RuntimeError(f"{op}: not implemented for bool tensors")


def _matmul_shape(op: str, a: Tensor, b: Tensor) -> tuple:
    sa, sb = tuple(a.shape), tuple(b.shape)
    if not sa or not sb:
        raise RuntimeError(f"{op}: both arguments to matmul need to be at least 1D, but they are "
                           f"{len(sa)}D and {len(sb)}D")
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:
        raise RuntimeError(f"{op}: shapes {sa} and {sb} cannot be multiplied ({k_a} != {k_b})")
    if len(sa) > 2 or len(sb) > 2:
        broadcast_shapes(op, sa[:-2] if len(sa) > 1 else (), sb[:-2] if len(sb) > 1 else ())
    return sa, sb


def _matmul_back(node, g):
    a, b = node.saved_tensors
    a2 = a if a.ndim > 1 else a.unsqueeze(0)
    b2 = b if b.ndim > 1 else b.unsqueeze(-1)
    g2 = g
    if a.ndim == 1:
        g2 = g2.unsqueeze(-2 if g2.ndim else 0)  # a vector-vector product's g is 0-d
    if b.ndim == 1:
        g2 = g2.unsqueeze(-1)
    ga = gb = None
    if node.next_functions[0] is not None:
        ga = matmul(g2, b2.mT) if not _transposed(a2) else matmul(b2, g2.mT).mT
        ga = sum_to(ga, tuple(a2.shape)).reshape(tuple(a.shape))
    if node.next_functions[1] is not None:
        gb = matmul(a2.mT, g2) if not _transposed(b2) else matmul(g2.mT, a2).mT
        gb = sum_to(gb, tuple(b2.shape)).reshape(tuple(b.shape))
    return ga, gb


def _transposed(t: Tensor) -> bool:
    """Whether ``t``'s last two dims are stored swapped (e.g. ``k.transpose(1, 2)``): its
    gradient is then computed as the transpose of a product, so that it arrives in the same
    layout and flows back through the transpose without a strided copy."""
    st = t._data.strides
    return t.ndim >= 2 and st[-2] == t._data.itemsize and st[-1] != t._data.itemsize


_MatmulNode = node_class("MmBackward0", _matmul_back)
_BmmNode = node_class("BmmBackward0", _matmul_back)
_MvNode = node_class("MvBackward0", _matmul_back)
_DotNode = node_class("DotBackward0", _matmul_back)
_UnsafeViewNode = node_class("UnsafeViewBackward0", _matmul_back)


_ND = np.ndarray


def _device_matmul(ad, bd):
    """NumPy's matmul rules on CUDA buffers: vectors become matrices for the product, batch
    dims broadcast and fold into one, and the batched kernel does the rest."""
    a2 = ad.reshape(1, -1) if ad.ndim == 1 else ad
    b2 = bd.reshape(-1, 1) if bd.ndim == 1 else bd
    batch = broadcast_shapes("matmul", a2.shape[:-2], b2.shape[:-2])
    m, k, n = a2.shape[-2], a2.shape[-1], b2.shape[-1]
    if batch:
        a3 = np.broadcast_to(a2, batch + (m, k)).reshape(-1, m, k)
        b3 = np.broadcast_to(b2, batch + (k, n)).reshape(-1, k, n)
        res = gpu.matmul(a3, b3).reshape(batch + (m, n))
    else:
        res = gpu.matmul(a2, b2)
    shape = res.shape
    if ad.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if bd.ndim == 1:
        shape = shape[:-1]
    return res.reshape(shape)


def _c_array(res, dt) -> np.ndarray:
    """``res`` as a C-contiguous array of ``dt`` (a 0-d result stays 0-d, unlike
    ``np.ascontiguousarray``)."""
    return np.asarray(res, dtype=dt.np, order="C")


# A batch of products is split across the cores (each slice one BLAS thread) when every product
# is small and there are many: OpenBLAS threads each small GEMM on its own and pays a hand-off per
# call (the Transformer layer's 64 (128, 64) @ (64, 128) attention products: 1.8 -> 0.96 ms).
# Large products thread better inside BLAS; a short batch does not repay the hand-off (~70 us).
SPLIT_MAX_PRODUCT = 1 << 24   # m * k * n of one product
SPLIT_MIN_BATCH_WORK = 1 << 25  # m * k * n summed over the batch


# Which float32 2-D products run on tile_gemm's register tiles: those where the tiles beat
# OpenBLAS (2 threads each, back to back; m x k x n, tiles / OpenBLAS time, ranges of 2-3 runs).
# A right operand whose columns are contiguous (``W.T``, every linear layer's forward) is packed
# by 16 x 16 transposes, and the tiles won at every size measured: MLP b128's 128x784x256
# 0.62-0.80, b1024's 1024x784x256 0.86-0.94, the LSTM LM decoder's 700x200x10000 0.92-0.98, the
# Transformer's 2048x1024x256 0.89-0.99 and 2048x256x1024 0.90-0.97, the MNIST CNN's
# 64x9216x128 0.60-0.65. A right operand with contiguous rows is packed by copies. With A's rows
# contiguous too (an input gradient), the tiles won where k or n is small: the decoder's
# 700x10000x200 0.92-0.95, the LSTM's 700x800x200 0.90-0.95, the Transformer's 2048x1024x256
# 0.91 and 2048x256x1024 0.93, 64x128x9216 0.82-0.94, 1024x256x784 0.96-1.04; but lost on
# 512x512x4096 (1.02) and 1024x1024x1024 (1.05). With A transposed (a weight gradient, A read
# down its columns) they won with few rows and a short k or a narrow B: 256x128x784 0.79-0.82,
# 128x64x9216 0.81-0.83, 256x256x1024 0.91-0.94, 256x1024x256 0.80-0.89, the Transformer's
# 256x2048x256 0.87-0.93; and tied or lost on 256x1024x784 (1.01-1.04), 512x512x512
# (1.04-1.06) and with many rows (10000x256x200 1.21-1.32, 10000x700x200 1.27-1.31). Products
# with a short k lose everywhere (128x10x256: 7 -> 12 us), as do the tiniest (64x84x10: 2.3 ->
# 3.7).
#
# All of the above was measured where OpenBLAS runs AVX-512 kernels of its own (an Intel Xeon,
# its SkylakeX kernels). On a CPU for which it picks AVX2 kernels (its Haswell ones, which
# OpenBLAS 0.3.31 also runs on AMD's AVX-512 Zen 5), the tiles won every product of the
# benchmark models, those OpenBLAS kept above included (AMD EPYC, 2 threads, OpenBLAS / tiles):
# MLP b1024's 256x1024x784 2.60 / 1.60 ms, the LSTM LM decoder's 10000x700x200 16.1 / 9.3 ms,
# the Transformer's 256x2048x1024 5.8 / 4.1 and 1024x2048x256 6.0 / 3.7 ms; there every product
# the tiles can take goes to them (past the smallest, below).
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
    from both, or None); float32 products run on ``kernels/tile_gemm.py``'s register tiles
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
    """Whether ``a @ b`` (2-D) goes to the register tiles, by the measurements above."""
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


def _cpu_matmul(ad: np.ndarray, bd: np.ndarray) -> np.ndarray:
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


def _product(op: str, node_cls, a: Tensor, b: Tensor) -> Tensor:
    _check_same_dtype(op, a, b)
    _matmul_shape(op, a, b)
    ad, bd = a._data, b._data
    if common_device(op, (a, b)) is not None:
        out = _wrap(_device_matmul(ad, bd), a.dtype)
    else:
        if a.dtype.np == np.float16:
            ad, bd = ad.astype(np.float32), bd.astype(np.float32)
        out = _wrap(_c_array(_cpu_matmul(ad, bd), a.dtype), a.dtype)
    if grad_mode.GRAD_ENABLED[0] and (a._requires_grad or b._requires_grad):
        node = node_cls()
        node.save(a, b)
        record(node, (a, b), (out,))
    return out


def matmul(input, other) -> Tensor:
    """Matrix product with NumPy/PyTorch rules: 1-D operands are vectors, leading dims broadcast."""
    if type(input) in TENSOR_TYPES and type(other) in TENSOR_TYPES:  # hot path: 2-D @ 2-D
        ad, bd, dt = input._data, other._data, input.dtype
        if (other.dtype is dt and (dt is float32 or dt is float64) and ad.ndim == 2
                and bd.ndim == 2 and ad.shape[1] == bd.shape[0] and type(ad) is _ND
                and type(bd) is _ND):
            # ndarray.dot runs the same BLAS GEMM as np.matmul for 2-D operands, without the
            # gufunc set-up (0.5 us of a 32x32 product's 1.3)
            out = _wrap(ad.dot(bd), dt)
            if (input._requires_grad or other._requires_grad) and grad_mode.GRAD_ENABLED[0]:
                # Node.save and record, inlined: two calls are a fifth of this op's overhead
                node = _MatmulNode()
                node._saved = (input, other)
                node._saved_versions = (input._vc[0], other._vc[0])
                node.next_functions = (edge_of(input), edge_of(other))
                out.grad_fn, out._requires_grad = node, True
            return out
    a, b = as_tensor_arg(input, "matmul"), as_tensor_arg(other, "matmul", "other")
    cls = _MatmulNode if a.ndim == 2 and b.ndim == 2 else (
        _DotNode if a.ndim == 1 and b.ndim == 1 else (
            _MvNode if b.ndim == 1 and a.ndim == 2 else _UnsafeViewNode))
    return _product("matmul", cls, a, b)


def mm(input, mat2) -> Tensor:
    """2-D matrix product."""
    a, b = as_tensor_arg(input, "mm"), as_tensor_arg(mat2, "mm", "mat2")
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"mm: both arguments must be 2-D (got {describe(a)} and {describe(b)})")
    return _product("mm", _MatmulNode, a, b)


def bmm(input, mat2) -> Tensor:
    """Batched product of 3-D tensors with equal batch sizes."""
    a, b = as_tensor_arg(input, "bmm"), as_tensor_arg(mat2, "bmm", "mat2")
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError(f"bmm: both arguments must be 3-D (got {describe(a)} and {describe(b)})")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {tuple(a.shape)} and {tuple(b.shape)} "
                           f"({a.shape[0]} != {b.shape[0]})")
    return _product("bmm", _BmmNode, a, b)


def mv(input, vec) -> Tensor:
    """Matrix times vector."""
    a, b = as_tensor_arg(input, "mv"), as_tensor_arg(vec, "mv", "vec")
    if a.ndim != 2 or b.ndim != 1:
        raise RuntimeError(f"mv: expected a 2-D matrix and a 1-D vector (got {describe(a)} and "
                           f"{describe(b)})")
    return _product("mv", _MvNode, a, b)


def dot(input, other) -> Tensor:
    """Inner product of two 1-D tensors of the same size."""
    a, b = as_tensor_arg(input, "dot"), as_tensor_arg(other, "dot", "other")
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"dot: 1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"dot: inconsistent tensor size, expected tensor [{a.shape[0]}] and "
                           f"src [{b.shape[0]}] to have the same number of elements, but got "
                           f"{a.shape[0]} and {b.shape[0]} elements respectively")
    return _product("dot", _DotNode, a, b)


def outer(input, vec2) -> Tensor:
    """``input[i] * vec2[j]``."""
    a, b = as_tensor_arg(input, "outer"), as_tensor_arg(vec2, "outer", "vec2")
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"outer: 1D tensors expected (got {describe(a)} and {describe(b)})")
    return a.unsqueeze(1) * b.unsqueeze(0)


# --- einsum -------------------------------------------------------------------------------

def _parse_einsum(equation: str, operands) -> tuple:
    """Explicit form ``'ab,bc->ac'`` with '...' replaced by letters; returns (inputs, output)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise RuntimeError(f"einsum(): {len(inputs)} operands in the equation but "
                           f"{len(operands)} tensors given")
    used = set(c for c in eq if c.isalpha())
    spare = [c for c in string.ascii_letters if c not in used]
    ell_nd = 0
    for sub, t in zip(inputs, operands):
        if "..." in sub:
            ell_nd = max(ell_nd, t.ndim - (len(sub) - 3))
    ell = "".join(spare[:ell_nd])
    fixed = []
    for sub, t in zip(inputs, operands):
        if "..." in sub:
            n = t.ndim - (len(sub) - 3)
            sub = sub.replace("...", ell[ell_nd - n:])
        if len(sub) != t.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(sub)}) "
                               f"does not match the number of dimensions ({t.ndim}) for operand")
        fixed.append(sub)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = {}
        for sub in fixed:
            for c in sub:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return fixed, out


def _einsum_back(node, g):
    subs, out_sub = node.subs, node.out_sub
    ops = node.saved_tensors
    grads = []
    for i, (sub, edge) in enumerate(zip(subs, node.next_functions)):
        if edge is None:
            grads.append(None)
            continue
        others = [(s, t) for j, (s, t) in enumerate(zip(subs, ops)) if j != i]
        available = set(out_sub).union(*[set(s) for s, _ in others])
        letters = "".join(dict.fromkeys(sub))  # each subscript once, in order
        sizes = {c: ops[i].shape[k] for k, c in enumerate(sub)}
        target = "".join(c for c in letters if c in available)
        eq = ",".join([out_sub] + [s for s, _ in others]) + "->" + target
        gi = einsum(eq, g, *[t for _, t in others])
        if target != letters:  # indices summed only inside this operand: broadcast back
            for k, c in enumerate(letters):
                if c not in available:
                    gi = gi.unsqueeze(k)
            gi = gi.expand([sizes[c] for c in letters])
        if letters != sub:
            gi = _embed_repeated(gi, letters, sub, sizes)
        grads.append(sum_to(gi, tuple(ops[i].shape)))
    return tuple(grads)


def _embed_repeated(g: Tensor, letters: str, sub: str, sizes: dict) -> Tensor:
    """The gradient of an operand with repeated subscripts (``'ii'``): ``g`` (over ``letters``,
    each once) placed on the diagonals, through one delta tensor per repeated letter."""
    spare = iter(c for c in string.ascii_letters if c not in sub)
    renamed, deltas, eqs = [], [], [letters]
    seen = set()
    for c in sub:
        renamed.append(c if c not in seen else next(spare))
        seen.add(c)
    for c in letters:
        pos = [k for k, s in enumerate(sub) if s == c]
        if len(pos) > 1:
            n = sizes[c]
            delta = np.zeros((n,) * len(pos), g.dtype.np)
            delta[(np.arange(n),) * len(pos)] = 1
            deltas.append(_wrap(delta, g.dtype).to(g.device))
            eqs.append("".join(renamed[k] for k in pos))
    return einsum(",".join(eqs) + "->" + "".join(renamed), g, *deltas)


_EinsumNode = node_class("EinsumBackward0", _einsum_back)


def _device_einsum(equation: str, subs: list, out_sub: str, ts: list):
    """Einsum on CUDA buffers from ops that have kernels: diagonals for repeated letters, every
    operand viewed over all letters (size 1 where absent), one broadcast product, then a sum over
    the contracted letters."""
    sizes: dict = {}
    views = []
    with grad_mode.no_grad():
        for sub, t in zip(subs, ts):
            t = t.detach()
            while len(set(sub)) < len(sub):  # 'ii' -> the diagonal, moved to the last dim
                c = next(c for c in sub if sub.count(c) > 1)
                p = sub.index(c)
                q = sub.index(c, p + 1)
                t = t.diagonal(0, p, q)
                sub = sub[:p] + sub[p + 1:q] + sub[q + 1:] + c
            for c, n in zip(sub, t.shape):
                if sizes.setdefault(c, n) != n:
                    raise RuntimeError(f"einsum(): subscript {c!r} has size {n} for one operand "
                                       f"and {sizes[c]} for another (equation {equation!r}, "
                                       "operands " + ", ".join(describe(x) for x in ts) + ")")
            views.append((sub, t))
        letters = out_sub + "".join(sorted({c for c in sizes if c not in out_sub}))
        product = None
        for sub, t in views:
            order = [c for c in letters if c in sub]
            t = t.permute([sub.index(c) for c in order]) if order else t
            t = t.reshape([sizes[c] if c in sub else 1 for c in letters])
            product = t if product is None else product * t
        if len(letters) > len(out_sub):
            product = product.sum(tuple(range(len(out_sub), len(letters))))
        return product.contiguous()._data


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation, e.g. ``einsum('bij,bjk->bik', a, b)``."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ts = [as_tensor_arg(t, "einsum") for t in operands]
    subs, out_sub = _parse_einsum(equation, ts)
    dt = ts[0].dtype
    for t in ts[1:]:
        _check_same_dtype("einsum", ts[0], t)
    if common_device("einsum", ts) is not None:
        out = _wrap(_device_einsum(equation, subs, out_sub, ts), dt)
    else:
        arrays = [t._data.astype(np.float32) if t.dtype.np == np.float16 else t._data
                  for t in ts]
        try:
            res = np.einsum(",".join(subs) + "->" + out_sub, *arrays, optimize=len(ts) > 2)
        except ValueError as exc:
            raise RuntimeError(f"einsum(): {exc} (equation {equation!r}, operands "
                               + ", ".join(describe(t) for t in ts) + ")") from None
        out = _wrap(_c_array(res, dt), dt)
    if grad_mode.GRAD_ENABLED[0] and any(t._requires_grad for t in ts):
        node = _EinsumNode()
        node.subs, node.out_sub = subs, out_sub
        node.save(*ts)
        record(node, ts, (out,))
    return out


for _name, _fn in (("matmul", matmul), ("mm", mm), ("bmm", bmm), ("mv", mv), ("dot", dot),
                   ("outer", outer)):
    register(_name, _fn, "linalg")
register("einsum", einsum, "linalg", method=False)
register("ger", outer, "alias")
