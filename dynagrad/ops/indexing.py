"""Indexing: ``x[key]`` / ``x[key] = v``, gather/scatter, index_select/index_add, masks, sort.

Every index is checked before a kernel runs (a Numba kernel does not bounds-check), and out-of-range
indices raise IndexError naming the dimension and its size.

Gather, scatter, index_select, index_add and sort go through ``backend(buf)``. Advanced keys
(``x[idx]``, ``x[mask]``, ``x[idx] = v``, nonzero) keep device branches (``is_host``): on the CPU
they are NumPy's own fancy indexing (and ``np.add.at``), which a device buffer cannot take; on
CUDA they are lowered to flat positions and run as ``index_select3`` / ``index_add3`` /
``scatter3`` (the ``_device_*`` functions).

Example:
    >>> import dynagrad as dg
    >>> x = dg.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x[x > 1.5], x.gather(1, dg.tensor([[1], [0]]))
    (tensor([2., 3., 4.]), tensor([[2.],
            [3.]]))
"""
from __future__ import annotations

import math

import numpy as np

from ..autograd import grad_mode
from ..autograd.function import node_class, record
from ..dtypes import bool_, int64
from ..errors import describe
from ..kernels.cpu import backend as cpu
from ..kernels.cuda import backend as cuda_backend
from ..kernels.cuda.device_array import DeviceArray
from ..kernels.backend import backend
from ..tensor import Tensor, _wrap
from ._util import as_tensor_arg
from ..shapes import wrap_dim
from .elementwise import rebase_inplace, sum_to, where
from .movement import basic_view, copy_array
from .placement import common_device
from ..kernels.buffers import contiguous, device_index, full_like_array, host, is_host, move_array
from .reduce import values_indices
from .registry import register, tensor_method

_NODES: dict = {}


def _where(t: Tensor) -> int | None:
    """``t``'s CUDA device index, or None on the CPU (for ``move_array``)."""
    return device_index(t._data)


def _node(name, backward):
    cls = _NODES.get(name)
    if cls is None:
        cls = _NODES[name] = node_class(name, backward)
    return cls()


def _tracks(*tensors) -> bool:
    return grad_mode.GRAD_ENABLED[0] and any(t is not None and t._requires_grad for t in tensors)


# --- keys -------------------------------------------------------------------------------------

def _normalize_key(x: Tensor, key) -> tuple:
    """Validate ``key`` against ``x``'s shape; returns (numpy key, is_basic)."""
    if not isinstance(key, tuple):
        key = (key,)
    basic = True
    out = []
    for k in key:
        if isinstance(k, Tensor):
            if k.ndim == 0 and not k.dtype.is_floating_point and k.dtype is not bool_:
                out.append(int(k.item()))
                continue
            basic = False
            if k.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(host(k._data))  # keys are checked (and turned into positions) on the host
        elif isinstance(k, (list, np.ndarray)):
            arr = np.asarray(k)
            if arr.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            basic = False
            out.append(arr if arr.dtype == np.bool_ else arr.astype(np.int64))
        elif k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer, bool)):
            if isinstance(k, bool):
                basic = False
                out.append(np.array(k))
            else:
                out.append(k)
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type(k).__name__})")
    _check_bounds(x, out)
    return tuple(out), basic


def _check_bounds(x: Tensor, key: list) -> None:
    """Raise IndexError for any integer index outside its dimension (before NumPy or a kernel)."""
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 if not isinstance(k, np.ndarray) or k.dtype != np.bool_ else k.ndim
                   for k in key if k is not None and k is not Ellipsis)
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    dim = 0
    for k in key:
        if k is None:
            continue
        if k is Ellipsis:
            dim += x.ndim - consumed
            continue
        if isinstance(k, np.ndarray) and k.dtype == np.bool_:
            if k.ndim and tuple(k.shape) != tuple(x.shape[dim:dim + k.ndim]):
                raise IndexError(f"The shape of the mask {tuple(k.shape)} at index {dim} does not "
                                 f"match the shape of the indexed tensor {tuple(x.shape)}")
            dim += k.ndim
            continue
        size = x.shape[dim]
        if isinstance(k, (int, np.integer)):
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {size}")
        elif isinstance(k, np.ndarray) and k.size:
            lo, hi = int(k.min()), int(k.max())
            if lo < -size or hi >= size:
                bad = lo if lo < -size else hi
                raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size "
                                 f"{size}")
        dim += 1


# --- x[key] -----------------------------------------------------------------------------------

def _index_back(node, g):
    return (index_put_accumulate(g, node.in_shape, node.key),)


def _index_put_acc_back(node, g):
    return (getitem(g, _as_tensor_key(node.key)),)


def _as_tensor_key(key):
    return tuple(_wrap(k, bool_ if k.dtype == np.bool_ else int64) if isinstance(k, np.ndarray)
                 else k for k in key)


def index_put_accumulate(g: Tensor, shape: tuple, key) -> Tensor:
    """Zeros of ``shape`` with ``g`` added at ``key`` (repeated indices add up)."""
    mask = _leading_mask(shape, key, g._data)
    if mask is not None:
        row = math.prod(shape[key[0].ndim:])
        rows = np.ascontiguousarray(g._data).reshape(g._data.size // row, row)
        out = cpu.masked_rows_adjoint(rows, mask).reshape(shape)
    elif is_host(g._data):
        out = np.zeros(shape, g._data.dtype)
        _add_at(out, key, g._data)
    else:
        out = full_like_array(g._data, shape, 0, g._data.dtype)
        _device_write(out, key, g._data, accumulate=True)
    res = _wrap(out, g.dtype)
    if _tracks(g):
        node = _node("IndexPutBackward0", _index_put_acc_back)
        node.key = key
        record(node, (g,), (res,))
    return res


_MASK_DTYPES = {np.dtype(t) for t in (np.float32, np.float64, np.int64, np.int32)}


def _leading_mask(shape: tuple, key: tuple, arr) -> np.ndarray | None:
    """The flattened, C-contiguous bool mask of a key that is one mask over ``shape``'s leading
    dims, then full slices (``x[mask]``, ``x[mask, :]``), where ``masked_rows`` runs it (a
    non-empty host array ``arr`` of a kernel dtype); else None."""
    mask = key[0] if key else None
    if not (isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.ndim
            and tuple(mask.shape) == tuple(shape[:mask.ndim]) and math.prod(shape)
            and type(arr) is np.ndarray and arr.dtype in _MASK_DTYPES
            and all(type(k) is slice and k == slice(None) for k in key[1:])):
        return None
    return np.ascontiguousarray(mask).reshape(-1)


def _add_at(out: np.ndarray, key: tuple, values: np.ndarray) -> None:
    """``out[key] += values`` for zeros ``out``, repeated positions adding up (``np.add.at``'s
    meaning) - faster where the key allows: one bool mask names each position once (a plain
    store), and one integer vector over the first dim, then full slices, adds whole rows
    (``index_add``'s kernel). Any other key takes the slow ``np.add.at``."""
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    if len(arrays) == 1 and arrays[0].dtype == np.bool_:
        out[key] = values
        return
    first = key[0]
    if (len(arrays) == 1 and first is arrays[0] and first.ndim == 1 and out.ndim
            and all(type(k) is slice and k == slice(None) for k in key[1:])
            and out.dtype in _ROW_ADD_DTYPES):
        rows = np.where(first < 0, first + out.shape[0], first)  # (bounds are checked)
        backend(out).index_add3(out.reshape(1, out.shape[0], -1), rows,
                                values.reshape(1, rows.size, -1))
        return
    np.add.at(out, key, values)


_ROW_ADD_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def getitem(x: Tensor, key) -> Tensor:
    """``x[key]``: basic keys give views, tensor/list/mask keys give copies (both differentiable)."""
    if not is_host(x._data):
        res = _device_getitem(x, key)
        if res is not None:
            return res
    np_key, basic = _normalize_key(x, key)
    if basic:
        return basic_view(x, np_key, "SelectBackward0" if any(
            isinstance(k, (int, np.integer)) for k in np_key) else "SliceBackward0")
    mask = _leading_mask(x._data.shape, np_key, x._data)
    if mask is not None:
        rows = cpu.masked_rows(np.ascontiguousarray(x._data).reshape(mask.size, -1), mask)
        res = _wrap(rows.reshape((rows.shape[0],) + x._data.shape[np_key[0].ndim:]), x.dtype)
    elif is_host(x._data):
        res = _wrap(np.asarray(x._data[np_key], order="C"), x.dtype)
    else:
        res = _wrap(_device_take(x._data, np_key), x.dtype)
    if _tracks(x):
        node = _node("IndexBackward0", _index_back)
        node.in_shape, node.key = tuple(x.shape), np_key
        record(node, (x,), (res,))
    return res


def _device_getitem(x: Tensor, key):
    """``x[key]`` without leaving the GPU for the common advanced keys (see ``_device_rows``): one
    ``index_select`` gathers the selected rows (differentiable through it). None for other keys."""
    found = _device_rows(x, key)
    if found is None:
        return None
    rows, flat, shape = found
    return rows.index_select(0, flat).reshape(shape + tuple(rows.shape[1:]))


def _device_rows(x: Tensor, key):
    """For a key of index or mask tensors over the leading dims (``x[idx]``, ``x[i, j]``,
    ``x[mask]``, optionally followed by ``...`` or full slices): ``(rows, flat, shape)``, where
    ``rows`` views ``x`` with the indexed dims folded into one, ``flat`` (1-D, on the device) holds
    the row of every selected element and ``shape`` is the indices' broadcast shape. Masks become
    indices through ``nonzero``; only index bounds (two numbers each) are read back. None for any
    other key (the general path handles it)."""
    parts = key if isinstance(key, tuple) else (key,)
    lead = []
    for i, k in enumerate(parts):
        if isinstance(k, Tensor) and (k.dtype is bool_ or not k.dtype.is_floating_point) \
                and k.ndim:
            lead.append(k)
            continue
        if all(r is Ellipsis or (isinstance(r, slice) and r == slice(None)) for r in parts[i:]):
            break
        return None
    if not lead:
        return None
    indices = []
    for k in lead:
        k = k.to(x.device)
        if k.dtype is bool_:
            dim = sum(t.ndim if t.dtype is bool_ else 1 for t in indices)
            _check_mask_shape(x, k, dim)
            indices.extend(nonzero(k, as_tuple=True))
        else:
            indices.append(k.long())
    if len(indices) > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    sizes = tuple(x.shape[:len(indices)])
    flat = None
    for d, (k, size) in enumerate(zip(indices, sizes)):
        if k.numel():
            lo, hi = int(k.amin().item()), int(k.amax().item())
            if lo < -size or hi >= size:
                bad = lo if lo < -size else hi
                raise IndexError(f"index {bad} is out of bounds for dimension {d} with size "
                                 f"{size}")
        k = k.remainder(size) if size else k  # negative positions count from the end
        flat = k if flat is None else flat * size + k
    from ..shapes import broadcast_shapes
    shape = broadcast_shapes("index", *(tuple(k.shape) for k in indices))
    rows = x.reshape((math.prod(sizes),) + tuple(x.shape[len(sizes):]))
    return rows, flat.expand(shape).reshape(-1), shape


def _device_index_put(x: Tensor, key, value, accumulate: bool):
    """Out-of-place ``x[key] = value`` (or ``+=``) on the GPU for the keys ``_device_rows`` takes,
    from differentiable ops (a scatter of rows, or ``index_add``). None for other keys."""
    found = _device_rows(x, key)
    if found is None:
        return None
    rows, flat, shape = found
    rest = tuple(rows.shape[1:])
    if not isinstance(value, Tensor):
        from ..creation import full
        value = full((), value, dtype=x.dtype, device=x.device)
    src = value.to(x.device).expand(shape + rest).reshape((flat.shape[0],) + rest)
    if accumulate:
        out = rows.index_add(0, flat, src)
    else:  # repeated rows: one of the values wins, as with NumPy and PyTorch
        where_rows = flat.reshape((-1,) + (1,) * len(rest)).expand(tuple(src.shape))
        out = rows.scatter(0, where_rows, src)
    return out.reshape(tuple(x.shape))


def _check_mask_shape(x: Tensor, mask: Tensor, dim: int) -> None:
    if tuple(mask.shape) != tuple(x.shape[dim:dim + mask.ndim]):
        raise IndexError(f"The shape of the mask {tuple(mask.shape)} at index {dim} does not "
                         f"match the shape of the indexed tensor {tuple(x.shape)}")


def _index_put_back(node, g):
    if node.accumulate:
        g_self = g
    else:
        g_self = where(_wrap(move_array(~_written_mask(node.in_shape, node.key), _where(g)), bool_),
                       g, 0.0)
    g_value = None
    if node.value_shape is not None:
        g_value = _sum_to_value(getitem(g, _as_tensor_key(node.key)), node.value_shape)
    return g_self, g_value


def _sum_to_value(g: Tensor, shape: tuple) -> Tensor:
    """Reduce ``g`` to the shape of the value that was broadcast into it; the value may have extra
    leading size-1 dims (assignment drops them, as NumPy and PyTorch do)."""
    core = shape[max(len(shape) - g.ndim, 0):]
    return sum_to(g, core).reshape(shape)


def _written_mask(shape, key) -> np.ndarray:
    mask = np.zeros(shape, bool)
    mask[key] = True
    return mask


def index_put(x: Tensor, key, value, accumulate: bool = False) -> Tensor:
    """Out-of-place ``x[key] = value`` (the differentiable form used by ``__setitem__``);
    ``accumulate=True`` adds instead, repeated indices adding up."""
    if isinstance(value, Tensor) and value.dtype is not x.dtype:
        value = value.to(x.dtype)
    if not is_host(x._data):
        res = _device_index_put(x, key, value, accumulate)
        if res is not None:
            return res
    np_key, _ = _normalize_key(x, key)
    out = x._data.copy()
    v = value._data if isinstance(value, Tensor) else value
    if accumulate:
        _accumulate(out, np_key, v)
    else:
        _assign(out, np_key, v)
    res = _wrap(out, x.dtype)
    vt = value if isinstance(value, Tensor) else None
    if _tracks(x, vt):
        node = _node("IndexPutBackward0", _index_put_back)
        node.key, node.in_shape, node.accumulate = np_key, tuple(x.shape), accumulate
        node.value_shape = tuple(vt.shape) if vt is not None else None
        record(node, (x, vt), (res,))
    return res


def _positions(shape: tuple, key) -> np.ndarray:
    """Flat (C-order) positions of the elements ``key`` selects, in the result's shape: NumPy's
    own advanced indexing on an index grid gives exactly its semantics to the CUDA path."""
    return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)[key]


def _device_take(arr, key):
    """``arr[key]`` for an advanced key on a CUDA buffer (a gather of the selected positions)."""
    pos = _positions(arr.shape, key)
    flat = contiguous(arr).reshape(1, -1, 1)
    picked = cuda_backend.index_select3(flat, move_array(pos.reshape(-1), arr.device_index))
    return picked.reshape(pos.shape)


def _device_write(arr, key, value, accumulate: bool) -> None:
    """``arr[key] = value`` (or ``+=``, repeats adding up) for a contiguous CUDA buffer."""
    pos = _positions(arr.shape, key)
    if isinstance(value, DeviceArray):
        src = value.astype(arr.dtype, copy=False)
    else:
        src = move_array(np.asarray(value, dtype=arr.dtype), arr.device_index)
    try:
        src = np.broadcast_to(src, pos.shape)
    except ValueError as exc:
        raise RuntimeError(f"index assignment: {exc}") from None
    n = pos.size
    if not n:
        return
    flat = arr.reshape(1, -1, 1)
    index = move_array(pos.reshape(1, n, 1), arr.device_index)
    if accumulate:
        cuda_backend.index_add3(flat, index.reshape(n), src.reshape(1, n, 1))
    else:  # repeated positions: one of the values wins, as with NumPy and PyTorch
        cuda_backend.scatter3(flat, index, src.reshape(1, n, 1), False)


def _assign(arr: np.ndarray, key, value) -> None:
    if not is_host(arr):
        if not arr.flags.writeable:
            raise RuntimeError("index assignment: unsupported operation: the tensor is an "
                               "expanded view; clone it first")
        if all(not isinstance(k, np.ndarray) for k in key):
            target = arr[key]
            try:
                target[...] = value
            except ValueError as exc:
                raise RuntimeError(f"index assignment: {exc}") from None
            return
        dense = contiguous(arr)
        _device_write(dense, key, value, accumulate=False)
        if dense is not arr:
            arr[...] = dense
        return
    try:
        if not arr.flags.writeable:
            raise RuntimeError("index assignment: unsupported operation: the tensor is an "
                               "expanded view (more than one element refers to the same memory "
                               "location); clone it first")
        target = arr[key]
        if isinstance(target, np.ndarray) and target.base is not None and all(
                not isinstance(k, np.ndarray) for k in key):
            src = np.asarray(value, dtype=arr.dtype)
            np.broadcast_shapes(src.shape, target.shape)
            copy_array(src, target)
            return
        arr[key] = value
    except ValueError as exc:
        raise RuntimeError(f"index assignment: {exc}") from None


def _accumulate(arr: np.ndarray, key, value) -> None:
    if not is_host(arr):  # arr is a fresh contiguous copy (index_put)
        _device_write(arr, key, value, accumulate=True)
        return
    try:
        np.add.at(arr, key, np.asarray(value, dtype=arr.dtype))
    except ValueError as exc:
        raise RuntimeError(f"index_put (accumulate=True): {exc}") from None


def setitem(x: Tensor, key, value) -> None:
    """``x[key] = value`` in place; with autograd the write is recorded like PyTorch's."""
    if isinstance(value, Tensor) and value.dtype is not x.dtype:
        value = value.to(x.dtype)
    vt = value if isinstance(value, Tensor) else None
    if _tracks(x, vt):
        if x.grad_fn is None and x._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        rebase_inplace(x, lambda old: index_put(old, key, value))
        return
    if not is_host(x._data):
        with grad_mode.no_grad():
            res = _device_index_put(x, key, value, False)
        if res is not None:
            _assign(x._data, (Ellipsis,), res._data)
            x._vc[0] += 1
            return
    np_key, _ = _normalize_key(x, key)
    _assign(x._data, np_key, value._data if vt is not None else value)
    x._vc[0] += 1


tensor_method("__getitem__", getitem)
tensor_method("__setitem__", setitem)


# --- gather / scatter ----------------------------------------------------------------------

def _check_index(op: str, x: Tensor, dim: int, index: Tensor, limit_other: bool = True) -> int:
    if not isinstance(index, Tensor) or index.dtype is not int64:
        raise RuntimeError(f"{op}(): Expected dtype int64 for index (got {describe(index)})")
    d = wrap_dim(dim, x.ndim, op)
    if index.ndim != x.ndim and not (index.ndim <= 1 and x.ndim <= 1):
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as "
                           f"input tensor (got index {describe(index)}, input {describe(x)})")
    for k in range(index.ndim):
        if k != d and limit_other and index.shape[k] > (x.shape[k] if x.ndim else 1):
            raise RuntimeError(f"{op}(): Size does not match at dimension {k} expected index "
                               f"{tuple(index.shape)} to be smaller than self {tuple(x.shape)} "
                               f"apart from dimension {d}")
    size = x.shape[d] if x.ndim else 1
    common_device(op, (x, index))
    if index.numel():  # positions are checked before any kernel runs
        lo, hi = _index_range(index)
        if lo < 0 or hi >= size:
            raise IndexError(f"{op}(): index {lo if lo < 0 else hi} is out of bounds for "
                             f"dimension {d} with size {size}")
    return d


def _index_range(index: Tensor) -> tuple:
    """The smallest and largest position in ``index``. On a GPU that means two reductions there
    and two numbers read back (a synchronisation), so the answer is remembered on the tensor for
    its current version: a backward pass, or a table used every step, checks for free."""
    arr = index._data
    if is_host(arr):
        return int(arr.min()), int(arr.max())
    known = index.__dict__.get("_known_range")
    if known is not None and known[0] == index._vc[0]:
        return known[1], known[2]
    with grad_mode.no_grad():
        lo, hi = int(index.amin().item()), int(index.amax().item())
    trust_range(index, lo, hi)
    return lo, hi


def trust_range(index: Tensor, lo: int, hi: int) -> Tensor:
    """Record that ``index``'s values (as they are now) lie in ``[lo, hi]``, found by the caller,
    so index ops taking it skip reading it back; a later in-place write makes the record stale.

    Example: ``idx = trust_range(target.long(), lo, hi)`` after checking the targets once.
    """
    index._known_range = (index._vc[0], lo, hi)
    return index


def _same_range(alias: Tensor, index: Tensor) -> Tensor:
    """``alias`` (a reshaped alias of ``index``'s memory) sharing ``index``'s version counter, so
    a write to either invalidates the checked range both carry."""
    alias._vc = index._vc
    known = index.__dict__.get("_known_range")
    if known is not None and known[0] == index._vc[0]:
        trust_range(alias, known[1], known[2])
    return alias


def _three(arr: np.ndarray, d: int, shape) -> np.ndarray:
    """View ``arr`` restricted to ``shape`` outside ``d`` as (outer, size_d, inner)."""
    if arr.ndim == 0:
        return arr.reshape(1, 1, 1)
    key = tuple(slice(None) if k == d else slice(0, shape[k]) for k in range(arr.ndim))
    sub = arr[key]
    s = sub.shape
    outer = int(np.prod(s[:d], dtype=np.int64))
    inner = int(np.prod(s[d + 1:], dtype=np.int64))
    return sub.reshape(outer, s[d], inner)


def _c_copy(t: Tensor) -> np.ndarray:
    """A C-contiguous copy of ``t``'s data in its compute dtype (0-d stays 0-d)."""
    if not is_host(t._data):
        return t._data.astype(_compute_dtype(t))
    return np.array(t._data, dtype=_compute_dtype(t), order="C")


def _compute_dtype(t: Tensor) -> np.dtype:
    return t.dtype.compute.np if t.dtype is not bool_ else np.dtype(np.bool_)


def _gather_back(node, g):
    (x_shape, d, index) = node.args
    zeros = g.new_zeros(x_shape)
    if grad_mode.GRAD_ENABLED[0]:  # create_graph: the gradient must be differentiable
        return (scatter_add(zeros, d, index, g), None)
    # accumulate straight into the fresh zeros (scatter_add would copy them first)
    return (_wrap(_scatter_impl("scatter_add", zeros, d, index, g, True, fresh=True), g.dtype),
            None)


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` along ``dim`` (for dim 0 of 2-D)."""
    x = as_tensor_arg(input, "gather")
    return _gather(x, _check_index("gather", x, dim, index), index)


def _gather(x: Tensor, d: int, index: Tensor) -> Tensor:
    """``gather`` with ``index`` known valid (sort's own permutations: checking them would read
    a CUDA index back to the host)."""
    arr = x._data.astype(_compute_dtype(x), copy=False)
    out = backend(arr).gather3(_three(arr, d, index.shape), _three(index._data, d, index.shape))
    res = _wrap(out.reshape(index.shape).astype(x.dtype.np, copy=False), x.dtype)
    if _tracks(x):
        node = _node("GatherBackward0", _gather_back)
        node.args = (tuple(x.shape), d, index)
        record(node, (x, None), (res,))
    return res


def _src_grad(g: Tensor, d: int, index: Tensor, src_shape: tuple) -> Tensor:
    """``g.gather(d, index)``, zero-padded to ``src`` when ``src`` is larger than ``index``
    (its entries outside ``index``'s extent were not read)."""
    gs = g.gather(d, index)
    if tuple(gs.shape) == src_shape:
        return gs
    widths = []
    for have, want in zip(reversed(gs.shape), reversed(src_shape)):
        widths.extend((0, want - have))
    from .movement import pad
    return pad(gs, widths)


def _scatter_back(node, g):
    d, index, src_shape = node.args
    g_self = g.scatter(d, index, 0.0)
    return g_self, None, (_src_grad(g, d, index, src_shape) if src_shape is not None else None)


def _scatter_add_back(node, g):
    d, index, src_shape = node.args
    return g, None, _src_grad(g, d, index, src_shape)


def _scatter_impl(op, x, d, index, src, accumulate, fresh: bool = False) -> np.ndarray:
    """``x``'s data with ``src`` scattered into a copy of it, or into it where ``fresh`` (``x``
    is a new tensor nobody else holds)."""
    fresh = fresh and x._data.dtype == _compute_dtype(x) and x._data.flags.c_contiguous
    out = x._data if fresh else _c_copy(x)
    if isinstance(src, Tensor):
        s = src._data.astype(out.dtype, copy=False)
    else:
        s = np.broadcast_to(full_like_array(out, (), src, out.dtype) if not is_host(out) else
                            np.asarray(src, dtype=out.dtype), index.shape)
    if isinstance(src, Tensor):
        for k in range(index.ndim):
            if index.shape[k] > src.shape[k]:
                raise RuntimeError(f"{op}(): Expected index {tuple(index.shape)} to be smaller "
                                   f"than src {tuple(src.shape)} in every dimension")
    out3 = out.reshape(_three(out, d, out.shape).shape)
    backend(out3).scatter3(out3, _three(index._data, d, index.shape), _three(s, d, index.shape),
                           accumulate)
    return out.astype(x.dtype.np, copy=False)


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce=None) -> Tensor:
    """Out-of-place ``self[index[i][j]][j] = src[i][j]`` along ``dim`` (src a tensor or value)."""
    x = as_tensor_arg(input, "scatter")
    if reduce is not None:
        raise NotImplementedError("scatter: reduce= is not supported; use scatter_add or "
                                  "scatter_reduce")
    if src is None:
        src = value
    d = _check_index("scatter", x, dim, index, limit_other=True)
    st = src if isinstance(src, Tensor) else None
    res = _wrap(_scatter_impl("scatter", x, d, index, src if st is None else src.to(x.dtype),
                              False), x.dtype)
    if _tracks(x, st):
        node = _node("ScatterBackward0", _scatter_back)
        node.args = (d, index, tuple(st.shape) if st is not None else None)
        record(node, (x, None, st), (res,))
    return res


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Out-of-place ``self[index[i][j]][j] += src[i][j]`` along ``dim`` (repeats accumulate)."""
    x = as_tensor_arg(input, "scatter_add")
    d = _check_index("scatter_add", x, dim, index)
    res = _wrap(_scatter_impl("scatter_add", x, d, index, src.to(x.dtype), True), x.dtype)
    if _tracks(x, src):
        node = _node("ScatterAddBackward0", _scatter_add_back)
        node.args = (d, index, tuple(src.shape))
        record(node, (x, None, src), (res,))
    return res


def _inplace_variant(fn):
    def method_(self, *args, **kwargs):
        res = fn(self, *args, **kwargs)
        if res.grad_fn is not None:
            if self.grad_fn is None and self._requires_grad:
                raise RuntimeError(f"{fn.__name__}_: a leaf Variable that requires grad is being "
                                   "used in an in-place operation.")
            return rebase_inplace(self, lambda old: fn(old, *args, **kwargs))
        self._data[...] = res._data
        self._vc[0] += 1
        return self
    method_.__name__ = fn.__name__ + "_"
    return method_


# --- index_select / index_add -------------------------------------------------------------

def _check_index_vector(op: str, x: Tensor, dim: int, index) -> tuple:
    if not isinstance(index, Tensor) or index.dtype not in (int64, ) or index.ndim > 1:
        raise IndexError(f"{op}(): index must be a 1-D int64 tensor (got {describe(index)})")
    d = wrap_dim(dim, x.ndim, op)
    size = x.shape[d] if x.ndim else 1
    common_device(op, (x, index))
    idx = index._data.reshape(-1)
    if idx.size:
        lo, hi = _index_range(index)
        if lo < 0 or hi >= size:  # PyTorch accepts no negative positions here either
            raise IndexError(f"{op}(): index {lo if lo < 0 else hi} is out of range for "
                             f"dimension {d} with size {size}")
    return d, contiguous(idx)


def _index_select_back(node, g):
    shape, d, index = node.args
    zeros = g.new_zeros(shape)
    if grad_mode.GRAD_ENABLED[0] or zeros._data.dtype != _compute_dtype(zeros):
        return (index_add(zeros, d, index, g), None)  # (create_graph: differentiable)
    # add straight into the fresh zeros (index_add would copy them first)
    out = zeros._data
    out3 = out.reshape(_three(out, d, out.shape).shape)
    backend(out3).index_add3(out3, index._data.reshape(-1),
                             g._data.reshape(out3.shape[0], -1, out3.shape[2]))
    return (zeros, None)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """Entries of ``input`` at positions ``index`` (1-D) along ``dim``."""
    x = as_tensor_arg(input, "index_select")
    d, idx = _check_index_vector("index_select", x, dim, index)
    arr = x._data.astype(_compute_dtype(x), copy=False)
    x3 = _three(arr, d, arr.shape)
    out = backend(x3).index_select3(x3, idx)
    shape = tuple(x.shape[:d]) + (idx.size,) + tuple(x.shape[d + 1:]) if x.ndim else (idx.size,)
    res = _wrap(out.reshape(shape).astype(x.dtype.np, copy=False), x.dtype)
    if _tracks(x):
        node = _node("IndexSelectBackward0", _index_select_back)
        node.args = (tuple(x.shape), d, _same_range(_wrap(idx, int64), index))
        record(node, (x, None), (res,))
    return res


def _index_add_back(node, g):
    d, index, alpha = node.args
    gs = g.index_select(d, index)
    return g, None, (gs * alpha if alpha != 1 else gs)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """Out-of-place ``self[..., index[k], ...] += alpha * source[..., k, ...]`` along ``dim``."""
    x = as_tensor_arg(input, "index_add")
    d, idx = _check_index_vector("index_add", x, dim, index)
    expect = tuple(x.shape[:d]) + (idx.size,) + tuple(x.shape[d + 1:])
    if tuple(source.shape) != expect and not (x.ndim == 0 and source.numel() == idx.size):
        raise RuntimeError(f"index_add(): source {describe(source)} should have shape {expect}")
    out = _c_copy(x)
    src = (source * alpha if alpha != 1 else source)._data.astype(out.dtype, copy=False)
    out3 = out.reshape(_three(out, d, out.shape).shape)
    backend(out3).index_add3(out3, idx, src.reshape(out3.shape[0], idx.size, out3.shape[2]))
    res = _wrap(out.astype(x.dtype.np, copy=False), x.dtype)
    if _tracks(x, source):
        node = _node("IndexAddBackward0", _index_add_back)
        node.args = (d, _same_range(_wrap(idx, int64), index), alpha)
        record(node, (x, None, source), (res,))
    return res


# --- masks --------------------------------------------------------------------------------

def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """``value`` where ``mask`` is True, else ``input`` (keeps ``input``'s dtype)."""
    x = as_tensor_arg(input, "masked_fill")
    if not isinstance(mask, Tensor) or mask.dtype is not bool_:
        raise RuntimeError(f"masked_fill: expected a bool mask (got {describe(mask)})")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"masked_fill only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s)")
        value = value.to(x.dtype)
    else:
        value = _wrap(move_array(np.asarray(value, dtype=x.dtype.np), _where(x)), x.dtype)
    out = where(mask, value, x)
    if tuple(out.shape) != tuple(x.shape):
        raise RuntimeError(f"masked_fill: mask {tuple(mask.shape)} must broadcast to the input "
                           f"{tuple(x.shape)}")
    return out


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """1-D tensor of the entries where ``mask`` (broadcast with ``input``) is True."""
    x = as_tensor_arg(input, "masked_select")
    if not isinstance(mask, Tensor) or mask.dtype is not bool_:
        raise RuntimeError(f"masked_select: expected a bool mask (got {describe(mask)})")
    from ..shapes import broadcast_shapes
    shape = broadcast_shapes("masked_select", tuple(x.shape), tuple(mask.shape))
    return getitem(x.expand(shape), mask.expand(shape))


def nonzero(input: Tensor, *, as_tuple: bool = False):
    """Indices of nonzero entries: an (n, ndim) int64 tensor, or one 1-D tensor per dim."""
    x = as_tensor_arg(input, "nonzero")
    if not is_host(x._data):
        coords = _device_nonzero(x.reshape(1) if as_tuple and x.ndim == 0 else x)
        if as_tuple:
            return tuple(coords[:, d].contiguous() for d in range(max(x.ndim, 1)))
        return coords
    idx = np.nonzero(np.atleast_1d(x._data))
    if as_tuple:
        return tuple(_wrap(np.ascontiguousarray(i, dtype=np.int64), int64) for i in idx)
    stacked = np.stack(idx, axis=1) if idx else np.zeros((0, 0), np.int64)
    if x.ndim == 0:
        stacked = stacked[:, :0]
    return _wrap(np.ascontiguousarray(stacked, dtype=np.int64), int64)


def _device_nonzero(x: Tensor) -> Tensor:
    """``nonzero`` on the GPU: a running count of the nonzero entries gives each one its output
    row; one scatter writes the flat positions there (zeros go to a spare last slot, dropped), and
    ``//`` and ``%`` turn positions into coordinates. Only the count (one number) is read back,
    since the result's size depends on it (PyTorch's nonzero synchronises the same way)."""
    from ..creation import arange, zeros
    with grad_mode.no_grad():
        hit = x.detach().reshape(-1) != 0
        n = hit.numel()
        rank = hit.long().cumsum(0) if n else hit.long()
        count = int(rank[-1].item()) if n else 0
        if count == 0 or x.ndim == 0:  # nothing found, or a 0-d input (rows of no coordinates)
            return zeros(count, x.ndim, dtype=int64, device=x.device)
        slot = where(hit, rank - 1, count)
        flat = zeros(count + 1, dtype=int64, device=x.device).scatter(
            0, slot, arange(n, device=x.device))[:count]
        coords = []
        for size in reversed(tuple(x.shape)):
            coords.append(flat.remainder(size))
            flat = flat // size
        from .movement import stack
        return stack(coords[::-1], 1)


def argwhere(input: Tensor) -> Tensor:
    return nonzero(input)


# --- sort / topk --------------------------------------------------------------------------

def _order(x: Tensor, d: int, descending: bool, k: int | None = None) -> Tensor:
    """The stable sort permutation of ``x`` along ``d`` (its first ``k`` entries when given), on
    ``x``'s device (NaN largest, ties in original order in both directions)."""
    return _wrap(backend(x._data).argsort_axis(x._data, d, descending, k), int64)


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False):
    """Sorted values and their original indices along ``dim`` (NaN sorts as the largest; the
    sort is always stable).

    Example:
        >>> import dynagrad as dg
        >>> dg.tensor([3.0, 1.0, 2.0]).sort(descending=True).indices.tolist()
        [0, 2, 1]
    """
    x = as_tensor_arg(input, "sort")
    if x.dtype.is_complex:  # (complex numbers have no order)
        raise RuntimeError("Sort does not support complex dtypes on CPU")
    if x.ndim == 0:
        return values_indices["sort"](x.clone(), _wrap(
            move_array(np.zeros((), np.int64), _where(x)), int64))
    d = wrap_dim(dim, x.ndim, "sort")
    idx = _order(x, d, descending)
    return values_indices["sort"](_gather(x, d, idx), idx)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False):
    """Indices that sort ``input`` along ``dim``."""
    return sort(input, dim, descending, stable).indices


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """The ``k`` largest (or smallest) entries along ``dim`` and their indices (always sorted;
    ties keep their original order)."""
    x = as_tensor_arg(input, "topk")
    if x.dtype.is_complex:  # (complex numbers have no order)
        raise RuntimeError("topk does not support complex dtypes on CPU")
    d = wrap_dim(dim, x.ndim, "topk")
    size = x.shape[d] if x.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"topk: selected index k ({k}) out of range for dimension {d} with "
                           f"size {size}")
    if x.ndim == 0:
        return values_indices["topk"](x.clone(), _wrap(
            move_array(np.zeros((), np.int64), _where(x)), int64))
    idx = _order(x, d, largest, k)
    return values_indices["topk"](_gather(x, d, idx), idx)


for _name, _fn in (("gather", gather), ("scatter", scatter), ("scatter_add", scatter_add),
                   ("index_select", index_select), ("index_add", index_add)):
    register(_name, _fn, "indexing", inplace=_inplace_variant(_fn)
             if _name != "gather" and _name != "index_select" else None)
for _name, _fn in (("masked_fill", masked_fill),):
    register(_name, _fn, "indexing", inplace=_inplace_variant(_fn))
for _name, _fn in (("masked_select", masked_select), ("nonzero", nonzero),
                   ("argwhere", argwhere), ("sort", sort), ("argsort", argsort), ("topk", topk)):
    register(_name, _fn, "indexing")
# (index_put, PyTorch's public form, is registered by ops.scatter_gather)
