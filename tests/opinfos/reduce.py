"""Records of the reductions and scans.

Each (shape, arguments) case runs in float32 and float64, on a contiguous tensor and, from 2-D up,
on a transposed and a strided view of the same values; gradients by finite differences in float64
on the contiguous tensor and on a transposed view.
"""
from __future__ import annotations

import math

import numpy as np

import dynagrad as dg
from opinfo import OpInfo, Sample, sampler, signed, uniform

TOL = {"float32": (2e-5, 2e-5), "float64": (1e-10, 1e-12)}
GRAD_TOL = {"float64": (1e-10, 1e-12)}
FLOATS = {"cpu": (dg.float32, dg.float64), "cuda": (dg.float32,)}


def _axis(dim, a):
    if a.ndim == 0:
        return None
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


def _fold(np_fn):
    """The reference of a reduction over ``dim`` (all dims by default) with ``keepdim``."""
    return lambda a, dim=None, keepdim=False: np_fn(a, axis=_axis(dim, a), keepdims=keepdim)


def _np_moments(np_fn):
    return lambda a, dim=None, keepdim=False, correction=1: np_fn(
        a, axis=_axis(dim, a), ddof=correction, keepdims=keepdim)


def _np_logsumexp(a, dim, keepdim=False):
    if a.ndim == 0:
        return a.copy()
    ax = _axis(dim, a)
    m = np.max(a, axis=ax, keepdims=True)
    m = np.where(np.isinf(m), 0.0, m)
    r = np.log(np.sum(np.exp(a - m), axis=ax, keepdims=True)) + m
    return r if keepdim else np.squeeze(r, axis=ax if ax is not None else tuple(range(a.ndim)))


def _np_norm(a, p="fro", dim=None, keepdim=False):
    ax, b = _axis(dim, a), np.abs(a)
    if p in ("fro", 2):
        return np.sqrt(np.sum(b * b, axis=ax, keepdims=keepdim))
    if p == math.inf:
        return np.max(b, axis=ax, keepdims=keepdim)
    if p == -math.inf:
        return np.min(b, axis=ax, keepdims=keepdim)
    if p == 0:
        return np.sum(b != 0, axis=ax, keepdims=keepdim).astype(np.float64)
    return np.sum(b ** p, axis=ax, keepdims=keepdim) ** (1.0 / p)


def _np_scan(np_fn):
    return lambda a, dim: np_fn(a, axis=dim) if a.ndim else a.copy()


def _np_first_arg(fn):
    """np.argmax/argmin over one dim (or flattened), with keepdim."""
    def ref(a, dim=None, keepdim=False):
        if dim is None:
            r = np.asarray(fn(a.reshape(-1)))
            return r.reshape((1,) * a.ndim) if keepdim else r
        if a.ndim == 0:
            return np.asarray(0)
        r = fn(a, axis=dim)
        return np.expand_dims(r, dim) if keepdim else r
    return ref


def _np_extreme(fold, arg):
    """max/min: over everything, or ``(values, indices)`` along ``dim``."""
    def ref(a, dim=None, keepdim=False):
        if dim is None:
            return fold(a)
        values, indices = fold(a, axis=dim if a.ndim else None), \
            arg(a, axis=dim) if a.ndim else np.asarray(0)
        if keepdim and a.ndim:
            values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
        return values, indices
    return ref


def _forward_data(name, shape, kw):
    if name in ("prod", "cumprod"):
        return uniform(shape, 0, 0.5, 1.5)
    return uniform(shape, len(shape) + 7 * len(kw), -2.0, 2.0)


def _grad_data(name, shape, kw):
    if name in ("prod", "cumprod"):
        return uniform(shape, 3, 0.5, 1.5)
    if kw.get("p") in (math.inf, -math.inf) or name in ("amax", "amin"):
        # distinct values: max and min are differentiable there
        values = np.random.default_rng(3).permutation(np.arange(math.prod(shape), dtype=float))
        return np.asarray(values.reshape(shape) / 3 - 1.1)
    return uniform(shape, 3, -2.0, 2.0)


def _layouts(shape, names):
    return [lay for lay in names if lay == "C" or len(shape) >= 2]


def reduction(name, ref, cases, cuda, differentiable=True):
    """A reduction: ``cases`` are its (input shape, kwargs), ``cuda`` its CUDA samples' input
    shape and kwargs."""
    forward = [Sample((_forward_data(name, s, kw),), kw, layout=lay)
               for s, kw in cases for lay in _layouts(s, ["C", "T", "S"])]
    grad = [Sample((_grad_data(name, s, kw),), kw, layout=lay)
            for s, kw in cases if 0 not in s for lay in _layouts(s, ["C", "T"])]
    shape, kwargs = cuda
    cuda = [Sample((signed(shape),), kw) for kw in kwargs]
    return OpInfo(name, "reduce", sampler(forward, grad, cuda), ref, FLOATS,
                  differentiable=differentiable, tol=TOL, grad_tol=GRAD_TOL)


def _extreme_samples(table, grad):
    """max/min samples: distinct values, along a dim (both layouts; contiguous for gradients)
    and over everything."""
    rng = np.random.default_rng(2 if grad else 1)
    samples = []
    for shape, dim, keepdim in table:
        a = rng.permutation(np.arange(math.prod(shape), dtype=float)).reshape(shape)
        a = np.asarray(a * 0.37 if grad else a - 5)
        layouts = ["C"] if grad else _layouts(shape, ["C", "T"])
        samples += [Sample((a, dim), {"keepdim": keepdim}, layout=lay) for lay in layouts]
        samples.append(Sample((a,)))
    return samples


def extreme(name, fold, arg, cuda_dim):
    """max/min, along a dim (values and indices) and over everything, float and int64."""
    forward = _extreme_samples([((3, 4), 1, False), ((3, 4), 0, True), ((2, 3, 4), -1, False),
                                ((1, 4), 0, False), ((), 0, False), ((), -1, True)], False)
    grad = _extreme_samples([((3, 4), 1, False), ((2, 3, 2), 0, True), ((), 0, False)], True)
    x = signed((2, 3))
    return OpInfo(name, "reduce", sampler(forward, grad, [Sample((x,)), Sample((x, cuda_dim))]),
                  _np_extreme(fold, arg),
                  {"cpu": (dg.float32, dg.float64, dg.int64), "cuda": (dg.float32,)}, tol=TOL,
                  grad_tol=GRAD_TOL)


def boolean(name, ref, kwargs):
    """all/any on a bool tensor."""
    m = np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    x = np.asarray(signed((2, 3)) > 0, float)
    return OpInfo(name, "reduce", sampler([Sample((m,), kw) for kw in kwargs],
                                          cuda=[Sample((x,), kw) for kw in kwargs]),
                  _fold(ref), {"cpu": (dg.bool,), "cuda": (dg.bool,)}, differentiable=False)


RECORDS = [
    reduction("sum", _fold(np.sum), [
        ((3, 4), {}), ((3, 4), dict(dim=1)), ((3, 4), dict(dim=-1, keepdim=True)),
        ((2, 3, 4), dict(dim=(0, 2))), ((2, 3, 4), dict(dim=(-1, 0), keepdim=True)),
        ((2, 3, 4), dict(dim=(0, 1))), ((1, 3), dict(dim=0)), ((), {}),
        ((), dict(dim=0, keepdim=True)), ((0, 3), dict(dim=0))],
        ((2, 3, 4), [{}, dict(dim=1), dict(dim=(0, 2), keepdim=True)])),
    reduction("mean", _fold(np.mean), [
        ((3, 4), {}), ((3, 4), dict(dim=0, keepdim=True)), ((2, 3, 4), dict(dim=(-1, -3))),
        ((), {})],
        ((2, 3), [{}, dict(dim=0)])),
    reduction("prod", _fold(np.prod), [
        ((3, 4), {}), ((3, 4), dict(dim=1)), ((2, 3, 2), dict(dim=-2, keepdim=True)), ((), {})],
        ((2, 3), [{}, dict(dim=1)])),
    reduction("amax", _fold(np.max), [
        ((3, 4), dict(dim=1)), ((2, 3, 4), dict(dim=(0, 2), keepdim=True)),
        ((3, 4), dict(dim=None)), ((), dict(dim=None))],
        ((2, 3), [{}, dict(dim=1)])),
    reduction("amin", _fold(np.min), [
        ((3, 4), dict(dim=-1)), ((2, 3, 4), dict(dim=(1, 2))),
        ((1, 4), dict(dim=0, keepdim=True))],
        ((2, 3), [{}, dict(dim=0)])),
    reduction("var", _np_moments(np.var), [
        ((3, 4), {}), ((3, 4), dict(dim=1)), ((3, 4), dict(dim=0, keepdim=True, correction=0)),
        ((2, 3, 4), dict(dim=(0, 2), correction=2))],
        ((2, 3), [{}, dict(dim=1)])),
    reduction("std", _np_moments(np.std), [
        ((3, 4), {}), ((3, 4), dict(dim=-1, keepdim=True)),
        ((2, 3, 4), dict(dim=(1,), correction=0))],
        ((2, 3), [{}, dict(dim=0, correction=0)])),
    reduction("logsumexp", _np_logsumexp, [
        ((3, 4), dict(dim=1)), ((3, 4), dict(dim=(0, 1), keepdim=True)),
        ((2, 3, 4), dict(dim=-1)), ((), dict(dim=0))],
        ((2, 3), [dict(dim=1)])),
    reduction("norm", _np_norm, [
        ((3, 4), {}), ((3, 4), dict(p=2, dim=1)), ((3, 4), dict(p=1, dim=0, keepdim=True)),
        ((3, 4), dict(p=math.inf, dim=1)), ((3, 4), dict(p=-math.inf)),
        ((3, 4), dict(p=0, dim=1)), ((2, 3, 4), dict(p=3, dim=(0, 2))),
        ((3, 4), dict(p=0.5, dim=-1)), ((), {})],
        ((2, 3), [{}, dict(p=1, dim=1)])),
    reduction("cumsum", _np_scan(np.cumsum), [
        ((3, 4), dict(dim=1)), ((3, 4), dict(dim=0)), ((2, 3, 4), dict(dim=-2)),
        ((), dict(dim=0)), ((1, 3), dict(dim=0))],
        ((2, 3), [dict(dim=1)])),
    reduction("cumprod", _np_scan(np.cumprod), [
        ((3, 4), dict(dim=1)), ((2, 3, 4), dict(dim=-1)), ((), dict(dim=0))],
        ((2, 3), [dict(dim=0)])),
    reduction("argmax", _np_first_arg(np.argmax), [
        ((3, 4), {}), ((3, 4), dict(dim=1)), ((2, 3, 4), dict(dim=-2, keepdim=True)),
        ((), dict(dim=0))],
        ((2, 3), [{}, dict(dim=1)]), differentiable=False),
    reduction("argmin", _np_first_arg(np.argmin), [
        ((3, 4), dict(dim=0)), ((2, 3, 4), {}), ((1, 4), dict(dim=0, keepdim=True))],
        ((2, 3), [{}, dict(dim=0)]), differentiable=False),
    extreme("max", np.max, np.argmax, 1),
    extreme("min", np.min, np.argmin, 0),
    boolean("all", np.all, [{}, dict(dim=1)]),
    boolean("any", np.any, [{}, dict(dim=0, keepdim=True)]),
]
