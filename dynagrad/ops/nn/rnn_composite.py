"""One direction of one recurrent layer composed from ops (any device; used for CUDA tensors).

The device-agnostic form of ``rnn._Recurrent``: the input projection of all time steps is one
matmul, then each step is ``h @ W_hh^T`` and the gate arithmetic of the mode as elementwise ops
(gate layouts as PyTorch's: LSTM ``i f g o``, GRU ``r z n``). Gradients come from autograd.

Example:
    >>> import dynagrad as dg
    >>> x, w_ih, w_hh = dg.randn(3, 2, 4), dg.randn(8, 4), dg.randn(8, 2)
    >>> out, h = recurrent_composite("rnn_tanh", x, None, None, w_ih[:2], w_hh[:2], None, None,
    ...                              False)
    >>> tuple(out.shape), tuple(h.shape)
    ((3, 2, 2), (2, 2))
"""
from __future__ import annotations

from ...creation import zeros
from ..linalg import matmul
from ..movement import stack
from ...tensor import Tensor


def _step(mode: str, xg: Tensor, h: Tensor, c, w_hh_t: Tensor, b_hh, n_h: int) -> tuple:
    """``(h', c')`` of one time step from the input projection ``xg`` ``(B, G*H)``."""
    hg = matmul(h, w_hh_t)
    if mode == "lstm":
        pre = xg + hg
        act = pre.sigmoid()  # i, f, o; the g block is recomputed with tanh below
        i, f, o = act[:, :n_h], act[:, n_h:2 * n_h], act[:, 3 * n_h:]
        c = f * c + i * pre[:, 2 * n_h:3 * n_h].tanh()
        return o * c.tanh(), c
    if mode == "gru":
        if b_hh is not None:  # b_hn sits inside r * (...), so it joins the recurrent term here
            hg = hg + b_hh
        rz = (xg[:, :2 * n_h] + hg[:, :2 * n_h]).sigmoid()
        r, z = rz[:, :n_h], rz[:, n_h:]
        n = (xg[:, 2 * n_h:] + r * hg[:, 2 * n_h:]).tanh()
        return (1.0 - z) * n + z * h, None
    pre = xg + hg
    return (pre.tanh() if mode == "rnn_tanh" else pre.relu()), None


def recurrent_composite(mode: str, x: Tensor, h0, c0, w_ih: Tensor, w_hh: Tensor, b_ih, b_hh,
                        reverse: bool) -> tuple:
    """``(out, h_n)`` (``(out, h_n, c_n)`` for ``mode="lstm"``) of one direction of one layer
    over the checked ``(T, B, I)`` input ``x``; ``h0``/``c0``/biases may be None (zeros)."""
    n_t, n_b, n_in = x.shape
    n_h = w_hh.shape[1]
    xg = matmul(x.reshape(n_t * n_b, n_in), w_ih.mT)
    if b_ih is not None:
        xg = xg + b_ih
    if b_hh is not None and mode != "gru":
        xg = xg + b_hh
    xg = xg.reshape(n_t, n_b, -1)
    h = zeros(n_b, n_h, dtype=x.dtype, device=x.device) if h0 is None else h0
    c = None
    if mode == "lstm":
        c = zeros(n_b, n_h, dtype=x.dtype, device=x.device) if c0 is None else c0
    w_hh_t = w_hh.mT
    outs: list = [None] * n_t
    for t in (range(n_t - 1, -1, -1) if reverse else range(n_t)):
        h, c = _step(mode, xg[t], h, c, w_hh_t, b_hh, n_h)
        outs[t] = h
    out = stack(outs)
    return (out, h, c) if mode == "lstm" else (out, h)
