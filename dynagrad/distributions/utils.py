"""Helpers shared by the distributions (PyTorch's ``torch.distributions.utils`` names).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.distributions.utils import broadcast_all
    >>> a, b = broadcast_all(dg.zeros(3), 1.0)
    >>> tuple(b.shape)
    (3,)
"""
from __future__ import annotations

import numbers
from functools import update_wrapper

import numpy as np

from .. import dtypes
from ..creation import tensor as _tensor
from ..nn import functional as F
from ..tensor import Tensor

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "eps",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tiny",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]


def eps(dtype) -> float:
    """Machine epsilon of a floating dtype."""
    return float(np.finfo(dtype.np).eps)


def tiny(dtype) -> float:
    """The smallest positive normal number of a floating dtype."""
    return float(np.finfo(dtype.np).tiny)


def broadcast_all(*values):
    """Tensors (numbers become tensors of the tensors' dtype, else the default dtype) expanded
    to one broadcast shape."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor "
                         "or objects implementing __torch_function__.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    if len(tensors) < len(values):
        ref = tensors[0] if tensors else None
        dt = ref.dtype if ref is not None else dtypes.get_default_dtype()
        dev = ref.device if ref is not None else None
        values = [v if isinstance(v, Tensor) else _tensor(v, dtype=dt, device=dev) for v in values]
    shape = np.broadcast_shapes(*[tuple(v.shape) for v in values])
    return tuple(v if tuple(v.shape) == shape else v.expand(shape) for v in values)


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the last ``dim`` dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Logits to probabilities: a sigmoid when binary, else a softmax over the last dimension."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities kept in [eps, 1 - eps], so that their logits stay finite."""
    e = eps(probs.dtype)
    return probs.clamp(e, 1 - e)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities to logits: log-odds when binary, else log-probabilities."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


class lazy_property:
    """A property computed on first access and stored on the instance (so ``logits`` and
    ``probs`` of a distribution made from the other are derived only when asked for)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        from ..autograd import enable_grad
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What the class itself shows for a lazy property: a property (for documentation tools)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (from diagonal ``diag``) of the last two dims, row by row."""
    n = mat.shape[-1]
    rows, cols = np.tril_indices(n, diag)
    flat = mat.reshape(tuple(mat.shape[:-2]) + (n * n,))
    return flat[..., _tensor(rows * n + cols, device=mat.device)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of ``tril_matrix_to_vec``: a lower triangular matrix, zeros elsewhere."""
    from ..creation import zeros
    m = vec.shape[-1]
    # solve n(n+1)/2 + n*diag... for n: the triangle below diagonal diag of an n x n matrix
    n = round((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1))
                   ** 0.5) / 2)
    rows, cols = np.tril_indices(n, diag)
    if rows.size != m:
        raise ValueError("Incorrect size")
    batch = tuple(vec.shape[:-1])
    out = zeros(batch + (n * n,), dtype=vec.dtype, device=vec.device)
    idx = _tensor(rows * n + cols, device=vec.device).expand(batch + (m,))
    return out.scatter(-1, idx, vec).reshape(batch + (n, n))


def _one_hot(index: Tensor, n: int, dtype) -> Tensor:
    return F.one_hot(index, n).to(dtype)
