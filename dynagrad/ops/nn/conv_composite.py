"""Convolution, transposed convolution, ``unfold``/``fold`` and pooling composed from ops.

These are the device-agnostic forms of the fused CPU engine in ``conv.py`` and ``pooling.py``
(used for CUDA tensors): gradients, and double backward, come from the ops' own autograd.

Windows are index gathers. Along one spatial axis, the input positions that the kernel taps read
for every output position form a small host table of shape ``(out, k)``; one ``index_select`` per
axis with the flattened table gathers all windows at once, and a reshape and permute puts the taps
where the caller wants them. So ``unfold`` (im2col) costs a few launches whatever the kernel size,
and its gradient is the ``index_add`` of the gathers' backward. ``fold`` (col2im), the adjoint,
scatters with ``index_add`` into zeros. A convolution is ``unfold`` then one (batched) ``matmul``
per group; a transposed convolution is the transposed ``matmul`` then ``fold``.

Example:
    >>> import dynagrad as dg
    >>> x = dg.arange(16.0).reshape(1, 1, 4, 4)
    >>> unfold_composite(x, (2, 2), (2, 2), (1, 1), (0, 0), (0, 0), (2, 2))[0, :, 0].tolist()
    [0.0, 1.0, 4.0, 5.0]
"""
from __future__ import annotations

import math

import numpy as np

from ...creation import zeros
from ..elementwise import where
from ..linalg import matmul
from ..movement import pad
from ...tensor import Tensor
from ..placement import like
from ._placement import index_table


# --- windows ------------------------------------------------------------------------------------

def window_table(n_out: int, k: int, stride: int, dilation: int) -> np.ndarray:
    """``(n_out, k)`` positions ``o * stride + i * dilation`` read by tap ``i`` of output ``o``."""
    return (np.arange(n_out, dtype=np.int64)[:, None] * stride
            + np.arange(k, dtype=np.int64)[None, :] * dilation)


def clamped_taps(first: np.ndarray, count: np.ndarray, step: int = 1) -> np.ndarray:
    """``(n_out, K)`` positions of windows that start at ``first`` and hold ``count`` taps
    ``step`` apart; ``K`` is the largest count and a shorter window repeats its last tap (which
    changes neither a maximum nor, masked, a sum)."""
    k = max(int(count.max()) if count.size else 1, 1)
    last = np.maximum(count - 1, 0)[:, None]
    return first[:, None] + np.minimum(np.arange(k, dtype=np.int64)[None, :], last) * step


def _gather_axes(x: Tensor, first_axis: int, tables) -> Tensor:
    """``x`` with axis ``first_axis + a`` replaced by the ``tables[a].size`` positions of
    ``tables[a]`` (flattened); an axis whose table is the identity is left as it is."""
    for a, table in enumerate(tables):
        axis = first_axis + a
        flat = table.reshape(-1)
        if flat.size == x.shape[axis] and np.array_equal(flat, np.arange(flat.size)):
            continue
        x = x.index_select(axis, index_table(flat, x))
    return x


def _taps_after_outputs(nsp: int) -> tuple:
    """The permutation ``(N, C, O1, K1, O2, K2, ..) -> (N, C, K1, K2, .., O1, O2, ..)``."""
    return (0, 1) + tuple(3 + 2 * a for a in range(nsp)) + tuple(2 + 2 * a for a in range(nsp))


def _taps_interleaved(nsp: int) -> tuple:
    """The permutation ``(N, C, K1, K2, .., O1, O2, ..) -> (N, C, O1, K1, O2, K2, ..)``."""
    return (0, 1) + tuple(d for a in range(nsp) for d in (2 + nsp + a, 2 + a))


# --- im2col / col2im ----------------------------------------------------------------------------

def unfold_composite(x: Tensor, k: tuple, stride: tuple, dilation: tuple, pad_lo: tuple,
                     pad_hi: tuple, out: tuple) -> Tensor:
    """The ``(N, C * prod(k), prod(out))`` sliding blocks of ``x`` ``(N, C, *spatial)``, zero
    padded by ``pad_lo``/``pad_hi`` per spatial dim (rows ordered ``(C, *k)`` as conv weights)."""
    nsp = len(k)
    n, c = x.shape[:2]
    if any(pad_lo) or any(pad_hi):
        x = pad(x, [w for lo, hi in zip(reversed(pad_lo), reversed(pad_hi)) for w in (lo, hi)])
    tables = [window_table(o, kk, s, d) for o, kk, s, d in zip(out, k, stride, dilation)]
    cols = _gather_axes(x, 2, tables)
    cols = cols.reshape((n, c) + tuple(v for o, kk in zip(out, k) for v in (o, kk)))
    return cols.permute(_taps_after_outputs(nsp)).reshape(n, c * math.prod(k), math.prod(out))


def fold_composite(cols: Tensor, size: tuple, blocks: tuple, k: tuple, stride: tuple,
                   dilation: tuple, padding: tuple) -> Tensor:
    """Sum the ``(N, C * prod(k), prod(blocks))`` blocks into ``(N, C, *size)`` (the adjoint of
    ``unfold_composite`` with symmetric ``padding``): overlapping taps add up."""
    nsp = len(k)
    n = cols.shape[0]
    c = cols.shape[1] // math.prod(k)
    x = cols.reshape((n, c) + tuple(k) + tuple(blocks)).permute(_taps_interleaved(nsp))
    x = x.reshape((n, c) + tuple(b * kk for b, kk in zip(blocks, k)))
    for a in range(nsp):
        axis = 2 + a
        table = window_table(blocks[a], k[a], stride[a], dilation[a]).reshape(-1)
        shape = list(x.shape)
        shape[axis] = size[a] + 2 * padding[a]
        base = zeros(tuple(shape), dtype=x.dtype, device=x.device)
        x = base.index_add(axis, index_table(table, x), x)
        if padding[a]:
            x = x.narrow(axis, padding[a], size[a])
    return x


# --- convolution --------------------------------------------------------------------------------

def conv_composite(x: Tensor, weight: Tensor, bias, stride: tuple, pad_lo: tuple, pad_hi: tuple,
                   dilation: tuple, groups: int, out: tuple) -> Tensor:
    """Convolution of the batched ``x`` ``(N, C, *spatial)`` (checked arguments, output spatial
    size ``out``): ``unfold`` then one matmul per group, plus the bias."""
    n, o = x.shape[0], weight.shape[0]
    k = tuple(weight.shape[2:])
    cols = unfold_composite(x, k, stride, dilation, pad_lo, pad_hi, out)
    length = math.prod(out)
    rows = cols.shape[1] // groups
    if groups == 1:
        res = matmul(weight.reshape(o, rows), cols)
    else:
        res = matmul(weight.reshape(groups, o // groups, rows),
                     cols.reshape(n, groups, rows, length)).reshape(n, o, length)
    if bias is not None:
        res = res + bias.reshape(1, o, 1)
    return res.reshape((n, o) + tuple(out))


def conv_transpose_composite(x: Tensor, weight: Tensor, bias, stride: tuple, padding: tuple,
                             dilation: tuple, groups: int, out: tuple) -> Tensor:
    """Transposed convolution of the batched ``x`` ``(N, C_in, *spatial)`` to spatial size
    ``out``: the transposed per-group matmul gives the columns, ``fold`` sums them."""
    n, cin = x.shape[:2]
    spatial = tuple(x.shape[2:])
    k = tuple(weight.shape[2:])
    cout = weight.shape[1] * groups
    length = math.prod(spatial)
    w3 = weight.reshape(groups, cin // groups, -1)
    cols = matmul(w3.mT, x.reshape(n, groups, cin // groups, length))
    res = fold_composite(cols.reshape(n, cout * math.prod(k), length), out, spatial, k, stride,
                         dilation, padding)
    if bias is not None:
        res = res + bias.reshape((1, cout) + (1,) * len(out))
    return res


# --- pooling ------------------------------------------------------------------------------------

def pool_windows(planes: Tensor, taps_h: np.ndarray, taps_w: np.ndarray) -> Tensor:
    """``(B, Oh, Ow, Kh * Kw)``: the window values of ``planes`` ``(B, H, W)`` for tap position
    tables ``taps_h`` ``(Oh, Kh)`` and ``taps_w`` ``(Ow, Kw)``."""
    (oh, kh), (ow, kw) = taps_h.shape, taps_w.shape
    v = _gather_axes(planes, 1, (taps_h, taps_w))
    return v.reshape(-1, oh, kh, ow, kw).permute(0, 1, 3, 2, 4).reshape(-1, oh, ow, kh * kw)


def max_pool_composite(planes: Tensor, taps_h: np.ndarray, taps_w: np.ndarray) -> tuple:
    """``(out, indices)``, both ``(B, Oh, Ow)``: each window's maximum (its first occurrence,
    which alone receives the gradient) and its flat index ``h * W + w`` in the plane."""
    v = pool_windows(planes, taps_h, taps_w)
    arg = v.detach().argmax(-1, keepdim=True)
    out = v.gather(-1, arg).squeeze(-1)
    flat = (taps_h[:, None, :, None] * planes.shape[2] + taps_w[None, :, None, :])
    flat = flat.reshape(1, taps_h.shape[0], taps_w.shape[0], -1)
    indices = index_table(flat, planes).expand(tuple(v.shape)).gather(-1, arg).squeeze(-1)
    return out, indices


def avg_pool_composite(planes: Tensor, taps_h: np.ndarray, count_h: np.ndarray,
                       taps_w: np.ndarray, count_w: np.ndarray, scale: np.ndarray) -> Tensor:
    """``(B, Oh, Ow)``: each window's sum over its first ``count`` taps per axis, times
    ``scale`` ``(Oh, Ow)`` (the reciprocal divisor)."""
    v = pool_windows(planes, taps_h, taps_w)
    kh, kw = taps_h.shape[1], taps_w.shape[1]
    valid = ((np.arange(kh)[None, :] < count_h[:, None])[:, None, :, None]
             & (np.arange(kw)[None, :] < count_w[:, None])[None, :, None, :])
    if not valid.all():
        v = where(like(valid.reshape(1, len(count_h), len(count_w), -1), v), v, 0.0)
    return v.sum(-1) * like(scale, v, v.dtype)
