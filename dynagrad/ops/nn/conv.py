"""Convolutions (1-D, 2-D, 3-D, transposed) and ``unfold``/``fold``, as in ``torch.nn.functional``.

All of them run one engine on 5-D arrays ``(N, C, D, H, W)`` (1-D and 2-D inputs get size-1 leading
spatial dims): a generated im2col kernel copies a few samples' input patches into a column buffer
that stays in the L2 cache, one BLAS GEMM per chunk multiplies it by the weight (all groups in one
batched ``np.matmul``), and the backward pass runs the GEMMs the other way and scatters the column
gradient back with col2im. float32 on AVX-512 runs the same steps per sample inside two compiled
kernels, the products on register tiles (``kernels/cpu/gemm/conv.py``). A transposed convolution is
the adjoint of a convolution, so it runs the same two routines swapped.

Double backward (``create_graph=True`` through a convolution) is not supported and raises.
CUDA tensors take the composed forms of ``conv_composite.py`` instead (gathers and matmuls, whose
autograd also gives double backward).

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.nn.functional as F
    >>> x = dg.ones(1, 1, 4, 4)
    >>> F.conv2d(x, dg.ones(2, 1, 3, 3), padding=1).shape
    dynagrad.Size([1, 2, 4, 4])
"""
from __future__ import annotations

import math
import threading

import numpy as np

from ..._runtime.blas_threads import run_split
from ...autograd import grad_mode
from ...autograd.function import Node, record
from ...errors import describe
from ...kernels.cpu.gemm import conv as conv_tiles, tiles as gemm_tile
from ...kernels.cpu import memory
from ...kernels.cpu.nn import conv as nn_conv
from ...kernels.cache import _memory, lookup
from ...kernels.cpu.backend import type_name
from ...tensor import Tensor, _wrap
from ..registry import register
from ._placement import composed
from .conv_composite import (conv_composite, conv_transpose_composite, fold_composite,
                             unfold_composite)

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "unfold", "fold"]

# Samples per im2col chunk: enough columns that each GEMM is large, few enough that the column
# buffer (about this many bytes) stays in the L2 cache between im2col, GEMM and col2im.
CHUNK_BYTES = 1 << 20
# A forward pass whose whole batch of columns is at most this big keeps them for the weight
# gradient instead of recomputing them in backward (LeNet-5's two convolutions fit, and their
# im2col is a real share of its step); larger ones recompute, so a deep net's memory stays bounded.
KEEP_COLS_BYTES = 8 << 20
# A convolution with at least this many multiply-adds splits its batch across the cores
# (``run_split``): the MNIST CNN's second one (680M) gains from it. Smaller ones
# run as one slice: LeNet-5's (15M) lost more to waking BLAS's worker than the split saved.
SPLIT_MIN_MACS = 1 << 25


# --- shared helpers (also used by pooling) ------------------------------------------------------

def _kernel(name: str, dtype: str):
    """The compiled ``nn_conv.<name>`` kernel for ``dtype`` ('float32' or 'float64')."""
    key = ("nn_conv", name, dtype)
    k = _memory.get(key)
    if k is None:
        k = lookup(key, lambda: getattr(nn_conv, name)(dtype))
    return k


def _tuple(value, n: int, op: str, what: str) -> tuple:
    """``value`` as an ``n``-tuple of ints (an int or a 1-element sequence is repeated)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    try:
        vals = tuple(int(v) for v in value)
    except TypeError:
        raise TypeError(f"{op}: {what} must be an int or a tuple of {n} ints, got "
                        f"{value!r}") from None
    if len(vals) == 1:
        return vals * n
    if len(vals) != n:
        raise RuntimeError(f"{op}: expected {what} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got {what}={value!r}")
    return vals


def _float_array(t, op: str, name: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if t.dtype.name not in ("float32", "float64"):
        raise RuntimeError(f"{op}: {name} must be float32 or float64 (got {describe(t)})")


def _no_double_backward(node: Node, op: str) -> None:
    # Our backward runs NumPy/BLAS directly, so it records no graph of its own.
    if grad_mode.GRAD_ENABLED[0]:
        raise RuntimeError(f"{op}: double backward (create_graph=True through {node.name()}) is "
                           "not supported")


def _edge_needed(node: Node, i: int) -> bool:
    return node.next_functions[i] is not None


_local = threading.local()
_WORKSPACE_KEEP_BYTES = 64 << 20


def _workspace(n: int, dtype) -> np.ndarray:
    """A flat scratch array of at least ``n`` elements, reused across calls in this thread (fresh
    large allocations page-fault on first touch, which costs more than the im2col that fills
    them)."""
    bufs = getattr(_local, "bufs", None)
    if bufs is None:
        bufs = _local.bufs = {}
    key = np.dtype(dtype)
    buf = bufs.get(key)
    if buf is None or buf.size < n:
        buf = np.empty(max(n, 1), dtype)
        if buf.nbytes <= _WORKSPACE_KEEP_BYTES:  # don't pin a huge one-off buffer forever
            bufs[key] = buf
    return buf


# --- the engine on NumPy arrays -----------------------------------------------------------------

class _Geom:
    """Sizes of one convolution, padded to 3 spatial dims; ``arr`` is the kernels' geom array."""

    __slots__ = ("k", "s", "p", "d", "out", "arr", "taps")

    def __init__(self, k, s, p, d, out):
        lead = (1,) * (3 - len(k))
        self.k, self.s = lead + tuple(k), lead + tuple(s)
        self.p, self.d = (0,) * (3 - len(k)) + tuple(p), lead + tuple(d)
        self.out = lead + tuple(out)
        self.arr = np.array(self.k + self.s + self.p + self.d + self.out, dtype=np.int64)
        self.taps = math.prod(self.k)


# float32 convolutions on AVX-512 run forward and backward on register tiles
# (``kernels/cpu/gemm/conv.py``), im2col and col2im fused in: they beat this engine's per-sample
# OpenBLAS products on every net measured, forward and backward.
_NO_BIAS = np.empty(0, np.float32)
_NO_COLS = np.empty((0, 0, 0), np.float32)
_NO_INPUT = np.empty((0,) * 5, np.float32)


def _tiles_kernels() -> tuple:
    """The compiled ``conv_tiles`` kernels ``(forward, backward)``."""
    return _memory.get(("conv_tiles",)) or lookup(("conv_tiles",), conv_tiles.build)


def _tiles_backward(x5, g3, w3, geom: _Geom, in_shape: tuple, want_input: bool,
                    want_weight: bool, kept, want_bias: bool):
    """``_backward`` on register tiles (float32 on AVX-512): the same arguments and results."""
    g, og, cgk = w3.shape
    new = np.empty if g3.size else np.zeros  # (no samples: zero gradients, no kernel)
    gx = new(in_shape, np.float32) if want_input else _NO_INPUT
    gwt = new((g, cgk, og), np.float32) if want_weight else _NO_COLS
    gb = new(g * og, np.float32) if want_bias else _NO_BIAS
    if g3.size:
        _tiles_kernels()[1](_NO_INPUT if x5 is None else x5,
                            np.ascontiguousarray(w3.transpose(0, 2, 1)), geom.arr,
                            np.ascontiguousarray(g3), _NO_COLS if kept is None else kept,
                            gx, gwt, gb)
    return (gx if want_input else None, gwt.transpose(0, 2, 1) if want_weight else None,
            gb if want_bias else None)


def _chunk(n: int, per_sample: int, itemsize: int) -> int:
    """Samples per chunk: at least 1, at most ``n``, about ``CHUNK_BYTES`` of columns."""
    return min(max(n, 1), max(1, CHUNK_BYTES // max(1, per_sample * itemsize)))


def _forward(x5: np.ndarray, w3: np.ndarray, geom: _Geom, keep: bool = False,
             bias: np.ndarray | None = None):
    """``out[n, o, l] = sum_k w[o, k] * cols[n, k, l] (+ bias[o])`` per group; ``w3`` is
    ``(G, Og, Cg*taps)``. Returns ``(N, O, L)`` and, when ``keep`` is asked and the batch's
    columns fit ``KEEP_COLS_BYTES``, those columns ``(N, C*taps, L)`` (else None)."""
    n_, c = x5.shape[:2]
    g, og, cgk = w3.shape
    L = math.prod(geom.out)
    out = np.empty((n_, g * og, L), x5.dtype)
    rows = c * geom.taps
    kept = None
    if keep and n_ * rows * L * x5.itemsize <= KEEP_COLS_BYTES:
        kept = memory.empty((n_, rows, L), x5.dtype)  # pooled: no page faults per step
    if x5.dtype == np.float32 and gemm_tile.AVAILABLE:
        _tiles_kernels()[0](x5, w3, geom.arr,
                            _NO_BIAS if bias is None else np.ascontiguousarray(bias), out,
                            _NO_COLS if kept is None else kept)
        return out, kept
    im2col = _kernel("im2col", type_name(x5.dtype))  # looked up here: workers must not compile
    nc = _chunk(n_, rows * L, x5.itemsize)
    b3 = None if bias is None else bias.reshape(1, g * og, 1)

    def samples(lo: int, hi: int) -> None:
        ws = _workspace(nc * rows * L, x5.dtype)
        for n0 in range(lo, hi, nc):
            m = min(hi, n0 + nc) - n0
            cols = ws[:m * rows * L].reshape(m, rows, L) if kept is None else kept[n0:n0 + m]
            im2col(x5[n0:n0 + m], geom.arr, cols)
            if g == 1:
                np.matmul(w3[0], cols, out=out[n0:n0 + m])
            else:
                np.matmul(w3, cols.reshape(m, g, cgk, L),
                          out=out[n0:n0 + m].reshape(m, g, og, L))
            if b3 is not None:
                out[n0:n0 + m] += b3  # while the chunk is still in cache

    run_split(n_, samples, split=n_ * g * og * cgk * L >= SPLIT_MIN_MACS)
    return out, kept


def _backward(x5, g3: np.ndarray, w3: np.ndarray, geom: _Geom, in_shape: tuple,
              want_input: bool, want_weight: bool, kept: np.ndarray | None = None,
              want_bias: bool = False):
    """Gradients of ``_forward`` for output gradient ``g3`` ``(N, O, L)`` and an input of 5-D
    shape ``in_shape``: ``(gx5, gw3, gb)``, None where not wanted (``x5`` is read only for the
    weight gradient). The weight gradient reads the columns ``kept`` by the forward pass, or
    recomputes them per chunk: one cache-resident im2col instead of a buffer of the whole batch's
    patches. The bias gradient sums each chunk of ``g3`` while it is in cache anyway."""
    n_, c = in_shape[:2]
    g, og, cgk = w3.shape
    L = g3.shape[2]
    dt = g3.dtype
    if dt == np.float32 and gemm_tile.AVAILABLE:
        return _tiles_backward(x5, g3, w3, geom, in_shape, want_input, want_weight, kept,
                               want_bias)
    rows = c * geom.taps
    nc = _chunk(n_, rows * L, dt.itemsize)
    im2col, col2im = _kernel("im2col", type_name(dt)), _kernel("col2im", type_name(dt))
    gx = np.empty(in_shape, dt) if want_input else None  # each slice zeroes its own samples
    wt = np.ascontiguousarray(w3.transpose(0, 2, 1)) if want_input else None
    ones = np.ones(L, dt) if want_bias else None

    def samples(lo: int, hi: int) -> tuple:
        """This slice's shares of the (transposed) weight and the bias gradients; writes its rows
        of ``gx``."""
        gwt = np.zeros((g, cgk, og), dt) if want_weight else None
        gb = np.zeros(g * og, dt) if want_bias else None
        ws = _workspace(nc * rows * L, dt)
        if want_input:
            gx[lo:hi] = 0  # col2im adds into it
        for n0 in range(lo, hi, nc):
            m = min(hi, n0 + nc) - n0
            flat = ws[:m * rows * L].reshape(m, rows, L)
            gout = g3[n0:n0 + m].reshape(m, g, og, L)
            if want_bias:  # a product with ones: BLAS beats NumPy's sum
                gb += (g3[n0:n0 + m] @ ones).sum(0)
            if want_weight:
                if kept is None:
                    im2col(x5[n0:n0 + m], geom.arr, flat)
                    cols = flat.reshape(m, g, cgk, L)
                else:
                    cols = kept[n0:n0 + m].reshape(m, g, cgk, L)
                # columns @ gradient^T, the weight gradient transposed: OpenBLAS runs these
                # per-sample products faster than gradient @ columns^T on most shapes (about as
                # fast on a tiny one such as LeNet's first)
                if m == 1:   # one GEMM per group, no (m, G, Cg*taps, Og) temporary to sum
                    gwt += np.matmul(cols[0], gout[0].transpose(0, 2, 1))
                else:
                    gwt += np.matmul(cols, gout.transpose(0, 1, 3, 2)).sum(0)
            if want_input:
                np.matmul(wt, gout, out=flat.reshape(m, g, cgk, L))
                col2im(flat, geom.arr, gx[n0:n0 + m])
        return gwt, gb

    partial = run_split(n_, samples, split=n_ * g * og * cgk * L >= SPLIT_MIN_MACS)
    gwt, gb = partial[0]
    for other_w, other_b in partial[1:]:
        if want_weight:
            gwt += other_w
        if want_bias:
            gb += other_b
    return gx, None if gwt is None else gwt.transpose(0, 2, 1), gb


def _as5(a: np.ndarray, nsp: int) -> np.ndarray:
    """``(N, C, *spatial)`` as a C-contiguous ``(N, C, D, H, W)`` array."""
    a = np.ascontiguousarray(a)
    return a.reshape(a.shape[:2] + (1,) * (3 - nsp) + a.shape[2:])


# --- convolution --------------------------------------------------------------------------------

def _check_common(op: str, nsp: int, x, w, bias, groups) -> bool:
    """Validate dtypes and ranks; returns whether ``x`` has a batch dim."""
    _float_array(x, op, "input")
    _float_array(w, op, "weight")
    if bias is not None:
        _float_array(bias, op, "bias")
    for name, t in (("weight", w), ("bias", bias)):
        if t is not None and t.dtype is not x.dtype:
            raise RuntimeError(f"{op}: input and {name} must have the same dtype (got "
                               f"{describe(x)} and {describe(t)})")
    if x.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"{op}: Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input "
                           f"to {op}, but got input of size: {list(x.shape)}")
    if w.ndim != nsp + 2:
        raise RuntimeError(f"{op}: expected weight to be {nsp + 2}-dimensional, but got weight of "
                           f"size {list(w.shape)}")
    if not isinstance(groups, (int, np.integer)) or groups <= 0:
        raise RuntimeError(f"{op}: non-positive groups is not supported (got groups={groups!r})")
    return x.ndim == nsp + 2


def _check_bias(op: str, bias, w, channels: int) -> None:
    if bias is not None and tuple(bias.shape) != (channels,):
        raise RuntimeError(f"{op}: Given weight of size {list(w.shape)}, expected bias to be "
                           f"1-dimensional with {channels} elements, but got bias of size "
                           f"{list(bias.shape)} instead")


def _conv_args(op: str, nsp: int, input, weight, bias, stride, dilation, groups) -> tuple:
    """The checked arguments shared by convolution and its transpose: ``(batched, x, k, stride,
    dilation)`` with ``x`` the input given a batch dim, ``k`` the kernel size and ``stride`` and
    ``dilation`` as positive ``nsp``-tuples."""
    batched = _check_common(op, nsp, input, weight, bias, groups)
    x = input if batched else input.unsqueeze(0)
    stride = _tuple(stride, nsp, op, "stride")
    dilation = _tuple(dilation, nsp, op, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"{op}: non-positive stride is not supported (got stride={stride})")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"{op}: dilation should be greater than zero (got dilation={dilation})")
    return batched, x, tuple(weight.shape[2:]), stride, dilation


def _check_weight_groups(op: str, w, groups: int) -> None:
    """Weight dim 0 (out channels, or in channels when transposed) must split into ``groups``."""
    if w.shape[0] % groups:
        raise RuntimeError(f"{op}: Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size {list(w.shape)} "
                           "instead")


def _record_conv(node_cls: type[Node], op: str, geom: _Geom, nsp: int, groups: int, x, w, bias,
                 res: Tensor, cols: np.ndarray | None = None) -> None:
    """Attach a ``node_cls`` as the backward of ``res`` when grad mode is on and an input needs
    it; ``cols`` (the forward's im2col columns, if kept) is saved with the inputs."""
    if grad_mode.GRAD_ENABLED[0] and (x._requires_grad or w._requires_grad
                                      or (bias is not None and bias._requires_grad)):
        node = node_cls()
        node.op, node.geom, node.nsp, node.groups = op, geom, nsp, groups
        node.save(x, w, None if cols is None else _wrap(cols, x.dtype))
        record(node, (x, w) if bias is None else (x, w, bias), (res,))


class ConvolutionBackward0(Node):
    def backward(self, g):
        _no_double_backward(self, self.op)
        x, w, cols = self.saved_tensors
        geom, nsp, groups = self.geom, self.nsp, self.groups
        x5 = _as5(x._data, nsp)
        w3 = np.ascontiguousarray(w._data).reshape(groups, w.shape[0] // groups, -1)
        gd = np.ascontiguousarray(g._data, dtype=x5.dtype).reshape(x5.shape[0], w.shape[0],
                                                                    math.prod(geom.out))
        want_bias = len(self.next_functions) > 2 and _edge_needed(self, 2)
        gx, gw, gb = _backward(x5, gd, w3, geom, x5.shape, _edge_needed(self, 0),
                               _edge_needed(self, 1), None if cols is None else cols._data,
                               want_bias)
        return (None if gx is None else _wrap(gx.reshape(x.shape), x.dtype),
                None if gw is None else _wrap(gw.reshape(w.shape), w.dtype),
                None if gb is None else _wrap(gb, x.dtype))


def _convnd(op: str, nsp: int, input, weight, bias, stride, padding, dilation, groups) -> Tensor:
    batched, x, k, stride, dilation = _conv_args(op, nsp, input, weight, bias, stride, dilation,
                                                 groups)
    w = weight
    if isinstance(padding, str):
        if padding == "valid":
            lo = hi = (0,) * nsp
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError(f"{op}: padding='same' is not supported for strided "
                                   f"convolutions (got stride={stride})")
            total = tuple(d * (kk - 1) for d, kk in zip(dilation, k))
            lo = tuple(t // 2 for t in total)  # the odd extra pad goes on the right, as PyTorch
            hi = tuple(t - t // 2 for t in total)
        else:
            raise ValueError(f"{op}: Invalid padding string {padding!r}, should be one of "
                             "{'valid', 'same'}")
    else:
        lo = hi = _tuple(padding, nsp, op, "padding")
        if any(p < 0 for p in lo):
            raise RuntimeError(f"{op}: negative padding is not supported (got padding={lo})")
    O, cg = w.shape[0], w.shape[1]
    C = x.shape[1]
    _check_weight_groups(op, w, groups)
    if C != cg * groups:
        raise RuntimeError(f"{op}: Given groups={groups}, weight of size {list(w.shape)}, expected "
                           f"input{list(x.shape)} to have {cg * groups} channels, but got {C} "
                           "channels instead")
    _check_bias(op, bias, w, O)
    spatial = tuple(x.shape[2:])
    padded = tuple(n + a + b for n, a, b in zip(spatial, lo, hi))
    eff = tuple(d * (kk - 1) + 1 for d, kk in zip(dilation, k))
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(f"{op}: Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, eff))}). Kernel size can't be greater than "
                           "actual input size")
    out_sp = tuple((p - e) // s + 1 for p, e, s in zip(padded, eff, stride))
    if composed(x, w, bias):
        res = conv_composite(x, w, bias, stride, lo, hi, dilation, groups, out_sp)
        return res if batched else res.squeeze(0)
    geom = _Geom(k, stride, lo, dilation, out_sp)
    x5 = _as5(x._data, nsp)
    w3 = np.ascontiguousarray(w._data).reshape(groups, O // groups, -1)
    out, cols = _forward(x5, w3, geom, keep=grad_mode.GRAD_ENABLED[0] and w._requires_grad,
                         bias=None if bias is None else bias._data)
    res = _wrap(out.reshape((x.shape[0], O) + out_sp), x.dtype)
    _record_conv(ConvolutionBackward0, op, geom, nsp, groups, x, w, bias, res, cols)
    return res if batched else res.squeeze(0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """1-D convolution (cross-correlation) over ``(N, C, L)`` or ``(C, L)`` input.

    ``weight`` is ``(out_channels, in_channels / groups, kW)``; ``padding`` is an int, a tuple,
    ``'valid'`` or ``'same'``.

    Example:
        >>> import dynagrad as dg
        >>> conv1d(dg.ones(1, 1, 5), dg.ones(1, 1, 3)).tolist()
        [[[3.0, 3.0, 3.0]]]
    """
    return _convnd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """2-D convolution over ``(N, C, H, W)`` or ``(C, H, W)`` input; see ``conv1d``.

    Example:
        >>> import dynagrad as dg
        >>> conv2d(dg.ones(1, 1, 3, 3), dg.ones(1, 1, 2, 2), stride=1).tolist()
        [[[[4.0, 4.0], [4.0, 4.0]]]]
    """
    return _convnd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """3-D convolution over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input; see ``conv1d``.

    Example:
        >>> import dynagrad as dg
        >>> conv3d(dg.ones(1, 1, 2, 2, 2), dg.ones(3, 1, 2, 2, 2)).shape
        dynagrad.Size([1, 3, 1, 1, 1])
    """
    return _convnd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


# --- transposed convolution ---------------------------------------------------------------------

class ConvolutionBackward1(Node):
    """Backward of a transposed convolution: the input gradient is a plain convolution."""

    def backward(self, g):
        _no_double_backward(self, self.op)
        x, w, _ = self.saved_tensors  # a transposed convolution keeps no columns
        geom, nsp, groups = self.geom, self.nsp, self.groups
        w3 = np.ascontiguousarray(w._data).reshape(groups, w.shape[0] // groups, -1)
        g5 = _as5(np.asarray(g._data, dtype=w3.dtype), nsp)
        gx = gw = gb = None
        if _edge_needed(self, 0):
            gx = _wrap(_forward(g5, w3, geom)[0].reshape(x.shape), x.dtype)
        if _edge_needed(self, 1):
            x3 = np.ascontiguousarray(x._data).reshape(x.shape[:2] + (math.prod(x.shape[2:]),))
            gw = _backward(g5, x3, w3, geom, g5.shape, False, True)[1]
            gw = _wrap(gw.reshape(w.shape), w.dtype)
        if len(self.next_functions) > 2 and _edge_needed(self, 2):
            gb = _wrap(g5.sum(axis=(0, 2, 3, 4)), x.dtype)
        return gx, gw, gb


def _conv_transposend(op: str, nsp: int, input, weight, bias, stride, padding, output_padding,
                      groups, dilation) -> Tensor:
    batched, x, k, stride, dilation = _conv_args(op, nsp, input, weight, bias, stride, dilation,
                                                 groups)
    w = weight
    if isinstance(padding, str):
        raise RuntimeError(f"{op}: padding must be an int or a tuple of ints for transposed "
                           f"convolutions (got {padding!r})")
    padding = _tuple(padding, nsp, op, "padding")
    output_padding = _tuple(output_padding, nsp, op, "output_padding")
    if any(p < 0 for p in padding + output_padding):
        raise RuntimeError(f"{op}: negative padding is not supported (got padding={padding}, "
                           f"output_padding={output_padding})")
    if any(op_ >= max(s, d) for op_, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(f"{op}: output padding must be smaller than either stride or "
                           f"dilation, but got output_padding={output_padding}, stride={stride}, "
                           f"dilation={dilation}")
    cin, cog = w.shape[0], w.shape[1]
    _check_weight_groups(op, w, groups)
    if x.shape[1] != cin:
        raise RuntimeError(f"{op}: Given transposed=1, weight of size {list(w.shape)}, expected "
                           f"input{list(x.shape)} to have {cin} channels, but got {x.shape[1]} "
                           "channels instead")
    cout = cog * groups
    _check_bias(op, bias, w, cout)
    spatial = tuple(x.shape[2:])
    out_sp = tuple((n - 1) * s - 2 * p + d * (kk - 1) + o + 1 for n, s, p, d, kk, o in
                   zip(spatial, stride, padding, dilation, k, output_padding))
    if any(n <= 0 for n in out_sp):
        raise RuntimeError(f"{op}: Given input size per channel: {list(spatial)}, calculated "
                           f"output size per channel: {list(out_sp)}. Output size is too small")
    if composed(x, w, bias):
        res = conv_transpose_composite(x, w, bias, stride, padding, dilation, groups, out_sp)
        return res if batched else res.squeeze(0)
    # the adjoint convolution maps an output-shaped tensor onto the input's spatial size
    geom = _Geom(k, stride, padding, dilation, spatial)
    n_ = x.shape[0]
    x3 = np.ascontiguousarray(x._data).reshape(n_, cin, math.prod(spatial))
    w3 = np.ascontiguousarray(w._data).reshape(groups, cin // groups, -1)
    out5 = (n_, cout) + (1,) * (3 - nsp) + out_sp
    out = _backward(None, x3, w3, geom, out5, True, False)[0]
    if bias is not None:
        out = out.reshape(n_, cout, math.prod(out_sp))
        out += bias._data.reshape(1, cout, 1)
    res = _wrap(out.reshape((n_, cout) + out_sp), x.dtype)
    _record_conv(ConvolutionBackward1, op, geom, nsp, groups, x, w, bias, res)
    return res if batched else res.squeeze(0)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """1-D transposed convolution ("deconvolution"): the gradient of ``conv1d`` w.r.t. its input.

    ``weight`` is ``(in_channels, out_channels / groups, kW)``; the output length is
    ``(L - 1) * stride - 2 * padding + dilation * (kW - 1) + output_padding + 1``.

    Example:
        >>> import dynagrad as dg
        >>> conv_transpose1d(dg.ones(1, 1, 2), dg.ones(1, 1, 2), stride=2).tolist()
        [[[1.0, 1.0, 1.0, 1.0]]]
    """
    return _conv_transposend("conv_transpose1d", 1, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """2-D transposed convolution; see ``conv_transpose1d``.

    Example:
        >>> import dynagrad as dg
        >>> conv_transpose2d(dg.ones(1, 2, 3, 3), dg.ones(2, 4, 2, 2), stride=2).shape
        dynagrad.Size([1, 4, 6, 6])
    """
    return _conv_transposend("conv_transpose2d", 2, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """3-D transposed convolution over ``(N, C, D, H, W)`` or ``(C, D, H, W)``; see
    ``conv_transpose1d``.

    Example:
        >>> import dynagrad as dg
        >>> conv_transpose3d(dg.ones(1, 2, 2, 2, 2), dg.ones(2, 3, 2, 2, 2), stride=2).shape
        dynagrad.Size([1, 3, 4, 4, 4])
    """
    return _conv_transposend("conv_transpose3d", 3, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


# --- unfold / fold ------------------------------------------------------------------------------

def _im2col_blocks(x5: np.ndarray, geom: _Geom) -> np.ndarray:
    """The ``(N, C * taps, L)`` sliding blocks of ``x5``."""
    cols = np.empty((x5.shape[0], x5.shape[1] * geom.taps, math.prod(geom.out)), x5.dtype)
    _kernel("im2col", type_name(x5.dtype))(x5, geom.arr, cols)
    return cols


def _col2im_blocks(blocks: np.ndarray, geom: _Geom, shape5: tuple) -> np.ndarray:
    """Sum ``(N, C * taps, L)`` blocks into a zero array of ``shape5``."""
    out = np.zeros(shape5, blocks.dtype)
    _kernel("col2im", type_name(blocks.dtype))(np.ascontiguousarray(blocks), geom.arr, out)
    return out


class Im2ColBackward0(Node):
    def backward(self, g):
        _no_double_backward(self, "unfold")
        gx = _col2im_blocks(np.asarray(g._data), self.geom, self.shape5)
        return (_wrap(gx.reshape(self.in_shape), g.dtype),)


class Col2ImBackward0(Node):
    def backward(self, g):
        _no_double_backward(self, "fold")
        return (_wrap(_im2col_blocks(_as5(np.asarray(g._data), 2), self.geom), g.dtype),)


def _block_args(op: str, kernel_size, dilation, padding, stride):
    k = _tuple(kernel_size, 2, op, "kernel_size")
    d = _tuple(dilation, 2, op, "dilation")
    p = _tuple(padding, 2, op, "padding")
    s = _tuple(stride, 2, op, "stride")
    if any(v <= 0 for v in k + d + s) or any(v < 0 for v in p):
        raise RuntimeError(f"{op}: kernel_size, dilation and stride must be positive and padding "
                           f"non-negative (got kernel_size={k}, dilation={d}, padding={p}, "
                           f"stride={s})")
    return k, d, p, s


def _blocks(size, k, d, p, s) -> tuple:
    return tuple((n + 2 * pp - dd * (kk - 1) - 1) // ss + 1
                 for n, kk, dd, pp, ss in zip(size, k, d, p, s))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Extract sliding local blocks (im2col): ``(N, C, H, W)`` -> ``(N, C * kH * kW, L)``.

    Example:
        >>> import dynagrad as dg
        >>> unfold(dg.arange(4.0).reshape(1, 1, 2, 2), 2).tolist()
        [[[0.0], [1.0], [2.0], [3.0]]]
    """
    op = "unfold"
    _float_array(input, op, "input")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{op}: Expected 3D or 4D (batch mode) tensor for input, but got "
                           f"{describe(input)}")
    x = input if input.ndim == 4 else input.unsqueeze(0)
    k, d, p, s = _block_args(op, kernel_size, dilation, padding, stride)
    nb = _blocks(x.shape[2:], k, d, p, s)
    if any(b <= 0 for b in nb):
        raise RuntimeError(f"{op}: Given input with spatial size {tuple(x.shape[2:])}, "
                           f"kernel_size={k}, dilation={d}, padding={p}, calculated shape of the "
                           f"array of sliding blocks as {nb}, but its components must be at least "
                           "one.")
    if composed(x):
        res = unfold_composite(x, k, s, d, p, p, nb)
        return res if input.ndim == 4 else res.squeeze(0)
    geom = _Geom(k, s, p, d, nb)
    x5 = _as5(x._data, 2)
    res = _wrap(_im2col_blocks(x5, geom), x.dtype)
    if x._requires_grad and grad_mode.GRAD_ENABLED[0]:
        node = Im2ColBackward0()
        node.geom, node.shape5, node.in_shape = geom, x5.shape, tuple(x.shape)
        record(node, (x,), (res,))
    return res if input.ndim == 4 else res.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Combine sliding local blocks into a tensor (col2im; overlapping values are summed):
    ``(N, C * kH * kW, L)`` -> ``(N, C, *output_size)``.

    Example:
        >>> import dynagrad as dg
        >>> fold(dg.ones(1, 4, 4), (3, 3), 2)[0, 0].tolist()
        [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    op = "fold"
    _float_array(input, op, "input")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{op}: Expected 2D or 3D (batch mode) tensor for input, but got "
                           f"{describe(input)}")
    x = input if input.ndim == 3 else input.unsqueeze(0)
    size = _tuple(output_size, 2, op, "output_size")
    k, d, p, s = _block_args(op, kernel_size, dilation, padding, stride)
    taps = k[0] * k[1]
    if x.shape[1] % taps:
        raise RuntimeError(f"{op}: Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={k}")
    nb = _blocks(size, k, d, p, s)
    if any(b <= 0 for b in nb) or nb[0] * nb[1] != x.shape[2]:
        raise RuntimeError(f"{op}: Given output_size={size}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {nb[0]} * {nb[1]} = "
                           f"{nb[0] * nb[1]}, but got input.size(2)={x.shape[2]}.")
    if composed(x):
        res = fold_composite(x, size, nb, k, s, d, p)
        return res if input.ndim == 3 else res.squeeze(0)
    geom = _Geom(k, s, p, d, nb)
    out = _col2im_blocks(x._data, geom, (x.shape[0], x.shape[1] // taps, 1) + size)
    res = _wrap(out.reshape(out.shape[:2] + size), x.dtype)
    if x._requires_grad and grad_mode.GRAD_ENABLED[0]:
        node = Col2ImBackward0()
        node.geom, node.in_shape = geom, tuple(x.shape)
        record(node, (x,), (res,))
    return res if input.ndim == 3 else res.squeeze(0)


# the functional forms with a torch.<name> of the same arguments are dg.<name> too
register("conv1d", conv1d, "nn", method=False)
register("conv2d", conv2d, "nn", method=False)
register("conv3d", conv3d, "nn", method=False)
register("conv_transpose1d", conv_transpose1d, "nn", method=False)
register("conv_transpose2d", conv_transpose2d, "nn", method=False)
register("conv_transpose3d", conv_transpose3d, "nn", method=False)
register("unfold", unfold, "nn", method=False, functional=False)
register("fold", fold, "nn", method=False, functional=False)
