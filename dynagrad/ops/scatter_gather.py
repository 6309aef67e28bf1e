"""Reads and writes by index composed of the indexing primitives: take, take_along_dim, put,
index_copy, index_fill, masked_scatter, scatter_reduce, index_reduce, unravel_index.

Each checks its arguments as PyTorch does (dtypes, shapes, index bounds) before anything runs,
then composes ``gather`` / ``scatter`` / ``scatter_add`` / ``index_select`` / ``index_put``, so
gradients and the CUDA target come from those ops. Two exceptions: the ``prod``, ``amax`` and
``amin`` reductions of ``scatter_reduce`` (and so of ``index_reduce``) run NumPy's
``ufunc.at`` on the host (a host round trip on CUDA) and carry their own gradient node, whose
formulas are ops again (ties share the gradient of an extremum equally, as PyTorch; ``prod``'s
gradient is exact at zero factors too).

Example:
    >>> import dynagrad as dg
    >>> x = dg.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.take(dg.tensor([3, 0])).tolist(), x.put(dg.tensor([0]), dg.tensor([9.0])).tolist()
    ([4.0, 1.0], [[9.0, 2.0], [3.0, 4.0]])
"""
from __future__ import annotations

import numpy as np

from ..autograd import grad_mode
from ..autograd.function import node_class, record
from ..dtypes import bool_, int64
from ..errors import describe
from ..kernels.buffers import device_index, host, move_array
from ..shapes import broadcast_shapes, wrap_dim
from ..tensor import Tensor, _wrap
from ._util import as_tensor_arg
from .elementwise import where
from .indexing import (
    _check_index,
    _index_range,
    _inplace_variant,
    _normalize_key,
    gather,
    index_put,
    index_select,
    scatter,
    scatter_add,
)
from .movement import expand, narrow, pad, reshape
from .registry import FUNCTIONS, register


def _check_long(op: str, index, what: str = "index") -> Tensor:
    if not isinstance(index, Tensor) or index.dtype is not int64:
        got = index.dtype if isinstance(index, Tensor) else describe(index)
        raise RuntimeError(f"{op}(): Expected a long tensor for {what}, but got {got}")
    return index


def _flat_positions(op: str, index: Tensor, n: int) -> Tensor:
    """``index`` (any shape) as 1-D positions into ``n`` elements, negatives counted from the
    end; out-of-range positions raise PyTorch's IndexError first."""
    flat = reshape(index, (-1,))
    if flat.numel():
        lo, hi = _index_range(flat)
        if lo < -n or hi >= n:
            raise IndexError(f"out of range: tried to access index {lo if lo < -n else hi} on a "
                             f"tensor of {n} elements.")
        if lo < 0:
            flat = flat.remainder(n)
    return flat


# --- reads --------------------------------------------------------------------------------

def take(input: Tensor, index: Tensor) -> Tensor:
    """The elements of the flattened ``input`` at ``index`` (negatives count from the end), in
    ``index``'s shape."""
    x = as_tensor_arg(input, "take")
    _check_long("take", index)
    flat = _flat_positions("take", index, x.numel())
    return reshape(index_select(reshape(x, (-1,)), 0, flat), tuple(index.shape))


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``gather`` with ``input`` and ``indices`` broadcast against each other outside ``dim``;
    with no ``dim``, positions into the flattened input.

    Example: ``x.take_along_dim(x.argmax(1, keepdim=True), 1)`` picks each row's maximum.
    """
    x = as_tensor_arg(input, "take_along_dim")
    if not isinstance(indices, Tensor) or indices.dtype is not int64:
        got = indices.dtype if isinstance(indices, Tensor) else describe(indices)
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{got}")
    if dim is None:
        return gather(reshape(x, (-1,)), 0, reshape(indices, (-1,)))
    if x.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {x.ndim} dimensions for input, and "
                           f"{indices.ndim} dimensions for indices")
    d = wrap_dim(dim, x.ndim, "take_along_dim")
    in_shape, idx_shape = list(x.shape), list(indices.shape)
    in_shape[d] = indices.shape[d]
    idx_target = broadcast_shapes("take_along_dim", tuple(in_shape), tuple(indices.shape))
    idx_shape[d] = x.shape[d]
    x_target = broadcast_shapes("take_along_dim", tuple(idx_shape), tuple(x.shape))
    return gather(expand(x, x_target), d, expand(indices, idx_target))


def unravel_index(indices: Tensor, shape) -> tuple:
    """The coordinates in a tensor of ``shape`` of the flat positions ``indices`` (negatives
    count from the end): one int64 tensor per dim, each of ``indices``' shape."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a Tensor, got {describe(indices)}")
    if indices.dtype.is_floating_point or indices.dtype is bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    n = int(np.prod(shape, dtype=np.int64))
    flat = indices.long()
    if flat.numel():
        lo, hi = _index_range(flat)
        if lo < -n or hi >= n:
            raise RuntimeError(f"'indices' must be in range [{-n}, {n - 1}], got "
                               f"{lo if lo < -n else hi}")
        flat = flat.remainder(n) if lo < 0 else flat
    coords = []
    for size in reversed(shape):
        coords.append(flat.remainder(size))
        flat = flat // size
    return tuple(reversed(coords))


# --- writes -------------------------------------------------------------------------------

def _dim_key(d: int, index: Tensor) -> tuple:
    return (slice(None),) * d + (reshape(index, (-1,)),)


def _check_index_vector(op: str, x: Tensor, d: int, index) -> None:
    if not isinstance(index, Tensor) or index.dtype is not int64:
        raise IndexError(f"{op}(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise IndexError(f"{op}(): Index should have dimension 1 or 0 (got {index.ndim})")
    size = x.shape[d] if x.ndim else 1
    if index.numel():
        lo, hi = _index_range(index)
        if lo < -size or hi >= size:
            raise IndexError(f"{op}(): index {lo if lo < -size else hi} is out of bounds for "
                             f"dimension {d} with size {size}")


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """Out-of-place ``input.flatten()[index] = source.flatten()`` (``+=`` with ``accumulate``,
    repeats adding up); negatives count from the end."""
    x = as_tensor_arg(input, "put")
    _check_long("put_", index)
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() = "
                         f"{index.numel()}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {x.dtype} and source.dtype = {source.dtype}")
    flat = _flat_positions("put_", index, x.numel())
    out = index_put(reshape(x, (-1,)), (flat,), reshape(source, (-1,)), accumulate)
    return reshape(out, tuple(x.shape))


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """Out-of-place: the slices of ``source`` along ``dim`` written at positions ``index``."""
    x = as_tensor_arg(input, "index_copy")
    d = wrap_dim(dim, x.ndim, "index_copy")
    if not isinstance(index, Tensor) or index.dtype is not int64:
        got = index.dtype if isinstance(index, Tensor) else describe(index)
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {got}")
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {x.dtype} and (source) {source.dtype}")
    sd = min(d, max(source.ndim - 1, 0))
    for k in range(max(x.ndim, source.ndim)):
        if k != d and (x.shape[k] if k < x.ndim else 1) != (
                source.shape[k] if k < source.ndim else 1):
            raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                               f"shapes. Destination slice shape: "
                               f"{' '.join(str(s) for i, s in enumerate(x.shape) if i != d)} at "
                               f"dimension {d} and source slice shape: "
                               f"{' '.join(str(s) for i, s in enumerate(source.shape) if i != d)}"
                               f" at dimension 0.")
    n_src = source.shape[sd] if source.ndim else 1
    if index.numel() != n_src:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to "
                         f"source.size(dim) ({n_src})")
    _check_index_vector("index_copy_", x, d, index)
    if x.ndim == 0:
        return index_put(x, (), reshape(source, ()))
    return index_put(x, _dim_key(d, index), reshape(source, tuple(
        index.numel() if k == d else s for k, s in enumerate(x.shape))))


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """Out-of-place: ``value`` (a number or a 0-d tensor) written on the slices ``index`` along
    ``dim``."""
    x = as_tensor_arg(input, "index_fill")
    d = wrap_dim(dim, x.ndim, "index_fill")
    _check_index_vector("index_fill_", x, d, index)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        value = value.to(x.dtype)
    else:
        value = _wrap(move_array(np.asarray(value, dtype=x.dtype.np), device_index(x._data)),
                      x.dtype)
    if x.ndim == 0:
        return index_put(x, (), value)
    return index_put(x, _dim_key(d, index), value)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """Out-of-place: the positions where ``mask`` (broadcast to ``input``) is True take
    consecutive elements of ``source`` in C order."""
    x = as_tensor_arg(input, "masked_scatter")
    if not isinstance(mask, Tensor) or mask.dtype is not bool_:
        got = mask.dtype if isinstance(mask, Tensor) else describe(mask)
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {got}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{x.dtype} and {source.dtype}")
    shape = broadcast_shapes("masked_scatter", tuple(x.shape), tuple(mask.shape))
    m = expand(mask, shape)
    count = int(m.sum().item())
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return index_put(expand(x, shape), (m,), narrow(reshape(source, (-1,)), 0, 0, count))


def index_put_method(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """Out-of-place ``input[indices] = values`` (``+=`` with ``accumulate``, repeats adding
    up), ``indices`` a tuple or list of index tensors as PyTorch's ``index_put``."""
    x = as_tensor_arg(input, "index_put")
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    indices = tuple(indices)
    _normalize_key(x, indices)  # (out-of-range positions are reported first)
    if values.dtype is not x.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{x.dtype} for the destination and {values.dtype} for the source.")
    return index_put(x, indices, values, accumulate)


# --- reductions by index ------------------------------------------------------------------

_REDUCES = ("sum", "prod", "mean", "amax", "amin")
_UFUNCS = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce: str, dtype: np.dtype):
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    return (info.min if reduce == "amax" else info.max) if info else reduce == "amin"


def _full_index(index: np.ndarray, d: int) -> tuple:
    grid = list(np.indices(index.shape, sparse=True))
    grid[d] = index
    return tuple(grid)


def _restrict(t: Tensor, shape: tuple) -> Tensor:
    """``t``'s leading corner of ``shape`` (the part of ``src`` an index of ``shape`` reads)."""
    if tuple(t.shape) == shape:
        return t
    return t[tuple(slice(0, n) for n in shape)]


def _pad_to(t: Tensor, shape: tuple) -> Tensor:
    widths = []
    for have, want in zip(reversed(t.shape), reversed(shape)):
        widths.extend((0, want - have))
    return t if tuple(t.shape) == shape else pad(t, widths)


def _extremum_back(node, g):
    """PyTorch's rule: the gradient of each output is shared equally among the inputs (self
    and the scattered sources) equal to it."""
    x, src, index, out = node.saved
    d = node.dim
    src_r = _restrict(src, tuple(index.shape))
    value = out.gather(d, index)
    self_hit = (x == out).to(g.dtype)
    src_hit = (src_r == value).to(g.dtype)
    share = g / self_hit.scatter_add(d, index, src_hit)
    g_self = self_hit * share
    if not node.include_self:
        g_self = g_self.scatter(d, index, 0.0)
    g_src = _pad_to(src_hit * share.gather(d, index), tuple(src.shape))
    return g_self, None, g_src


def _prod_back(node, g):
    """The gradient of a product is the product of the other factors. Where no factor is zero
    that is ``out / factor``; a lone zero factor gets the product of the others, recomputed
    with it replaced by one; a target with two zeros or more passes no gradient."""
    x, src, index, out = node.saved
    d, inc = node.dim, node.include_self
    src_r = _restrict(src, tuple(index.shape))
    # self: with its zeros replaced by one, the product is that of the other factors
    x_zero = x == 0
    x_ones = where(x_zero, x.new_ones(()), x)
    g_self = g * scatter_reduce(x_ones, d, index, src_r, "prod", include_self=inc) / x_ones
    if not inc:
        g_self = g_self.scatter(d, index, 0.0)
    # src: a zero alone among the sources of its target (self's zeros count through ``out``)
    src_zero = src_r == 0
    zeros_there = x.new_zeros(tuple(x.shape)).scatter_add(d, index, src_zero.to(x.dtype))
    lone = src_zero & (zeros_there.gather(d, index) == 1)
    without = scatter_reduce(x, d, index, where(lone, src_r.new_ones(()), src_r), "prod",
                             include_self=inc)
    g_src = where(lone, (g * without).gather(d, index),
                  (g * out).gather(d, index) / where(src_zero, src_r.new_ones(()), src_r))
    return g_self, None, _pad_to(g_src, tuple(src.shape))


_NODES = {"prod": node_class("ScatterReduceBackward0", _prod_back),
          "amax": node_class("ScatterReduceBackward0", _extremum_back),
          "amin": node_class("ScatterReduceBackward0", _extremum_back)}


def _host_reduce(x: Tensor, d: int, index: Tensor, src: Tensor, reduce: str,
                 include_self: bool) -> Tensor:
    """``prod`` / ``amax`` / ``amin`` by NumPy's ``ufunc.at`` on host copies."""
    out = np.array(host(x._data), order="C")
    idx = host(index._data)
    where_ = _full_index(idx, d)
    if not include_self:
        out[where_] = _identity(reduce, out.dtype)
    s = host(src._data)[tuple(slice(0, n) for n in idx.shape)]
    _UFUNCS[reduce].at(out, where_, s)
    return _wrap(move_array(out, device_index(x._data)), x.dtype)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """Out-of-place: each ``src[i][j]`` combined into ``self[index[i][j]][j]`` (for dim 0) by
    ``reduce`` - ``sum``, ``prod``, ``mean``, ``amax`` or ``amin`` - together with the value
    already there unless ``include_self=False``. Integer ``mean`` rounds down, as PyTorch.

    Example: ``dg.zeros(3).scatter_reduce(0, dg.tensor([0, 0, 2]), dg.tensor([1., 5, 2]),
    "amax")`` is ``[5, 0, 2]``.
    """
    x = as_tensor_arg(input, "scatter_reduce")
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if not isinstance(src, Tensor) or src.dtype is not x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = _check_index("scatter_reduce", x, dim, index)
    for k in range(index.ndim):
        if index.shape[k] > (src.shape[k] if src.ndim else 1):
            raise RuntimeError(f"scatter_reduce(): Expected index {tuple(index.shape)} to be "
                               f"smaller than src {tuple(src.shape)} in every dimension")
    if reduce in ("sum", "mean"):
        base = x if include_self else scatter(x, d, index, 0)
        total = scatter_add(base, d, index, src)
        if reduce == "sum":
            return total
        with grad_mode.no_grad():
            ones = x.new_ones(tuple(index.shape))
            count = (x.new_ones(tuple(x.shape)) if include_self else
                     x.new_zeros(tuple(x.shape))).scatter_add(d, index, ones)
            count = where(count == 0, x.new_ones(()), count)
        if x.dtype.is_floating_point:
            return total / count
        return total.floor_divide(count)
    res = _host_reduce(x, d, index, src, reduce, include_self)
    if grad_mode.GRAD_ENABLED[0] and (x._requires_grad or src._requires_grad):
        node = _NODES[reduce]()
        node.dim, node.include_self = d, include_self
        node.saved = (x.detach(), src.detach(), index, res.detach())
        record(node, (x, None, src), (res,))
    return res


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """Out-of-place: each slice ``source`` along ``dim`` combined into the slice ``index[k]`` of
    ``input`` by ``reduce`` (``prod``, ``mean``, ``amax``, ``amin``), as ``scatter_reduce``."""
    x = as_tensor_arg(input, "index_reduce")
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = wrap_dim(dim, x.ndim, "index_reduce")
    _check_index_vector("index_reduce_", x, d, index)
    n_src = source.shape[d] if source.ndim else 1
    if index.numel() != n_src:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be "
                           f"equal to source.size(dim): ({n_src}), for dim: {d}")
    idx = reshape(index, (1,) * d + (-1,) + (1,) * (source.ndim - d - 1))
    return scatter_reduce(x, d, expand(idx, tuple(source.shape)), source, reduce,
                          include_self=include_self)


for _name, _fn in (("take", take), ("take_along_dim", take_along_dim),
                   ("unravel_index", unravel_index)):
    register(_name, _fn, "indexing", method=_name != "unravel_index")


def _masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """In-place ``masked_scatter``: the mask must broadcast to this tensor's own shape."""
    if isinstance(mask, Tensor) and broadcast_shapes(
            "masked_scatter_", tuple(self.shape), tuple(mask.shape)) != tuple(self.shape):
        raise RuntimeError(f"masked_scatter_: mask {tuple(mask.shape)} cannot be broadcast to "
                           f"the tensor's shape {tuple(self.shape)}")
    return _inplace_variant(masked_scatter)(self, mask, source)


for _name, _fn in (("put", put), ("index_copy", index_copy), ("index_fill", index_fill),
                   ("masked_scatter", masked_scatter), ("scatter_reduce", scatter_reduce),
                   ("index_reduce", index_reduce)):
    register(_name, _fn, "indexing", inplace=_masked_scatter_ if _name == "masked_scatter"
             else _inplace_variant(_fn))
index_put_method.__name__ = "index_put"
register("index_put", index_put_method, "indexing", inplace=_inplace_variant(index_put_method))
FUNCTIONS["index_put_"] = Tensor.index_put_  # PyTorch has this in-place form as a function too
