"""Kernel templates for recurrent cells: the gate nonlinearities and state update of one time step.

The matrix products of a recurrent layer run in BLAS (NumPy) from Python; what is left per step
is a short chain of elementwise work over ``(batch, hidden)`` that these kernels fuse into one
call, forward and backward. Every kernel takes C-contiguous arrays of one floating dtype (gates
laid out as PyTorch's: LSTM ``i f g o``, GRU ``r z n``) and specializes on that dtype only.

Speed notes. The forward kernels are dominated by the gate nonlinearities: scalarlib's
vectorizable float32 sigmoid and tanh (libm for float64, which serves accuracy: tests,
gradcheck). Each gate block gets its own inner loop, forward and backward: one loop that writes
several gate blocks at once is not vectorized, several times slower.

Example:
    >>> src, name, sig, what = build("lstm_forward", "float32")
    >>> name, what
    ('kernel', 'lstm_forward[float32]')
"""
from __future__ import annotations

from numba import types

from ..templates import HEADER

# The gate nonlinearities: scalarlib's vectorizable float32 forms, bound as plain inlined
# functions (through the fsigmoid/ftanh overloads, Numba warned about variable scopes when
# inlining them into these loop nests); float64 uses libm.
_ACTIVATIONS = {
    "float32": "from dynagrad.kernels.cpu.scalarlib import _sigmoid32 as _sig, _tanh32 as _tanh\n"
               "T = np.float32\n",
    "float64": "_sig = sigmoid\n_tanh = math.tanh\nT = np.float64\n",
}

_BODIES = {
    # xg: x @ W_ih.T + biases for this step (B, 4H); hg: h_prev @ W_hh.T (B, 4H).
    # Writes h, c and keeps the activated gates and tanh(c) for the backward step. Each loop
    # runs from 0 over 1-D views of one gate block: the same loops over offset ranges of the
    # (B, 4H) rows ran slower, with bit-identical results.
    "lstm_forward": ("xg, hg, c_prev, h_out, c_out, acts, tanh_c",
                     "h_out c_out acts tanh_c", """\
    n_h = c_prev.shape[1]
    for b in range(xg.shape[0]):
        x, h, a = xg[b], hg[b], acts[b]
        for j in range(2 * n_h):  # the i and f gates
            a[j] = _sig(x[j] + h[j])
        x_g, h_g, a_g = x[2 * n_h:3 * n_h], h[2 * n_h:3 * n_h], a[2 * n_h:3 * n_h]
        for j in range(n_h):
            a_g[j] = _tanh(x_g[j] + h_g[j])
        x_o, h_o, a_o = x[3 * n_h:], h[3 * n_h:], a[3 * n_h:]
        for j in range(n_h):
            a_o[j] = _sig(x_o[j] + h_o[j])
        a_i, a_f = a[:n_h], a[n_h:2 * n_h]
        c_p, c_b, t_b, h_b = c_prev[b], c_out[b], tanh_c[b], h_out[b]
        for j in range(n_h):
            c = a_f[j] * c_p[j] + a_i[j] * a_g[j]
            c_b[j] = c
            t_b[j] = _tanh(c)
        for j in range(n_h):
            h_b[j] = a_o[j] * t_b[j]
"""),
    # dout: gradient of this step's output; dmm: dgates(t+1) @ W_hh (the recurrent gradient);
    # dc: gradient of c(t), updated in place to that of c(t-1). Writes pre-activation dgates.
    # One loop per gate block, as in the forward: the single loop that wrote all four blocks
    # was not vectorized. dc first holds the gradient of c(t).
    "lstm_backward": ("dout, dmm, dc, acts, c_prev, tanh_c, dgates", "dc dgates", """\
    n_h = dout.shape[1]
    for b in range(dout.shape[0]):
        for j in range(n_h):
            dh = dout[b, j] + dmm[b, j]
            o = acts[b, 3 * n_h + j]
            tc = tanh_c[b, j]
            dc[b, j] += dh * o * (T(1.0) - tc * tc)
            dgates[b, 3 * n_h + j] = dh * tc * o * (T(1.0) - o)
        for j in range(n_h):
            i = acts[b, j]
            dgates[b, j] = dc[b, j] * acts[b, 2 * n_h + j] * i * (T(1.0) - i)
        for j in range(n_h):
            f = acts[b, n_h + j]
            dgates[b, n_h + j] = dc[b, j] * c_prev[b, j] * f * (T(1.0) - f)
        for j in range(n_h):
            g = acts[b, 2 * n_h + j]
            dgates[b, 2 * n_h + j] = dc[b, j] * acts[b, j] * (T(1.0) - g * g)
        for j in range(n_h):
            dc[b, j] *= acts[b, n_h + j]
"""),
    # gi: x @ W_ih.T + b_ih (B, 3H); gh: h_prev @ W_hh.T without bias; bhh: b_hh (zeros if none).
    # Keeps r, z, n and W_hn h + b_hn (needed by the gradient of r).
    # Loops over 1-D views of each gate block, as in lstm_forward (vectorized).
    "gru_forward": ("gi, gh, bhh, h_prev, h_out, acts, ghn", "h_out acts ghn", """\
    n_h = h_prev.shape[1]
    b_n = bhh[2 * n_h:]
    for b in range(gi.shape[0]):
        x, h, a = gi[b], gh[b], acts[b]
        for j in range(2 * n_h):  # the r and z gates
            a[j] = _sig(x[j] + h[j] + bhh[j])
        h_n, g_n = h[2 * n_h:], ghn[b]
        for j in range(n_h):
            g_n[j] = h_n[j] + b_n[j]
        x_n, a_r, a_n = x[2 * n_h:], a[:n_h], a[2 * n_h:]
        for j in range(n_h):
            a_n[j] = _tanh(x_n[j] + a_r[j] * g_n[j])
        a_z, h_p, h_o = a[n_h:2 * n_h], h_prev[b], h_out[b]
        for j in range(n_h):
            z = a_z[j]
            h_o[j] = (T(1.0) - z) * a_n[j] + z * h_p[j]
"""),
    # dh(t) = dout + dmm (dgh(t+1) @ W_hh) + dcarry (dh(t+1) * z(t+1)); dcarry is updated in place.
    # dgi and dgh differ only in the n block (W_hn h sits inside r * (...)). One loop per block,
    # as for the LSTM.
    "gru_backward": ("dout, dmm, dcarry, acts, ghn, h_prev, dgi, dgh", "dcarry dgi dgh", """\
    n_h = dout.shape[1]
    for b in range(dout.shape[0]):
        for j in range(n_h):  # dcarry holds dh(t) until the last loop
            dcarry[b, j] += dout[b, j] + dmm[b, j]
        for j in range(n_h):
            z = acts[b, n_h + j]
            n = acts[b, 2 * n_h + j]
            dn = dcarry[b, j] * (T(1.0) - z) * (T(1.0) - n * n)
            dgi[b, 2 * n_h + j] = dn
            dgh[b, 2 * n_h + j] = dn * acts[b, j]
        for j in range(n_h):
            z = acts[b, n_h + j]
            dz = dcarry[b, j] * (h_prev[b, j] - acts[b, 2 * n_h + j]) * z * (T(1.0) - z)
            dgi[b, n_h + j] = dz
            dgh[b, n_h + j] = dz
        for j in range(n_h):
            r = acts[b, j]
            dr = dgi[b, 2 * n_h + j] * ghn[b, j] * r * (T(1.0) - r)
            dgi[b, j] = dr
            dgh[b, j] = dr
        for j in range(n_h):
            dcarry[b, j] *= acts[b, n_h + j]
"""),
    "rnn_tanh_forward": ("xg, hg, h_out", "h_out", """\
    for b in range(xg.shape[0]):
        for j in range(xg.shape[1]):
            h_out[b, j] = _tanh(xg[b, j] + hg[b, j])
"""),
    "rnn_relu_forward": ("xg, hg, h_out", "h_out", """\
    for b in range(xg.shape[0]):
        for j in range(xg.shape[1]):
            v = xg[b, j] + hg[b, j]
            h_out[b, j] = v if v > T(0.0) else T(0.0)
"""),
    # dpre = (dout + dmm) * act'(pre), with act' written in terms of the saved output h.
    "rnn_tanh_backward": ("dout, dmm, h, dpre", "dpre", """\
    for b in range(h.shape[0]):
        for j in range(h.shape[1]):
            v = h[b, j]
            dpre[b, j] = (dout[b, j] + dmm[b, j]) * (T(1.0) - v * v)
"""),
    "rnn_relu_backward": ("dout, dmm, h, dpre", "dpre", """\
    for b in range(h.shape[0]):
        for j in range(h.shape[1]):
            dpre[b, j] = (dout[b, j] + dmm[b, j]) if h[b, j] > T(0.0) else T(0.0)
"""),
}

_ONE_D = {"bhh"}  # the only 1-D operand (a bias vector); everything else is (batch, features)


def build(kind: str, dtype: str) -> tuple:
    """Template for ``kind`` (a key of ``_BODIES``, e.g. ``"lstm_forward"``) in ``dtype``
    (``"float32"`` or ``"float64"``)."""
    args, writable, body = _BODIES[kind]
    nt = getattr(types, dtype)
    written = set(writable.split())
    sig = tuple(types.Array(nt, 1 if a in _ONE_D else 2, "C", readonly=a not in written)
                for a in args.split(", "))
    # float32: let LLVM fuse multiply-adds and use reciprocals (faster, still ~1 ulp)
    fast = ', fastmath={"contract", "arcp"}' if dtype == "float32" else ""
    decorator = f'@numba.njit(cache=True, nogil=True, error_model="numpy"{fast})\n'
    src = HEADER + _ACTIVATIONS[dtype] + "\n\n" + decorator + f"def kernel({args}):\n" + body
    return src, "kernel", sig, f"{kind}[{dtype}]"
