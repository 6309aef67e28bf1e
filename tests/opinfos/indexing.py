"""Records of the indexing ops: gather/scatter, index_select/index_add/index_put, masks, nonzero,
sort/argsort/topk.

Indexing is exact: every case runs in float32, float64 and int64 on values all three hold exactly
(quarters, with ties for the sorts), on contiguous inputs and on transposed views; index tensors
stay contiguous, masks are laid out like the input. Gradients by finite differences in float64,
and torch's.
"""
from __future__ import annotations

import numpy as np

import dynagrad as dg
from opinfo import OpInfo, Sample, index, mask, quarters, sampler, signed, uniform

DTYPES = {"cpu": (dg.float32, dg.float64, dg.int64), "cuda": (dg.float32,)}
LAYOUTS = ("C", "T")


def vals(shape, seed=0):
    """Values exact in every tested dtype (quarters), distinct enough for sorting."""
    return quarters(shape, seed, scale=8.0)


def rounded(shape, seed=0):
    """Whole numbers: many ties."""
    return np.asarray(np.round(uniform(shape, seed)))


def _record(name, ref, sampler, dtypes=DTYPES, **kw):
    return OpInfo(name, "indexing", sampler, ref, dtypes, **kw)


# --- gather / scatter ---------------------------------------------------------------------------

def _restrict(a, d, shape):
    return a[tuple(slice(None) if k == d else slice(0, shape[k]) for k in range(a.ndim))]


def _np_gather(a, dim, index):
    d = dim % a.ndim
    return np.take_along_axis(_restrict(a, d, index.shape), index, axis=d)


def _full_index(index, d):
    grid = list(np.indices(index.shape))
    grid[d] = index
    return tuple(grid)


def _np_scatter(add):
    def ref(a, dim, index, src=None, value=None):
        d, out = dim % a.ndim, a.copy()
        src = value if src is None else src
        src = np.broadcast_to(src, index.shape) if np.ndim(src) == 0 else \
            src[tuple(slice(0, n) for n in index.shape)]
        if add:
            np.add.at(out, _full_index(index, d), src)
        else:
            out[_full_index(index, d)] = src
        return out
    return ref


# (x shape, dim, index)
GATHERS = [((3, 4), 1, [[0, 3], [1, 1], [2, 0]]), ((3, 4), 0, [[2, 0, 1, 1], [0, 0, 2, 1]]),
           ((3, 4), -1, [[3, 1, 1], [0, 2, 0]]),
           ((2, 3, 2), 1, [[[2, 0], [1, 1]], [[0, 0], [2, 1]]]),
           ((5,), 0, [4, 0, 4, 1]), ((1, 3), 0, [[0, 0, 0]]), ((3, 4), 1, np.zeros((3, 0)))]
# (x shape, dim, index with unique targets along dim, src shape)
SCATTERS = [((3, 4), 1, [[0, 3], [1, 2], [2, 0]], (3, 2)),
            ((3, 4), 0, [[2, 0, 1, 1], [0, 1, 2, 0]], (2, 4)),
            ((3, 4), -1, [[3, 1], [0, 2]], (3, 3)),
            ((2, 3, 2), 1, [[[2, 0], [1, 1]], [[0, 2], [2, 1]]], (2, 2, 2)),
            ((5,), 0, [4, 0, 1], (3,))]


def _torch_takes(index, src_shape):
    """Whether torch's scatter backward takes this src: it refuses one larger than the index."""
    return np.shape(index) == src_shape


def _gather():
    def forward(dtype):
        return [Sample((vals(shape, 1), dim, index(i)), layout=lay)
                for shape, dim, i in GATHERS for lay in LAYOUTS]

    def grad(dtype):
        return [Sample((uniform(shape, 2), dim, index(i))) for shape, dim, i in GATHERS]

    def cuda(dtype):
        return [Sample((signed((2, 3)), 1, index([[0, 2], [1, 1]])))]
    return _record("gather", _np_gather, sampler(forward, grad, cuda), gradgrad=True)


def _scatter():
    def forward(dtype):
        value = 2.5 if dtype.is_floating_point else 2
        return [s for shape, dim, i, sshape in SCATTERS for lay in LAYOUTS for s in (
            Sample((vals(shape, 1), dim, index(i), vals(sshape, 2)), layout=lay),
            Sample((vals(shape, 1), dim, index(i), value), layout=lay),
            Sample((vals(shape, 1), dim, index(i)), {"value": 3}, layout=lay))]

    def grad(dtype):
        return [s for shape, dim, i, sshape in SCATTERS for s in (
            Sample((uniform(shape, 3), dim, index(i), uniform(sshape, 4)),
                   torch=_torch_takes(i, sshape)),
            Sample((uniform(shape, 3), dim, index(i), 1.5)))]

    def cuda(dtype):
        return [Sample((signed((2, 3)), 1, index([[2, 0]]), signed((1, 2), 1)))]
    return _record("scatter", _np_scatter(False), sampler(forward, grad, cuda),
                   check_inplace=True)


def _scatter_add():
    def forward(dtype):
        # repeated targets add up
        return [Sample((vals(shape, 1), dim, index(i), vals(sshape, 2)), layout=lay)
                for shape, dim, targets, sshape in SCATTERS for lay in LAYOUTS
                for i in (np.zeros_like(targets), targets)]

    def grad(dtype):
        return [Sample((uniform(shape, 3), dim, index(np.zeros_like(i)), uniform(sshape, 4)),
                       torch=_torch_takes(i, sshape)) for shape, dim, i, sshape in SCATTERS]

    def cuda(dtype):
        return [Sample((signed((2, 3)), 0, index([[1, 1, 0]]), signed((1, 3), 1)))]
    return _record("scatter_add", _np_scatter(True), sampler(forward, grad, cuda),
                   check_inplace=True)


# --- index_select / index_add / index_put -------------------------------------------------------

# (x shape, dim, 1-D or 0-d index)
SELECTS = [((4, 3), 0, [3, 0, 0]), ((4, 3), 1, [2, 1]), ((2, 3, 2), -1, [1, 0, 1]),
           ((5,), 0, [4, 4, 0]), ((4, 3), 1, np.zeros(0)), ((4, 3), 0, np.array(2))]


def _source_shape(shape, dim, i):
    sshape = list(shape)
    sshape[dim] = np.asarray(i).size
    return tuple(sshape)


def _np_index_add(a, dim, index, src, alpha=1):
    out = np.moveaxis(a.copy(), dim, 0)
    np.add.at(out, index.reshape(-1), np.moveaxis(src, dim, 0) * alpha)
    return np.moveaxis(out, 0, dim)


def _index_select():
    def forward(dtype):
        return [Sample((vals(shape, 1), dim, index(i)), layout=lay)
                for shape, dim, i in SELECTS for lay in LAYOUTS]

    def grad(dtype):
        return [Sample((uniform(shape, 5), dim, index(i))) for shape, dim, i in SELECTS]

    def cuda(dtype):
        return [Sample((signed((2, 3)), 1, index([2, 0, 2])))]
    return _record("index_select", lambda a, dim, i: np.take(a, i.reshape(-1), axis=dim),
                   sampler(forward, grad, cuda))


def _index_add():
    def forward(dtype):
        samples = []
        for shape, dim, i in SELECTS:
            a, s = vals(shape, 1), vals(_source_shape(shape, dim, i), 2)
            samples += [Sample((a, dim, index(i), s), layout=lay) for lay in LAYOUTS]
            # a transposed input with a contiguous source
            samples += [Sample((a, dim, index(i), s), {"alpha": 2}, layout=lay)
                        for lay in ("C", ("T", "C"))]
        return samples

    def grad(dtype):
        return [Sample((uniform(shape, 5), dim, index(i),
                        uniform(_source_shape(shape, dim, i), 6)), {"alpha": -1.5})
                for shape, dim, i in SELECTS]

    def cuda(dtype):
        return [Sample((signed((2, 3)), 0, index([1, 1]), signed((2, 3), 1)))]
    return _record("index_add", _np_index_add, sampler(forward, grad, cuda),
                   check_inplace=True)


def _np_index_put(a, indices, values, accumulate=False):
    out = a.copy()
    if accumulate:
        np.add.at(out, tuple(indices), values)
    else:
        out[tuple(indices)] = values
    return out


def _index_put():
    keys = {False: (index([0, 2, 3]), index([1, 1, 0])), True: (index([0, 2, 0]), index([1, 1, 1]))}
    rows = {False: (index([3, 1]),), True: (index([1, 1]),)}  # whole rows, as torch is compared

    def forward(dtype):
        return [Sample((vals((4, 3), 1), keys[acc], vals((3,), 2)), {"accumulate": acc})
                for acc in (False, True)] + parity()

    def grad(dtype):
        return [Sample((uniform((4, 3), 3), keys[acc], uniform((3,), 4)), {"accumulate": acc})
                for acc in (False, True)] + parity()

    def parity():
        return [Sample((uniform((4, 3), 1), rows[acc], uniform((2, 3), 2)), {"accumulate": acc})
                for acc in (False, True)]

    def cuda(dtype):
        return [Sample((signed((2, 3)), (index([0, 1, 1]), index([2, 0, 0])), signed((3,), 1)),
                       {"accumulate": True})]
    return _record("index_put", _np_index_put, sampler(forward, grad, cuda),
                   {"cpu": (dg.float64,), "cuda": (dg.float32,)})


# --- masks, nonzero -----------------------------------------------------------------------------

# (x shape, mask shape, whether the mask is all False)
MASKS = [((3, 4), (3, 4), False), ((3, 4), (4,), False), ((3, 4), (3, 1), False),
         ((3, 4), (), False), ((), (), False), ((2, 2), (2, 2), True)]


def _mask(mshape, empty):
    return mask(np.zeros(mshape, bool) if empty else vals(mshape, 2) > 0)


def _np_masked_select(a, m):
    shape = np.broadcast_shapes(a.shape, m.shape)
    return np.broadcast_to(a, shape)[np.broadcast_to(m, shape)]


def _masked_fill():
    def forward(dtype):
        return [s for shape, mshape, empty in MASKS for lay in LAYOUTS for s in (
            Sample((vals(shape, 1), _mask(mshape, empty), 5), layout=lay),
            Sample((vals(shape, 1), _mask(mshape, empty), dg.tensor(-2)), layout=lay))]

    def grad(dtype):
        return [Sample((uniform(shape, 3), _mask(mshape, empty), np.array(0.5)))
                for shape, mshape, empty in MASKS]

    def cuda(dtype):
        return [Sample((signed((2, 3)), mask(signed((2, 3), 1) > 0), 0.5))]
    return _record("masked_fill", lambda a, m, v: np.where(m, v, a),
                   sampler(forward, grad, cuda), check_inplace=True)


def _masked_select():
    def forward(dtype):
        return [Sample((vals(shape, 1), _mask(mshape, empty)), layout=lay)
                for shape, mshape, empty in MASKS for lay in LAYOUTS]

    def grad(dtype):
        return [Sample((uniform(shape, 3), _mask(mshape, empty)))
                for shape, mshape, empty in MASKS]

    def cuda(dtype):
        return [Sample((signed((2, 3)), mask([True, False, True])))]
    return _record("masked_select", _np_masked_select, sampler(forward, grad, cuda))


NONZERO_SHAPES = [(3, 4), (2, 3, 2), (5,), (), (0, 3)]


def _np_nonzero(a, as_tuple=False):
    if as_tuple:
        return np.nonzero(np.atleast_1d(a))
    return np.argwhere(a) if a.ndim else np.zeros((int(a != 0), 0), np.int64)


def _nonzero_record(name, ref, kwargs):
    def forward(dtype):
        return [Sample((np.asarray(rounded(s, 5) * (uniform(s, 6) > 0)),), kw, layout=lay)
                for s in NONZERO_SHAPES for lay in LAYOUTS for kw in kwargs]

    def cuda(dtype):
        return [Sample((np.random.default_rng(0).integers(0, 2, (2, 3)).astype(float),), kw)
                for kw in kwargs]
    return _record(name, ref, sampler(forward, cuda=cuda),
                   {"cpu": (dg.float32, dg.int64, dg.bool), "cuda": (dg.int64,)},
                   differentiable=False)


# --- sort / argsort / topk ----------------------------------------------------------------------

SORTS = [((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1), ((6,), 0), ((1, 4), 1), ((), 0), ((0, 3), 1)]
TOPKS = [((3, 5), -1, 2), ((3, 5), 0, 3), ((2, 3, 4), 1, 1), ((6,), 0, 6), ((4, 2), 0, 0),
         ((), 0, 1)]


def _stable_order(a, dim, descending):
    return np.argsort(-a if descending else a, axis=dim, kind="stable")


def _np_sort(a, dim=-1, descending=False, stable=False):
    if a.ndim == 0:
        return a, np.zeros((), np.int64)
    order = _stable_order(a, dim, descending)
    return np.take_along_axis(a, order, dim), order


def _np_topk(a, k, dim=-1, largest=True):
    values, order = _np_sort(a, dim, largest)
    if a.ndim:
        values, order = np.take(values, np.arange(k), dim), np.take(order, np.arange(k), dim)
    return values, order


def _torch_sort(x, dim=-1, descending=False, stable=False):
    """torch's sort, stable: with ties only the stable order is defined (ours always is)."""
    import torch
    return torch.sort(x, dim=dim, descending=descending, stable=True)


def _torch_argsort(x, dim=-1, descending=False):
    import torch
    return torch.argsort(x, dim=dim, descending=descending, stable=True)


_GRAD_X = uniform((3, 4), 7)


def _sort():
    def forward(dtype):
        # many ties (whole numbers): the stable order is checked
        return [s for shape, dim in SORTS for d in (False, True) for lay in LAYOUTS for s in (
            Sample((rounded(shape, 3), dim), {"descending": d}, layout=lay),
            Sample((rounded(shape, 3), dim, d), {"stable": True}, layout=lay))]

    def grad(dtype):
        return [Sample((_GRAD_X,) + args, layout=lay) for args in [(1,), (0, True)]
                for lay in LAYOUTS]

    def cuda(dtype):
        return [Sample((signed((2, 4)), 1), {"descending": True})]
    return _record("sort", _np_sort, sampler(forward, grad, cuda), torch=_torch_sort)


def _argsort():
    def forward(dtype):
        return [Sample((rounded(shape, 3),), {"dim": dim, "descending": d}, layout=lay)
                for shape, dim in SORTS for d in (False, True) for lay in LAYOUTS]

    def cuda(dtype):
        return [Sample((signed((3, 2)), 0))]
    return _record("argsort", lambda a, dim=-1, descending=False: _np_sort(a, dim, descending)[1],
                   sampler(forward, cuda=cuda), differentiable=False,
                   torch=_torch_argsort)


def _topk():
    def forward(dtype):
        return [Sample((rounded(shape, 4), k, dim), {"largest": largest}, layout=lay)
                for shape, dim, k in TOPKS for largest in (True, False) for lay in LAYOUTS]

    def grad(dtype):
        return [Sample((_GRAD_X,) + args, layout=lay)
                for args in [(2, 1), (2, 0, False), (1,)] for lay in LAYOUTS]

    def cuda(dtype):
        return [Sample((signed((2, 4)), 2, 1))]
    # among ties torch's order is unspecified: its values are compared, indices where there are
    # no ties (the gradient samples, and test_indexing.py)
    return _record("topk", _np_topk, sampler(forward, grad, cuda), torch_outputs=(0,))


RECORDS = [
    _gather(), _scatter(), _scatter_add(), _index_select(), _index_add(), _index_put(),
    _masked_fill(), _masked_select(),
    _nonzero_record("nonzero", _np_nonzero, [{}, {"as_tuple": True}]),
    _nonzero_record("argwhere", _np_nonzero, [{}]),
    _sort(), _argsort(), _topk(),
]


# --- reads and writes by index composed of the primitives (ops/scatter_gather.py) ---------------

def _np_take_along_dim(a, indices, dim=None):
    if dim is None:
        return a.reshape(-1)[indices.reshape(-1)]
    d = dim % a.ndim
    shape_i, shape_a = list(a.shape), list(indices.shape)
    shape_i[d], shape_a[d] = indices.shape[d], a.shape[d]
    idx = np.broadcast_to(indices, np.broadcast_shapes(tuple(shape_i), indices.shape))
    src = np.broadcast_to(a, np.broadcast_shapes(tuple(shape_a), a.shape))
    return np.take_along_axis(src, idx, axis=d)


def _np_put(a, index, source, accumulate=False):
    out = a.copy().reshape(-1)
    if accumulate:
        np.add.at(out, index.reshape(-1), source.reshape(-1))
    else:
        out[index.reshape(-1)] = source.reshape(-1)
    return out.reshape(a.shape)


def _np_index_copy(a, dim, index, source):
    out = a.copy()
    out[(slice(None),) * (dim % a.ndim) + (index,)] = source
    return out


def _np_index_fill(a, dim, index, value):
    out = a.copy()
    out[(slice(None),) * (dim % a.ndim) + (index,)] = value
    return out


def _np_masked_scatter(a, m, source):
    shape = np.broadcast_shapes(a.shape, m.shape)
    out, m = np.broadcast_to(a, shape).copy(), np.broadcast_to(m, shape)
    out[m] = source.reshape(-1)[:m.sum()]
    return out


_UFUNC = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _np_scatter_reduce(a, dim, index, src, reduce, include_self=True):
    d = dim % a.ndim
    where = _full_index(index, d)
    src = src[tuple(slice(0, n) for n in index.shape)]
    out = a.copy()
    if reduce == "mean":
        total = a.copy()
        count = np.ones(a.shape, a.dtype) if include_self else np.zeros(a.shape, a.dtype)
        if not include_self:
            total[where] = 0
        np.add.at(total, where, src)
        np.add.at(count, where, 1)
        count = np.maximum(count, 1)
        return total / count if a.dtype.kind == "f" else np.floor_divide(total, count)
    if not include_self:
        out[where] = {"sum": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[reduce] \
            if a.dtype.kind == "f" else {"sum": 0, "prod": 1, "amax": np.iinfo(a.dtype).min,
                                         "amin": np.iinfo(a.dtype).max}[reduce]
    _UFUNC[reduce].at(out, where, src)
    return out


def _np_index_reduce(a, dim, index, source, reduce, include_self=True):
    d = dim % a.ndim
    idx = np.broadcast_to(index.reshape((1,) * d + (-1,) + (1,) * (source.ndim - d - 1)),
                          source.shape)
    return _np_scatter_reduce(a, d, idx, source, reduce, include_self)


def _np_unravel_index(indices, shape):
    n = int(np.prod(shape))
    return list(np.unravel_index(np.where(indices < 0, indices + n, indices), shape))


def _simple(name, ref, forward, grad, cuda, **kw):
    return _record(name, ref, sampler(forward, grad, cuda), **kw)


def _distinct(shape, seed):
    """Values distinct within and across seeds (no ties: amax / amin gradients are unambiguous;
    no zero for prod)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return np.asarray(rng.permutation(n) + 1.0 + 8 * seed, np.float64).reshape(shape) * \
        np.where(rng.random(shape) < 0.5, -0.25, 0.25)


SCATTER_REDUCE_INDEX = [[0, 0, 2], [1, 1, 1]]

INDEX_WRITE_RECORDS = [
    _simple("take", lambda a, i: a.reshape(-1)[i], lambda dt: [
        Sample((vals((3, 4), 1), index([[0, 11], [-1, 5]])), layout=lay) for lay in LAYOUTS] + [
        Sample((vals((3,), 1), index(2)))],
        [Sample((uniform((2, 3), 2), index([0, 5, 5, -2])), layout=lay) for lay in LAYOUTS],
        [Sample((signed((2, 3)), index([1, 4, 4])))]),
    _simple("take_along_dim", _np_take_along_dim, lambda dt: [
        Sample((vals((3, 4), 1), index([[0, 3], [1, 1], [2, 0]]), 1), layout=lay)
        for lay in LAYOUTS] + [
        Sample((vals((3, 4), 1), index([[2, 0, 1, 1]]), 0)),
        Sample((vals((3, 4), 1), index([[1], [0], [3]]), -1)),
        Sample((vals((1, 4), 1), index([[0], [3], [2]]), 1)),
        Sample((vals((3, 4), 1), index([11, 0]))),
        Sample((vals((3, 1, 2), 1), index([[[1, 0, 1]]]), 2))],
        [Sample((uniform((3, 4), 2), index([[0, 3], [1, 1], [2, 0]]), 1)),
         Sample((uniform((1, 4), 2), index([[0], [3], [3]]), 1))],
        [Sample((signed((2, 3)), index([[2], [0]]), 1))]),
    _simple("unravel_index", _np_unravel_index, lambda dt: [
        Sample((index([4, 5, 0]), (2, 3))), Sample((index(7), (2, 4))),
        Sample((index([[-1, 3]]), (3, 2, 1)))], [], [Sample((index([4, -1]), (2, 3)))],
        dtypes={"cpu": (dg.int64,), "cuda": (dg.float32,)}, differentiable=False),
    _simple("put", _np_put, lambda dt: [
        Sample((vals((2, 3), 1), index([0, -1, 4]), vals((3,), 2)), layout=lay)
        for lay in LAYOUTS] + [
        Sample((vals((2, 3), 1), index([[0], [0]]), vals((2, 1), 2)), {"accumulate": True})],
        [Sample((uniform((2, 3), 1), index([0, 5]), uniform((2,), 2))),
         Sample((uniform((2, 3), 1), index([1, 1]), uniform((2,), 2)), {"accumulate": True})],
        [Sample((signed((2, 3)), index([0, 4]), signed((2,), 1)), {"accumulate": True})],
        check_inplace=True),
    _simple("index_copy", _np_index_copy, lambda dt: [
        Sample((vals((3, 4), 1), 1, index([3, 0]), vals((3, 2), 2)), layout=lay)
        for lay in LAYOUTS] + [Sample((vals((3, 4), 1), 0, index([1]), vals((1, 4), 2)))],
        [Sample((uniform((3, 4), 1), 1, index([3, 0]), uniform((3, 2), 2)))],
        [Sample((signed((2, 3)), 1, index([2, 0]), signed((2, 2), 1)))], check_inplace=True),
    _simple("index_fill", _np_index_fill, lambda dt: [
        Sample((vals((3, 4), 1), 1, index([3, 0]), -1.5 if dt.is_floating_point else 7),
               layout=lay) for lay in LAYOUTS] + [
        Sample((vals((3, 4), 1), 0, index([-1]), 2))],
        [Sample((uniform((3, 4), 1), 1, index([3, 0]), 0.5))],
        [Sample((signed((2, 3)), 1, index([2]), 0.5))], check_inplace=True),
    _simple("masked_scatter", _np_masked_scatter, lambda dt: [
        Sample((vals((2, 3), 1), mask([[True, False, True], [False, True, True]]),
                vals((5,), 2)), layout=(lay, lay, "C")) for lay in LAYOUTS] + [
        Sample((vals((2, 3), 1), mask([True, False, True]), vals((2, 4), 2)))],
        [Sample((uniform((2, 3), 1), mask([True, False, True]), uniform((5,), 2)))],
        [Sample((signed((2, 3)), mask([[True, False, True], [False, True, False]]),
                 signed((4,), 1)))], check_inplace=True),
    _simple("scatter_reduce", _np_scatter_reduce, lambda dt: [
        Sample((vals((2, 3), 1), 1, index(SCATTER_REDUCE_INDEX), vals((2, 4), 2), r),
               {"include_self": inc}) for r in ("sum", "prod", "mean", "amax", "amin")
        for inc in (True, False)] + [
        Sample((vals((3, 2), 1), 0, index([[0, 2], [0, 0]]), vals((2, 2), 2), "amax"),
               layout="T")],
        [Sample((_distinct((2, 3), 1), 1, index(SCATTER_REDUCE_INDEX), _distinct((2, 3), 2),
                 r), {"include_self": inc}) for r in ("sum", "prod", "mean", "amax", "amin")
         for inc in (True, False)] + [  # products with zero factors: alone, and two at a target
            Sample((np.array([[0.0, 2.0, 3.0], [1.5, 0.0, -2.0]]), 1, index(SCATTER_REDUCE_INDEX),
                    np.array(src), "prod"), {"include_self": inc})
            for src in ([[0.0, 0.5, 0.0], [2.0, 0.0, 3.0]], [[1.0, 0.5, 0.0], [2.0, 0.0, 0.0]])
            for inc in (True, False)],
        [Sample((signed((2, 3)), 1, index([[0, 0], [2, 1]]), signed((2, 2), 1), r))
         for r in ("sum", "amax", "prod")], check_inplace=True),
    _simple("index_reduce", _np_index_reduce, lambda dt: [
        Sample((vals((3, 2), 1), 0, index([0, 2, 0]), vals((3, 2), 2), r),
               {"include_self": inc}) for r in ("prod", "mean", "amax", "amin")
        for inc in (True, False)],
        [Sample((_distinct((3, 2), 1), 0, index([0, 2, 0]), _distinct((3, 2), 2), r))
         for r in ("prod", "mean", "amax", "amin")],
        [Sample((signed((2, 3)), 1, index([0, 0]), signed((2, 2), 1), "amin"))],
        check_inplace=True),
]
RECORDS += INDEX_WRITE_RECORDS
