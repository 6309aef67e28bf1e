"""Max, average and adaptive pooling over 1-D and 2-D inputs, and max and average pooling over 3-D
inputs, as in ``torch.nn.functional``.

Each pooling window is described per axis by its first in-range tap, its number of in-range
taps and the tap step, computed here in NumPy; the generated kernels
(``dynagrad/kernels/cpu/nn/conv.py``) then loop over ``(N * C, H, W)`` planes. 1-D pooling is 2-D
pooling with ``H == 1``. Max pooling records the flat index ``h * W + w`` of each maximum (returned
with ``return_indices=True``, as PyTorch) and its backward scatters the gradient to those indices.
Double backward is not supported and raises. CUDA tensors take ``max_pool_composite`` and
``avg_pool_composite`` (``conv_composite.py``): the same windows gathered with ops. 3-D pooling
always takes that composed form (gathers, an argmax or a masked sum), on every device: its
gradients, second order included, come from those ops.

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.nn.functional as F
    >>> F.max_pool2d(dg.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..._runtime.blas_threads import run_split
from ...autograd import grad_mode
from ...autograd.function import Node, record
from ...dtypes import int64
from ...errors import describe
from ...kernels.cpu.backend import type_name
from ...tensor import Tensor, _wrap
from ..elementwise import where
from ..placement import like
from ..registry import register
from ._placement import composed, index_table
from .conv import _float_array, _kernel, _no_double_backward, _tuple
from .conv_composite import (_gather_axes, avg_pool_composite, clamped_taps,
                             max_pool_composite)

__all__ = ["max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d", "max_pool3d",
           "avg_pool3d"]


# --- window geometry ----------------------------------------------------------------------------

def _out_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    span = n + 2 * p - d * (k - 1) - 1
    o = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= n + p:  # the last window must start inside input or left pad
        o -= 1
    return o


def _frozen(*arrays: np.ndarray) -> tuple:
    """``arrays`` made read-only: the window tables below are cached and shared by every call
    with the same sizes (computing them took about half of a small pooling call's time)."""
    for a in arrays:
        a.flags.writeable = False
    return arrays


@functools.lru_cache(maxsize=256)
def _max_windows(n: int, o: int, k: int, s: int, p: int, d: int):
    """First in-range tap and number of in-range taps of each dilated window along one axis."""
    start = np.arange(o, dtype=np.int64) * s - p
    first = np.where(start < 0, (-start + d - 1) // d, 0)           # first tap index >= 0
    last = np.minimum(k - 1, np.floor_divide(n - 1 - start, d))      # last tap index < n
    count = np.maximum(last - first + 1, 0)
    # an empty window (possible only in degenerate dilated cases) still needs an in-range index
    return _frozen(np.clip(start + first * d, 0, n - 1), count)


@functools.lru_cache(maxsize=256)
def _avg_windows(n: int, o: int, k: int, s: int, p: int):
    """``(first, count, size_with_padding)`` of each window along one axis, as PyTorch counts."""
    start = np.arange(o, dtype=np.int64) * s - p
    end = np.minimum(start + k, n + p)
    with_pad = end - start
    first = np.maximum(start, 0)
    count = np.maximum(np.minimum(end, n) - first, 0)
    return _frozen(first, count, with_pad)


@functools.lru_cache(maxsize=256)
def _adaptive_windows(n: int, o: int):
    i = np.arange(o, dtype=np.int64)
    start = (i * n) // o
    end = ((i + 1) * n + o - 1) // o
    return _frozen(start, end - start)


def _planes(op: str, x, nsp: int):
    """``x`` as a C-contiguous ``(B, H, W)`` array (a ``(B, H, W)`` tensor for a CUDA ``x``) plus
    the leading shape ``(N, C)`` or ``(C,)``."""
    _float_array(x, op, "input")
    if x.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"{op}: Expected {nsp + 1}D or {nsp + 2}D (batch mode) tensor for "
                           f"input, but got {describe(x)}")
    lead = tuple(x.shape[:x.ndim - nsp])
    spatial = tuple(x.shape[x.ndim - nsp:])
    if any(n == 0 for n in spatial):
        raise RuntimeError(f"{op}: Expected input's non-batch dimensions to have positive length, "
                           f"but got {describe(x)}")
    h, w = (1,) + spatial if nsp == 1 else spatial
    b = int(np.prod(lead))
    if composed(x):
        return x.reshape(b, h, w), lead
    return np.ascontiguousarray(x._data).reshape(b, h, w), lead


def _pool_args(op: str, nsp: int, kernel_size, stride, padding, dilation=1):
    k = _tuple(kernel_size, nsp, op, "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _tuple(stride, nsp, op, "stride")
    p = _tuple(padding, nsp, op, "padding")
    d = _tuple(dilation, nsp, op, "dilation")
    if any(v <= 0 for v in k):
        raise RuntimeError(f"{op}: kernel_size must be greater than zero, but got {k}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"{op}: stride must be greater than zero, but got {s}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"{op}: dilation must be greater than zero, but got {d}")
    if any(v < 0 or v > kk // 2 for v, kk in zip(p, k)):
        raise RuntimeError(f"{op}: pad should be at most half of effective kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    return k, s, p, d


def _check_out(op: str, spatial: tuple, out: tuple) -> None:
    if any(o <= 0 for o in out):
        raise RuntimeError(f"{op}: Given input size: {spatial}. Calculated output size: {out}. "
                           "Output size is too small")


def _axes(nsp: int, spatial, out, k=(1, 1), s=(1, 1), p=(0, 0), d=(1, 1)):
    """``(n, o, k, s, p, d)`` for the H and the W axis; a 1-D pool runs the 2-D kernels with a unit
    H axis (size 1, one window of one tap)."""
    axes = tuple(zip(spatial, out, k, s, p, d))
    return ((1, 1, 1, 1, 0, 1),) + axes if nsp == 1 else axes


# --- max pooling --------------------------------------------------------------------------------

# Pooling of at least this many input elements runs its planes in slices on all cores
# (``run_split``, the pool the convolutions' GEMMs just used): from this size one core's pass
# costs more than the split's hand-off. Smaller pools run on the calling thread.
SPLIT_MIN_ELEMENTS = 1 << 20


class MaxPoolBackward(Node):
    def backward(self, g, _g_indices=None):
        _no_double_backward(self, self.op)
        idx = self.idx.reshape(self.idx.shape[0], math.prod(self.idx.shape[1:]))
        gd = np.ascontiguousarray(g._data).reshape(idx.shape)
        gx = np.empty((self.idx.shape[0], self.plane), gd.dtype)
        kernel = _kernel("max_pool_backward", type_name(gd.dtype))

        def planes(lo: int, hi: int) -> None:
            gx[lo:hi] = 0  # the kernel adds into it
            kernel(gd[lo:hi], idx[lo:hi], gx[lo:hi])
        run_split(gx.shape[0], planes, split=gx.size >= SPLIT_MIN_ELEMENTS)
        return (_wrap(gx.reshape(self.in_shape), g.dtype),)


# one node class per op, so ``grad_fn`` names the op (e.g. ``MaxPool2DWithIndicesBackward0``)
_MAX_NODES = {op: type(name, (MaxPoolBackward,), {}) for op, name in (
    ("max_pool1d", "MaxPool1DBackward0"), ("max_pool2d", "MaxPool2DWithIndicesBackward0"),
    ("adaptive_max_pool1d", "AdaptiveMaxPool1DBackward0"),
    ("adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0"))}


def _max_pool(op: str, x, hs, hk, ws, wk, dh: int, dw: int, planes, lead, out_sp,
              return_indices: bool, pairs: bool = False):
    """``pairs``: every window is a whole 2x2 block at stride 2 (``max_pool_2x2`` applies)."""
    if composed(x):
        res, idx = max_pool_composite(planes, clamped_taps(hs, hk, dh), clamped_taps(ws, wk, dw))
        res = res.reshape(lead + out_sp)
        return (res, idx.reshape(lead + out_sp)) if return_indices else res
    b = planes.shape[0]
    out = np.empty((b, hs.shape[0], ws.shape[0]), planes.dtype)
    idx = np.empty(out.shape, np.int64)
    split = planes.size >= SPLIT_MIN_ELEMENTS
    if pairs:
        pair_kernel = _kernel("max_pool_2x2", type_name(planes.dtype))
        run_split(b, lambda lo, hi: pair_kernel(planes[lo:hi], out[lo:hi], idx[lo:hi]),
                  split=split)
    else:
        kernel = _kernel("max_pool", type_name(planes.dtype))
        run_split(b, lambda lo, hi: kernel(planes[lo:hi], hs, hk, ws, wk, dh, dw, out[lo:hi],
                                           idx[lo:hi]), split=split)
    res = _wrap(out.reshape(lead + out_sp), x.dtype)
    if x._requires_grad and grad_mode.GRAD_ENABLED[0]:
        node = _MAX_NODES[op]()
        node.op, node.idx = op, idx
        node.plane, node.in_shape = planes.shape[1] * planes.shape[2], tuple(x.shape)
        record(node, (x,), (res,))
    if return_indices:
        return res, _wrap(idx.reshape(lead + out_sp), int64)
    return res


def _max_poolnd(op, nsp, input, kernel_size, stride, padding, dilation, ceil_mode,
                return_indices):
    planes, lead = _planes(op, input, nsp)
    k, s, p, d = _pool_args(op, nsp, kernel_size, stride, padding, dilation)
    spatial = tuple(input.shape[input.ndim - nsp:])
    out_sp = tuple(_out_size(*a, ceil_mode) for a in zip(spatial, k, s, p, d))
    _check_out(op, spatial, out_sp)
    ax_h, ax_w = _axes(nsp, spatial, out_sp, k, s, p, d)
    hs, hk = _max_windows(*ax_h)
    ws, wk = _max_windows(*ax_w)
    pairs = (nsp == 2 and k == (2, 2) and s == (2, 2) and p == (0, 0) and d == (1, 1)
             and all(2 * o <= n for o, n in zip(out_sp, spatial)))
    return _max_pool(op, input, hs, hk, ws, wk, ax_h[5], ax_w[5], planes, lead, out_sp,
                     return_indices, pairs)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``; ``stride`` defaults to ``kernel_size``.

    Example:
        >>> import dynagrad as dg
        >>> max_pool1d(dg.tensor([[[1.0, 3.0, 2.0, 5.0]]]), 2).tolist()
        [[[3.0, 5.0]]]
    """
    return _max_poolnd("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)``; with ``return_indices`` also the
    flat index ``h * W + w`` of each maximum.

    Example:
        >>> import dynagrad as dg
        >>> out, idx = max_pool2d(dg.arange(9.0).reshape(1, 1, 3, 3), 2, 1, return_indices=True)
        >>> idx.tolist()
        [[[[4, 5], [7, 8]]]]
    """
    return _max_poolnd("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices)


# --- average pooling ----------------------------------------------------------------------------

class AvgPoolBackward(Node):
    def backward(self, g):
        _no_double_backward(self, self.op)
        hs, hk, ws, wk, scale = self.windows
        gd = np.ascontiguousarray(g._data).reshape(-1, hs.shape[0], ws.shape[0])
        gx = np.empty((gd.shape[0],) + self.plane, gd.dtype)
        if _whole_pairs(hs, hk, ws, wk):
            pair_kernel = _kernel("avg_pool_2x2_backward", type_name(gd.dtype))

            def planes(lo: int, hi: int) -> None:
                pair_kernel(gd[lo:hi], scale, gx[lo:hi])
        else:
            kernel = _kernel("avg_pool_backward", type_name(gd.dtype))

            def planes(lo: int, hi: int) -> None:
                gx[lo:hi] = 0  # the kernel adds into it
                kernel(gd[lo:hi], hs, hk, ws, wk, scale, gx[lo:hi])
        run_split(gx.shape[0], planes, split=gx.size >= SPLIT_MIN_ELEMENTS)
        return (_wrap(gx.reshape(self.in_shape), g.dtype),)


def _whole_pairs(hs: np.ndarray, hk: np.ndarray, ws: np.ndarray, wk: np.ndarray) -> bool:
    """Whether every window is a whole 2x2 block at stride 2 (``avg_pool_2x2`` applies)."""
    return all((k == 2).all() and np.array_equal(s, np.arange(0, 2 * s.shape[0], 2))
               for s, k in ((hs, hk), (ws, wk)))


_AVG_NODES = {op: type(name, (AvgPoolBackward,), {}) for op, name in (
    ("avg_pool1d", "AvgPool1DBackward0"), ("avg_pool2d", "AvgPool2DBackward0"),
    ("adaptive_avg_pool1d", "AdaptiveAvgPool1DBackward0"),
    ("adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0"))}


def _avg_pool(op: str, x, windows, planes, lead, out_sp) -> Tensor:
    hs, hk, ws, wk, scale = windows
    if composed(x):
        return avg_pool_composite(planes, clamped_taps(hs, hk), hk, clamped_taps(ws, wk), wk,
                                  scale).reshape(lead + out_sp)
    out = np.empty((planes.shape[0], hs.shape[0], ws.shape[0]), planes.dtype)
    split = planes.size >= SPLIT_MIN_ELEMENTS
    if _whole_pairs(hs, hk, ws, wk):
        pair_kernel = _kernel("avg_pool_2x2", type_name(planes.dtype))
        run_split(out.shape[0], lambda lo, hi: pair_kernel(planes[lo:hi], scale, out[lo:hi]),
                  split=split)
    else:
        kernel = _kernel("avg_pool", type_name(planes.dtype))
        run_split(out.shape[0], lambda lo, hi: kernel(planes[lo:hi], hs, hk, ws, wk, scale,
                                                      out[lo:hi]), split=split)
    res = _wrap(out.reshape(lead + out_sp), x.dtype)
    if x._requires_grad and grad_mode.GRAD_ENABLED[0]:
        node = _AVG_NODES[op]()
        node.op, node.windows, node.plane, node.in_shape = op, windows, planes.shape[1:], x.shape
        record(node, (x,), (res,))
    return res


def _avg_poolnd(op, nsp, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override) -> Tensor:
    planes, lead = _planes(op, input, nsp)
    k, s, p, _ = _pool_args(op, nsp, kernel_size, stride, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{op}: divisor must be not zero")
    spatial = tuple(input.shape[input.ndim - nsp:])
    out_sp = tuple(_out_size(n, kk, ss, pp, 1, ceil_mode) for n, kk, ss, pp in
                   zip(spatial, k, s, p))
    _check_out(op, spatial, out_sp)
    ax_h, ax_w = _axes(nsp, spatial, out_sp, k, s, p)
    hs, hk, hp = _avg_windows(*ax_h[:5])
    ws, wk, wp = _avg_windows(*ax_w[:5])
    o_h, o_w = ax_h[1], ax_w[1]
    if divisor_override is not None:
        divisor = np.full((o_h, o_w), float(divisor_override))
    elif count_include_pad:
        divisor = np.outer(hp, wp).astype(np.float64)
    else:
        divisor = np.outer(hk, wk).astype(np.float64)
    # a window entirely in the padding sums nothing; its output is 0 as in PyTorch
    scale = np.divide(1.0, divisor, out=np.zeros_like(divisor), where=divisor != 0)
    scale[np.outer(hk, wk) == 0] = 0.0
    return _avg_pool(op, input, (hs, hk, ws, wk, scale), planes, lead, out_sp)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True) -> Tensor:
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)``.

    Example:
        >>> import dynagrad as dg
        >>> avg_pool1d(dg.tensor([[[1.0, 3.0, 2.0, 6.0]]]), 2).tolist()
        [[[2.0, 4.0]]]
    """
    return _avg_poolnd("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """2-D average pooling over ``(N, C, H, W)`` or ``(C, H, W)``. Zero padding counts in the
    divisor when ``count_include_pad``; ``divisor_override`` replaces the divisor.

    Example:
        >>> import dynagrad as dg
        >>> avg_pool2d(dg.ones(1, 1, 2, 2), 2, padding=1, count_include_pad=False).tolist()
        [[[[1.0, 1.0], [1.0, 1.0]]]]
    """
    return _avg_poolnd("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, divisor_override)


# --- adaptive pooling ---------------------------------------------------------------------------

def _adaptive_size(op: str, output_size, nsp: int, spatial: tuple) -> tuple:
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size,) * nsp
    output_size = tuple(output_size)
    if len(output_size) == 1 and nsp > 1:
        output_size = output_size * nsp
    if len(output_size) != nsp:
        raise RuntimeError(f"{op}: output_size must be {nsp} integers, got {output_size!r}")
    out = tuple(n if o is None else int(o) for o, n in zip(output_size, spatial))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{op}: output_size must be non-negative, got {out}")
    return out


def _adaptive(op: str, nsp: int, input, output_size, kind: str, return_indices: bool = False):
    planes, lead = _planes(op, input, nsp)
    spatial = tuple(input.shape[input.ndim - nsp:])
    out_sp = _adaptive_size(op, output_size, nsp, spatial)
    if kind == "avg" and out_sp == (1,) * nsp:
        # global average pooling (ResNet's head) is a mean over the spatial dims: one fold, and a
        # backward without the window tables, several times faster than the general pool
        return input.mean(tuple(range(-nsp, 0)), keepdim=True)
    ax_h, ax_w = _axes(nsp, spatial, out_sp)
    hs, hk = _adaptive_windows(*ax_h[:2])
    ws, wk = _adaptive_windows(*ax_w[:2])
    if kind == "max":
        return _max_pool(op, input, hs, hk, ws, wk, 1, 1, planes, lead, out_sp, return_indices)
    scale = 1.0 / np.outer(hk, wk).astype(np.float64)
    return _avg_pool(op, input, (hs, hk, ws, wk, scale), planes, lead, out_sp)


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    """Average pooling to a fixed output length: window ``i`` covers
    ``[floor(i * L / out), ceil((i + 1) * L / out))``.

    Example:
        >>> import dynagrad as dg
        >>> adaptive_avg_pool1d(dg.tensor([[[1.0, 2.0, 3.0, 4.0]]]), 2).tolist()
        [[[1.5, 3.5]]]
    """
    return _adaptive("adaptive_avg_pool1d", 1, input, output_size, "avg")


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """Average pooling to a fixed ``(out_h, out_w)`` (an int means square; ``None`` keeps that
    input size).

    Example:
        >>> import dynagrad as dg
        >>> adaptive_avg_pool2d(dg.ones(2, 3, 5, 7), 1).shape
        dynagrad.Size([2, 3, 1, 1])
    """
    return _adaptive("adaptive_avg_pool2d", 2, input, output_size, "avg")


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling to a fixed output length; see ``adaptive_avg_pool1d``.

    Example:
        >>> import dynagrad as dg
        >>> adaptive_max_pool1d(dg.tensor([[[1.0, 2.0, 3.0, 4.0]]]), 2).tolist()
        [[[2.0, 4.0]]]
    """
    return _adaptive("adaptive_max_pool1d", 1, input, output_size, "max", return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed ``(out_h, out_w)``; with ``return_indices`` also the flat indices.

    Example:
        >>> import dynagrad as dg
        >>> adaptive_max_pool2d(dg.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
        [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return _adaptive("adaptive_max_pool2d", 2, input, output_size, "max", return_indices)


# --- 3-D pooling (composed of ops) ---------------------------------------------------------------

def _volumes(op: str, x) -> tuple:
    """``x`` as ``(B, D, H, W)`` plus its leading shape ``(N, C)`` or ``(C,)``, after the checks."""
    _float_array(x, op, "input")
    if x.ndim not in (4, 5):
        raise RuntimeError(f"{op}: Expected 4D or 5D (batch mode) tensor for input, but got "
                           f"{describe(x)}")
    if any(n == 0 for n in x.shape[-3:]):
        raise RuntimeError(f"{op}: Expected input's non-batch dimensions to have positive length, "
                           f"but got {describe(x)}")
    lead = tuple(x.shape[:-3])
    return x.reshape((math.prod(lead),) + tuple(x.shape[-3:])), lead


def _windows3d(vol: Tensor, taps: list) -> Tensor:
    """``(B, oD, oH, oW, kD * kH * kW)``: the window values of ``vol`` for the per-axis tap
    tables ``taps`` ``(o, k)``, taps in scan order (d, then h, then w)."""
    (od, kd), (oh, kh), (ow, kw) = (t.shape for t in taps)
    v = _gather_axes(vol, 1, taps).reshape(-1, od, kd, oh, kh, ow, kw)
    return v.permute(0, 1, 3, 5, 2, 4, 6).reshape(-1, od, oh, ow, kd * kh * kw)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``; with ``return_indices`` also
    the flat index ``d * H * W + h * W + w`` of each maximum (its first occurrence, which alone
    receives the gradient).

    Example:
        >>> import dynagrad as dg
        >>> out, idx = max_pool3d(dg.arange(8.0).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
        >>> out.tolist(), idx.tolist()
        ([[[[[7.0]]]]], [[[[[7]]]]])
    """
    op = "max_pool3d"
    vol, lead = _volumes(op, input)
    k, s, p, d = _pool_args(op, 3, kernel_size, stride, padding, dilation)
    spatial = tuple(input.shape[-3:])
    out_sp = tuple(_out_size(*a, ceil_mode) for a in zip(spatial, k, s, p, d))
    _check_out(op, spatial, out_sp)
    taps = [clamped_taps(*_max_windows(*a), a[5]) for a in zip(spatial, out_sp, k, s, p, d)]
    v = _windows3d(vol, taps)
    arg = v.detach().argmax(-1, keepdim=True)
    out = v.gather(-1, arg).squeeze(-1).reshape(lead + out_sp)
    if not return_indices:
        return out
    (td, th, tw), (_, h, w) = taps, spatial
    flat = (td[:, None, None, :, None, None] * (h * w) + th[None, :, None, None, :, None] * w
            + tw[None, None, :, None, None, :]).reshape((1,) + out_sp + (-1,))
    idx = index_table(flat, vol).expand(tuple(v.shape)).gather(-1, arg).squeeze(-1)
    return out, idx.reshape(lead + out_sp)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """3-D average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``; the divisor counts the
    zero padding when ``count_include_pad``, ``divisor_override`` replaces it.

    Example:
        >>> import dynagrad as dg
        >>> avg_pool3d(dg.arange(8.0).reshape(1, 1, 2, 2, 2), 2).tolist()
        [[[[[3.5]]]]]
    """
    op = "avg_pool3d"
    vol, lead = _volumes(op, input)
    k, s, p, _ = _pool_args(op, 3, kernel_size, stride, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{op}: divisor must be not zero")
    spatial = tuple(input.shape[-3:])
    out_sp = tuple(_out_size(n, kk, ss, pp, 1, ceil_mode) for n, kk, ss, pp in
                   zip(spatial, k, s, p))
    _check_out(op, spatial, out_sp)
    wins = [_avg_windows(*a) for a in zip(spatial, out_sp, k, s, p)]   # (first, count, with pad)
    taps = [clamped_taps(first, count) for first, count, _ in wins]
    v = _windows3d(vol, taps)
    # a short window repeats its last tap: the mask keeps each in-range tap once
    valid = [np.arange(t.shape[1])[None, :] < count[:, None] for t, (_, count, _) in
             zip(taps, wins)]
    mask = (valid[0][:, None, None, :, None, None] & valid[1][None, :, None, None, :, None]
            & valid[2][None, None, :, None, None, :]).reshape((1,) + out_sp + (-1,))
    if not mask.all():
        v = where(like(mask, v), v, 0.0)
    if divisor_override is not None:
        divisor = np.full(out_sp, float(divisor_override))
    else:
        per_axis = [w[2] if count_include_pad else w[1] for w in wins]
        divisor = np.einsum("i,j,k->ijk", *per_axis).astype(np.float64)
    # a window entirely in the padding sums nothing; its output is 0 as in PyTorch
    scale = np.divide(1.0, divisor, out=np.zeros_like(divisor), where=divisor != 0)
    return (v.sum(-1) * like(scale, v, v.dtype)).reshape(lead + out_sp)


# the functional forms with a torch.<name> of the same arguments are dg.<name> too
register("max_pool1d", max_pool1d, "nn", method=False)
register("max_pool2d", max_pool2d, "nn", method=False)
register("avg_pool1d", avg_pool1d, "nn", method=False)
register("avg_pool2d", avg_pool2d, "nn", method=False, functional=False)
register("adaptive_avg_pool1d", adaptive_avg_pool1d, "nn", method=False)
register("adaptive_avg_pool2d", adaptive_avg_pool2d, "nn", method=False, functional=False)
register("adaptive_max_pool1d", adaptive_max_pool1d, "nn", method=False)
register("adaptive_max_pool2d", adaptive_max_pool2d, "nn", method=False, functional=False)
register("max_pool3d", max_pool3d, "nn", method=False)
register("avg_pool3d", avg_pool3d, "nn", method=False, functional=False)
