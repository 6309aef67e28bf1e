"""Pooling (torch.nn.functional's names and signatures): the registered max, average and adaptive
pooling ops of ``dynagrad.ops.nn.pooling`` re-exported, and compositions of ops written here:
3-D adaptive pooling, fractional max pooling, power-average (LP) pooling and max unpooling.

The compositions gather each pooling window from the flattened spatial dims (one int64 table of
flat positions per call) and take an argmax or a masked mean, so their gradients, second order
and CUDA tensors come from those ops.

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.nn.functional as F
    >>> out, idx = F.max_pool1d(dg.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2, return_indices=True)
    >>> F.max_unpool1d(out, idx, 2).tolist()
    [[[0.0, 3.0, 2.0, 0.0]]]
"""
from __future__ import annotations

import math

import numpy as np

from ...creation import zeros
from ...dtypes import int64
from ...errors import describe
from ...ops.nn._placement import index_table
from ...ops.nn.conv_composite import clamped_taps
from ...ops.nn.pooling import (
    _adaptive_size,
    _adaptive_windows,
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from ...ops.placement import like
from ...random import rand
from ...tensor import Tensor

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
           "fractional_max_pool2d", "fractional_max_pool3d", "lp_pool1d", "lp_pool2d",
           "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _tuple(v, n: int) -> tuple:
    return tuple(int(a) for a in v) if isinstance(v, (tuple, list)) else (int(v),) * n


def _spatial_input(op: str, input, nsp: int, message: str | None = None) -> tuple:
    """``(planes (B, S), lead shape, spatial shape)`` of an ``(N, C, *sp)`` or ``(C, *sp)`` input
    after PyTorch's checks (floating dtype, rank, non-empty spatial dims)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(message or f"{op}(): Expected {nsp + 1}D or {nsp + 2}D tensor, but "
                           f"got: {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating-point input, got {describe(input)}")
    spatial = tuple(input.shape[input.ndim - nsp:])
    if any(n == 0 for n in spatial):
        raise RuntimeError(f"{op}: Expected input's non-batch dimensions to have positive "
                           f"length, but got {describe(input)}")
    lead = tuple(input.shape[:input.ndim - nsp])
    return input.reshape(math.prod(lead), math.prod(spatial)), lead, spatial


def _box(per_axis: list, combine) -> np.ndarray:
    """``(prod(o), prod(k))``: the per-axis tables ``(o, k)`` combined over every box window
    (outputs row-major, then taps row-major) with the ufunc ``combine``."""
    nsp = len(per_axis)
    acc = None
    for a, t in enumerate(per_axis):
        shape = [1] * (2 * nsp)
        shape[a], shape[nsp + a] = t.shape
        acc = t.reshape(shape) if acc is None else combine(acc, t.reshape(shape))
    return acc.reshape(math.prod(t.shape[0] for t in per_axis), -1)


def _box_table(taps: list, spatial: tuple) -> np.ndarray:
    """Flat positions ``(prod(o), prod(k))`` of box windows from per-axis tap tables ``(o, k)``."""
    strides = [math.prod(spatial[a + 1:]) for a in range(len(taps))]
    return _box([t * st for t, st in zip(taps, strides)], np.add)


def _window_max(planes: Tensor, table: Tensor, lead: tuple, out_sp: tuple, return_indices: bool):
    """Max over the windows whose flat positions are ``table`` ``(B or 1, O, K)``; the first
    maximum of each window gets the gradient and gives the returned index."""
    b, (o, k) = planes.shape[0], table.shape[1:]
    idx = table.reshape(table.shape[0], o * k).expand((b, o * k))
    v = planes.gather(1, idx).reshape(b, o, k)
    arg = v.detach().argmax(-1, keepdim=True)
    out = v.gather(-1, arg).reshape(lead + out_sp)
    if not return_indices:
        return out
    return out, idx.reshape(b, o, k).gather(-1, arg).reshape(lead + out_sp)


def _adaptive3d(op: str, input, output_size, kind: str, return_indices: bool = False):
    planes, lead, spatial = _spatial_input(op, input, 3)
    out_sp = _adaptive_size(op, output_size, 3, spatial)
    wins = [_adaptive_windows(n, o) for n, o in zip(spatial, out_sp)]
    table = _box_table([clamped_taps(first, count) for first, count in wins], spatial)
    if kind == "max":
        return _window_max(planes, index_table(table[None], planes), lead, out_sp,
                           return_indices)
    # a short window repeats its last tap: the weight is 1 / window size on each in-range tap
    # once, 0 on the repeats
    weight = _box([(np.arange(t.shape[1])[None, :] < c[:, None]) / c[:, None].astype(np.float64)
                   for t, (_, c) in zip([clamped_taps(*w) for w in wins], wins)], np.multiply)
    v = planes.gather(1, index_table(table.reshape(1, -1), planes).expand(
        (planes.shape[0], table.size))).reshape((planes.shape[0],) + table.shape)
    return (v * like(weight, v, v.dtype)).sum(-1).reshape(lead + out_sp)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Average pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` to a fixed ``(oD, oH, oW)`` (an
    int means a cube; ``None`` keeps that input size): window ``i`` of an axis of length ``n``
    covers ``[floor(i * n / o), ceil((i + 1) * n / o))``.

    Example:
        >>> import dynagrad as dg
        >>> adaptive_avg_pool3d(dg.arange(8.0).reshape(1, 1, 2, 2, 2), 1).tolist()
        [[[[[3.5]]]]]
    """
    return _adaptive3d("adaptive_avg_pool3d", input, output_size, "avg")


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Max pooling to a fixed ``(oD, oH, oW)`` (windows of ``adaptive_avg_pool3d``); with
    ``return_indices`` also the flat index ``d * H * W + h * W + w`` of each maximum.

    Example:
        >>> import dynagrad as dg
        >>> adaptive_max_pool3d(dg.arange(8.0).reshape(1, 1, 2, 2, 2), (1, 1, 2)).tolist()
        [[[[[6.0, 7.0]]]]]
    """
    return _adaptive3d("adaptive_max_pool3d", input, output_size, "max", return_indices)


# --- fractional max pooling ----------------------------------------------------------------------

def _fractional_starts(samples: np.ndarray, n: int, o: int, k: int, dtype) -> np.ndarray:
    """Window starts ``(..., o)`` of fractional max pooling along one axis for the per-plane
    ``samples`` in ``[0, 1)``: ``int((i + u) * a) - int(u * a)`` with ``a = (n - k) / (o - 1)``
    computed in the input's dtype, and the last window flush with the end (as PyTorch)."""
    u = samples.astype(dtype)[..., None]
    starts = np.empty(samples.shape + (o,), dtype=np.int64)
    if o > 1:
        alpha = dtype(n - k) / dtype(o - 1)
        i = np.arange(o - 1, dtype=dtype)
        starts[..., :-1] = (((i + u) * alpha).astype(np.int64)
                            - (u * alpha).astype(np.int64))
    starts[..., -1] = n - k
    return starts


def _fractional(op: str, nsp: int, input, kernel_size, output_size, output_ratio,
                return_indices: bool, _random_samples):
    planes, lead, spatial = _spatial_input(
        op, input, nsp, f"{op}(): Expected {nsp + 1}D or {nsp + 2}D tensor, but got: "
        f"{list(input.shape) if isinstance(input, Tensor) else input}")
    k = _tuple(kernel_size, nsp)
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
        ratio = (tuple(float(r) for r in output_ratio) if isinstance(output_ratio, (tuple, list))
                 else (float(output_ratio),) * nsp)
        output_size = tuple(int(n * r) for n, r in zip(spatial, ratio))
    out_sp = _tuple(output_size, nsp)
    for n, o, kk in zip(spatial, out_sp, k):
        if o + kk - 1 > n:
            raise RuntimeError(f"{op}(): pool size {kk} too large relative to input size {n} "
                               f"for output size {o} (needs output + pool - 1 <= input)")
    n_batch = 1 if input.ndim == nsp + 1 else input.shape[0]
    channels = input.shape[-nsp - 1]
    if _random_samples is None:
        _random_samples = rand(n_batch, channels, nsp, dtype=input.dtype, device=input.device)
    samples = np.asarray(_random_samples.detach().cpu().numpy()).reshape(-1, nsp)
    if samples.shape[0] != planes.shape[0]:
        raise RuntimeError(f"{op}(): _random_samples must hold {nsp} values for each of the "
                           f"{planes.shape[0]} (batch, channel) planes, got "
                           f"{describe(_random_samples)}")
    # PyTorch's sample order: (w, h) in 2-D, (d, h, w) in 3-D
    order = (1, 0) if nsp == 2 else (0, 1, 2)
    ftype = input.dtype.np.type
    starts = [_fractional_starts(samples[:, order[a]], spatial[a], out_sp[a], k[a], ftype)
              for a in range(nsp)]
    strides = [math.prod(spatial[a + 1:]) for a in range(nsp)]
    flat = np.zeros((planes.shape[0],) + (1,) * (2 * nsp), dtype=np.int64)
    for a in range(nsp):
        shape = [planes.shape[0]] + [1] * (2 * nsp)
        shape[1 + a], shape[1 + nsp + a] = out_sp[a], k[a]
        taps = starts[a][:, :, None] + np.arange(k[a])[None, None, :]
        flat = flat + (taps * strides[a]).reshape(shape)
    table = like(flat.reshape(planes.shape[0], math.prod(out_sp), math.prod(k)), planes, int64)
    return _window_max(planes, table, lead, out_sp, return_indices)


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """Fractional max pooling (Graham, 2014) over ``(N, C, H, W)`` or ``(C, H, W)``: windows of
    ``kernel_size`` at pseudo-random, increasing starts that give ``output_size`` (or
    ``int(input_size * output_ratio)``). ``_random_samples`` ``(N, C, 2)`` in ``[0, 1)`` fixes
    the starts (``rand`` otherwise), as in PyTorch.

    Example:
        >>> import dynagrad as dg
        >>> fractional_max_pool2d(dg.randn(1, 2, 7, 7), 2, output_size=3).shape
        dynagrad.Size([1, 2, 3, 3])
    """
    return _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
                       return_indices, _random_samples)


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """Fractional max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``; see
    ``fractional_max_pool2d`` (``_random_samples`` is ``(N, C, 3)``).

    Example:
        >>> import dynagrad as dg
        >>> fractional_max_pool3d(dg.randn(1, 1, 5, 5, 5), 2, output_ratio=0.5).shape
        dynagrad.Size([1, 1, 2, 2, 2])
    """
    return _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
                       return_indices, _random_samples)


# --- power-average pooling ------------------------------------------------------------------------

def _lp_pool(nsp: int, pool, input, norm_type: float, kernel_size, stride, ceil_mode: bool):
    k = _tuple(kernel_size, nsp)
    if stride is None:
        stride = k
    out = pool(input.pow(norm_type), k, stride, 0, ceil_mode)
    # the window mean times the window size is the window sum; sign * relu(abs) keeps a
    # (rounding-)negative sum of odd powers from giving NaN with a defined gradient, as PyTorch
    return (out.sign() * out.abs().relu()).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over ``(N, C, L)``: ``(sum over window of x ** p) ** (1 / p)``
    (``p = inf`` is max pooling, ``p = 1`` sum pooling).

    Example:
        >>> import dynagrad as dg
        >>> lp_pool1d(dg.tensor([[[3.0, 4.0]]]), 2, 2).tolist()
        [[[5.0]]]
    """
    return _lp_pool(1, avg_pool1d, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over ``(N, C, H, W)``; see ``lp_pool1d``.

    Example:
        >>> import dynagrad as dg
        >>> lp_pool2d(dg.ones(1, 1, 2, 2), 1, 2).tolist()
        [[[[4.0]]]]
    """
    return _lp_pool(2, avg_pool2d, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over ``(N, C, D, H, W)``; see ``lp_pool1d``.

    Example:
        >>> import dynagrad as dg
        >>> lp_pool3d(dg.ones(1, 1, 2, 2, 2), 2, 2).tolist()
        [[[[[2.8284270763397217]]]]]
    """
    return _lp_pool(3, avg_pool3d, input, norm_type, kernel_size, stride, ceil_mode)


# --- max unpooling --------------------------------------------------------------------------------

def _unpool(op: str, nsp: int, input, indices, kernel_size, stride, padding, output_size):
    if not isinstance(input, Tensor) or not isinstance(indices, Tensor):
        raise TypeError(f"{op}(): input and indices must be Tensors")
    if input.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"{op}(): Expected {nsp + 1}D or {nsp + 2}D tensor for input, but "
                           f"got {describe(input)}")
    if indices.dtype != int64:
        raise RuntimeError(f"{op}(): elements in indices should be type int64 but got: "
                           f"{indices.dtype}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"{op}(): Expected shape of indices to be same as that of the input "
                           f"tensor ({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    k = _tuple(kernel_size, nsp)
    s = _tuple(stride if stride is not None else kernel_size, nsp)
    p = _tuple(padding, nsp)
    spatial = tuple(input.shape[-nsp:])
    if output_size is None:
        out_sp = tuple((n - 1) * ss - 2 * pp + kk for n, kk, ss, pp in zip(spatial, k, s, p))
    else:
        output_size = tuple(int(o) for o in output_size)
        if len(output_size) == nsp + 2:
            output_size = output_size[2:]
        if len(output_size) != nsp:
            raise ValueError(f"output_size should be a sequence containing {nsp} or {nsp + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        default = [(n - 1) * ss - 2 * pp + kk for n, kk, ss, pp in zip(spatial, k, s, p)]
        for o, d, ss in zip(output_size, default, s):
            if not d - ss < o < d + ss:
                raise ValueError(f"invalid output_size \"{list(output_size)}\" (dim {len(default)}"
                                 f" must be between {[a - b for a, b in zip(default, s)]} and "
                                 f"{[a + b for a, b in zip(default, s)]})")
        out_sp = output_size
    lead = tuple(input.shape[:-nsp])
    b, size = math.prod(lead), math.prod(out_sp)
    idx = indices.reshape(b, -1)
    if idx.numel() and (int(idx.max()) >= size or int(idx.min()) < 0):
        bad = int(idx.max()) if int(idx.max()) >= size else int(idx.min())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(str(o) for o in out_sp)})")
    out = zeros(b, size, dtype=input.dtype, device=input.device)
    return out.scatter(1, idx, input.reshape(b, -1)).reshape(lead + out_sp)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of ``max_pool1d``: each value of ``input`` goes to its flat position in
    ``indices`` of a zero output of length ``(L - 1) * stride - 2 * padding + kernel_size`` (or
    ``output_size``).

    Example:
        >>> import dynagrad as dg
        >>> max_unpool1d(dg.tensor([[[5.0]]]), dg.tensor([[[1]]]), 2).tolist()
        [[[0.0, 5.0]]]
    """
    return _unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of ``max_pool2d``; see ``max_unpool1d`` (flat ``h * W + w`` indices).

    Example:
        >>> import dynagrad as dg
        >>> max_unpool2d(dg.tensor([[[[5.0]]]]), dg.tensor([[[[3]]]]), 2).tolist()
        [[[[0.0, 0.0], [0.0, 5.0]]]]
    """
    return _unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of ``max_pool3d``; see ``max_unpool1d``
    (flat ``d * H * W + h * W + w`` indices).

    Example:
        >>> import dynagrad as dg
        >>> max_unpool3d(dg.ones(1, 1, 1, 1, 1), dg.tensor([[[[[7]]]]]), 2).sum().item()
        1.0
    """
    return _unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)
