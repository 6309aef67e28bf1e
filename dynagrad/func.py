"""Function transforms: ``vmap``.

``vmap(func)`` maps ``func`` over a dimension of its inputs. dynagrad runs ``func`` once per
slice and stacks the results: the values and gradients are those of PyTorch's batching rules
(every op here works on any batch of leading dims, so no op needs a batching rule), the cost is
one call per slice rather than one batched call.

Example:
    >>> import dynagrad as dg
    >>> dg.vmap(dg.dot)(dg.ones(2, 3), dg.ones(2, 3)).tolist()
    [3.0, 3.0]
"""
from __future__ import annotations

import functools
from collections.abc import Callable

from .ops.movement import movedim, select, stack
from .tensor import Tensor

__all__ = ["vmap"]


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``func`` mapped over dimension ``in_dims`` of its inputs; the results are stacked along
    ``out_dims``.

    ``in_dims`` is an int (every tensor argument is mapped over that dim), ``None`` (no argument
    is) or a tuple with one entry per positional argument (an int, ``None``, or for a tuple/list
    argument a tuple/list of entries). ``out_dims`` is an int or one int per output. Keyword
    arguments are passed unmapped, as in PyTorch. ``randomness`` and ``chunk_size`` are accepted
    for PyTorch's signature: each slice is a separate call, so random ops draw independently per
    slice (PyTorch's ``"different"``).

    Example:
        >>> import dynagrad as dg
        >>> dg.vmap(lambda row: row.sum(), in_dims=1)(dg.ones(2, 3)).tolist()
        [2.0, 2.0, 2.0]
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def mapped(*args, **kwargs):
        dims = _expand_in_dims(in_dims, args, func)
        size = _batch_size(args, dims, func)
        results = [func(*_slice(args, dims, i), **kwargs) for i in range(size)]
        return _stack_outputs(results, out_dims, func)
    return mapped


def _name(func) -> str:
    return getattr(func, "__name__", repr(func))


def _expand_in_dims(in_dims, args: tuple, func) -> tuple:
    """One in-dim entry per positional argument."""
    if in_dims is None or isinstance(in_dims, int):
        return tuple(in_dims for _ in args)
    if not isinstance(in_dims, (tuple, list)):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...): expected `in_dims` to be "
                         f"int or a (potentially nested) tuple matching the structure of inputs, "
                         f"got: {type(in_dims)}.")
    if len(in_dims) != len(args):
        raise ValueError(f"vmap({_name(func)}, in_dims={tuple(in_dims)}, ...)(<inputs>): "
                         f"in_dims is not compatible with the structure of `inputs`. in_dims has "
                         f"structure {len(in_dims)} entries but inputs has structure "
                         f"{len(args)} entries.")
    return tuple(in_dims)


def _leaves(arg, dim):
    """(tensor, dim) pairs of one argument and its in-dim entry (tuples/lists nest)."""
    if isinstance(arg, (tuple, list)):
        sub = dim if isinstance(dim, (tuple, list)) else [dim] * len(arg)
        for a, d in zip(arg, sub):
            yield from _leaves(a, d)
    elif isinstance(arg, Tensor) and dim is not None:
        yield arg, dim


def _batch_size(args: tuple, dims: tuple, func) -> int:
    sizes = []
    for arg, dim in zip(args, dims):
        for t, d in _leaves(arg, dim):
            if not -t.ndim <= d < max(t.ndim, 1) or t.ndim == 0:
                raise ValueError(f"vmap({_name(func)}, in_dims={dims}, ...)(<inputs>): Got "
                                 f"in_dim={d} for an input but the input is of type Tensor with "
                                 f"{t.ndim} dims. We cannot vmap over dim {d} of it.")
            sizes.append(t.shape[d])
    if not sizes:
        raise ValueError(f"vmap({_name(func)}, in_dims={dims}, ...)(<inputs>): at least one "
                         f"input must be a Tensor over which to vmap (got none)")
    if len(set(sizes)) != 1:
        raise ValueError(f"vmap({_name(func)}, in_dims={dims}, ...)(<inputs>): Expected all "
                         f"tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0]


def _slice(arg_or_args, dims, i: int):
    if isinstance(arg_or_args, (tuple, list)):
        sub = dims if isinstance(dims, (tuple, list)) else [dims] * len(arg_or_args)
        return type(arg_or_args)(_slice(a, d, i) for a, d in zip(arg_or_args, sub))
    if isinstance(arg_or_args, Tensor) and dims is not None:
        return select(arg_or_args, dims, i)
    return arg_or_args


def _stack_outputs(results: list, out_dims, func):
    first = results[0]
    if isinstance(first, Tensor):
        return _stack_one(results, out_dims, func)
    if isinstance(first, (tuple, list)):
        dims = out_dims if isinstance(out_dims, (tuple, list)) else [out_dims] * len(first)
        if len(dims) != len(first):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): out_dims is not "
                             f"compatible with the structure of `outputs` ({len(first)} outputs)")
        return type(first)(_stack_outputs([r[k] for r in results], d, func)
                           for k, d in enumerate(dims))
    raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got "
                     f"type {type(first)}. Did you mean to set out_dims= to None for output?")


def _stack_one(tensors: list, out_dim, func) -> Tensor:
    if out_dim is None:
        return tensors[0]
    stacked = stack(tensors, 0)
    return movedim(stacked, 0, out_dim) if out_dim not in (0, -stacked.ndim) else stacked
