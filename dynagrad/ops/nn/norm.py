"""Normalisation functions: ``batch_norm layer_norm group_norm instance_norm rms_norm``.

Batch norm and layer norm run one fused generated kernel forward (statistics and normalisation)
and one backward (``grad_input``, ``grad_weight`` and ``grad_bias`` together), recorded as a single
autograd node. When a backward pass itself records a graph (``create_graph=True``), the node builds
its gradient from ordinary dynagrad ops instead, so double backward works. Group norm and instance
norm reuse those kernels on reshaped views; RMS norm is a short composition of ops. On CUDA,
``batch_norm_composite`` and ``layer_norm_composite`` compute the same from reductions and
elementwise ops (autograd gives the gradients).

Example:
    >>> import dynagrad as dg
    >>> import dynagrad.nn.functional as F
    >>> x = dg.tensor([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]])
    >>> F.layer_norm(x, (3,)).round(decimals=3)
    tensor([[-1.2250,  0.0000,  1.2250],
            [ 0.0000,  0.0000,  0.0000]])
"""
from __future__ import annotations

import math

import numpy as np

from ..._runtime.blas_threads import run_split
from ...autograd import grad_mode
from ...autograd.function import Node, record
from ...dtypes import float64
from ...errors import describe
from ...kernels import cache
from ...kernels.cpu.nn import norm as templates
from ...tensor import Tensor, _wrap
from ..registry import register
from ._placement import composed

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm"]

_KERNELS: dict = {}


def _kernel(which: str, dtype: str):
    key = ("nn_norm", which, dtype)
    k = _KERNELS.get(key)
    if k is None:
        k = _KERNELS[key] = cache.lookup(key, lambda: getattr(templates, which)(dtype))
    return k


def _check_float(op: str, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op}(): expected a floating point input, got {describe(x)}")


def _param_array(p: Tensor | None, n: int, fill: float, np_dtype) -> np.ndarray:
    """The parameter's data as a contiguous 1-D array of ``np_dtype`` (``fill`` when absent)."""
    if p is None:
        return np.full(n, fill, dtype=np_dtype)
    return np.ascontiguousarray(p._data.reshape(n), dtype=np_dtype)


def _grad_like(arr: np.ndarray, p: Tensor) -> Tensor:
    return _wrap(arr.reshape(p._data.shape).astype(p.dtype.np), p.dtype)


def _fused_backward(which: str, g: Tensor, x: Tensor, w, b, stats: tuple,
                    flags: tuple = ()) -> tuple:
    """``(gx, gw, gb)`` from one fused backward kernel, called as ``kernel(g, x, *stats, weight,
    *flags, gx, gw, gb)`` with per-channel (dim 1) ``gw``/``gb``; None for an absent parameter."""
    cdt = x.dtype.compute
    xa = np.ascontiguousarray(x._data, dtype=cdt.np)
    ga = np.ascontiguousarray(g._data, dtype=cdt.np)
    C = xa.shape[1]
    gx = np.empty_like(xa)
    gw = np.empty(C)
    gb = np.empty(C)
    _kernel(which, cdt.name)(ga, xa, *stats, _param_array(w, C, 1.0, cdt.np), *flags, gx, gw, gb)
    return (_wrap(gx.astype(x.dtype.np, copy=False), x.dtype),
            None if w is None else _grad_like(gw, w),
            None if b is None else _grad_like(gb, b))


def _record_fused(node_cls: type[Node], x: Tensor, weight, bias, out: Tensor, **state) -> None:
    """Record a ``node_cls`` producing ``out`` (saving ``x weight bias``, with ``state`` set as
    attributes) when grad mode is on and any of the three requires grad."""
    if grad_mode.GRAD_ENABLED[0] and any(t is not None and t._requires_grad
                                         for t in (x, weight, bias)):
        node = node_cls()
        node.save(x, weight, bias)
        for name, value in state.items():
            setattr(node, name, value)
        record(node, (x, weight, bias), (out,))


def _composed_backward(g, x, w, b, eps, stat_dims, param_dims, w_shape, stats):
    """The normalisation gradient built from differentiable ops (used under ``create_graph``).

    ``stat_dims`` are the dims each statistic averages over; ``param_dims`` the dims summed for the
    weight/bias gradients; ``w_shape`` how the weight broadcasts against ``x``. ``stats`` is
    ``None`` (statistics depend on ``x``: recompute them) or fixed ``(mean, invstd)`` arrays.
    """
    if stats is None:
        mean = x.mean(stat_dims, keepdim=True)
        xc = x - mean
        invstd = ((xc * xc).mean(stat_dims, keepdim=True) + eps).rsqrt()
    else:
        mean = _wrap(stats[0].astype(x.dtype.np), x.dtype)
        invstd = _wrap(stats[1].astype(x.dtype.np), x.dtype)
        xc = x - mean
    xhat = xc * invstd
    gxhat = g if w is None else g * w.reshape(w_shape)
    if stats is None:
        gx = invstd * (gxhat - gxhat.mean(stat_dims, keepdim=True)
                       - xhat * (gxhat * xhat).mean(stat_dims, keepdim=True))
    else:
        gx = gxhat * invstd
    gw = None if w is None else (g * xhat).sum(param_dims).reshape(w.shape)
    gb = None if b is None else g.sum(param_dims).reshape(b.shape)
    return gx, gw, gb


# --- batch norm ---------------------------------------------------------------------------

class NativeBatchNormBackward0(Node):
    """Backward of batch norm over an ``(N, C, L)`` input: one kernel for all three gradients."""

    def backward(self, g):
        x, w, b = self.saved_tensors
        stats = None if self.training else (self.mean.reshape(1, -1, 1),
                                            self.invstd.reshape(1, -1, 1))
        if grad_mode.GRAD_ENABLED[0]:  # create_graph: the gradient must be differentiable
            return _composed_backward(g, x, w, b, self.eps, (0, 2), (0, 2), (1, -1, 1), stats)
        return _fused_backward("batch_norm_backward", g, x, w, b, (self.mean, self.invstd),
                               (int(self.training),))


def _check_channels(op: str, name: str, t: Tensor | None, C: int) -> None:
    if t is not None and t.numel() != C:
        raise RuntimeError(f"{op}(): {name} should contain {C} elements not {t.numel()} "
                           f"(got {name}={describe(t)})")


def _blend_running(buf: Tensor, batch_value: Tensor, momentum: float) -> None:
    """``buf = (1 - momentum) * buf + momentum * batch_value`` in place, in float64, from a
    tensor on ``buf``'s device (no graph; the in-place copy bumps ``buf``'s version)."""
    with grad_mode.no_grad():
        new = buf.to(float64) * (1.0 - momentum) + batch_value.reshape(buf.shape).to(float64) \
            * momentum
        buf.copy_(new.to(buf.dtype))


def _update_running(buf: Tensor, batch_value: np.ndarray, momentum: float) -> None:
    """``buf = (1 - momentum) * buf + momentum * batch_value`` in place (a version bump)."""
    new = (1.0 - momentum) * buf._data.astype(np.float64) + momentum * batch_value
    buf._data[...] = new.reshape(buf._data.shape).astype(buf.dtype.np)
    buf._vc[0] += 1


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) of ``input`` by batch statistics (training) or by the
    running statistics (eval); in training the running statistics are updated in place with
    ``momentum`` (the variance with Bessel's correction).

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> x = dg.tensor([[0.0, 10.0], [2.0, 10.0]])
        >>> F.batch_norm(x, None, None, training=True).round(decimals=3)
        tensor([[-1.,  0.],
                [ 1.,  0.]])
    """
    _check_float("batch_norm", input)
    if input.ndim < 2:
        raise ValueError(f"batch_norm(): expected an input with at least 2 dims (N, C, ...), got "
                         f"{describe(input)}")
    shape = tuple(input.shape)
    N, C = shape[0], shape[1]
    L = math.prod(shape[2:])
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_channels("batch_norm", name, t, C)
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("batch_norm(): running_mean and running_var must be defined in "
                           "evaluation mode (training=False)")
    if training and N * L <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{list(shape)}")
    if composed(input, running_mean, running_var, weight, bias):
        return batch_norm_composite(input, running_mean, running_var, weight, bias, training,
                                    momentum, eps)
    x3 = input.reshape(N, C, L)
    cdt = input.dtype.compute
    xa = np.ascontiguousarray(x3._data, dtype=cdt.np)
    y = np.empty_like(xa)
    mean, var, invstd = np.empty(C), np.empty(C), np.empty(C)
    use_batch = bool(training)
    _kernel("batch_norm_forward", cdt.name)(
        xa, _param_array(weight, C, 1.0, cdt.np), _param_array(bias, C, 0.0, cdt.np),
        _param_array(running_mean, C, 0.0, cdt.np), _param_array(running_var, C, 1.0, cdt.np),
        float(eps), int(use_batch), y, mean, var, invstd)
    if use_batch:
        count = N * L
        if running_mean is not None:
            _update_running(running_mean, mean, momentum)
        if running_var is not None:
            _update_running(running_var, var * (count / (count - 1)), momentum)
    out = _wrap(y.astype(input.dtype.np, copy=False), input.dtype)
    _record_fused(NativeBatchNormBackward0, x3, weight, bias, out, mean=mean, invstd=invstd,
                  training=use_batch, eps=float(eps))
    return out.reshape(shape)


def _affine(y: Tensor, weight, bias, shape: tuple) -> Tensor:
    """``y * weight + bias`` with the parameters (in ``y``'s dtype) viewed as ``shape``."""
    if weight is not None:
        y = y * weight.reshape(shape).to(y.dtype)
    if bias is not None:
        y = y + bias.reshape(shape).to(y.dtype)
    return y


def _normalize(x: Tensor, dims, eps: float) -> tuple:
    """``((x - mean) / sqrt(var + eps), mean, var)`` over ``dims`` (biased variance, kept dims)."""
    mean = x.mean(dims, keepdim=True)
    d = x - mean
    var = (d * d).mean(dims, keepdim=True)
    return d * (var + eps).rsqrt(), mean, var


def batch_norm_composite(input: Tensor, running_mean, running_var, weight, bias,
                         training: bool, momentum: float, eps: float) -> Tensor:
    """``batch_norm`` from reductions and elementwise ops (any device; checked arguments).

    Training normalises by the batch statistics and blends them into the running ones in place
    (the variance with Bessel's correction); evaluation normalises by the running statistics.
    """
    shape = tuple(input.shape)
    C = shape[1]
    cdt = input.dtype.compute
    x = input if input.dtype is cdt else input.to(cdt)
    bshape = (1, C) + (1,) * (len(shape) - 2)
    if training:
        dims = (0,) + tuple(range(2, len(shape)))
        y, mean, var = _normalize(x, dims, eps)
        count = input.numel() // C
        if running_mean is not None:
            _blend_running(running_mean, mean.detach(), momentum)
        if running_var is not None:
            _blend_running(running_var, var.detach() * (count / (count - 1)), momentum)
    else:
        y = (x - running_mean.reshape(bshape).to(cdt)) * \
            (running_var.reshape(bshape).to(cdt) + eps).rsqrt()
    return _affine(y, weight, bias, bshape).to(input.dtype)


def layer_norm_composite(x2: Tensor, weight, bias, eps: float) -> Tensor:
    """Layer norm of each row of the 2-D ``x2`` from reductions and elementwise ops (any
    device); ``weight``/``bias`` have one entry per column."""
    cdt = x2.dtype.compute
    y = _normalize(x2 if x2.dtype is cdt else x2.to(cdt), (1,), eps)[0]
    return _affine(y, weight, bias, (1, -1)).to(x2.dtype)


# --- layer norm ---------------------------------------------------------------------------

class NativeLayerNormBackward0(Node):
    """Backward of layer norm over the rows of an ``(M, K)`` input, all gradients in one kernel."""
    groups = spread = 1  # the parameter tables' shape (see ``_layer_norm_rows``)

    def backward(self, g):
        x, w, b = self.saved_tensors
        if grad_mode.GRAD_ENABLED[0]:  # create_graph: the gradient must be differentiable
            return self._composed(g, x, w, b)
        return _layer_norm_backward(g, x, w, b, self.mean, self.rstd, self.groups, self.spread)

    def _composed(self, g, x, w, b):
        return _composed_backward(g, x, w, b, self.eps, (1,), (0,), (1, -1), None)


class NativeGroupNormBackward0(NativeLayerNormBackward0):
    """Backward of group norm: layer norm over ``(sample, group)`` rows whose per-channel
    parameters cover ``spread`` columns each."""

    def _composed(self, g, x, w, b):
        grouped = (x.shape[0] // self.groups, self.groups, x.shape[1] // self.spread, self.spread)
        gx, gw, gb = _composed_backward(g.reshape(grouped), x.reshape(grouped), w, b, self.eps,
                                        (2, 3), (0, 3), (1, self.groups, -1, 1), None)
        return gx.reshape(x.shape), gw, gb


# Layer norms of at least this many elements run their rows in slices on all cores (run_split,
# like the pools): from this size one core's pass costs more than the split's hand-off.
SPLIT_MIN_ELEMENTS = 1 << 17


def _param_table(p: Tensor | None, groups: int, n: int, fill: float, np_dtype) -> np.ndarray:
    """The kernels' ``(groups, n)`` table of a parameter: row ``g`` holds group ``g``'s ``n``
    entries (all of them for layer norm, one group); one row of ``fill`` when absent."""
    if p is None:
        return np.full((1, n), fill, np_dtype)
    return np.ascontiguousarray(p._data.reshape(groups, -1), dtype=np_dtype)


def _row_kernel(which: str, spread: int, dtype: str):
    """Layer norm's kernel over rows of per-column parameters, or group norm's, whose
    parameters cover ``spread`` columns each (a channel's positions)."""
    return _kernel(("group" if spread > 1 else "layer") + "_norm_" + which, dtype)


def _layer_norm_backward(g: Tensor, x: Tensor, w, b, mean: np.ndarray, rstd: np.ndarray,
                         groups: int = 1, spread: int = 1) -> tuple:
    """``(gx, gw, gb)`` of layer norm over the rows of ``x``; each slice of rows sums its own
    ``gw``/``gb`` tables, added up here (None for an absent parameter)."""
    cdt = x.dtype.compute
    xa = np.ascontiguousarray(x._data, dtype=cdt.np)
    ga = np.ascontiguousarray(g._data, dtype=cdt.np)
    M, K = xa.shape
    n = K // spread  # parameter entries per row
    gx = np.empty_like(xa)
    wa = _param_table(w, groups, n, 1.0, cdt.np)
    kernel = _row_kernel("backward", spread, cdt.name)

    def rows(lo: int, hi: int) -> tuple:
        gw, gb = np.empty((groups, n)), np.empty((groups, n))
        kernel(ga[lo:hi], xa[lo:hi], mean[lo:hi], rstd[lo:hi], wa, lo, gx[lo:hi], gw, gb)
        return gw, gb
    parts = run_split(M, rows, split=xa.size >= SPLIT_MIN_ELEMENTS)
    gw, gb = parts[0]
    for pw, pb in parts[1:]:
        gw += pw
        gb += pb
    return (_wrap(gx.astype(x.dtype.np, copy=False), x.dtype),
            None if w is None else _grad_like(gw, w), None if b is None else _grad_like(gb, b))


def _layer_norm_rows(x2: Tensor, weight, bias, eps: float, groups: int = 1, spread: int = 1,
                     node_cls: type[Node] = NativeLayerNormBackward0) -> Tensor:
    """Layer norm of each row of the 2-D tensor ``x2`` (M, K), then ``* weight + bias`` per
    column, ``weight``/``bias`` with ``K`` entries; or, with ``groups`` > 1 (group norm: row
    ``i`` is group ``i % groups`` of a sample), ``K / spread`` entries per group, each covering
    ``spread`` columns."""
    if composed(x2, weight, bias):
        return layer_norm_composite(x2, weight, bias, eps)
    M, K = x2._data.shape
    cdt = x2.dtype.compute
    xa = np.ascontiguousarray(x2._data, dtype=cdt.np)
    y = np.empty_like(xa)
    mean, rstd = np.empty(M), np.empty(M)
    kernel = _row_kernel("forward", spread, cdt.name)
    wa = _param_table(weight, groups, K // spread, 1.0, cdt.np)
    ba = _param_table(bias, groups, K // spread, 0.0, cdt.np)
    run_split(M, lambda lo, hi: kernel(xa[lo:hi], wa, ba, lo, float(eps), y[lo:hi], mean[lo:hi],
                                       rstd[lo:hi]), split=xa.size >= SPLIT_MIN_ELEMENTS)
    out = _wrap(y.astype(x2.dtype.np, copy=False), x2.dtype)
    _record_fused(node_cls, x2, weight, bias, out, mean=mean, rstd=rstd, eps=float(eps),
                  groups=groups, spread=spread)
    return out


def _normalized_shape(normalized_shape) -> tuple:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(s) for s in normalized_shape)


def _check_trailing(op: str, input: Tensor, ns: tuple, weight, bias) -> None:
    if len(ns) == 0 or tuple(input.shape[input.ndim - len(ns):]) != ns or input.ndim < len(ns):
        raise RuntimeError(
            f"{op}(): Given normalized_shape={list(ns)}, expected input with shape "
            f"[*, {', '.join(map(str, ns))}], but got input of size {list(input.shape)}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != ns:
            raise RuntimeError(f"{op}(): Expected {name} to be of same shape as "
                               f"normalized_shape, but got {name} of shape {list(p.shape)} and "
                               f"normalized_shape = {list(ns)}")


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dims, then ``* weight + bias``.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> F.layer_norm(dg.tensor([[0.0, 2.0]]), [2]).round(decimals=3)
        tensor([[-1.,  1.]])
    """
    _check_float("layer_norm", input)
    ns = _normalized_shape(normalized_shape)
    _check_trailing("layer_norm", input, ns, weight, bias)
    K = math.prod(ns)
    shape = tuple(input.shape)
    w = None if weight is None else weight.reshape(K)
    b = None if bias is None else bias.reshape(K)
    return _layer_norm_rows(input.reshape(-1, K), w, b, eps).reshape(shape)


# --- group / instance / rms ---------------------------------------------------------------

def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each group of ``C // num_groups`` channels per sample, then a per-channel affine.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> x = dg.tensor([[[0.0], [2.0], [5.0], [5.0]]])
        >>> F.group_norm(x, 2).flatten().round(decimals=3)
        tensor([-1.,  1.,  0.,  0.])
    """
    _check_float("group_norm", input)
    if input.ndim < 2:
        raise RuntimeError(f"group_norm(): expected an input with at least 2 dims (N, C, ...), "
                           f"got {describe(input)}")
    shape = tuple(input.shape)
    N, C = shape[0], shape[1]
    if num_groups <= 0 or C % num_groups != 0:
        raise RuntimeError(f"group_norm(): Expected number of channels in input to be divisible "
                           f"by num_groups, but got input of shape {list(shape)} and "
                           f"num_groups={num_groups}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and p.numel() != C:
            raise RuntimeError(f"group_norm(): Expected {name} to be a vector of size equal to "
                               f"the number of channels in input, but got {name} of shape "
                               f"{list(p.shape)} and input of shape {list(shape)}")
    rows = N * num_groups
    if not composed(input, weight, bias):  # one kernel each way, the affine included
        return _layer_norm_rows(input.reshape(rows, -1), weight, bias, eps, num_groups,
                                math.prod(shape[2:]), NativeGroupNormBackward0).reshape(shape)
    y = _layer_norm_rows(input.reshape(rows, -1), None, None, eps).reshape(shape)
    affine_shape = (1, C) + (1,) * (len(shape) - 2)
    if weight is not None:
        y = y * weight.reshape(affine_shape)
    if bias is not None:
        y = y + bias.reshape(affine_shape)
    return y


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dims (batch norm of a ``(1, N*C,
    ...)`` view); running statistics, when given, are updated with the mean over the batch.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> F.instance_norm(dg.tensor([[[1.0, 3.0]]])).round(decimals=3)
        tensor([[[-1.,  1.]]])
    """
    _check_float("instance_norm", input)
    if input.ndim < 3:
        raise ValueError(f"instance_norm(): expected an input with at least 3 dims (N, C, L...), "
                         f"got {describe(input)}")
    shape = tuple(input.shape)
    N, C = shape[0], shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_channels("instance_norm", name, t, C)
    if use_input_stats and math.prod(shape[2:]) <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{list(shape)}")
    rm, rv = (None if buf is None else _tiled(buf, C, N) for buf in (running_mean, running_var))
    w = None if weight is None else weight.repeat(N)
    b = None if bias is None else bias.repeat(N)
    y = batch_norm(input.reshape((1, N * C) + shape[2:]), rm, rv, w, b, use_input_stats,
                   momentum, eps)
    # the running statistics are the batch average of the per-sample updates (as PyTorch)
    for buf, rep in ((running_mean, rm), (running_var, rv)):
        if buf is not None and use_input_stats:
            if composed(buf):
                with grad_mode.no_grad():
                    buf.copy_(rep.reshape(N, C).mean(0).reshape(buf.shape))
                continue
            buf._data[...] = rep._data.reshape(N, C).mean(0).reshape(buf._data.shape)
            buf._vc[0] += 1
    return y.reshape(shape)


def _tiled(buf: Tensor, C: int, N: int) -> Tensor:
    """A new tensor holding the ``C`` values of ``buf`` repeated ``N`` times."""
    if composed(buf):
        with grad_mode.no_grad():
            return buf.reshape(C).repeat(N)
    return _wrap(np.tile(buf._data.reshape(C), N), buf.dtype)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """``input / sqrt(mean(input**2) + eps) * weight`` over the last dims; ``eps`` defaults to the
    dtype's machine epsilon.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> F.rms_norm(dg.tensor([[3.0, 4.0]]), [2]).round(decimals=3)
        tensor([[0.8490, 1.1310]])
    """
    _check_float("rms_norm", input)
    ns = _normalized_shape(normalized_shape)
    _check_trailing("rms_norm", input, ns, weight, None)
    if eps is None:
        eps = float(np.finfo(input.dtype.compute.np).eps)
    dims = tuple(range(input.ndim - len(ns), input.ndim))
    y = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return y if weight is None else y * weight


# dg.<name> where torch.<name> exists with these arguments in this order (torch.batch_norm
# and torch.instance_norm take the weight before the running statistics)
register("batch_norm", batch_norm, "nn", method=False, functional=False)
register("layer_norm", layer_norm, "nn", method=False)
register("group_norm", group_norm, "nn", method=False)
register("instance_norm", instance_norm, "nn", method=False, functional=False)
register("rms_norm", rms_norm, "nn", method=False)
