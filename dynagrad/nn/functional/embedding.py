"""``embedding_bag``: sums, means or maxima of bags of embedding rows, a composition of ops (the
row lookup is ``embedding``, whose backward scatter-adds; the bag reduction is an ``index_add`` or
a masked maximum), so the gradients reach ``weight`` and ``per_sample_weights`` on any device.
Index checks read the indices on the host.

Example:
    >>> import dynagrad as dg, dynagrad.nn.functional as F
    >>> w = dg.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    >>> F.embedding_bag(dg.tensor([0, 1, 2]), w, dg.tensor([0, 2]), mode="sum")
    tensor([[1., 1.],
            [2., 2.]])
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...creation import zeros
from ...errors import describe
from ...ops.elementwise import where
from ...ops.nn.misc import embedding
from ...ops.placement import host_array, like
from ...tensor import Tensor

__all__ = ["embedding_bag"]

MODES = ("sum", "mean", "max")


def _bags(op: str, input: Tensor, offsets, include_last_offset: bool) -> tuple:
    """``(flat indices tensor, flat host indices, bag of each index, number of bags)``."""
    if not isinstance(input, Tensor) or input.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"{op}: Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {describe(input)}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets).__name__}")
        b, length = input.shape
        return input.reshape(-1), host_array(input).reshape(-1).astype(np.int64), \
            np.repeat(np.arange(b), length), b
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if not isinstance(offsets, Tensor) or offsets.ndim != 1:
        raise ValueError(f"offsets has to be a 1D Tensor but got "
                         f"{describe(offsets) if isinstance(offsets, Tensor) else offsets}")
    if offsets.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"{op}: Expected tensor for argument 'offsets' to have one of the "
                           f"following scalar types: Long, Int; but got {describe(offsets)}")
    n = input.shape[0]
    starts = host_array(offsets).astype(np.int64)
    if starts.size and starts[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {starts[0]}")
    if starts.size and starts[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {starts[-1]}")
    if np.any(np.diff(starts) < 0):
        raise RuntimeError(f"{op}: offsets must be non-decreasing (got {starts.tolist()})")
    if include_last_offset:  # the last offset closes the last bag (which runs to the end)
        starts = starts[:-1]
    b = starts.size
    sizes = np.diff(np.append(starts, n))
    return input, host_array(input).astype(np.int64), np.repeat(np.arange(b), sizes), b


def embedding_bag_parts(input: Tensor, weight: Tensor, offsets=None, max_norm=None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False, per_sample_weights=None,
                        include_last_offset: bool = False, padding_idx=None) -> tuple:
    """``(output, bag of each index, entries per bag, arg rows or None)``, the host arrays in
    int64; ``arg rows`` is ``(B, D)``, the row each maximum came from (mode ``max``)."""
    op = "embedding_bag"
    if mode not in MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise RuntimeError(f"{op}: 'weight' must be a 2-D Tensor, got "
                           f"{describe(weight) if isinstance(weight, Tensor) else weight!r}")
    if sparse:
        raise NotImplementedError(f"{op}: sparse gradients are not supported; use sparse=False")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(input.shape):
        raise ValueError(f"embedding_bag: per_sample_weights must have the shape of input "
                         f"(got per_sample_weights {describe(per_sample_weights)}, input "
                         f"{describe(input)})")
    flat, idx, bag_of, b = _bags(op, input, offsets, include_last_offset)
    num, dim = weight.shape
    bad = (idx < 0) | (idx >= num)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise RuntimeError(f"Index {i} of input takes value {idx[i]} which is not in the valid "
                           f"range [0, {num})")
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError(f"padding_idx must be within num_embeddings (got "
                                 f"padding_idx={padding_idx}, num_embeddings={num})")
        padding_idx = padding_idx + num if padding_idx < 0 else padding_idx
    kept = np.ones(idx.shape, bool) if padding_idx is None else idx != padding_idx
    counts = np.bincount(bag_of[kept], minlength=b).astype(np.int64)
    rows = embedding(flat, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    if mode != "max":
        if not kept.all():
            rows = where(like(kept.reshape(-1, 1), rows), rows, 0.0)
        out = zeros(b, dim, dtype=weight.dtype, device=weight.device)
        out = out.index_add(0, like(bag_of, rows, dtypes.int64), rows)
        if mode == "mean":
            out = out / like(np.maximum(counts, 1).reshape(-1, 1), out, out.dtype)
        return out, bag_of, counts, None
    # max: the kept rows of each bag laid out in a (B, longest, D) block, -inf where a bag is short
    longest = max(int(counts.max()) if b else 0, 1)
    pos = np.flatnonzero(kept)
    slot = np.arange(pos.size) - np.repeat(np.cumsum(counts) - counts, counts)
    table = np.zeros((b, longest), np.int64)
    table[bag_of[pos], slot] = pos
    valid = np.zeros((b, longest), bool)
    valid[bag_of[pos], slot] = True
    if idx.size == 0:
        return zeros(b, dim, dtype=weight.dtype, device=weight.device), bag_of, counts, \
            np.zeros((b, dim), np.int64)
    block = rows.index_select(0, like(table.reshape(-1), rows, dtypes.int64)).reshape(b, longest,
                                                                                       dim)
    block = where(like(valid.reshape(b, longest, 1), block), block, float("-inf"))
    arg = block.detach().argmax(1, keepdim=True)
    empty = like((counts == 0).reshape(-1, 1), block)
    out = where(empty, 0.0, block.gather(1, arg).squeeze(1))
    arg_rows = np.take_along_axis(idx[table], host_array(arg).reshape(b, dim), 1)
    arg_rows[counts == 0] = 0
    return out, bag_of, counts, arg_rows


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2.0,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The ``sum``, ``mean`` or ``max`` of the ``weight`` rows in each bag: a 2-D ``input``
    ``(B, L)`` holds B bags of L indices; a 1-D one holds them back to back, bag ``i`` starting at
    ``offsets[i]`` (with ``include_last_offset`` the last offset only closes the last bag).
    Entries equal to ``padding_idx`` are left out (a bag of nothing gives zeros);
    ``per_sample_weights`` (mode ``sum``) scales each row first.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> w = dg.tensor([[1.0, 4.0], [3.0, 2.0]])
        >>> F.embedding_bag(dg.tensor([[0, 1]]), w, mode="max")
        tensor([[3., 4.]])
    """
    return embedding_bag_parts(input, weight, offsets, max_norm, norm_type, scale_grad_by_freq,
                               mode, sparse, per_sample_weights, include_last_offset,
                               padding_idx)[0]
