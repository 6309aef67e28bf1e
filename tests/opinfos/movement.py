"""Records of the shape and data-movement ops.

Movement is exact: every case runs in float32, float64 and int64 on values all three hold exactly,
on contiguous inputs and (where the op takes any layout) on transposed views; gradients by finite
differences in float64 on both layouts, and torch's.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

import dynagrad as dg
from opinfo import OpInfo, Sample, alias, quarters, sampler, signed, uniform

DTYPES = {"cpu": (dg.float32, dg.float64, dg.int64), "cuda": (dg.float32,)}


# --- NumPy references ---------------------------------------------------------------------------

def _np_reshape(a, *shape):
    return a.reshape(*shape)


def _np_flatten(a, start_dim=0, end_dim=-1):
    if a.ndim == 0:
        return a.reshape(1)
    s, e = start_dim % a.ndim, end_dim % a.ndim
    return a.reshape(a.shape[:s] + (-1,) + a.shape[e + 1:])


def _np_unflatten(a, dim, sizes):
    return a.reshape(a.shape[:dim] + tuple(sizes) + a.shape[dim + 1:])


def _np_expand(a, *sizes):
    sizes = sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    lead = len(sizes) - a.ndim
    return np.broadcast_to(a, [a.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes)])


def _np_squeeze(a, dim=None):
    if dim is None or a.ndim == 0:
        return a.squeeze()
    dims = dim if isinstance(dim, tuple) else (dim,)
    return a.squeeze(tuple(d % a.ndim for d in dims if a.shape[d] == 1))


def _np_narrow(a, dim, start, length):
    start = start % a.shape[dim]
    return a[(slice(None),) * (dim % a.ndim) + (slice(start, start + length),)]


def _np_repeat(a, *reps):
    a = a.reshape((1,) * (len(reps) - a.ndim) + a.shape)
    return np.tile(a, reps)


def _np_split(a, size, dim=0):
    n = a.shape[dim]
    cuts = list(range(size, n, size)) if isinstance(size, int) else list(np.cumsum(size)[:-1])
    return np.split(a, cuts, axis=dim)


def _np_chunk(a, chunks, dim=0):
    return _np_split(a, -(-a.shape[dim] // chunks), dim)


def _np_tri(lower):
    def ref(a, diagonal=0):
        n, m = a.shape[-2:]
        keep = np.tri(n, m, diagonal, dtype=bool) if lower else \
            ~np.tri(n, m, diagonal - 1, dtype=bool)
        return np.where(keep, a, 0)
    return ref


def _np_pad(a, pad, mode="constant", value=0):
    k = len(pad) // 2
    widths = [(0, 0)] * (a.ndim - k) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(k))]
    crop = tuple(slice(-lo if lo < 0 else 0, s + hi if hi < 0 else None)
                 for (lo, hi), s in zip(widths, a.shape))
    a = a[crop]
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}.get(mode, mode)
    kw = dict(constant_values=value) if mode == "constant" else {}
    return np.pad(a, widths, mode=np_mode, **kw)


def _np_cat(arrays, dim=0):
    # 1-D empty tensors are skipped, as PyTorch's legacy rule has it
    return np.concatenate([a for a in arrays if a.shape != (0,)], dim)


# --- the records --------------------------------------------------------------------------------

class Case:
    """One call of a movement op: the input shapes and the arguments after them. Tensor inputs
    come first, in a list when the op takes one (``listed``). ``strided`` says whether it also
    runs on transposed views (a view of a transposed tensor would raise); ``layout`` lays out
    the CUDA cases."""

    def __init__(self, shapes, *args, listed=False, strided=True, layout="C", **kwargs):
        self.shapes, self.args, self.kwargs = shapes, args, kwargs
        self.listed, self.strided, self.layout = listed, strided, layout

    def sample(self, arrays, layout):
        inputs = (list(arrays),) if self.listed else tuple(arrays)
        return Sample(inputs + self.args, self.kwargs, layout=layout)

    def layouts(self):
        transposable = self.strided and any(len(s) >= 2 for s in self.shapes)
        return ["C", "T"] if transposable else ["C"]


def movement(name, ref, cases, cuda, extra=(), **kw):
    """An op with its ``cases`` and ``cuda`` cases (``Case``); ``extra`` are more float64 samples
    (forward and gradients: the torch parity tables)."""
    forward = [c.sample([quarters(s, k) for k, s in enumerate(c.shapes)], lay)
               for c in cases for lay in c.layouts()]
    grad = [c.sample([uniform(s, k + 3) for k, s in enumerate(c.shapes)], lay)
            for c in cases for lay in c.layouts()] + list(extra)
    cuda = [c.sample([signed(s, k) for k, s in enumerate(c.shapes)], c.layout) for c in cuda]
    return OpInfo(name, "movement", sampler(
        lambda dtype: forward + (list(extra) if dtype is dg.float64 else []), grad, cuda),
        ref, DTYPES, **kw)


def _pad_parity():
    """The shapes, paddings and modes compared with torch in float64 (values exactly)."""
    table = [((2, 5), (1, 2), "constant"), ((2, 3, 4), (1, 2, 0, 1), "constant"),
             ((1, 2, 5), (2, 3), "reflect"), ((1, 3, 4), (1, 2, 2, 1), "reflect"),
             ((1, 2, 3), (2, 1), "replicate"), ((1, 2, 3, 2), (1, 3, 2, 0), "replicate"),
             ((1, 2, 4), (2, 1), "circular"), ((1, 1, 3, 4), (1, 2, 2, 1), "circular"),
             ((2, 4), (-1, 2), "constant")]
    return [Sample((uniform(shape, 1), pad), dict(mode=mode, **(
        dict(value=2.5) if mode == "constant" else {}))) for shape, pad, mode in table]


def _without_torch_for_integer_modes(sampler):
    """torch has no reflect, replicate or circular padding of integers."""
    def wrapped(dtype, device="cpu", requires_grad=False):
        samples = sampler(dtype, device, requires_grad)
        if dtype.is_floating_point:
            return samples
        return [replace(s, torch=s.kwargs.get("mode", "constant") == "constant")
                for s in samples]
    return wrapped


def _pad():
    info = movement("pad", _np_pad, [
        Case([(2, 3)], (1, 2)), Case([(2, 3)], (1, 1, 2, 0)), Case([(2, 3)], (0, 1), value=7),
        Case([(3, 4)], (-1, 2, 1, -2)), Case([(2, 4)], (2, 3), mode="reflect"),
        Case([(1, 3, 4)], (1, 2, 2, 1), mode="reflect"),
        Case([(2, 3)], (3, 1), mode="replicate"),
        Case([(1, 2, 3)], (1, 0, 2, 2), mode="replicate"),
        Case([(2, 4)], (2, 1), mode="circular"), Case([(1, 3, 4)], (1, 2, 2, 1), mode="circular"),
        Case([(2, 3)], (0, 0), mode="reflect")],
        [Case([(2, 3)], (1, 2)), Case([(2, 3)], (1, 1), mode="reflect")], extra=_pad_parity(),
        torch="nn.functional.pad")
    return replace(info, sampler=_without_torch_for_integer_modes(info.sampler))


X5 = (2, 1, 2, 3, 2)  # five dims: the strided copies' general case

_CAT = movement("cat", _np_cat, [
    Case([(2, 3), (1, 3)], listed=True), Case([(2, 3), (2, 1), (2, 2)], listed=True, dim=-1),
    Case([(2, 3), (0,)], 1, listed=True), Case([(2,), (3,)], listed=True),
    Case([X5, (2, 1, 2, 1, 2)], 3, listed=True, strided=False)],
    [Case([(2, 3), (2, 1)], 1, listed=True)], torch="cat")
_TRANSPOSE = movement(
    "transpose", lambda a, d0, d1: np.swapaxes(a, d0, d1) if a.ndim else a, [
        Case([(2, 3, 4)], 0, 2), Case([(2, 3, 4)], -1, -2), Case([()], 0, -1)],
    [Case([(2, 3)], 0, 1)])

RECORDS = [
    movement("view", _np_reshape, [
        Case([(2, 3, 4)], 6, 4, strided=False), Case([(2, 3)], -1, strided=False),
        Case([()], 1, 1, strided=False), Case([(1,)], (), strided=False)],
        [Case([(2, 3)], 3, 2)]),
    movement("view_as", lambda a, b: a.reshape(b.shape), [Case([(2, 3), (3, 2)], strided=False)],
             [Case([(2, 3), (3, 2)])]),
    movement("reshape", _np_reshape, [
        Case([(2, 3, 4)], 4, -1), Case([(2, 3)], (3, 2)), Case([()], 1)],
        [Case([(3, 2)], 6, layout="T")]),
    movement("reshape_as", lambda a, b: a.reshape(b.shape), [Case([(2, 3), (6,)])],
             [Case([(2, 3), (6,)])]),
    movement("flatten", _np_flatten, [
        Case([(2, 3, 4)]), Case([(2, 3, 4)], 1), Case([(2, 3, 4)], 0, -2), Case([()])],
        [Case([(2, 3, 2)])]),
    movement("unflatten", _np_unflatten, [
        Case([(2, 6)], 1, (2, 3)), Case([(6, 2)], 0, (-1, 3))], [Case([(2, 4)], 1, (2, 2))]),
    _TRANSPOSE,
    alias("swapaxes", _TRANSPOSE),
    movement("t", lambda a: a.T, [Case([(2, 3)]), Case([(3,)])], [Case([(2, 3)])]),
    movement("permute", lambda a, *dims: a.transpose(*dims), [
        Case([(2, 3, 4)], 2, 0, 1), Case([(2, 3, 4)], (-1, 0, 1)), Case([X5], 4, 3, 2, 1, 0)],
        [Case([(2, 3, 2)], 2, 0, 1)]),
    movement("movedim", np.moveaxis, [
        Case([(2, 3, 4)], 0, -1), Case([(2, 3, 4)], (0, 1), (2, 0))],
        [Case([(2, 3, 2)], 0, 2)]),
    movement("expand", _np_expand, [
        Case([(3, 1)], 2, 3, 4), Case([(3, 1)], -1, 4), Case([()], 2, 3)],
        [Case([(1, 3)], 2, 3)]),
    movement("expand_as", lambda a, b: np.broadcast_to(a, b.shape), [
        Case([(3, 1), (2, 3, 4)])], [Case([(3,), (2, 3)])]),
    movement("broadcast_to", np.broadcast_to, [Case([(1, 3)], (2, 3))],
             [Case([(3,)], (2, 3))]),
    movement("squeeze", _np_squeeze, [
        Case([(1, 3, 1)]), Case([(1, 3, 1)], 0), Case([(1, 3, 1)], 1),
        Case([(1, 3, 1)], (0, -1)), Case([()], 0)], [Case([(2, 1, 3)])]),
    movement("unsqueeze", np.expand_dims, [
        Case([(2, 3)], 0), Case([(2, 3)], -1), Case([(2, 3)], -2), Case([()], 0)],
        [Case([(2, 3)], 1)]),
    movement("narrow", _np_narrow, [
        Case([(4, 3)], 0, 1, 2), Case([(4, 3)], -1, -2, 2), Case([(4, 3)], 0, 4, 0)],
        [Case([(2, 3)], 1, 1, 2)]),
    movement("select", lambda a, dim, i: np.take(a, i, axis=dim), [
        Case([(4, 3)], 1, -1), Case([(4, 3)], 0, 2)], [Case([(2, 3)], 1, 2)]),
    movement("diagonal", np.diagonal, [
        Case([(3, 4)]), Case([(3, 4)], 1), Case([(3, 4)], -1), Case([(2, 3, 4)], 0, 1, 2),
        Case([(2, 3, 4)], 1, -1, 0), Case([(3, 4)], 5)], [Case([(3, 3)])]),
    movement("clone", lambda a: a, [Case([(2, 3)]), Case([()])], [Case([(2, 3)])]),
    movement("contiguous", lambda a: a, [Case([(2, 3)]), Case([X5])],
             [Case([(3, 2)], layout="T")]),
    _CAT,
    alias("concat", _CAT),
    alias("concatenate", _CAT),
    movement("stack", lambda arrays, dim=0: np.stack(arrays, dim), [
        Case([(2, 3), (2, 3)], 1, listed=True), Case([(2, 3)] * 3, -1, listed=True),
        Case([(), ()], listed=True)], [Case([(2, 3), (2, 3)], 1, listed=True)], torch="stack"),
    movement("hstack", np.hstack, [
        Case([(2,), (3,)], listed=True), Case([(2, 3), (2, 1)], listed=True),
        Case([(), ()], listed=True)], [Case([(2, 3), (2, 3)], listed=True)], torch="hstack"),
    movement("vstack", np.vstack, [
        Case([(3,), (3,)], listed=True), Case([(2, 3), (1, 3)], listed=True)],
        [Case([(2, 3), (2, 3)], listed=True)], torch="vstack"),
    movement("split", _np_split, [
        Case([(5, 3)], 2), Case([(5, 3)], [1, 4]), Case([(5, 3)], 1, dim=-1),
        Case([(2, 3)], 5)], [Case([(2, 5)], 2, 1)]),
    movement("chunk", _np_chunk, [Case([(5, 3)], 2), Case([(2, 6)], 4, 1)],
             [Case([(4, 3)], 2, 0)]),
    movement("unbind", lambda a, dim=0: [np.take(a, i, axis=dim) for i in range(a.shape[dim])],
             [Case([(3, 2)], 1), Case([(2, 3)])], [Case([(2, 3)], 1)]),
    movement("repeat", _np_repeat, [
        Case([(2, 3)], 2, 1), Case([(2, 3)], 1, 2, 2), Case([()], 3), Case([(2, 3)], 0, 1)],
        [Case([(2, 3)], 2, 1, 2)]),
    movement("tile", lambda a, *reps: np.tile(a, reps[0] if len(reps) == 1 else reps), [
        Case([(2, 3)], (2,)), Case([(2, 3)], 2), Case([(3,)], 2, 2), Case([(2, 3)], (2, 1, 2))],
        [Case([(2, 3)], 2)]),
    movement("flip", lambda a, dims: np.flip(a, dims) if a.ndim else a, [
        Case([(2, 3, 4)], (0, 2)), Case([(2, 3)], -1), Case([()], 0), Case([X5], (1, 3, 4))],
        [Case([(2, 3)], 1)]),
    movement("roll", lambda a, shifts, dims=None: np.roll(a, shifts, dims), [
        Case([(3, 4)], 1, 0), Case([(3, 4)], (1, -2), (0, 1)), Case([(3, 4)], 5),
        Case([(3, 4)], -7, -1), Case([(3, 4)], 3, 0)], [Case([(2, 3)], 1, 1)]),
    movement("tril", _np_tri(True), [
        Case([(3, 4)]), Case([(2, 3, 3)], 1), Case([(4, 3)], -1)], [Case([(3, 3)])]),
    movement("triu", _np_tri(False), [
        Case([(3, 4)]), Case([(2, 3, 3)], -1), Case([(3, 4)], 2)], [Case([(3, 3)], 1)]),
    _pad(),
]


# --- rearranging and structure-building ops (ops/rearrange.py, ops/structure.py) ---------------

def _np_split_like(fn):
    def ref(a, *spec):
        return fn(a, spec[0] if len(spec) == 1 else list(spec))
    return ref


def _np_unfold(a, dim, size, step):
    d = dim % max(a.ndim, 1)
    if a.ndim == 0:
        return a.reshape(1)
    windows = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
    return windows[(slice(None),) * d + (slice(None, None, step),)]


def _np_sum_to_size(a, *size):
    size = size[0] if len(size) == 1 and isinstance(size[0], tuple) else size
    a = a.sum(axis=tuple(range(a.ndim - len(size))))
    dims = tuple(k for k, s in enumerate(size) if s == 1 and a.shape[k] != 1)
    return a.sum(axis=dims, keepdims=True) if dims else a


def _np_repeat_interleave(a, repeats, dim=None, output_size=None):
    return np.repeat(a, repeats, axis=dim)


def _np_as_strided(a, size, stride, offset=0):
    flat = np.ascontiguousarray(a).reshape(-1)
    return np.lib.stride_tricks.as_strided(flat[offset:], size,
                                           [s * flat.itemsize for s in stride]).copy()


def _np_diag_embed(a, offset=0, dim1=-2, dim2=-1):
    nd = a.ndim + 1
    d1, d2 = dim1 % nd, dim2 % nd
    n = a.shape[-1] + abs(offset)
    rest = iter(a.shape[:-1])
    out = np.zeros([n if k in (d1, d2) else next(rest) for k in range(nd)], a.dtype)
    for k in range(a.shape[-1]):
        key = [slice(None)] * nd
        key[d1], key[d2] = k + max(-offset, 0), k + max(offset, 0)
        out[tuple(key)] = a[..., k]
    return out


def _np_cartesian_prod(*arrays):
    if len(arrays) == 1:
        return arrays[0]
    return np.stack([g.reshape(-1) for g in np.meshgrid(*arrays, indexing="ij")], 1)


def _np_combinations(a, r=2, with_replacement=False):
    import itertools
    if r == 0:
        return a[:0]
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = [[a[i] for i in c] for c in pick(range(a.shape[0]), r)]
    return np.array(rows, a.dtype).reshape(-1, r)


def _np_fill_diagonal(a, value, wrap=False):
    out = a.copy()
    np.fill_diagonal(out, value, wrap=wrap)
    return out


def _index_table(name, samples):
    """A creation-like op of no tensor input (the index tables): int64 results, no gradient.
    The samples' first argument, a tensor, only names the device the table is made on."""
    import torch
    fn, np_fn = getattr(dg, name), getattr(np, name)

    def ref(like, r, c, offset=0, **kw):
        return np.stack(np_fn(r, offset, c))
    return OpInfo(name, "movement", sampler(samples, cuda=[Sample((uniform((1,)), 3, 4, 1))]),
                  ref, {"cpu": (dg.float64,), "cuda": (dg.float32,)},
                  op=lambda like, *a, **kw: fn(*a, device=like.device, **kw),
                  torch=lambda like, *a, **kw: getattr(torch, name)(*a, **kw),
                  differentiable=False)


_MOVEDIM = next(r for r in RECORDS if r.name == "movedim")
_VSTACK = next(r for r in RECORDS if r.name == "vstack")
RECORDS += [
    alias("swapdims", _TRANSPOSE, check_inplace=True),
    alias("moveaxis", _MOVEDIM),
    alias("row_stack", _VSTACK, torch="vstack"),
    movement("rot90", lambda a, k=1, dims=(0, 1): np.rot90(a, k, dims), [
        Case([(2, 3)]), Case([(2, 3)], 2), Case([(2, 3, 2)], -1, (2, 0)), Case([(2, 3)], 4)],
        [Case([(2, 3)], 3)]),
    movement("fliplr", np.fliplr, [Case([(2, 3)]), Case([(2, 3, 2)])], [Case([(2, 3)])]),
    movement("flipud", np.flipud, [Case([(3,)]), Case([(2, 3)])], [Case([(2, 3)])]),
    movement("tensor_split", lambda a, s, dim=0: np.array_split(a, s, axis=dim), [
        Case([(7, 2)], 3), Case([(7, 2)], [1, 5, 3]), Case([(2, 5)], [-2], dim=1),
        Case([(3, 2)], 5)], [Case([(5, 2)], 2)]),
    movement("hsplit", _np_split_like(np.hsplit), [
        Case([(6,)], 3), Case([(2, 4)], 2), Case([(2, 4)], 1, 3), Case([(2, 4)], [3])],
        [Case([(2, 4)], 2)]),
    movement("vsplit", _np_split_like(np.vsplit), [Case([(4, 2)], 2), Case([(4, 2)], 1, 3)],
             [Case([(4, 2)], 2)]),
    movement("dsplit", _np_split_like(np.dsplit), [Case([(1, 2, 4)], 2), Case([(2, 1, 4)], [1])],
             [Case([(1, 2, 4)], 2)]),
    movement("split_with_sizes", _np_split, [Case([(5, 2)], [2, 3]), Case([(2, 5)], [1, 0, 4], 1)],
             [Case([(5, 2)], [1, 4])]),
    movement("atleast_1d", np.atleast_1d, [Case([()]), Case([(2, 3)]), Case([(), (2,)])],
             [Case([()])]),
    movement("atleast_2d", np.atleast_2d, [Case([()]), Case([(3,)]), Case([(2, 3), (3,)])],
             [Case([(3,)])]),
    movement("atleast_3d", np.atleast_3d, [Case([()]), Case([(3,)]), Case([(2, 3)]),
                                            Case([(1, 2, 3)])], [Case([(2, 3)])]),
    movement("ravel", np.ravel, [Case([(2, 3)]), Case([()])], [Case([(2, 3)], layout="T")]),
    movement("column_stack", np.column_stack, [
        Case([(3,), (3, 2)], listed=True), Case([(), ()], listed=True)],
        [Case([(2,), (2, 2)], listed=True)], torch="column_stack"),
    movement("dstack", np.dstack, [
        Case([(3,), (3,)], listed=True), Case([(2, 3), (2, 3)], listed=True),
        Case([(2, 2, 1), (2, 2, 2)], listed=True)], [Case([(2, 2), (2, 2)], listed=True)],
        torch="dstack"),
    movement("broadcast_tensors", np.broadcast_arrays, [
        Case([(2, 1), (3,)]), Case([(), (2, 2)])], [Case([(2, 1), (3,)])], torch="broadcast_tensors"),
    movement("meshgrid", lambda *a, indexing="ij": np.meshgrid(*a, indexing=indexing), [
        Case([(2,), (3,)], indexing="ij"), Case([(2,), (3,), (2,)], indexing="xy"),
        Case([(), (3,)], indexing="ij")], [Case([(2,), (3,)], indexing="xy")], torch="meshgrid"),
    movement("as_strided", _np_as_strided, [
        Case([(2, 3)], (3, 2), (1, 2), strided=False), Case([(6,)], (2, 2), (1, 1), 2),
        Case([(4,)], (3, 2), (1, 1), strided=False)], [Case([(2, 3)], (2, 2), (1, 2), 1)]),
    movement("unfold_windows", _np_unfold, [
        Case([(5,)], 0, 2, 2), Case([(2, 5)], 1, 3, 1), Case([(4, 3)], 0, 2, 1), Case([()], 0, 1, 1)],
        [Case([(2, 5)], 1, 2, 2)], torch="Tensor.unfold"),
    movement("sum_to_size", _np_sum_to_size, [
        Case([(2, 3)], 3), Case([(2, 3)], 1, 3), Case([(2, 3)], (2, 1)), Case([(2, 3)], (2, 3))],
        [Case([(2, 3)], 1, 3)]),
    movement("repeat_interleave", _np_repeat_interleave, [
        Case([(2, 3)], 2), Case([(2, 3)], 2, 1), Case([(2, 3)], dg.tensor([1, 2]), 0),
        Case([(3,)], dg.tensor([0, 2, 1]), output_size=3), Case([(2, 3)], dg.tensor([2]), 1)],
        [Case([(2, 3)], dg.tensor([2, 0, 1]), 1)]),
    movement("diag", np.diag, [
        Case([(3,)]), Case([(3,)], -1), Case([(3, 4)], 1), Case([(3, 4)]), Case([(2, 3)], 5)],
        [Case([(3,)], 1), Case([(3, 3)])]),
    movement("diag_embed", _np_diag_embed, [
        Case([(2, 3)]), Case([(2, 3)], 1, 0, 2), Case([(3,)], -1), Case([(2, 2)], 0, -1, 0)],
        [Case([(2, 3)], 1)]),
    movement("diagflat", np.diagflat, [Case([(2, 2)]), Case([(3,)], -1)], [Case([(2, 2)], 1)]),
    movement("trace", np.trace, [Case([(3, 3)]), Case([(2, 4)]), Case([(4, 2)])],
             [Case([(3, 3)])]),
    _index_table("tril_indices", [
        Sample((uniform((1,)), 3, 4)), Sample((uniform((1,)), 3, 3, -1)),
        Sample((uniform((1,)), 2, 4, 2)), Sample((uniform((1,)), 0, 3)),
        Sample((uniform((1,)), 3, 3), {"dtype": dg.int64}, torch=False)]),
    _index_table("triu_indices", [
        Sample((uniform((1,)), 3, 4)), Sample((uniform((1,)), 3, 3, 1)),
        Sample((uniform((1,)), 4, 2, -2)), Sample((uniform((1,)), 3, 2, 5))]),
    movement("block_diag", lambda *a: __import__("scipy.linalg").linalg.block_diag(*a), [
        Case([(), (2,), (2, 1)]), Case([(2, 2), (1, 3)])], [Case([(2, 2), (1, 3)])]),
    movement("cartesian_prod", _np_cartesian_prod, [Case([(2,), (3,)]), Case([(2,), (1,), (2,)]),
                                                    Case([(3,)])], [Case([(2,), (3,)])]),
    movement("combinations", _np_combinations, [
        Case([(4,)]), Case([(3,)], 3), Case([(3,)], 2, True), Case([(3,)], 0), Case([(2,)], 3),
        Case([(3,)], 1)], [Case([(3,)], 2, True)]),
    movement("fill_diagonal_", _np_fill_diagonal, [
        Case([(3, 4)], 1.5, strided=False), Case([(7, 3)], -2, True), Case([(7, 3)], 2),
        Case([(2, 2, 2)], 1)], [Case([(3, 3)], 0.5)],
        op=lambda x, v, wrap=False: x.clone().fill_diagonal_(v, wrap),
        torch=lambda x, v, wrap=False: x.clone().fill_diagonal_(v, wrap=wrap)),
]
