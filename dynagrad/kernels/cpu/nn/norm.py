"""Kernel templates for the normalisation layers (batch norm, layer norm), forward and backward.

Each returns ``(source, "kernel", argument_types, description)`` for
``dynagrad.kernels.cache.lookup`` and specializes on the data dtype only. Statistics accumulate in
float64 whatever the data dtype. The kernels let Numba reassociate sums
(``fastmath={"reassoc", "contract"}``) so reductions vectorize; NaN and
infinity semantics are kept (no ``nnan``/``ninf`` flags).

Layouts:

* batch norm sees the input as a contiguous ``(N, C, L)`` array (``L`` = product of spatial dims)
  and reduces over ``N`` and ``L`` per channel;
* layer norm sees it as a contiguous ``(M, K)`` array and reduces each row.

Example:
    >>> src, name, sig, what = batch_norm_forward("float32")
    >>> what
    'batch_norm_forward float32'
"""
from __future__ import annotations

from numba import types

from ..templates import HEADER, _arr

_F64 = types.float64
_I64 = types.int64

# reassociation lets LLVM vectorize the float64 sums; no flag assumes finite values
_DECORATOR = ('@numba.njit(cache=True, nogil=True, error_model="numpy", '
              'fastmath={"reassoc", "contract"})\n')


def batch_norm_forward(dtype: str) -> tuple:
    """Per-channel statistics (training) or running statistics (eval), then the normalisation.

    Arguments: ``x (N,C,L)``, ``weight (C,)``, ``bias (C,)``, ``running_mean (C,)``,
    ``running_var (C,)``, ``eps``, ``training`` (0/1), outputs ``y (N,C,L)``, ``mean (C,)``,
    ``var (C,)`` (biased batch variance; running var in eval) and ``invstd (C,)`` in float64.
    """
    dt = f"np.{dtype}"
    src = HEADER + _DECORATOR + f"""\
def kernel(x, weight, bias, running_mean, running_var, eps, training, y, mean, var, invstd):
    N, C, L = x.shape
    count = N * L
    for c in range(C):
        if training:
            s = 0.0
            for n in range(N):
                xr = x[n, c]
                for j in range(L):
                    s += np.float64(xr[j])
            m = s / count
            q = 0.0
            for n in range(N):
                xr = x[n, c]
                for j in range(L):
                    d = np.float64(xr[j]) - m
                    q += d * d
            v = q / count
        else:
            m = np.float64(running_mean[c])
            v = np.float64(running_var[c])
        istd = 1.0 / math.sqrt(v + eps)
        mean[c] = m
        var[c] = v
        invstd[c] = istd
        # y = (x - m) * (istd * w) + b, with the per-channel constants in the data dtype
        mf = {dt}(m)
        a = {dt}(np.float64(weight[c]) * istd)
        b = bias[c]
        for n in range(N):
            xr = x[n, c]
            yr = y[n, c]
            for j in range(L):
                yr[j] = (xr[j] - mf) * a + b
"""
    sig = (_arr(dtype, 3, True, True), _arr(dtype, 1, True, True), _arr(dtype, 1, True, True),
           _arr(dtype, 1, True, True), _arr(dtype, 1, True, True), _F64, _I64,
           _arr(dtype, 3, True), _arr("float64", 1, True), _arr("float64", 1, True),
           _arr("float64", 1, True))
    return src, "kernel", sig, f"batch_norm_forward {dtype}"


def batch_norm_backward(dtype: str) -> tuple:
    """``grad_input``, ``grad_weight`` and ``grad_bias`` of batch norm in one pass per channel.

    Arguments: ``grad_out (N,C,L)``, ``x (N,C,L)``, ``mean (C,)``, ``invstd (C,)`` (float64),
    ``weight (C,)``, ``training`` (0/1: whether the statistics depended on ``x``), outputs
    ``grad_input (N,C,L)``, ``grad_weight (C,)``, ``grad_bias (C,)`` (float64).
    """
    dt = f"np.{dtype}"
    src = HEADER + _DECORATOR + f"""\
def kernel(g, x, mean, invstd, weight, training, gx, gw, gb):
    N, C, L = x.shape
    count = N * L
    for c in range(C):
        m = mean[c]
        istd = invstd[c]
        sg = 0.0
        sgx = 0.0
        for n in range(N):
            gr = g[n, c]
            xr = x[n, c]
            for j in range(L):
                gv = np.float64(gr[j])
                sg += gv
                sgx += gv * (np.float64(xr[j]) - m)
        gb[c] = sg
        gw[c] = sgx * istd          # sum(g * xhat)
        # grad_input = w*istd*(g - mean(g) - xhat*mean(g*xhat)) = a*g + k*(x - m) + d
        a = np.float64(weight[c]) * istd
        if training:
            k = -a * istd * istd * sgx / count
            d = -a * sg / count
        else:
            k = 0.0
            d = 0.0
        mf = {dt}(m)
        af = {dt}(a)
        kf = {dt}(k)
        df = {dt}(d)
        for n in range(N):
            gr = g[n, c]
            xr = x[n, c]
            out = gx[n, c]
            for j in range(L):
                out[j] = gr[j] * af + (xr[j] - mf) * kf + df
"""
    sig = (_arr(dtype, 3, True, True), _arr(dtype, 3, True, True), _arr("float64", 1, True, True),
           _arr("float64", 1, True, True), _arr(dtype, 1, True, True), _I64,
           _arr(dtype, 3, True), _arr("float64", 1, True), _arr("float64", 1, True))
    return src, "kernel", sig, f"batch_norm_backward {dtype}"


# one row's mean and reciprocal standard deviation (float64, two passes over the row), stored, and
# the mean in the data dtype as ``mf``: the start of each row in the layer and group norm forwards
_ROW_STATS = """\
        xr = x[i]
        s = 0.0
        for j in range(K):
            s += np.float64(xr[j])
        m = s / K
        q = 0.0
        for j in range(K):
            d = np.float64(xr[j]) - m
            q += d * d
        r = 1.0 / math.sqrt(q / K + eps)
        mean[i] = m
        rstd[i] = r
        mf = {dt}(m)"""


def layer_norm_forward(dtype: str) -> tuple:
    """Row statistics of ``x (M,K)`` and ``y = (x - mean) * rstd * weight + bias``.

    Arguments: ``x``, ``weight (G,K)``, ``bias (G,K)``, ``first``, ``eps``, outputs ``y (M,K)``,
    ``mean (M,)`` and ``rstd (M,)`` in float64. Row ``i`` is row ``first + i`` of the whole
    input and takes row ``(first + i) % G`` of each parameter table: one row for layer norm (or
    an absent parameter), a group's per-column table for group norm, whose rows are ``(sample,
    group)`` pairs.
    """
    dt = f"np.{dtype}"
    src = HEADER + _DECORATOR + f"""\
def kernel(x, weight, bias, first, eps, y, mean, rstd):
    M, K = x.shape
    for i in range(M):
{_ROW_STATS.format(dt=dt)}
        rf = {dt}(r)
        wr = weight[(first + i) % weight.shape[0]]
        br = bias[(first + i) % bias.shape[0]]
        yr = y[i]
        for j in range(K):
            yr[j] = (xr[j] - mf) * rf * wr[j] + br[j]
"""
    sig = (_arr(dtype, 2, True, True), _arr(dtype, 2, True, True), _arr(dtype, 2, True, True),
           _I64, _F64, _arr(dtype, 2, True), _arr("float64", 1, True), _arr("float64", 1, True))
    return src, "kernel", sig, f"layer_norm_forward {dtype}"


# the start of the layer and group norm backwards: zeroed parameter-gradient tables, then per row
# its gradient, input, statistics, weight row and gradient-table rows
_BACKWARD_ROWS = """\
    gw[:] = 0.0
    gb[:] = 0.0
    for i in range(M):
        gr = g[i]
        xr = x[i]
        m = mean[i]
        r = rstd[i]
        wr = weight[(first + i) % weight.shape[0]]
        gwr = gw[(first + i) % G]
        gbr = gb[(first + i) % G]"""


def layer_norm_backward(dtype: str) -> tuple:
    """``grad_input``, ``grad_weight``, ``grad_bias`` of layer norm over rows of ``(M,K)``.

    Arguments: ``grad_out (M,K)``, ``x (M,K)``, ``mean (M,)``, ``rstd (M,)`` (float64),
    ``weight (G,K)``, ``first`` (rows as in ``layer_norm_forward``), outputs ``grad_input
    (M,K)``, ``grad_weight`` and ``grad_bias`` (float64 ``(groups, K)`` tables, overwritten).
    """
    dt = f"np.{dtype}"
    src = HEADER + _DECORATOR + f"""\
def kernel(g, x, mean, rstd, weight, first, gx, gw, gb):
    M, K = x.shape
    G = gw.shape[0]
{_BACKWARD_ROWS}
        # a = sum(g*w), b = sum(g*w*(x - m)); the parameter gradients accumulate per column
        a = 0.0
        b = 0.0
        for j in range(K):
            gv = np.float64(gr[j])
            xc = np.float64(xr[j]) - m
            gwv = gv * np.float64(wr[j])
            a += gwv
            b += gwv * xc
            gwr[j] += gv * xc * r
            gbr[j] += gv
        # grad_input = r * (g*w - mean(g*w) - xhat * mean(g*w*xhat))
        mf = {dt}(m)
        rf = {dt}(r)
        ca = {dt}(a / K)
        cb = {dt}(b * r * r / K)
        out = gx[i]
        for j in range(K):
            out[j] = rf * (gr[j] * wr[j] - ca) - (xr[j] - mf) * (rf * cb)
"""
    sig = (_arr(dtype, 2, True, True), _arr(dtype, 2, True, True), _arr("float64", 1, True, True),
           _arr("float64", 1, True, True), _arr(dtype, 2, True, True), _I64, _arr(dtype, 2, True),
           _arr("float64", 2, True), _arr("float64", 2, True))
    return src, "kernel", sig, f"layer_norm_backward {dtype}"


def group_norm_forward(dtype: str) -> tuple:
    """Group norm over the rows of ``x (M,K)``, each row one ``(sample, group)`` pair of ``Cg``
    channels over ``K / Cg`` positions: row statistics, then per channel
    ``y = (x - mean) * (rstd * weight) + bias`` with the constants computed once per channel.

    Arguments as ``layer_norm_forward``'s, but ``weight`` and ``bias`` are ``(G, Cg)`` tables
    with one entry per channel (not per column).
    """
    dt = f"np.{dtype}"
    src = HEADER + _DECORATOR + f"""\
def kernel(x, weight, bias, first, eps, y, mean, rstd):
    M, K = x.shape
    Cg = weight.shape[1]
    S = K // Cg
    for i in range(M):
{_ROW_STATS.format(dt=dt)}
        wr = weight[(first + i) % weight.shape[0]]
        br = bias[(first + i) % bias.shape[0]]
        for c in range(Cg):
            a = {dt}(r * np.float64(wr[c]))
            b = br[c]
            # a channel's slice: loops from 0 vectorize (an index that may be negative, as
            # c * S + j may seem, takes a wraparound select per element and stays scalar)
            xc = xr[c * S:c * S + S]
            yc = y[i, c * S:c * S + S]
            for j in range(S):
                yc[j] = (xc[j] - mf) * a + b
"""
    sig = (_arr(dtype, 2, True, True), _arr(dtype, 2, True, True), _arr(dtype, 2, True, True),
           _I64, _F64, _arr(dtype, 2, True), _arr("float64", 1, True), _arr("float64", 1, True))
    return src, "kernel", sig, f"group_norm_forward {dtype}"


def group_norm_backward(dtype: str) -> tuple:
    """``grad_input``, ``grad_weight``, ``grad_bias`` of ``group_norm_forward``.

    Arguments as ``layer_norm_backward``'s, but ``weight`` is a ``(G, Cg)`` table and the outputs
    ``grad_weight`` and ``grad_bias`` are float64 ``(groups, Cg)`` tables: each channel sums its
    positions in registers and adds to its entry once per row (a per-column table, as layer norm
    keeps, took a float64 read-modify-write per element).
    """
    dt = f"np.{dtype}"
    src = HEADER + _DECORATOR + f"""\
def kernel(g, x, mean, rstd, weight, first, gx, gw, gb):
    M, K = x.shape
    G, Cg = gw.shape
    S = K // Cg
{_BACKWARD_ROWS}
        # a = sum(g*w), b = sum(g*w*(x - m)), from per-channel sums of g and g*(x - m)
        a = 0.0
        b = 0.0
        for c in range(Cg):
            sg = 0.0
            sgx = 0.0
            gc = gr[c * S:c * S + S]  # (slices: see group_norm_forward)
            xc = xr[c * S:c * S + S]
            for j in range(S):
                gv = np.float64(gc[j])
                sg += gv
                sgx += gv * (np.float64(xc[j]) - m)
            wv = np.float64(wr[c])
            a += sg * wv
            b += sgx * wv
            gwr[c] += sgx * r
            gbr[c] += sg
        # grad_input = r * (g*w - mean(g*w) - xhat * mean(g*w*xhat)), per channel
        mf = {dt}(m)
        k = {dt}(r * a / K)
        q = {dt}(b * r * r * r / K)
        for c in range(Cg):
            p = {dt}(r * np.float64(wr[c]))
            gc = gr[c * S:c * S + S]
            xc = xr[c * S:c * S + S]
            out = gx[i, c * S:c * S + S]
            for j in range(S):
                out[j] = gc[j] * p - (xc[j] - mf) * q - k
"""
    sig = (_arr(dtype, 2, True, True), _arr(dtype, 2, True, True), _arr("float64", 1, True, True),
           _arr("float64", 1, True, True), _arr(dtype, 2, True, True), _I64, _arr(dtype, 2, True),
           _arr("float64", 2, True), _arr("float64", 2, True))
    return src, "kernel", sig, f"group_norm_backward {dtype}"
