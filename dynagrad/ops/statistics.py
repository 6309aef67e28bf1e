"""Order statistics, NaN-aware and paired reductions, running extremes, differences and
integrals: ``median``, ``kthvalue``, ``mode``, ``quantile``, ``nansum``, ``aminmax``,
``cummax``, ``logcumsumexp``, ``diff``, ``trapezoid``, ``renorm``... (sets, counts, histograms
and searches live in ``ops/sets.py``).

How each is computed:
- Selections (``median``, ``nanmedian``, ``kthvalue``, ``mode``, ``cummax``, ``cummin``) pick
  their indices with NumPy on the host buffer (a stable sort, NaN last) and then ``gather`` the
  values, so the gradient goes to the selected index as in PyTorch. The full ``median()`` and
  ``nanmedian()`` share the gradient among the elements equal to the result (PyTorch's rule).
- The rest compose ops (``nansum``, ``nanmean``, ``quantile``, ``diff``, ``trapezoid``,
  ``renorm``...), so their gradients, double backward and every device come from the pieces.
- ``logcumsumexp`` runs ``np.logaddexp.accumulate`` on the host (exact where a shifted
  ``log(cumsum(exp))`` would underflow); its gradient is written with ``logcumsumexp`` itself.

On CUDA the NumPy parts take a host round trip (copy to the host, compute, copy the result back):
there is no device kernel for them.

Example:
    >>> import dynagrad as dg
    >>> x = dg.tensor([[3.0, 1.0, 2.0, 4.0]])
    >>> x.median(dim=1)      # the lower of the two middle values, as PyTorch
    median(values=tensor([2.]), indices=tensor([2]))
    >>> dg.quantile(x, 0.5, dim=1)
    tensor([2.5000])
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Node, record
from ..dtypes import bool_, int64
from ..errors import describe
from ..shapes import wrap_dim, wrap_dims
from ..tensor import Tensor
from ._util import as_tensor_arg
from .elementwise import where
from .indexing import _inplace_variant, gather, sort
from .movement import cat
from .placement import host_array, like
from .reduce import amax, amin, mean, norm, values_indices, var
from .registry import register

aminmax_result = namedtuple("aminmax", ["min", "max"])


# --- host helpers -------------------------------------------------------------------------

_np = host_array  # x's values as a NumPy array (a host copy of a CUDA tensor)


def _back(arr, dt, ref: Tensor) -> Tensor:
    """A host result as a C-ordered tensor of ``dt`` on ``ref``'s device."""
    return like(np.asarray(arr, dtype=dt.np, order="C"), ref, dt)


def _tracks(x: Tensor) -> bool:
    return x._requires_grad and grad_mode.GRAD_ENABLED[0]


def _no_bool(kernel: str, x: Tensor) -> None:
    """Selections by order have no meaning for bool in PyTorch: it names its kernel."""
    if x.dtype is bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _check_reduced_nonempty(op: str, x: Tensor, d: int) -> None:
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


# --- selections: median, nanmedian, kthvalue, mode ----------------------------------------

def _pick(op: str, x: Tensor, dim, keepdim: bool, rank) -> tuple:
    """``(values, indices)`` along ``dim``: ``rank(sorted rows, nan counts)`` gives, per row, the
    position in the stable ascending order (NaN last) whose element is selected."""
    if x.ndim == 0:
        wrap_dim(dim, 1, op)
        idx = _back(np.zeros((), np.int64), int64, x)
        return x.clone(), idx
    d = wrap_dim(dim, x.ndim, op)
    _check_reduced_nonempty(op, x, d)
    if x.numel() == 0:  # other dims empty: an empty result
        shape = tuple(1 if i == d else s for i, s in enumerate(x.shape))
        idx = _back(np.zeros(shape, np.int64), int64, x)
    else:
        a = np.moveaxis(_np(x), d, -1)
        order = np.argsort(a, axis=-1, kind="stable")
        srt = np.take_along_axis(a, order, -1)
        nans = np.isnan(srt).sum(-1) if srt.dtype.kind == "f" else np.zeros(srt.shape[:-1], int)
        k = rank(srt, nans)
        picked = np.take_along_axis(order, np.asarray(k, np.int64)[..., None], -1)
        idx = _back(np.moveaxis(picked, -1, d), int64, x)
    values = gather(x, d, idx)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return values, idx


def _median_rank(srt, nans):
    """The lower median; the first NaN where the row has one (the result is then NaN)."""
    n = srt.shape[-1]
    return np.where(nans > 0, n - nans, (n - 1) // 2)


def _nanmedian_rank(srt, nans):
    """The lower median of the non-NaN values; the first NaN of an all-NaN row."""
    valid = srt.shape[-1] - nans
    return np.where(valid > 0, (valid - 1) // 2, 0)


class _EvenlyDistributed(Node):
    """A full reduction whose value some elements attain: each of them receives an equal share
    of the gradient (NaN results: the NaN elements share it), as PyTorch's ``median()``."""

    def backward(self, g):
        x, out = self.saved_tensors
        hit = (x == out) | (x.isnan() & out.isnan())
        with grad_mode.no_grad():
            count = hit.sum()
        return (where(hit, g / count, 0.0),)


_FULL_NODES = {"median": type("MedianBackward0", (_EvenlyDistributed,), {}),
               "nanmedian": type("NanmedianBackward0", (_EvenlyDistributed,), {})}


def _full_select(op: str, x: Tensor, rank) -> Tensor:
    """``median()``/``nanmedian()`` over every element."""
    if x.numel() == 0:
        if not x.dtype.is_floating_point:
            raise IndexError(f"{op}(): input tensor must be non-empty (got {describe(x)})")
        return _back(np.full((), np.nan), x.dtype, x)
    with grad_mode.no_grad():
        out = _pick(op, x.detach().reshape(-1), 0, False, rank)[0]
    if _tracks(x):
        node = _FULL_NODES[op]()
        node.save(x, out)
        record(node, (x,), (out,))
    return out


def median(input, dim=None, keepdim: bool = False):
    """The lower median (the smaller of the two middle values for an even count): a value over
    every element, or ``(values, indices)`` along ``dim``. A slice holding NaN gives NaN.

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([4.0, 1.0, 3.0, 2.0]).median()
        tensor(2.)
    """
    x = as_tensor_arg(input, "median")
    _no_bool("median_cpu" if dim is None else "median_out", x)
    if dim is None:
        return _full_select("median", x, _median_rank)
    return values_indices["median"](*_pick("median", x, dim, keepdim, _median_rank))


def nanmedian(input, dim=None, keepdim: bool = False):
    """``median`` ignoring NaN (NaN only where a slice is all NaN).

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([4.0, float("nan"), 1.0]).nanmedian()
        tensor(1.)
    """
    x = as_tensor_arg(input, "nanmedian")
    _no_bool("median_cpu" if dim is None else "median_out", x)
    if dim is None:
        return _full_select("nanmedian", x, _nanmedian_rank)
    return values_indices["nanmedian"](*_pick("nanmedian", x, dim, keepdim, _nanmedian_rank))


def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False):
    """The ``k``-th smallest value (``k`` from 1; NaN is the largest) along ``dim`` and its index.

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([5.0, 1.0, 3.0]).kthvalue(2)
        kthvalue(values=tensor(3.), indices=tensor(2))
    """
    x = as_tensor_arg(input, "kthvalue")
    _no_bool("kthvalue_cpu", x)
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TypeError(f"kthvalue(): argument 'k' must be int, not {type(k).__name__}")
    d = wrap_dim(dim, max(x.ndim, 1), "kthvalue")
    size = x.shape[d] if x.ndim else 1
    if x.ndim and size == 0:
        _check_reduced_nonempty("kthvalue", x, d)
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return values_indices["kthvalue"](*_pick("kthvalue", x, dim, keepdim,
                                             lambda srt, nans: np.full(srt.shape[:-1], k - 1)))


def _mode_rank(srt, nans):
    """The first (smallest) value of the longest run of equal sorted values (NaN equals nothing),
    at the run's last position: its element has the run's largest original index."""
    n = srt.shape[-1]
    pos = np.arange(n)
    new = np.ones(srt.shape, bool)
    new[..., 1:] = srt[..., 1:] != srt[..., :-1]
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
    last = np.ones(srt.shape, bool)
    last[..., :-1] = new[..., 1:]
    length = np.where(last, pos - start + 1, 0)
    return np.argmax(length, axis=-1)


def mode(input, dim: int = -1, keepdim: bool = False):
    """The most frequent value along ``dim`` (the smallest among equally frequent ones) and the
    index of its last occurrence. Each NaN counts once (PyTorch's result with NaN depends on the
    arbitrary order its sort leaves NaNs in).

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([2, 1, 2, 1, 3]).mode()
        mode(values=tensor(1), indices=tensor(3))
    """
    x = as_tensor_arg(input, "mode")
    return values_indices["mode"](*_pick("mode", x, dim, keepdim, _mode_rank))


# --- quantiles ----------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op: str, input, q, dim, keepdim: bool, interpolation: str, skip_nan: bool):
    x = as_tensor_arg(input, op)
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor")
        if q.dtype is not x.dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor")
        qs = _np(q).astype(np.float64).reshape(-1)
        if not np.all((qs >= 0) & (qs <= 1)):
            raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{op}() q must be in the range [0, 1] but got {q:g}")
        qs = np.asarray([q], np.float64)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if x.numel() == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    if dim is None:
        rows, kept = x.reshape(1, -1), (1,) * x.ndim if keepdim else ()
    else:
        d = wrap_dim(dim, max(x.ndim, 1), op)
        v = x.reshape(1) if x.ndim == 0 else x
        rows = v.movedim(d, -1)
        kept = tuple(1 if i == d else s for i, s in enumerate(x.shape)) if keepdim else \
            tuple(s for i, s in enumerate(x.shape) if i != d)
    srt = sort(rows, -1).values  # NaN last; differentiable through its gather
    n = srt.shape[-1]
    lead = tuple(srt.shape[:-1])
    # the rank of each quantile in each row, computed in the input's dtype as PyTorch does
    dt = x.dtype.np
    nans = _np(srt.detach().isnan().sum(-1))  # (only the counts cross to the host)
    qq = qs.astype(dt).reshape((1,) * len(lead) + (-1,))
    # the row's span (count of values - 1) and where its rank is forced to the last (NaN) one
    span = ((n - nans - 1) if skip_nan else np.full(nans.shape, n - 1))[..., None].astype(dt)
    forced = ((n - nans) == 0 if skip_nan else nans > 0)[..., None]
    ranks = np.broadcast_to(np.where(forced, dt.type(n - 1), qq * span), lead + (qs.size,))
    lower, upper = np.floor(ranks), np.ceil(ranks)
    if interpolation in ("lower", "higher", "nearest"):
        pos = {"lower": lower, "higher": upper, "nearest": np.round(ranks)}[interpolation]
        res = gather(srt, -1, _back(pos.astype(np.int64), int64, x))
    else:
        below = gather(srt, -1, _back(lower.astype(np.int64), int64, x))
        above = gather(srt, -1, _back(upper.astype(np.int64), int64, x))
        if interpolation == "midpoint":
            w = _back(np.full(ranks.shape, 0.5, dt), x.dtype, x)
        elif isinstance(q, Tensor) and q._requires_grad and grad_mode.GRAD_ENABLED[0]:
            # the same weights as ops of q, so that q gets its gradient (as in PyTorch)
            w = where(_back(np.broadcast_to(forced, ranks.shape), bool_, x), 0.0,
                      q.reshape(-1) * _back(span, x.dtype, x) - _back(lower, x.dtype, x))
        else:
            w = _back(ranks - lower, x.dtype, x)
        res = below + w * (above - below)
    res = res.reshape(kept + (qs.size,))
    if isinstance(q, Tensor) and q.ndim == 1:
        return res.movedim(-1, 0)
    return res.squeeze(-1)


def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """The ``q``-th quantiles (``q`` a float or a 1-D tensor in [0, 1]; the result gets a leading
    dim for a 1-D ``q``, which receives a gradient under linear interpolation) over ``dim`` or
    every element; NaN where a slice holds NaN.
    ``interpolation`` between the two neighbouring order statistics: linear, lower, higher,
    midpoint or nearest.

    Example:
        >>> import dynagrad as dg
        >>> dg.quantile(dg.tensor([0.0, 1.0, 2.0, 10.0]), 0.75)
        tensor(4.)
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """``quantile`` ignoring NaN (NaN only where a slice is all NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# --- NaN-aware and paired reductions ------------------------------------------------------

def nansum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``sum`` treating NaN as zero (their gradient is zero).

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([1.0, float("nan"), 2.0]).nansum()
        tensor(3.)
    """
    x = as_tensor_arg(input, "nansum")
    if x.dtype.is_floating_point:
        x = where(x.isnan(), 0.0, x)
    return x.sum(dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``mean`` of the non-NaN elements (NaN where there are none).

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([1.0, float("nan"), 2.0]).nanmean()
        tensor(1.5000)
    """
    x = as_tensor_arg(input, "nanmean")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_torch_name(x.dtype)}")
    if dtype is not None:
        x = x.to(dtype)
    count = (~x.isnan()).sum(dim, keepdim)
    return nansum(x, dim, keepdim) / count


def _torch_name(dt) -> str:
    """PyTorch's scalar type name of ``dt`` in its messages (``Long``, ``Float``...)."""
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "float16": "Half", "float32": "Float", "float64": "Double",
            "bfloat16": "BFloat16"}.get(dt.name, dt.name)


def aminmax(input, *, dim=None, keepdim: bool = False):
    """``(min, max)`` over ``dim`` (an int) or every element.

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([3.0, -1.0, 2.0]).aminmax()
        aminmax(min=tensor(-1.), max=tensor(3.))
    """
    x = as_tensor_arg(input, "aminmax")
    if dim is not None:
        d = wrap_dim(dim, max(x.ndim, 1), "aminmax")
        empty = x.ndim and x.shape[d] == 0
        dim = d if x.ndim else None
    else:
        empty = x.numel() == 0
    if empty and dim is not None:
        raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
    if empty:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    return aminmax_result(amin(x, dim, keepdim), amax(x, dim, keepdim))


def count_nonzero(input, dim=None) -> Tensor:
    """The number of nonzero elements over ``dim`` (an int or a tuple) or every element (int64).

    Example:
        >>> import dynagrad as dg
        >>> dg.count_nonzero(dg.tensor([[0, 1], [2, 3]]), dim=0)
        tensor([1, 2])
    """
    x = as_tensor_arg(input, "count_nonzero")
    return (x != 0).sum(dim)


def msort(input) -> Tensor:
    """``sort(input, dim=0).values``."""
    x = as_tensor_arg(input, "msort")
    return sort(x, 0).values


def var_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=1) -> tuple:
    """``(var(...), mean(...))`` over the same dims (``correction`` as ``var``; PyTorch's older
    positional ``unbiased`` too).

    Example:
        >>> import dynagrad as dg
        >>> dg.var_mean(dg.tensor([1.0, 2.0, 3.0, 6.0]))
        (tensor(4.6667), tensor(3.))
    """
    x = as_tensor_arg(input, "var_mean")
    if isinstance(dim, bool):  # var_mean(x, unbiased)
        unbiased, dim = dim, None
    v = var(x, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)
    return v, mean(x, wrap_dims(dim, x.ndim, "var_mean"), keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=1) -> tuple:
    """``(std(...), mean(...))`` over the same dims (``correction`` as ``var``)."""
    v, m = var_mean(input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)
    return v.sqrt(), m


# --- running extremes and logcumsumexp ----------------------------------------------------

def _running(op: str, input, dim: int, accumulate):
    x = as_tensor_arg(input, op)
    if x.ndim == 0:
        wrap_dim(dim, 1, op)
        return values_indices[op](x.clone(), _back(np.zeros((), np.int64), int64, x))
    d = wrap_dim(dim, x.ndim, op)
    a = np.moveaxis(_np(x), d, -1)
    if a.size == 0:
        idx = np.zeros(a.shape, np.int64)
    else:
        best = accumulate(a, axis=-1)
        # the latest index attaining the running extreme; every NaN from the first on
        hit = (a == best) | (np.isnan(a) if a.dtype.kind == "f" else False)
        idx = np.maximum.accumulate(np.where(hit, np.arange(a.shape[-1]), 0), axis=-1)
    idx = _back(np.moveaxis(idx, -1, d), int64, x)
    return values_indices[op](gather(x, d, idx), idx)


def cummax(input, dim: int):
    """Running maximum along ``dim`` and the index where it was reached (the latest on ties;
    NaN propagates).

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([1.0, 3.0, 2.0, 3.0]).cummax(0).indices
        tensor([0, 1, 1, 3])
    """
    return _running("cummax", input, dim, np.maximum.accumulate)


def cummin(input, dim: int):
    """Running minimum along ``dim`` and the index where it was reached (the latest on ties;
    NaN propagates)."""
    return _running("cummin", input, dim, np.minimum.accumulate)


class LogcumsumexpBackward0(Node):
    """``dx_j = sum_{i >= j} g_i exp(x_j - out_i)``, summed in log space (the positive and the
    negative parts of ``g`` apart) with ``logcumsumexp`` itself, so large ``x`` cannot
    overflow. A zero part is the dtype's lowest finite log, not -inf: ``-inf - out`` would be
    NaN where ``out`` is -inf, and poison the gradient of the gradient."""

    def backward(self, g):
        x, out = self.saved_tensors
        d = self.dim
        if x.ndim == 0:
            return (g,)

        def tail(t):  # log sum_{i >= j} exp(t_i)
            return logcumsumexp(t.flip(d), d).flip(d)
        lowest = float(np.finfo(g.dtype.np).min)
        log_abs = g.abs().log()
        pos = where(g > 0, log_abs, lowest)
        neg = where(g < 0, log_abs, lowest)
        return ((tail(pos - out) + x).exp() - (tail(neg - out) + x).exp(),)


def logcumsumexp(input, dim: int) -> Tensor:
    """``log(cumsum(exp(x)))`` along ``dim``, without overflow or underflow.

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([0.0, 0.0]).logcumsumexp(0)
        tensor([0.0000, 0.6931])
    """
    x = as_tensor_arg(input, "logcumsumexp")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                  f"'{_torch_name(x.dtype)}'")
    d = wrap_dim(dim, max(x.ndim, 1), "logcumsumexp")
    a = _np(x)
    with np.errstate(invalid="ignore"):
        res = np.logaddexp.accumulate(a, axis=d) if x.ndim and a.size else a.copy()
    out = _back(res, x.dtype, x)
    if _tracks(x):
        node = LogcumsumexpBackward0()
        node.dim = d if x.ndim else 0
        node.save(x, out)
        record(node, (x,), (out,))
    return out


# --- differences and integrals ------------------------------------------------------------

def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``!=`` for bool), after joining
    ``prepend`` and ``append`` to the ends.

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([1.0, 4.0, 9.0]).diff()
        tensor([3., 5.])
    """
    x = as_tensor_arg(input, "diff")
    if x.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, x.ndim, "diff")
    parts = []
    for extra in (prepend, append):
        if extra is not None:
            extra = as_tensor_arg(extra, "diff", "prepend" if extra is prepend else "append")
            if extra.ndim != x.ndim:
                raise RuntimeError("diff expects prepend or append to be the same dimension as "
                                   "input")
        parts.append(extra)
    if parts[0] is not None or parts[1] is not None:
        x = cat([t for t in (parts[0], x, parts[1]) if t is not None], d)
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        hi, lo = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
        x = hi != lo if x.dtype is bool_ else hi - lo
    return x


def _integral_float(y: Tensor) -> Tensor:
    return y if y.dtype.is_floating_point else y.to(dtypes.get_default_dtype())


def _spacing(op: str, y: Tensor, x, dx, d: int):
    """The sample spacings along ``d``: ``diff(x)`` viewed to broadcast against ``y``'s
    intervals, or the constant ``dx`` (1 by default)."""
    if x is not None and dx is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments: pass the sample "
                        f"points x or their spacing dx, not both")
    if x is None:
        return 1.0 if dx is None else dx
    x = as_tensor_arg(x, op, "x")
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{op}: There must be one `x` value for each sample point")
        return diff(x).reshape(tuple(-1 if i == d else 1 for i in range(y.ndim)))
    return diff(x, dim=d - y.ndim)


def trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: samples ``y`` at the points ``x`` (a 1-D tensor or
    one broadcasting with ``y``) or spaced ``dx`` apart (1 by default). ``trapz`` is another
    name of it.

    Example:
        >>> import dynagrad as dg
        >>> dg.trapezoid(dg.tensor([1.0, 2.0, 4.0]))
        tensor(4.5000)
    """
    y = _integral_float(as_tensor_arg(y, "trapezoid", "y"))
    d = wrap_dim(dim, max(y.ndim, 1), "trapezoid")
    if y.shape[d] == 0:
        return y.sum(d)
    h = _spacing("trapezoid", y, x, dx, d)
    n = y.shape[d]
    mids = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * 0.5
    return (mids * h).sum(d)


def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoidal rule along ``dim`` (one value fewer than ``y`` has samples)."""
    y = _integral_float(as_tensor_arg(y, "cumulative_trapezoid", "y"))
    d = wrap_dim(dim, max(y.ndim, 1), "cumulative_trapezoid")
    n = y.shape[d]
    if n == 0:
        return y
    h = _spacing("cumulative_trapezoid", y, x, dx, d)
    mids = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * 0.5
    return (mids * h).cumsum(d)


# --- renorm, norm_except_dim --------------------------------------------------------------

def renorm(input, p, dim: int, maxnorm) -> Tensor:
    """Scale each slice ``input.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm`` down to
    norm ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``, as PyTorch); the others are kept.

    Example:
        >>> import dynagrad as dg
        >>> dg.renorm(dg.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
        tensor([[0.6000, 0.8000],
                [0.3000, 0.4000]])
    """
    x = as_tensor_arg(input, "renorm")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"renorm: expected a floating point input, got {describe(x)}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if x.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.ndim} dimensions")
    d = wrap_dim(dim, x.ndim, "renorm")
    others = tuple(i for i in range(x.ndim) if i != d)
    norms = norm(x, p, others, keepdim=True)
    return x * where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


def norm_except_dim(v, pow=2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (kept, with size 1 elsewhere);
    ``dim=-1``: the norm of everything (weight normalisation's helper)."""
    x = as_tensor_arg(v, "norm_except_dim")
    if dim == -1:
        return norm(x, pow)
    d = wrap_dim(dim, max(x.ndim, 1), "norm_except_dim")
    size = x.shape[d] if x.ndim else 1
    # each slice flattened to a row (a 1-D input: rows of one element, the norm is |v|)
    rows = x.movedim(d, 0).reshape(size, -1) if x.ndim else x.reshape(1, 1)
    return norm(rows, pow, 1).reshape(tuple(size if i == d else 1 for i in range(x.ndim)))


for _name, _fn, _method in (
        ("median", median, True), ("nanmedian", nanmedian, True), ("kthvalue", kthvalue, True),
        ("mode", mode, True), ("quantile", quantile, True), ("nanquantile", nanquantile, True),
        ("nansum", nansum, True), ("nanmean", nanmean, True), ("aminmax", aminmax, True),
        ("count_nonzero", count_nonzero, True), ("msort", msort, True),
        ("var_mean", var_mean, False), ("std_mean", std_mean, False),
        ("cummax", cummax, True), ("cummin", cummin, True),
        ("logcumsumexp", logcumsumexp, True), ("diff", diff, True),
        ("cumulative_trapezoid", cumulative_trapezoid, False),
        ("norm_except_dim", norm_except_dim, False)):
    register(_name, _fn, "reduce", method=_method)
register("trapezoid", trapezoid, "reduce", method=False, aliases=("trapz",))
register("renorm", renorm, "reduce", inplace=_inplace_variant(renorm))
