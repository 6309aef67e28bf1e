"""Reductions and scans over ``dim`` (int, tuple or None) with ``keepdim``.

Every reduction runs one generated kernel over a contiguous ``(outer, reduced, inner)`` view; the
statistics built from them (``mean``, ``var``, ``std``, ``logsumexp``, ``norm``) are compositions,
so their gradients come from the pieces.

Example:
    >>> import dynagrad as dg
    >>> x = dg.tensor([[1.0, 5.0], [3.0, 2.0]])
    >>> x.sum(0), x.max(dim=1).indices
    (tensor([4., 7.]), tensor([1, 0]))
"""
from __future__ import annotations

import builtins as _builtins  # this module defines its own sum/max/min/any/all
import math
from collections import namedtuple

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Node, record, record_one
from ..dtypes import bool_, int64
from ..errors import describe
from ..kernels import cache as kernel_cache
from ..kernels.cpu import backend as cpu
from ..kernels.backend import backend
from ..tensor import TENSOR_TYPES, Tensor, _new, _wrap
from ._util import as_tensor_arg
from ..shapes import wrap_dim, wrap_dims
from .movement import _broadcast_view
from ..kernels.buffers import contiguous, device_index, host, is_host, move_array
from .registry import register

values_indices = {name: namedtuple(name, ["values", "indices"])
                  for name in ("max", "min", "sort", "topk", "kthvalue", "mode", "median",
                               "nanmedian", "cummax", "cummin")}

# (init, combine statement, final expression) per reduction and dtype category
_FOLDS = {
    "sum": {"f": ("0", "acc += v", "acc"), "i": ("0", "acc += v", "acc")},
    "prod": {"f": ("1", "acc *= v", "acc"), "i": ("1", "acc *= v", "acc")},
    "max": {"f": ("-math.inf", "acc = fold_max(acc, v)", "acc"),
            "i": ("-9223372036854775807 - 1", "if v > acc: acc = v", "acc")},
    "min": {"f": ("math.inf", "acc = fold_min(acc, v)", "acc"),
            "i": ("9223372036854775807", "if v < acc: acc = v", "acc")},
    "sumsq": {"f": ("0", cpu.SQUARES, "acc")},  # (CPU only: CUDA merges partials by combine)
    "all": {"b": ("True", "acc = acc and v", "acc")},
    "any": {"b": ("False", "acc = acc or v", "acc")},
}
_ARG_BETTER = {"f": {"max": "v > best or (v != v and best == best)",
                     "min": "v < best or (v != v and best == best)"},
               "i": {"max": "v > best", "min": "v < best"}}


def _as3(arr: np.ndarray, dims: tuple) -> tuple:
    """Gather ``dims`` into one block: returns (contiguous (outer, reduced, inner) array, kept shape)."""
    kept = tuple(s for i, s in enumerate(arr.shape) if i not in dims)
    if arr.ndim == 0:
        return arr.reshape(1, 1, 1), kept
    d0, k = dims[0], len(dims)
    if dims != tuple(range(d0, d0 + k)):  # scattered dims: move them to the end
        keep_axes = [i for i in range(arr.ndim) if i not in dims]
        arr = arr.transpose(keep_axes + list(dims))
        d0 = len(keep_axes)
    arr = contiguous(arr)
    s = arr.shape
    return arr.reshape(math.prod(s[:d0]), math.prod(s[d0:d0 + k]), math.prod(s[d0 + k:])), kept


def _divide(res, count: int, out_dt):
    """``res / count`` (NaN where ``count`` is 0) for a CUDA buffer, with the div kernel."""
    from .elementwise import OPS
    with grad_mode.no_grad():
        return OPS["div"].binary(_wrap(res, out_dt), count if count else math.nan)._data


def _keep_shape(shape, dims) -> tuple:
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _fold(x: Tensor, dims: tuple, kind: str, out_dtype, compute_dtype) -> np.ndarray:
    """Run fold ``kind`` over ``dims`` of ``x``; returns the reduced array (dims removed)."""
    arr = x._data
    if x.dtype is not compute_dtype:
        arr = arr.astype(compute_dtype.np)
    if compute_dtype.is_complex:  # NumPy on the host buffer (a host round trip on CUDA)
        return _complex_fold(arr, dims, kind, out_dtype)
    cat = "b" if compute_dtype is bool_ else ("f" if compute_dtype.is_floating_point else "i")
    init, combine, final = _FOLDS[kind][cat]
    if kind in ("sum", "prod", "sumsq"):
        acc = "float64" if cat == "f" else "int64"
    else:
        acc = "bool" if cat == "b" else compute_dtype.name
    x3, kept = _as3(arr, dims)
    out_np = (bool_ if out_dtype is bool_ else out_dtype.compute).np
    res = backend(x3).reduce_axis(x3, 1, (init, combine, final, acc), out_np)
    res = res.reshape(kept)
    return res if res.dtype == out_dtype.np else res.astype(out_dtype.np)


def _complex_fold(arr, dims: tuple, kind: str, out_dtype) -> np.ndarray:
    """``_fold`` of a complex buffer: NumPy's sum or product on the host (complex ops do not go
    through the generated kernels: see ``kernels.complex_math``)."""
    fold = {"sum": np.sum, "prod": np.prod}.get(kind)
    if fold is None:
        raise RuntimeError(f"{kind}: not supported for complex tensors")
    res = np.asarray(fold(host(arr), axis=dims), dtype=out_dtype.np, order="C")
    return move_array(res, device_index(arr))


def _expand_back(g: Tensor, shape: tuple, dims: tuple, keepdim: bool) -> Tensor:
    if not keepdim:
        g = g.reshape(_keep_shape(shape, dims))
    return g.expand(shape)


# --- sum / mean / prod --------------------------------------------------------------------

_FILL_MAX = 1 << 16  # elements: up to here SumBackward0 fills a buffer instead of a view


class SumBackward0(Node):
    keepdim = False
    dims = None  # None: every dim (a full sum records no tuple)

    def backward(self, g):
        dims = self.dims if self.dims is not None else _all_dims(len(self.shape))
        if grad_mode.GRAD_ENABLED[0]:  # create_graph: keep the expansion differentiable
            return (_expand_back(g, self.shape, dims, self.keepdim),)
        gd = g._data
        shape = self.shape
        if gd.ndim == 0 and type(gd) is np.ndarray and math.prod(shape) <= _FILL_MAX:
            # a full sum of a small tensor: a filled buffer costs less than building a
            # stride-0 view, and the consumers then take their contiguous kernels
            res = np.empty(shape, gd.dtype)
            res.fill(gd)
            return (_wrap(res, g.dtype),)
        # every input element receives its output's gradient: a stride-0 view, no copy
        gd = gd.reshape(_keep_shape(shape, dims))
        return (_wrap(_broadcast_view(gd, tuple(shape)), g.dtype),)


_HOST_DIVIDES = (np.dtype(np.float32), np.dtype(np.float64))  # NumPy rounds these like our kernels


class MeanBackward0(SumBackward0):
    def backward(self, g):
        if grad_mode.GRAD_ENABLED[0]:  # create_graph: keep the expansion differentiable
            return (_expand_back(g, self.shape, self.dims, self.keepdim) / self.count,)
        gd = g._data
        if type(gd) is np.ndarray and gd.dtype in _HOST_DIVIDES:
            # divide each output's gradient once, then expand as the sum does: the same values
            # as dividing the expansion (PyTorch's order), without an op on a stride-0 view
            # (which took the general path on every call)
            with np.errstate(divide="ignore", invalid="ignore"):
                g = _wrap(np.asarray(gd / gd.dtype.type(self.count)), g.dtype)
        else:
            g = g / self.count
        return super().backward(g)


def _fold_dtype(out_dt):
    """The dtype sums and products accumulate in: the output's (float, complex) or int64."""
    return out_dt.compute if out_dt.is_floating_point or out_dt.is_complex else int64


def _sum_dtype(x: Tensor, dtype):
    if dtype is not None:
        return dtype
    return x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else int64


_F32, _F64 = dtypes.float32, dtypes.float64
_GRAD = grad_mode.GRAD_ENABLED
_FULL_SUM: dict = {}  # float dtype -> (compiled entry point, numpy dtype): sum of everything
kernel_cache._clear_hooks.append(_FULL_SUM.clear)


def _contiguous_total(d, dt) -> np.ndarray | None:
    """The total of a non-empty contiguous float32/float64 CPU array as a 0-dim array of its
    dtype (the hot path of ``mean()``; ``sum()`` inlines it), or None where the general path
    runs."""
    if not ((dt is _F32 or dt is _F64) and type(d) is np.ndarray and d.size
            and d.flags.c_contiguous):
        return None
    if d.size < cpu.FLAT_PARALLEL_MIN_ELEMENTS:
        return _small_total(d, dt)
    if d.size % cpu.TOTAL_CHUNKS == 0:
        return np.asarray(cpu.threaded_total(d.reshape(-1)), dtype=dt.np)
    return None


def _small_total(d: np.ndarray, dt) -> np.ndarray:
    """The total of a contiguous float array below the threaded size, as a 0-dim array of its
    dtype (the hot path of ``sum()`` and ``mean()``)."""
    entry = _FULL_SUM.get(dt) or _full_sum_entry(dt)
    res = np.empty((1, 1), entry[1])
    entry[0](d.reshape(1, d.size, 1), res)  # exact types: skip Numba's dispatch
    return res.reshape(())


def _full_sum_entry(dt):
    """Entry point of the float fold for ``x.sum()`` on a contiguous tensor (the hot path)."""
    init, combine, final = _FOLDS["sum"]["f"]
    entry = _FULL_SUM[dt] = (cpu.reduce_entry((init, combine, final, "float64"), dt.name,
                                              dt.name), dt.np)
    return entry


_ALL_DIMS = tuple(tuple(range(n)) for n in range(9))


def _all_dims(ndim: int) -> tuple:
    """``tuple(range(ndim))``, from a table for the usual ranks."""
    return _ALL_DIMS[ndim] if ndim < len(_ALL_DIMS) else tuple(range(ndim))


def sum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum over ``dim`` (all dims when None). Integer and bool inputs sum to int64."""
    if dim is None and not keepdim and dtype is None and type(input) in TENSOR_TYPES:
        d = input._data
        dt = input.dtype
        n = d.size
        # (_contiguous_total, inlined: the per-op path)
        if (dt is _F32 or dt is _F64) and type(d) is np.ndarray and n and d.flags.c_contiguous:
            if n < cpu.FLAT_PARALLEL_MIN_ELEMENTS:
                out = _new(Tensor)  # _wrap, inlined
                out._data, out.dtype, out._vc = _small_total(d, dt), dt, [0]
            elif n % cpu.TOTAL_CHUNKS == 0:
                out = _wrap(np.asarray(cpu.threaded_total(d.reshape(-1)), dtype=dt.np), dt)
            else:
                return _sum_dims(input, None, False, None)
            if input._requires_grad and _GRAD[0]:
                node = SumBackward0()
                node.shape = d.shape
                record_one(node, input, out)
            return out
    return _sum_dims(input, dim, keepdim, dtype)


def _sum_dims(input, dim, keepdim: bool, dtype) -> Tensor:
    """``sum`` in general: any dims, dtype, layout and device."""
    x = as_tensor_arg(input, "sum")
    dims = wrap_dims(dim, x.ndim, "sum")
    out_dt = _sum_dtype(x, dtype)
    res = _fold(x, dims, "sum", out_dt, _fold_dtype(out_dt))
    if keepdim:
        res = res.reshape(_keep_shape(x.shape, dims))
    out = _wrap(res, out_dt)
    if x._requires_grad and grad_mode.GRAD_ENABLED[0] and out_dt.category >= 2:  # float, complex
        node = SumBackward0()
        node.shape, node.dims, node.keepdim = tuple(x.shape), dims, keepdim
        record(node, (x,), (out,))
    return out


def mean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Arithmetic mean over ``dim``; the input (or ``dtype``) must be floating point."""
    if dim is None and not keepdim and dtype is None and type(input) in TENSOR_TYPES:
        d = input._data
        dt = input.dtype
        n = d.size
        res = _contiguous_total(d, dt)
        if res is not None:
            res /= n  # in the array's dtype, as the general path divides
            out = _wrap(res, dt)
            if input._requires_grad and _GRAD[0]:
                node = MeanBackward0()
                node.shape, node.dims, node.keepdim = d.shape, _all_dims(d.ndim), False
                node.count = n
                record_one(node, input, out)
            return out
    x = as_tensor_arg(input, "mean")
    out_dt = dtype or x.dtype
    if not (out_dt.is_floating_point or out_dt.is_complex):
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {x.dtype.name}")
    if x.dtype is not out_dt:
        x = x.to(out_dt)
    dims = wrap_dims(dim, x.ndim, "mean")
    count = math.prod(x.shape[d] for d in dims) if x.ndim else 1
    res = _fold(x, dims, "sum", out_dt, out_dt.compute)
    if not is_host(res):  # on a GPU: the division is one more kernel
        res = _divide(res, count, out_dt)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            res = np.asarray((res / count).astype(out_dt.np) if count else
                             np.full(res.shape, np.nan, out_dt.np))
    if keepdim:
        res = res.reshape(_keep_shape(x.shape, dims))
    out = _wrap(res, out_dt)
    if x._requires_grad and grad_mode.GRAD_ENABLED[0]:
        node = MeanBackward0()
        node.shape, node.dims, node.keepdim, node.count = tuple(x.shape), dims, keepdim, count
        record(node, (x,), (out,))
    return out


class ProdBackward0(Node):
    def backward(self, g):
        x, out = self.saved_tensors
        if g.dtype.is_complex:  # holomorphic: conj of the formula at conj(g) (see complex_grads)
            from .complex import conj
            return (conj(self._real_formula(conj(g), x, out)),)
        return (self._real_formula(g, x, out),)

    def _real_formula(self, g, x, out):
        dims, keepdim = self.dims, self.keepdim
        if not bool((x == 0).any()):
            return (_expand_back(g, x.shape, dims, True if keepdim else False) *
                    _expand_back(out, x.shape, dims, keepdim) / x)
        return _prod_grad_with_zeros(x, g, dims, keepdim)


def _prod_grad_with_zeros(x: Tensor, g: Tensor, dims: tuple, keepdim: bool) -> Tensor:
    """prod_{j != i} x_j through exclusive products from both sides (exact with zeros)."""
    nd = x.ndim
    keep_axes = [i for i in range(nd) if i not in dims]
    perm = keep_axes + list(dims)
    xp = x.permute(perm) if nd else x.reshape(1)
    kept = tuple(xp.shape[:len(keep_axes)])
    flat = xp.reshape(kept + (-1,))
    ones = flat.new_ones(kept + (1,))
    left = flat.narrow(-1, 0, flat.shape[-1] - 1)
    right = flat.narrow(-1, 1, flat.shape[-1] - 1)
    from .movement import cat
    lp = cat([ones, left], -1).cumprod(-1)
    rp = cat([right, ones], -1).flip(-1).cumprod(-1).flip(-1)
    gk = g.reshape(kept + (1,))
    res = (gk * lp * rp).reshape(xp.shape)
    if not nd:
        return res.reshape(())
    inv = [0] * nd
    for i, p in enumerate(perm):
        inv[p] = i
    return res.permute(inv)


def prod(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product over ``dim`` (an int) or over all elements."""
    x = as_tensor_arg(input, "prod")
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(f"prod: dim must be an int, got {dim!r}")
    dims = wrap_dims(dim, x.ndim, "prod")
    out_dt = _sum_dtype(x, dtype)
    res = _fold(x, dims, "prod", out_dt, _fold_dtype(out_dt))
    if keepdim:
        res = res.reshape(_keep_shape(x.shape, dims))
    out = _wrap(res, out_dt)
    if x._requires_grad and grad_mode.GRAD_ENABLED[0] and out_dt.category >= 2:  # float, complex
        node = ProdBackward0()
        node.dims, node.keepdim = dims, keepdim
        node.save(x, out)
        record(node, (x,), (out,))
    return out


# --- max / min / amax / amin / argmax / argmin ---------------------------------------------

class AmaxBackward0(Node):
    """Gradient shared equally among the elements that attain the extreme value."""

    def backward(self, g):
        x, out = self.saved_tensors
        shape, dims, keepdim = tuple(x.shape), self.dims, self.keepdim
        o = _expand_back(out, shape, dims, keepdim)
        mask = (x == o).to(g.dtype)
        count = mask.sum(dims, keepdim=True)
        return (_expand_back(g, shape, dims, keepdim) * mask / count,)


class MaxBackward0(Node):
    """max/min along one dim: the gradient goes to the returned index."""

    def backward(self, g, _g_indices=None):
        (x,) = self.saved_tensors
        idx = self.indices
        d = self.dim
        if not self.keepdim:
            g = g.unsqueeze(d)
            idx = idx.unsqueeze(d)
        from .indexing import scatter
        return (scatter(x.new_zeros(x.shape), d, idx, g),)


def _check_nonempty(op: str, x: Tensor, dims: tuple) -> None:
    if x.numel() == 0 and (not dims or _builtins.any(x.shape[d] == 0 for d in dims)):
        raise IndexError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0, "
                         f"or the reduced dims to be non-empty (got {describe(x)})")


def _extreme(op: str, x: Tensor, dims: tuple, keepdim: bool) -> Tensor:
    kind = "max" if op in ("max", "amax") else "min"
    _check_nonempty(op, x, dims)
    if x.dtype is bool_:
        res = _fold(x, dims, "any" if kind == "max" else "all", bool_, bool_)
    else:
        res = _fold(x, dims, kind, x.dtype, x.dtype.compute)
    if keepdim:
        res = res.reshape(_keep_shape(x.shape, dims))
    out = _wrap(res, x.dtype)
    if x._requires_grad and grad_mode.GRAD_ENABLED[0]:
        node = AmaxBackward0() if kind == "max" else _AminBackward0()
        node.dims, node.keepdim = dims, keepdim
        node.save(x, out)
        record(node, (x,), (out,))
    return out


class _AminBackward0(AmaxBackward0):
    pass


_AminBackward0.__name__ = "AminBackward0"


def amax(input, dim=(), keepdim: bool = False) -> Tensor:
    """Maximum over ``dim`` (all dims when empty); ties share the gradient."""
    x = as_tensor_arg(input, "amax")
    return _extreme("amax", x, wrap_dims(dim if dim != () else None, x.ndim, "amax"), keepdim)


def amin(input, dim=(), keepdim: bool = False) -> Tensor:
    """Minimum over ``dim`` (all dims when empty); ties share the gradient."""
    x = as_tensor_arg(input, "amin")
    return _extreme("amin", x, wrap_dims(dim if dim != () else None, x.ndim, "amin"), keepdim)


def _arg(op: str, x: Tensor, dim, keepdim: bool) -> Tensor:
    kind = "max" if op.endswith("max") else "min"
    if dim is None:
        _check_nonempty(op, x, ())
        flat = x.reshape(-1)
        res = _arg(op, flat, 0, False)
        return res.reshape((1,) * x.ndim) if keepdim else res
    d = wrap_dim(dim, x.ndim, op)
    _check_nonempty(op, x, (d,))
    arr = x._data
    cd = x.dtype.compute if x.dtype is not bool_ else int64
    if x.dtype is not cd:
        arr = arr.astype(cd.np)
    cat = "f" if cd.is_floating_point else "i"
    x3, kept = _as3(arr, (d,) if x.ndim else ())
    res = backend(x3).arg_reduce_axis(x3, 1, _ARG_BETTER[cat][kind]).reshape(kept)
    if keepdim and x.ndim:
        res = res.reshape(_keep_shape(x.shape, (d,)))
    return _wrap(res, int64)


def argmax(input, dim=None, keepdim: bool = False) -> Tensor:
    """Index of the first maximum (NaN counts as the maximum), over ``dim`` or all elements."""
    return _arg("argmax", as_tensor_arg(input, "argmax"), dim, keepdim)


def argmin(input, dim=None, keepdim: bool = False) -> Tensor:
    """Index of the first minimum, over ``dim`` or all elements."""
    return _arg("argmin", as_tensor_arg(input, "argmin"), dim, keepdim)


def _max_min(op: str, input, dim=None, keepdim: bool = False, other=None):
    x = as_tensor_arg(input, op)
    if isinstance(dim, Tensor):  # max(a, b) is maximum(a, b)
        other, dim = dim, None
    if other is not None:
        from .elementwise import maximum, minimum
        return (maximum if op == "max" else minimum)(x, other)
    if dim is None:
        return _extreme(op, x, tuple(range(x.ndim)), False)
    d = wrap_dim(dim, x.ndim, op)
    idx = _arg("arg" + op, x, d, keepdim)
    from .indexing import gather
    with grad_mode.no_grad():
        vals = gather(x, d, idx if keepdim else idx.unsqueeze(d)) if x.ndim else x.clone()
        if not keepdim and x.ndim:
            vals = vals.squeeze(d)
    if x._requires_grad and grad_mode.GRAD_ENABLED[0]:
        node = MaxBackward0() if op == "max" else _MinBackward1()
        node.dim, node.keepdim, node.indices = d, keepdim, idx
        node.save(x)
        record(node, (x,), (vals,))
    return values_indices[op](vals, idx)


class _MinBackward1(MaxBackward0):
    pass


_MinBackward1.__name__ = "MinBackward0"


def max(input, dim=None, keepdim: bool = False, *, other=None):
    """``max(x)`` -> value; ``max(x, dim)`` -> (values, indices); ``max(x, y)`` -> maximum."""
    return _max_min("max", input, dim, keepdim, other)


def min(input, dim=None, keepdim: bool = False, *, other=None):
    """``min(x)`` -> value; ``min(x, dim)`` -> (values, indices); ``min(x, y)`` -> minimum."""
    return _max_min("min", input, dim, keepdim, other)


# --- all / any ----------------------------------------------------------------------------

def all(input, dim=None, keepdim: bool = False) -> Tensor:
    """True where every element over ``dim`` is nonzero."""
    x = as_tensor_arg(input, "all")
    dims = wrap_dims(dim, x.ndim, "all")
    res = _fold(x, dims, "all", bool_, bool_)
    return _wrap(res.reshape(_keep_shape(x.shape, dims)) if keepdim else res, bool_)


def any(input, dim=None, keepdim: bool = False) -> Tensor:
    """True where some element over ``dim`` is nonzero."""
    x = as_tensor_arg(input, "any")
    dims = wrap_dims(dim, x.ndim, "any")
    res = _fold(x, dims, "any", bool_, bool_)
    return _wrap(res.reshape(_keep_shape(x.shape, dims)) if keepdim else res, bool_)


# --- statistics built from the folds ------------------------------------------------------

def var(input, dim=None, *, correction=1, keepdim: bool = False, unbiased=None) -> Tensor:
    """Variance over ``dim`` with Bessel's ``correction`` (1 = unbiased, as PyTorch)."""
    x = as_tensor_arg(input, "var")
    if x.dtype.is_complex:  # of |z - mean|^2: the real part's variance plus the imaginary's
        kw = {"correction": correction, "keepdim": keepdim, "unbiased": unbiased}
        return var(x.real, dim, **kw) + var(x.imag, dim, **kw)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"var: input dtype must be floating point, got {x.dtype.name}")
    if isinstance(dim, bool):  # var(x, unbiased) positional form
        unbiased, dim = dim, None
    if unbiased is not None:
        correction = 1 if unbiased else 0
    dims = wrap_dims(dim, x.ndim, "var")
    n = math.prod(x.shape[d] for d in dims) if x.ndim else 1
    centered = x - x.mean(dims, keepdim=True)
    return (centered * centered).sum(dims, keepdim=keepdim) / _builtins.max(n - correction, 0)


def std(input, dim=None, *, correction=1, keepdim: bool = False, unbiased=None) -> Tensor:
    """Standard deviation: ``sqrt(var(...))``."""
    return var(input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased).sqrt()


def logsumexp(input, dim, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``dim``, computed without overflow."""
    x = as_tensor_arg(input, "logsumexp")
    if not x.dtype.is_floating_point:
        x = x.to(dtypes.get_default_dtype())
    dims = wrap_dims(dim, x.ndim, "logsumexp")
    with grad_mode.no_grad():
        m = amax(x, dims, keepdim=True)
        m = m.masked_fill(m.isinf(), 0.0)
    s = (x - m).exp().sum(dims, keepdim=True).log() + m
    return s if keepdim else s.reshape(tuple(d for i, d in enumerate(x.shape) if i not in dims))


class NormBackward0(Node):
    """2-norm: gradient ``x / norm``, taken as 0 where the norm is 0 (as PyTorch)."""

    def backward(self, g):
        x, out = self.saved_tensors
        o = _expand_back(out, tuple(x.shape), self.dims, self.keepdim)
        ge = _expand_back(g, tuple(x.shape), self.dims, self.keepdim)
        from .elementwise import where
        return (where(o == 0, 0.0, ge * x / o),)


class NormBackward1(Node):
    """0-"norm" (the count of nonzeros) is piecewise constant: its gradient is zero (as PyTorch)."""

    def backward(self, g):
        return (g.new_zeros(self.shape),)


class LinalgVectorNormBackward0(Node):
    """p-norm for p not in {0, 1, 2, inf}: ``sign(x) |x|^(p-1) g / norm^(p-1)``, taken as 0 on a
    slice whose norm is 0 (the formula is 0/0 there; PyTorch gives 0). For p < 1 it is written
    ``sign(x) |x|^(p-1) g norm^(1-p)`` with 0 where x is 0, as PyTorch does (|x|^(p-1) is
    infinite there)."""

    def backward(self, g):
        from .elementwise import where
        x, out = self.saved_tensors
        p = self.p
        o = _expand_back(out, tuple(x.shape), self.dims, self.keepdim)
        ge = _expand_back(g, tuple(x.shape), self.dims, self.keepdim)
        if p < 1:
            scaled = where(x == 0, 0.0, x.sign() * x.abs() ** (p - 1))
            return (scaled * ge * o ** (1 - p),)
        scaled = x.sign() * x.abs() ** (p - 1) if p < 2 else x * x.abs() ** (p - 2)
        return (scaled * where(o == 0, 0.0, ge / o ** (p - 1)),)


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """Vector p-norm over ``dim`` (``'fro'``/2, 1, inf, -inf, 0 or any real p)."""
    x = as_tensor_arg(input, "norm")
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype.is_complex:  # a norm of the magnitudes
        x = x.abs()
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"norm: input dtype should be floating point, got {x.dtype.name}")
    dims = wrap_dims(dim, x.ndim, "norm")
    if p in ("fro", 2, 2.0):
        with grad_mode.no_grad():
            if is_host(x._data):  # one fold of the squares, with no squared copy
                res = _fold(x, dims, "sumsq", x.dtype, x.dtype.compute)
                out = _wrap(res.reshape(_keep_shape(x.shape, dims)) if keepdim else res,
                            x.dtype).sqrt()
            else:
                out = (x * x).sum(dims, keepdim=keepdim).sqrt()
        if x._requires_grad and grad_mode.GRAD_ENABLED[0]:
            node = NormBackward0()
            node.dims, node.keepdim = dims, keepdim
            node.save(x, out)
            record(node, (x,), (out,))
        return out
    a = x.abs()
    if p == math.inf:
        return amax(a, dims, keepdim)
    if p == -math.inf:
        return amin(a, dims, keepdim)
    if p == 0:
        out = (a != 0).to(x.dtype).sum(dims, keepdim=keepdim)
        if x._requires_grad and grad_mode.GRAD_ENABLED[0]:
            node = NormBackward1()
            node.shape = tuple(x.shape)
            record(node, (x,), (out,))
        return out
    if p == 1:
        return a.sum(dims, keepdim=keepdim)
    with grad_mode.no_grad():
        out = (a ** p).sum(dims, keepdim=keepdim) ** (1.0 / p)
    if x._requires_grad and grad_mode.GRAD_ENABLED[0]:
        node = LinalgVectorNormBackward0()
        node.dims, node.keepdim, node.p = dims, keepdim, p
        node.save(x, out)
        record(node, (x,), (out,))
    return out


# --- scans --------------------------------------------------------------------------------

class CumsumBackward0(Node):
    def backward(self, g):
        d = self.dim
        return (g.flip(d).cumsum(d).flip(d),)


class CumprodBackward0(Node):
    def backward(self, g):
        x, out = self.saved_tensors
        if g.dtype.is_complex:  # holomorphic: conj of the formula at conj(g) (see complex_grads)
            from .complex import conj
            return (conj(self._real_formula(conj(g), x, out)[0]),)
        return self._real_formula(g, x, out)

    def _real_formula(self, g, x, out):
        d = self.dim
        if x.ndim == 0:  # the scan of one element is the identity
            return (g,)
        if not bool((x == 0).any()):
            return ((g * out).flip(d).cumsum(d).flip(d) / x,)
        # exact with zeros: d out_j / d x_i = prod_{k<=j, k!=i} x_k for j >= i
        from .movement import stack
        n = x.shape[d]
        cols = []
        for i in range(n):
            xi = x.narrow(d, i, 1)
            others = x - (x - 1) * _onehot_along(x, d, i)  # x with x_i replaced by 1
            prods = others.cumprod(d)
            contrib = (g * prods).narrow(d, i, n - i).sum(d, keepdim=True)
            cols.append(contrib.squeeze(d) + xi.squeeze(d) * 0)
        return (stack(cols, d),)


def _onehot_along(x: Tensor, d: int, i: int) -> Tensor:
    shape = [1] * x.ndim
    shape[d] = x.shape[d]
    hot = np.zeros(shape, x.dtype.np)
    hot.reshape(-1)[i] = 1
    return _wrap(move_array(hot, device_index(x._data)), x.dtype)


def _scan(op: str, x: Tensor, dim: int, dtype, combine: str) -> Tensor:
    d = wrap_dim(dim, x.ndim, op)
    out_dt = dtype or _sum_dtype(x, None)
    if out_dt.is_complex:  # NumPy's scan on the host buffer (see _complex_fold)
        fn = np.cumsum if combine == "acc + v" else np.cumprod
        res = np.asarray(fn(host(x._data).astype(out_dt.np), axis=d if x.ndim else None),
                         order="C").reshape(x.shape)
        return _wrap(move_array(res, device_index(x._data)), out_dt)
    arr = x._data.astype(out_dt.compute.np) if x.dtype.compute is not out_dt.compute or \
        x.dtype is not x.dtype.compute else x._data
    if x.ndim == 0:
        return _wrap(arr.astype(out_dt.np, copy=True), out_dt)
    arr = contiguous(arr)
    res = backend(arr).scan_axis(arr, d, combine) if arr.size else arr.copy()
    return _wrap(res if res.dtype == out_dt.np else res.astype(out_dt.np), out_dt)


def cumsum(input, dim: int, *, dtype=None) -> Tensor:
    """Inclusive running sum along ``dim``."""
    x = as_tensor_arg(input, "cumsum")
    out = _scan("cumsum", x, dim, dtype, "acc + v")
    if x._requires_grad and grad_mode.GRAD_ENABLED[0] and out.dtype.category >= 2:
        node = CumsumBackward0()
        node.dim = wrap_dim(dim, x.ndim, "cumsum")
        record(node, (x,), (out,))
    return out


def cumprod(input, dim: int, *, dtype=None) -> Tensor:
    """Inclusive running product along ``dim``."""
    x = as_tensor_arg(input, "cumprod")
    out = _scan("cumprod", x, dim, dtype, "acc * v")
    if x._requires_grad and grad_mode.GRAD_ENABLED[0] and out.dtype.category >= 2:
        node = CumprodBackward0()
        node.dim = wrap_dim(dim, x.ndim, "cumprod")
        node.save(x, out)
        record(node, (x,), (out,))
    return out


def _inplace_scan(fn):
    """``cumsum_``/``cumprod_``: the scan written back into ``self`` (the indexing family's
    in-place rule, imported on use: ``ops.indexing`` imports this module)."""
    def method_(self, *args, **kwargs):
        from .indexing import _inplace_variant
        return _inplace_variant(fn)(self, *args, **kwargs)
    method_.__name__ = fn.__name__ + "_"
    return method_


for _name, _fn in (("sum", sum), ("mean", mean), ("prod", prod), ("amax", amax), ("amin", amin),
                   ("argmax", argmax), ("argmin", argmin), ("max", max), ("min", min),
                   ("all", all), ("any", any), ("var", var), ("std", std),
                   ("logsumexp", logsumexp), ("norm", norm), ("cumsum", cumsum),
                   ("cumprod", cumprod)):
    register(_name, _fn, "reduce", inplace=_inplace_scan(_fn) if _name.startswith("cum") else None)
