"""Recurrent cells and layers: Elman RNN (tanh / relu), LSTM and GRU.

One direction of one layer over a whole sequence is a single autograd node. Its forward multiplies
the input by ``W_ih`` for all time steps at once (one product), then loops over time doing
``h @ W_hh.T`` (register tiles for float32, else BLAS) and one fused generated kernel for the
gate nonlinearities and state update (``dynagrad/kernels/cpu/nn/rnn.py``). Its backward runs the
mirror loop, and the weight and input gradients are again one product each over all steps.
Gate layouts and parameter shapes are PyTorch's (LSTM ``i f g o``, GRU ``r z n``). This node has
no double backward (as cuDNN's RNN). CUDA tensors run ``recurrent_composite`` (the same steps as
ops) instead.

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.nn.functional as F
    >>> x, h, c = dg.randn(2, 3), dg.zeros(2, 4), dg.zeros(2, 4)
    >>> w_ih, w_hh = dg.randn(16, 3), dg.randn(16, 4)
    >>> h1, c1 = F.lstm_cell(x, (h, c), w_ih, w_hh)
    >>> tuple(h1.shape), tuple(c1.shape)
    ((2, 4), (2, 4))
"""
from __future__ import annotations

import math

import numpy as np

from ...autograd.function import Function
from ...errors import describe
from ...kernels.cpu import backend as cpu
from ...kernels.cpu.gemm import tiles as gemm_tile, matmul as tile_gemm
from ...kernels.cpu.nn import rnn as nn_rnn
from ...kernels.cache import _memory, lookup
from ...kernels.cpu.gemm.products import matmul_2d, tile_gemm_kernel
from ...tensor import Tensor, _wrap
from ..registry import register
from ._placement import composed
from .linear import column_sums
from .rnn_composite import recurrent_composite

__all__ = ["rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell"]

GATES = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3}


def _kernel(kind: str, dtype: str):
    key = ("nn_rnn", kind, dtype)
    k = _memory.get(key)
    return k if k is not None else lookup(key, lambda: nn_rnn.build(kind, dtype))


def _state_product(b: np.ndarray) -> tuple:
    """``(b_ready, product)`` for the state products ``out = a @ b`` of every time step:
    ``product(a, b_ready, out)``. float32 runs on register tiles with ``b`` packed once
    (``kernels/cpu/gemm/matmul.py``, faster than OpenBLAS on these small products), anything else on
    NumPy's BLAS with ``b`` made contiguous (BLAS is faster on ``W_hh.T`` copied than on the
    transposed view)."""
    if b.dtype == np.float32 and gemm_tile.AVAILABLE:
        return tile_gemm.pack(b), tile_gemm_kernel()
    return np.ascontiguousarray(b), _numpy_product


def _numpy_product(a, b, out):
    np.matmul(a, b, out=out)


def _contig(a):
    return np.ascontiguousarray(a)


def _apart(dtype, gap: int, *shapes: tuple) -> list:
    """Uninitialized C-contiguous arrays of ``shapes``, cut from one buffer with ``gap`` unused
    elements before, between and after them.

    The step kernels are vectorized behind LLVM's run-time test that the arrays a loop writes
    do not overlap those it reads, and that test is about one gate block (H elements) too
    cautious: two arrays that malloc had placed end to end failed it, and the step ran its
    scalar loop, several times slower. ``LSTMCell`` called in a Python
    loop, whose small buffers malloc lays out one after another, hit it in several of every 20
    steps. A gap of one row of gates (``gap`` = G*H) around every array the kernels write or this
    layer reads keeps each test passing, whatever malloc does.

    Example:
        >>> a, b = _apart(np.float32, 4, (2, 3), (5,))
        >>> a.shape, b.shape, b.base is a.base
        ((2, 3), (5,), True)
    """
    sizes = [math.prod(s) for s in shapes]
    buf = np.empty(sum(sizes) + gap * (len(shapes) + 1), dtype)
    arrays, start = [], gap
    for shape, size in zip(shapes, sizes):
        arrays.append(buf[start:start + size].reshape(shape))
        start += size + gap
    return arrays


class _Recurrent(Function):
    """One direction of one recurrent layer over a (T, B, I) sequence.

    ``apply(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)`` returns ``(out, h_n)`` or, for
    ``mode="lstm"``, ``(out, h_n, c_n)``; ``h0``/``c0``/biases may be None (zeros).
    """

    @staticmethod
    def forward(ctx, mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse):
        ctx.set_materialize_grads(False)
        xa, wih, whh = x._data, w_ih._data, w_hh._data
        dt = xa.dtype
        n_t, n_b, n_in = xa.shape
        n_h = whh.shape[1]
        x2 = xa.reshape(n_t * n_b, n_in)
        width = GATES[mode] * n_h
        xg, hg = _apart(dt, width, (n_t * n_b, width), (n_b, width))
        matmul_2d(x2, wih.T, out=xg)  # every time step at once
        # both biases in one pass over the gates (GRU's b_hh sits inside r * (...): not here)
        biases = [b._data for b in (b_ih, None if mode == "gru" else b_hh) if b is not None]
        if biases:
            cpu.add_rows(xg, biases[0] + biases[1] if len(biases) == 2 else biases[0])
        xg = xg.reshape(n_t, n_b, -1)
        h = np.zeros((n_b, n_h), dt) if h0 is None else _contig(h0._data)
        h_first = h
        steps = range(n_t - 1, -1, -1) if reverse else range(n_t)
        whh_t, product = _state_product(whh.T)
        saved = {}
        if mode == "lstm":
            step = _kernel("lstm_forward", dt.name)
            c = np.zeros((n_b, n_h), dt) if c0 is None else _contig(c0._data)
            c_first = c
            (out,) = _apart(dt, width, (n_t, n_b, n_h))  # alone: the result keeps its buffer
            cs, tanh_c, acts = _apart(dt, width, *[(n_t, n_b, n_h)] * 2, (n_t, n_b, width))
            for t in steps:
                product(h, whh_t, hg)
                step(xg[t], hg, c, out[t], cs[t], acts[t], tanh_c[t])
                h, c = out[t], cs[t]
            saved = dict(cs=cs, acts=acts, tanh_c=tanh_c, c_first=c_first)
        elif mode == "gru":
            step = _kernel("gru_forward", dt.name)
            bhh = np.zeros(3 * n_h, dt) if b_hh is None else _contig(b_hh._data)
            (out,) = _apart(dt, width, (n_t, n_b, n_h))
            ghn, acts = _apart(dt, width, (n_t, n_b, n_h), (n_t, n_b, width))
            for t in steps:
                product(h, whh_t, hg)
                step(xg[t], hg, bhh, h, out[t], acts[t], ghn[t])
                h = out[t]
            saved = dict(acts=acts, ghn=ghn)
        else:
            step = _kernel(mode + "_forward", dt.name)
            (out,) = _apart(dt, width, (n_t, n_b, n_h))
            for t in steps:
                product(h, whh_t, hg)
                step(xg[t], hg, out[t])
                h = out[t]
        ctx.save_for_backward(x, h0, c0, w_ih, w_hh, b_ih, b_hh)
        ctx.mode, ctx.reverse, ctx.out, ctx.h_first, ctx.arrays = mode, reverse, out, h_first, saved
        dtype = x.dtype
        results = (_wrap(out, dtype), _wrap(h.copy(), dtype))
        if mode == "lstm":
            results += (_wrap(c.copy(), dtype),)
        return results

    @staticmethod
    def backward(ctx, g_out, g_hn, g_cn=None):
        x, h0, c0, w_ih, w_hh, b_ih, b_hh = ctx.saved_tensors
        mode, reverse, out, arrays = ctx.mode, ctx.reverse, ctx.out, ctx.arrays
        xa, wih, whh = x._data, w_ih._data, w_hh._data
        dt = out.dtype
        n_t, n_b, n_h = out.shape
        dout = np.zeros_like(out) if g_out is None else _contig(g_out._data)
        # the carried gradient of h (and of c) starts as the gradient of the final state
        width = GATES[mode] * n_h
        dh, dc, dmm, dgi = _apart(dt, width, *[(n_b, n_h)] * 3, (n_t, n_b, width))
        dh[...] = 0 if g_hn is None else g_hn._data
        steps = range(n_t) if reverse else range(n_t - 1, -1, -1)
        prev = (lambda t: t + 1 if t + 1 < n_t else -1) if reverse else (lambda t: t - 1)
        h_first = ctx.h_first
        dgh = None
        whh, product = _state_product(whh)
        if mode == "lstm":
            step = _kernel("lstm_backward", dt.name)
            cs, acts, tanh_c, c_first = (arrays[k] for k in ("cs", "acts", "tanh_c", "c_first"))
            dc[...] = 0 if g_cn is None else g_cn._data
            dmm[...] = dh
            for t in steps:
                p = prev(t)
                step(dout[t], dmm, dc, acts[t], cs[p] if p >= 0 else c_first, tanh_c[t], dgi[t])
                product(dgi[t], whh, dmm)
            d_h0, d_c0 = dmm.copy(), dc.copy()  # not views that keep dgi's buffer alive
        elif mode == "gru":
            step = _kernel("gru_backward", dt.name)
            acts, ghn = arrays["acts"], arrays["ghn"]
            (dgh,) = _apart(dt, width, (n_t, n_b, width))
            dmm[...] = 0
            for t in steps:
                p = prev(t)
                step(dout[t], dmm, dh, acts[t], ghn[t], out[p] if p >= 0 else h_first, dgi[t],
                     dgh[t])
                product(dgh[t], whh, dmm)
            d_h0, d_c0 = dmm + dh, None
        else:
            step = _kernel(mode + "_backward", dt.name)
            dmm[...] = dh
            for t in steps:
                step(dout[t], dmm, out[t], dgi[t])
                product(dgi[t], whh, dmm)
            d_h0, d_c0 = dmm.copy(), None
        need = ctx.needs_input_grad  # (mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)
        g_in = dgi.reshape(n_t * n_b, -1)
        g_hh = g_in if dgh is None else dgh.reshape(n_t * n_b, -1)
        n_in = xa.shape[2]
        gx = _wrap(matmul_2d(g_in, wih).reshape(n_t, n_b, n_in), x.dtype) if need[1] else None
        gw_ih = _wrap(np.matmul(g_in.T, xa.reshape(n_t * n_b, n_in)), x.dtype) if need[4] else None
        gw_hh = None
        if need[5]:  # the state each step read: h0 then the outputs, in the direction's order
            first = h_first[None]
            h_prev = (np.concatenate([out[1:], first]) if reverse
                      else np.concatenate([first, out[:-1]]))
            gw_hh = _wrap(np.matmul(g_hh.T, h_prev.reshape(n_t * n_b, n_h)), x.dtype)
        # LSTM and Elman cells: both biases get the same gate gradients (summed once)
        sums_in = column_sums(g_in) if need[6] or (need[7] and g_hh is g_in) else None
        gb_ih = _wrap(sums_in, x.dtype) if need[6] else None
        gb_hh = None
        if need[7]:
            gb_hh = _wrap(sums_in.copy() if g_hh is g_in else column_sums(g_hh), x.dtype)
        gh0 = _wrap(d_h0, x.dtype) if need[2] else None
        gc0 = _wrap(d_c0, x.dtype) if need[3] else None
        return None, gx, gh0, gc0, gw_ih, gw_hh, gb_ih, gb_hh, None


def check_dtypes(op: str, tensors: dict) -> None:
    """All floating tensors of one dtype (float32 or float64), as the fused kernels require."""
    dtypes = {t.dtype for t in tensors.values() if t is not None}
    names = ", ".join(f"{k}={describe(v)}" for k, v in tensors.items() if v is not None)
    if len(dtypes) != 1:
        raise RuntimeError(f"{op}: expected all tensors to have the same dtype (got {names})")
    dt = dtypes.pop()
    if dt.name not in ("float32", "float64"):
        raise RuntimeError(f"{op}: expected float32 or float64 tensors (got {names})")


def recurrent(mode: str, x: Tensor, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse: bool) -> tuple:
    """One direction of one layer on a checked (T, B, I) input; see ``_Recurrent`` (CUDA
    tensors: ``recurrent_composite``)."""
    if composed(x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        return recurrent_composite(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)
    return _Recurrent.apply(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)


def _cell(op: str, mode: str, input, hx, cx, w_ih, w_hh, b_ih, b_hh):
    """Shared cell path: checks, then one time step of the layer node."""
    for name, t in (("input", input), ("w_ih", w_ih), ("w_hh", w_hh)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    gates = GATES[mode]
    if input.ndim not in (1, 2):
        raise ValueError(f"{op}: Expected input to be 1D or 2D, got {input.ndim}D instead "
                         f"(input={describe(input)})")
    n_h = w_hh.shape[1] if w_hh.ndim == 2 else -1
    if w_ih.ndim != 2 or w_hh.ndim != 2 or w_hh.shape[0] != gates * n_h \
            or w_ih.shape[0] != gates * n_h:
        raise RuntimeError(f"{op}: expected w_ih ({gates}*hidden_size, input_size) and w_hh "
                           f"({gates}*hidden_size, hidden_size) (got w_ih={describe(w_ih)}, "
                           f"w_hh={describe(w_hh)})")
    if input.shape[-1] != w_ih.shape[1]:
        raise RuntimeError(f"{op}: input has inconsistent input_size: got {input.shape[-1]} "
                           f"expected {w_ih.shape[1]} (input={describe(input)}, "
                           f"w_ih={describe(w_ih)})")
    for name, b in (("b_ih", b_ih), ("b_hh", b_hh)):
        if b is not None and tuple(b.shape) != (gates * n_h,):
            raise RuntimeError(f"{op}: {name} must have shape ({gates * n_h},) (got {describe(b)})")
    batched = input.ndim == 2
    want = (input.shape[0], n_h) if batched else (n_h,)
    for name, h in (("hx", hx), ("cx", cx)):
        if h is not None and tuple(h.shape) != want:
            raise RuntimeError(f"{op}: expected {name} of shape {want} for input "
                               f"{describe(input)} and hidden_size {n_h} (got {describe(h)})")
    check_dtypes(op, {"input": input, "hx": hx, "cx": cx, "w_ih": w_ih, "w_hh": w_hh,
                      "b_ih": b_ih, "b_hh": b_hh})
    x = input.reshape((1,) + (tuple(input.shape) if batched else (1, input.shape[0])))
    if not batched:
        hx = None if hx is None else hx.reshape(1, n_h)
        cx = None if cx is None else cx.reshape(1, n_h)
    res = recurrent(mode, x, hx, cx, w_ih, w_hh, b_ih, b_hh, False)
    states = res[1:]
    return states if batched else tuple(s.reshape(n_h) for s in states)


def rnn_tanh_cell(input: Tensor, hx: Tensor | None, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """``h' = tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)`` for (B, I) or (I,) input.

    Example:
        >>> import dynagrad as dg
        >>> tuple(rnn_tanh_cell(dg.zeros(2, 3), None, dg.ones(4, 3), dg.ones(4, 4)).shape)
        (2, 4)
    """
    return _cell("rnn_tanh_cell", "rnn_tanh", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(input: Tensor, hx: Tensor | None, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """``h' = relu(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)`` for (B, I) or (I,) input."""
    return _cell("rnn_relu_cell", "rnn_relu", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def lstm_cell(input: Tensor, hx, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple:
    """One LSTM step: returns ``(h', c')``; ``hx`` is ``(h, c)`` or None (zeros).

    Gates ``i f g o`` are the row blocks of ``w_ih`` (4H, I) and ``w_hh`` (4H, H), as in PyTorch.
    """
    h, c = (None, None) if hx is None else hx
    return _cell("lstm_cell", "lstm", input, h, c, w_ih, w_hh, b_ih, b_hh)


def gru_cell(input: Tensor, hx: Tensor | None, w_ih: Tensor, w_hh: Tensor,
             b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One GRU step (gates ``r z n``): ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``,
    ``h' = (1 - z) * n + z * h``."""
    return _cell("gru_cell", "gru", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


# the functional forms with a torch.<name> of the same arguments are dg.<name> too
register("rnn_tanh_cell", rnn_tanh_cell, "nn", method=False)
register("rnn_relu_cell", rnn_relu_cell, "nn", method=False)
register("lstm_cell", lstm_cell, "nn", method=False)
register("gru_cell", gru_cell, "nn", method=False)
