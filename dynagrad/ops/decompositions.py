"""Matrix decompositions, solvers and matrix functions: the algebra behind ``dg.linalg`` and the
torch-level names (``det``, ``inverse``, ``cholesky_solve``, ``lu_unpack``...).

Forward passes run LAPACK through NumPy/SciPy on the host buffer, in float64 for every float
dtype (then rounded to the input's dtype): a CUDA tensor makes a host round trip (copied to the
host, factored there, the results copied back), documented here because it is the one place it
happens. Inputs carry leading batch dims. Gradients are graph nodes whose formulas are ops
(products, triangular solves, ``tril``), so they run on every device and can be differentiated
again; functions such as ``lu_solve`` or ``cholesky_solve`` are compositions of the differentiable
ones and need no node of their own.

Example:
    >>> import dynagrad as dg
    >>> a = dg.tensor([[4.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> dg.linalg.det(a).backward(); a.grad.tolist()
    [[3.0, -1.0], [-1.0, 4.0]]
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..autograd import grad_mode
from ..autograd.function import node_class, record
from ..dtypes import int32, int64
from ..errors import describe
from ..tensor import Tensor, _wrap
from ._util import as_tensor_arg
from .elementwise import sum_to
from .registry import FUNCTIONS, register, tensor_method


def _scipy_linalg():
    """``scipy.linalg`` (with its ``lapack`` and ``blas``), imported on first use: importing it
    costs start-up time a program without a decomposition should not pay (and Numba's BLAS probe
    must not find it loaded: tests/test_blas_probe.py)."""
    import scipy.linalg
    return scipy.linalg


class LinAlgError(RuntimeError):
    """A matrix the operation cannot handle (singular, not positive-definite): PyTorch's
    ``torch.linalg.LinAlgError``, a ``RuntimeError``."""


# torch's names of the scalar types its messages print
_TORCH_TYPE = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
               "bool": "Bool", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
               "float64": "Double"}


# --- named results (the fields PyTorch's return types have) ----------------------------------

def _result_type(name: str, fields: str):
    cls = namedtuple(name, fields)
    cls.__module__ = "dynagrad.linalg"
    return cls


SlogdetResult = _result_type("slogdet", "sign logabsdet")
EighResult = _result_type("eigh", "eigenvalues eigenvectors")
EigResult = _result_type("eig", "eigenvalues eigenvectors")
QRResult = _result_type("qr", "Q R")
SVDResult = _result_type("svd", "U S Vh")
TorchSVDResult = _result_type("svd", "U S V")
CholeskyExResult = _result_type("cholesky_ex", "L info")
InvExResult = _result_type("inv_ex", "inverse info")
SolveExResult = _result_type("solve_ex", "result info")
LUFactorResult = _result_type("lu_factor", "LU pivots")
LUFactorExResult = _result_type("lu_factor_ex", "LU pivots info")
LUResult = _result_type("lu", "P L U")
LUUnpackResult = _result_type("lu_unpack", "P L U")
LDLFactorResult = _result_type("ldl_factor", "LD pivots")
LDLFactorExResult = _result_type("ldl_factor_ex", "LD pivots info")
LstsqResult = _result_type("lstsq", "solution residuals rank singular_values")
TriangularSolveResult = _result_type("triangular_solve", "solution cloned_coefficient")


# --- checks and host buffers --------------------------------------------------------------------

def check_float(op: str, a: Tensor) -> None:
    """LAPACK works on float (and complex) matrices; half precision is refused as by PyTorch."""
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{_TORCH_TYPE.get(a.dtype.name, a.dtype.name)}")
    if a.dtype.itemsize < 4:
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got "
                           f"{_TORCH_TYPE.get(a.dtype.name, a.dtype.name)}")


def check_matrix(op: str, a, square: bool = True, name: str = "A") -> Tensor:
    """``a`` as a float tensor of (batches of) matrices, square where ``square``."""
    a = as_tensor_arg(a, op, name)
    if a.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    check_float(op, a)
    return a


def host(t: Tensor) -> np.ndarray:
    """``t``'s values as a float64 host array (the CUDA host round trip starts here)."""
    return np.array(t.detach().cpu().numpy(), dtype=np.float64)


def result(arr, like: Tensor, dtype=None) -> Tensor:
    """A host result as a tensor of ``dtype`` (default ``like``'s) on ``like``'s device."""
    dt = dtype or like.dtype
    out = _wrap(np.asarray(arr, dtype=dt.np, order="C"), dt)
    if like.is_cuda:
        with grad_mode.no_grad():
            out = out.to(like.device)
    return out


def _tracks(*tensors) -> bool:
    return grad_mode.GRAD_ENABLED[0] and any(t is not None and t._requires_grad
                                             for t in tensors)


def _attach(node_cls, inputs, outputs, saved=(), **attrs) -> None:
    """Record ``node_cls`` as the grad_fn of ``outputs`` when an input requires grad."""
    if not _tracks(*inputs):
        return
    node = node_cls()
    node.save(*saved)
    for k, v in attrs.items():
        setattr(node, k, v)
    record(node, inputs, outputs)


def _node(name: str, backward, multi_output: bool = False) -> type:
    """A node class; a multi-output node receives None (not zeros) for an unused output, which
    the formulas of svd, eigh and qr need (an unused U must not divide by repeated values)."""
    cls = node_class(name, backward)
    if multi_output:
        cls.materialize_grads = False
    return cls


def _batch_error(op: str, info: np.ndarray, message, prefix: str = "") -> None:
    """Raise LinAlgError for the first failed matrix (``info > 0``), naming its batch element
    when the input is batched, as PyTorch does."""
    bad = np.flatnonzero(info.reshape(-1) > 0)
    if bad.size:
        k = int(bad[0])
        where = f"(Batch element {k}): " if info.ndim else ""
        raise LinAlgError(f"{prefix}{op}: {where}{message(int(info.reshape(-1)[k]))}")


def _flat(a: np.ndarray) -> np.ndarray:
    return a.reshape((-1,) + a.shape[-2:])


def _eye_like(n: int, like: Tensor) -> Tensor:
    return result(np.eye(n), like)


def _mT(t: Tensor) -> Tensor:
    return t.transpose(-2, -1)


def _diag_embed(v: Tensor) -> Tensor:
    """Vectors on the diagonal of matrices (``v[..., i] * I``), differentiable."""
    n = v.shape[-1]
    return v.unsqueeze(-1) * _eye_like(n, v)


def _sum_to(g: Tensor, shape) -> Tensor:
    shape = tuple(shape)
    return g if tuple(g.shape) == shape else sum_to(g, shape)


# --- LU: the factorization behind inv, solve, det ------------------------------------------------

def _getrf(a: np.ndarray):
    """LU with partial pivoting of each matrix: (LU, 1-based int32 pivots, info)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    flat = _flat(a)
    lu = flat.copy()
    piv = np.tile(np.arange(1, k + 1, dtype=np.int32), (flat.shape[0], 1))
    info = np.zeros(flat.shape[0], np.int32)
    if k:
        for i, x in enumerate(flat):
            lu[i], p, info[i] = _scipy_linalg().lapack.dgetrf(x)[:3]
            piv[i] = p + 1
    return lu.reshape(a.shape), piv.reshape(a.shape[:-2] + (k,)), info.reshape(a.shape[:-2])


def _singular_inv_message(k: int) -> str:
    return (f"The diagonal element {k} is zero, the inversion could not be completed because the "
            "input matrix is singular.")


def _inv_host(a: np.ndarray):
    """(inverse, info); a singular matrix's inverse holds what the LU solve gives (infs)."""
    lu, piv, info = _getrf(a)
    if not info.any():
        return np.linalg.inv(a), info
    n = a.shape[-1]
    out = np.empty_like(_flat(a))
    with np.errstate(all="ignore"):
        for i, (x, p) in enumerate(zip(_flat(lu), piv.reshape(-1, n))):
            out[i] = _scipy_linalg().lapack.dgetrs(x, p - 1, np.eye(n))[0]
    return out.reshape(a.shape), info


def _inv_back(node, g):
    (out,) = node.saved_tensors
    ot = _mT(out)
    return (-(ot @ g @ ot),)


_InvNode = _node("LinalgInvExBackward0", _inv_back)


def inv_ex(A, *, check_errors: bool = False):
    """Inverse and LAPACK's info (0, or k when the k-th pivot is zero) without raising."""
    a = check_matrix("linalg.inv_ex", A)
    inv_arr, info = _inv_host(host(a))
    if check_errors:
        _batch_error("linalg.inv_ex", info, _singular_inv_message)
    out = result(inv_arr, a)
    _attach(_InvNode, (a,), (out,), (out,))
    return InvExResult(out, result(info, a, int32))


def inv(A) -> Tensor:
    """Inverse of (batches of) square matrices; LinAlgError when one is singular.

    Example:
        >>> dg.linalg.inv(dg.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
        [[0.5, 0.0], [0.0, 0.25]]
    """
    a = check_matrix("linalg.inv", A)
    inv_arr, info = _inv_host(host(a))
    _batch_error("linalg.inv", info, _singular_inv_message)
    out = result(inv_arr, a)
    _attach(_InvNode, (a,), (out,), (out,))
    return out


def _det_back(node, g):
    a, d = node.saved_tensors
    g = g.unsqueeze(-1).unsqueeze(-1)
    if np.all(host(d) != 0):
        return (g * d.unsqueeze(-1).unsqueeze(-1) * _mT(inv(a)),)
    return (g * _cofactors(a),)  # a singular matrix: no inverse, but finite cofactors


def _cofactors(a: Tensor) -> Tensor:
    """The cofactor matrix ``det(A) A^-T``, for singular A too: with ``A = U S V^T`` it is
    ``det(U) det(V) U diag(prod_{j != i} s_j) V^T``."""
    from .movement import cat
    u, s, vh = svd(a, full_matrices=False)
    ones = s[..., :1] * 0 + 1
    before = cat([ones, s[..., :-1]], -1).cumprod(-1)                  # prod_{j < i} s_j
    after = cat([s[..., 1:], ones], -1).flip(-1).cumprod(-1).flip(-1)  # prod_{j > i} s_j
    with grad_mode.no_grad():  # det(U) det(V) is a sign: it has no gradient
        sign = result(np.linalg.det(host(u)) * np.linalg.det(host(vh)), a)
    return sign.unsqueeze(-1).unsqueeze(-1) * ((u * (before * after).unsqueeze(-2)) @ vh)


_DetNode = _node("LinalgDetBackward0", _det_back)


def det(A) -> Tensor:
    """Determinant of (batches of) square matrices.

    Example:
        >>> dg.linalg.det(dg.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
        -2.0
    """
    a = check_matrix("linalg.det", A)
    out = result(np.linalg.det(host(a)), a)
    _attach(_DetNode, (a,), (out,), (a, out))
    return out


def _slogdet_back(node, g_sign, g_logabs):
    (a,) = node.saved_tensors
    if g_logabs is None:
        return (None,)
    # a singular A (log|det| = -inf) gets what the LU solve gives, infinities, as in PyTorch
    return (g_logabs.unsqueeze(-1).unsqueeze(-1) * _mT(inv_ex(a).inverse),)


_SlogdetNode = _node("LinalgSlogdetBackward0", _slogdet_back, multi_output=True)


def slogdet(A):
    """``(sign, log|det|)`` of (batches of) square matrices: the determinant without overflow."""
    a = check_matrix("linalg.slogdet", A)
    sign, logabs = np.linalg.slogdet(host(a))
    s, la = result(sign, a), result(logabs, a)
    _attach(_SlogdetNode, (a,), (s, la), (a,))
    return SlogdetResult(s, la)


def logdet(input) -> Tensor:
    """``log(det(A))``: NaN where the determinant is negative, -inf where it is zero."""
    a = check_matrix("logdet", input)
    sign, logabs = slogdet(a)
    return logabs + sign.log()


# --- solve -----------------------------------------------------------------------------------

def _solve_back(node, g):
    a, x = node.saved_tensors
    gb = _solve_matrices(_mT(a), g)[0]
    ga = None
    if node.next_functions[0] is not None:
        ga = _sum_to(-(gb @ _mT(x)), a.shape)
    return ga, _sum_to(gb, node.b_shape)


_SolveNode = _node("LinalgSolveExBackward0", _solve_back)


def _solve_host(op: str, a: Tensor, b: Tensor, check: bool):
    """X with ``A X = B`` for matrices B (batch dims broadcast), and the LU infos of A."""
    aa, bb = host(a), host(b)
    _, _, info = _getrf(aa)
    if check:
        _batch_error(op, info, lambda k: "The solver failed because the input matrix is "
                     "singular.", "torch.")
    batch = np.broadcast_shapes(aa.shape[:-2], bb.shape[:-2])
    aa = np.broadcast_to(aa, batch + aa.shape[-2:])
    bb = np.broadcast_to(bb, batch + bb.shape[-2:])
    if not info.any():
        return np.linalg.solve(aa, bb), info
    x = np.empty(batch + bb.shape[-2:])
    with np.errstate(all="ignore"):
        for i in np.ndindex(batch):  # singular systems: what the LU solve gives (infs, NaNs)
            lu, p, _ = _scipy_linalg().lapack.dgetrf(aa[i])
            x[i] = _scipy_linalg().lapack.dgetrs(lu, p, bb[i])[0]
    return x, info


def _solve_matrices(a: Tensor, b: Tensor, check: bool = True, op: str = "linalg.solve"):
    x_arr, info = _solve_host(op, a, b, check)
    x = result(x_arr, a)
    _attach(_SolveNode, (a, b), (x,), (a, x), b_shape=tuple(b.shape))
    return x, info


def _vector_case(a: Tensor, b: Tensor) -> bool:
    """PyTorch's rule: B is a (batch of) vector(s) when 1-D or shaped like A minus its last dim."""
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))


def _solve(op: str, A, B, left: bool, check: bool):
    a = check_matrix(op, A)
    b = as_tensor_arg(B, op, "B")
    check_float(op, b)
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{op}: Expected A and B to have the same dtype, but found A of type "
                           f"{_TORCH_TYPE[a.dtype.name]} and B of type "
                           f"{_TORCH_TYPE[b.dtype.name]} instead")
    vector = _vector_case(a, b)
    bm = b.unsqueeze(-1) if vector else b
    if not left:
        if vector:
            raise RuntimeError(f"{op}: Vector broadcasting of the left hand side is not "
                               "supported for left=False. In this case linalg.solve is "
                               "equivalent to B / A.squeeze(-1)")
        a, bm = _mT(a), _mT(bm)
    n = a.shape[-1]
    if bm.shape[-2] != n:
        raise RuntimeError(f"{op.removeprefix('torch.')}: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({a.shape[-2]}x{n} and "
                           f"{bm.shape[-2]}x{bm.shape[-1]})")
    x, info = _solve_matrices(a, bm, check, op)
    if not left:
        x = _mT(x)
    return (x.squeeze(-1) if vector else x), info


def solve(A, B, *, left: bool = True) -> Tensor:
    """X with ``A X = B`` (``X A = B`` when not ``left``); B may be a (batch of) vector(s).

    Example:
        >>> dg.linalg.solve(dg.tensor([[2.0, 0.0], [0.0, 4.0]]), dg.tensor([2.0, 2.0])).tolist()
        [1.0, 0.5]
    """
    return _solve("linalg.solve", A, B, left, True)[0]


def solve_ex(A, B, *, left: bool = True, check_errors: bool = False):
    """``solve`` returning LAPACK's info instead of raising on a singular A."""
    x, info = _solve("linalg.solve_ex", A, B, left, check_errors)
    return SolveExResult(x, result(info, x, int32))


# --- triangular solves -----------------------------------------------------------------------

def _tri(t: Tensor, upper: bool, strict: bool = False) -> Tensor:
    return t.triu(1 if strict else 0) if upper else t.tril(-1 if strict else 0)


def _tri_back(node, g):
    a, x = node.saved_tensors
    gb = _tri_solve(_mT(a), g, not node.upper, node.unit)
    ga = None
    if node.next_functions[0] is not None:
        ga = _sum_to(_tri(-(gb @ _mT(x)), node.upper, node.unit), a.shape)
    return ga, _sum_to(gb, node.b_shape)


_TriSolveNode = _node("LinalgSolveTriangularBackward0", _tri_back)


def _tri_solve(a: Tensor, b: Tensor, upper: bool, unit: bool) -> Tensor:
    """X with ``T X = B``, T the upper/lower triangle of A (unit diagonal when ``unit``)."""
    aa, bb = host(a), host(b)
    tri = np.triu(aa) if upper else np.tril(aa)
    if unit:
        idx = np.arange(aa.shape[-1])
        tri[..., idx, idx] = 1.0
    batch = np.broadcast_shapes(aa.shape[:-2], bb.shape[:-2])
    tri = np.broadcast_to(tri, batch + aa.shape[-2:])
    bb = np.broadcast_to(bb, batch + bb.shape[-2:])
    x = np.empty(batch + bb.shape[-2:])
    trsm = _scipy_linalg().blas.dtrsm
    with np.errstate(all="ignore"):  # BLAS's trsm: a zero on the diagonal gives infs, as torch
        for i in np.ndindex(batch):
            x[i] = (trsm(1.0, tri[i], bb[i], lower=not upper) if tri[i].size and bb[i].size
                    else bb[i])
    out = result(x, a)
    _attach(_TriSolveNode, (a, b), (out,), (a, out), upper=upper, unit=unit,
            b_shape=tuple(b.shape))
    return out


def solve_triangular(A, B, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """X with ``T X = B`` (``X T = B`` when not ``left``), T the upper or lower triangle of A.

    Example:
        >>> a = dg.tensor([[2.0, 1.0], [0.0, 4.0]])
        >>> dg.linalg.solve_triangular(a, dg.tensor([[3.0], [4.0]]), upper=True).tolist()
        [[1.0], [1.0]]
    """
    op = "linalg.solve_triangular"
    a = check_matrix(op, A)
    b = as_tensor_arg(B, op, "B")
    if b.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    check_float(op, b)
    if not left:
        a, b, upper = _mT(a), _mT(b), not upper
    if b.shape[-2] != a.shape[-1]:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    x = _tri_solve(a, b, upper, unitriangular)
    return x if left else _mT(x)


# --- Cholesky --------------------------------------------------------------------------------

def _cholesky_back(node, g):
    (low,) = node.saved_tensors
    # with A = L L^T: gA = L^-T Phi(L^T gL) L^-1, Phi(M) the symmetric matrix built from M's
    # lower triangle with its diagonal halved (the upper triangle of gL does not matter)
    if node.upper:
        g = _mT(g)
    m = (_mT(low) @ g).tril()
    phi = 0.5 * (m + _mT(m.tril(-1)))
    x = _tri_solve(_mT(low), phi, True, False)           # L^-T Phi
    return (_mT(_tri_solve(_mT(low), _mT(x), True, False)),)  # (L^-T Phi) L^-1


_CholeskyNode = _node("LinalgCholeskyExBackward0", _cholesky_back)


def _cholesky(op: str, A, upper: bool, check: bool):
    a = check_matrix("linalg.cholesky", A)
    flat = _flat(host(a))
    low = np.zeros_like(flat)
    info = np.zeros(flat.shape[0], np.int32)
    for i, x in enumerate(flat):
        if x.size:
            low[i], info[i] = _scipy_linalg().lapack.dpotrf(x, lower=1, clean=1)
    info = info.reshape(a.shape[:-2])
    if check:
        _batch_error(op, info, lambda k: "The factorization could not be completed because the "
                     f"input is not positive-definite (the leading minor of order {k} is not "
                     "positive-definite).")
    low = low.reshape(a.shape)
    out = result(np.swapaxes(low, -1, -2) if upper else low, a)
    lower_t = out if not upper else None
    if _tracks(a):
        with grad_mode.no_grad():
            lower_t = _mT(out) if upper else out
        _attach(_CholeskyNode, (a,), (out,), (lower_t,), upper=upper)
    return out, info


def cholesky(A, *, upper: bool = False) -> Tensor:
    """L with ``A = L L^T`` for symmetric positive-definite A (its lower triangle is read);
    ``upper`` gives ``L^T``. LinAlgError names the leading minor that is not positive-definite.

    Example:
        >>> dg.linalg.cholesky(dg.tensor([[4.0, 2.0], [2.0, 5.0]])).tolist()
        [[2.0, 0.0], [1.0, 2.0]]
    """
    return _cholesky("linalg.cholesky", A, upper, True)[0]


def cholesky_ex(A, *, upper: bool = False, check_errors: bool = False):
    """``cholesky`` returning LAPACK's info (k: minor k is not positive-definite)."""
    out, info = _cholesky("linalg.cholesky_ex", A, upper, check_errors)
    return CholeskyExResult(out, result(info, out, int32))


def torch_cholesky(input, upper: bool = False) -> Tensor:
    """``torch.cholesky(input, upper=False)``: the older spelling of ``linalg.cholesky``."""
    return cholesky(input, upper=upper)


def cholesky_solve(input, input2, upper: bool = False) -> Tensor:
    """X with ``A X = B`` where ``A = L L^T`` and ``input2`` holds L (``U^T U`` when ``upper``)."""
    b, low = as_tensor_arg(input, "cholesky_solve"), check_matrix("cholesky_solve", input2)
    if upper:
        return _tri_solve(low, _tri_solve(_mT(low), b, False, False), True, False)
    return _tri_solve(_mT(low), _tri_solve(low, b, False, False), True, False)


def cholesky_inverse(input, upper: bool = False) -> Tensor:
    """``A^-1`` from A's Cholesky factor (``A = L L^T``, or ``U^T U`` when ``upper``)."""
    f = check_matrix("cholesky_inverse", input)
    eye = _eye_like(f.shape[-1], f)
    return cholesky_solve(eye, f, upper)


# --- QR --------------------------------------------------------------------------------------

def _qr_back(node, gq, gr):
    q, r, a = node.saved_tensors
    m, n = node.m, node.n
    if node.mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                           "differentiate through linalg.qr.")
    if node.mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    if m >= n:
        return (_qr_square_back(q, r, gq, gr),)
    # wide A = Q [X | Y], R = [U | V]: Y = Q V contributes Y gV^T to Q's gradient
    u = r[..., :, :m]
    gv = gr[..., :, m:] if gr is not None else None
    gu = gr[..., :, :m] if gr is not None else None
    y = a[..., :, m:]
    gq2 = gq
    if gv is not None:
        gq2 = y @ _mT(gv) if gq is None else gq + y @ _mT(gv)
    gx = _qr_square_back(q, u, gq2, gu)
    gy = q @ gv if gv is not None else gx.new_zeros(tuple(y.shape))
    from .movement import cat
    return (cat([gx, gy], -1),)


def _qr_square_back(q, r, gq, gr):
    """Gradient of A (m >= n) from Q's and R's: ``(gQ + Q copyltu(M)) R^-T`` with
    ``M = R gR^T - gQ^T Q``, copyltu making a symmetric matrix from M's lower triangle."""
    m = 0
    if gr is not None:
        m = r @ _mT(gr)
    if gq is not None:
        m = m - _mT(gq) @ q
    low = m.tril(-1)
    sym = low + _mT(low) + _diag_embed(m.diagonal(0, -2, -1))
    rhs = q @ sym if gq is None else gq + q @ sym
    # rhs R^-T: solve R X^T = rhs^T
    return _mT(_tri_solve(r, _mT(rhs), True, False))


_QRNode = _node("LinalgQrBackward0", _qr_back, multi_output=True)


def qr(A, mode: str = "reduced"):
    """``A = Q R`` with orthonormal Q and upper-triangular R; ``mode`` 'reduced' (Q is m x k),
    'complete' (Q is m x m) or 'r' (R only; Q is empty).

    Example:
        >>> q, r = dg.linalg.qr(dg.tensor([[3.0, 0.0], [4.0, 5.0]]))
        >>> r.abs().tolist()
        [[5.0, 4.0], [0.0, 3.0]]
    """
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    a = check_matrix("linalg.qr", A, square=False)
    arr = host(a)
    m, n = arr.shape[-2:]
    if mode == "r":
        r_arr = np.linalg.qr(arr, mode="r") if arr.size else np.zeros(arr.shape[:-2] +
                                                                      (min(m, n), n))
        q_arr = np.zeros((0,))
    else:
        q_arr, r_arr = np.linalg.qr(arr, mode=mode)
    q, r = result(q_arr, a), result(r_arr, a)
    _attach(_QRNode, (a,), (q, r), (q, r, a), m=m, n=n, mode=mode)
    return QRResult(q, r)


# --- symmetric eigendecomposition ------------------------------------------------------------

def _eigh_back(node, gw, gv):
    w, v = node.saved_tensors
    # gA = V (diag(gw) + skew(V^T gV) / 2 / E) V^T, E_ij = w_j - w_i: repeated eigenvalues make
    # the eigenvectors' gradient infinite (as in PyTorch); the eigenvalues' alone stays finite
    inner = None
    if gv is not None:
        vg = _mT(v) @ gv
        e = w.unsqueeze(-2) - w.unsqueeze(-1)
        e = e + _diag_embed(w.new_ones(tuple(w.shape)))
        inner = 0.5 * (vg - _mT(vg)) / e
    if gw is not None:
        inner = _diag_embed(gw) if inner is None else inner + _diag_embed(gw)
    if inner is None:
        return (None,)
    return (v @ inner @ _mT(v),)


_EighNode = _node("LinalgEighBackward0", _eigh_back, multi_output=True)


def _check_uplo(uplo: str) -> str:
    if uplo not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    return uplo.upper()


def eigh(A, UPLO: str = "L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric A, read from its lower
    (``UPLO='L'``) or upper triangle.

    Example:
        >>> dg.linalg.eigh(dg.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues.tolist()
        [1.0, 2.0]
    """
    uplo = _check_uplo(UPLO)
    a = check_matrix("linalg.eigh", A)
    w_arr, v_arr = np.linalg.eigh(host(a), UPLO=uplo)
    w, v = result(w_arr, a), result(v_arr, a)
    _attach(_EighNode, (a,), (w, v), (w, v))
    return EighResult(w, v)


def eigvalsh(A, UPLO: str = "L") -> Tensor:
    """Eigenvalues (ascending) of symmetric A."""
    uplo = _check_uplo(UPLO)
    a = check_matrix("linalg.eigvalsh", A)
    if _tracks(a):  # the gradient needs the eigenvectors
        return eigh(a, uplo).eigenvalues
    return result(np.linalg.eigvalsh(host(a), UPLO=uplo), a)


# --- general eigendecomposition (complex results) ------------------------------------------------

def _check_eig(op: str, A) -> Tensor:
    """Square float or complex matrices (LAPACK's geev takes both); torch's messages for the
    other dtypes."""
    a = as_tensor_arg(A, op, "A")
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        raise RuntimeError(f"Unknown Complex ScalarType for "
                           f"{_TORCH_TYPE.get(a.dtype.name, a.dtype.name)}")
    if a.dtype.is_floating_point and a.dtype.itemsize < 4:
        raise NotImplementedError(f'"linalg_eig_out_cpu" not implemented for '
                                  f"'{_TORCH_TYPE[a.dtype.name]}'")
    if a.dtype.is_complex:
        check_matrix(op, a.real)  # the shape rules
        return a
    return check_matrix(op, a)


def _eig_host(a: Tensor):
    """LAPACK's geev (through NumPy) in the input's precision, as torch calls it: eigenvalues and
    eigenvectors of unit norm whose largest component is real. (A real eigenvector's sign is
    LAPACK's choice: computing float32 input in double could flip it against torch's.)"""
    arr = np.array(a.detach().cpu().numpy())
    if not np.isfinite(arr).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    if arr.size == 0:
        return (np.zeros(arr.shape[:-1], np.complex128), np.zeros(arr.shape, np.complex128))
    return np.linalg.eig(arr)


def _csolve_back(node, g):
    a, x = node.saved_tensors
    gb = _csolve(a.mH, g)
    return (-(gb @ x.mH), gb)


_CSolveNode = _node("LinalgSolveBackward0", _csolve_back)


def _csolve(a: Tensor, b: Tensor) -> Tensor:
    """``A^-1 B`` for complex square A (eig's backward needs V^-H): LAPACK on the host, its own
    gradient composed of itself, so it can be differentiated again."""
    cplx = lambda t: np.array(t.detach().cpu().numpy(), dtype=np.complex128)
    x = result(np.linalg.solve(cplx(a), cplx(b)), b)
    _attach(_CSolveNode, (a, b), (x,), (a, x))
    return x


def _eig_back(node, gw, gv):
    w, v = node.saved_tensors
    vh = v.mH
    # gA = V^-H (diag(gw) + (V^H gV - V^H V Re(diag(V^H gV))) / conj(E)) V^H, E_ij = w_j - w_i
    # (1 on the diagonal); each eigenvector is fixed only up to a phase e^{i phi}, so a loss
    # that depends on it (Im diag(V^H gV) != 0) has no gradient: an error, as in PyTorch
    inner = None
    if gv is not None:
        vhgv = vh @ gv
        d = vhgv.diagonal(0, -2, -1)
        im = np.imag(d.detach().cpu().numpy())
        if not np.allclose(im, 0.0, rtol=1e-2, atol=1e-2):
            raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are "
                               "specified up to multiplication by e^{i phi}. The specified loss "
                               "function depends on this quantity, so it is ill-defined.")
        wc = w.conj()
        e = wc.unsqueeze(-2) - wc.unsqueeze(-1) + _eye_like(w.shape[-1], w)
        inner = (vhgv - vh @ (v * d.real.unsqueeze(-2))) / e
    if gw is not None:
        inner = _diag_embed(gw) if inner is None else inner + _diag_embed(gw)
    if inner is None:
        return (None,)
    ga = _csolve(vh, inner @ vh)
    return (ga if node.complex_input else ga.real,)


_EigNode = _node("LinalgEigBackward0", _eig_back, multi_output=True)


def eig(A):
    """Eigenvalues and eigenvectors (columns, unit norm, largest component real) of square A,
    complex (complex64 for float32 input, complex128 for float64); ``A V = V diag(w)``.

    Example:
        >>> dg.linalg.eig(dg.tensor([[0.0, -1.0], [1.0, 0.0]])).eigenvalues
        tensor([0.+1.j, 0.-1.j])
    """
    a = _check_eig("linalg.eig", A)
    w_arr, v_arr = _eig_host(a)
    dt = a.dtype.to_complex()
    w, v = result(w_arr, a, dt), result(v_arr, a, dt)
    _attach(_EigNode, (a,), (w, v), (w, v), complex_input=a.dtype.is_complex)
    return EigResult(w, v)


def eigvals(A) -> Tensor:
    """Eigenvalues (complex) of square A, in the order of ``eig``.

    Example:
        >>> dg.linalg.eigvals(dg.tensor([[2.0, 1.0], [0.0, 3.0]])).tolist()
        [(2+0j), (3+0j)]
    """
    a = _check_eig("linalg.eigvals", A)
    if _tracks(a):  # the gradient needs the eigenvectors
        return eig(a).eigenvalues
    w_arr, _ = _eig_host(a)
    return result(w_arr, a, a.dtype.to_complex())


# --- SVD -------------------------------------------------------------------------------------

def _svd_back(node, gu, gs, gvh):
    u, s, vh = node.saved_tensors
    m, n = node.m, node.n
    k = s.shape[-1]
    if node.full:  # the columns beyond min(m, n) are arbitrary: their gradients are dropped,
        # as PyTorch does
        u, vh = u[..., :, :k], vh[..., :k, :]
        gu = gu[..., :, :k] if gu is not None else None
        gvh = gvh[..., :k, :] if gvh is not None else None
    if gu is None and gvh is None:
        if gs is None:
            return (None,)
        return ((u * gs.unsqueeze(-2)) @ vh,)
    v = _mT(vh)
    gv = _mT(gvh) if gvh is not None else None
    # gA = U [(J_U S + S J_V) / E + diag(gS)] V^T + the parts of gU, gV outside U's, V's span;
    # J = X^T gX - gX^T X, E_ij = s_j^2 - s_i^2 (a repeated singular value: infinite, as PyTorch)
    s2 = s * s
    e = s2.unsqueeze(-2) - s2.unsqueeze(-1)
    e = e + _diag_embed(s.new_ones(tuple(s.shape)))
    inner = 0
    if gu is not None:
        ju = _mT(u) @ gu
        inner = (ju - _mT(ju)) * s.unsqueeze(-2)
    if gv is not None:
        jv = _mT(v) @ gv
        inner = inner + s.unsqueeze(-1) * (jv - _mT(jv))
    inner = inner / e
    if gs is not None:
        inner = inner + _diag_embed(gs)
    ga = u @ inner @ vh
    if m > n and gu is not None:
        gus = gu / s.unsqueeze(-2)
        ga = ga + (gus - u @ (_mT(u) @ gus)) @ vh
    if m < n and gv is not None:
        gvs = gv / s.unsqueeze(-2)
        ga = ga + u @ _mT(gvs - v @ (_mT(v) @ gvs))
    return (ga,)


_SVDNode = _node("LinalgSvdBackward0", _svd_back, multi_output=True)


def svd(A, full_matrices: bool = True, *, driver=None):
    """``A = U diag(S) Vh``, singular values descending; ``full_matrices=False`` keeps the first
    ``min(m, n)`` columns of U and rows of Vh.

    Example:
        >>> dg.linalg.svd(dg.tensor([[3.0, 0.0], [0.0, -4.0]])).S.tolist()
        [4.0, 3.0]
    """
    a = check_matrix("linalg.svd", A, square=False)
    arr = host(a)
    m, n = arr.shape[-2:]
    u_arr, s_arr, vh_arr = np.linalg.svd(arr, full_matrices=full_matrices)
    u, s, vh = result(u_arr, a), result(s_arr, a), result(vh_arr, a)
    _attach(_SVDNode, (a,), (u, s, vh), (u, s, vh), m=m, n=n, full=full_matrices)
    return SVDResult(u, s, vh)


def svdvals(A, *, driver=None) -> Tensor:
    """Singular values, descending."""
    a = check_matrix("linalg.svdvals", A, square=False)
    if _tracks(a):  # the gradient U diag(gS) Vh needs the singular vectors
        return svd(a, full_matrices=False).S
    return result(np.linalg.svd(host(a), compute_uv=False), a)


def torch_svd(input, some: bool = True, compute_uv: bool = True):
    """``torch.svd``: ``(U, S, V)`` with V (not its transpose); zero U and V without
    ``compute_uv``."""
    a = check_matrix("svd", input, square=False)
    if not compute_uv:
        m, n = a.shape[-2:]
        s = svdvals(a)
        return TorchSVDResult(a.new_zeros(tuple(a.shape[:-2]) + (m, m)),
                              s, a.new_zeros(tuple(a.shape[:-2]) + (n, n)))
    u, s, vh = svd(a, full_matrices=not some)
    return TorchSVDResult(u, s, _mT(vh))


# --- pinv, lstsq -----------------------------------------------------------------------------

def _pinv_back(node, g):
    a, p = node.saved_tensors
    # d(A+) = -A+ dA A+ + A+ A+^T dA^T (I - A A+) + (I - A+ A) dA^T A+^T A+
    pt, gt = _mT(p), _mT(g)
    ga = -(pt @ g @ pt)
    left = gt - a @ (p @ gt)          # (I - A A+) G^T
    right = gt - (gt @ p) @ a         # G^T (I - A+ A)
    return (ga + left @ (p @ pt) + (pt @ p) @ right,)


_PinvNode = _node("LinalgPinvBackward0", _pinv_back)


def _tolerances(s: np.ndarray, shape, atol, rtol, dtype):
    """The cut-off ``max(atol, rtol * s_max)`` per matrix; rtol defaults to ``eps * max(m, n)``
    when neither tolerance is given (0 when only atol is), as PyTorch."""
    eps = np.finfo(dtype).eps  # the input's dtype: float32 input gets float32's tolerance
    m, n = shape[-2:]
    atol_v = 0.0 if atol is None else (host(atol) if isinstance(atol, Tensor) else atol)
    if rtol is None:
        rtol_v = eps * max(m, n) if atol is None or np.all(np.asarray(atol_v) == 0) else 0.0
    else:
        rtol_v = host(rtol) if isinstance(rtol, Tensor) else rtol
    smax = s[..., :1] if s.shape[-1] else np.zeros(s.shape[:-1] + (1,))
    return np.maximum(np.asarray(atol_v)[..., None] if np.ndim(atol_v) else atol_v,
                      (np.asarray(rtol_v)[..., None] if np.ndim(rtol_v) else rtol_v) * smax)


def pinv(A, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """Moore-Penrose pseudo-inverse: singular values at or below ``max(atol, rtol * s_max)``
    are treated as zero.

    Example:
        >>> dg.linalg.pinv(dg.tensor([[2.0, 0.0], [0.0, 0.0]])).tolist()
        [[0.5, 0.0], [0.0, 0.0]]
    """
    a = check_matrix("linalg.pinv", A, square=hermitian)
    arr = host(a)
    if hermitian:
        w, v = np.linalg.eigh(arr)
        order = np.argsort(-np.abs(w), axis=-1)
        cut = _tolerances(np.take_along_axis(np.abs(w), order, -1), arr.shape, atol, rtol,
                          a.dtype.np)
        keep = np.abs(w) > cut
        winv = np.where(keep, 1.0 / np.where(keep, w, 1.0), 0.0)
        p = (v * winv[..., None, :]) @ np.swapaxes(v, -1, -2)
    else:
        u, s, vh = np.linalg.svd(arr, full_matrices=False)
        cut = _tolerances(s, arr.shape, atol, rtol, a.dtype.np)
        keep = s > cut
        sinv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
        p = np.swapaxes(vh, -1, -2) @ (sinv[..., :, None] * np.swapaxes(u, -1, -2))
    out = result(p, a)
    _attach(_PinvNode, (a,), (out,), (a, out))
    return out


def pinverse(input, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: ``linalg.pinv`` with ``rcond`` as the relative tolerance."""
    return pinv(input, rtol=rcond)


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of ``A X = B`` (minimum norm where A lacks rank), with the
    residuals, rank and singular values PyTorch reports for ``driver`` ('gelsy' by default:
    rank only; 'gelsd'/'gelss': singular values too; residuals for tall full-rank A)."""
    op = "linalg.lstsq"
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    a = check_matrix(op, A, square=False)
    b = as_tensor_arg(B, op, "B")
    check_float(op, b)
    vector = b.ndim == a.ndim - 1
    bm = b.unsqueeze(-1) if vector else b
    if bm.ndim < 2 or bm.shape[-2] != a.shape[-2]:
        raise RuntimeError(f"torch.{op}: input.size(-2) should match other.size(-2)")
    arr = host(a)
    m, n = arr.shape[-2:]
    s = np.linalg.svd(arr, compute_uv=False)
    cut = _tolerances(s, arr.shape, None, rcond, a.dtype.np)
    rank = (s > cut).sum(-1)
    x = pinv(a, rtol=rcond if rcond is not None else None) @ bm
    driver = driver or "gelsy"
    empty = a.new_zeros((0,))
    residuals = empty
    if driver != "gelsy" and m > n and np.all(rank == n):
        r = a @ x - bm
        residuals = (r * r).sum(-2)
    rank_t = result(rank, a, int64) if driver != "gels" else result(np.zeros(0), a, int64)
    sv = result(s, a) if driver in ("gelsd", "gelss") else empty
    if vector:
        x = x.squeeze(-1)
        residuals = residuals.squeeze(-1) if residuals.numel() else residuals
    return LstsqResult(x, residuals, rank_t, sv)


# --- LU ----------------------------------------------------------------------------------------

def _lu_core(low: Tensor, up: Tensor, gl: Tensor, gu: Tensor) -> Tensor:
    """Square ``A = L U``: ``gA = L^-T [tril(L^T gL, -1) + triu(gU U^T)] U^-T``."""
    mid = (_mT(low) @ gl).tril(-1) + (gu @ _mT(up)).triu()
    x = _tri_solve(_mT(low), mid, True, True)
    return _mT(_tri_solve(up, _mT(x), True, False))


def _lu_back(node, g):
    (lu,) = node.saved_tensors
    from .movement import cat
    m, n = lu.shape[-2:]
    k = min(m, n)
    low = lu[..., :, :k].tril(-1) + result(np.eye(m, k), lu)
    up = lu[..., :k, :].triu()
    gl, gu = g[..., :, :k].tril(-1), g[..., :k, :].triu()   # LU packs both factors
    if m == n:
        core = _lu_core(low, up, gl, gu)
    elif m < n:  # wide: A = P L [U1 | U2], U2 = L^-1 P^T A2 also depends on L
        x = _tri_solve(_mT(low), gu[..., :, m:], True, True)          # L^-T gU2
        core = cat([_lu_core(low, up[..., :, :m], gl - x @ _mT(up[..., :, m:]),
                             gu[..., :, :m]), x], -1)
    else:  # tall: A = P [L1; L2] U, L2 = (P^T A)2 U^-1 also depends on U
        y = _mT(_tri_solve(up, _mT(gl[..., n:, :]), True, False))    # gL2 U^-T
        core = cat([_lu_core(low[..., :n, :], up, gl[..., :n, :],
                             gu - _mT(low[..., n:, :]) @ y), y], -2)
    return (node.perm @ core,)


_LUNode = _node("LinalgLuFactorExBackward0", _lu_back, multi_output=True)


def _permutation(piv: np.ndarray, m: int) -> np.ndarray:
    """P (m x m per batch) with ``A = P L U`` from LAPACK's 1-based row interchanges."""
    flat = piv.reshape(-1, piv.shape[-1])
    out = np.zeros((flat.shape[0], m, m))
    for b, rows in enumerate(flat):
        perm = np.arange(m)
        for i, p in enumerate(rows):
            perm[[i, p - 1]] = perm[[p - 1, i]]
        out[b, perm, np.arange(m)] = 1.0
    return out.reshape(piv.shape[:-1] + (m, m))


def _lu_factor(op: str, A, pivot: bool, check: bool):
    a = check_matrix(op, A, square=False)
    if not pivot:
        raise RuntimeError(f"{op.removeprefix('torch.')}: LU without pivoting is not implemented "
                           "on the CPU")
    lu_arr, piv, info = _getrf(host(a))
    if check:
        _batch_error(op, info, lambda k: f"U[{k},{k}] is zero and using it on lu_solve would "
                     "result in a division by zero. If you still want to perform the "
                     "factorization, consider calling linalg.lu(A, pivot) or "
                     "linalg.lu_factor_ex(A, pivot)", "torch.")
    lu = result(lu_arr, a)
    if _tracks(a):
        perm = result(_permutation(piv, a.shape[-2]), a)
        _attach(_LUNode, (a,), (lu,), (lu,), perm=perm)
    return lu, result(piv, a, int32), info


def lu_factor(A, *, pivot: bool = True):
    """Packed LU factorization ``A = P L U``: (LU, 1-based pivots), as LAPACK's getrf."""
    lu, piv, _ = _lu_factor("linalg.lu_factor", A, pivot, True)
    return LUFactorResult(lu, piv)


def lu_factor_ex(A, *, pivot: bool = True, check_errors: bool = False):
    """``lu_factor`` with LAPACK's info (k: U[k, k] is zero)."""
    lu, piv, info = _lu_factor("linalg.lu_factor_ex", A, pivot, check_errors)
    return LUFactorExResult(lu, piv, result(info, lu, int32))


def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True):
    """(P, L, U) from a packed LU factorization; L and U are differentiable in LU."""
    lu = as_tensor_arg(LU_data, "lu_unpack", "LU_data")
    piv = as_tensor_arg(LU_pivots, "lu_unpack", "LU_pivots")
    m, n = lu.shape[-2:]
    k = min(m, n)
    empty = lu.new_zeros((0,))
    p = result(_permutation(piv.cpu().numpy(), m), lu) if unpack_pivots else empty
    if not unpack_data:
        return LUUnpackResult(p, empty, empty)
    low = lu[..., :, :k].tril(-1) + result(np.eye(m, k), lu)
    up = lu[..., :k, :].triu()
    return LUUnpackResult(p, low, up)


def lu(A, *, pivot: bool = True):
    """``A = P L U`` with unit lower-trapezoidal L and upper-trapezoidal U."""
    lu_t, piv, _ = _lu_factor("linalg.lu", A, pivot, False)
    return LUResult(*lu_unpack(lu_t, piv))


def lu_solve(LU, pivots, B, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """X with ``A X = B`` from A's packed LU factorization (``A^T X = B`` with ``adjoint``,
    ``X A = B`` when not ``left``)."""
    lu_t = check_matrix("linalg.lu_solve", LU)
    b = as_tensor_arg(B, "linalg.lu_solve", "B")
    p, low, up = lu_unpack(lu_t, pivots)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _mT(lu_solve(lu_t, pivots, _mT(b), left=True, adjoint=not adjoint))
    if adjoint:  # A^T = U^T L^T P^T
        y = _tri_solve(_mT(low), _tri_solve(_mT(up), b, False, False), True, True)
        return p @ y
    return _tri_solve(up, _tri_solve(low, _mT(p) @ b, False, True), True, False)


def torch_lu(A, pivot: bool = True, get_infos: bool = False):
    """``torch.lu``: (A_LU, pivots) and the infos when ``get_infos``."""
    lu_t, piv, info = _lu_factor("lu", A, pivot, not get_infos)
    return (lu_t, piv, result(info, lu_t, int32)) if get_infos else (lu_t, piv)


def torch_lu_solve(b, LU_data, LU_pivots) -> Tensor:
    """``torch.lu_solve(b, LU_data, LU_pivots)``: ``linalg.lu_solve`` with the older order."""
    return lu_solve(LU_data, LU_pivots, b)


# --- LDL^T -------------------------------------------------------------------------------------

def _ldl_factor(op: str, A, hermitian: bool, check: bool):
    a = check_matrix(op, A)
    flat = _flat(host(a))
    ld = np.zeros_like(flat)
    piv = np.zeros(flat.shape[:2], np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    for i, x in enumerate(flat):
        if x.size:
            ld[i], p, info[i] = _scipy_linalg().lapack.dsytrf(x, lower=1)
            piv[i] = p  # LAPACK's 1-based pivots (negative for 2 x 2 blocks), as PyTorch
    ld = np.tril(ld)
    info = info.reshape(a.shape[:-2])
    if check:
        _batch_error(op, info, lambda k: f"The factorization could not be completed because the "
                     f"input matrix is singular (D[{k},{k}] is zero).")
    return (result(ld.reshape(a.shape), a), result(piv.reshape(a.shape[:-1]), a, int32),
            result(info, a, int32))


def ldl_factor_ex(A, *, hermitian: bool = False, check_errors: bool = False):
    """LAPACK's sytrf (Bunch-Kaufman) factorization of symmetric A: the compact LD, pivots and
    info. Not differentiable (as in PyTorch)."""
    return LDLFactorExResult(*_ldl_factor("linalg.ldl_factor_ex", A, hermitian, check_errors))


def ldl_factor(A, *, hermitian: bool = False):
    """``ldl_factor_ex`` without the info (it raises instead)."""
    ld, piv, _ = _ldl_factor("linalg.ldl_factor", A, hermitian, True)
    return LDLFactorResult(ld, piv)


def ldl_solve(LD, pivots, B, *, hermitian: bool = False) -> Tensor:
    """X with ``A X = B`` from ``ldl_factor``'s LD and pivots (LAPACK's sytrs)."""
    ld = check_matrix("linalg.ldl_solve", LD)
    b = as_tensor_arg(B, "linalg.ldl_solve", "B")
    ld_arr, b_arr, piv = host(ld), host(b), pivots.cpu().numpy()
    batch = np.broadcast_shapes(ld_arr.shape[:-2], b_arr.shape[:-2])
    ld_arr = np.broadcast_to(ld_arr, batch + ld_arr.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:])
    b_arr = np.broadcast_to(b_arr, batch + b_arr.shape[-2:])
    x = np.empty(batch + b_arr.shape[-2:])
    for i in np.ndindex(batch):
        x[i] = _scipy_linalg().lapack.dsytrs(ld_arr[i], piv[i], b_arr[i], lower=1)[0]
    return result(x, b)


# --- matrix functions --------------------------------------------------------------------------

def _expm_back(node, g):
    (a,) = node.saved_tensors
    # the gradient is the upper-right block of exp([[A^T, G], [0, A^T]])
    from .movement import cat
    n = a.shape[-1]
    at = _mT(a)
    big = cat([cat([at, g], -1), cat([g.new_zeros(tuple(g.shape)), at], -1)], -2)
    return (matrix_exp(big)[..., :n, n:],)


_ExpmNode = _node("LinalgMatrixExpBackward0", _expm_back)


def matrix_exp(A) -> Tensor:
    """The matrix exponential ``sum_k A^k / k!`` (scaling and squaring, SciPy's expm).

    Example:
        >>> dg.linalg.matrix_exp(dg.zeros(2, 2)).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    a = check_matrix("linalg.matrix_exp", A)
    arr = host(a)
    out = result(_scipy_linalg().expm(arr) if arr.size else arr, a)
    _attach(_ExpmNode, (a,), (out,), (a,))
    return out


def matrix_power(A, n: int) -> Tensor:
    """``A^n`` by repeated squaring (``n < 0``: powers of the inverse; ``n = 0``: identity).

    Example:
        >>> dg.linalg.matrix_power(dg.tensor([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
        [[1.0, 3.0], [0.0, 1.0]]
    """
    a = as_tensor_arg(A, "linalg.matrix_power", "A")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they "
                           + (f"are {a.shape[-2]} by {a.shape[-1]} matrices" if a.ndim >= 2 else
                              f"are {describe(a)}"))
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power: n must be an int, got {describe(n)}")
    if n == 0:
        eye = result(np.eye(a.shape[-1]), a)
        return (a * 0 + eye) if a.dtype.is_floating_point else eye.expand(tuple(a.shape))
    if n < 0:
        a, n = inv(a), -n
    out, base = None, a
    while n:
        if n & 1:
            out = base if out is None else out @ base
        n >>= 1
        if n:
            base = base @ base
    return out


def matrix_rank(A, *, atol=None, rtol=None, hermitian: bool = False, tol=None) -> Tensor:
    """The number of singular values above ``max(atol, rtol * s_max)`` (int64)."""
    a = check_matrix("linalg.matrix_rank", A, square=hermitian)
    if tol is not None:
        atol, rtol = tol, 0.0
    arr = host(a)
    s = (np.sort(np.abs(np.linalg.eigvalsh(arr)), -1)[..., ::-1] if hermitian
         else np.linalg.svd(arr, compute_uv=False))
    cut = _tolerances(s, arr.shape, atol, rtol, a.dtype.np)
    return result((s > cut).sum(-1), a, int64)


# --- norms and condition numbers ---------------------------------------------------------------

def _norm_dims(x, dim):
    if dim is None:
        return tuple(range(x.ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(d % x.ndim if x.ndim else 0 for d in dims)


def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The vector ``ord``-norm over ``dim`` (all elements when None): ``sum(|x|^ord)^(1/ord)``,
    ``max|x|`` for inf, ``min|x|`` for -inf, the count of nonzeros for 0.

    Example:
        >>> dg.linalg.vector_norm(dg.tensor([3.0, -4.0])).item()
        5.0
    """
    from .reduce import norm
    t = as_tensor_arg(x, "linalg.vector_norm", "x")
    if not t.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_TORCH_TYPE.get(t.dtype.name, t.dtype.name)}")
    if dtype is not None:
        t = t.to(dtype)
    if isinstance(ord, str):
        raise TypeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    dims = _norm_dims(t, dim)
    if t.ndim == 0:  # a 0-d input is one element; the result is 0-d with or without keepdim
        return norm(t.reshape(1), p=ord, dim=(0,)).reshape(())
    return norm(t, p=ord, dim=dims, keepdim=keepdim)


def _to_last(a: Tensor, d0: int, d1: int) -> Tensor:
    """``a`` with dims d0, d1 moved to the end (as rows, columns)."""
    rest = [d for d in range(a.ndim) if d not in (d0, d1)]
    return a.permute(rest + [d0, d1])


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:
    """Matrix norms over the two dims ``dim``: 'fro', 'nuc' (sum of singular values), 2 / -2
    (largest / smallest singular value), 1 / -1 (max / min column sum of |A|), inf / -inf (max /
    min row sum).

    Example:
        >>> dg.linalg.matrix_norm(dg.tensor([[1.0, -2.0], [3.0, 4.0]]), 1).item()
        6.0
    """
    a = as_tensor_arg(A, "linalg.matrix_norm", "A")
    if a.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    check_float("linalg.matrix_norm", a)
    if dtype is not None:
        a = a.to(dtype)
    d0, d1 = (d % a.ndim for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    if ord == "fro":
        return vector_norm(a, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(_to_last(a, d0, d1))
        out = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
    elif ord in (1, -1, math.inf, -math.inf):
        sum_dim, pick_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = a.abs().sum(sum_dim, keepdim=True)
        out = sums.amax(pick_dim, keepdim=True) if ord > 0 else sums.amin(pick_dim, keepdim=True)
        return out if keepdim else out.squeeze((d0, d1) if d0 < d1 else (d1, d0))
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if keepdim:
        for d in sorted((d0, d1)):
            out = out.unsqueeze(d)
    return out


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """A vector norm (``dim`` an int, or 1-D input) or a matrix norm (``dim`` two dims, or 2-D
    input with ``ord`` given); with neither ``ord`` nor ``dim``, the 2-norm of all elements."""
    a = as_tensor_arg(A, "linalg.norm", "A")
    if isinstance(dim, int) or (dim is not None and len(dim) == 1):
        return vector_norm(a, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is not None and len(dim) == 2:
        return matrix_norm(a, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(a, 2, None, keepdim, dtype=dtype)
    if a.ndim == 2:
        return matrix_norm(a, ord, (-2, -1), keepdim, dtype=dtype)
    if a.ndim == 1:
        return vector_norm(a, ord, None, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or "
                       f"2D. Got {a.ndim}D.")


def nuclear_norm(input, dim=None, keepdim: bool = False) -> Tensor:
    """``torch.nuclear_norm``: the sum of the singular values."""
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


def cond(A, p=None) -> Tensor:
    """Condition number: ``s_max / s_min`` for p None or 2 (``s_min / s_max`` for -2), else
    ``norm(A, p) * norm(A^-1, p)``."""
    a = check_matrix("linalg.cond", A, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = svdvals(a)
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    return matrix_norm(a, p) * matrix_norm(inv(a), p)


# --- products and tensor forms -----------------------------------------------------------------

def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices (the first may be a vector, as may the last)."""
    ts = [as_tensor_arg(t, "multi_dot") for t in tensors]
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    for i, t in enumerate(ts):
        ok = t.ndim == 2 or (t.ndim == 1 and i in (0, len(ts) - 1))
        if not ok:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D"
                               + (" or 1D" if i in (0, len(ts) - 1) else "")
                               + f" but got {t.ndim}D")
    out = ts[0]
    for t in ts[1:]:
        out = out @ t
    return out


def chain_matmul(*matrices) -> Tensor:
    """``torch.chain_matmul``: the product of 2-D matrices, left to right."""
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


def tensorinv(A, ind: int = 2) -> Tensor:
    """The inverse of A seen as a map from its first ``ind`` dims to the rest."""
    a = as_tensor_arg(A, "linalg.tensorinv", "A")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(a.shape[:ind]), tuple(a.shape[ind:])
    m, n = math.prod(rows), math.prod(cols)
    if m != n:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           "prod(self.shape[:ind]), but got "
                           f"{n} != {m}")
    return inv(a.reshape(m, n)).reshape(cols + rows)


def tensorsolve(A, B, dims=None) -> Tensor:
    """X with ``tensordot(A, X, X.ndim) = B``."""
    a, b = as_tensor_arg(A, "linalg.tensorsolve", "A"), as_tensor_arg(B, "linalg.tensorsolve", "B")
    if dims is not None:
        dims = [d % a.ndim for d in dims]
        a = a.permute([d for d in range(a.ndim) if d not in dims] + dims)
    x_shape = tuple(a.shape[b.ndim:])
    n = math.prod(x_shape)
    if math.prod(tuple(b.shape)) != n:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {n} != "
                           f"{math.prod(tuple(b.shape))}")
    return solve(a.reshape(n, n), b.reshape(n)).reshape(x_shape)


def vander(x, *, N=None) -> Tensor:
    """``linalg.vander``: increasing powers ``x^0 .. x^(N-1)`` along a new last dim."""
    t = as_tensor_arg(x, "linalg.vander", "x")
    if t.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = t.shape[-1] if N is None else N
    if n <= 1:
        if n < 1:
            raise RuntimeError("N must be greater than 1.")
        return t.unsqueeze(-1) * 0 + 1
    from .movement import cat
    ones = t.unsqueeze(-1) * 0 + 1
    powers = t.unsqueeze(-1).expand(tuple(t.shape) + (n - 1,)).cumprod(-1)
    return cat([ones, powers], -1)


def torch_vander(x, N=None, increasing: bool = False) -> Tensor:
    """``torch.vander``: powers of a 1-D x, decreasing unless ``increasing``."""
    t = as_tensor_arg(x, "vander", "x")
    if t.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is not None and N < 0:
        raise RuntimeError("N must be non-negative.")
    if N == 0:
        return t.new_zeros((t.shape[0], 0))
    v = vander(t, N=N)
    return v if increasing else v.flip(-1)


def vecdot(x, y, *, dim: int = -1) -> Tensor:
    """``sum(x * y, dim)`` with broadcasting."""
    return (as_tensor_arg(x, "linalg.vecdot", "x") * y).sum(dim)


def householder_product(A, tau) -> Tensor:
    """The first n columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^T`` with ``v_i`` the
    i-th column of A below the diagonal (unit above it), as LAPACK's orgqr."""
    a = check_matrix("linalg.householder_product", A, square=False, name="input")
    t = as_tensor_arg(tau, "linalg.householder_product", "tau")
    m, n = a.shape[-2:]
    k = t.shape[-1]
    if n > m or k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1], and input.shape[-1] must be "
                           "greater than or equal to tau.shape[-1]")
    unit = result(np.eye(m, n), a)
    vs = a.tril(-1) + unit                      # the reflectors as columns (unit diagonal)
    q = result(np.eye(m), a) + a[..., :, :1] * 0  # broadcast the identity over the batch
    for i in range(k):
        v = vs[..., :, i:i + 1]
        q = q - (q @ v) * t[..., i:i + 1].unsqueeze(-1) @ _mT(v)
    return q[..., :, :n]


def diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``linalg.diagonal``: ``A.diagonal`` over the last two dims by default."""
    return as_tensor_arg(A, "linalg.diagonal", "A").diagonal(offset, dim1, dim2)


def cross(input, other, *, dim: int = -1) -> Tensor:
    """``linalg.cross``: the cross product of 3-vectors along ``dim`` (default the last)."""
    from .linalg import cross as torch_cross
    a, b = as_tensor_arg(input, "linalg.cross"), as_tensor_arg(other, "linalg.cross", "other")
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[dim]} and {b.shape[dim]}")
    return torch_cross(a, b, dim)


def svd_lowrank(A, q: int | None = 6, niter: int = 2, M=None):
    """(U, S, V) of rank ``q`` approximating A (minus M): the target of PyTorch's randomized
    algorithm, computed exactly by a full SVD truncated to q (``niter`` has nothing to refine)."""
    a = as_tensor_arg(A, "svd_lowrank", "A")
    if M is not None:
        a = a - M
    q = 6 if q is None else q
    u, s, vh = svd(a, full_matrices=False)
    return u[..., :, :q], s[..., :q], _mT(vh[..., :q, :])


def pca_lowrank(A, q: int | None = None, center: bool = True, niter: int = 2):
    """Principal components of A's rows: ``svd_lowrank`` of A with its column means removed
    (``center``), q defaulting to ``min(6, m, n)``."""
    a = as_tensor_arg(A, "pca_lowrank", "A")
    m, n = a.shape[-2:]
    q = min(6, m, n) if q is None else q
    if center:
        a = a - a.mean(-2, keepdim=True)
    return svd_lowrank(a, q, niter)


def removed(name: str, message: str):
    """A function PyTorch removed in 2.x: present, raising its RuntimeError."""
    def fn(*args, **kwargs):
        raise RuntimeError(message)
    fn.__name__ = name
    fn.__doc__ = f"Removed from PyTorch (2.x raises): {message.splitlines()[0]}"
    return fn


# --- the torch-level names (Tensor methods where PyTorch has them) -----------------------------

def _torch_qr(input, some: bool = True):
    """``torch.qr``: reduced (``some``) or complete Q and R."""
    return qr(input, "reduced" if some else "complete")


def _triangular_solve(input, A, upper: bool = True, transpose: bool = False,
                      unitriangular: bool = False):
    """``torch.triangular_solve(b, A)``: (X with ``op(T) X = b``, a copy of A)."""
    a = check_matrix("triangular_solve", A)
    b = as_tensor_arg(input, "triangular_solve")
    x = (_tri_solve(_mT(a), b, not upper, unitriangular) if transpose
         else _tri_solve(a, b, upper, unitriangular))
    return TriangularSolveResult(x, a.clone())


def _slogdet_torch(input):
    """``torch.slogdet``: ``linalg.slogdet``."""
    return slogdet(input)


for _name, _fn, _method in (
        ("det", det, True), ("slogdet", slogdet, True), ("logdet", logdet, True),
        ("inverse", inv, True), ("pinverse", pinverse, True), ("matrix_exp", matrix_exp, True),
        ("matrix_power", matrix_power, True), ("cholesky", torch_cholesky, True),
        ("cholesky_solve", cholesky_solve, True), ("cholesky_inverse", cholesky_inverse, True),
        ("qr", _torch_qr, True), ("svd", torch_svd, True), ("lu", torch_lu, True),
        ("lu_solve", torch_lu_solve, True), ("lu_unpack", lu_unpack, False),
        ("triangular_solve", _triangular_solve, True), ("nuclear_norm", nuclear_norm, False),
        ("vander", torch_vander, False), ("svd_lowrank", svd_lowrank, False),
        ("pca_lowrank", pca_lowrank, False), ("chain_matmul", chain_matmul, False)):
    register(_name, _fn, "decompositions", method=_method)

_LSTSQ_GONE = (
    "This function was deprecated since version 1.9 and is now removed. `torch.lstsq` is "
    "deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed arguments "
    "and does not return the QR decomposition in the returned tuple (although it returns other "
    "information about the problem).\n\nTo get the QR decomposition consider using "
    "`torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals of the "
    "solution in the last m - n columns of the returned value whenever m > n. In "
    "torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned named "
    "tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]"
    "\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")
_RANK_GONE = ("This function was deprecated since version 1.9 and is now removed.\nPlease use "
              "the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was "
              "renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")
_SOLVE_GONE = (
    "This function was deprecated since version 1.9 and is now removed. `torch.solve` is "
    "deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments reversed "
    "and does not return the LU factorization.\n\nTo get the LU factorization see `torch.lu`, "
    "which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution "
    "should be replaced with:\nX = torch.linalg.solve(A, B)")
# not ops (nothing to compute, so no record): attached as PyTorch has them, raising as it does
FUNCTIONS["lstsq"] = removed("lstsq", _LSTSQ_GONE)
FUNCTIONS["matrix_rank"] = removed("matrix_rank", _RANK_GONE)
FUNCTIONS["solve"] = removed("solve", _SOLVE_GONE)
tensor_method("lstsq", FUNCTIONS["lstsq"])
tensor_method("solve", FUNCTIONS["solve"])
