"""Rearranging ops composed of the movement primitives: rotations, splits, stacks, at-least-n-d,
broadcasting of several tensors, grids, strided views and sliding windows.

Each op is a composition of the views and copies of ``ops.movement`` (and ``index_select`` /
``index_add`` of ``ops.indexing`` where positions move), so gradients, double backward and the
CUDA target come from those ops. Views stay views: ``tensor_split`` pieces, ``atleast_*d``,
``broadcast_tensors``, ``meshgrid``, ``movedim``, ``unfold`` and ``as_strided`` share memory and
the version counter with their input, as PyTorch's.

Example:
    >>> import dynagrad as dg
    >>> x = dg.arange(6.0).view(2, 3)
    >>> x.rot90().tolist(), [p.shape[0] for p in dg.tensor_split(dg.arange(7), 3)]
    ([[2.0, 5.0], [1.0, 4.0], [0.0, 3.0]], [3, 2, 2])
"""
from __future__ import annotations

import itertools
import numbers

import numpy as np

from ..dtypes import int64 as _INT64
from ..errors import describe
from ..kernels.buffers import device_index, host, move_array
from ..shapes import broadcast_shapes as _broadcast
from ..shapes import wrap_dim
from ..tensor import Size, Tensor, _view, _wrap
from ._util import as_tensor_arg
from .indexing import index_add, index_select
from .movement import (
    _attach,
    _tracks,
    cat,
    expand,
    flip,
    hstack,
    inplace_view,
    int_varargs,
    narrow,
    reshape,
    split,
    transpose,
    unsqueeze,
    vstack,
)
from .registry import FUNCTIONS, register


def _positions(values, like: Tensor) -> Tensor:
    """An int64 tensor of ``values`` on ``like``'s device."""
    return _wrap(move_array(np.ascontiguousarray(values, dtype=np.int64), device_index(like._data)),
                 _INT64)


# --- rotations and flips ------------------------------------------------------------------

def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane ``dims``, from the first dim towards the
    second (a copy).

    Example: ``dg.tensor([[1, 2], [3, 4]]).rot90().tolist() == [[2, 4], [1, 3]]``.
    """
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (wrap_dim(d, input.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return transpose(flip(input, dims=(d1,)), d0, d1)
    if k == 2:
        return flip(input, dims=(d0, d1))
    if k == 3:
        return transpose(flip(input, dims=(d0,)), d0, d1)
    return input.clone()


def fliplr(input: Tensor) -> Tensor:
    """Reverse the columns (dim 1) of a tensor of at least 2 dims (a copy)."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, dims=(1,))


def flipud(input: Tensor) -> Tensor:
    """Reverse the rows (dim 0) of a tensor of at least 1 dim (a copy)."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, dims=(0,))


# --- splits -------------------------------------------------------------------------------

def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """Views of ``input`` split along ``dim``: into ``n`` nearly equal pieces (the first
    ``size % n`` one longer) for an int ``n``, or at the given indices (a list, or a 0-d / 1-d
    int64 tensor).

    Example: ``[p.tolist() for p in dg.arange(5).tensor_split([1, 3])] == [[0], [1, 2], [3, 4]]``.
    """
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = wrap_dim(dim, input.ndim, "tensor_split")
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec.dtype is not _INT64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {spec.dtype}")
        if spec.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {spec.ndim} dims")
        spec = int(spec.item()) if spec.ndim == 0 else [int(v) for v in host(spec._data)]
    size = input.shape[d]
    if isinstance(spec, numbers.Integral):
        n = int(spec)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds = [i * q + min(i, r) for i in range(n + 1)]
    else:
        bounds = [0] + [min(max(int(i) + (size if i < 0 else 0), 0), size) for i in spec] + [size]
    # a cut before the previous one gives an empty piece (PyTorch's rule)
    return tuple(narrow(input, d, lo, max(hi - lo, 0)) for lo, hi in itertools.pairwise(bounds))


def _directional_split(name: str, dim: int, least: int):
    def fn(input: Tensor, *indices_or_sections) -> tuple:
        if input.ndim < least:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, "
                               f"but got a tensor with {input.ndim} dimensions!")
        d = 0 if name == "hsplit" and input.ndim == 1 else dim
        if len(indices_or_sections) == 1 and isinstance(indices_or_sections[0], numbers.Integral):
            n = int(indices_or_sections[0])
            if n == 0 or input.shape[d] % n:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but "
                                   f"the size of the dimension {input.shape[d]} is not divisible "
                                   f"by the split_size {n}!")
            return tensor_split(input, n, d)
        return tensor_split(input, list(int_varargs(indices_or_sections, name, "indices")), d)
    fn.__name__ = name
    fn.__doc__ = (f"``tensor_split`` along dim {dim}"
                  f"{' (dim 0 for a 1-D tensor)' if name == 'hsplit' else ''}; an int must divide "
                  f"the dim evenly. Views.")
    return fn


hsplit = _directional_split("hsplit", 1, 1)
vsplit = _directional_split("vsplit", 0, 2)
dsplit = _directional_split("dsplit", 2, 3)


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Views of consecutive pieces of the given sizes along ``dim`` (they must sum to its size)."""
    if isinstance(split_sizes, numbers.Integral):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 1) must be tuple "
                        f"of ints, not {type(split_sizes).__name__}")
    return split(input, list(split_sizes), dim)


# --- at least n dims, stacks --------------------------------------------------------------

def _atleast(n: int):
    def fn(*tensors):
        single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tuple(tensors[0])
        out = []
        for t in tensors:
            t = as_tensor_arg(t, f"atleast_{n}d")
            if t.ndim < n:
                if n == 3 and t.ndim == 2:
                    t = unsqueeze(t, 2)
                elif n == 3 and t.ndim == 1:
                    t = reshape(t, (1, t.shape[0], 1))
                else:
                    t = reshape(t, (1,) * (n - t.ndim) + tuple(t.shape))
            out.append(t)
        return out[0] if single else tuple(out)
    fn.__name__ = f"atleast_{n}d"
    fn.__doc__ = (f"Each tensor viewed with at least {n} dims (size-1 dims added"
                  f"{' around a 1-D one: (n,) -> (1, n, 1), and after a 2-D one' if n == 3 else ''}"
                  f" in front); one tensor in, one out; several (or a list) in, a tuple out.")
    return fn


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


def ravel(input: Tensor) -> Tensor:
    """The elements in C order as a 1-D tensor (a view when the layout allows)."""
    return reshape(input, (-1,))


def column_stack(tensors) -> Tensor:
    """Join as columns: 0-d and 1-D tensors become (n, 1) columns, then ``hstack``."""
    tensors = [as_tensor_arg(t, "column_stack") for t in tensors]
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return hstack([reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in tensors])


def dstack(tensors) -> Tensor:
    """Join along dim 2 after ``atleast_3d``."""
    tensors = [as_tensor_arg(t, "dstack") for t in tensors]
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat(list(atleast_3d(tensors)), 2)


# --- broadcasting several tensors ---------------------------------------------------------

def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of ``shapes`` broadcast to (an int stands for a 1-D shape).

    Example: ``dg.broadcast_shapes((2, 1), (3,)) == dg.Size([2, 3])``.
    """
    shapes = [(int(s),) if isinstance(s, numbers.Integral) else tuple(s) for s in shapes]
    out: list = []
    for k, shape in enumerate(shapes):
        if any(s < 0 for s in shape):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                               f"{list(shape)}")
        out = [1] * (len(shape) - len(out)) + out
        for i in range(1, len(shape) + 1):
            have, new = out[-i], shape[-i]
            if new != have and new != 1 and have != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {new} at "
                                   f"-{i}! Mismatching argument at index {k} had {shape}; but "
                                   f"expected shape should be broadcastable to {out}")
            if have == 1:
                out[-i] = new
    return Size(out)


def broadcast_tensors(*tensors) -> tuple:
    """Views of the tensors expanded to their common broadcast shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    tensors = [as_tensor_arg(t, "broadcast_tensors") for t in tensors]
    shape = _broadcast("broadcast_tensors", *(tuple(t.shape) for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids of 0-d / 1-D tensors (views): ``indexing="ij"`` (the default) gives
    shape ``(len(t0), len(t1), ...)``, ``"xy"`` swaps the first two (Cartesian)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    tensors = [as_tensor_arg(t, "meshgrid") for t in tensors]
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {describe(t)}")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(tensors)
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = tuple(t.numel() for t in order)
    n = len(order)
    grids = [expand(reshape(t, (1,) * k + (-1,) + (1,) * (n - k - 1)), shape)
             for k, t in enumerate(order)]
    if swap:  # the grids of the swapped order, each back at its tensor's place
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# --- strided views ------------------------------------------------------------------------

def _storage_view(input: Tensor, size, stride, offset: int):
    """A view of ``input``'s storage (the memory of its base tensor) at ``size``/``stride``
    elements from element ``offset`` of that storage."""
    arr, item = input._data, input.dtype.itemsize
    span = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    limit = _storage_size(input)
    if offset < 0 or offset + span > limit:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{(offset + span) * item} are out of bounds for storage of size "
                           f"{limit * item}")
    byte_strides = tuple(s * item for s in stride)
    if type(arr) is not np.ndarray:
        return arr.as_strided(tuple(size), byte_strides, offset * item - arr.offset,
                              writeable=arr.flags.writeable)
    buffer = arr
    while isinstance(buffer.base, np.ndarray):
        buffer = buffer.base
    return np.ndarray(tuple(size), arr.dtype, buffer=buffer, offset=offset * item,
                      strides=byte_strides)


def _storage_size(input: Tensor) -> int:
    """The elements of ``input``'s storage: up to the end of its base tensor."""
    root = input._base if input._base is not None else input
    return root.storage_offset() + root._data.size


def _element_positions(size, stride, offset: int) -> np.ndarray:
    """The storage position of every element of a strided view, in C order."""
    pos = np.full(tuple(size), offset, np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        pos += (np.arange(n, dtype=np.int64) * s).reshape((-1,) + (1,) * (len(size) - d - 1))
    return pos.reshape(-1)


def _as_strided_back(node, g):
    """Each element's gradient added at its storage position, then read back through the
    input's own geometry (overlapping outputs add up, as PyTorch)."""
    storage = g.new_zeros(node.storage)
    flat = index_add(storage, 0, _positions(node.out_pos, g), reshape(g, (-1,)))
    grad = index_select(flat, 0, _positions(node.in_pos, g))
    return (reshape(grad, node.in_shape),)


def as_strided(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s memory with the given sizes and strides (in elements) starting at
    ``storage_offset`` (the input's own by default). As in PyTorch, the view may overlap itself;
    writes through an overlapping view are undefined.

    Example: ``dg.arange(4.0).as_strided((3, 2), (1, 1)).tolist() == [[0, 1], [1, 2], [2, 3]]``.
    """
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape (got size {list(size)}, "
                           f"stride {list(stride)})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    out = _view(input, _storage_view(input, size, stride, offset))
    if _tracks(input):
        _attach("AsStridedBackward0", input, out, _as_strided_back, in_shape=tuple(input.shape),
                storage=(_storage_size(input),),
                out_pos=_element_positions(size, stride, offset),
                in_pos=_element_positions(tuple(input.shape), input.stride(),
                                          input.storage_offset()))
    return out


def _unfold_back(node, g):
    """Each window's gradient added back at the positions it read (windows may overlap)."""
    d = node.dim
    moved = g.movedim(-1, d + 1)  # (..., windows, size, ...)
    shape = tuple(moved.shape)
    merged = reshape(moved, shape[:d] + (shape[d] * shape[d + 1],) + shape[d + 2:])
    return (index_add(g.new_zeros(node.in_shape), d, _positions(node.pos, g), merged),)


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every window of ``size`` elements along ``dimension``, ``step`` apart, as a new last dim
    (a view).

    Example: ``dg.arange(5).unfold(0, 2, 2).tolist() == [[0, 1], [2, 3]]``.
    """
    d = wrap_dim(dimension, input.ndim, "unfold")
    n = input.shape[d] if input.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    arr, windows = input._data, (n - size) // step + 1
    if input.ndim == 0:
        return reshape(input, (1,))
    shape = arr.shape[:d] + (windows,) + arr.shape[d + 1:] + (size,)
    strides = arr.strides[:d] + (arr.strides[d] * step,) + arr.strides[d + 1:] + (arr.strides[d],)
    view = (np.lib.stride_tricks.as_strided(arr, shape, strides, writeable=arr.flags.writeable)
            if type(arr) is np.ndarray else arr.as_strided(shape, strides,
                                                          writeable=arr.flags.writeable))
    out = _view(input, view)
    if _tracks(input):
        pos = (np.arange(windows)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
        _attach("UnfoldBackward0", input, out, _unfold_back, in_shape=tuple(input.shape), dim=d,
                pos=pos)
    return out


def sum_to_size(input: Tensor, *size) -> Tensor:
    """Sum ``input`` down to ``size``, which must broadcast to ``input``'s shape."""
    from .elementwise import sum_to
    size = int_varargs(size, "sum_to_size", "size")
    shape = tuple(input.shape)
    if len(size) > len(shape) or any(s != 1 and s != t for s, t in
                                     zip(reversed(size), reversed(shape))):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    return sum_to(input, size) if size != shape else input


# --- repeat_interleave --------------------------------------------------------------------

def repeat_interleave(input: Tensor, repeats=None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Repeat each element ``repeats`` times (an int, or one count per element along ``dim``; a
    flattened input when ``dim`` is None). ``repeat_interleave(counts)`` alone gives
    ``arange(len(counts))`` repeated by the counts.

    Example: ``dg.tensor([1, 2]).repeat_interleave(2).tolist() == [1, 1, 2, 2]``.
    """
    if repeats is None:  # repeat_interleave(repeats): the positions, repeated
        counts = as_tensor_arg(input, "repeat_interleave", "repeats")
        from ..creation import arange
        return repeat_interleave(arange(counts.numel(), device=counts.device), counts, 0,
                                 output_size=output_size)
    x = reshape(input, (-1,)) if dim is None else input
    d = 0 if dim is None else wrap_dim(dim, x.ndim, "repeat_interleave")
    n = x.shape[d] if x.ndim else 1
    if isinstance(repeats, Tensor):
        if repeats.dtype.is_floating_point or repeats.dtype.name == "bool":
            raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                      f"'{repeats.dtype}'")
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        counts = host(repeats._data).astype(np.int64).reshape(-1)
        if counts.size == 1:
            counts = np.full(n, counts[0], np.int64)
        elif counts.size != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {counts.size} and input.size(0) = {n}")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
    else:
        if int(repeats) < 0:
            raise RuntimeError("Repeats must be non-negative")
        counts = np.full(n, int(repeats), np.int64)
    total = int(counts.sum())
    if output_size is not None and output_size != total:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {total} but got "
                           f"{output_size}")
    if x.ndim == 0:
        x = reshape(x, (1,))
    return index_select(x, d, _positions(np.repeat(np.arange(n), counts), x))


# --- registration -------------------------------------------------------------------------

for _name, _fn, _method in (
        ("rot90", rot90, True), ("fliplr", fliplr, True), ("flipud", flipud, True),
        ("tensor_split", tensor_split, True),
        ("hsplit", hsplit, True), ("vsplit", vsplit, True), ("dsplit", dsplit, True),
        ("split_with_sizes", split_with_sizes, True), ("atleast_1d", atleast_1d, False),
        ("atleast_2d", atleast_2d, False), ("atleast_3d", atleast_3d, False),
        ("ravel", ravel, True), ("column_stack", column_stack, False),
        ("dstack", dstack, False), ("broadcast_tensors", broadcast_tensors, False),
        ("meshgrid", meshgrid, False), ("as_strided", as_strided, True),
        ("sum_to_size", sum_to_size, True),
        ("repeat_interleave", repeat_interleave, True)):
    register(_name, _fn, "movement", method=_method,
             inplace=inplace_view(as_strided) if _name == "as_strided" else None,
             functional=_name != "sum_to_size")
register("row_stack", vstack, "alias", method=False)
# Tensor.unfold (sliding windows); the op name "unfold" is nn.functional.unfold's (im2col)
register("unfold_windows", unfold, "movement", method="unfold", functional=False)
FUNCTIONS["broadcast_shapes"] = broadcast_shapes  # a shape function, not an op on tensors
FUNCTIONS["as_strided_"] = Tensor.as_strided_  # PyTorch has this in-place form as a function too
