"""``linear``: the affine map behind ``nn.Linear`` (``bilinear`` composes ops in ``nn.functional``).

``linear`` is one GEMM on the input flattened to 2-D plus an in-place bias add, with a fused
backward node: ``grad_x = g @ W``, ``grad_W = g^T @ x``, ``grad_b = g.sum(0)`` (2-D products by
``ops.linalg.matmul_2d``, on BLAS or register tiles, whichever is faster for the shape; no batched
products, no broadcast reductions). On CUDA, ``linear_composite`` runs the same products as ops.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.ops.nn.linear import linear
    >>> linear(dg.ones(2, 3), dg.ones(4, 3), dg.zeros(4)).shape
    dynagrad.Size([2, 4])
"""
from __future__ import annotations

import math

import numpy as np

from ...autograd import grad_mode
from ...autograd.function import Node, record
from ...dtypes import float32, float64
from ...errors import describe
from ...kernels.cpu import backend as cpu, memory
from ...kernels.cpu.gemm.products import matmul_2d
from ..linalg import matmul
from ...tensor import Tensor, _wrap
from ..registry import register
from ._placement import composed

__all__ = ["linear"]


class _LinearBackward(Node):
    """Backward of ``x @ W^T + b`` for float32/float64 with a 2-D weight."""

    def backward(self, g):
        x, w = self.saved_tensors
        n_in, n_out = w.shape[1], w.shape[0]
        rows = math.prod(tuple(x.shape)[:-1])   # not -1: ambiguous when a size is 0
        want_x, want_w, want_b = (e is not None for e in self.next_functions)
        if grad_mode.GRAD_ENABLED[0]:  # create_graph: the same formulas with dynagrad ops
            g2 = g.reshape(rows, n_out)
            gx = matmul(g2, w).reshape(tuple(x.shape)) if want_x else None
            gw = matmul(g2.mT, x.reshape(rows, n_in)) if want_w else None
            gb = g2.sum(0) if want_b else None
            return gx, gw, gb
        dt = g.dtype
        gd = g._data.reshape(rows, n_out)
        gx = gw = None
        if want_x:
            gx = matmul_2d(gd, w._data, out=_product_out(gd.shape[0], n_in, gd.dtype))
            gx = _wrap(gx.reshape(x._data.shape), dt)
        if want_w:
            x2 = x._data.reshape(rows, n_in)
            gw = _wrap(matmul_2d(gd.T, x2, out=_product_out(n_out, n_in, gd.dtype)), dt)
        gb = _wrap(column_sums(gd), dt) if want_b else None
        return gx, gw, gb


def column_sums(a: np.ndarray) -> np.ndarray:
    """``a.sum(0)`` of a 2-D float array as a BLAS product with a ones vector: faster than
    NumPy's row-by-row reduction."""
    return np.ones(a.shape[0], a.dtype) @ a


def _product_out(rows: int, cols: int, dtype) -> np.ndarray | None:
    """A pooled ``(rows, cols)`` output for a product too large for malloc to keep (see
    ``kernels.memory``), else None (NumPy allocates): a freshly mapped output page-faults on
    first write, where a reused one does not."""
    if rows * cols * dtype.itemsize < memory.POOL_MIN_BYTES:
        return None
    return memory.empty((rows, cols), dtype)


class AddmmBackward0(_LinearBackward):
    pass


class MmBackward0(_LinearBackward):
    pass


def _check_linear(x, weight, bias) -> None:
    for name, t in (("input", x), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linear(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"linear(): argument 'bias' must be Tensor, not {type(bias).__name__}")
    if x.ndim == 0 or weight.ndim not in (1, 2):
        raise RuntimeError(f"linear(): expected input with at least 1 dim and a 1-D or 2-D weight "
                           f"(got input {describe(x)}, weight {describe(weight)})")
    if x.shape[-1] != weight.shape[-1]:
        rows = x.numel() // x.shape[-1] if x.shape[-1] else 0
        w_shape = tuple(weight.shape)[::-1]
        raise RuntimeError(f"linear(): mat1 and mat2 shapes cannot be multiplied "
                           f"({rows}x{x.shape[-1]} and {'x'.join(map(str, w_shape))}) "
                           f"(input {describe(x)}, weight {describe(weight)})")
    if x.dtype is not weight.dtype or (bias is not None and bias.dtype is not x.dtype):
        raise RuntimeError("linear(): expected input, weight and bias to have the same dtype, but "
                           f"got input {describe(x)}, weight {describe(weight)}, bias "
                           f"{describe(bias)}")


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: input (*, in), weight (out, in), bias (out,) -> (*, out)."""
    _check_linear(input, weight, bias)
    dt = input.dtype
    if composed(input, weight, bias):
        return linear_composite(input, weight, bias)
    if weight.ndim != 2 or not (dt is float32 or dt is float64) or (
            bias is not None and tuple(bias.shape) != (weight.shape[0],)):
        # rare forms (1-D weight, float16, a broadcasting bias) compose the generic ops
        out = matmul(input, weight.mT if weight.ndim == 2 else weight)
        return out if bias is None else out + bias
    n_out, n_in = weight.shape
    xd = input._data
    x2 = xd.reshape(math.prod(xd.shape[:-1]), n_in)  # -1 is ambiguous when n_in == 0
    res = matmul_2d(x2, weight._data.T, out=_product_out(x2.shape[0], n_out, x2.dtype))
    if bias is not None:  # the GEMM result is fresh: add in place, no temporary
        cpu.add_rows(res, bias._data)
    out = _wrap(res.reshape(xd.shape[:-1] + (n_out,)), dt)
    if grad_mode.GRAD_ENABLED[0] and (input._requires_grad or weight._requires_grad
                                      or (bias is not None and bias._requires_grad)):
        node = MmBackward0() if bias is None else AddmmBackward0()
        node.save(input, weight)
        record(node, (input, weight, bias), (out,))
    return out


def linear_composite(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``linear`` from ``matmul`` and an add (any device; autograd gives the gradients). A 2-D
    weight multiplies the input flattened to 2-D, so the weight gradient is one product, not a
    batched one summed."""
    if weight.ndim == 2 and input.ndim > 2 and (bias is None or bias.ndim <= 1):
        flat = linear_composite(input.reshape(-1, input.shape[-1]), weight, bias)
        return flat.reshape(tuple(input.shape[:-1]) + (weight.shape[0],))
    out = matmul(input, weight.mT if weight.ndim == 2 else weight)
    return out if bias is None else out + bias


# the functional forms with a torch.<name> of the same arguments are dg.<name> too
register("linear", linear, "nn", method=False, functional=False)
