"""The CPU target of ``kernels.backend``'s contract, over NumPy buffers: pick the layout class,
fetch (or build) the kernel, call it.

Example:
    >>> import numpy as np
    >>> from dynagrad.kernels.cpu import backend as cpu
    >>> out = np.empty(3, np.float32)
    >>> cpu.elementwise("x * y", ("a", "a"), ("float32", "float32"), "float32",
    ...                 (np.ones(3, np.float32), np.full(3, 2, np.float32)), out)
    >>> out.tolist()
    [2.0, 2.0, 2.0]
"""
from __future__ import annotations

import math

import numpy as np

from ..._runtime.blas_threads import run_split
from .. import buffers
from . import memory, strided_copy, templates, worker_pool
from .gemm import products
from ..cache import _clear_hooks, _memory, _stats, lookup

# Below this many elements a kernel on Numba's pool (or split by ``run_split``) runs on one
# thread: waking a thread pool costs more than it saves. In a training step the cost is higher
# than alone: after each GEMM, OpenBLAS's workers busy-wait on the other cores, and Numba's
# pool competes with them there, so the threshold sits above where an op alone gains.
PARALLEL_MIN_ELEMENTS = 1 << 19
# Flat kernels (elementwise, optimizer updates, bias adds, totals) run threaded on OpenBLAS's
# own workers (worker_pool), which take a slice almost at once while they spin, so they pay
# from a smaller size than Numba's pool. In a loop two threads already beat one below 2^17,
# but training steps gained nothing more there. After a short idle spell the workers sleep,
# and the first op pays their wake-up.
POOLED = worker_pool.AVAILABLE  # whether OpenBLAS's workers run threaded flat kernels
FLAT_PARALLEL_MIN_ELEMENTS = 1 << 17 if POOLED else PARALLEL_MIN_ELEMENTS
_PAD = tuple((None,) * k for k in range(5))
# From this many output elements a broadcasting op takes layout "b" (vectorized rows) instead of
# the strided one: preparing its arguments costs a fixed amount of Python and dispatch, which
# its faster per-element loop repays only over this many elements.
BROADCAST_LAYOUT_MIN_ELEMENTS = 1 << 17


def elementwise(expr: str, kinds: tuple, types: tuple, out_type: str, operands: tuple,
                out: np.ndarray, params: tuple = ()) -> None:
    """``out[...] = expr(*operands)`` with broadcasting; array operands already in ``types``.

    ``params`` are ``(name, type, value)`` scalars the expression uses by name.
    """
    flat = _flat(operands, kinds, out)
    if not flat and out.flags.c_contiguous:
        operands, kinds, flat = _single_values_as_scalars(operands, kinds, out)
    elif not flat:
        permuted = _in_memory_order(operands, kinds, out)
        if permuted is not None:
            elementwise(expr, kinds, types, out_type, permuted[0], permuted[1], params)
            return
    marked = _mark_output(operands, kinds, out)
    if flat:
        kinds = marked
        layout = "p" if out.size >= FLAT_PARALLEL_MIN_ELEMENTS else "c"
        key = (expr, kinds, types, out_type, layout, params and tuple(p[:2] for p in params))
        kernel = _memory.get(key)
        if kernel is None:
            kernel = _build(key, expr, kinds, types, out_type, layout, params)
        else:
            _stats["hits"] += 1
        args = [o.ravel() if k == "a" else o for o, k in zip(operands, kinds) if k != "o"]
        args.extend(p[2] for p in params)
        if layout == "p" and templates.whole_blocks_only(expr):
            _blocked(kernel, key, args, out.ravel())
        else:
            kernel(*args, out.ravel())
        return
    if out.size >= BROADCAST_LAYOUT_MIN_ELEMENTS and out.flags.c_contiguous:
        copied = _contiguous_copies(operands, kinds, out)
        if copied is not None:
            elementwise(expr, kinds, types, out_type, copied, out, params)
            return
    compact = (_compact_broadcast(operands, marked, out)
               if out.size >= BROADCAST_LAYOUT_MIN_ELEMENTS and out.flags.c_contiguous else None)
    layout = "s" if compact is None else "b"
    if compact is not None:
        operands, kinds, out4 = compact
    key = (expr, kinds, types, out_type, layout, params and tuple(p[:2] for p in params))
    kernel = _memory.get(key)
    if kernel is None:
        kernel = _build(key, expr, kinds, types, out_type, layout, params)
    else:
        _stats["hits"] += 1
    if compact is None:
        _strided(kernel, operands, kinds, out, tuple(p[2] for p in params))
    else:
        kernel(*(o for o, k in zip(operands, kinds) if k != "o"), *(p[2] for p in params), out4)


def _contiguous_copies(operands: tuple, kinds: tuple, out: np.ndarray):
    """``operands`` with each array shaped like ``out`` but not C-contiguous (a transposed or
    sliced view) replaced by a C-contiguous copy, or None where there is none to copy: the
    copy (rows or tiled transposes, ``strided_copy``) and a vectorized kernel cost less than the
    strided kernel's scalar loop."""
    copied, changed = [], False
    for o, k in zip(operands, kinds):
        if k == "a" and o.shape == out.shape and not o.flags.c_contiguous:
            tmp = np.empty(o.shape, o.dtype)
            if strided_copy.copy(o, tmp):
                o, changed = tmp, True
        copied.append(o)
    return tuple(copied) if changed else None


def _in_memory_order(operands: tuple, kinds: tuple, out: np.ndarray):
    """``(operands, out)`` with every array's dims permuted so that ``out`` is C-contiguous (a
    dense transposed or permuted output: ``x.t().relu()``, ``x.t().relu_()``), or None where
    no permutation makes it so. Operands laid out like ``out`` then run the flat kernel."""
    if out.ndim < 2:
        return None
    order = sorted(range(out.ndim), key=lambda d: -abs(out.strides[d]))  # (stable)
    permuted_out = out.transpose(order)
    if not permuted_out.flags.c_contiguous:
        return None
    permuted = []
    for o, k in zip(operands, kinds):
        if o is out:  # an in-place operand stays the output itself (see _mark_output)
            o = permuted_out
        elif k == "a":
            o = o.reshape((1,) * (out.ndim - o.ndim) + o.shape).transpose(order)
        permuted.append(o)
    return tuple(permuted), permuted_out


def _mark_output(operands: tuple, kinds: tuple, out: np.ndarray) -> tuple:
    """``kinds`` with ``"o"`` for each array operand that is ``out`` itself (an in-place op): the
    kernel reads it from ``out``, so that LLVM's overlap check does not keep the loop scalar
    (see ``templates.elementwise``)."""
    if not any(o is out for o in operands):
        return kinds
    return tuple("o" if o is out and k == "a" else k for o, k in zip(operands, kinds))


def _flat(operands: tuple, kinds: tuple, out: np.ndarray) -> bool:
    """Whether ``out`` and every array operand are C-contiguous of ``out``'s shape."""
    if not out.flags.c_contiguous:
        return False
    return all(k != "a" or (o.shape == out.shape and o.flags.c_contiguous)
               for o, k in zip(operands, kinds))


def _single_values_as_scalars(operands: tuple, kinds: tuple, out: np.ndarray) -> tuple:
    """``(operands, kinds, flat)`` with each array operand that repeats one value (every stride
    0, as the gradient of a sum or mean arrives) passed as that scalar: the flat kernel then
    runs vectorized and threaded, where the strided one runs a scalar loop (as SiLU's backward
    from ``.sum().backward()`` did)."""
    if not any(k == "a" and o.size and not any(o.strides) for o, k in zip(operands, kinds)):
        return operands, kinds, False
    operands = tuple(o[(0,) * o.ndim] if k == "a" and o.size and not any(o.strides) else o
                     for o, k in zip(operands, kinds))
    kinds = tuple("s" if isinstance(o, np.generic) else k for o, k in zip(operands, kinds))
    return operands, kinds, _flat(operands, kinds, out)


def _compact_broadcast(operands: tuple, kinds: tuple, out: np.ndarray):
    """Layout ``"b"``'s arguments, or None where it does not apply: every array operand is
    taken without its broadcast dimensions (index 0 there), which must leave it C-contiguous;
    then neighbouring dimensions that broadcast alike merge (a (64, 1, 1) bias over
    (32, 64, 32, 32) runs as (32, 64, 1024) against (1, 64, 1)), and at most four may remain.
    Returns ``(operands, kinds, out)`` with the arrays 4-D and ``"i"`` for an operand whose inner
    dimension broadcasts."""
    shape = out.shape
    nd = len(shape)
    compact, patterns = [], []
    for o, k in zip(operands, kinds):
        if k != "a":
            compact.append(o)
            continue
        strides = (0,) * (nd - o.ndim) + o.strides
        sizes = (1,) * (nd - o.ndim) + o.shape
        spread = tuple(n != 1 and st != 0 for n, st in zip(sizes, strides))
        view = o.reshape(sizes) if o.ndim < nd else o
        view = view[tuple(slice(None) if f else slice(0, 1) for f in spread)]
        if not view.flags.c_contiguous:
            return None
        compact.append(view)
        patterns.append(spread)
    merged, groups = [], []  # merged sizes, and each merged dimension's pattern
    for d, n in enumerate(shape):
        if n == 1:
            continue
        pattern = tuple(p[d] for p in patterns)
        if groups and groups[-1] == pattern:
            merged[-1] *= n
        else:
            merged.append(n)
            groups.append(pattern)
    if len(merged) > 4:
        return None
    pad = 4 - len(merged)
    out4 = out.reshape((1,) * pad + tuple(merged))
    arrays = iter(range(len(patterns)))
    result, new_kinds = [], []
    for o, k in zip(compact, kinds):
        if k != "a":
            result.append(o)
            new_kinds.append(k)
            continue
        j = next(arrays)
        sizes = (1,) * pad + tuple(n if g[j] else 1 for n, g in zip(merged, groups))
        result.append(o.reshape(sizes))
        new_kinds.append("a" if sizes[3] != 1 or out4.shape[3] == 1 else "i")
    return tuple(result), tuple(new_kinds), out4


def _blocked(kernel, key, args, out) -> None:
    """A blocked threaded kernel covers whole blocks; the few elements left take the "c" kernel
    of the same ``key`` (expr, kinds, types, out_type, layout, params)."""
    whole = out.shape[0] - out.shape[0] % templates.BLOCK
    kernel(*args, out)
    if whole < out.shape[0]:
        expr, kinds, types, out_type, _, params = key
        tail_key = (expr, kinds, types, out_type, "c", params)
        tail = _memory.get(tail_key) or _build(tail_key, expr, kinds, types, out_type, "c", params)
        kinds = [k for k in kinds if k != "o"]  # an "o" operand has no argument
        tail(*[a[whole:] if k == "a" else a for a, k in zip(args, kinds)], *args[len(kinds):],
             out[whole:])


def add_rows(out: np.ndarray, v: np.ndarray) -> None:
    """``out += v`` for a C-contiguous 2-D ``out`` and a ``(out.shape[1],)`` ``v`` of its dtype
    (a bias add), threaded on OpenBLAS's workers where ``POOLED`` and ``out`` is large, else
    NumPy's in-place add."""
    if not (POOLED and out.size >= FLAT_PARALLEL_MIN_ELEMENTS):
        out += v
        return
    name = type_name(out.dtype)
    key = ("add_rows", name)
    kernel = _memory.get(key) or lookup(key, lambda: templates.add_rows(name))
    kernel(out.reshape(-1), np.ascontiguousarray(v))


def _strided(kernel, operands, kinds, out, param_values) -> None:
    nd = out.ndim
    if nd > 4:  # peel leading dimensions until four remain
        for j in range(out.shape[0]):
            sub = tuple(o if k == "s" or o.ndim < nd else (o[0] if o.shape[0] == 1 else o[j])
                        for o, k in zip(operands, kinds))
            _strided(kernel, sub, kinds, out[j], param_values)
        return
    args = [o[_PAD[4 - o.ndim]] if k == "a" else o for o, k in zip(operands, kinds)]
    kernel(*args, *param_values, out[_PAD[4 - nd]])


def _build(key, expr, kinds, types, out_type, layout, params):
    return lookup(key, lambda: templates.elementwise(
        expr, kinds, types, out_type, layout, tuple(p[:2] for p in params)))


def _three_d(x: np.ndarray, dim: int) -> np.ndarray:
    """View a contiguous array as ``(outer, shape[dim], inner)``."""
    if x.ndim == 3 and dim == 1:
        return x
    s = x.shape
    return x.reshape(math.prod(s[:dim]), s[dim], math.prod(s[dim + 1:]))


def reduce_axis(x: np.ndarray, dim: int, kind: tuple, out_dtype) -> np.ndarray:
    """Reduce the contiguous array ``x`` over ``dim``; ``kind`` = (init, combine, final, acc_type).

    Returns the reduced array with ``dim`` removed.
    """
    x3 = _three_d(x, dim)
    out = np.empty((x3.shape[0], x3.shape[2]), out_dtype)
    rows, width, inner = x3.shape
    large = inner == 1 and x.size >= FLAT_PARALLEL_MIN_ELEMENTS and kind[2] == "acc"
    if (large and rows == 1 and kind[0] == "0" and kind[1].startswith("acc += ")
            and kind[3] == "float64" and width % TOTAL_CHUNKS == 0):
        # every element of a sum of terms (mean(), sum(dims), norm()): sum()'s threaded
        # two-level total, whose partial totals add up
        out[0, 0] = threaded_total(x3.reshape(-1), kind[1])
    elif large and rows > 1 and POOLED:
        # contiguous rows (a sum or max over the last dimension): the rows are shared among
        # OpenBLAS's workers, each folded by the same code
        reduce_rows_kernel(kind, type_name(x.dtype), type_name(out.dtype))(
            x3.reshape(-1), width, out.reshape(-1))
    else:
        reduce_kernel(kind, type_name(x.dtype), type_name(out.dtype))(x3, out)
    return out.reshape(x.shape[:dim] + x.shape[dim + 1:])


def reduce_rows_kernel(kind: tuple, in_name: str, out_name: str):
    """The compiled threaded fold ``kernel(x, width, out)`` of each ``width``-element row of the
    flat ``x`` into ``out``, for ``kind`` = (init, combine, final, acc)."""
    init, combine, final, acc = kind
    return lookup(("reduce_rows_parallel", kind, in_name, out_name),
                  lambda: templates.reduce_rows_parallel(init, combine, final, in_name, acc,
                                                         out_name))


TOTAL_CHUNKS = 16  # rows of the first level of a threaded total (a few per thread)
SQUARES = "acc += np.float64(v) * np.float64(v)"  # a sum of squares' combine, in float64


def threaded_total(flat: np.ndarray, combine: str = "acc += v") -> float:
    """The float64 total of a large contiguous 1-D float array (its size a multiple of
    ``TOTAL_CHUNKS``): ``combine`` adds each ``v``'s contribution to ``acc`` (``"acc += v"`` for
    a sum), over rows in parallel, then the rows' partial totals are summed."""
    kernel = reduce_rows_kernel(("0", combine, "acc", "float64"), type_name(flat.dtype), "float64")
    partial = np.empty(TOTAL_CHUNKS, np.float64)
    kernel(flat, flat.shape[0] // TOTAL_CHUNKS, partial)
    return float(partial.sum())


def reduce_kernel(kind: tuple, in_name: str, out_name: str):
    """The compiled ``(O, R, I) -> (O, I)`` fold for ``kind`` = (init, combine, final, acc)."""
    init, combine, final, acc = kind
    return lookup(("reduce", kind, in_name, out_name),
                  lambda: templates.reduce(init, combine, final, in_name, acc, out_name))


_ENTRIES: dict = {}  # (kind, in_name, out_name) -> reduce_entry's entry point
_clear_hooks.append(_ENTRIES.clear)


def reduce_entry(kind: tuple, in_name: str, out_name: str):
    """``reduce_kernel``'s compiled entry point, for hot paths that call it with exactly its
    argument types (a C-contiguous ``(O, R, I)`` input, an ``(O, I)`` output) and so skip
    Numba's type dispatch."""
    key = (kind, in_name, out_name)
    entry = _ENTRIES.get(key)
    if entry is None:
        kernel = reduce_kernel(kind, in_name, out_name)
        entry = _ENTRIES[key] = kernel.overloads[kernel.signatures[0]].entry_point
    return entry


def arg_reduce_axis(x: np.ndarray, dim: int, better: str) -> np.ndarray:
    x3 = _three_d(x, dim)
    out = np.empty((x3.shape[0], x3.shape[2]), np.int64)
    key = ("arg_reduce", better, type_name(x.dtype))
    kernel = lookup(key, lambda: templates.arg_reduce(better, type_name(x.dtype)))
    # large ones share their outer rows among the cores
    run_split(x3.shape[0], lambda lo, hi: kernel(x3[lo:hi], out[lo:hi]),
              split=x.size >= FLAT_PARALLEL_MIN_ELEMENTS)
    return out.reshape(x.shape[:dim] + x.shape[dim + 1:])


def scan_axis(x: np.ndarray, dim: int, combine: str) -> np.ndarray:
    x3 = _three_d(x, dim)
    out = np.empty_like(x3)
    key = ("scan", combine, type_name(x.dtype))
    kernel = lookup(key, lambda: templates.scan(combine, type_name(x.dtype)))
    kernel(x3, out)
    return out.reshape(x.shape)


_TYPE_NAMES: dict = {}


def type_name(d: np.dtype) -> str:
    """Kernel type name of a NumPy dtype (memoised: ``np.dtype.name`` is slow on a hot path)."""
    name = _TYPE_NAMES.get(d)
    if name is None:
        name = _TYPE_NAMES[d] = "bool" if d == np.bool_ else d.name
    return name


def _indexed(name: str, builder, dtype: np.dtype, *extra):
    key = (name, type_name(dtype)) + extra
    return lookup(key, lambda: builder(type_name(dtype), *extra))


def top_rows(rows: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """Indices of the ``k`` largest (or smallest) entries of each row of a contiguous 2-D
    array, in the stable sort's order (see ``templates.top_rows``); ``0 <= k <= rows.shape[1]``."""
    out = np.empty((rows.shape[0], k), np.int64)
    if k and rows.shape[0]:  # (the kernel reads its buffer's last slot: it needs k >= 1)
        _indexed("top_rows", templates.top_rows, rows.dtype)(rows, largest, out)
    return out


def gather3(x3: np.ndarray, index3: np.ndarray) -> np.ndarray:
    out = np.empty(index3.shape, x3.dtype)
    _indexed("gather", templates.gather, x3.dtype)(x3, index3, out)
    return out


def masked_rows(x2: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``x2[mask]`` for a C-contiguous ``(N, R)`` array and a C-contiguous bool ``(N,)`` mask."""
    count = int(np.count_nonzero(mask))
    out = np.empty((count, x2.shape[1]), x2.dtype)
    if count:
        _indexed("masked_rows", templates.masked_rows, x2.dtype)(x2, mask, out)
    return out


def masked_rows_adjoint(g2: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``(N, R)`` zeros with the rows of ``g2`` (C-contiguous ``(count, R)``) where ``mask``
    (C-contiguous bool ``(N,)``) is true."""
    if not g2.shape[0]:
        return np.zeros((mask.shape[0], g2.shape[1]), g2.dtype)
    out = np.empty((mask.shape[0], g2.shape[1]), g2.dtype)
    _indexed("masked_rows_adjoint", templates.masked_rows_adjoint, g2.dtype)(g2, mask, out)
    return out


def scatter3(out3: np.ndarray, index3: np.ndarray, src3: np.ndarray, accumulate: bool) -> None:
    _indexed("scatter", templates.scatter, out3.dtype, accumulate)(out3, index3, src3)


def index_select3(x3: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``out[o, k, i] = x3[o, index[k], i]`` (one thread: split among the cores, even a large
    one ran slower)."""
    out = memory.empty((x3.shape[0], index.shape[0], x3.shape[2]), x3.dtype)
    _indexed("index_select", templates.index_select, x3.dtype)(np.ascontiguousarray(x3), index,
                                                                out)
    return out


def index_add3(out3: np.ndarray, index: np.ndarray, src3: np.ndarray) -> None:
    _indexed("index_add", templates.index_add, out3.dtype)(out3, index,
                                                           np.ascontiguousarray(src3))


# --- sort ---------------------------------------------------------------------------------

# Sorts of at least this many elements share their lines among the cores (run_split: NumPy's
# sort releases the GIL, so the slices run at once).
SORT_SPLIT_MIN_ELEMENTS = 1 << 16


def _argsort_array(arr: np.ndarray, d: int, descending: bool) -> np.ndarray:
    """NumPy's stable argsort along ``d``; descending keeps ties in their original order."""
    lines = np.moveaxis(arr, d, -1)
    n = lines.shape[-1]
    rows = lines.reshape(-1, n)
    order = np.empty(rows.shape, np.int64)

    def sort_rows(lo: int, hi: int) -> None:
        if not descending:
            order[lo:hi] = np.argsort(rows[lo:hi], axis=-1, kind="stable")
            return
        rev = np.argsort(rows[lo:hi, ::-1], axis=-1, kind="stable")
        order[lo:hi] = (n - 1) - rev[:, ::-1]
    run_split(rows.shape[0], sort_rows, split=arr.size >= SORT_SPLIT_MIN_ELEMENTS)
    return np.moveaxis(order.reshape(lines.shape), -1, d)


# Up to this k, topk keeps each row's k best in a sorted buffer (one pass over the row) instead
# of sorting it: for a small k that pass costs far less than a full sort of every row.
_TOP_ROWS_MAX_K = 64
_TOP_ROWS_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16,
                                                np.int32, np.int64, np.uint8))


def _top_along(arr: np.ndarray, d: int, largest: bool, k: int) -> np.ndarray:
    """``cpu.top_rows`` along dimension ``d`` of a host array: the rows are ``d``'s lines."""
    lines = np.ascontiguousarray(np.moveaxis(arr, d, -1))
    top = top_rows(lines.reshape(-1, lines.shape[-1]), k, largest)
    return np.ascontiguousarray(np.moveaxis(top.reshape(lines.shape[:-1] + (k,)), -1, d))


def argsort_axis(x: np.ndarray, dim: int, descending: bool, k: int | None = None) -> np.ndarray:
    """The stable sort permutation (int64) of ``x`` along ``dim``, or its first ``k`` entries
    (topk): NumPy's sort, or a one-pass top-k buffer per line for a small ``k``."""
    if k is not None and k <= _TOP_ROWS_MAX_K and x.dtype in _TOP_ROWS_DTYPES:
        return _top_along(x, dim, descending, k)
    order = _argsort_array(x, dim, descending)
    if k is not None:
        order = np.take(order, np.arange(k), axis=dim)
    return np.ascontiguousarray(order, dtype=np.int64)


# --- products and copies ------------------------------------------------------------------

def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` with NumPy's rules, C-contiguous, in the operands' dtype (float16 computes in
    float32: NumPy's float16 product does not run on BLAS)."""
    if a.dtype == np.float16:
        return np.asarray(products.matmul(a.astype(np.float32), b.astype(np.float32)),
                          dtype=np.float16, order="C")
    return np.asarray(products.matmul(a, b), dtype=a.dtype, order="C")


def copy(src, dst: np.ndarray) -> None:
    """``dst[...] = src`` (broadcasting ``src``, a buffer on any device) with the generated copy
    kernels."""
    src = buffers.host(src)
    if np.may_share_memory(src, dst):  # (x[1:] = x[:-1]): read everything before writing
        src = src.copy()
    if src.dtype != dst.dtype or src.dtype == np.float16:
        np.copyto(dst, src, casting="unsafe")
        return
    if (src.size >= strided_copy.MIN_ELEMENTS and src.shape == dst.shape
            and not (src.flags.c_contiguous and dst.flags.c_contiguous)
            and strided_copy.copy(src, dst)):
        return
    t = type_name(src.dtype)
    if src.ndim == 0:
        src = src.reshape(1)
    elementwise("x", ("a",), (t,), t, (src,), dst)


def empty(shape: tuple, dtype, like: np.ndarray) -> np.ndarray:
    """An uninitialised buffer (on the CPU, like ``like``)."""
    return np.empty(shape, dtype)
