"""Sets, counts, histograms and searches: ``unique``, ``unique_consecutive``, ``isin``,
``bincount``, ``histc``, ``histogram``, ``histogramdd``, ``searchsorted``, ``bucketize``.

Their results are integers, bools or counts with no gradient (as in PyTorch), each one
vectorised NumPy call on the host buffer. On CUDA that is a host round trip (copy to the host,
compute, copy the result back): there is no device kernel for them.

Example:
    >>> import dynagrad as dg
    >>> dg.tensor([3, 1, 3]).unique(return_counts=True)
    (tensor([1, 3]), tensor([1, 2]))
    >>> dg.bucketize(dg.tensor([0.5, 2.5]), dg.tensor([1.0, 2.0]))
    tensor([0, 2])
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .. import dtypes
from ..dtypes import bool_, int32, int64
from ..errors import describe
from ..shapes import wrap_dim
from ..tensor import Tensor
from ._util import as_tensor_arg
from .registry import register
from .statistics import _back, _np, _torch_name

histogram_result = namedtuple("histogram", ["hist", "bin_edges"])
histogramdd_result = namedtuple("histogramdd", ["hist", "bin_edges"])


# --- sets ---------------------------------------------------------------------------------

def _set_result(x: Tensor, values, inverse, counts, return_inverse, return_counts):
    out = [_back(values, x.dtype, x)]
    if return_inverse:
        out.append(_back(inverse, int64, x))
    if return_counts:
        out.append(_back(counts, int64, x))
    return out[0] if len(out) == 1 else tuple(out)


def unique(input, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim=None):
    """The distinct elements (or distinct slices along ``dim``), sorted; with ``return_inverse``
    each element's position in them, with ``return_counts`` how often each occurs. NaNs are all
    distinct (NaN != NaN). The result is sorted whatever ``sorted`` says (as PyTorch on the CPU).

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([3, 1, 3, 2]).unique(return_counts=True)
        (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    x = as_tensor_arg(input, "unique")
    a = _np(x)
    if dim is None:
        values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True,
                                            return_counts=True, equal_nan=False)
        inverse = inverse.reshape(a.shape)
    else:
        d = wrap_dim(dim, max(x.ndim, 1), "unique")
        if a.ndim == 0:
            a = a.reshape(1)
        if a.shape[d] == 0:
            values, inverse, counts = a, np.zeros(0, np.int64), np.zeros(0, np.int64)
        else:
            values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True,
                                                axis=d)
            inverse = inverse.reshape(-1)
    return _set_result(x, values, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False,
                       dim=None):
    """Collapse each run of equal consecutive elements (or slices along ``dim``) to one.

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([1, 1, 2, 2, 1]).unique_consecutive()
        tensor([1, 2, 1])
    """
    x = as_tensor_arg(input, "unique_consecutive")
    a = _np(x)
    if dim is None:
        flat = a.reshape(-1)
        starts = np.ones(flat.shape, bool)
        starts[1:] = flat[1:] != flat[:-1]
        values, n = flat[starts], flat.size
        inv_shape = a.shape
    else:
        d = wrap_dim(dim, max(x.ndim, 1), "unique_consecutive")
        a = a.reshape(1) if a.ndim == 0 else a
        rows = np.moveaxis(a, d, 0).reshape(a.shape[d], -1)
        n = rows.shape[0]
        starts = np.ones(n, bool)
        starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
        values, inv_shape = np.compress(starts, a, axis=d), (n,)
    inverse = (np.cumsum(starts) - 1).reshape(inv_shape)
    counts = np.diff(np.append(np.flatnonzero(starts), n))
    return _set_result(x, values, inverse, counts, return_inverse, return_counts)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each of ``elements`` occurs in ``test_elements`` (either may be a scalar).

    Example:
        >>> import dynagrad as dg
        >>> dg.isin(dg.tensor([1, 2, 3]), dg.tensor([2, 5]))
        tensor([False,  True, False])
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin(): expected a Tensor for elements or test_elements, got "
                        f"{describe(elements)} and {describe(test_elements)}")
    like = elements if isinstance(elements, Tensor) else test_elements
    if like.dtype is bool_:
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    a = _np(elements) if isinstance(elements, Tensor) else np.asarray(elements)
    b = _np(test_elements) if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _back(np.isin(a, b, assume_unique=assume_unique, invert=invert), bool_, like)


# --- counting and binning -----------------------------------------------------------------

def bincount(input, weights=None, minlength: int = 0) -> Tensor:
    """How often each value ``0..max(input)`` occurs in the 1-D non-negative integer ``input``
    (at least ``minlength`` bins); with ``weights`` the sum of their weights instead.

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([0, 2, 2]).bincount()
        tensor([1, 0, 2])
    """
    x = as_tensor_arg(input, "bincount")
    if x.dtype.is_floating_point or x.dtype is bool_:
        raise NotImplementedError(f'"bincount_cpu" not implemented for '
                                  f"'{_torch_name(x.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    a = _np(x)
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _back(np.bincount(a, minlength=minlength), int64, x)
    w = as_tensor_arg(weights, "bincount", "weights")
    if w.ndim != 1 or w.shape[0] != a.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out_dt = w.dtype if w.dtype in (dtypes.float32, dtypes.float64) else dtypes.float64
    return _back(np.bincount(a, _np(w).astype(np.float64), minlength), out_dt, x)


def _linspace(lo, hi, steps: int, dt) -> np.ndarray:
    """``steps`` evenly spaced values from ``lo`` to ``hi`` in ``dt``, each half counted from its
    own end (the rule of PyTorch's scalar loop, whose rounding its edges share)."""
    lo, hi = dt.type(lo), dt.type(hi)
    if steps == 1:
        return np.asarray([lo], dt)
    step = (hi - lo) / dt.type(steps - 1)
    i = np.arange(steps)
    half = steps // 2
    return np.where(i < half, lo + step * i.astype(dt),
                    hi - step * (steps - i - 1).astype(dt)).astype(dt)


def _bin_counts(a: np.ndarray, edges: list, weight, density: bool, dt) -> np.ndarray:
    """Counts (or summed weights) of the rows of ``a`` (N, D) in the bins ``edges[k]`` (each
    bin half open, the last closed); rows outside every range or with NaN are dropped."""
    n, dims = a.shape
    keep = np.ones(n, bool)
    cells = np.zeros(n, np.int64)
    for k in range(dims):
        e, col = edges[k], a[:, k]
        nb = e.size - 1
        with np.errstate(invalid="ignore"):
            keep &= (col >= e[0]) & (col <= e[-1])
        pos = np.clip(np.searchsorted(e, col, side="right") - 1, 0, nb - 1)
        cells = cells * nb + pos
    shape = tuple(e.size - 1 for e in edges)
    w = None if weight is None else weight.astype(np.float64)[keep]
    hist = np.bincount(cells[keep], w, math.prod(shape)).astype(np.float64).reshape(shape)
    if density:
        volume = np.ones(shape)
        for k, e in enumerate(edges):
            widths = np.diff(e.astype(np.float64)).reshape([-1 if i == k else 1
                                                            for i in range(dims)])
            volume = volume * widths
        total = hist.sum()
        hist = hist / (total * volume)
    return hist.astype(dt)


def _float_input(op: str, x: Tensor) -> None:
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise NotImplementedError(f'"{op}" not implemented for \'{_torch_name(x.dtype)}\'')


def histc(input, bins: int = 100, min=0, max=0) -> Tensor:
    """Counts in ``bins`` equal bins over ``[min, max]`` (the data's own range where
    ``min == max``); values outside are ignored.

    Example:
        >>> import dynagrad as dg
        >>> dg.histc(dg.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
        tensor([0., 2., 1., 0.])
    """
    x = as_tensor_arg(input, "histc")
    _float_input("histogram_cpu", x)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    a = _np(x).reshape(-1, 1)
    if lo == hi and a.size:
        finite = a[~np.isnan(a)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (lo, hi)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    # the bin by division in the input's dtype, PyTorch's rule for histc (it can differ from
    # the edges' own comparison by one bin for a value next to an edge)
    dt = x.dtype.np
    edges = _linspace(lo, hi, bins + 1, dt)
    first, last = edges[0], edges[-1]
    v = a.reshape(-1)
    with np.errstate(invalid="ignore"):
        inside = (v >= first) & (v <= last)
        pos = ((v[inside] - first) * dt.type(bins) / (last - first)).astype(np.int64)
    counts = np.bincount(np.minimum(pos, bins - 1), minlength=bins)
    return _back(counts.astype(dt), x.dtype, x)


def _edges_for(op: str, a: np.ndarray, bins, rng, dt, k: int) -> np.ndarray:
    """The bin edges of column ``k``: a given tensor, or ``bins`` equal bins over ``rng`` (the
    column's range by default, widened by 0.5 each side where it is a single value)."""
    if isinstance(bins, Tensor):
        e = _np(bins).astype(dt)
        if e.ndim != 1 or e.size < 1:
            raise RuntimeError(f"{op}(): bins tensor should have one dimension and at least 1 "
                               f"element, but got {describe(bins)}")
        return e
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"{op}(): bins must be an int or a 1-D tensor, got {describe(bins)}")
    if bins <= 0:
        raise RuntimeError(f"{op}(): bins must be > 0, but got {bins} for dimension {k}")
    if rng is not None:
        lo, hi = float(rng[0]), float(rng[1])
    else:
        col = a[:, k][~np.isnan(a[:, k])]
        lo, hi = (float(col.min()), float(col.max())) if col.size else (0.0, 0.0)
    if lo > hi:
        raise RuntimeError(f"{op}(): min should not exceed max, but got min {lo} max {hi} for "
                           f"dimension {k}")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"{op}(): range of [{lo}, {hi}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _linspace(lo, hi, bins + 1, dt)


def _histogramdd(op: str, x: Tensor, dims: int, bins, rng, weight, density, points: tuple):
    """Histogram of the rows of ``x`` viewed as (N, dims); ``weight`` has shape ``points``."""
    _float_input("histogram_cpu", x)
    a = _np(x).reshape(-1, dims)
    bins_per = list(bins) if isinstance(bins, (list, tuple)) else [bins] * dims
    if len(bins_per) != dims:
        raise RuntimeError(f"{op}(): expected {dims} bin specifications, got {len(bins_per)}")
    if rng is not None and len(rng) != 2 * dims:
        raise RuntimeError(f"{op}(): range should have {2 * dims} elements, got {len(rng)}")
    edges = [_edges_for(op, a, b, None if rng is None else rng[2 * k:2 * k + 2], x.dtype.np, k)
             for k, b in enumerate(bins_per)]
    w = None
    if weight is not None:
        if tuple(weight.shape) != points:
            raise RuntimeError(f"{op}(): weight should have the same shape as the input "
                               f"(got {describe(weight)})")
        w = _np(weight).reshape(-1)
    hist = _back(_bin_counts(a, edges, w, density, x.dtype.np), x.dtype, x)
    return hist, [_back(e, x.dtype, x) for e in edges]


def histogram(input, bins=100, *, range=None, weight=None, density: bool = False):
    """``(hist, bin_edges)``: counts (or summed ``weight``; a density with ``density``) of every
    element in ``bins`` (an int: equal bins over ``range`` or the data's range; a 1-D tensor:
    the edges). An element exactly on a computed edge goes to the bin the edge opens; PyTorch's
    edges round differently with the CPU's vector width, so there it may land one bin lower.

    Example:
        >>> import dynagrad as dg
        >>> dg.histogram(dg.tensor([1.0, 2.0, 1.0]), bins=2).hist
        tensor([2., 1.])
    """
    x = as_tensor_arg(input, "histogram")
    hist, edges = _histogramdd("histogram", x.reshape(-1, 1), 1, bins, range, weight, density,
                               tuple(x.shape))
    return histogram_result(hist, edges[0])


def histogramdd(input, bins=10, *, range=None, weight=None, density: bool = False):
    """``(hist, bin_edges)`` of the points ``input[..., :]`` (the last dim holds each point's
    D coordinates): a D-dimensional histogram, ``bins`` an int, one int per dim or one edges
    tensor per dim; ``range`` ``[lo0, hi0, lo1, hi1, ...]``."""
    x = as_tensor_arg(input, "histogramdd")
    if x.ndim < 2:
        raise RuntimeError(f"torch.histogramdd: input tensor should have at least 2 dimensions, "
                           f"but got {x.ndim}")
    hist, edges = _histogramdd("histogramdd", x, x.shape[-1], bins, range, weight, density,
                               tuple(x.shape[:-1]))
    return histogramdd_result(hist, tuple(edges))


# --- searches -----------------------------------------------------------------------------

def _search(sorted_np: np.ndarray, values: np.ndarray, right: bool) -> np.ndarray:
    """``np.searchsorted`` row by row (the leading dims of both index the rows), for all rows at
    once: each row's values are merged into its sequence by one stable sort, a value placed
    before the equal sequence elements (left side) or after them (right side); its position is
    then the count of sequence elements sorted before it."""
    if sorted_np.ndim == 1:
        return np.searchsorted(sorted_np, values, side="right" if right else "left")
    lead, m, k = sorted_np.shape[:-1], sorted_np.shape[-1], values.shape[-1]
    rows = math.prod(lead)
    seq, vals = sorted_np.reshape(rows, m), values.reshape(rows, k)
    merged = np.concatenate([seq, vals] if right else [vals, seq], axis=-1)
    order = np.argsort(merged, axis=-1, kind="stable")
    from_seq = order < m if right else order >= k
    before = np.cumsum(from_seq, axis=-1)  # sequence elements up to each sorted position
    slot = (order[~from_seq] - (m if right else 0)).reshape(rows, k)
    out = np.empty(vals.shape, np.int64)
    np.put_along_axis(out, slot, before[~from_seq].reshape(rows, k), axis=-1)
    return out.reshape(lead + (k,))


def searchsorted(sorted_sequence, input, *, out_int32: bool = False, right: bool = False,
                 side=None, sorter=None) -> Tensor:
    """Where each of ``input`` would go in ``sorted_sequence`` (sorted along its last dim; 1-D,
    or with the same leading dims as ``input``) to keep it sorted: the first such position, or
    the last with ``right=True`` / ``side="right"``. ``sorter`` sorts an unsorted sequence.
    NaN counts as the largest value (a sequence holding NaN has no defined answer in PyTorch,
    whose binary search treats NaN as unordered).

    Example:
        >>> import dynagrad as dg
        >>> dg.searchsorted(dg.tensor([1.0, 3.0, 5.0]), dg.tensor([3.0, 4.0]))
        tensor([1, 2])
    """
    seq = as_tensor_arg(sorted_sequence, "searchsorted", "sorted_sequence")
    if seq.dtype is bool_:
        raise NotImplementedError('"searchsorted_out_cpu" not implemented for \'Bool\'')
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    if scalar and seq.ndim != 1:
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when "
                           f"boundaries tensor dimension is 1, but we got boundaries tensor "
                           f"dim({seq.ndim}) and input value's dim(0) numel(1)")
    vals = np.asarray(input) if scalar else _np(input)
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           "first N-1 dimensions of boundaries tensor and input value tensor "
                           "must match, but we got boundaries tensor [] and input value tensor "
                           f"{list(vals.shape)}")
    if seq.ndim > 1 and tuple(seq.shape[:-1]) != tuple(vals.shape[:-1]) or \
            seq.ndim > 1 and vals.ndim != seq.ndim:
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           f"first N-1 dimensions of boundaries tensor and input value tensor "
                           f"must match, but we got boundaries tensor {list(seq.shape)} and "
                           f"input value tensor {list(vals.shape)}")
    s = _np(seq)
    if sorter is not None:
        if tuple(sorter.shape) != tuple(seq.shape):
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(seq.shape)}and got sorter "
                               f"tensor {list(sorter.shape)}")
        s = np.take_along_axis(s, _np(sorter), -1)
    common = np.result_type(s.dtype, vals.dtype)
    res = _search(s.astype(common), vals.astype(common), right)
    return _back(res, int32 if out_int32 else int64, seq)


def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each of ``input`` among the 1-D sorted ``boundaries``: ``i`` with
    ``boundaries[i-1] < x <= boundaries[i]`` (``<= x <`` with ``right=True``).

    Example:
        >>> import dynagrad as dg
        >>> dg.bucketize(dg.tensor([1.0, 2.5]), dg.tensor([1.0, 2.0, 3.0]))
        tensor([0, 2])
    """
    b = as_tensor_arg(boundaries, "bucketize", "boundaries")
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    return searchsorted(b, input, out_int32=out_int32, right=right)


for _name, _fn, _method in (
        ("unique", unique, True), ("unique_consecutive", unique_consecutive, True),
        ("isin", isin, False), ("bincount", bincount, True), ("histc", histc, True),
        ("histogram", histogram, True), ("histogramdd", histogramdd, False),
        ("searchsorted", searchsorted, False), ("bucketize", bucketize, False)):
    register(_name, _fn, "reduce", method=_method)
