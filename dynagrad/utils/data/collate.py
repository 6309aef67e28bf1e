"""Turning a list of samples into a batch (``default_collate``) and converting single samples
(``default_convert``, used when ``batch_size=None``). Same rules as PyTorch's:

=====================  ==========================================================
sample element         batch element
=====================  ==========================================================
Tensor                 ``stack`` along a new dim 0
NumPy array / scalar   stacked tensor of the same dtype
Python float / int     float64 / int64 tensor (bool: bool tensor)
str / bytes            the list of them, unchanged
Mapping                same mapping type, each key collated
namedtuple             same namedtuple type, each field collated
tuple / list           a list with each position collated (all samples equal length)
=====================  ==========================================================

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.utils.data import default_collate
    >>> default_collate([(1, 2.0), (3, 4.0)])
    [tensor([1, 3]), tensor([2., 4.], dtype=dynagrad.float64)]
"""
from __future__ import annotations

import collections.abc as cabc
from typing import Any

import numpy as np

from ... import dtypes
from ...ops import FUNCTIONS
from ...tensor import Tensor, _wrap

__all__ = ["default_collate", "default_convert"]

_BAD_TYPE = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
             "found {}")


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _numpy_unsupported(arr: np.ndarray) -> bool:
    # strings and objects have no tensor dtype (PyTorch rejects the same kinds)
    return arr.dtype.kind in "SaUO"


def _rebuild(elem, values: list):
    """A container of ``elem``'s type holding ``values`` (mapping values or sequence items)."""
    if isinstance(elem, cabc.Mapping):
        try:
            return type(elem)(zip(elem.keys(), values))
        except TypeError:  # the mapping type cannot be built from pairs
            return dict(zip(elem.keys(), values))
    if _is_namedtuple(elem):
        return type(elem)(*values)
    if isinstance(elem, tuple):
        return values  # PyTorch returns a list for tuples
    try:
        return type(elem)(values)
    except TypeError:  # the sequence type cannot be built from a list
        return values


def _stack_tensors(batch: list[Tensor]) -> Tensor:
    first = batch[0]
    for i, t in enumerate(batch):
        if t.shape != first.shape:
            raise RuntimeError(f"default_collate: stack expects each tensor to be equal size, but "
                               f"got {list(first.shape)} at entry 0 and {list(t.shape)} at entry "
                               f"{i}")
    if any(t.requires_grad for t in batch):
        return FUNCTIONS["stack"](batch, 0)  # keep the graph when samples carry one
    # the common case: one NumPy stack, no graph bookkeeping
    return _wrap(np.stack([t._data for t in batch]), first.dtype)


def default_collate(batch: list) -> Any:
    """Collate a list of samples into a batch (see the module docstring for the rules)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack_tensors(batch)
    if isinstance(elem, np.ndarray) or isinstance(elem, np.generic) and not isinstance(
            elem, (np.str_, np.bytes_)):
        arrs = [np.asarray(b) for b in batch]
        if _numpy_unsupported(arrs[0]):
            raise TypeError(_BAD_TYPE.format(arrs[0].dtype))
        if any(a.shape != arrs[0].shape for a in arrs):
            shapes = [list(a.shape) for a in arrs]
            raise RuntimeError(f"default_collate: stack expects each array to be equal size, but "
                               f"got shapes {shapes}")
        stacked = np.stack(arrs)
        return _wrap(stacked, dtypes.from_numpy_dtype(stacked.dtype))
    if isinstance(elem, bool):
        return _wrap(np.array(batch, dtype=np.bool_), dtypes.bool_)
    if isinstance(elem, float):
        return _wrap(np.array(batch, dtype=np.float64), dtypes.float64)
    if isinstance(elem, int):
        return _wrap(np.array(batch, dtype=np.int64), dtypes.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, cabc.Mapping):
        return _rebuild(elem, [default_collate([d[k] for d in batch]) for k in elem])
    if isinstance(elem, cabc.Sequence):
        n = len(elem)
        if any(len(b) != n for b in batch):
            raise RuntimeError("default_collate: each element in list of batch should be of equal "
                               f"size (got lengths {[len(b) for b in batch]})")
        return _rebuild(elem, [default_collate(list(s)) for s in zip(*batch)])
    raise TypeError(_BAD_TYPE.format(type(elem)))


def default_convert(data: Any) -> Any:
    """Convert NumPy arrays (recursively inside mappings and sequences) to tensors; other values
    are left alone. The collate function when auto-batching is off (``batch_size=None``)."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        if _numpy_unsupported(data):
            return data
        return _wrap(data, dtypes.from_numpy_dtype(data.dtype))
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        arr = np.asarray(data)
        return _wrap(arr, dtypes.from_numpy_dtype(arr.dtype))
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, cabc.Mapping):
        return _rebuild(data, [default_convert(v) for v in data.values()])
    if isinstance(data, cabc.Sequence):
        return _rebuild(data, [default_convert(d) for d in data])
    return data
