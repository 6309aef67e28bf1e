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
from ..dtypes import float32, float64, get_default_dtype, int64
from ..errors import describe
from ..kernels.backend import backend
from ..kernels.buffers import host, move_array
from ..shapes import broadcast_shapes
from ..tensor import TENSOR_TYPES, Tensor, _wrap
from ._util import as_tensor_arg
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


# --- fused products: beta * input + alpha * product -------------------------------------------

def _scaled_sum(op: str, input, product: Tensor, beta, alpha) -> Tensor:
    """``beta * input + alpha * product`` with input broadcast to the product's shape; with
    ``beta == 0`` input is ignored (its NaNs and infs do not propagate), as in PyTorch."""
    x = as_tensor_arg(input, op)
    if not product.dtype.is_floating_point and (isinstance(beta, float) or
                                                isinstance(alpha, float)):
        raise RuntimeError(f"{op}: For integral input tensors, argument alpha and beta must not "
                           "be a floating point number.")
    shape = broadcast_shapes(op, tuple(x.shape), tuple(product.shape))
    if shape != tuple(product.shape):
        raise RuntimeError(f"{op}: the input {describe(x)} cannot be broadcast to the product's "
                           f"shape {tuple(product.shape)}")
    out = product if alpha == 1 else product * alpha
    if beta == 0:
        if x.requires_grad and grad_mode.GRAD_ENABLED[0]:  # input's gradient: zeros, as torch
            out = out + (x * 0).nan_to_num(0.0, 0.0, 0.0)
        return out
    return out + (x if beta == 1 else x * beta)


def addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` for 2-D mat1, mat2.

    Example:
        >>> dg.addmm(dg.ones(2, 2), dg.eye(2), dg.eye(2), beta=0.5).tolist()
        [[1.5, 0.5], [0.5, 1.5]]
    """
    return _scaled_sum("addmm", input, mm(mat1, mat2), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * sum_b (batch1[b] @ batch2[b])``."""
    return _scaled_sum("addbmm", input, bmm(batch1, batch2).sum(0), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    return _scaled_sum("baddbmm", input, bmm(batch1, batch2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    return _scaled_sum("addr", input, outer(vec1, vec2), beta, alpha)


def _inplace(fn):
    """The in-place form ``input.fn_(...)``: the result written into input."""
    def method_(self, *args, **kwargs):
        res = fn(self, *args, **kwargs)
        if tuple(res.shape) != tuple(self.shape):
            raise RuntimeError(f"{fn.__name__}_: the result's shape {tuple(res.shape)} does not "
                               f"match the input's {tuple(self.shape)}")
        if res.requires_grad:
            if self.grad_fn is None and self._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                   "in-place operation.")
            from .elementwise import rebase_inplace
            return rebase_inplace(self, lambda old: fn(old, *args, **kwargs))
        return self.copy_(res)
    method_.__name__ = fn.__name__ + "_"
    return method_


# --- other products ----------------------------------------------------------------------------

def inner(input, other) -> Tensor:
    """Sum over the last dims of both (a scalar operand multiplies)."""
    a, b = as_tensor_arg(input, "inner"), as_tensor_arg(other, "inner", "other")
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(a.shape)} and {list(b.shape)}")
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


def vdot(input, other) -> Tensor:
    """Dot product of two 1-D tensors (conjugating the first, a no-op for real tensors)."""
    a, b = as_tensor_arg(input, "vdot"), as_tensor_arg(other, "vdot", "other")
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    return dot(a, b)


def tensordot(a, b, dims=2, out=None) -> Tensor:
    """Contract ``dims`` (a count of a's last and b's first dims, or two lists of dims).

    Example:
        >>> dg.tensordot(dg.ones(2, 3), dg.ones(3, 4), dims=1).shape
        dynagrad.Size([2, 4])
    """
    x, y = as_tensor_arg(a, "tensordot", "a"), as_tensor_arg(b, "tensordot", "b")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(x.ndim - dims, x.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for i, j in zip(da, db):
        if x.shape[i] != y.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{x.shape[i]} in dim {i} and second has size {y.shape[j]} in "
                               f"dim {j}")
    da, db = [d % x.ndim for d in da], [d % y.ndim for d in db]
    free_a = [d for d in range(x.ndim) if d not in da]
    free_b = [d for d in range(y.ndim) if d not in db]
    k = 1
    for d in da:
        k *= x.shape[d]
    xa = x.permute(free_a + da).reshape(-1, k)
    yb = y.permute(db + free_b).reshape(k, -1)
    return (xa @ yb).reshape([x.shape[d] for d in free_a] + [y.shape[d] for d in free_b])


def kron(input, other) -> Tensor:
    """Kronecker product: block ``(i, j)`` is ``input[i, j] * other`` (any number of dims)."""
    a, b = as_tensor_arg(input, "kron"), as_tensor_arg(other, "kron", "other")
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    # a's dims interleaved with unit dims, b's with unit dims before them: one broadcast product
    x = a.reshape([v for d in sa for v in (d, 1)])
    y = b.reshape([v for d in sb for v in (1, d)])
    return (x * y).reshape([p * q for p, q in zip(sa, sb)])


def cross(input, other, dim=None) -> Tensor:
    """Cross product of 3-vectors along ``dim`` (broadcasting); without ``dim``, the first dim
    of size 3 (PyTorch's older default; ``linalg.cross`` uses the last dim).

    Example:
        >>> dg.cross(dg.tensor([1.0, 0.0, 0.0]), dg.tensor([0.0, 1.0, 0.0])).tolist()
        [0.0, 0.0, 1.0]
    """
    a, b = as_tensor_arg(input, "cross"), as_tensor_arg(other, "cross", "other")
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = broadcast_shapes("cross", tuple(a.shape), tuple(b.shape))
    if dim is None:
        dim = next((d for d, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    d = dim % len(shape) if shape else 0
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[d]} and {b.shape[d]}")
    a, b = a.expand(shape), b.expand(shape)
    from .movement import stack
    comp = [(1, 2), (2, 0), (0, 1)]
    return stack([a.select(d, i) * b.select(d, j) - a.select(d, j) * b.select(d, i)
                  for i, j in comp], d)


def _pairwise_norm(diff: Tensor, p: float) -> Tensor:
    """The p-norm over the last dim of differences (p >= 0, inf included)."""
    from .reduce import norm
    return norm(diff, p=p, dim=-1)


def cdist(x1, x2, p: float = 2.0, compute_mode=None) -> Tensor:
    """p-norm distances between the rows of x1 (..., P, M) and of x2 (..., R, M): (..., P, R).

    Example:
        >>> dg.cdist(dg.tensor([[0.0, 0.0]]), dg.tensor([[3.0, 4.0], [0.0, 1.0]])).tolist()
        [[5.0, 1.0]]
    """
    a, b = as_tensor_arg(x1, "cdist", "x1"), as_tensor_arg(x2, "cdist", "x2")
    if a.ndim < 2 or b.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D")
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {a.dtype.name}")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} "
                           f"X2: {b.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return _pairwise_norm(a.unsqueeze(-2) - b.unsqueeze(-3), p)


def dist(input, other, p=2) -> Tensor:
    """The p-norm of ``input - other`` (broadcast), as a 0-d tensor."""
    from .reduce import norm
    a, b = as_tensor_arg(input, "dist"), as_tensor_arg(other, "dist", "other")
    return norm(a - b, p=p)


def pdist(input, p: float = 2) -> Tensor:
    """Distances between each pair of rows ``i < j`` of a 2-D input, in row-major pair order."""
    x = as_tensor_arg(input, "pdist")
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = np.triu_indices(x.shape[0], 1)
    from .indexing import index_select
    rows = _wrap(np.asarray(i, np.int64), int64).to(x.device)
    cols = _wrap(np.asarray(j, np.int64), int64).to(x.device)
    return _pairwise_norm(index_select(x, 0, rows) - index_select(x, 0, cols), p)


def cov(input, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """Covariance of the rows (variables) of a 2-D input over its columns (observations), with
    integer frequency weights and real observation weights; a 1-D input is one variable.

    Example:
        >>> dg.cov(dg.tensor([[0.0, 1.0, 2.0]])).item()
        1.0
    """
    x = as_tensor_arg(input, "cov")
    if x.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {x.ndim} dimensions")
    if not x.dtype.is_floating_point:
        x = x.to(get_default_dtype())
    vector = x.ndim < 2
    if vector:
        x = x.reshape(1, -1)
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        fw = as_tensor_arg(fweights, "cov", "fweights")
        if fw.ndim > 1 or fw.numel() != n_obs:
            raise RuntimeError(f"cov(): expected fweights to have one dimension and the same "
                               f"number of elements as the observations ({n_obs}), got "
                               f"{describe(fw)}")
        if fw.dtype.is_floating_point:
            raise RuntimeError("cov(): expected fweights to have integral dtype but got "
                               f"fweights with {fw.dtype.name} dtype")
        if bool((fw < 0).any()):
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fw.to(x.dtype)
    aw = None
    if aweights is not None:
        aw = as_tensor_arg(aweights, "cov", "aweights")
        if aw.ndim > 1 or aw.numel() != n_obs:
            raise RuntimeError(f"cov(): expected aweights to have one dimension and the same "
                               f"number of elements as the observations ({n_obs}), got "
                               f"{describe(aw)}")
        if not aw.dtype.is_floating_point:
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {aw.dtype.name} dtype")
        if bool((aw < 0).any()):
            raise RuntimeError("cov(): aweights cannot be negative")
        aw = aw.to(x.dtype)
        w = aw if w is None else w * aw
    if w is None:
        total = float(n_obs)
        avg = x.mean(1, keepdim=True)
        norm_factor = total - correction
        xc = x - avg
        c = xc @ xc.mT
    else:
        total = w.sum()
        avg = (x * w).sum(1, keepdim=True) / total
        if aw is None:
            norm_factor = total - correction
        else:
            norm_factor = total - correction * (w * aw).sum() / total
        xc = x - avg
        c = xc @ (xc * w).mT
    if not isinstance(norm_factor, Tensor):
        norm_factor = max(norm_factor, 0.0)
    else:
        norm_factor = norm_factor.clamp(min=0)
    c = c / norm_factor
    return c.reshape(()) if vector else c


def corrcoef(input) -> Tensor:
    """Pearson correlation coefficients of the rows, clipped to [-1, 1]."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal(0, 0, 1)
    std = d.sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    return c.clamp(-1, 1)


for _name, _fn in (("matmul", matmul), ("mm", mm), ("bmm", bmm), ("mv", mv), ("dot", dot),
                   ("outer", outer)):
    register(_name, _fn, "linalg")
register("einsum", einsum, "linalg", method=False)
register("ger", outer, "alias")
for _name, _fn in (("addmm", addmm), ("addbmm", addbmm), ("baddbmm", baddbmm), ("addmv", addmv),
                   ("addr", addr)):
    register(_name, _fn, "linalg", inplace=_inplace(_fn))
for _name, _fn in (("inner", inner), ("vdot", vdot), ("kron", kron), ("cross", cross),
                   ("dist", dist), ("cov", cov), ("corrcoef", corrcoef)):
    register(_name, _fn, "linalg")
for _name, _fn in (("tensordot", tensordot), ("cdist", cdist), ("pdist", pdist)):
    register(_name, _fn, "linalg", method=False)
