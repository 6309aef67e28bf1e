"""Linear algebra: ``matmul``/``@`` (1-D, 2-D, batched with broadcasting), mm, bmm, mv, dot,
outer, einsum. Products go to NumPy's BLAS (the fastest GEMM on this CPU); the gradients are
products again.

Example:
    >>> import dynagrad as dg
    >>> (dg.ones(2, 3) @ dg.ones(3)).tolist()
    [3.0, 3.0]
"""
from __future__ import annotations

import string

import numpy as np

from ..autograd import grad_mode
from ..autograd.function import edge_of, node_class, record
from ..dtypes import float32, float64
from ..errors import describe
from ..kernels.backend import backend
from ..kernels.buffers import host, move_array
from ..tensor import TENSOR_TYPES, Tensor, _wrap
from ._util import as_tensor_arg
from ..shapes import broadcast_shapes
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
    if g.dtype.is_complex:  # holomorphic: conj of the formula at conj(g) (g @ b^H, a^H @ g)
        from .complex import conj
        return tuple(None if gi is None else conj(gi) for gi in _real_matmul_back(node, conj(g)))
    return _real_matmul_back(node, g)


def _real_matmul_back(node, g):
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


def _c_array(res, dt) -> np.ndarray:
    """``res`` as a C-contiguous array of ``dt`` (a 0-d result stays 0-d, unlike
    ``np.ascontiguousarray``)."""
    return np.asarray(res, dtype=dt.np, order="C")


def _product(op: str, node_cls, a: Tensor, b: Tensor) -> Tensor:
    _check_same_dtype(op, a, b)
    _matmul_shape(op, a, b)
    ad, bd = a._data, b._data
    on_gpu = common_device(op, (a, b))
    if on_gpu is not None and a.dtype.is_complex:  # no complex CUDA GEMM: a host round trip
        out = _wrap(move_array(_c_array(np.matmul(host(ad), host(bd)), a.dtype), on_gpu),
                    a.dtype)
    else:
        out = _wrap(backend(ad).matmul(ad, bd), a.dtype)
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
            # gufunc set-up (a large share of a small product's time)
            out = _wrap(ad.dot(bd), dt)
            if (input._requires_grad or other._requires_grad) and grad_mode.GRAD_ENABLED[0]:
                # Node.save and record, inlined: two calls are a sizeable part of this op's cost
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
    if g.dtype.is_complex:  # multilinear: conj of the formula at conj(g) (see _matmul_back)
        from .complex import conj
        return tuple(None if gi is None else conj(gi) for gi in _real_einsum_back(node, conj(g)))
    return _real_einsum_back(node, g)


def _real_einsum_back(node, g):
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
