"""The matrix functions the multivariate distributions need, differentiable: ``cholesky`` and
``solve_triangular``, on the host through NumPy's LAPACK (a host round trip on CUDA).

Gradients are written with these same functions and ops, so they compose (and differentiate
again).
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..creation import eye
from ..kernels.buffers import device_index, host, move_array
from ..tensor import Tensor, _wrap


def _host(t: Tensor) -> np.ndarray:
    return host(t.detach()._data).astype(np.float64)


def _back(arr: np.ndarray, like: Tensor) -> Tensor:
    return _wrap(move_array(np.ascontiguousarray(arr, dtype=like.dtype.np),
                            device_index(like._data)), like.dtype)


def _phi(m: Tensor) -> Tensor:
    """The lower triangle of ``m`` with its diagonal halved."""
    n = m.shape[-1]
    return m.tril() - 0.5 * m * eye(n, dtype=m.dtype, device=m.device)


class _Cholesky(Function):
    @staticmethod
    def forward(ctx, a):
        try:
            lower = np.linalg.cholesky(_host(a))
        except np.linalg.LinAlgError:
            raise RuntimeError("linalg.cholesky: The factorization could not be completed "
                               "because the input is not positive-definite.") from None
        out = _back(lower, a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        # for A = L L^T: dA = L^-T Phi(L^T dL) L^-1, symmetrised
        (lower,) = ctx.saved_tensors
        p = _phi(lower.mT.matmul(g))
        s = solve_triangular(lower.mT, solve_triangular(lower.mT, p, upper=True).mT,
                             upper=True).mT
        return 0.5 * (s + s.mT)


class _SolveTriangular(Function):
    @staticmethod
    def forward(ctx, a, b, upper):
        tri = np.triu(_host(a)) if upper else np.tril(_host(a))
        x = _back(np.linalg.solve(tri, _host(b)), b)
        ctx.upper = upper
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        gb = solve_triangular(a.mT, g, upper=not ctx.upper)
        ga = -gb.matmul(x.mT)
        return (ga.triu() if ctx.upper else ga.tril()), gb, None


def cholesky(a: Tensor) -> Tensor:
    """The lower Cholesky factor of symmetric positive definite matrices (batched)."""
    return _Cholesky.apply(a)


def solve_triangular(a: Tensor, b: Tensor, *, upper: bool) -> Tensor:
    """X with A X = B for triangular A (only its ``upper`` or lower triangle is read); the batch
    dims broadcast."""
    batch = tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    a = a.expand(batch + tuple(a.shape[-2:]))
    b = b.expand(batch + tuple(b.shape[-2:]))
    return _SolveTriangular.apply(a, b, upper)


def batch_mv(mat: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector products with broadcast batch dims."""
    return mat.matmul(vec.unsqueeze(-1)).squeeze(-1)


def batch_mahalanobis(lower: Tensor, x: Tensor) -> Tensor:
    """x^T (L L^T)^-1 x for Cholesky factors ``lower`` and vectors ``x`` (batches broadcast)."""
    y = solve_triangular(lower, x.unsqueeze(-1), upper=False).squeeze(-1)
    return y.pow(2).sum(-1)


def cholesky_inverse(lower: Tensor) -> Tensor:
    """(L L^T)^-1 from its Cholesky factor."""
    n = lower.shape[-1]
    inv = solve_triangular(lower, eye(n, dtype=lower.dtype, device=lower.device), upper=False)
    return inv.mT.matmul(inv)


def diag_embed(v: Tensor) -> Tensor:
    """Square matrices with ``v`` (last dim) on the diagonal."""
    return v.unsqueeze(-1) * eye(v.shape[-1], dtype=v.dtype, device=v.device)
