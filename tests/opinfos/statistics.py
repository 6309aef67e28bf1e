"""Records of the order statistics, NaN-aware and paired reductions, running extremes, sets,
histograms, searches and differences (``dynagrad/ops/statistics.py`` and ``ops/sets.py``).

The references are float64 NumPy written independently of the implementation: PyTorch's lower
median and its index rules (the first NaN, the last occurrence of the mode, the latest index of a
running extreme) are spelled out here rather than taken from ``np.median``. Forward samples whose
indices PyTorch leaves unspecified (ties) are avoided: the values are permutations of distinct
numbers, except where ties are the point (``mode``, ``unique``) and the index is defined.
Gradients by finite differences in float64 on inputs without ties, and torch's.
"""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import scipy.integrate

import dynagrad as dg
from opinfo import OpInfo, Sample, alias, integers, quarters, sampler, signed, uniform

TOL = {"float32": (2e-5, 2e-5), "float64": (1e-10, 1e-12)}
GRAD_TOL = {"float64": (1e-10, 1e-12)}
FLOATS = {"cpu": (dg.float32, dg.float64), "cuda": (dg.float32,)}
NUMBERS = {"cpu": (dg.float32, dg.float64, dg.int64), "cuda": (dg.float32,)}
NAN = math.nan


def distinct(shape, seed=0) -> np.ndarray:
    """A permutation of distinct values (no ties: every index is defined)."""
    n = math.prod(shape)
    values = np.random.default_rng(seed).permutation(np.arange(n, dtype=float)) - n // 2
    return np.asarray(values.reshape(shape))


def _rows(a, dim):
    """``a`` with ``dim`` moved last (a 0-d array as one row of one)."""
    return a.reshape(1) if a.ndim == 0 else np.moveaxis(a, dim, -1)


def _finish(values, indices, a, dim, keepdim):
    if a.ndim == 0:
        return values.reshape(()), indices.reshape(())
    if keepdim:
        values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
    return values, np.asarray(indices, np.int64)


def _select(position):
    """A selection along ``dim``: ``position(sorted row without NaN, row length)`` gives the
    rank picked in the row sorted ascending (NaN last, ties in index order)."""
    def pick(row):
        order = sorted(range(len(row)), key=lambda i: (math.isnan(row[i]), row[i], i))
        valid = sum(not math.isnan(v) for v in row)
        k = position(valid, len(row))
        return row[order[k]], order[k]

    def ref(a, dim=-1, keepdim=False):
        rows = _rows(a, dim)
        picked = [pick(list(r)) for r in rows.reshape(-1, rows.shape[-1])]
        values = np.asarray([v for v, _ in picked]).reshape(rows.shape[:-1])
        indices = np.asarray([i for _, i in picked]).reshape(rows.shape[:-1])
        return _finish(values, indices, a, dim, keepdim)
    return ref


# NaN present: the first NaN (median); the lower middle of the non-NaN values (nanmedian)
_median = _select(lambda valid, n: valid if valid < n else (n - 1) // 2)
_nanmedian = _select(lambda valid, n: (valid - 1) // 2 if valid else 0)


def _full(select):
    """median()/nanmedian() over every element: the value only."""
    def ref(a, dim=None, keepdim=False):
        if dim is None:
            return select(a.reshape(-1), 0)[0]
        return select(a, dim, keepdim)
    return ref


def _kthvalue(a, k, dim=-1, keepdim=False):
    return _select(lambda valid, n: k - 1)(a, dim, keepdim)


def _mode(a, dim=-1, keepdim=False):
    rows = _rows(a, dim)
    values, indices = [], []
    for row in rows.reshape(-1, rows.shape[-1]):
        counts = {}
        for v in row:
            counts[v] = counts.get(v, 0) + 1
        best = min(counts, key=lambda v: (-counts[v], v))  # most frequent, then smallest
        values.append(best)
        indices.append(max(i for i, v in enumerate(row) if v == best))
    shape = rows.shape[:-1]
    return _finish(np.asarray(values).reshape(shape), np.asarray(indices).reshape(shape), a,
                   dim, keepdim)


def _running(better):
    """cummax/cummin: the latest index attaining the running extreme; NaN sticks (each later NaN
    takes over the index)."""
    def ref(a, dim):
        rows = _rows(a, dim)
        values, indices = np.empty(rows.shape, a.dtype), np.empty(rows.shape, np.int64)
        for r in np.ndindex(rows.shape[:-1]):
            best, at = None, 0
            for i, v in enumerate(rows[r]):
                if best is None or math.isnan(v) or (not math.isnan(best) and better(v, best)):
                    best, at = v, i
                values[r + (i,)], indices[r + (i,)] = best, at
        if a.ndim == 0:
            return values.reshape(()), indices.reshape(())
        return np.moveaxis(values, -1, dim), np.moveaxis(indices, -1, dim)
    return ref


def _quantile(np_fn):
    def ref(a, q, dim=None, keepdim=False, interpolation="linear"):
        axis = None if dim is None or a.ndim == 0 else dim
        with warnings.catch_warnings():  # (an all-NaN row: NaN, which is the point)
            warnings.simplefilter("ignore", RuntimeWarning)
            return np_fn(a, np.asarray(q, np.float64), axis=axis, keepdims=keepdim,
                     method=interpolation)
    return ref


def _fold(np_fn):
    def ref(a, dim=None, keepdim=False):
        axis = None if a.ndim == 0 else (tuple(dim) if isinstance(dim, (list, tuple)) else dim)
        return np_fn(a, axis=axis, keepdims=keepdim)
    return ref


def _aminmax(a, dim=None, keepdim=False):
    axis = None if a.ndim == 0 else dim
    return np.min(a, axis=axis, keepdims=keepdim), np.max(a, axis=axis, keepdims=keepdim)


def _count_nonzero(a, dim=None):
    axis = tuple(dim) if isinstance(dim, (list, tuple)) else dim
    return np.asarray(np.count_nonzero(a, axis=axis), np.int64)


def _moments(np_fn):
    def ref(a, dim=None, correction=1, keepdim=False):
        axis = None if a.ndim == 0 else (tuple(dim) if isinstance(dim, (list, tuple)) else dim)
        return (np_fn(a, axis=axis, ddof=correction, keepdims=keepdim),
                np.mean(a, axis=axis, keepdims=keepdim))
    return ref


def _logcumsumexp(a, dim):
    return np.log(np.cumsum(np.exp(a), axis=dim)) if a.ndim else a.copy()


def _unique(a, sorted=True, return_inverse=False, return_counts=False, dim=None):
    values, inverse, counts = np.unique(a.reshape(-1) if dim is None else a,
                                        return_inverse=True, return_counts=True, axis=dim)
    out = [values] + ([inverse.reshape(a.shape if dim is None else -1)] if return_inverse
                      else []) + ([counts] if return_counts else [])
    return out[0] if len(out) == 1 else tuple(out)


def _unique_consecutive(a, return_inverse=False, return_counts=False, dim=None):
    if dim is None:
        keys = list(a.reshape(-1))
        groups = [(k, len(list(g))) for k, g in itertools.groupby(keys)]
        values = np.asarray([k for k, _ in groups], a.dtype)
        inv_shape = a.shape
    else:
        slices = [np.take(a, i, axis=dim) for i in range(a.shape[dim])]
        groups = [(k, len(list(g)))
                  for k, g in itertools.groupby(slices, key=lambda s: s.tobytes())]
        starts = np.cumsum([0] + [c for _, c in groups[:-1]])
        values = np.take(a, starts, axis=dim)
        inv_shape = (a.shape[dim],)
    counts = np.asarray([c for _, c in groups], np.int64)
    inverse = np.repeat(np.arange(len(groups)), counts).reshape(inv_shape)
    out = [values] + ([inverse] if return_inverse else []) + ([counts] if return_counts else [])
    return out[0] if len(out) == 1 else tuple(out)


def _isin(elements, test_elements, assume_unique=False, invert=False):
    members = set(np.asarray(test_elements).reshape(-1).tolist())
    hit = np.asarray([v in members for v in np.asarray(elements).reshape(-1).tolist()], bool)
    return hit.reshape(np.shape(elements)) != invert


def _bincount(a, weights=None, minlength=0):
    out = np.zeros(max(minlength, int(a.max()) + 1 if a.size else 0))
    for k, v in enumerate(a):
        out[v] += 1 if weights is None else weights[k]
    return out.astype(np.int64) if weights is None else out


def _histc(a, bins=100, min=0, max=0):
    if min == max:  # the data's range; widened by 1 each side where it is one value
        min, max = a.min(), a.max()
        min, max = (min - 1, max + 1) if min == max else (min, max)
    return np.histogram(a, bins, range=(min, max))[0].astype(np.float64)


def _histogram(a, bins, range=None, weight=None, density=False):
    hist, edges = np.histogram(a, bins, range=range, weights=weight, density=density)
    return hist.astype(np.float64), edges


def _histogramdd(a, bins, range=None, weight=None, density=False):
    pairs = None if range is None else [range[k:k + 2] for k in (0, 2)]
    hist, edges = np.histogramdd(a.reshape(-1, a.shape[-1]), bins, range=pairs, weights=weight,
                                 density=density)
    return (hist, *edges)


def _flat_histogramdd(*args, **kwargs):
    """``histogramdd`` with its edges flattened: ``(hist, edges0, edges1, ...)``."""
    hist, edges = dg.histogramdd(*args, **kwargs)
    return (hist, *edges)


def _searchsorted(seq, values, out_int32=False, right=False, side=None, sorter=None):
    right = right or side == "right"
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter, -1)
    values = np.asarray(values)
    if values.ndim == 0:
        return np.asarray(((seq <= values) if right else (seq < values)).sum(),
                          np.int32 if out_int32 else np.int64)
    seq_rows = np.broadcast_to(seq, values.shape[:-1] + seq.shape[-1:]) if values.ndim else seq
    below = seq_rows[..., None, :] <= values[..., None] if right else \
        seq_rows[..., None, :] < values[..., None]
    return below.sum(-1).astype(np.int32 if out_int32 else np.int64)


def _bucketize(values, boundaries, out_int32=False, right=False):
    # bucketize's right=False is searchsorted's left side
    return _searchsorted(boundaries, values, out_int32=out_int32, right=right)


def _diff(a, n=1, dim=-1, prepend=None, append=None):
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(a, n, axis=dim, **kw)


def _trapezoid(y, x=None, dx=None, dim=-1):
    if x is not None:
        if x.ndim == 1:
            x = x.reshape([-1 if i == dim % y.ndim else 1 for i in range(y.ndim)])
        return np.trapezoid(y, np.broadcast_to(x, y.shape), axis=dim)
    return np.trapezoid(y, dx=1.0 if dx is None else dx, axis=dim)


def _cumulative_trapezoid(y, x=None, dx=None, dim=-1):
    if x is not None:
        return scipy.integrate.cumulative_trapezoid(y, x, axis=dim)
    return scipy.integrate.cumulative_trapezoid(y, dx=1.0 if dx is None else dx, axis=dim)


def _renorm(a, p, dim, maxnorm):
    others = tuple(i for i in range(a.ndim) if i != dim % a.ndim)
    norms = np.sum(np.abs(a) ** p, axis=others, keepdims=True) ** (1.0 / p)
    return a * np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


def _norm_except_dim(v, pow=2, dim=0):
    if dim == -1:
        return np.sum(np.abs(v) ** pow) ** (1.0 / pow)
    if v.ndim == 1:
        return np.abs(v)
    others = tuple(i for i in range(v.ndim) if i != dim)
    return np.sum(np.abs(v) ** pow, axis=others, keepdims=True) ** (1.0 / pow)


# --- records ------------------------------------------------------------------------------

def record(name, ref, forward, grad=(), cuda=(), dtypes=FLOATS, **kw):
    return OpInfo(name, "statistics", sampler(forward, grad, cuda), ref, dtypes,
                  tol=kw.pop("tol", TOL), grad_tol=kw.pop("grad_tol", GRAD_TOL), **kw)


def _layouts(x, *args, layouts=("C", "T"), **kwargs):
    """One sample per layout (transposed only from 2-D up)."""
    return [Sample((x,) + args, kwargs, layout=lay)
            for lay in layouts if lay == "C" or x.ndim >= 2]


def _select_record(name, ref, extra=(), nan_rows=(), scalar=True):
    """median/nanmedian/kthvalue/mode: along a dim (values and indices) and, where the op
    takes no dim, over everything."""
    def forward(dtype):
        samples = []
        for shape, dim, keepdim in [((3, 5), 1, False), ((4, 3), 0, True),
                                    ((2, 3, 4), -1, False), ((2, 4), -2, False),
                                    ((), 0, False)][:None if scalar else -1]:
            x = distinct(shape, len(shape))
            samples += _layouts(x, *extra, dim, keepdim)
        if dtype.is_floating_point:
            samples += [Sample((np.asarray(r),) + tuple(extra) + (0,)) for r in nan_rows]
        return samples
    grad = _layouts(distinct((3, 4), 7) * 0.37, *extra, 1, False) + \
        [Sample((distinct((2, 3, 2), 8) * 0.37,) + tuple(extra) + (0, True))]
    cuda = [Sample((signed((2, 3)),) + tuple(extra) + (1,))]
    return record(name, ref, forward, grad, cuda, NUMBERS)


# (the index torch gives an all-NaN row of nanmedian follows no rule: tested by value apart)
_NAN_ROWS = [[[1.0, NAN, 3.0, NAN], [NAN, NAN, NAN, NAN], [2.0, 1.0, 4.0, 3.0]]]
_SOME_NAN_ROWS = [[[1.0, NAN, 3.0, NAN], [NAN, 0.5, NAN, NAN], [2.0, 1.0, 4.0, 3.0]]]


def _median_record(name, ref, nan_rows):
    along_dim = _select_record(name, ref, nan_rows=[np.asarray(r).T for r in nan_rows]).sampler

    def everything(dtype, device="cpu", requires_grad=False):
        samples = along_dim(dtype, device, requires_grad)
        if device != "cpu":
            return samples + [Sample((signed((2, 3)),))]
        if requires_grad:  # median(): ties share the gradient, torch's rule
            if dtype is not dg.float64:
                return samples
            x = distinct((3, 4), 9) * 0.37
            return samples + [Sample((x,)), Sample((np.asarray([1.0, 2.0, 2.0, 3.0]),),
                                                   gradcheck=False)]
        return samples + [Sample((distinct((3, 5), 2),)), Sample((distinct((2, 4), 3),)),
                          Sample((distinct((), 4),))] + \
            ([Sample((np.asarray(r),)) for r in nan_rows] if dtype.is_floating_point else [])
    return OpInfo(name, "statistics", everything, _full(ref), NUMBERS, tol=TOL,
                  grad_tol=GRAD_TOL)


def _quantile_record(name, ref, nan_data):
    def forward(dtype):
        x = uniform((3, 5), 11)
        samples = []
        for method in ("linear", "lower", "higher", "midpoint", "nearest"):
            samples += _layouts(x, 0.4, 1, interpolation=method)
        samples += [Sample((x, dg.tensor([0.0, 0.25, 0.5, 1.0], dtype=dtype))),
                    Sample((uniform((2, 3, 4), 12), dg.tensor([0.3, 0.9], dtype=dtype), -1, True)),
                    Sample((x, 0.75), dict(dim=None, keepdim=True)),
                    Sample((uniform((), 1), 0.5)), Sample((x, 0.5, 0))]
        samples += [Sample((nan_data, q, 1)) for q in (0.0, 0.5, 0.8)]
        return samples
    grad = [Sample((uniform((3, 5), 13), 0.3, 1)), Sample((uniform((4, 3), 14), 0.6, 0, True)),
            Sample((uniform((2, 5), 15), 0.4), dict(dim=1, interpolation="midpoint")),
            Sample((uniform((6,), 16), 0.9)),
            # q as an input under test: its gradient through the interpolation weights
            Sample((uniform((3, 6), 17), np.asarray([0.15, 0.5, 0.93])), dict(dim=1)),
            Sample((uniform((5,), 18), np.asarray(0.35)))]
    cuda = [Sample((signed((2, 3)), 0.4, 1)),
            Sample((signed((2, 3)), np.asarray([0.3, 0.8])), dict(dim=0))]
    return record(name, ref, forward, grad, cuda)


_NAN_DATA = np.asarray([[1.0, NAN, 3.0, 0.5], [NAN, NAN, NAN, NAN], [2.0, 1.0, 4.0, 3.0]])


def _nan_fold_record(name, ref):
    x = uniform((3, 4), 21)
    x[0, 1] = x[2, 3] = NAN
    forward = [s for kw in ({}, dict(dim=1), dict(dim=0, keepdim=True), dict(dim=(0, 1)))
               for s in _layouts(x, **kw)] + [Sample((uniform((), 2),))]
    grad = [Sample((x,), dict(dim=1)), Sample((uniform((2, 3), 22),))]
    return record(name, ref, forward, grad, [Sample((signed((2, 3)),), dict(dim=1))])


def _running_record(name, ref):
    def forward(dtype):
        samples = [s for shape, dim in [((3, 5), 1), ((4, 3), 0), ((2, 3, 4), -1), ((), 0),
                                        ((0, 3), 0)]
                   for s in _layouts(quarters(shape, len(shape)), dim)]
        if dtype.is_floating_point:
            samples.append(Sample((np.asarray([1.0, 3.0, 3.0, 2.0, NAN, 1.0, NAN, 4.0]), 0)))
        return samples
    grad = _layouts(distinct((3, 4), 5) * 0.37, 1) + [Sample((distinct((2, 3, 2), 6), 0))]
    return record(name, ref, forward, grad, [Sample((signed((2, 3)), 1))], NUMBERS)


def _set_samples(dtype):
    x = integers((4, 5), 31, -2, 3)
    return [Sample((x,)), Sample((x,), dict(return_inverse=True), layout="T"),
            Sample((x,), dict(return_counts=True, return_inverse=True)),
            Sample((np.asarray([[1.0, 2.0], [1.0, 2.0], [0.0, 5.0], [1.0, 2.0]]),),
                   dict(dim=0, return_inverse=True, return_counts=True)),
            Sample((np.asarray([[1.0, 1.0, 0.0], [2.0, 2.0, 5.0]]),),
                   dict(dim=1, return_counts=True))]


def _unique_samples(dtype):
    return _set_samples(dtype) + [Sample((integers((6,), 32),), dict(sorted=False))]


def _search_samples(dtype):
    seq = np.asarray([-2.0, -1.0, 0.0, 0.0, 1.0, 3.0])
    values = integers((3, 4), 41, -3, 5)
    rows = np.sort(integers((3, 5), 42), axis=-1)
    return [Sample((seq, values)), Sample((seq, values), dict(right=True)),
            Sample((seq, values), dict(side="right"), layout=("C", "T")),
            Sample((seq, values), dict(side="left", out_int32=True)),
            Sample((rows, values)), Sample((rows, values), dict(right=True)),
            Sample((np.asarray([3.0, -1.0, 2.0, 0.0]), values[0]),
                   dict(sorter=dg.tensor([1, 3, 2, 0]))),
            Sample((seq, 0.0)), Sample((seq, np.zeros((0,))))]


def _bucketize_samples(dtype):
    b = np.asarray([-2.0, -1.0, 0.0, 0.0, 1.0, 3.0])
    values = integers((3, 4), 43, -3, 5)
    return [Sample((values, b)), Sample((values, b), dict(right=True), layout=("T", "C")),
            Sample((values, b), dict(out_int32=True)), Sample((1.0, b))]


def _histogram_samples(dtype):
    x = quarters((3, 7), 51)
    w = uniform((3, 7), 52, 0.0, 2.0)
    return [Sample((x, 5)), Sample((x, 4), dict(range=(-1.1, 1.7))),
            Sample((x, 5), dict(weight=w, density=True)),
            Sample((x, dg.tensor([-3.0, -0.1, 0.3, 2.0], dtype=dtype)), layout="T"),
            Sample((np.full(3, 1.0), 2))]


def _histogramdd_samples(dtype):
    x = quarters((10, 2), 53)
    return [Sample((x, 3)), Sample((x, [2, 4]), dict(range=[-1.1, 1.7, -2.1, 2.3])),
            Sample((x, 3), dict(weight=uniform((10,), 54, 0.0, 2.0), density=True)),
            Sample((x, [dg.tensor([-3.0, 0.1, 3.0], dtype=dtype),
                        dg.tensor([-2.1, -0.1, 0.6, 2.9], dtype=dtype)]))]


def _diff_samples():
    x = uniform((3, 5), 61)
    return [s for kw in ({}, dict(dim=0), dict(n=2), dict(n=3, dim=1), dict(n=0), dict(n=7))
            for s in _layouts(x, **kw)] + \
        [Sample((x,), dict(prepend=uniform((3, 2), 62), append=uniform((3, 1), 63))),
         Sample((x,), dict(dim=0, n=2, append=uniform((1, 5), 64))),
         Sample((uniform((2, 3, 4), 65), 1, 1))]


def _trapezoid_samples():
    y = uniform((3, 5), 71)
    return [s for s in _layouts(y)] + \
        [Sample((y,), dict(dim=0)), Sample((y,), dict(dx=0.5)),
         Sample((y, np.sort(uniform((5,), 72)))),
         Sample((y, np.sort(uniform((3, 5), 73), axis=0)), dict(dim=0)),
         Sample((uniform((2, 3, 4), 74),), dict(dim=1, dx=2.0)), Sample((uniform((1,), 75),))]


_DIFF_GRAD = [Sample((uniform((3, 5), 66),), dict(n=2)),
              Sample((uniform((3, 4), 67),), dict(dim=0, prepend=uniform((1, 4), 68)))]
_TRAPEZOID_GRAD = [Sample((uniform((3, 5), 76),), dict(dx=0.5)),
                   Sample((uniform((3, 5), 77), np.sort(uniform((5,), 78))))]


def _renorm_samples():
    x = uniform((3, 4), 81)
    return [Sample((x, 2, 0, 2.0)), Sample((x, 1, 1, 3.0), layout="T"),
            Sample((x, 3, -1, 1.5)), Sample((uniform((2, 3, 2), 82), 2, 1, 1.0)),
            Sample((x, 2, 0, 100.0))]


def _norm_except_dim_samples():
    x = uniform((3, 4), 83)
    return [Sample((x,)), Sample((x, 2, 1), layout="T"), Sample((x, 3, 0)), Sample((x, 2, -1)),
            Sample((uniform((2, 3, 2), 84), 1, 2)), Sample((uniform((4,), 85), 2, 0))]


RECORDS = [
    _median_record("median", _median, _NAN_ROWS),
    _median_record("nanmedian", _nanmedian, _SOME_NAN_ROWS),
    _select_record("kthvalue", _kthvalue, extra=(2,), scalar=False),
    record("mode", _mode, lambda dtype: [
        s for shape, dim, keepdim in [((3, 7), 1, False), ((6, 3), 0, True),
                                      ((2, 3, 5), -1, False), ((), 0, False)]
        for s in _layouts(integers(shape, len(shape), -2, 2), dim, keepdim)] +
        [Sample((distinct((3, 4), 1), 1))] +
        ([Sample((np.asarray([3.0, 1.0, 2.0, 2.0, 3.0, 1.0, NAN, NAN, NAN]),))]
         if dtype.is_floating_point else []),
        [Sample((distinct((3, 4), 2) * 0.37, 1)), Sample((distinct((2, 3), 3) * 0.37, 0, True))],
        [Sample((signed((2, 3)),))], NUMBERS),
    _quantile_record("quantile", _quantile(np.quantile), _NAN_DATA),
    _quantile_record("nanquantile", _quantile(np.nanquantile), _NAN_DATA),
    _nan_fold_record("nansum", _fold(np.nansum)),
    _nan_fold_record("nanmean", _fold(np.nanmean)),
    record("aminmax", _aminmax,
           [s for kw in ({}, dict(dim=1), dict(dim=0, keepdim=True), dict(dim=None, keepdim=True))
            for s in _layouts(distinct((3, 4), 91), **kw)] + [Sample((distinct((), 1),))],
           [Sample((distinct((3, 4), 92) * 0.37,)), Sample((distinct((3, 4), 93) * 0.37,),
                                                           dict(dim=0))],
           [Sample((signed((2, 3)),), dict(dim=1))], NUMBERS),
    record("count_nonzero", _count_nonzero,
           [s for dim in (None, 1, (0, 1), -2) for s in _layouts(integers((3, 4), 94, -1, 2), dim)]
           + [Sample((integers((), 95, 0, 2),))],
           cuda=[Sample((np.asarray([[0.0, 1.0, 0.5], [2.0, 0.0, 0.0]]),), dict(dim=1))],
           dtypes={"cpu": (dg.float32, dg.float64, dg.int64), "cuda": (dg.float32,)},
           differentiable=False),
    record("msort", lambda a: np.sort(a, axis=0),
           _layouts(distinct((4, 3), 96)) + [Sample((distinct((5,), 97),))],
           [Sample((distinct((4, 3), 98) * 0.37,))], [Sample((signed((3, 2)),))], NUMBERS),
    record("var_mean", _moments(np.var),
           [s for kw in ({}, dict(dim=1), dict(dim=(0, 1), correction=0, keepdim=True))
            for s in _layouts(uniform((3, 4), 101), **kw)],
           [Sample((uniform((3, 4), 102),), dict(dim=0))],
           [Sample((signed((2, 3)),), dict(dim=1))]),
    record("std_mean", _moments(np.std),
           [s for kw in ({}, dict(dim=0, correction=2), dict(dim=-1, keepdim=True))
            for s in _layouts(uniform((3, 4), 103), **kw)],
           [Sample((uniform((3, 4), 104),), dict(dim=1))], [Sample((signed((2, 3)),),)]),
    _running_record("cummax", _running(lambda v, best: v >= best)),
    _running_record("cummin", _running(lambda v, best: v <= best)),
    record("logcumsumexp", _logcumsumexp,
           [s for shape, dim in [((3, 5), 1), ((4, 3), 0), ((2, 3, 4), -2), ((), 0)]
            for s in _layouts(uniform(shape, 111, -3.0, 3.0), dim)],
           [Sample((uniform((3, 4), 112),), dict(dim=1)),
            Sample((uniform((2, 3, 2), 113),), dict(dim=0))],
           [Sample((signed((2, 3)), 1))]),
    record("unique", _unique, _unique_samples, cuda=[Sample((integers((2, 3), 33),),
                                                            dict(return_counts=True))],
           dtypes=NUMBERS, differentiable=False),
    record("unique_consecutive", _unique_consecutive,
           lambda dtype: _set_samples(dtype) + [Sample((np.asarray([1.0, 1.0, 2.0, 2.0, 1.0,
                                                                    3.0, 3.0]),),
                                                       dict(return_inverse=True,
                                                            return_counts=True))],
           cuda=[Sample((np.asarray([1.0, 1.0, 2.0, 1.0]),), dict(return_counts=True))],
           dtypes=NUMBERS, differentiable=False),
    record("isin", _isin, lambda dtype: [
        Sample((integers((3, 4), 121), integers((3,), 122))),
        # (torch's isin fails on a transposed test_elements: only elements is transposed)
        Sample((integers((3, 4), 123), integers((2, 2), 124)), dict(invert=True),
               layout=("T", "C")),
        Sample((integers((5,), 125), np.asarray([2.0, -1.0])), dict(assume_unique=False)),
        Sample((integers((5,), 126), 1.0)), Sample((2.0, integers((4,), 127)))],
        cuda=[Sample((integers((2, 3), 128), integers((2,), 129)))], dtypes=NUMBERS,
        differentiable=False),
    record("bincount", _bincount, lambda dtype: [
        Sample((integers((9,), 131, 0, 5),)), Sample((integers((9,), 132, 0, 3),),
                                                       dict(minlength=6)),
        Sample((integers((0,), 133, 0, 3),)),
        Sample((integers((6,), 134, 0, 4), dg.tensor(uniform((6,), 135)))),
        Sample((integers((6,), 136, 0, 4), dg.tensor(uniform((6,), 137), dtype=dg.float32)),
               dict(minlength=2)),
        Sample((integers((4,), 138, 0, 4), dg.tensor([1, 2, 3, 4])))],
        cuda=[Sample((integers((5,), 139, 0, 4),))],
        dtypes={"cpu": (dg.int64,), "cuda": (dg.int64,)}, differentiable=False,
        out_dtype=lambda dtype: None),
    record("histc", _histc, lambda dtype: [
        Sample((quarters((3, 7), 141), 5, -3, 3)), Sample((quarters((4, 5), 142), 7),
                                                           layout="T"),
        Sample((quarters((10,), 143), 4, -1.1, 1.7)), Sample((np.full(3, 2.0), 2))],
        cuda=[Sample((signed((2, 3)), 4, -1, 1))], differentiable=False),
    record("histogram", _histogram, _histogram_samples, cuda=[Sample((signed((2, 3)), 3))],
           differentiable=False),
    # (the edges come as one flat list of tensors, which the harness compares one by one)
    record("histogramdd", _histogramdd, _histogramdd_samples,
           cuda=[Sample((signed((4, 2)), 2))], differentiable=False, torch_outputs=(0,),
           op=_flat_histogramdd),
    record("searchsorted", _searchsorted, _search_samples,
           cuda=[Sample((np.asarray([-1.0, 0.0, 2.0]), signed((2, 3))))], dtypes=NUMBERS,
           differentiable=False),
    record("bucketize", _bucketize, _bucketize_samples,
           cuda=[Sample((signed((2, 3)), np.asarray([-0.5, 0.0, 0.5])))], dtypes=NUMBERS,
           differentiable=False),
    record("diff", _diff, _diff_samples(), _DIFF_GRAD, [Sample((signed((2, 3)),))], NUMBERS),
    record("trapezoid", _trapezoid, _trapezoid_samples(), _TRAPEZOID_GRAD,
           [Sample((signed((2, 3)),))]),
    record("cumulative_trapezoid", _cumulative_trapezoid,
           _trapezoid_samples()[:-1], _TRAPEZOID_GRAD, [Sample((signed((2, 3)),))]),
    record("renorm", _renorm, _renorm_samples(),
           [Sample((uniform((3, 4), 85), 2, 0, 2.0)), Sample((uniform((3, 4), 86), 1, 1, 2.5)),
            Sample((uniform((2, 3, 2), 87), 3, 2, 1.0))],
           [Sample((signed((2, 3)), 2, 0, 0.5))], check_inplace=True),
    record("norm_except_dim", _norm_except_dim, _norm_except_dim_samples(),
           [Sample((uniform((3, 4), 88), 2, 1)), Sample((uniform((3, 4), 89),))],
           [Sample((signed((2, 3)),))]),
]
RECORDS.append(alias("trapz", RECORDS[-4]))
