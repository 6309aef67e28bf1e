"""Structure-building ops: diagonals (diag, diag_embed, diagflat, trace, fill_diagonal_), the
indices of triangles, block-diagonal matrices, Cartesian products and combinations.

All compose the movement and indexing ops (``embed_diagonal``, ``diagonal``, ``pad``, ``cat``,
``index_select``, ``meshgrid``), so their gradients and the CUDA target come from those ops; the
index tables (triangles, combinations) are built on the host and moved to the input's device.

Example:
    >>> import dynagrad as dg
    >>> dg.diag(dg.tensor([1, 2])).tolist(), dg.tril_indices(2, 2).tolist()
    ([[1, 0], [0, 2]], [[0, 1, 1], [0, 0, 1]])
"""
from __future__ import annotations

import itertools
import numbers

import numpy as np

from .. import dtypes
from ..device import as_device
from ..kernels.buffers import device_index, move_array
from ..shapes import wrap_dim
from ..tensor import Tensor, _wrap
from ._util import as_tensor_arg
from .indexing import index_select, setitem
from .movement import cat, embed_diagonal, pad, reshape, stack
from .movement import diagonal as _diagonal  # (diag's argument is named diagonal)
from .rearrange import meshgrid
from .registry import register


def _int_table(values, like: Tensor | None, device=None, dtype=dtypes.int64) -> Tensor:
    """An integer tensor of ``values`` on ``like``'s device (or ``device``)."""
    if like is not None:
        where = device_index(like._data)
    else:
        dev = as_device(device)
        where = dev.index if dev.type == "cuda" else None
    return _wrap(move_array(np.ascontiguousarray(values, dtype=dtype.np), where), dtype)


# --- diagonals ----------------------------------------------------------------------------

def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D input: the square matrix with it on diagonal ``diagonal``; a 2-D input: that
    diagonal, copied.

    Example: ``dg.diag(dg.tensor([[1, 2], [3, 4]])).tolist() == [1, 4]``.
    """
    x = as_tensor_arg(input, "diag")
    if x.ndim == 1:
        n = x.shape[0] + abs(diagonal)
        return embed_diagonal(x, (n, n), diagonal, 0, 1)
    if x.ndim == 2:
        return _diagonal(x, diagonal, 0, 1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")



def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Each last-dim vector of ``input`` on diagonal ``offset`` of the planes ``(dim1, dim2)`` of
    a new tensor with one more dim (zeros elsewhere)."""
    x = as_tensor_arg(input, "diag_embed")
    nd = x.ndim + 1
    d1, d2 = wrap_dim(dim1, nd, "diag_embed"), wrap_dim(dim2, nd, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (x.shape[-1] if x.ndim else 1) + abs(offset)
    rest = iter(tuple(x.shape[:-1]))
    shape = tuple(n if k in (d1, d2) else next(rest) for k in range(nd))
    return embed_diagonal(x if x.ndim else reshape(x, (1,)), shape, offset, d1, d2)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The flattened input on diagonal ``offset`` of a square matrix."""
    x = as_tensor_arg(input, "diagflat")
    return diag(reshape(x, (-1,)), offset)


def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix (integers sum in int64, as ``sum``)."""
    x = as_tensor_arg(input, "trace")
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    return _diagonal(x, 0, 0, 1).sum()


def fill_diagonal_(input: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """Write ``fill_value`` on the main diagonal in place (all dims equal from 3-D up); ``wrap``
    starts the diagonal again below a tall matrix's square part, every ``cols + 1`` elements,
    as NumPy."""
    x = input
    if x.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = tuple(x.shape)
    if x.ndim > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if x.ndim == 2:
        rows, cols = shape
        stop = rows * cols if wrap and rows > cols + 1 else min(rows, cols) * (cols + 1)
        flat = np.arange(0, min(stop, rows * cols), cols + 1)
        key = (flat // cols, flat % cols)
    else:
        key = (np.arange(shape[0]),) * x.ndim
    setitem(x, tuple(_int_table(k, x) for k in key), fill_value)
    return x


# --- index tables -------------------------------------------------------------------------

def _triangle(name: str, lower: bool):
    def fn(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None
           ) -> Tensor:
        dt = dtype or dtypes.int64
        if dt not in (dtypes.int64, dtypes.int32):
            raise NotImplementedError(f'"{name}" not implemented for \'{dt}\'')
        if row < 0:
            raise RuntimeError(f"row must be non-negative, got{row}")
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got{col}")
        keep = np.tri(row, col, offset, dtype=bool) if lower else \
            ~np.tri(row, col, offset - 1, dtype=bool)
        return _int_table(np.stack(np.nonzero(keep)).reshape(2, -1), None, device, dt)
    fn.__name__ = name
    fn.__doc__ = (f"The (row, column) indices of the {'lower' if lower else 'upper'} triangle "
                  f"(``j - i {'<=' if lower else '>='} offset``) of a ``row`` x ``col`` matrix, "
                  f"row by row, as a 2 x N tensor.")
    return fn


tril_indices = _triangle("tril_indices", True)
triu_indices = _triangle("triu_indices", False)


# --- block matrices and products ----------------------------------------------------------

def block_diag(*tensors) -> Tensor:
    """The tensors (0-d, 1-D as a row, 2-D) as blocks on the diagonal of one matrix, zeros
    elsewhere; the result has the tensors' promoted dtype."""
    tensors = [as_tensor_arg(t, "block_diag") for t in tensors]
    for k, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {k} has {t.ndim} dimensions")
    if not tensors:
        from ..creation import zeros
        return zeros(1, 0)
    dt = dtypes.result_type(*tensors)
    blocks = [reshape(t, (1, -1)) if t.ndim < 2 else t for t in tensors]
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:  # each block padded with zeros to a full-width band of rows
        right = width - left - b.shape[1]
        rows.append(pad(b.to(dt), (left, right)))
        left += b.shape[1]
    return cat(rows, 0)


def _check_vector(t: Tensor) -> None:
    if t.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


def cartesian_prod(*tensors) -> Tensor:
    """Every combination of one element of each 1-D tensor, as the rows of an (N, k) tensor
    (a single tensor comes back as it is)."""
    tensors = [as_tensor_arg(t, "cartesian_prod") for t in tensors]
    for t in tensors:
        _check_vector(t)
    if len(tensors) == 1:
        return tensors[0]
    return stack([reshape(g, (-1,)) for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of the elements of a 1-D tensor (with repeats when
    ``with_replacement``), in lexicographic order of positions, as rows."""
    x = as_tensor_arg(input, "combinations")
    _check_vector(x)
    if not isinstance(r, numbers.Integral) or r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return x.new_empty(0)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    table = np.array(list(pick(range(x.shape[0]), r)), np.int64).reshape(-1, r)
    return reshape(index_select(x, 0, _int_table(table.reshape(-1), x)), (table.shape[0], r))


for _name, _fn, _method in (
        ("diag", diag, True), ("diag_embed", diag_embed, True), ("diagflat", diagflat, True),
        ("trace", trace, True), ("tril_indices", tril_indices, False),
        ("triu_indices", triu_indices, False), ("block_diag", block_diag, False),
        ("cartesian_prod", cartesian_prod, False), ("combinations", combinations, False),
        ("fill_diagonal_", fill_diagonal_, True)):
    register(_name, _fn, "movement", method=_method, functional=_name != "fill_diagonal_")
