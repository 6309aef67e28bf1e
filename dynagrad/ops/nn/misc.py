"""Dropout, embedding lookup and resampling: ``dropout dropout1d dropout2d dropout3d embedding
pixel_shuffle pixel_unshuffle interpolate upsample upsample_nearest upsample_bilinear``.

Dropout masks come from dynagrad's default generator, so ``dg.manual_seed`` fixes them. The
embedding gradient is a scatter-add of the output gradient into a zero table (``index_add``), never
a dense one-hot product. Interpolation is separable: each spatial axis is resampled by gathering
source rows (``index_select``), so its gradient comes from the gathers' own backward.

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.nn.functional as F
    >>> F.interpolate(dg.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ... import dtypes
from ...autograd import grad_mode
from ...autograd.function import Node, record
from ...creation import zeros
from ...errors import describe
from ..elementwise import where
from ..indexing import trust_range
from ...kernels.cpu import backend as cpu
from ...random import rand, repeated_uniform
from ...tensor import Tensor, _wrap
from ..registry import register
from ._placement import composed
from ..placement import host_array, like

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "embedding", "pixel_shuffle",
           "pixel_unshuffle", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]


# --- dropout ------------------------------------------------------------------------------

def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _masked(input: Tensor, p: float, mask_shape: tuple, inplace: bool) -> Tensor:
    """``input * keep / (1 - p)`` with ``keep ~ Bernoulli(1 - p)`` drawn in ``mask_shape``."""
    if composed(input):
        mask = dropout_mask_composite(input, p, mask_shape)
        return input.mul_(mask) if inplace else input * mask
    cdt = input.dtype.compute
    if p == 1.0:
        scaled = np.zeros(mask_shape, dtype=input.dtype.np)
    else:
        keep = repeated_uniform(mask_shape, cdt) < (1.0 - p)
        scaled = keep.astype(input.dtype.np) * input.dtype.np.type(1.0 / (1.0 - p))
    mask = _wrap(scaled, input.dtype)
    return input.mul_(mask) if inplace else input * mask


def dropout_mask_composite(input: Tensor, p: float, mask_shape: tuple) -> Tensor:
    """``keep / (1 - p)`` in ``input``'s dtype and on its device, ``keep ~ Bernoulli(1 - p)``
    drawn from the default generator in ``mask_shape`` (the CPU path draws the same numbers)."""
    if p == 1.0:
        return zeros(mask_shape, dtype=input.dtype, device=input.device)
    keep = rand(*mask_shape, dtype=input.dtype.compute, device=input.device) < (1.0 - p)
    return keep.to(input.dtype) * float(input.dtype.np.type(1.0 / (1.0 - p)))


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (training
    only; otherwise ``input`` is returned unchanged).

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> _ = dg.manual_seed(0)
        >>> y = F.dropout(dg.ones(1000), p=0.25)
        >>> sorted(set(y.tolist())) == [0.0, float(dg.tensor(1 / 0.75))]
        True
    """
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _masked(input, p, tuple(input.shape), inplace)


def _feature_dropout(op: str, input: Tensor, p: float, training: bool, inplace: bool,
                     spatial: int) -> Tensor:
    """Drop whole channels: the mask is ``(N, C, 1, ...)`` (or ``(C, 1, ...)`` unbatched)."""
    _check_p(p)
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{op}: Expected {spatial + 1}D or {spatial + 2}D input, but received "
                           f"a {input.ndim}D input {describe(input)}")
    if not training or p == 0.0:
        return input
    lead = input.ndim - spatial
    mask_shape = tuple(input.shape[:lead]) + (1,) * spatial
    return _masked(input, p, mask_shape, inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an ``(N, C, L)`` or ``(C, L)`` input with probability ``p``."""
    return _feature_dropout("dropout1d", input, p, training, inplace, 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an ``(N, C, H, W)`` input with probability ``p``, scaling the rest
    by ``1 / (1 - p)``. A 3-D input is read as ``(N, C, L)`` (channel-wise 1-D dropout), with a
    warning, as PyTorch does.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> y = F.dropout2d(dg.ones(2, 8, 3, 3), p=0.5)
        >>> bool(((y.sum((2, 3)) == 0) | (y.sum((2, 3)) == 18)).all())
        True
    """
    _check_p(p)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"dropout2d: Expected 3D or 4D input, but received a {input.ndim}D "
                           f"input {describe(input)}")
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", stacklevel=2)
        return _feature_dropout("dropout2d", input, p, training, inplace, 1)
    return _feature_dropout("dropout2d", input, p, training, inplace, 2)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""
    return _feature_dropout("dropout3d", input, p, training, inplace, 3)


# --- embedding ----------------------------------------------------------------------------

class EmbeddingBackward0(Node):
    """Scatter-add of the output gradient rows into a zero table; padding rows get nothing."""

    def backward(self, g):
        idx, keep, counts = self.idx, self.keep, self.counts
        g2 = g.reshape(-1, self.table_shape[1])
        if keep is not None:  # drop the rows looked up at padding_idx
            g2 = g2.index_select(0, like(keep, g, dtypes.int64))
        if counts is not None:  # scale_grad_by_freq: divide by how often each row was used
            g2 = g2 / like(counts.reshape(-1, 1), g, g2.dtype)
        if grad_mode.GRAD_ENABLED[0] or composed(g):
            # a scatter-add of ops: differentiable (create_graph) and on any device
            grad = zeros(self.table_shape, dtype=g.dtype, device=g.device)
            return (grad.index_add(0, like(idx, g, dtypes.int64), g2),)
        # scatter-add straight into a fresh zero table (no copy of the table, no graph)
        cdt = g2.dtype.compute.np
        table = np.zeros(self.table_shape, dtype=cdt)
        src = np.ascontiguousarray(g2._data, dtype=cdt)
        cpu.index_add3(table.reshape((1,) + self.table_shape), idx,
                       src.reshape(1, idx.size, self.table_shape[1]))
        return (_wrap(table.astype(g.dtype.np, copy=False), g.dtype),)


def _embedding_device(input: Tensor, weight: Tensor, padding_idx) -> Tensor:
    """``embedding`` on a GPU from ``index_select`` (whose backward scatter-adds the rows), with
    the indices kept there: only their smallest and largest value are read back, for the range
    check. Rows looked up at ``padding_idx`` come from a detached copy, so they get no gradient."""
    num, dim = weight.shape
    idx = input.to(weight.device).reshape(-1).long()
    if idx.numel():
        lo, hi = int(idx.amin().item()), int(idx.amax().item())
        if lo < 0 or hi >= num:
            raise IndexError(f"embedding(): index out of range in self: index "
                             f"{lo if lo < 0 else hi} is not in [0, {num}) for weight "
                             f"{describe(weight)}")
        trust_range(idx, lo, hi)  # checked: index_select and its backward need not read it back
    rows = weight.index_select(0, idx)
    if padding_idx is not None:
        rows = where((idx == padding_idx).unsqueeze(1), rows.detach(), rows)
    return rows.reshape(tuple(input.shape) + (dim,))


def _renorm_rows(weight: Tensor, idx: np.ndarray, max_norm: float, norm_type: float) -> None:
    """Scale the looked-up rows whose ``norm_type``-norm exceeds ``max_norm`` down to it, in
    place (as PyTorch's ``embedding_renorm_``: this modifies ``weight`` outside autograd)."""
    rows = np.unique(idx)
    w = host_array(weight)
    norms = np.linalg.norm(w[rows].astype(np.float64), ord=norm_type, axis=1)
    big = norms > max_norm
    if big.any():
        scale = max_norm / (norms[big] + 1e-7)
        new_rows = (w[rows[big]] * scale[:, None]).astype(w.dtype)
        if composed(weight):  # the few changed rows go back to the device
            with grad_mode.no_grad():
                weight[like(rows[big], weight)] = like(new_rows, weight)
            return
        w[rows[big]] = new_rows
        weight._vc[0] += 1


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at the integer positions ``input``: output shape ``input.shape + (D,)``.

    ``padding_idx`` rows receive no gradient; ``max_norm`` renormalises the looked-up rows of
    ``weight`` in place first.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> F.embedding(dg.tensor([2, 0]), dg.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]))
        tensor([[4., 5.],
                [0., 1.]])
    """
    if not isinstance(input, Tensor) or input.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"embedding(): Expected tensor for argument #1 'indices' to have one of "
                           f"the following scalar types: Long, Int; but got {describe(input)}")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding(): 'weight' must be 2-D, got {describe(weight)}")
    if sparse:
        raise NotImplementedError("embedding(): sparse gradients are not supported; use "
                                  "sparse=False")
    num, dim = weight.shape
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise ValueError(f"embedding(): Padding_idx must be within num_embeddings "
                             f"(got padding_idx={padding_idx}, num_embeddings={num})")
        padding_idx = padding_idx + num if padding_idx < 0 else padding_idx
    if composed(weight) and max_norm is None and not scale_grad_by_freq:
        return _embedding_device(input, weight, padding_idx)
    idx = np.ascontiguousarray(host_array(input), dtype=np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        bad = int(idx[(idx < 0) | (idx >= num)][0])
        raise IndexError(f"embedding(): index out of range in self: index {bad} is not in "
                         f"[0, {num}) for weight {describe(weight)}")
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    if composed(weight):  # a gather of rows; the node below gives the gradient
        with grad_mode.no_grad():
            out = weight.index_select(0, like(idx, weight)).reshape(tuple(input.shape) + (dim,))
    else:
        out = _wrap(np.take(weight._data, idx, axis=0).reshape(tuple(input.shape) + (dim,)),
                    weight.dtype)
    if grad_mode.GRAD_ENABLED[0] and weight._requires_grad:
        node = EmbeddingBackward0()
        node.table_shape = (num, dim)
        node.keep = None
        if padding_idx is not None and (idx == padding_idx).any():
            node.keep = np.flatnonzero(idx != padding_idx)
            idx = idx[node.keep]
        node.idx = idx
        node.counts = np.bincount(idx, minlength=num)[idx] if scale_grad_by_freq else None
        record(node, (weight,), (out,))
    return out


# --- pixel shuffle ------------------------------------------------------------------------

def _shuffle_factor(op: str, input: Tensor, factor, what: str) -> int:
    """``factor`` as an int, after the rank and sign checks shared by pixel (un)shuffle."""
    r = int(factor)
    if input.ndim < 3:
        raise RuntimeError(f"{op} expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{op} expects a positive {what}, but got {r}")
    return r


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C*r*r, H, W) -> (*, C, H*r, W*r)``: move channel blocks into space.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> F.pixel_shuffle(dg.arange(4.0).reshape(1, 4, 1, 1), 2)
        tensor([[[[0., 1.],
                  [2., 3.]]]])
    """
    r = _shuffle_factor("pixel_shuffle", input, upscale_factor, "upscale_factor")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible "
                           f"by the square of upscale_factor, but input.size(-3)={c} is not "
                           f"divisible by {r * r}")
    k = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H*r, W*r) -> (*, C*r*r, H, W)``: the inverse of ``pixel_shuffle``."""
    r = _shuffle_factor("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    *lead, c, h, w = input.shape
    for name, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({d})={size} is not divisible "
                               f"by {r}")
    k = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# --- interpolate --------------------------------------------------------------------------

_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3}
_MODES = ("nearest", "nearest-exact") + tuple(_LINEAR_MODES)


def _sizes_and_scales(input: Tensor, size, scale_factor, recompute_scale_factor) -> tuple:
    """Output size per spatial dim and the scale each source index computation uses (PyTorch's
    rule: ``1 / scale_factor`` when one was given and is not recomputed, else ``in / out``)."""
    dim = input.ndim - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * dim
        if len(sizes) != dim:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, "
                             f"but got input with spatial dimensions of {spatial} and output size "
                             f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                             f"format and output size in (o1, o2, ...,oK) format.")
        return [int(s) for s in sizes], [None] * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    scales = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * dim
    if len(scales) != dim:
        raise ValueError(f"Input and scale_factor must have the same number of spatial "
                         f"dimensions, but got input with spatial dimensions of {spatial} and "
                         f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                         f"(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                         f"format.")
    sizes = [math.floor(float(n) * float(s)) for n, s in zip(spatial, scales)]
    return sizes, [None] * dim if recompute_scale_factor else [float(s) for s in scales]


def _area_scale(n_in: int, n_out: int, scale, align_corners: bool, ft):
    """PyTorch's per-axis scale in the kernel's float type ``ft``."""
    if align_corners:
        return ft((n_in - 1) / (n_out - 1)) if n_out > 1 else ft(0.0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n_in) / ft(n_out)


def _nearest_index(n_in: int, n_out: int, scale, exact: bool) -> np.ndarray:
    s = _area_scale(n_in, n_out, scale, False, np.float32)  # PyTorch computes these in float32
    dst = np.arange(n_out, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * s if exact else dst * s).astype(np.int64)
    return np.minimum(src, n_in - 1)


def _linear_weights(n_in: int, n_out: int, scale, align_corners: bool, ft) -> tuple:
    """Left/right source indices and the right weight ``lambda`` for each output position."""
    s = _area_scale(n_in, n_out, scale, align_corners, ft)
    dst = np.arange(n_out, dtype=ft)
    src = dst * s if align_corners else np.maximum((dst + ft(0.5)) * s - ft(0.5), ft(0.0))
    i0 = np.minimum(src.astype(np.int64), n_in - 1)
    lam = (src - i0.astype(ft)).astype(ft)
    i1 = np.minimum(i0 + 1, n_in - 1)
    return i0, i1, lam


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of an ``(N, C, *spatial)`` input to ``size`` or by
    ``scale_factor``. Modes: ``nearest``, ``nearest-exact`` (3-D to 5-D input), ``linear`` (3-D),
    ``bilinear`` (4-D) and ``trilinear`` (5-D), with ``align_corners`` for the linear modes.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> x = dg.tensor([[[[0.0, 1.0]]]])
        >>> F.interpolate(x, size=(1, 3), mode="bilinear", align_corners=True)
        tensor([[[[0.0000, 0.5000, 1.0000]]]])
    """
    if mode not in _MODES:
        raise NotImplementedError(f"interpolate(): mode {mode!r} is not supported; expected one "
                                  f"of {', '.join(_MODES)}")
    if antialias:
        raise NotImplementedError("interpolate(): antialias=True is not supported")
    if not isinstance(input, Tensor) or not input.dtype.is_floating_point:
        raise RuntimeError(f"interpolate(): expected a floating point tensor, got "
                           f"{describe(input)}")
    if mode in _LINEAR_MODES:
        need = _LINEAR_MODES[mode] + 2
        if input.ndim != need:
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {need}D "
                                      f"input")
    elif align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    elif not 3 <= input.ndim <= 5:
        raise NotImplementedError(f"interpolate(): input must be 3-D, 4-D or 5-D (N, C, ...) for "
                                  f"mode {mode!r}, got {describe(input)}")
    sizes, scales = _sizes_and_scales(input, size, scale_factor, recompute_scale_factor)
    if any(s <= 0 for s in sizes):
        raise RuntimeError(f"interpolate(): output size {sizes} must be positive for input "
                           f"{describe(input)}")
    ft = np.float64 if input.dtype is dtypes.float64 else np.float32
    x = input
    for k, (n_out, scale) in enumerate(zip(sizes, scales)):
        axis = k + 2
        n_in = x.shape[axis]
        if mode.startswith("nearest"):
            if n_out == n_in and scale in (None, 1.0):
                continue
            idx = _nearest_index(n_in, n_out, scale, mode == "nearest-exact")
            x = x.index_select(axis, like(idx, x, dtypes.int64))
            continue
        i0, i1, lam = _linear_weights(n_in, n_out, scale, bool(align_corners), ft)
        view = [1] * x.ndim
        view[axis] = n_out
        lam_t = like(lam.reshape(view), x, x.dtype)
        left = x.index_select(axis, like(i0, x, dtypes.int64))
        right = x.index_select(axis, like(i1, x, dtypes.int64))
        x = left + (right - left) * lam_t
    return x if x is not input else input.clone()


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Alias of ``interpolate`` (PyTorch's older name)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """``interpolate(..., mode="nearest")``."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """``interpolate(..., mode="bilinear", align_corners=True)`` (PyTorch's legacy default)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# dg.dropout as torch.dropout; torch.embedding takes (weight, indices), the reverse order
register("dropout", dropout, "nn", method=False)
register("dropout1d", dropout1d, "nn", method=False, functional=False)
register("dropout2d", dropout2d, "nn", method=False, functional=False)
register("dropout3d", dropout3d, "nn", method=False, functional=False)
register("embedding", embedding, "nn", method=False, functional=False)
register("interpolate", interpolate, "nn", method=False, functional=False)
