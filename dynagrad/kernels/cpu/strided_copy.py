"""Copy a strided (permuted, sliced) array into a C-contiguous one, the work of ``.contiguous()``
(or into a slice of a larger array whose rows run on, as ``cat`` does).

The elementwise kernel's strided layout walks the output in order and reads the source with a
runtime step: a scalar loop, and for a transpose one cache line per element read. Here the
dims are first merged where the source runs on contiguously, then the copy runs as contiguous
rows (vectorized) or, when the source's unit-step dim is not the output's last, as a tiled
transpose (``templates.strided_copy``), split among OpenBLAS's workers when large.

Example:
    >>> import numpy as np
    >>> from dynagrad.kernels.cpu import strided_copy
    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> out = np.empty((3, 2), np.float32)
    >>> strided_copy.copy(a.T, out), out.tolist()
    (True, [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]])
"""
from __future__ import annotations

import numpy as np

from ..._runtime.blas_threads import run_split
from . import templates
from ..cache import _memory, lookup

MIN_ELEMENTS = 1 << 12  # smaller copies take the elementwise kernel: less Python before it
# From here a copy's work items are shared among OpenBLAS's workers: a row copy is bound by
# memory sooner and repays the hand-off later.
THREADED_ROWS_MIN_ELEMENTS = 1 << 20
THREADED_TILES_MIN_ELEMENTS = 1 << 18
_BITS = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}  # a copy moves bits: one kernel per size


def copy(src: np.ndarray, out: np.ndarray) -> bool:
    """``out[...] = src`` for ``out`` of ``src``'s shape and dtype, C-contiguous or a slice of a
    larger array (``cat`` writes its parts into one) whose last dim runs on in memory; returns
    False (nothing written) where this path does not apply: a negative or misaligned step, more
    than four dims after merging, no dim of unit step in the source, a broadcast last dim, or an
    output whose last dim does not run on."""
    size = src.dtype.itemsize
    bits = _BITS.get(size)
    if bits is None or src.shape != out.shape or not src.size:
        return False
    plan = _loops(src.shape, src.strides, out.strides, size)
    if plan is None:
        return False
    shape, src_step, out_step, items = plan
    # the source's and the output's memory from their first element to their last, as 1-D
    # views (steps are >= 0)
    span = _span(src, shape, src_step).view(bits)
    flat = (out.reshape(-1) if out.flags.c_contiguous else _span(out, shape, out_step)).view(bits)
    key = ("strided_copy", bits)
    kernel = _memory.get(key) or lookup(key, lambda: templates.strided_copy(bits))
    shape, src_step, out_step = (np.array(v, np.int64) for v in (shape, src_step, out_step))
    rows = src_step[3] == 1
    threaded = src.size >= (THREADED_ROWS_MIN_ELEMENTS if rows else THREADED_TILES_MIN_ELEMENTS)
    run_split(items, lambda lo, hi: kernel(span, shape, src_step, out_step, lo, hi, flat),
              split=threaded)
    return True


def _span(a: np.ndarray, shape: tuple, steps: tuple) -> np.ndarray:
    """``a``'s memory from its first element to its last as a 1-D view."""
    extent = 1 + sum((n - 1) * st for n, st in zip(shape, steps))
    return np.lib.stride_tricks.as_strided(a, (extent,), (a.dtype.itemsize,))


def _loops(shape: tuple, strides: tuple, out_strides: tuple, size: int):
    """``(shape, src_step, out_step, work items)`` of the four loop dims, or None."""
    if any(st < 0 or st % size for st in strides + out_strides):
        return None
    dims = [[n, st // size, ost // size] for n, st, ost in zip(shape, strides, out_strides)
            if n != 1]
    if any(ostep == 0 for _, _, ostep in dims):  # (an output written twice over)
        return None
    merged: list = []
    for n, step, ostep in dims:  # neighbours merge where both run on across them
        if merged and merged[-1][1] == step * n and merged[-1][2] == ostep * n:
            merged[-1] = [merged[-1][0] * n, step, ostep]
        else:
            merged.append([n, step, ostep])
    if not merged or len(merged) > 4 or merged[-1][2] != 1:
        return None
    loops = [tuple(d) for d in merged]
    if loops[-1][1] == 1:  # contiguous rows
        loops = [(1, 0, 0)] * (4 - len(loops)) + loops
        items = loops[0][0] * loops[1][0] * loops[2][0]
    else:  # a transpose: the source's unit-step dim becomes loop dim 2, tiled against dim 3
        inner = next((i for i, (_, step, _) in enumerate(loops) if step == 1), None)
        if inner is None or loops[-1][1] == 0:  # (a broadcast last dim has no column to read)
            return None
        others = [d for i, d in enumerate(loops[:-1]) if i != inner]
        loops = [(1, 0, 0)] * (2 - len(others)) + others + [loops[inner], loops[-1]]
        tile = templates.COPY_TILE
        items = loops[0][0] * loops[1][0] * (-(-loops[2][0] // tile))
    return (tuple(d[0] for d in loops), tuple(d[1] for d in loops), tuple(d[2] for d in loops),
            items)
