"""Shape and data-movement ops: views that share memory, and copies (cat, flip, roll, pad ...).

Views are NumPy views of the same buffer and share the tensor's version counter. Copies go through
the generated copy kernel (the elementwise template with expression ``x``), so they are Numba code
like every other op.

Example:
    >>> import dynagrad as dg
    >>> x = dg.arange(6).view(2, 3)
    >>> x.T.shape, dg.cat([x, x], dim=1).shape
    (dynagrad.Size([3, 2]), dynagrad.Size([2, 6]))
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..autograd import grad_mode
from ..autograd.function import node_class, record
from ..dtypes import bool_ as _BOOL
from ..dtypes import int64 as _INT64
from ..errors import describe
from ..kernels.cpu import memory
from ..kernels.backend import backend
from ..kernels.cuda.device_array import DeviceArray
from ..tensor import Tensor, _view, _wrap
from ..layout import output_dim_order
from ._util import as_tensor_arg
from ..shapes import wrap_dim
from .placement import common_device
from ..kernels.buffers import empty, empty_like_array, full_like_array, move_array
from .registry import register


def _tracks(x: Tensor) -> bool:
    return x._requires_grad and grad_mode.GRAD_ENABLED[0]


def _attach(name: str, x: Tensor, out: Tensor, backward, **attrs) -> Tensor:
    """Record a one-input node named ``name`` whose backward is ``backward(node, g)``."""
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        cls = _NODE_CLASSES[name] = node_class(name, backward)
    node = cls()
    node.__dict__.update(attrs)
    record(node, (x,), (out,))
    return out


_NODE_CLASSES: dict = {}


def copy_array(src, dst) -> None:
    """``dst[...] = src`` (broadcasting ``src``; either buffer on any device)."""
    backend(dst).copy(src, dst)


def fresh_copy(arr: np.ndarray) -> np.ndarray:
    out = empty_like_array(arr, arr.shape, arr.dtype)
    copy_array(arr, out)
    return out


# --- views --------------------------------------------------------------------------------

def int_varargs(args: tuple, op: str, name: str) -> tuple:
    """The ints of a Tensor method that PyTorch lets take them spread out or as one sequence:
    ``x.permute(2, 0, 1)`` and ``x.permute((2, 0, 1))`` alike. As PyTorch, no arguments and a
    sequence among spread-out ints are TypeErrors."""
    if not args:
        raise TypeError(f'{op}() missing 1 required positional arguments: "{name}"')
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    out = []
    for pos, a in enumerate(args, 1):
        if isinstance(a, (bool, float)) or not hasattr(a, "__index__"):
            raise TypeError(f"{op}(): argument '{name}' failed to unpack the object at pos {pos} "
                            f'with error "type must be tuple of ints,but got '
                            f'{type(a).__name__}"')
        out.append(operator.index(a))
    return tuple(out)


def _infer_shape(op: str, shape: tuple, numel: int, src_shape) -> tuple:
    if -1 not in shape and math.prod(shape) == numel and min(shape, default=0) >= 0:
        return shape  # the common case: a complete, valid shape
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError(f"{op}: only one dimension can be inferred")
    if any(s < -1 for s in shape):
        raise RuntimeError(f"{op}: invalid shape dimension {min(shape)}")
    known = math.prod(s for s in shape if s != -1)
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel} "
                           f"(input shape {tuple(src_shape)})")
    return shape


def _reshape_back(node, g):
    return (g.reshape(node.in_shape),)


def view(input: Tensor, *shape) -> Tensor:
    """Same data, new shape; the memory layout must allow it without a copy (else use reshape)."""
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, np.integer)):
        from .. import dtypes
        if isinstance(shape[0], dtypes.dtype):
            return _view_dtype(input, shape[0])
    shape = _infer_shape("view", int_varargs(shape, "view", "size"), input._data.size,
                         input.shape)
    arr = input._data.view()
    try:
        arr.shape = shape
    except AttributeError:
        raise RuntimeError(f"view size is not compatible with input tensor's size and stride (at "
                           f"least one dimension spans across two contiguous subspaces); input "
                           f"{describe(input)}, view shape {shape}. Use .reshape(...) instead."
                           ) from None
    out = _view(input, arr)
    if _tracks(input):
        _attach("ViewBackward0", input, out, _reshape_back, in_shape=tuple(input.shape))
    return out


def _view_dtype(input: Tensor, dt) -> Tensor:
    """Reinterpret the bytes as another dtype of the same size (no autograd, as PyTorch)."""
    if dt.itemsize != input.dtype.itemsize:
        raise RuntimeError(f"view: dtype {dt.name} has a different element size than "
                           f"{input.dtype.name}")
    out = _view(input, input._data.view(dt.np))
    out.dtype = dt
    return out


def reshape(input: Tensor, *shape) -> Tensor:
    """New shape; a view when the layout allows, else a copy."""
    src = input._data
    shape = _infer_shape("reshape", int_varargs(shape, "reshape", "shape"), src.size, src.shape)
    arr = src.view()
    try:  # in place of a shape change NumPy can do without copying: a view
        arr.shape = shape
        out = _view(input, arr)
    except AttributeError:  # the layout needs a copy
        out = _wrap(src.reshape(shape), input.dtype)
    if _tracks(input):
        _attach("ReshapeAliasBackward0" if out._base is not None else "ViewBackward0",
                input, out, _reshape_back, in_shape=tuple(input.shape))
    return out


def view_as(input: Tensor, other: Tensor) -> Tensor:
    return view(input, tuple(other.shape))


def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    return reshape(input, tuple(other.shape))


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one."""
    if input.ndim == 0:
        return reshape(input, (1,))
    s = wrap_dim(start_dim, input.ndim, "flatten")
    e = wrap_dim(end_dim, input.ndim, "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = tuple(input.shape)
    return reshape(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    """Split dim ``dim`` into ``sizes`` (one entry may be -1)."""
    d = wrap_dim(dim, input.ndim, "unflatten")
    shape = tuple(input.shape)
    sizes = _infer_shape("unflatten", tuple(sizes), shape[d], shape)
    return view(input, shape[:d] + sizes + shape[d + 1:]) if input.is_contiguous() else \
        reshape(input, shape[:d] + sizes + shape[d + 1:])


def _transpose_back(node, g):
    return (g.transpose(node.d0, node.d1),)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dims (a view)."""
    nd = input.ndim
    d0, d1 = wrap_dim(dim0, nd, "transpose"), wrap_dim(dim1, nd, "transpose")
    out = _view(input, np.swapaxes(input._data, d0, d1) if nd else input._data)
    if _tracks(input):
        _attach("TransposeBackward0", input, out, _transpose_back, d0=d0, d1=d1)
    return out


def t(input: Tensor) -> Tensor:
    """Transpose a tensor of at most 2 dims."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else basic_view(input, ..., "TBackward0")


def _permute_back(node, g):
    return (g.permute(node.inverse),)


def permute(input: Tensor, *dims) -> Tensor:
    """Reorder dims (a view)."""
    dims = int_varargs(dims, "permute", "dims")
    nd = input.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, nd, "permute") for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError(f"permute(): duplicate dims are not allowed (got {dims})")
    out = _view(input, input._data.transpose(dims))
    if _tracks(input):
        inverse = [0] * nd
        for i, d in enumerate(dims):
            inverse[d] = i
        _attach("PermuteBackward0", input, out, _permute_back, inverse=tuple(inverse))
    return out


def movedim(input: Tensor, source, destination) -> Tensor:
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    nd = input.ndim
    src = [wrap_dim(s, nd, "movedim") for s in src]
    dst = [wrap_dim(d, nd, "movedim") for d in dst]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, order)


def _expand_back(node, g):
    from .elementwise import sum_to
    return (sum_to(g, node.in_shape),)


def _broadcast_view(src: np.ndarray, shape: tuple) -> np.ndarray:
    """A read-only stride-0 view of ``src`` at ``shape`` (NumPy's broadcast_to, minus its
    Python-level overhead for the common case of a contiguous source)."""
    if not src.flags.c_contiguous or type(src) is not np.ndarray:
        return np.broadcast_to(src, shape)
    lead = len(shape) - src.ndim
    src_strides = (0,) * lead + src.strides
    strides = tuple(0 if s == 1 and t != 1 else st
                    for s, t, st in zip((1,) * lead + src.shape, shape, src_strides))
    view = np.ndarray(shape, src.dtype, buffer=src, strides=strides)
    view.flags.writeable = False
    return view


def expand(input: Tensor, *sizes) -> Tensor:
    """Broadcast to ``sizes`` without copying (-1 keeps a dim)."""
    sizes = int_varargs(sizes, "expand", "size")
    shape = tuple(input.shape)
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    final = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s == -1:
                raise RuntimeError("expand: -1 is not allowed in a leading, non-existing dimension")
            final.append(s)
            continue
        cur = shape[i - lead]
        if s == -1:
            s = cur
        if cur != s and cur != 1:
            raise RuntimeError(f"expand: the expanded size of the tensor ({s}) must match the "
                               f"existing size ({cur}) at non-singleton dimension {i}. Target "
                               f"sizes: {list(sizes)}. Tensor sizes: {list(shape)}")
        final.append(s)
    final = tuple(final)
    arr = input._data.view() if final == shape else _broadcast_view(input._data, final)
    out = _view(input, arr)
    if _tracks(input):
        _attach("ExpandBackward0", input, out, _expand_back, in_shape=shape)
    return out


def expand_as(input: Tensor, other: Tensor) -> Tensor:
    return expand(input, tuple(other.shape))


def broadcast_to(input: Tensor, *size) -> Tensor:
    """``expand`` as a function: ``dg.broadcast_to(x, (2, 3))``, ``x.broadcast_to(2, 3)``."""
    return expand(input, int_varargs(size, "broadcast_to", "size"))


def squeeze(input: Tensor, *dims, dim=None) -> Tensor:
    """Drop size-1 dims (all, or those in ``dim``): ``x.squeeze()``, ``x.squeeze(0, 2)``,
    ``x.squeeze((0, 2))``, ``x.squeeze(dim=1)``."""
    if dims and dims != (None,):
        if dim is not None:
            raise TypeError("squeeze() got multiple values for argument 'dim'")
        dim = int_varargs(dims, "squeeze", "dim")
    shape = tuple(input.shape)
    if dim is None:
        new = tuple(s for s in shape if s != 1)
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = {wrap_dim(d, input.ndim, "squeeze") for d in dims}
        new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    return _reshape_view(input, new, "SqueezeBackward0")


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dim at ``dim``."""
    d = wrap_dim(dim, input.ndim + 1, "unsqueeze")
    shape = tuple(input.shape)
    return _reshape_view(input, shape[:d] + (1,) + shape[d:], "UnsqueezeBackward0")


def _reshape_view(input: Tensor, shape: tuple, name: str) -> Tensor:
    out = _view(input, input._data.reshape(shape))  # adding/removing 1-dims never copies
    if _tracks(input):
        _attach(name, input, out, _reshape_back, in_shape=tuple(input.shape))
    return out


def _embed_back(node, g):
    return (g[node.key],)


def _basic_index(arr: np.ndarray, key) -> np.ndarray:
    """``arr[key]`` for a basic key, always as a view (an all-int key gives a 0-d view, where NumPy
    would return a scalar copy)."""
    res = arr[key]
    if not isinstance(res, (np.ndarray, DeviceArray)):
        res = arr[(*(key if isinstance(key, tuple) else (key,)), Ellipsis)]
    return res


def embed(g: Tensor, shape: tuple, key) -> Tensor:
    """A zero tensor of ``shape`` with ``g`` written at ``key`` (the backward of slicing)."""
    out = full_like_array(g._data, shape, 0, g._data.dtype)
    copy_array(g._data, _basic_index(out, key))
    res = _wrap(out, g.dtype)
    if _tracks(g):
        _attach("EmbedBackward0", g, res, _embed_back, key=key)
    return res


def _select_back(node, g):
    return (embed(g, node.in_shape, node.key),)


def basic_view(input: Tensor, key, name: str = "SliceBackward0") -> Tensor:
    """A view through a NumPy basic index (ints, slices, None, Ellipsis) with its gradient."""
    out = _view(input, _basic_index(input._data, key))
    if _tracks(input):
        _attach(name, input, out, _select_back, in_shape=tuple(input.shape), key=key)
    return out


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """The slice ``start:start+length`` of dim ``dim`` (a view)."""
    d = wrap_dim(dim, input.ndim, "narrow")
    size = input.shape[d]
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise IndexError(f"narrow: start ({start}) + length ({length}) exceeds dimension size "
                         f"({size}) of {describe(input)}")
    key = (slice(None),) * d + (slice(start, start + length),)
    return basic_view(input, key)


def select(input: Tensor, dim: int, index: int) -> Tensor:
    d = wrap_dim(dim, input.ndim, "select")
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{tuple(input.shape)} at dimension {d}")
    return basic_view(input, (slice(None),) * d + (index % size,), "SelectBackward0")


def _diag_view(arr: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """A view of a diagonal; unlike NumPy's ``diagonal`` it is writable."""
    start_dim = d2 if offset >= 0 else d1
    sub = arr[(slice(None),) * start_dim + (slice(abs(offset), None),)]
    rest = [i for i in range(arr.ndim) if i not in (d1, d2)]
    shape = [sub.shape[i] for i in rest] + [min(sub.shape[d1], sub.shape[d2])]
    strides = [sub.strides[i] for i in rest] + [sub.strides[d1] + sub.strides[d2]]
    if type(arr) is not np.ndarray:
        return sub.as_strided(shape, strides, writeable=arr.flags.writeable)
    return np.lib.stride_tricks.as_strided(sub, shape=shape, strides=strides,
                                           writeable=arr.flags.writeable)


def _diagonal_back(node, g):
    return (embed_diagonal(g, node.in_shape, node.offset, node.d1, node.d2),)


def _embed_diagonal_back(node, g):
    return (diagonal(g, node.offset, node.d1, node.d2),)


def embed_diagonal(g: Tensor, shape: tuple, offset: int, d1: int, d2: int) -> Tensor:
    """Zeros of ``shape`` with ``g`` on the given diagonal (the backward of ``diagonal``)."""
    out = full_like_array(g._data, shape, 0, g._data.dtype)
    copy_array(g._data, _diag_view(out, offset, d1, d2))
    res = _wrap(out, g.dtype)
    if _tracks(g):
        _attach("DiagEmbedBackward0", g, res, _embed_diagonal_back, offset=offset, d1=d1, d2=d2)
    return res


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of the 2-D planes ``(dim1, dim2)`` as a view, in the last dim."""
    nd = input.ndim
    d1, d2 = wrap_dim(dim1, nd, "diagonal"), wrap_dim(dim2, nd, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    out = _view(input, _diag_view(input._data, offset, d1, d2))
    if _tracks(input):
        _attach("DiagonalBackward0", input, out, _diagonal_back, in_shape=tuple(input.shape),
                offset=offset, d1=d1, d2=d2)
    return out


# --- copies -------------------------------------------------------------------------------

def _identity_back(node, g):
    return (g,)


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own memory (differentiable), laid out like ``input`` where that is a
    transposed or permuted one (PyTorch's ``preserve_format``); ``contiguous()`` gives C order.

    Example:
        >>> import dynagrad as dg
        >>> dg.zeros(2, 3).t().clone().stride()
        (1, 3)
    """
    arr = input._data
    order = output_dim_order(arr.shape, [arr]) if type(arr) is np.ndarray else None
    if order is None:
        data = fresh_copy(arr)
    else:  # a C-order copy of the permuted view, permuted back
        data = fresh_copy(arr.transpose(order)).transpose(np.argsort(order))
    return _tracked_copy(input, data)


def contiguous(input: Tensor, memory_format=None) -> Tensor:
    """``self`` if already C-contiguous, else a contiguous copy."""
    arr = input._data
    return input if arr.flags.c_contiguous else _tracked_copy(input, fresh_copy(arr))


def _tracked_copy(input: Tensor, data) -> Tensor:
    """``data`` (a copy of ``input``'s) as a Tensor whose gradient flows back to ``input``."""
    out = _wrap(data, input.dtype)
    if _tracks(input):
        _attach("CloneBackward0", input, out, _identity_back)
    return out


def _to_back(node, g):
    """Back to the source's dtype and device (the node of both dtype and device copies)."""
    if g.dtype.is_complex and not node.src_dtype.is_complex:  # a real source: the real part
        g = g.real
    return (g.to(node.src_device, node.src_dtype),)


def to_dtype(input: Tensor, dtype, copy: bool = False) -> Tensor:
    """Convert to ``dtype`` (float->int truncates toward zero)."""
    if dtype is input.dtype:
        return clone(input) if copy else input
    src = input._data
    if input.dtype.is_complex and not dtype.is_complex:  # the real parts, as PyTorch (warned)
        import warnings
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                      stacklevel=3)
        src = src[..., None].view(input.dtype.to_real().np)[..., 0]
    out = _wrap(src.astype(dtype.np), dtype)
    if _tracks(input) and (dtype.is_floating_point or dtype.is_complex):
        _attach("ToCopyBackward0", input, out, _to_back, src_dtype=input.dtype,
                src_device=input.device)
    return out


def _cat_back(node, g):
    grads, start = [], 0
    for size in node.sizes:
        grads.append(None if size is None else g.narrow(node.dim, start, size))
        start += size or 0
    return tuple(grads)


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dim (1-D empty tensors are skipped, as PyTorch)."""
    tensors = [as_tensor_arg(t, "cat") for t in tensors]
    if not tensors:
        raise RuntimeError("cat(): expected a non-empty list of Tensors")
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
    ref = parts[0]
    if ref.ndim == 0:
        raise RuntimeError("cat(): zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(dim, ref.ndim, "cat")
    from ..dtypes import result_type
    out_dt = result_type(*parts)
    for i, t in enumerate(parts):
        if t.ndim != ref.ndim or any(a != b for k, (a, b) in enumerate(zip(t.shape, ref.shape))
                                     if k != d):
            raise RuntimeError(f"cat(): Sizes of tensors must match except in dimension {d}. "
                               f"Expected {tuple(ref.shape)} but got {tuple(t.shape)} for tensor "
                               f"number {i} in the list")
    shape = list(ref.shape)
    shape[d] = sum(t.shape[d] for t in parts)
    device = common_device("cat", parts)
    # (a large CPU result from the pool: a fresh one page-faults)
    out = memory.empty(tuple(shape), out_dt.np) if device is None else empty(
        tuple(shape), out_dt.np, device)
    start = 0
    for t in parts:
        n = t.shape[d]
        copy_array(t._data, out[(slice(None),) * d + (slice(start, start + n),)])
        start += n
    res = _wrap(out, out_dt)
    if grad_mode.GRAD_ENABLED[0] and any(t._requires_grad for t in tensors):
        node_cls = _NODE_CLASSES.setdefault("CatBackward0", node_class("CatBackward0", _cat_back))
        node = node_cls()
        node.dim = d
        kept = {id(t) for t in parts}
        node.sizes = [t.shape[d] if id(t) in kept else None for t in tensors]
        record(node, tensors, (res,))
    return res


def stack(tensors, dim: int = 0) -> Tensor:
    """Join same-shape tensors along a new dim."""
    tensors = [as_tensor_arg(t, "stack") for t in tensors]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} at "
                               f"entry {i}")
    d = wrap_dim(dim, tensors[0].ndim + 1, "stack")
    return cat([unsqueeze(t, d) for t in tensors], d)


def hstack(tensors) -> Tensor:
    """Join along dim 1 (dim 0 for 1-D tensors); 0-d tensors count as 1-D."""
    tensors = [as_tensor_arg(t, "hstack") for t in tensors]
    tensors = [t.reshape(1) if t.ndim == 0 else t for t in tensors]
    return cat(tensors, 0 if tensors and tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """Join along dim 0; 0-d and 1-D tensors count as rows."""
    return cat([t if t.ndim >= 2 else t.reshape(1, -1) for t in map(
        lambda x: as_tensor_arg(x, "vstack"), tensors)], 0)


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Views of consecutive pieces: equal ``split_size`` pieces or the given ``sections``."""
    d = wrap_dim(dim, tensor.ndim, "split")
    size = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size:
            raise RuntimeError(f"split: split_size must be positive, got {step}")
        sections = [min(step, size - i) for i in range(0, size, step)] if size else [0]
    else:
        sections = list(split_size_or_sections)
        if sum(sections) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got split_sizes="
                               f"{sections}")
    out, start = [], 0
    for n in sections:
        out.append(narrow(tensor, d, start, n))
        start += n
    return tuple(out)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """Split into ``chunks`` pieces of size ceil(n / chunks) (the last may be smaller)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input.ndim, "chunk")
    step = max(1, -(-input.shape[d] // chunks))
    return split(input, step, d)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    """Views of each slice along ``dim`` (that dim removed)."""
    d = wrap_dim(dim, input.ndim, "unbind")
    return tuple(select(input, d, i) for i in range(input.shape[d]))


def _repeat_back(node, g):
    sizes = []
    for r, s in zip(node.reps, node.padded):
        sizes.extend((r, s))
    g = g.reshape(sizes).sum(tuple(range(0, 2 * len(node.reps), 2)))
    return (g.reshape(node.in_shape),)


def repeat(input: Tensor, *repeats) -> Tensor:
    """Tile the data ``repeats[i]`` times along each dim (a copy)."""
    reps = int_varargs(repeats, "repeat", "repeats")
    if len(reps) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    padded = (1,) * (len(reps) - input.ndim) + tuple(input.shape)
    src = input._data.reshape(padded)
    # view the output as (r0, s0, r1, s1, ...) and broadcast the input into it
    inter = []
    for r, s in zip(reps, padded):
        inter.extend((r, s))
    out = empty_like_array(src, tuple(inter), input._data.dtype)
    copy_array(src.reshape(tuple(x for s in padded for x in (1, s))), out)
    res = _wrap(out.reshape(tuple(r * s for r, s in zip(reps, padded))), input.dtype)
    if _tracks(input):
        _attach("RepeatBackward0", input, res, _repeat_back, reps=reps, padded=padded,
                in_shape=tuple(input.shape))
    return res


def tile(input: Tensor, *dims) -> Tensor:
    """Like ``repeat``, but ``dims`` shorter than the tensor's rank is padded with ones;
    ``tile(2, 3)``, ``tile((2, 3))`` and ``tile(2)`` as PyTorch."""
    dims = int_varargs(dims, "tile", "dims")
    dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def _flip_back(node, g):
    return (flip(g, node.dims),)


def flip(input: Tensor, *args, dims=None) -> Tensor:
    """Reverse the order along ``dims`` (a copy): ``x.flip(0, 2)``, ``x.flip((0, 2))``,
    ``dg.flip(x, dims=[0])``."""
    if dims is None or args:
        if dims is not None:
            raise TypeError("flip() got multiple values for argument 'dims'")
        dims = int_varargs(args, "flip", "dims")
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    dims = tuple(wrap_dim(d, input.ndim, "flip") for d in dims)
    key = tuple(slice(None, None, -1) if i in dims else slice(None) for i in range(input.ndim))
    res = _wrap(fresh_copy(input._data[key]), input.dtype)
    if _tracks(input):
        _attach("FlipBackward0", input, res, _flip_back, dims=dims)
    return res


def _roll_back(node, g):
    return (roll(g, tuple(-s for s in node.shifts), node.dims),)


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Shift elements cyclically along ``dims`` (flattened when None)."""
    if dims is None:
        return roll(input.flatten(), shifts, 0).view(tuple(input.shape))
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims: {len(dims)}")
    dims = tuple(wrap_dim(d, input.ndim, "roll") for d in dims)
    arr = input._data
    for s, d in zip(shifts, dims):
        n = arr.shape[d]
        if n == 0:
            continue
        s %= n
        out = empty_like_array(arr, arr.shape, arr.dtype)
        pre = (slice(None),) * d
        copy_array(arr[pre + (slice(n - s, n),)], out[pre + (slice(0, s),)])
        copy_array(arr[pre + (slice(0, n - s),)], out[pre + (slice(s, n),)])
        arr = out
    res = _wrap(arr if arr is not input._data else fresh_copy(arr), input.dtype)
    if _tracks(input):
        _attach("RollBackward0", input, res, _roll_back, shifts=shifts, dims=dims)
    return res


def _tri(input: Tensor, diagonal: int, lower: bool) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError(f"{'tril' if lower else 'triu'}: input tensor must have at least 2 "
                           f"dimensions (got {describe(input)})")
    n, m = input.shape[-2:]
    keep = np.tri(n, m, diagonal, dtype=bool) if lower else ~np.tri(n, m, diagonal - 1, dtype=bool)
    from .elementwise import where
    on = None if type(input._data) is np.ndarray else input._data.device_index
    return where(_wrap(move_array(keep, on), _BOOL), input,
                 _wrap(move_array(np.zeros((), input.dtype.np), on), input.dtype))


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """Keep the lower triangle (``j - i <= diagonal``) of the last two dims, zero the rest."""
    return _tri(input, diagonal, True)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """Keep the upper triangle (``j - i >= diagonal``) of the last two dims, zero the rest."""
    return _tri(input, diagonal, False)


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims: ``(left, right, top, bottom, ...)`` as PyTorch.

    Modes: ``constant`` (with ``value``), ``reflect``, ``replicate``, ``circular``.
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise RuntimeError(f"pad: padding length must be even and at most 2 * input.dim() "
                           f"(got {len(pad)} for {describe(input)})")
    k = len(pad) // 2
    widths = [(0, 0)] * (input.ndim - k) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(k))]
    if mode == "constant":
        return _pad_constant(input, widths, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: mode {mode!r} is not one of 'constant', 'reflect', "
                                  "'replicate', 'circular'")
    out = input
    on = None if type(input._data) is np.ndarray else input._data.device_index
    from .indexing import index_select
    for d, (lo, hi) in enumerate(widths):
        if lo == 0 and hi == 0:
            continue
        n = input.shape[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"pad: padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({lo}, {hi}) at dimension {d} of "
                               f"input {tuple(input.shape)}")
        idx = np.arange(-lo, n + hi)
        if mode == "reflect":
            period = 2 * (n - 1)
            idx = np.abs(idx) % period if period else np.zeros_like(idx)
            idx = np.where(idx >= n, period - idx, idx)
        elif mode == "replicate":
            idx = np.clip(idx, 0, n - 1)
        else:
            idx = idx % n
        out = index_select(out, d, _wrap(move_array(idx.astype(np.int64), on), _INT64))
    return out if out is not input else clone(input)  # always a new tensor, as PyTorch


def _pad_back(node, g):
    return (g[node.key],)


def _pad_constant(input: Tensor, widths, value) -> Tensor:
    if any(lo < 0 or hi < 0 for lo, hi in widths):  # negative padding crops
        key = tuple(slice(-lo if lo < 0 else 0, (s + hi) if hi < 0 else None)
                    for (lo, hi), s in zip(widths, input.shape))
        input = basic_view(input, key)
        widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    shape = tuple(s + lo + hi for s, (lo, hi) in zip(input.shape, widths))
    out = full_like_array(input._data, shape, value, input._data.dtype)
    key = tuple(slice(lo, lo + s) for s, (lo, _) in zip(input.shape, widths))
    copy_array(input._data, out[key])
    res = _wrap(out, input.dtype)
    if _tracks(input):
        _attach("ConstantPadNdBackward0", input, res, _pad_back, key=key)
    return res


def inplace_view(fn):
    """The in-place form of a view op (``x.squeeze_()``, ``x.t_()``): ``x`` itself takes the
    view's shape and strides over the same memory; with autograd, ``x`` becomes the view op's
    output in the graph, as PyTorch's in-place views."""
    def method_(self, *args, **kwargs):
        if _tracks(self) and self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        old = self._alias()
        old._requires_grad, old.grad_fn, old._output_nr = (self._requires_grad, self.grad_fn,
                                                           self._output_nr)
        old._base = self._base  # (as_strided_ reads the storage through the base)
        res = fn(old, *args, **kwargs)
        self._data = res._data
        self._vc[0] += 1
        if res.grad_fn is not None:
            self.grad_fn, self._output_nr = res.grad_fn, res._output_nr
        return self
    method_.__name__ = fn.__name__ + "_"
    method_.__doc__ = f"In-place ``{fn.__name__}``: this tensor takes the view's shape."
    return method_


def _inplace_copy(fn):
    """The in-place form of a copying op: the result written into ``self`` (``x.tril_()``)."""
    def method_(self, *args, **kwargs):
        from .elementwise import rebase_inplace
        if _tracks(self):
            if self.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                   "in-place operation.")
            return rebase_inplace(self, lambda old: fn(old, *args, **kwargs))
        copy_array(fn(self, *args, **kwargs)._data, self._data)
        self._vc[0] += 1
        return self
    method_.__name__ = fn.__name__ + "_"
    method_.__doc__ = f"In-place ``{fn.__name__}``."
    return method_


_INPLACE = {"transpose": inplace_view(transpose), "t": inplace_view(t),
            "squeeze": inplace_view(squeeze), "unsqueeze": inplace_view(unsqueeze),
            "tril": _inplace_copy(tril), "triu": _inplace_copy(triu)}

for _name, _fn in (("view", view), ("reshape", reshape), ("view_as", view_as),
                   ("reshape_as", reshape_as), ("flatten", flatten), ("unflatten", unflatten),
                   ("transpose", transpose), ("t", t), ("permute", permute),
                   ("movedim", movedim), ("expand", expand), ("expand_as", expand_as),
                   ("broadcast_to", broadcast_to), ("squeeze", squeeze), ("unsqueeze", unsqueeze),
                   ("narrow", narrow), ("select", select), ("diagonal", diagonal),
                   ("clone", clone), ("contiguous", contiguous), ("cat", cat), ("stack", stack),
                   ("hstack", hstack), ("vstack", vstack), ("split", split), ("chunk", chunk),
                   ("unbind", unbind), ("repeat", repeat), ("tile", tile), ("flip", flip),
                   ("roll", roll), ("tril", tril), ("triu", triu), ("pad", pad)):
    register(_name, _fn, "movement", inplace=_INPLACE.get(_name),
             method=_name not in ("cat", "stack", "hstack", "vstack", "pad"),
             functional=_name not in ("view", "view_as", "reshape_as", "expand", "expand_as",
                                      "contiguous"))
register("swapaxes", transpose, "alias", inplace=_INPLACE["transpose"])
register("swapdims", transpose, "alias", inplace=_INPLACE["transpose"])
register("moveaxis", movedim, "alias")
register("concat", cat, "alias", method=False)
register("concatenate", cat, "alias", method=False)
