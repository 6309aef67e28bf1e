"""softmax / log_softmax: fused row kernels (``kernels/cpu/nn/softmax.py``) forward and backward
on the CPU; their double backward composes ops. On CUDA, ``softmax_composite`` builds them from
reductions and elementwise ops. The row kernels and ``to_rows`` / ``from_rows`` also serve
cross-entropy (``ops.nn.loss``).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.ops.nn.softmax import softmax
    >>> softmax(dg.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
"""
from __future__ import annotations

import warnings

import numpy as np

from ... import dtypes
from ..._runtime.blas_threads import parallel_slices, run_split
from ...autograd import grad_mode
from ...autograd.function import Node, record
from ...errors import describe
from ...kernels import cache as kernel_cache
from ...kernels.cpu import memory
from ...kernels.cpu.nn import softmax as nn_softmax
from ...kernels.cpu.backend import PARALLEL_MIN_ELEMENTS
from ...shapes import wrap_dim
from ...tensor import Tensor, _wrap
from .._util import as_tensor_arg
from ..registry import register
from ._placement import composed

__all__ = ["softmax", "log_softmax"]

_GRAD = grad_mode.GRAD_ENABLED


def softmax_dim(name: str, ndim: int) -> int:
    """The dim PyTorch's softmax family picks when none is given, with its deprecation warning
    (pointing at the caller of the public function)."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


# The arguments of each row kernel that hold one entry per row (the others are shared): a split
# call hands each slice its rows of these.
_ROW_ARGS = {"softmax_forward": (0, 1), "softmax_backward": (0, 1, 2),
             "cross_entropy_forward": (0, 1, 5, 6), "cross_entropy_backward": (0, 1, 3, 4, 7)}


def _kernel(kind: str, dtype: str, *flag, rows: np.ndarray | None = None):
    """The row kernel ``kind``; given large ``rows``, a callable that runs it on all cores.

    Slices of rows go to OpenBLAS's workers (``run_split``), as the BLAS work around these
    kernels does: on Numba's own threads, a kernel right after a GEMM fights OpenBLAS's
    busy-waiting workers for the cores; as slices on those workers it loses far less. Alone, the
    slices cost a little more than Numba's threads. Without NumPy's OpenBLAS, Numba's threaded
    variant runs."""
    large = rows is not None and rows.size >= PARALLEL_MIN_ELEMENTS and rows.shape[0] >= 16
    split = large and parallel_slices(rows.shape[0]) >= 2
    threaded = large and not split
    key = ("nn_softmax", kind, dtype, threaded) + flag
    k = kernel_cache._memory.get(key)
    if k is None:
        k = kernel_cache.lookup(key, lambda: getattr(nn_softmax, kind)(dtype, *flag,
                                                                       threaded=threaded))
    if not split:
        return k
    per_row = _ROW_ARGS[kind]

    def on_slices(*args) -> None:
        run_split(rows.shape[0], lambda lo, hi: k(*[a[lo:hi] if i in per_row else a
                                                    for i, a in enumerate(args)]))
    return on_slices


def to_rows(arr: np.ndarray, dim: int) -> np.ndarray:
    """``arr`` with ``dim`` moved last, as a contiguous ``(rows, arr.shape[dim])`` array."""
    if arr.ndim == 0:
        return arr.reshape(1, 1)
    if dim != arr.ndim - 1:
        arr = np.moveaxis(arr, dim, -1)
    return np.ascontiguousarray(arr).reshape(-1, arr.shape[-1])


def from_rows(rows: np.ndarray, shape: tuple, dim: int) -> np.ndarray:
    """Inverse of ``to_rows``: a contiguous array of ``shape``."""
    if len(shape) == 0:
        return rows.reshape(())
    if dim == len(shape) - 1:
        return rows.reshape(shape)
    moved = shape[:dim] + shape[dim + 1:] + (shape[dim],)
    return np.ascontiguousarray(np.moveaxis(rows.reshape(moved), -1, dim))


def float_input(input, name: str, dtype) -> Tensor:
    """``input`` as a float32/float64 tensor (cast to ``dtype`` first when given; half types
    compute in float32); a TypeError for other dtypes."""
    x = as_tensor_arg(input, name)
    if dtype is not None and x.dtype is not dtype:
        x = x.to(dtype)
    if x.dtype not in (dtypes.float32, dtypes.float64):
        if x.dtype.is_floating_point:  # float16 / bfloat16: compute in float32
            return x.to(dtypes.float32)
        raise TypeError(f"{name}: expected a floating point input (or dtype=), got {describe(x)}")
    return x


class _SoftmaxNode(Node):
    """Backward of softmax / log_softmax: one fused row kernel; composes ops under create_graph."""

    log = False

    def backward(self, g):
        (y,) = self.saved_tensors
        dim = self.dim
        if _GRAD[0]:  # double backward: the formula in ops, reading y as this node's output
            y = y._alias()
            y.grad_fn, y._output_nr, y._requires_grad = self, 0, True
            if self.log:
                return (g - y.exp() * g.sum(dim, keepdim=True)),
            return (y * (g - (g * y).sum(dim, keepdim=True))),
        shape = tuple(y.shape)
        ga = g._data if g.dtype is y.dtype else g._data.astype(y.dtype.np)
        y2, g2 = to_rows(y._data, dim), to_rows(ga, dim)
        out = memory.empty(y2.shape, y2.dtype)
        if out.size:
            _kernel("softmax_backward", y.dtype.name, self.log, rows=y2)(y2, g2, out)
        res = _wrap(from_rows(out, shape, dim), y.dtype)
        return (res if res.dtype is self.in_dtype else res.to(self.in_dtype)),


class SoftmaxBackward0(_SoftmaxNode):
    pass


class LogSoftmaxBackward0(_SoftmaxNode):
    log = True


def _softmax(input, dim, dtype, log: bool) -> Tensor:
    """Half-precision input (or ``dtype``) computes in float32 and rounds the result back to it,
    as PyTorch does (its result has the input's dtype); the cast carries the gradient."""
    name = "log_softmax" if log else "softmax"
    src = as_tensor_arg(input, name)
    x = float_input(src, name, dtype)
    want = dtype if dtype is not None else src.dtype
    res = _softmax_float(x, dim, log, name)
    return res if res.dtype is want else res.to(want)


def _softmax_float(x: Tensor, dim, log: bool, name: str) -> Tensor:
    if dim is None:
        dim = softmax_dim(name, x.ndim)
    d = wrap_dim(dim, x.ndim, name)
    if composed(x):
        return softmax_composite(x, d, log)
    shape = tuple(x.shape)
    rows = to_rows(x._data, d)
    out = memory.empty(rows.shape, rows.dtype)  # pooled: a fresh large one page-faults
    if out.size:
        _kernel("softmax_forward", x.dtype.name, log, rows=rows)(rows, out)
    res = _wrap(from_rows(out, shape, d), x.dtype)
    if _GRAD[0] and x._requires_grad:
        node = (LogSoftmaxBackward0 if log else SoftmaxBackward0)()
        node.dim, node.in_dtype = d, x.dtype
        node.save(res._alias())
        record(node, (x,), (res,))
    return res


def softmax_composite(x: Tensor, dim: int, log: bool) -> Tensor:
    """``softmax`` / ``log_softmax`` of a float tensor along ``dim`` built from reductions and
    elementwise ops (any device; autograd gives the gradient). The row maximum is subtracted
    first, so large logits do not overflow; it carries no gradient since the result does not
    depend on it."""
    if x.ndim == 0:
        return softmax_composite(x.reshape(1), 0, log).reshape(())
    with grad_mode.no_grad():
        m = x.amax(dim, keepdim=True)
    z = x - m
    e = z.exp()
    if log:
        return z - e.sum(dim, keepdim=True).log()
    return e / e.sum(dim, keepdim=True)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim`` (one fused kernel forward and backward).

    Example:
        >>> import dynagrad as dg
        >>> softmax(dg.tensor([[1.0, 1.0, 1.0, 1.0]]), dim=-1)
        tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
    """
    return _softmax(input, dim, dtype, False)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype=None) -> Tensor:
    """``x - logsumexp(x)`` along ``dim`` (one fused kernel forward and backward)."""
    return _softmax(input, dim, dtype, True)



register("softmax", softmax, "nn")
register("log_softmax", log_softmax, "nn")
